"""Benchmark 4: the local embedding judge (TIT-Score), pairs per second.

Pairs are (prompt, stored description) of the synthetic benchmark, embedded through the
`embed:` backend (last-token pooling) with its cosine taken as the score. Variants:
- batched + length-sorted: every text handed to `backend.embed` at once, as concurrent
  judge calls do; the backend's micro-batcher sorts each window by token length;
- batched, input order: the same batch size in manifest order, no sorting (the backend's
  tokenizer, model and pooling driven directly), to show what the sorting buys;
- one pair at a time (the baseline): `backend.embed([prompt, description])` per pair.
On CPU with a tiny random Qwen3-Embedding checkpoint (built offline); on a GPU, when one
is available, also with a Qwen3-Embedding-8B-shaped random model in bf16 (built in GPU
memory and put in place of the tiny model's weights: 16 GB of random weights written to
disk and read back would measure the disk).

  python benchmarks/embedding_judge.py [--quick]
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import Section, Table, fmt, read_jsonl, standalone, synthetic, timed_section  # noqa: E402

TITLE = "4. Local embedding judge (TIT-Score)"
#: Qwen3-Embedding-8B's shape (config.json of Qwen/Qwen3-Embedding-8B)
QWEN3_EMBEDDING_8B = {
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "num_hidden_layers": 36,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "vocab_size": 151665,
    "max_position_embeddings": 40960,
    "rope_theta": 1_000_000.0,
}


@dataclass
class Variant:
    name: str
    pairs: int
    seconds: float
    scores: list[float]

    @property
    def rate(self) -> float:
        return self.pairs / self.seconds


def load_pairs(data: Path) -> list[tuple[str, str]]:
    """(prompt, description) per item, in manifest order."""
    described = {
        row["item_id"]: row["description"] for row in read_jsonl(data / "descriptions.jsonl")
    }
    return [
        (row["prompt"], described[row["item_id"]]) for row in read_jsonl(data / "manifest.jsonl")
    ]


def build_backend(path: Path, device: str, dtype: str | None, batch_size: int | None) -> Any:
    from titjudge.models.core.options import ModelOptions
    from titjudge.models.registry import build_embedding_backend

    options = ModelOptions(device=device, dtype=dtype, batch_size=batch_size)
    return build_embedding_backend(f"embed:{path}", options)


def swap_in_random_model(backend: Any, shape: dict[str, Any]) -> None:
    """Replace the backend's weights by a random Qwen3 model of `shape` on its device and dtype."""
    import torch
    from transformers import Qwen3Config, Qwen3Model

    old = backend.model.config
    config = Qwen3Config(
        **{
            **shape,
            "bos_token_id": old.bos_token_id,
            "eos_token_id": old.eos_token_id,
            "pad_token_id": old.pad_token_id,
        }
    )
    backend.model = None
    with torch.device(backend.device):
        model = Qwen3Model._from_config(config, dtype=backend.dtype)
    backend.model = model.eval()


def _cosines(vectors: Sequence[Sequence[float]]) -> list[float]:
    return [
        float(sum(a * b for a, b in zip(vectors[i], vectors[i + 1], strict=True)))
        for i in range(0, len(vectors), 2)
    ]


def _sync(backend: Any) -> None:
    import torch

    if backend.device.type == "cuda":
        torch.cuda.synchronize(backend.device)


def batched_sorted(backend: Any, pairs: list[tuple[str, str]]) -> Variant:
    texts = [text for pair in pairs for text in pair]
    started = time.perf_counter()
    vectors = asyncio.run(backend.embed(texts))
    _sync(backend)
    return Variant(
        "batched + length-sorted (backend micro-batcher)",
        len(pairs),
        time.perf_counter() - started,
        _cosines(vectors),
    )


def batched_in_order(backend: Any, pairs: list[tuple[str, str]]) -> Variant:
    import torch

    from titjudge.models.local.embed_last_token import last_token

    texts = [text for pair in pairs for text in pair]
    vectors: list[list[float]] = []
    started = time.perf_counter()
    with torch.inference_mode():
        for start in range(0, len(texts), backend.batch_size):
            batch = backend.tokenizer(
                texts[start : start + backend.batch_size],
                padding=True,
                truncation=True,
                max_length=backend.max_length,
                return_tensors="pt",
            ).to(backend.device)
            hidden = backend.model(**batch).last_hidden_state
            pooled = last_token(hidden, batch["attention_mask"])
            vectors.extend(torch.nn.functional.normalize(pooled, p=2, dim=-1).cpu().tolist())
    _sync(backend)
    return Variant(
        "batched, input order (no sorting)",
        len(pairs),
        time.perf_counter() - started,
        _cosines(vectors),
    )


def one_pair_at_a_time(backend: Any, pairs: list[tuple[str, str]]) -> Variant:
    async def loop() -> list[float]:
        scores = []
        for prompt, description in pairs:
            scores.extend(_cosines(await backend.embed([prompt, description])))
        return scores

    started = time.perf_counter()
    scores = asyncio.run(loop())
    _sync(backend)
    return Variant(
        "one pair at a time (baseline)", len(pairs), time.perf_counter() - started, scores
    )


def compare(
    backend: Any,
    pairs: list[tuple[str, str]],
    single: int,
    in_order: int,
    label: str,
    table: Table,
    headlines: list[tuple[str, str, str]],
) -> None:
    """Run the three variants on `backend`, add rows to `table` (rates relative to the baseline)."""
    batched_sorted(backend, pairs[:8])  # warm-up: first forward pass, thread pools
    one = one_pair_at_a_time(backend, pairs[:single])
    ordered = batched_in_order(backend, pairs[:in_order])
    batched = batched_sorted(backend, pairs)
    lengths = [len(ids) for ids in backend.tokenizer([t for p in pairs for t in p])["input_ids"]]
    table_headline = (
        f"embedding judge pairs/s, {label.split(',')[0]}",
        f"{batched.rate:,.1f} batched + sorted",
        f"{one.rate:,.1f} one pair at a time",
    )
    headlines.append(table_headline)
    for variant in (one, ordered, batched):
        shared = min(len(variant.scores), len(one.scores))
        drift = max(
            abs(a - b) for a, b in zip(variant.scores[:shared], one.scores[:shared], strict=True)
        )
        table.add(
            label,
            variant.name,
            f"{variant.pairs:,}",
            fmt(variant.seconds, 2),
            fmt(variant.rate, 1),
            "1.00" if variant is one else fmt(variant.rate / one.rate),
            f"{drift:.1e}",
            f"{sum(lengths) / len(lengths):.0f}",
        )


def _gpu_rows(
    work: Path,
    pairs: list[tuple[str, str]],
    tiny: Path,
    quick: bool,
    table: Table,
    section: Section,
) -> None:
    import torch

    if not torch.cuda.is_available():
        section.notes.append("GPU rows skipped: torch sees no CUDA GPU on this machine.")
        return
    free, _ = torch.cuda.mem_get_info()
    if free < 20 * 2**30:
        section.notes.append(
            f"GPU rows skipped: {free / 2**30:.1f} GiB free on the GPU, an 8B model in bf16 "
            "needs about 16 GiB plus activations."
        )
        return
    backend = build_backend(tiny, "cuda", "bfloat16", None)
    swap_in_random_model(backend, QWEN3_EMBEDDING_8B)
    gpu_pairs = pairs[: 200 if quick else 1000]
    compare(
        backend,
        gpu_pairs,
        single=20 if quick else 100,
        in_order=len(gpu_pairs),
        label=f"{torch.cuda.get_device_name(0)}, Qwen3-Embedding-8B shape, random, bf16",
        table=table,
        headlines=section.headlines,
    )
    section.notes.append(
        "GPU rows use the tiny checkpoint's tokenizer (640-token vocabulary), so texts are "
        "longer in tokens than with the real Qwen3 tokenizer: a conservative rate."
    )


def run(quick: bool, work: Path) -> Section:
    n_pairs, single, in_order = (260, 40, 260) if quick else (2600, 200, 1000)
    method = (
        f"{n_pairs:,} (prompt, description) pairs of the synthetic benchmark; pairs/s = pairs / wall seconds to "
        "embed both texts of every pair (no cache), cosine on the L2-normalised vectors. Baseline: one pair at a "
        f"time on the first {single} pairs. `max drift` = largest |cosine difference| from the baseline on the pairs "
        "both scored (padding and batching must not change a score)."
    )

    def body(section: Section) -> None:
        import torch
        from doubles.tiny_models import build_tiny_qwen3_embedding

        data = synthetic(work, 200 if not quick else 20, 13)
        pairs = load_pairs(data)[:n_pairs]
        tiny = build_tiny_qwen3_embedding(work / "tiny-qwen3-embedding")
        table = Table(
            [
                "model / device",
                "variant",
                "pairs",
                "seconds",
                "pairs / s",
                "vs one at a time",
                "max drift",
                "mean tokens / text",
            ]
        )
        backend = build_backend(tiny, "cpu", None, None)
        compare(
            backend,
            pairs,
            single,
            in_order,
            f"CPU ({torch.get_num_threads()} threads), tiny Qwen3-Embedding "
            f"(2 layers, hidden 64), fp32, batch {backend.batch_size}",
            table,
            section.headlines,
        )
        _gpu_rows(work, pairs, tiny, quick, table, section)
        section.tables.append(table)

    return timed_section("embedding", TITLE, method, body)


if __name__ == "__main__":
    sys.exit(standalone(run, __doc__))
