"""A grid's cells say whose scores they are: a column whose judge is dead and falls back to
lexical (issue 48's case) shows no number in any row, and the notes say every score was
lexical's and its model was stopped; a column that fell back for one prompt's items shows its
share beside its accuracy; ablation.json keeps each cell's origin; the grid exits 4, and
`titjudge runs list` names the fallbacks and the stop."""

from __future__ import annotations

import json

import pytest
from ablation_grids import FAST, N_ITEMS, grid_config, run_grid

from titjudge.cli import main
from titjudge.data.manifest import load_manifest
from titjudge.records.summary import EXIT_DEGRADED

pytestmark = pytest.mark.slow  # a grid of two rows


def test_a_fallback_only_column_has_no_number_and_the_grid_is_no_success(
    bench, grid_server, dead_url, tmp_path, capsys
):
    server, responder = grid_server
    items = load_manifest(bench / "manifest.jsonl")
    responder.fail_prompt = items[0].prompt  # judge-flaky fails that prompt's images
    per_prompt = sum(item.prompt_id == items[0].prompt_id for item in items)
    fallback = {"fallback": "lexical", **FAST}
    dead = {"name": "tit_dead", "kind": "llm", "label": "Dead judge", "api_base": dead_url}
    flaky = {"name": "tit_flaky", "kind": "llm", "label": "Flaky judge", "api_base": server.url}
    raw = grid_config(
        bench,
        server.url,
        tmp_path,
        extra_columns=[
            {**dead, "model": "litellm:openai/judge-dead", "max_attempts": 1, **fallback},
            {**flaky, "model": "litellm:openai/judge-flaky", **fallback},
        ],
    )
    raw["run"]["stop_after"] = 2
    result = run_grid(raw, None)  # into the config's history, for `runs list`
    out = result.out_dir

    assert result.exit_code == EXIT_DEGRADED
    cells = result.rows[0].cells
    assert cells["tit_dead"].accuracy is None  # not lexical's, which it holds
    assert cells["tit_dead"].origin is not None and cells["tit_dead"].origin.fallback_only
    assert cells["tit_dead"].origin.stopped
    notes = "\n".join(result.notes)
    assert (
        "column 'Dead judge' omitted: its judge produced no score in any row (Sharp VLM: no "
        f"number of its own: all {N_ITEMS} of its scores came from its fallback lexical; its "
        "model litellm:openai/judge-dead was stopped by its circuit breaker" in notes
    )
    share = f"{per_prompt} of {N_ITEMS} ({100 * per_prompt / N_ITEMS:.0f}%)"
    assert f"Sharp VLM x Flaky judge: {share} of its scores came from its fallback lexical" in notes
    flaky_cell = cells["tit_flaky"]
    markdown = (out / "table4.md").read_text()
    sharp = next(line for line in markdown.splitlines() if line.startswith("| Sharp VLM |"))
    # its accuracy (bold or underlined where best) with its pairs and its share from lexical
    last = sharp.split(" | ")[-1]
    for mark in ("**", "<ins>", "</ins>"):
        last = last.replace(mark, "")
    assert last == (
        f"{100 * flaky_cell.accuracy:.2f} (n={flaky_cell.count('n_pairs')}, "  # type: ignore[operator]
        f"{100 * per_prompt / N_ITEMS:.0f}% fallback) |"
    )
    saved = json.loads((out / "ablation.json").read_text())
    assert saved["exit_code"] == EXIT_DEGRADED
    origin = saved["rows"][0]["cells"]["tit_dead"]["origin"]
    assert (origin["fallback_share"], origin["stopped"]) == (1.0, True)

    capsys.readouterr()
    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    listed = capsys.readouterr().out
    assert f"sharp/tit_dead {N_ITEMS} of {N_ITEMS} (100%) from lexical" in listed
    assert "stopped: litellm:openai/judge-dead" in listed
