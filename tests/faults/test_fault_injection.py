"""A full synthetic run with every kind of fault injected at a fixed rate."""

import csv
import json

import pytest
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions

import titjudge
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.calls.structured import parse_structured

FAULTS = ("429", "500", "503", "timeout", "reset", "malformed", "fenced", "invalid_schema", "prose")


@pytest.mark.slow
def test_every_item_ends_scored_or_failed_with_a_reason(fault_data, tmp_path):
    responder = build_responder("auto", descriptions=descriptions(fault_data))
    with FakeOpenAIServer(
        responder=responder,
        fault_rate=0.35,
        faults=FAULTS,
        seed=7,
        retry_after=0.05,
        timeout_delay=3.0,
    ) as server:
        outcome = titjudge.evaluate(config(fault_data, server.url, tmp_path))
        injected = dict(server.stats.by_fault)
    assert set(injected) >= {
        "429",
        "500",
        "503",
        "reset",
        "malformed",
        "invalid_schema",
        "prose",
    }, injected

    lines = [
        json.loads(line) for line in (outcome.run_dir / "items.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 24 * 2
    for line in lines:
        assert line["status"] in ("ok", "failed", "fallback")
        if line["status"] == "failed":
            assert line["score"] is None and line["error"]
        else:
            assert isinstance(line["score"], float)
        if line["variant"] == "tit_llm" and line["status"] == "ok":
            # nothing is scored from an invalid output: the kept raw text validates to that score
            assert parse_structured(line["raw"], JudgeVerdict).score == line["score"]

    rows = list(csv.DictReader((outcome.run_dir / "scores.csv").open()))
    summary = json.loads((outcome.run_dir / "summary.json").read_text())
    for variant, counts in summary["variants"].items():
        assert sum(counts.values()) == 24
        assert counts["failed"] == sum(
            1 for r in rows if r["variant"] == variant and r["status"] == "failed"
        )
        assert counts["failed"] == sum(
            1 for r in rows if r["variant"] == variant and r["score"] == ""
        )
    assert summary["failed_items"] == outcome.summary.failed_items
    assert outcome.summary.exit_code == (1 if outcome.summary.failed_items else 0)
    metrics = json.loads((outcome.run_dir / "metrics.json").read_text())
    assert metrics["variants"]["tit_llm"]["n_failed"] == summary["variants"]["tit_llm"]["failed"]
    # most items survive: retries absorb transient faults at this rate
    assert summary["variants"]["tit_llm"]["ok"] >= 18
