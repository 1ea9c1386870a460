"""A whole run with a served embedding judge against the loopback embeddings server, which
refuses (with vLLM's documented 400 for an input over the context length) any request carrying
one item's description: that item alone fails, whatever the texts per request and however many
items run at once (items of one prompt share its embedding, so who carries the prompt changes
with both). The benchmark is 2 prompts x 4 models (`refusal_data`, 8 items; the shared
`synth_data` has 16): the poisoned item is the first of the first prompt or the second of
the second, and concurrency 16 still has every item in flight at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import run_config, served_embedder
from doubles.embeddings_server import EmbeddingsServer

import titjudge


@pytest.fixture(scope="module")
def refusal_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 2 prompts x 4 models, with stored descriptions."""
    return synthetic(2, 4)


def served_config(data: Path, url: str, tmp: Path, batch_size: int, concurrency: int) -> dict:
    """Replayed descriptions, one served embedding judge that retries at once."""
    judge = served_embedder(
        url, "tit_served", batch_size=batch_size, backoff_initial=0.0, max_attempts=2
    )
    return run_config(data, tmp, name="refusals", judges=[judge], concurrency=concurrency)


def failed_items(out: Path) -> set[str]:
    lines = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    return {line["item_id"] for line in lines if line["status"] != "ok"}


@pytest.mark.slow
@pytest.mark.parametrize("poisoned", [0, 5])
def test_only_the_item_with_the_refused_text_fails_whatever_the_batching(
    refusal_data, tmp_path, poisoned
):
    rows = [
        json.loads(line)
        for line in (refusal_data / "descriptions.jsonl").read_text().split("\n")
        if line
    ]
    target = rows[poisoned]
    scores: list[str] = []
    with EmbeddingsServer(dim=32) as server:
        server.refuse(target["description"])
        for batch_size in (1, 2):
            for concurrency in (1, 4, 16):
                tmp = tmp_path / f"b{batch_size}-c{concurrency}"
                config = served_config(refusal_data, server.url, tmp, batch_size, concurrency)
                outcome = titjudge.evaluate(config)
                assert failed_items(outcome.run_dir) == {target["item_id"]}, (
                    batch_size,
                    concurrency,
                )
                scores.append((outcome.run_dir / "scores.csv").read_text())
    assert len(set(scores)) == 1  # every other item scored the same in every run
