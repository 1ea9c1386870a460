"""Benchmark 17: the CPU cost of building one batch line (or one `titjudge explain` body).

A batch line is litellm's own request body for the online call, captured without sending it
(`models.litellm.raw.raw_request`, through litellm's `return_raw_request`). litellm logs each
captured request as a curl command and runs its secret-redacting regexes over it; with an
image inlined as base64 that log is most of the cost, for a line titjudge never reads, so
titjudge switches litellm's request log off while it builds. Measured here, in one process:
CPU milliseconds per line for a describe request with one PNG of several sizes, for an
OpenAI-compatible model and a Gemini model, built the way titjudge builds them and with
litellm's request log left on (the baseline: how lines were built before).

  python benchmarks/batch_line_build.py [--quick]
"""

from __future__ import annotations

import io
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Section, Table, fmt, standalone, timed_section  # noqa: E402

TITLE = "17. Building a batch line (or an `explain` body) from a request"
MODELS = (
    ("litellm:openai/gpt-4o", {"api_base": "http://127.0.0.1:9/v1"}),
    ("litellm:gemini/gemini-2.5-flash", {"thinking": "off"}),
)


def _png(side: int) -> bytes:
    from PIL import Image

    buffer = io.BytesIO()
    Image.effect_noise((side, side), 64).convert("RGB").save(buffer, "PNG")
    return buffer.getvalue()


def _cpu_ms_per_line(build, repeats: int) -> float:  # type: ignore[no-untyped-def]
    build()  # warm: imports, litellm's first-call set-up
    started = time.process_time()
    for _ in range(repeats):
        build()
    return (time.process_time() - started) / repeats * 1000


def run(quick: bool, work: Path) -> Section:
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # as titjudge sets it: no price fetch
    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-real-key")
    os.environ.setdefault("GEMINI_API_KEY", "benchmark-not-a-real-key")
    sides = (256, 512) if quick else (256, 512, 1024)
    repeats = 3 if quick else 10
    method = (
        "One describe request (a 50-word prompt and one PNG of random noise, which PNG cannot "
        f"compress, so the body is about 4/3 of the file), {repeats} builds after one warm-up, "
        "CPU time of this process (`time.process_time`) per line. **titjudge**: "
        "`models.litellm.raw.raw_request` as batch lines and `explain` use it. **baseline**: "
        "the same call with litellm's request log left on (`litellm.turn_off_message_logging` "
        "False), as lines were built before."
    )

    def body(section: Section) -> None:
        import litellm
        from litellm.types.utils import CallTypes
        from litellm.utils import return_raw_request

        from titjudge.models.core.base import GenerateRequest
        from titjudge.models.core.options import ModelOptions
        from titjudge.models.litellm.factory import build
        from titjudge.models.litellm.raw import raw_request
        from titjudge.records.image_input import ImageInput
        from titjudge.records.spec import parse_model_spec

        table = Table(["model", "image", "body MB", "titjudge ms/line", "baseline ms/line", "x"])
        for spec, options in MODELS:
            backend = build(parse_model_spec(spec), ModelOptions(**options))  # type: ignore[arg-type]
            for side in sides:
                data = _png(side)
                request = GenerateRequest(prompt="Describe " * 50, images=(ImageInput(data),))
                made = raw_request(backend, request)
                size = len(str(made.get("raw_request_body"))) / 1e6

                def logged(request: GenerateRequest = request, backend: Any = backend) -> None:
                    kwargs = backend.request_kwargs(request)
                    kwargs.pop("api_key", None)
                    assert litellm.turn_off_message_logging is False
                    return_raw_request(CallTypes.completion, kwargs)

                ours = _cpu_ms_per_line(lambda r=request, b=backend: raw_request(b, r), repeats)
                before = _cpu_ms_per_line(logged, repeats)
                table.add(
                    spec,
                    f"{side}x{side} PNG, {len(data) / 1e6:.2f} MB",
                    fmt(size, 2),
                    fmt(ours, 1),
                    fmt(before, 1),
                    fmt(before / ours, 1),
                )
                if side == 512 and spec == MODELS[0][0]:
                    section.headline(
                        "batch line build, 512x512 PNG (OpenAI body, CPU per line)",
                        f"{ours:.1f} ms",
                        f"litellm's request log on {before:.1f} ms",
                    )
        section.tables.append(table)
        section.notes.append(
            "For 2,600 describe lines with 1 MB images the baseline's log alone is over half an "
            "hour of CPU before the first job is sent."
        )

    return timed_section("batch_lines", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
