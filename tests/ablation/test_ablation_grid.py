"""The ablation grid end to end: two VLMs on one loopback server, comparer columns, failures."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from ablation_grids import (
    COLUMNS,
    FAST,
    N_ITEMS,
    N_PROMPTS,
    VARIANTS,
    grid_config,
    read_csv,
    run_grid,
)
from browser import ARTIFACTS
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.data.manifest import load_manifest
from titjudge.records.summary import EXIT_DEGRADED

# every test makes an ablation grid
pytestmark = pytest.mark.slow


def test_grid_tables_match_row_runs_and_rerun_is_free(
    bench, grid_server, embedder, tmp_path, capsys
):
    server, responder = grid_server
    raw = grid_config(bench, server.url, tmp_path, embedder)
    out = tmp_path / "out"
    result = run_grid(raw, out)

    rows = read_csv(out / "table4.csv")
    assert rows[0] == [
        "VLM",
        *COLUMNS,
        *(f"pairs: {c}" for c in COLUMNS),
        *(f"failed: {c}" for c in COLUMNS),
    ]
    assert [r[0] for r in rows[1:]] == ["Sharp VLM", "Blurry VLM"]
    accuracies = {}
    for line, name in zip(rows[1:], ["sharp", "blurry"], strict=True):
        metrics = json.loads((out / "rows" / name / "metrics.json").read_text())
        accuracies[name] = [metrics["variants"][v]["pairwise_accuracy"] for v in VARIANTS]
        assert [float(x) for x in line[1:6]] == [round(100 * a, 4) for a in accuracies[name]]
        assert line[6:11] == [str(metrics["variants"][v]["n_pairs"]) for v in VARIANTS]
        assert line[11:] == ["0"] * 5
        # every variant scored every item of the row's own run
        assert [metrics["variants"][v]["n_scored"] for v in VARIANTS] == [N_ITEMS] * 5
    assert accuracies["sharp"] != accuracies["blurry"]  # the two VLMs really describe differently

    # Markdown: same cells, best bold and second underlined within each row
    markdown = (out / "table4.md").read_text()
    assert "| VLM | LMM Score | Self-Eval | TIT-Score | Lexical | TIT-Score-judge-llm |" in markdown
    sharp_md = next(line for line in markdown.splitlines() if line.startswith("| Sharp VLM |"))
    best = max(round(100 * a, 2) for a in accuracies["sharp"])
    assert f"**{best:.2f}**" in sharp_md

    # one describe request per (image, VLM): 16 images x 2 VLMs, none asked twice
    describes = responder.count("describe")
    assert len(describes) == 2 * N_ITEMS and set(describes.values()) == {1}
    assert {model for model, _ in describes} == {"vlm-sharp", "vlm-blurry"}
    lmm = responder.count("lmm")
    assert len(lmm) == 2 * N_ITEMS and set(lmm.values()) == {1}
    # describe + lmm + self-eval + LLM judge, per item and row; lexical asks no model
    assert len(responder.log) == server.stats.total == 4 * 2 * N_ITEMS
    assert result.exit_code == 0 and result.notes == []
    # each prompt is embedded once for the whole grid (the second row finds all of them in
    # the cache the first row filled); every description is embedded once. A hit is a call
    # answered without asking the model: each row embeds a prompt and a description per item
    stats = json.loads((tmp_path / "cache" / "last_run_stats.json").read_text())
    assert stats["run"] == "grid"
    assert stats["by_model"][embedder] == {
        "calls": 4 * N_ITEMS,
        "hits": 4 * N_ITEMS - (N_PROMPTS + 2 * N_ITEMS),
        "misses": N_PROMPTS + 2 * N_ITEMS,
        "writes": N_PROMPTS + 2 * N_ITEMS,
    }
    # the grid's counts are its rows' counts added up (each row's summary.json)
    row_caches = [
        json.loads((out / "rows" / name / "summary.json").read_text())["cache"]
        for name in ("sharp", "blurry")
    ]
    for count in ("calls", "hits", "misses", "writes"):
        assert stats[count] == sum(cache[count] for cache in row_caches)

    saved = json.loads((out / "ablation.json").read_text())
    assert [r["status"] for r in saved["rows"]] == ["ok", "ok"]
    assert saved["rows"][0]["cells"]["tit_llm"]["pairwise_accuracy"] == accuracies["sharp"][4]
    assert saved["rows"][1]["run_dir"] == str(out / "rows" / "blurry")
    for stem in ("table4", "table2", "leaderboard"):
        assert {(out / f"{stem}{s}").is_file() for s in (".md", ".csv", ".tex")} == {True}
    assert (out / "table4.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the docs' picture of Table 4 is this grid's (docs/hooks/reference.py puts it in the site)
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copyfile(out / "table4.png", ARTIFACTS / "table4.png")

    # Table 2: one line per (VLM, comparer); Table 3: human ranking + one per (VLM, comparer)
    assert len(read_csv(out / "table2.csv")) == 1 + 2 * 5
    board = read_csv(out / "leaderboard.csv")
    assert [r[0] for r in board[1:3]] == ["Human", "Sharp VLM / LMM Score"] and len(
        board
    ) == 1 + 1 + 10

    # the same ablation again, through the CLI: all from the cache, same table
    first_csv = (out / "table4.csv").read_bytes()
    config_path = tmp_path / "grid.yaml"
    config_path.write_text(yaml.safe_dump(raw))
    server.reset_stats()
    capsys.readouterr()
    assert main(["ablation", str(config_path)]) == 0  # into <run.out>/<name>/<run id>/
    assert server.stats.total == 0
    assert (latest_run(tmp_path / "runs" / "grid") / "table4.csv").read_bytes() == first_csv
    captured = capsys.readouterr()
    printed = captured.out
    assert "Table 4" in printed and "Sharp VLM" in printed and "Blurry VLM" in printed
    # stderr is not a terminal: each row's progress as plain records naming the row
    records = [line for line in captured.err.splitlines() if line.startswith("progress: ")]
    for title in ("row 1/2 sharp", "row 2/2 blurry"):
        done = f"progress: {title} · described {N_ITEMS}/{N_ITEMS} · judged {N_ITEMS}/{N_ITEMS}"
        assert any(line.startswith(done) for line in records), records
    assert "\x1b" not in captured.err
    assert f"{best:.2f}" in printed


def test_failed_column_row_and_items_are_reported_not_filled(
    bench, grid_server, dead_url, tmp_path, monkeypatch
):
    server, responder = grid_server
    monkeypatch.delenv("TITJUDGE_TEST_NO_SUCH_KEY", raising=False)
    items = load_manifest(bench / "manifest.jsonl")
    first_prompt = items[0].prompt_id
    responder.fail_prompt = items[0].prompt
    per_prompt = sum(item.prompt_id == first_prompt for item in items)
    raw = grid_config(
        bench,
        server.url,
        tmp_path,
        extra_columns=[
            {
                "name": "tit_dead",
                "kind": "llm",
                "label": "Dead judge",
                "model": "litellm:openai/judge-dead",
                "api_base": dead_url,
                "max_attempts": 1,
            },
            {
                "name": "tit_flaky",
                "kind": "llm",
                "label": "Flaky judge",
                "model": "litellm:openai/judge-flaky",
                "api_base": server.url,
                **FAST,
            },
            {"name": "off", "kind": "lexical", "label": "Switched off", "enabled": False},
        ],
        extra_rows=[
            {
                # the sharp row's model without its key: every call is in the cache (where a
                # model is served and with which key does not enter a key), so none is sent
                "name": "nokey",
                "label": "No-key VLM",
                "model": "litellm:openai/vlm-sharp",
                "api_base": server.url,
                "api_key_env": "TITJUDGE_TEST_NO_SUCH_KEY",
                **FAST,  # one model's options are the same in every row that calls it
            },
            {
                "name": "broken",
                "label": "Broken VLM",
                "model": "litellm:openai/vlm-sharp",
                "api_base": server.url,
                "prompt": "no_such_template",
                **FAST,
            },
            {
                "name": "offline",
                "label": "Unreachable VLM",
                "model": "litellm:openai/vlm-gone",
                "api_base": dead_url,
                "max_attempts": 1,
            },
        ],
    )
    out = tmp_path / "out"
    result = run_grid(raw, out)

    rows = read_csv(out / "table4.csv")
    shown = [c for c in COLUMNS if c != "TIT-Score"] + ["Flaky judge"]
    assert rows[0][: 1 + len(shown)] == ["VLM", *shown]  # dead column omitted, order kept
    # failed rows omitted; the no-key row answered from the cache alone
    assert [r[0] for r in rows[1:]] == ["Sharp VLM", "Blurry VLM", "No-key VLM"]
    assert rows[3][1:] == rows[1][1:]
    assert [r[-1] for r in rows[1:]] == [str(per_prompt)] * 3  # failed count of the flaky column
    markdown = (out / "table4.md").read_text()
    flaky = result.rows[0].cells["tit_flaky"]
    assert flaky.n_failed == per_prompt and flaky.metrics.n_scored == N_ITEMS - per_prompt
    # a prompt's worth of failures leaves the flaky cell under 90% of the full cells' pairs:
    # it shows its pairs and is never marked, whatever its accuracy
    full = result.rows[0].cells["lexical"].metrics.n_pairs
    assert 0 < flaky.metrics.n_pairs < 0.9 * full
    flaky_md = next(
        line for line in markdown.splitlines() if line.startswith("| Sharp VLM |")
    ).split(" | ")[-1]
    assert flaky_md == (
        f"{100 * flaky.accuracy:.2f} (n={flaky.metrics.n_pairs}, {per_prompt} failed) |"
    )
    assert "Dead judge" not in markdown.split("Notes:")[0]

    notes = "\n".join(result.notes)
    assert "column 'Switched off' (off) is switched off in the config" in notes
    assert (
        "column 'Dead judge' omitted: its judge produced no score in any row (Sharp VLM:" in notes
    )
    # the dead judge's reason: its first calls' connection error, or, once the model's breaker
    # stopped it (models.calls.breaker), the lasting reason its unsent calls carry
    assert "Connection error" in notes or "connection refused" in notes
    assert "row 'Broken VLM' failed and is omitted:" in notes and "no_such_template" in notes
    assert "No-key VLM" not in notes
    assert "row 'Unreachable VLM' produced no score and is omitted: every item failed" in notes
    assert all(f"- {note}" in markdown for note in result.notes)

    saved = json.loads((out / "ablation.json").read_text())
    assert [r["status"] for r in saved["rows"]] == ["ok", "ok", "ok", "failed", "no_scores"]
    dead = saved["rows"][0]["cells"]["tit_dead"]
    assert dead.pop("thresholds")["k_95"] is None  # no pairs, no threshold
    assert dead == {
        "pairwise_accuracy": None,
        "n_pairs": 0,
        "n_prompts": 0,
        "n_prompts_ndcg": 0,
        "markable": False,
        "n_items": N_ITEMS,
        "n_failed": N_ITEMS,
        "n_fallback": 0,
        # nothing scored, no fallback, its model stopped by its breaker
        "origin": {
            "fallback": None,
            "model": "litellm:openai/judge-dead",
            "n_scored": 0,
            "n_fallback": 0,
            "fallback_share": None,
            "stopped": True,
        },
        "first_error": dead["first_error"],
    }
    assert saved["shown_columns"] == [v for v in VARIANTS if v != "tit_score"] + ["tit_flaky"]
    flaky_saved = saved["rows"][0]["cells"]["tit_flaky"]
    assert flaky_saved["n_pairs"] == flaky.metrics.n_pairs and not flaky_saved["markable"]
    assert flaky_saved["thresholds"]["n_pairs"] == flaky.metrics.n_pairs  # its own n
    assert saved["rows"][0]["cells"]["lexical"]["markable"]
    # the dead judge's model (and the unreachable row's VLM) were stopped: not 1, failed items
    assert result.exit_code == EXIT_DEGRADED == saved["exit_code"]
    # no describe was repeated by the failures around it
    assert set(responder.count("describe").values()) == {1}


def test_grid_reads_its_data_once_for_all_rows(plain_grid):
    """Every row runs on the grid's one data section: the manifest and the human pairs are
    read once for the whole grid, not once more per row, and each row still scores every item."""
    assert plain_grid.reads == {"manifest": 1, "pairs": 1}
    assert [row.n_items for row in plain_grid.result.rows] == [N_ITEMS, N_ITEMS]
    for name in ("sharp", "blurry"):
        scores = read_csv(plain_grid.out / "rows" / name / "scores.csv")
        assert len(scores) == 1 + N_ITEMS * 4  # header + 4 variants per item (no embedder)
