"""Real run dirs for the analysis tests, made by titjudge itself on SYNTHETIC benchmarks.

- `modes_run` (on `modes_data`, 8 prompts x 4 models): describer and four judges against
  the loopback server: `lexical`, `llm` (falls back to lexical; its calls fail for every
  synth-model-01 image, so its metrics apply the fallback rule), `check` (checklist) and
  `pair` (pairwise, accuracy from verdicts). 8 prompts still put pairs in each of the four
  prompt-length quartiles, their checklists still hold every element type the breakdown
  tests name, and each prompt still has pairs where one side fell back and the other not.
- `offline_runs` (on `analysis_data`, 12 prompts x 5 models: 120 pairs, enough for the known
  difference to be significant): replayed descriptions and the lexical judge, no server:
  `base`; `worse`, whose replayed descriptions of the humans' favourite model's images (most
  pairs won) are replaced by an unrelated sentence (so its verdicts can change only on pairs
  with one of that model's images, mostly from right to wrong); `small`, `base` run with
  `--limit 20` (fewer pairs).
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import builders
import pytest
from doubles.server import FakeOpenAIServer, Reply
from judges.judge_helpers import ModesResponder, description_by_item, run_config

import titjudge

FAILING_MODEL = "synth-model-01"
UNRELATED = "A plain grey square on a white background, nothing else."


@pytest.fixture(scope="session")
def failing_model() -> str:
    """The T2I model whose images `modes_run`'s llm judge fails on (and falls back for)."""
    return FAILING_MODEL


@pytest.fixture(scope="session")
def analysis_data(synthetic: builders.Synthetic) -> Path:
    """12 prompts x 5 models, seed 3, with stored descriptions and element lists."""
    return synthetic(12, 5, seed=3)


@pytest.fixture(scope="session")
def modes_data(synthetic: builders.Synthetic) -> Path:
    """8 prompts x 4 models, seed 3 (48 human pairs), for `modes_run`: its ~200 model calls are
    most of what the analysis tests cost, and its claims need no more (see the module's notes)."""
    return synthetic(8, 4, seed=3)


class FailingJudge(ModesResponder):
    """ModesResponder whose score judge answers no JSON for FAILING_MODEL's images."""

    def __init__(self, data: Path):
        super().__init__(data)
        self.failing = [
            text for item, text in description_by_item(data).items() if FAILING_MODEL in item
        ]

    def __call__(self, request):  # type: ignore[no-untyped-def]
        reply = super().__call__(request)
        if self.log[-1][0] == "judge" and any(t in request.all_text for t in self.failing):
            return Reply(content="I would rather not give a number.")
        return reply


@pytest.fixture(scope="session")
def modes_run(modes_data, tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("modes-run")
    judges = [
        {"name": "lexical", "kind": "lexical"},
        {"name": "llm", "kind": "llm", "model": "litellm:openai/judge", "fallback": "lexical"},
        {"name": "check", "kind": "checklist", "model": "litellm:openai/judge"},
        {"name": "pair", "kind": "pairwise", "model": "litellm:openai/judge"},
    ]
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    try:
        with FakeOpenAIServer(responder=FailingJudge(modes_data)) as server:
            outcome = titjudge.evaluate(run_config(modes_data, server.url, tmp, judges))
    finally:
        mp.undo()
    return outcome.run_dir


def offline_config(data: Path, tmp: Path, name: str, descriptions: Path) -> dict:
    """No server: the descriptions in the file `descriptions` replayed, the lexical judge."""
    return builders.run_config(
        data, tmp, name=name, describer=builders.replay_describer(descriptions)
    )


@dataclass(frozen=True)
class OfflineRuns:
    base: Path
    worse: Path
    small: Path
    #: the T2I model whose descriptions `worse` replaced
    degraded: str


@pytest.fixture(scope="session")
def offline_runs(analysis_data, tmp_path_factory) -> OfflineRuns:
    tmp = tmp_path_factory.mktemp("offline-runs")
    stored = analysis_data / "descriptions.jsonl"
    wins: Counter[str] = Counter()
    with (analysis_data / "pairs.csv").open() as handle:
        for pair in csv.DictReader(handle):
            if pair["winner"] in ("a", "b"):
                wins[pair[f"item_{pair['winner']}"].split("__")[1]] += 1
    favourite = wins.most_common(1)[0][0]
    degraded = tmp / "degraded.jsonl"
    lines = []
    for line in stored.read_text().splitlines():
        row = json.loads(line)
        if row["item_id"].endswith(f"__{favourite}"):
            row["description"] = UNRELATED
        lines.append(json.dumps(row))
    degraded.write_text("\n".join(lines) + "\n")
    base = titjudge.evaluate(offline_config(analysis_data, tmp, "base", stored)).run_dir
    worse = titjudge.evaluate(offline_config(analysis_data, tmp, "worse", degraded)).run_dir
    small = titjudge.evaluate(offline_config(analysis_data, tmp, "small", stored), limit=20).run_dir
    return OfflineRuns(base, worse, small, favourite)
