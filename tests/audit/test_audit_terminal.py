"""`titjudge audit --pair` and `--disagreements`: the facts, at 100 columns, model text literal."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from titjudge.cli import main


def run_cli(capsys, *args: str) -> str:
    assert main(["audit", *args]) == 0
    out = capsys.readouterr().out
    assert max(len(line) for line in out.splitlines()) <= 100
    return out


def test_pair_view_shows_scores_verdicts_rationales_and_raw(handmade_run: Path, capsys) -> None:
    out = run_cli(capsys, str(handmade_run), "--pair", "P1_m1|P1_m3")
    flat = " ".join(out.split())  # rich wraps long texts; compare without line breaks
    assert "pair P1_m1|P1_m3" in out
    assert "human verdict: B better" in out
    assert "B  P1_m3 · m3  ← preferred by humans" in out
    rows = {
        line.split()[0]: line.split()
        for line in out.splitlines()
        if line.split()[:1] in (["llm"], ["emb"])
    }
    assert (
        rows["llm"][:5] == ["llm", "│", "8", "│", "5"]
        and "-3" in rows["llm"]
        and "disagree" in rows["llm"]
    )
    assert rows["emb"][2:5] == ["0.9", "│", "0.75"] and "-0.15" in rows["emb"]
    assert "llm rationale for P1_m1: the m1 image follows the prompt." in flat
    assert "A matches: m1 subject" in flat and "A misses: lighting" in flat
    assert 'A raw output: {"score": 8.0' in flat
    assert "Prompt P1: a red ball on green grass" in out
    assert "description A: A picture made by m1 for P1." in flat


def test_hostile_model_text_is_printed_literally(handmade_run: Path, capsys) -> None:
    out = run_cli(capsys, str(handmade_run), "--pair", "P1_m1|P1_m3", "--variant", "llm")
    flat = "".join(out.split())
    assert '<script>window.__pwned=1</script><imgsrc=xonerror="window.__pwned=1">' in flat
    assert "[boldred]boom[/]" in flat  # rich markup shown, not applied
    assert "\x1b" not in out and "\\x1b[31mred\\x1b[0m" in out  # escape codes made visible
    assert "emb" not in [line.split()[0] for line in out.splitlines() if line.split()]


def test_failed_and_fallback_sides_show_their_errors(handmade_run: Path, capsys) -> None:
    out = run_cli(capsys, str(handmade_run), "--pair", "P2_m1|P2_m2")
    flat = " ".join(out.split())
    assert "A error: judge output was not valid JSON" in flat
    assert "B [fallback] cost $0.0020 rationale: [fallback to emb] cosine 0.6" in flat
    assert "B error: timeout after 3 attempts" in flat and "failed/fallback" in flat


def test_disagreements_most_confident_first_with_limit(handmade_run: Path, capsys) -> None:
    out = run_cli(capsys, str(handmade_run), "--disagreements", "--variant", "emb", "--limit", "1")
    assert "2 disagreements with humans for variant emb; most confident first, showing 1" in out
    assert "#1 pair P1_m2|P1_m3" in out and "P1_m1|P1_m3" not in out
    assert "1 more; raise --limit to see them" in out
    summary = next(line for line in out.splitlines() if line.startswith("│ emb"))
    assert summary.split("│")[2].strip() == "60.0%"


def test_disagreements_across_variants_list_each_pair_once(handmade_run: Path, capsys) -> None:
    out = run_cli(capsys, str(handmade_run), "--disagreements")
    assert "2 disagreements with humans for any variant" in out
    assert out.index("#1 pair P1_m1|P1_m3") < out.index("#2 pair P1_m2|P1_m3")


@pytest.mark.slow
def test_pipeline_run_disagreements_match_the_run(pipeline_run: Path, capsys) -> None:
    out = run_cli(capsys, str(pipeline_run), "--disagreements", "--limit", "50")
    items = [json.loads(line) for line in (pipeline_run / "items.jsonl").read_text().splitlines()]
    score = {row["item_id"]: row["score"] for row in items}
    pairs = (pipeline_run.parent / "data" / "pairs.csv").read_text().splitlines()[1:]
    wrong = sum(
        1
        for line in pairs
        for _, a, b, winner in [line.split(",")[:4]]  # then votes_a, votes_b, votes_tie
        if winner != "tie" and (score[a] - score[b]) * (1 if winner == "a" else -1) < 0
    )
    assert f"{wrong} disagreements with humans for variant lexical" in out or (
        f"{wrong} disagreements with humans for any variant" in out
    )
    assert out.count(" pair p0") == wrong
