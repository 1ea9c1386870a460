"""`titjudge metrics`: JSON and table output from real files, exit code 2 on bad input.

Uses the data loaders (`titjudge.data.pairs`, `.ranking`, `.manifest`) as the command does.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from titjudge.cli import main

SCORES = """item_id,variant,score,status
a,good,3,ok
b,good,2,ok
c,good,1,ok
d,good,1,fallback
e,good,2,ok
f,good,0,ok
a,flat,1,ok
b,flat,1,ok
c,flat,,failed
d,flat,1,ok
e,flat,1,ok
f,flat,1,ok
"""
PAIRS = """prompt_id,item_a,item_b,winner
p1,a,b,a
p1,a,c,a
p1,b,c,a
p2,d,e,b
p2,d,f,tie
p2,e,f,a
"""
RANKS = "prompt_id,item_id,rank\np1,a,1\np1,b,2\np1,c,3\np2,e,1\np2,d,2.5\np2,f,2.5\n"
MODELS = {"a": "X", "b": "Y", "c": "Z", "d": "X", "e": "Y", "f": "Z"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {
        name: tmp_path / name for name in ("scores.csv", "pairs.csv", "ranks.csv", "manifest.jsonl")
    }
    paths["scores.csv"].write_text(SCORES)
    paths["pairs.csv"].write_text(PAIRS)
    paths["ranks.csv"].write_text(RANKS)
    paths["manifest.jsonl"].write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i,
                    "prompt_id": "p1" if i in "abc" else "p2",
                    "prompt": "long prompt",
                    "image": f"img/{i}.png",
                    "t2i_model": m,
                }
            )
            + "\n"
            for i, m in MODELS.items()
        )
    )
    return paths


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["metrics", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_json_output(files: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(
        capsys,
        str(files["scores.csv"]),
        "--pairs",
        str(files["pairs.csv"]),
        "--manifest",
        str(files["manifest.jsonl"]),
        "--bootstrap",
        "100",
        "--seed",
        "3",
    )
    assert set(out["variants"]) == {"flat", "good"}
    assert set(out) == {
        "version",
        "variants",
        "thresholds",
        "leaderboard",
        "comparisons",
        "settings",
        "notes",
        "origins",
    }
    good, flat = out["variants"]["good"], out["variants"]["flat"]
    # where its scores came from, beside its numbers; a scores file says nothing of a stop
    origin = out["origins"]["good"]
    assert (origin["n_fallback"], origin["fallback_share"], origin["stopped"]) == (
        1,
        pytest.approx(1 / good["n_scored"]),
        None,
    )
    # the fallback rule, as in a run: d's fallback score stays out of the pair d-e (the pair
    # d-f is a human tie) and out of p2's ranking, where e > f is then ranked correctly
    assert (good["pairwise_accuracy"], good["n_pairs"], good["n_fallback"]) == (1.0, 4, 1)
    assert (good["n_pairs_mixed_source"], good["n_fallback_unranked"]) == (2, 1)
    assert good["srcc"] == pytest.approx(1.0)
    assert (flat["srcc"], flat["n_pairs_skipped"], flat["n_failed"]) == (None, 2, 1)
    assert flat["metric_tie_rate"] == 1.0
    assert out["thresholds"]["n_pairs"] == 4  # the largest n_pairs: good's, after the fallback rule
    assert out["leaderboard"]["models"] == ["Y", "X", "Z"]
    # McNemar reads the pairs each variant was counted on: d-e is out of good's (fallback rule)
    assert (out["comparisons"][0]["n_pairs"], out["comparisons"][0]["p_value"]) == (
        2,
        pytest.approx(0.5),
    )
    assert out["settings"]["bootstrap"] == 100 and out["settings"]["seed"] == 3
    assert set(good["ci"]) == {"pairwise_accuracy", "metric_tie_rate", "srcc", "krcc", "ndcg"}


def test_explicit_ranks_gain_and_no_manifest(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    base = [str(files["scores.csv"]), "--pairs", str(files["pairs.csv"]), "--bootstrap", "0"]
    derived = run_json(capsys, *base)
    explicit = run_json(capsys, *base, "--ranks", str(files["ranks.csv"]))
    assert explicit["variants"]["good"]["srcc"] == derived["variants"]["good"]["srcc"]
    assert explicit["leaderboard"] is None and "--manifest" in explicit["notes"][0]
    assert explicit["variants"]["good"]["ci"]["pairwise_accuracy"] is None
    exponential = run_json(capsys, *base, "--gain", "exponential", "--top-k", "1")
    assert exponential["settings"]["gain"] == "exponential"
    # flat scores are constant, so position 1 holds the mean gain of the scored images.
    # p1 (c failed): gains a = 2^2-1 = 3, b = 2^1-1 = 1 -> 2 / 3
    # p2: e = 3, d = f = 2^0.5-1 -> ((3 + 2 (sqrt 2 - 1)) / 3) / 3
    p2 = (3 + 2 * (math.sqrt(2) - 1)) / 3 / 3
    assert exponential["variants"]["flat"]["ndcg"] == pytest.approx((2 / 3 + p2) / 2)


def test_tables(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    code = main(
        [
            "metrics",
            str(files["scores.csv"]),
            "--pairs",
            str(files["pairs.csv"]),
            "--manifest",
            str(files["manifest.jsonl"]),
            "--bootstrap",
            "50",
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    for expected in (
        "Agreement with human judgments",
        "good",
        "flat",
        "100.00%",
        "leaderboard",
        "SRCC vs human",
        "McNemar",
        "bootstrap CI over prompts",
    ):
        assert expected in text, expected


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"scores.csv": "item_id,variant,score,status\na,v,x,ok\n"},
            "scores.csv:2: score 'x' is not a number",
        ),
        ({"scores.csv": "item_id,variant,score,status\n"}, "scores file has no rows"),
        ({"pairs.csv": "prompt_id,item_a,item_b,winner\np1,a,b,left\n"}, "pairs.csv:2:"),
    ],
)
def test_bad_input_exits_2_with_one_line(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], change: dict[str, str], message: str
) -> None:
    for name, text in change.items():
        files[name].write_text(text)
    code = main(["metrics", str(files["scores.csv"]), "--pairs", str(files["pairs.csv"]), "--json"])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err and err.count("\n") == 1


def test_missing_file_and_bad_options_exit_2(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "metrics",
                str(files["scores.csv"]),
                "--pairs",
                str(files["pairs.csv"].with_name("no.csv")),
            ]
        )
        == 2
    )
    assert "no.csv" in capsys.readouterr().err
    assert (
        main(
            [
                "metrics",
                str(files["scores.csv"]),
                "--pairs",
                str(files["pairs.csv"]),
                "--bootstrap",
                "-5",
            ]
        )
        == 2
    )
    assert "--bootstrap must be >= 0" in capsys.readouterr().err
    assert (
        main(
            [
                "metrics",
                str(files["scores.csv"]),
                "--pairs",
                str(files["pairs.csv"]),
                "--top-k",
                "0",
            ]
        )
        == 2
    )
