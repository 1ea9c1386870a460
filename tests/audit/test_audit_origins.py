"""The audit of a run whose judge answered nothing of its own (issue 48's case: a dead
endpoint, `fallback: lexical`, its model stopped): every view (terminal, `--json`, the page)
shows its share of fallback scores and the stop beside its numbers, gives it no accuracy of
its own, and counts none of its pairs as agreeing or not: they are lexical's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from bundle_doc import audit_bundle

from titjudge.cli import main
from titjudge.report.audit.load import load_audit

NOTE = (
    "tit_llm: no number of its own: all 12 of its scores came from its fallback lexical; its "
    "model litellm:openai/judge was stopped by its circuit breaker (run.stop_after)"
)


def test_its_pairs_are_not_its_own_and_it_has_no_accuracy(dead_judge_run: Path) -> None:
    data = load_audit(dead_judge_run)
    own, lexical = data.summaries["tit_llm"], data.summaries["lexical"]
    assert own.pairwise_accuracy is None and lexical.pairwise_accuracy is not None
    assert own.counts["agree"] == own.counts["disagree"] == own.counts["metric_tie"] == 0
    assert (
        own.counts["failed"]
        == lexical.counts["agree"] + lexical.counts["disagree"] + (lexical.counts["metric_tie"])
    )
    assert own.origin is not None and own.origin.fallback_share == 1.0 and own.origin.stopped
    assert own.fallback_text() == "12 (100%)" and lexical.fallback_text() == "0"


def test_the_terminal_says_whose_scores_they_are(dead_judge_run: Path, capsys) -> None:
    assert main(["audit", str(dead_judge_run)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("│ tit_llm"))
    row = lines[at].split("│")
    assert row[2].strip() == "—"  # no accuracy of its own
    shown = row[-3].strip()
    folded = lines[at + 1].split("│")  # a narrow console folds the cell onto the next line
    if len(folded) == len(row) and not folded[1].strip():
        shown = f"{shown} {folded[-3].strip()}"
    assert shown == "0/12 (100%)"
    assert NOTE in " ".join(out.split())


@pytest.mark.slow
def test_json_and_page_carry_the_origin(dead_judge_run: Path, capsys, tmp_path: Path) -> None:
    assert main(["audit", str(dead_judge_run), "--json"]) == 0
    variants = json.loads(capsys.readouterr().out)["variants"]
    assert variants["tit_llm"]["pairwise_accuracy"] is None
    assert variants["tit_llm"]["origin"] == {
        "fallback": "lexical",
        "model": "litellm:openai/judge",
        "n_scored": 12,
        "n_fallback": 12,
        "fallback_share": 1.0,
        "stopped": True,
    }
    assert variants["lexical"]["origin"]["fallback_share"] == 0.0
    (run,) = audit_bundle(dead_judge_run, tmp_path / "page")["runs"]["runs"]
    page = {v["name"]: v for v in run["variants"]}
    assert page["tit_llm"]["origin_note"].startswith(NOTE)
    assert (page["tit_llm"]["n_fallback"], page["tit_llm"]["fallback_share"]) == (12, "100%")
    assert page["lexical"]["origin_note"] is None


def test_a_run_from_before_origins_says_not_recorded_never_0_percent(handmade_run: Path, capsys):
    # the hand-made run's summary.json has no `origins`: its llm fell back for one item
    from titjudge import load_run

    record = load_run(handmade_run)
    assert record.summary is not None and record.summary.origins is None
    assert record.origin("llm") is None and record.variants["llm"].n_fallback == 1
    assert load_audit(handmade_run).summaries["llm"].fallback_text() == "1"  # no share
    assert main(["metrics", str(handmade_run)]) == 0
    out = capsys.readouterr().out
    assert "1 (0%)" not in out
    assert (
        "llm: 1 of its scores came from its fallback; this run's summary does not record their "
        "share or whether its model was stopped" in " ".join(out.split())
    )
    assert main(["metrics", str(handmade_run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["origins"] == {"llm": None, "emb": None}
