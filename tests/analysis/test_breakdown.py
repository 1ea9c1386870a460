"""Breakdowns by prompt length, T2I model and checklist element type, on real run dirs."""

from __future__ import annotations

import json

import pytest

import titjudge
from titjudge.cli import main
from titjudge.report.analysis.breakdown import (
    element_breakdown,
    length_breakdown,
    model_breakdown,
)
from titjudge.report.analysis.run import RunData

#: the T2I model whose images the modes run's llm judge fails on (conftest.FAILING_MODEL)
FAILING_MODEL = "synth-model-01"

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


def _written(run_dir):
    return json.loads((run_dir / "metrics.json").read_text())["variants"]


def test_length_buckets_add_up_to_the_runs_pairs(modes_run):
    run = RunData.load(modes_run)
    found = length_breakdown(run)
    assert len(found.edges) == 3  # quartiles
    written = _written(modes_run)
    for name, entry in written.items():
        rows = [r for r in found.rows if r.variant == name]
        assert len(rows) == 4
        assert sum(r.n_human_pairs for r in rows) == len(run.human.pairs)
        assert sum(r.n_pairs for r in rows) == entry["n_pairs"]
        assert sum(r.n_correct for r in rows) == entry["n_correct"]
        assert all(r.ci is not None and r.ci[0] <= r.pairwise_accuracy <= r.ci[1] for r in rows)


def test_each_bucket_says_how_many_of_its_scores_came_from_the_fallback(modes_run, capsys):
    """The llm judge fell back to lexical on FAILING_MODEL's images: each length bucket counts
    the fallback scores among its images (the buckets split the prompts, so they add up to
    the run's), and the printed table shows them beside the bucket's accuracy (issue 48)."""
    run = RunData.load(modes_run)
    written = _written(modes_run)
    rows = [r for r in length_breakdown(run).rows if r.variant == "llm"]
    assert written["llm"]["n_fallback"] > 0
    assert sum(r.n_fallback for r in rows) == written["llm"]["n_fallback"]
    assert sum(r.n_scored for r in rows) == written["llm"]["n_scored"]
    assert all(r.model_stopped is False for r in rows)
    lexical = [r for r in length_breakdown(run).rows if r.variant == "lexical"]
    assert all(r.n_fallback == 0 and r.n_scored > 0 for r in lexical)
    failing = next(
        r for r in model_breakdown(run).rows if r.variant == "llm" and r.group == FAILING_MODEL
    )
    assert (
        failing.n_fallback
        >= sum(1 for i in run.human.items.values() if i.t2i_model == FAILING_MODEL)
        > 0
    )
    assert main(["compare", str(modes_run), "--breakdown", "length"]) == 0
    table = capsys.readouterr().out.split("Pairwise accuracy by prompt length", 1)[1]
    shown = [line for line in table.splitlines() if " llm " in line]
    assert shown and all(f"{r.n_fallback} (" in line for r, line in zip(rows, shown, strict=True))


def test_length_buckets_follow_given_edges_and_the_pairs_frame(modes_run):
    record = titjudge.load_run(modes_run)
    pairs = record.pairs
    edge = int(pairs.prompt_words.median())
    found = length_breakdown(record.analysis(), [edge])
    assert [r.group for r in found.rows if r.variant == "lexical"] == [
        f"<={edge} words",
        f">{edge} words",
    ]
    for row in found.rows:
        mine = pairs[pairs.variant == row.variant]
        mine = (
            mine[mine.prompt_words <= edge]
            if row.group.startswith("<=")
            else mine[mine.prompt_words > edge]
        )
        assert row.n_human_pairs == len(mine)
        assert row.n_pairs == mine.correct.notna().sum()
        assert row.pairwise_accuracy == mine.correct.mean()


def test_model_breakdown_counts_pairs_with_the_model_on_either_side(modes_run):
    record = titjudge.load_run(modes_run)
    pairs = record.pairs
    found = model_breakdown(record.analysis())
    for row in found.rows:
        mine = pairs[
            (pairs.variant == row.variant)
            & ((pairs.t2i_model_a == row.group) | (pairs.t2i_model_b == row.group))
        ]
        assert row.n_human_pairs == len(mine)
        assert row.n_pairs == mine.correct.notna().sum()
        if row.n_pairs:
            assert row.pairwise_accuracy == mine.correct.mean()
        else:  # llm fell back on every synth-model-01 image: none of its pairs is counted
            assert (row.variant, row.pairwise_accuracy) == ("llm", None)
        assert row.srcc is None


def test_element_breakdown_scores_each_type_alone(modes_run):
    run = RunData.load(modes_run)
    found = element_breakdown(run)
    assert {r.variant for r in found.rows} == {"check"}
    groups = [r.group for r in found.rows]
    assert {"entity", "attribute", "relation", "setting", "style"} <= set(groups)
    # the oracle: each item's share of satisfied entity elements, compared pair by pair
    share = {}
    for line in (modes_run / "items.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["variant"] == "check" and row["status"] == "ok":
            kinds = [e for e in row["details"]["checklist"] if e["type"] == "entity"]
            if kinds:
                share[row["item_id"]] = sum(e["satisfied"] for e in kinds) / len(kinds)
    counted = right = 0
    for pair in run.human.pairs:
        if pair.winner == "tie" or pair.item_a not in share or pair.item_b not in share:
            continue
        winner, loser = (
            (pair.item_a, pair.item_b) if pair.winner == "a" else (pair.item_b, pair.item_a)
        )
        counted += 1
        right += share[winner] > share[loser]
    entity = next(r for r in found.rows if r.group == "entity")
    assert (entity.n_pairs, entity.n_correct) == (counted, right)


def test_element_breakdown_without_a_checklist_judge_is_one_line(offline_runs, capsys):
    assert main(["compare", str(offline_runs.base), "--breakdown", "element"]) == 2
    assert "no checklist judge" in capsys.readouterr().err


def test_compare_prints_breakdowns_and_draws_the_length_plot(modes_run, tmp_path, capsys):
    plot = tmp_path / "length.png"
    code = main(
        ["compare", str(modes_run), "--breakdown", "length,model,element", "--plot", str(plot)]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "by prompt length" in out and "by T2I model" in out and "by checklist element" in out
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    from PIL import Image

    assert Image.open(plot).size[0] > 300


def test_compare_json_has_the_breakdowns(modes_run, capsys):
    assert main(["compare", str(modes_run), "--json", "--breakdown", "length"]) == 0
    (found,) = json.loads(capsys.readouterr().out)["breakdowns"]
    assert found["dimension"] == "length" and len(found["edges"]) == 3
    assert (
        sum(r["n_pairs"] for r in found["rows"] if r["variant"] == "lexical")
        == _written(modes_run)["lexical"]["n_pairs"]
    )


def test_run_prints_the_length_breakdown_when_asked(analysis_data, tmp_path, capsys):
    import yaml

    config = tmp_path / "run.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "name": "bd",
                "data": {
                    "manifest": str(analysis_data / "manifest.jsonl"),
                    "human_pairs": str(analysis_data / "pairs.csv"),
                },
                "describer": {"model": f"replay:{analysis_data / 'descriptions.jsonl'}"},
                "judges": [{"name": "lexical", "kind": "lexical"}],
                "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
            }
        )
    )
    assert main(["run", str(config), "--breakdown", "length", "--length-edges", "240"]) == 0
    out = capsys.readouterr().out
    assert "by prompt length" in out and "<=240 words" in out and ">240 words" in out
    assert main(["run", str(config), "--breakdown", "size"]) == 2
    assert "--breakdown 'size'" in capsys.readouterr().err
