"""A small synthetic benchmark and one loopback server playing several VLMs and a judge.

`bench` is 3 prompts x 3 T2I models (9 items, 3 human pairs per prompt). No claim of these
tests needs more: the two VLMs' rows still differ, a prompt's worth of failed pairs is still
a share of the pairs, a budget still runs out between the rows, and 8 answers still come in
before the interrupt while one image is held. `plain_grid` is one plain grid that several
tests read (ablation_grids.py).

`GridResponder` answers every model name the grid uses: `vlm-sharp` describes with the
benchmark's stored descriptions, `vlm-blurry` drops every other sentence of them (so the
two rows differ), `judge-flaky` answers 400 to every request about `fail_prompt`, and any
other name answers judge requests. Every request is logged as (model, kind, image sha256)
so tests can count describe calls per (image, VLM).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import builders
import pytest
from ablation_grids import RATE, PlainGrid, grid_config, run_grid
from doubles.billing import Billing
from doubles.server import (
    AutoResponder,
    ChatRequest,
    DescribeResponder,
    FakeOpenAIServer,
    Fault,
    ImagePart,
    JudgeResponder,
    Reply,
)

from titjudge.prompts.loader import load_template

DESCRIBE_INSTRUCTION = load_template("describe_paper").render()[1]


def drop_every_other_sentence(text: str) -> str:
    sentences = re.split(r"(?<=[.!?])\s+", text.strip())
    return " ".join(sentences[::2])


class BlurryDescriber(DescribeResponder):
    """A weaker VLM: the stored description with every second sentence missing."""

    def description_for(self, image: ImagePart) -> str:
        return drop_every_other_sentence(super().description_for(image))


class GridResponder:
    def __init__(self, descriptions: dict[str, str]):
        sharp, blurry = DescribeResponder(descriptions), BlurryDescriber(descriptions)
        self.by_model = {
            "vlm-sharp": AutoResponder(JudgeResponder(describer=sharp), sharp),
            "vlm-blurry": AutoResponder(JudgeResponder(describer=blurry), blurry),
        }
        self.judge = AutoResponder(JudgeResponder(describer=sharp), sharp)
        self.fail_prompt: str | None = None
        self.log: list[tuple[str, str, str | None]] = []
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        image = request.images[0].sha256 if request.images else None
        kind = (
            "describe"
            if image and DESCRIBE_INSTRUCTION in request.text
            else "lmm"
            if image
            else "judge"
        )
        with self._lock:
            self.log.append((request.model, kind, image))
        if request.model == "judge-flaky" and self.fail_prompt and self.fail_prompt in request.text:
            return Reply(fault=Fault("400", message="scripted failure"))
        return self.by_model.get(request.model, self.judge)(request)

    def count(self, kind: str) -> dict[tuple[str, str | None], int]:
        counts: dict[tuple[str, str | None], int] = {}
        with self._lock:
            for model, seen, image in self.log:
                if seen == kind:
                    counts[(model, image)] = counts.get((model, image), 0) + 1
        return counts


@pytest.fixture(scope="session")
def bench(synthetic: builders.Synthetic) -> Path:
    """The ablation tests' SYNTHETIC benchmark: 3 prompts x 3 models (N_ITEMS)."""
    return synthetic(3, 3)


def stored_descriptions(bench: Path) -> dict[str, str]:
    lines = (bench / "descriptions.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["image_sha256"]: row["description"] for row in map(json.loads, lines) if row}


@pytest.fixture
def grid_server(
    bench: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[FakeOpenAIServer, GridResponder]]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    responder = GridResponder(stored_descriptions(bench))
    with FakeOpenAIServer(
        responder=responder, models=("vlm-sharp", "vlm-blurry", "judge-llm", "judge-flaky")
    ) as server:
        yield server, responder


@pytest.fixture
def make_grid_responder(bench: Path) -> Callable[[], GridResponder]:
    """Makes a fresh `GridResponder`, for a test that serves it behind a wrapper of its own."""
    return lambda: GridResponder(stored_descriptions(bench))


@pytest.fixture(scope="session")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A tiny random-weight Qwen3-Embedding checkpoint, built offline, as an `embed:` spec."""
    import torch
    from doubles.tiny_models import build_tiny_qwen3_embedding

    torch.set_num_threads(1)  # tiny models run fastest single-threaded on a busy 2-core box
    return f"embed:{build_tiny_qwen3_embedding(tmp_path_factory.mktemp('tiny-embedding'))}"


@pytest.fixture(scope="session")
def dead_url() -> str:
    """A loopback URL nothing listens on: connections are refused at once."""
    return builders.closed_url()


@pytest.fixture(scope="session")
def plain_grid(bench: Path, tmp_path_factory: pytest.TempPathFactory) -> PlainGrid:
    """One plain grid (`ablation_grids.PlainGrid`) for the tests that only read what it left:
    how often it read its data, the online tables a batch grid must equal, the full bill a
    budgeted grid's two parts must add up to."""
    import titjudge.data.manifest as manifest
    import titjudge.data.pairs as pairs

    tmp = tmp_path_factory.mktemp("plain-grid")
    reads = {"manifest": 0, "pairs": 0}

    def counted(patch: pytest.MonkeyPatch, module: Any, name: str, key: str) -> None:
        original = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            reads[key] += 1
            return original(*args, **kwargs)

        patch.setattr(module, name, wrapper)

    billing = Billing(GridResponder(stored_descriptions(bench)), RATE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("OPENAI_API_KEY", "sk-test")
        counted(patch, manifest, "load_manifest", "manifest")
        counted(patch, pairs, "load_pairs", "pairs")
        with FakeOpenAIServer(
            responder=billing, models=("vlm-sharp", "vlm-blurry", "judge-llm")
        ) as server:
            result = run_grid(grid_config(bench, server.url, tmp), tmp / "out")
            calls = server.stats.total
    return PlainGrid(tmp / "out", result, dict(reads), billing.total, calls)
