"""The hand-written run dir the audit tests read, with known answers (conftest.py serves it
as the `handmade_run` fixture; the tests import the expectations from here).

The hand-written run (2 prompts x 3 models, variants `llm` and `emb`, llm falling back to
emb) has these scores; `EXPECTED` below lists each pair's verdict worked out by hand.

    item   llm             emb
    P1_m1  8               0.9
    P1_m2  5               0.5
    P1_m3  5 (hostile)     0.75
    P2_m1  failed          0.4
    P2_m2  0.6 fallback    0.6
    P2_m3  2               0.2   (image file missing)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from PIL import Image, ImageDraw

HOSTILE = (
    '<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1"> '
    "</script><script>window.__pwned=1</script> [bold red]boom[/] \x1b[31mred\x1b[0m &amp; \u2028end"
)

# (item_a, item_b, winner) in pairs.csv order -> {variant: (outcome, margin)}
PAIRS = [
    ("P1_m1", "P1_m2", "a"),
    ("P1_m2", "P1_m3", "a"),
    ("P1_m1", "P1_m3", "b"),
    ("P2_m1", "P2_m2", "b"),
    ("P2_m2", "P2_m3", "tie"),
    ("P2_m1", "P2_m3", "a"),
]
EXPECTED: dict[str, list[tuple[str, float | None]]] = {
    "llm": [
        ("agree", 3.0),
        ("metric_tie", 0.0),
        ("disagree", -3.0),
        ("failed", None),
        ("human_tie", -1.4),
        ("failed", None),
    ],
    "emb": [
        ("agree", 0.4),
        ("disagree", -0.25),
        ("disagree", -0.15),
        ("agree", 0.2),
        ("human_tie", 0.4),
        ("agree", 0.2),
    ],
}

SCORES: dict[str, dict[str, tuple[str, float | None]]] = {
    "llm": {
        "P1_m1": ("ok", 8.0),
        "P1_m2": ("ok", 5.0),
        "P1_m3": ("ok", 5.0),
        "P2_m1": ("failed", None),
        "P2_m2": ("fallback", 0.6),
        "P2_m3": ("ok", 2.0),
    },
    "emb": {
        "P1_m1": ("ok", 0.9),
        "P1_m2": ("ok", 0.5),
        "P1_m3": ("ok", 0.75),
        "P2_m1": ("ok", 0.4),
        "P2_m2": ("ok", 0.6),
        "P2_m3": ("ok", 0.2),
    },
}
COLOURS = {"m1": (214, 90, 60), "m2": (60, 140, 200), "m3": (90, 170, 90)}


def _image(path: Path, colour: tuple[int, int, int], seed: int) -> None:
    image = Image.new("RGB", (256, 256), (235, 238, 242))
    draw = ImageDraw.Draw(image)
    draw.rectangle((0, 180, 256, 256), fill=(120, 150, 110))
    draw.ellipse((40 + seed * 20, 60, 150 + seed * 20, 170), fill=colour)
    draw.polygon([(170, 170), (220, 80), (250, 170)], fill=(70, 70, 90))
    image.save(path)


def _line(
    item_id: str, variant: str, image: Path, status: str, score: float | None
) -> dict[str, Any]:
    prompt_id, model = item_id.split("_")
    rationale = f"{variant} rationale for {item_id}: the {model} image follows the prompt."
    details: dict[str, Any] = (
        {"matches": [f"{model} subject"], "misses": ["lighting"]} if variant == "llm" else {}
    )
    error, raw = (
        None,
        json.dumps({"score": score, "rationale": rationale}) if variant == "llm" else None,
    )
    if item_id == "P1_m3" and variant == "llm":
        rationale, raw = HOSTILE, "raw " + HOSTILE
    if status == "failed":
        rationale, error, raw = (
            None,
            "judge output was not valid JSON",
            "I think this is a 7/10 <b>",
        )
    if status == "fallback":
        rationale, details = "[fallback to emb] cosine 0.6", {"fallback_from": "emb"}
        error = "timeout after 3 attempts"
    return {
        "item_id": item_id,
        "prompt_id": prompt_id,
        "t2i_model": model,
        "image": str(image),
        "variant": variant,
        "status": status,
        "score": score,
        "rationale": rationale,
        "error": error,
        "details": details,
        "raw": raw,
        "description": f"A picture made by {model} for {prompt_id}. " * 8
        + ("\u2028" if item_id == "P1_m1" else ""),
        "describer": {"status": "ok", "error": None, "cost": 0.001},
        "tokens_in": 10,
        "tokens_out": 5,
        "cost": 0.002 if variant == "llm" else None,
        "latency": 0.1,
        "cached": False,
    }


def write_run(root: Path) -> Path:
    """Write the hand-made run dir (and its data) under `root`; returns the run dir."""
    data, run = root / "data", root / "run"
    (data / "images").mkdir(parents=True)
    run.mkdir()
    manifest = []
    for prompt_id in ("P1", "P2"):
        for n, model in enumerate(("m1", "m2", "m3")):
            item_id = f"{prompt_id}_{model}"
            image = data / "images" / f"{item_id}.png"
            if item_id != "P2_m3":
                _image(image, COLOURS[model], n)
            manifest.append(
                {
                    "item_id": item_id,
                    "prompt_id": prompt_id,
                    "image": f"images/{item_id}.png",
                    "t2i_model": model,
                    "prompt": f"Prompt {prompt_id}: a red ball on green grass under a grey sky. "
                    * 12,
                }
            )
    (data / "manifest.jsonl").write_text(
        "".join(json.dumps(m) + "\n" for m in manifest), encoding="utf-8"
    )
    pairs = "prompt_id,item_a,item_b,winner\n" + "".join(
        f"{a[:2]},{a},{b},{w}\n" for a, b, w in PAIRS
    )
    (data / "pairs.csv").write_text(pairs, encoding="utf-8")
    lines = []
    for m in manifest:
        for variant in ("llm", "emb"):
            status, score = SCORES[variant][m["item_id"]]
            lines.append(_line(m["item_id"], variant, data / m["image"], status, score))
    (run / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    config = {
        "name": "handmade",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
    }
    (run / "config.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    metrics = {
        "version": 2,
        "variants": {
            "llm": {
                "pairwise_accuracy": 0.25,
                "metric_tie_rate": 0.5,
                "n_failed": 1,
                "n_fallback": 1,
                "ci": {"pairwise_accuracy": [0.1, 0.6]},
                "provenance": {
                    "kind": "llm",
                    "model": "litellm:openai/judge",
                    "answered_by": ["judge-2024-08-06"],
                    "template": "judge_similarity",
                    "template_sha256": "ab" * 32,
                    "sampling": {"temperature": 0.0},
                    "fallback": "emb",
                },
            },
            "emb": {"pairwise_accuracy": 0.6, "metric_tie_rate": 0.0},
        },
    }
    (run / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    (run / "summary.json").write_text(
        json.dumps({"usage": {"judge": {"cost": 0.01}}}), encoding="utf-8"
    )
    return run
