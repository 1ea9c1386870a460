"""Benchmark: local models in two Ray CPU actors against the same models in the run's process.

Tiny random-weight checkpoints (built offline): a Qwen2.5-VL describer and a Qwen3 judge, each
asked N requests at once through the call layer (`ModelHub` clients, no cache), greedy, float32
on CPU. In process: one backend, the machine's torch threads. Ray: `run.execution` with
`backend: ray`, a local Ray instance of 2 CPUs that the hub starts itself, and 2 actors per
model of 1 CPU each (one thread each); each model's actors are released before the next one's
start. Outputs must be identical either way; the table says whether they were.

  python benchmarks/ray_actors.py [--quick]
"""

from __future__ import annotations

import asyncio
import io
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Section, Table, fmt, standalone, timed_section  # noqa: E402

from titjudge.models.core.clients import SEND  # noqa: E402

TITLE = "13. Local models in Ray actors"
ACTORS = 2
#: untimed calls first, per model (two batches' worth, so every actor has run one)
WARM = 16


def _requests(n: int, images: bool) -> list[Any]:
    from PIL import Image

    from titjudge.models.core.base import GenerateRequest
    from titjudge.records.image_input import ImageInput

    requests = []
    for i in range(n):
        picture: tuple[ImageInput, ...] = ()
        if images:
            image = Image.new("RGB", (56, 56), (i * 37 % 256, i * 91 % 256, 120))
            image.paste((255, 255, 255), (0, 0, 28, 56 - i % 40))
            buffer = io.BytesIO()
            image.save(buffer, format="PNG")
            picture = (ImageInput(data=buffer.getvalue()),)
        prompt = f"Describe image {i}." if images else f"Score description {i} from 1 to 10."
        requests.append(GenerateRequest(prompt=prompt, images=picture, max_tokens=16))
    return requests


async def _phase(
    hub: Any, model: str, requests: list[Any], warm: list[Any]
) -> tuple[float, float, list[str]]:
    """(seconds to load, seconds for every call at once, texts) for one model on `hub`, after
    `warm` calls (first forward passes, one per actor at least) that are not timed."""
    from titjudge.models.core.options import ModelOptions

    client = hub.text_client(model, ModelOptions(device="cpu", batch_size=8, max_attempts=1))
    started = time.perf_counter()
    await client.backend.ready()
    loaded = time.perf_counter() - started
    await asyncio.gather(
        *(client.text(r, role="warm-up", accept_truncated=True, probe=SEND) for r in warm)
    )
    started = time.perf_counter()
    results = await asyncio.gather(
        *(client.text(r, role="bench", accept_truncated=True, probe=SEND) for r in requests)
    )
    calls = time.perf_counter() - started
    failed = [r.error for r in results if not r.ok]
    if failed:
        raise RuntimeError(f"{len(failed)} calls failed, e.g. {failed[0]}")
    await hub.release(model)
    return loaded, calls, [str(r.value) for r in results]


async def _measure(execution: Any, phases: list[tuple[str, str, list[Any]]]) -> list[Any]:
    from titjudge.cache.store import CallCache
    from titjudge.models.hub import ModelHub

    hub = ModelHub(CallCache(None), execution=execution)
    try:
        return [
            await _phase(hub, model, requests[WARM:], requests[:WARM])
            for _, model, requests in phases
        ]
    finally:
        await hub.aclose()


def run(quick: bool, work: Path) -> Section:
    n = 40 if quick else 200
    method = (
        f"{n} describe calls (tiny Qwen2.5-VL, a 56x56 PNG each) and {n} judge calls (tiny Qwen3, "
        "text), max_tokens 16, all sent at once through the call layer (no cache), greedy, float32 "
        f"on CPU. Baseline: the model in the run's process (torch's default threads, and 1 thread). Ray: {ACTORS} CPU actors per model "
        "(1 CPU, 1 torch thread each) on a local 2-CPU Ray instance the run starts; calls go to "
        "the actor with the fewest in flight. `load` = first call's wait for the model (for Ray: "
        "starting the instance, or the actors, and loading the weights in them)."
    )

    def body(section: Section) -> None:
        from doubles.tiny_models import build_tiny_qwen3, build_tiny_qwen25_vl

        from titjudge.models.core.execution import ExecutionOptions

        vl = build_tiny_qwen25_vl(work / "tiny-vl")
        lm = build_tiny_qwen3(work / "tiny-lm")
        phases = [
            ("describe", f"hf:{vl}", _requests(n + WARM, images=True)),
            ("judge", f"hf:{lm}", _requests(n + WARM, images=False)),
        ]
        ray = ExecutionOptions(
            backend="ray", num_cpus=2, actors_per_model=ACTORS, num_cpus_per_actor=1
        )
        import torch

        in_process = asyncio.run(_measure(None, phases))
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            one_thread = asyncio.run(_measure(None, phases))
        finally:
            torch.set_num_threads(threads)
        in_ray = asyncio.run(_measure(ray, phases))
        table = Table(
            [
                "phase",
                "calls",
                "load, process (s)",
                "load, Ray (s)",
                f"calls, process, {threads} threads (s)",
                "calls, process, 1 thread (s)",
                f"calls, Ray x{ACTORS} (s)",
                "Ray / process (calls)",
                "identical outputs",
            ]
        )
        rows = zip(phases, in_process, one_thread, in_ray, strict=True)
        for (name, _, requests), here, single, there in rows:
            ratio = there[1] / here[1]
            table.add(
                name,
                len(requests) - WARM,
                fmt(here[0], 1),
                fmt(there[0], 1),
                fmt(here[1], 2),
                fmt(single[1], 2),
                fmt(there[1], 2),
                fmt(ratio),
                "yes" if here[2] == there[2] == single[2] else "NO",
            )
            section.headline(
                f"{name} calls, {len(requests) - WARM} at once, tiny model",
                f"{fmt(there[1], 2)} s Ray ({ACTORS} CPU actors)",
                f"{fmt(here[1], 2)} s in process",
            )
        section.tables.append(table)
        section.notes.append(
            f"{WARM} untimed calls per model first (first forward passes in every actor). The "
            "in-process model uses torch's default thread count (one per core); each actor uses "
            "1 thread, so two actors fill the same 2 cores. On a shared, loaded 2-core machine "
            "two single-threaded actors can beat one two-threaded process (no OpenMP threads "
            "contending with other jobs; the 1-thread column shows how much of that is threads) "
            "and have twice the calls in flight (the limiter's default is 16 per model in "
            "process, 16 per actor in Ray: two batches of 8 each), while paying serialisation "
            "and an actor round trip per "
            "call; with so little work per call the ratio says little about real models. Ray's "
            "load time is mostly starting Ray and a Python process per actor that imports torch "
            "and transformers: paid once per run, not per call. What Ray is for is "
            "machines with several GPUs, one actor per GPU, which this machine cannot show."
        )

    return timed_section("ray", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
