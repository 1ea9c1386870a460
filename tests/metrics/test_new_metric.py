"""A metric is declared once: a new per-prompt metric, added by one `register` of a `Metric`
(`titjudge.metrics.catalog`), shows in every view of a run without any other change: the
run's terminal rankings table, metrics.json, the run record, `audit --json`, `titjudge
compare` (its table and `--json`) and the ablation's Table 2 (built from the run's variant,
as the grid builds its cells).

The metric, "top-1": per ranked prompt, 1 when the variant's best-scored image is the one
the humans ranked first, else 0 (undefined with fewer than two scored images)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import titjudge
from titjudge.ablation.tables import table2
from titjudge.cli import main
from titjudge.cli.demo import demo_config
from titjudge.metrics.catalog import Count, Metric, metrics, register, registered
from titjudge.metrics.tables import EvalData, PromptValues
from titjudge.records import AblationResult, CellResult, ColumnInfo, RowResult

pytestmark = pytest.mark.slow  # a whole (offline) run


def top1(scores: np.ndarray, data: EvalData) -> PromptValues:
    values = np.full(data.n_prompts, np.nan)
    considered = np.zeros(data.n_prompts, dtype=bool)
    for group in data.rank_groups:
        considered[group.prompt] = True
        scored = np.isfinite(scores[group.items])
        if scored.sum() < 2:
            continue
        best = group.items[scored][np.argmax(scores[group.items][scored])]
        first = group.items[group.ranks == group.ranks.min()]
        values[group.prompt] = float(best in first)
    return PromptValues(values, considered)


TOP1 = Metric(
    "top1_hit",
    "top-1",
    better="higher",
    ci="prompts",
    outcome=None,
    repeats=True,
    percent=True,
    digits=1,
    stands_on=Count("n_prompts_top1", "Top-1 prompts"),
    heading="Top-1 (%)",
    csv="top1_pct",
    table="rankings",
    per_prompt=top1,
)


def test_a_metric_registered_once_shows_in_every_view(synthetic, tmp_path, capsys):
    data = synthetic(5, 4)
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps(demo_config(data, tmp_path, None)))  # replay + lexical
    out = tmp_path / "run"
    with registered(TOP1):
        assert main(["run", str(config), "--out", str(out)]) == 0
        terminal = capsys.readouterr().out
        variant = json.loads((out / "metrics.json").read_text())["variants"]["lexical"]
        record = titjudge.load_run(out).variants["lexical"]
        assert main(["audit", str(out), "--json"]) == 0
        audited = json.loads(capsys.readouterr().out)
        assert main(["compare", str(out)]) == 0
        compared = capsys.readouterr().out
        assert main(["compare", str(out), "--json"]) == 0
        compared_json = json.loads(capsys.readouterr().out)
        cell = CellResult(n_items=20, n_failed=0, metrics=record)
        grid = AblationResult(
            "grid",
            tmp_path,
            [ColumnInfo("lexical", "Lexical", "lexical", None)],
            [],
            [RowResult("vlm", "Replay", "replay:x", out, cells={"lexical": cell})],
        )
        table = table2(grid)
    assert TOP1 not in metrics()  # the block's registration ended with it

    value = variant["top1_hit"]
    assert isinstance(value, float) and 0.0 <= value <= 1.0
    assert variant["n_prompts_top1"] == 5
    low, high = variant["ci"]["top1_hit"]
    assert low <= value <= high
    assert "top-1" in terminal and f"{100 * value:.1f}%" in terminal
    assert record.get("top1_hit") == value
    entry = audited["variants"]["lexical"]
    assert entry["top1_hit"] == value and entry["n_prompts_top1"] == 5
    assert "top-1" in compared
    shared = next(v for v in compared_json["variants"] if v["variant"] == "lexical")
    assert shared["top1_hit"] == pytest.approx(value)  # all of the run's pairs are shared
    index = table.header.index("Top-1 (%)")
    assert table.header[index + 1] == "Top-1 prompts"
    assert table.rows[0][index].text == f"{100 * value:.1f}"


def test_a_registered_metric_must_compute_itself_under_names_of_its_own() -> None:
    with pytest.raises(ValueError, match="needs per_prompt"):
        register(Metric("x", "x", "higher", "prompts", None, True, False, 2, None))
    with pytest.raises(ValueError, match="declared already"):
        register(
            Metric("srcc", "x", "higher", "prompts", None, True, False, 2, None, per_prompt=top1)
        )
    with pytest.raises(ValueError, match="another metric's count"):
        register(
            Metric(
                "y",
                "y",
                "higher",
                "prompts",
                None,
                True,
                False,
                2,
                Count("n_prompts", "Prompts"),
                per_prompt=top1,
            )
        )
    assert [m.name for m in metrics()][-1] == "leaderboard_srcc"  # nothing was added
