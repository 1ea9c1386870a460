"""Benchmark 8: peak memory of a run over nine 12000x12000 images.

Nine 12000x12000 images (five PNG, four JPEG, a cheap smooth pattern, written once to the
scratch folder) are judged by `titjudge run` in a child process: the describer and an LLM
judge are a loopback OpenAI-compatible server in its own process, so every image is loaded
by the run's own loader, at the run's concurrency, and sent base64-encoded to the describer.
The measure is the child's peak RSS (ru_maxrss from os.wait4). Baseline, in the same
invocation: the same command with the package from `git archive BASELINE_REF src` (the
loader before images were bounded) on PYTHONPATH.

  python benchmarks/image_memory.py [--quick]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import (  # noqa: E402
    KEY_ENV,
    REPO,
    Section,
    Table,
    baseline_src,
    child_env,
    fmt,
    latest_run_dir,
    server_process,
    standalone,
    timed_section,
)

TITLE = "8. Image memory: nine 12000x12000 images"
#: the loader before this benchmark's change (commit of main it branched from)
BASELINE_REF = "54688e9"
MODEL = "litellm:openai/bench-vlm"
SIDE = 12_000
TARGET_MIB = 1.5 * 1024


def write_images(folder: Path, side: int, n_png: int, n_jpeg: int) -> list[Path]:
    """`n_png` PNG and `n_jpeg` JPEG images of `side` x `side`: a smooth three-channel
    gradient, cheap to encode and decode (written once, reused)."""
    from PIL import Image

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"img{n}.png" for n in range(n_png)]
    paths += [folder / f"img{n}.jpg" for n in range(n_png, n_png + n_jpeg)]
    if all(p.is_file() for p in paths):
        return paths
    ramp = Image.linear_gradient("L").resize((side, side))
    rgb = Image.merge(
        "RGB", (ramp, ramp.transpose(Image.Transpose.ROTATE_90), ramp.point(lambda v: 255 - v))
    )
    del ramp
    for path in paths:
        if path.suffix == ".png":
            rgb.save(path, format="PNG", compress_level=1)
        else:
            rgb.save(path, format="JPEG", quality=90)
    return paths


def write_data(folder: Path, images: list[Path]) -> Path:
    manifest = folder / "manifest.jsonl"
    lines = [
        {
            "item_id": image.stem,
            "prompt_id": f"p{n // 3}",
            "prompt": "a smooth gradient in three colours",
            "image": str(image),
            "t2i_model": f"m{n % 3}",
        }
        for n, image in enumerate(images)
    ]
    manifest.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return manifest


def measure(work: Path, manifest: Path, url: str, src: Path, concurrency: int, label: str) -> dict:
    """One `titjudge run` child with `src` first on PYTHONPATH: exit code, wall, peak RSS."""
    model = {"model": MODEL, "api_base": url, "api_key_env": KEY_ENV, "concurrency": concurrency}
    config = {
        "name": f"images-{label}",
        "data": {"manifest": str(manifest)},
        "describer": dict(model),
        "judges": [{"name": "tit_llm", "kind": "llm", **model}],
        "run": {
            "concurrency": concurrency,
            "cache_dir": str(work / f"cache-{label}"),
            "out": str(work / "runs"),
        },
    }
    config_path = work / f"config-{label}.json"
    config_path.write_text(json.dumps(config))
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(src), env.get("PYTHONPATH", "")])
    command = [sys.executable, "-W", "default", "-m", "titjudge", "run", str(config_path)]
    with open(work / f"run-{label}.log", "w") as log:
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=work)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - started
    text = (work / f"run-{label}.log").read_text(errors="replace")
    summary_path = latest_run_dir(work / "runs" / f"images-{label}") / "summary.json"
    summary = json.loads(summary_path.read_text()) if summary_path.is_file() else {}
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall": wall,
        "peak_mib": usage.ru_maxrss / 1024,
        "bomb_warnings": text.count("DecompressionBombWarning"),
        "image_errors": summary.get("image_errors"),
        "items": summary.get("items"),
    }


def run(quick: bool, work: Path) -> Section:
    side = 6_000 if quick else SIDE
    concurrencies = (32,)
    method = (
        f"Nine {side}x{side} images (5 PNG, 4 JPEG; a smooth RGB gradient) judged by `python -m "
        "titjudge run` in a child process: describer and LLM judge on a loopback OpenAI-compatible "
        "server (no latency) in its own process, so each image is loaded by the run's loader at "
        "the run's concurrency and sent to the describer. Peak RSS is the child's ru_maxrss "
        f"(os.wait4). Baseline, same invocation: the same command run on `git archive {BASELINE_REF} "
        "src` (the loader that decoded each image fully and copied it before downscaling, with "
        "one image in flight per item worker). Target: under 1.5 GiB for nine images."
    )

    def body(section: Section) -> None:
        images = write_images(work / f"images-{side}", side, 5, 4)
        manifest = write_data(work, images)
        old_src = baseline_src(work, BASELINE_REF)
        table = Table(
            [
                "code",
                "run.concurrency",
                "peak RSS MiB",
                "wall s",
                "exit",
                "items",
                "image errors",
                "DecompressionBombWarning lines",
            ]
        )
        peaks: dict[tuple[str, int], float] = {}
        with server_process(["--responder", "auto"]) as server:
            for concurrency in concurrencies:
                for label, src in (("before", old_src), ("after", REPO / "src")):
                    m = measure(
                        work, manifest, server.url, src, concurrency, f"{label}-c{concurrency}"
                    )
                    table.add(
                        f"{label} ({BASELINE_REF} baseline)"
                        if label == "before"
                        else "after (this branch)",
                        concurrency,
                        fmt(m["peak_mib"], 0),
                        fmt(m["wall"], 1),
                        m["exit"],
                        m["items"],
                        m["image_errors"],
                        m["bomb_warnings"],
                    )
                    peaks[label, concurrency] = m["peak_mib"]
        for concurrency in concurrencies:
            section.headline(
                f"peak RSS, nine {side}x{side} images, run.concurrency {concurrency}",
                f"{fmt(peaks['after', concurrency], 0)} MiB (target {fmt(TARGET_MIB, 0)} MiB)",
                f"before: {fmt(peaks['before', concurrency], 0)} MiB",
            )
        section.tables.append(table)
        section.notes.append(
            "images over 4096 px are downscaled to 4096 px on the long side as they are loaded "
            "(JPEG decoded at half scale via Image.draft; PNG decoded once at full size, then "
            "resized, the full-size decode freed at once); at most run.concurrency decodes and "
            "150 Mpx held by loads in flight (decode, resize intermediate and result: a 12000x12000 "
            "PNG loads alone); Pillow's allocation block raised to 64 MiB so freed decodes go "
            "back to the OS instead of staying in each decoding thread's malloc arena"
        )

    return timed_section("images", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
