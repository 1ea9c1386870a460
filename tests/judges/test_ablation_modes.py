"""All five judge modes as columns of one ablation grid, through the loopback server.

On `small_data` (3 prompts x 3 models), not `synth_data` (4 x 4): what is checked (each mode a column, its cell the row's metric, the pairwise column's
accuracy from verdicts, the repeated column's two samples) does not grow with the items."""

import asyncio
import csv
import json

import pytest
from doubles.server import FakeOpenAIServer
from judge_helpers import ModesResponder

from titjudge.ablation.config import AblationConfig
from titjudge.ablation.grid import run_ablation_async
from titjudge.config.load import validate_config

API = {"model": "litellm:openai/judge", "backoff_initial": 0.01, "max_attempts": 2}
COLUMNS = [
    ({"name": "pair", "kind": "pairwise"}, "Pairwise-judge"),
    ({"name": "check", "kind": "checklist"}, "Checklist-judge"),
    ({"name": "yes", "kind": "lmm_yes"}, "LMM P(yes)"),
    (
        {
            "name": "expected",
            "kind": "llm",
            "score_mode": "expected",
            "label": "TIT-Score-judge (expected)",
        },
        "TIT-Score-judge (expected)",
    ),
    (
        {
            "name": "rep",
            "kind": "llm",
            "temperature": 0.5,
            "repeats": 2,
            "label": "TIT-Score-judge (x2)",
        },
        "TIT-Score-judge (x2)",
    ),
]


@pytest.mark.slow
def test_every_mode_is_an_ablation_column(small_data, tmp_path):
    responder = ModesResponder(small_data)
    with FakeOpenAIServer(responder=responder) as server:
        comparers = [
            {**spec, **({} if spec["kind"] == "lmm_yes" else {**API, "api_base": server.url})}
            for spec, _ in COLUMNS
        ]
        raw = {
            "name": "modes",
            "data": {
                "manifest": str(small_data / "manifest.jsonl"),
                "human_pairs": str(small_data / "pairs.csv"),
            },
            "describers": [
                {
                    "name": "vlm",
                    "model": "litellm:openai/vlm",
                    "api_base": server.url,
                    "backoff_initial": 0.01,
                }
            ],
            "comparers": comparers,
            "run": {
                "cache_dir": str(tmp_path / "cache"),
                "out": str(tmp_path / "runs"),
                "concurrency": 8,
            },
            "bootstrap": 0,
        }
        config = validate_config(raw, AblationConfig, "modes grid")
        result = asyncio.run(run_ablation_async(config, out=tmp_path / "out"))
    assert result.exit_code == 0 and not result.notes
    with (tmp_path / "out" / "table4.csv").open(newline="") as handle:
        header, row = list(csv.reader(handle))
    labels = [label for _, label in COLUMNS]
    assert header[: 1 + len(labels)] == ["VLM", *labels]
    metrics = json.loads((tmp_path / "out" / "rows" / "vlm" / "metrics.json").read_text())
    shown = [float(x) for x in row[1 : 1 + len(labels)]]
    assert shown == [
        round(100 * metrics["variants"][spec["name"]]["pairwise_accuracy"], 4)
        for spec, _ in COLUMNS
    ]
    assert metrics["variants"]["pair"]["accuracy_source"].startswith("verdicts")
    assert metrics["variants"]["rep"]["repeats"]["n"] == 2
    assert (tmp_path / "out" / "rows" / "vlm" / "pairs_pair.jsonl").is_file()
