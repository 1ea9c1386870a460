"""The annotate tests' dataset: 5 prompts x 5 models (50 pairs), prompt P1 hostile markup, P2
350 words long, tiny one-colour PNGs, and a `secret.txt` beside the manifest that the
path-traversal tests try to reach. Imported by name (`annotate_data`), never as `conftest`:
which `conftest` module a bare import finds depends on what pytest collected first."""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

HOSTILE_PROMPT = (
    '<script>window.__pwned=1</script> <img src=x onerror="window.__pwned=1"> '
    "</script><script>window.__pwned=1</script> <b>bold?</b> &amp; \u202eevil"
)
LONG_PROMPT = " ".join(f"word{n}" for n in range(350))
SECRET = "the secret next to the manifest"
MODELS = ("m1", "m2", "m3", "m4", "m5")
COLOURS = [(200, 60, 60), (60, 160, 60), (60, 60, 200), (200, 200, 60), (120, 60, 160)]


def write_dataset(root: Path) -> Path:
    """Write the manifest, its images and the secret under `root`; return the manifest."""
    (root / "images").mkdir(parents=True)
    lines = []
    for p in range(1, 6):
        prompt = {1: HOSTILE_PROMPT, 2: LONG_PROMPT}.get(p, f"Prompt {p}: a small red house.")
        for model, colour in zip(MODELS, COLOURS, strict=True):
            item_id = f"P{p}_{model}"
            Image.new("RGB", (48, 32), colour).save(root / "images" / f"{item_id}.png")
            lines.append(
                {
                    "item_id": item_id,
                    "prompt_id": f"P{p}",
                    "prompt": prompt,
                    "image": f"images/{item_id}.png",
                    "t2i_model": model,
                }
            )
    manifest = root / "manifest.jsonl"
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    (root / "secret.txt").write_text(SECRET, encoding="utf-8")
    return manifest
