"""Pairs that name items the scores (or the manifest) do not know are refused, by `run` and by
`titjudge metrics` alike: one line with the count and a few of the ids, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from titjudge.cli import main
from titjudge.data.pairs import check_pairs_known
from titjudge.errors import DataError
from titjudge.records.items import HumanPair

SCORES = "item_id,variant,score,status\n" + "".join(
    f"{item},v,{score},ok\n" for item, score in zip("abcd", (4, 3, 2, 1), strict=True)
)
GOOD_PAIRS = "prompt_id,item_a,item_b,winner\np1,a,b,a\np1,c,d,b\n"


def test_known_items_pass_and_unknown_ones_are_counted_and_named():
    pairs = [
        HumanPair("p", "a", "b", "a"),
        HumanPair("p", "a", "x1", "a"),
        HumanPair("p", "x2", "x3", "b"),
        HumanPair("p", "x4", "x1", "tie"),
        HumanPair("p", "x5", "b", "tie"),
    ]
    check_pairs_known(pairs[:1], {"a", "b"}, Path("pairs.csv"), "scores.csv")
    with pytest.raises(DataError) as caught:
        check_pairs_known(pairs, {"a", "b"}, Path("pairs.csv"), "scores.csv")
    assert str(caught.value) == (
        "pairs.csv: 4 of 5 pairs name items not in scores.csv: "
        "5 unknown item(s), 'x1', 'x2', 'x3' and 2 more"
    )


def _files(tmp_path: Path, pairs: str) -> list[str]:
    (tmp_path / "scores.csv").write_text(SCORES)
    (tmp_path / "pairs.csv").write_text(pairs)
    return [str(tmp_path / "scores.csv"), "--pairs", str(tmp_path / "pairs.csv")]


def test_metrics_refuses_pairs_naming_items_without_scores(tmp_path, capsys):
    args = _files(tmp_path, GOOD_PAIRS + "p1,a,ghost,a\np1,typo_b,c,b\n")
    assert main(["metrics", *args, "--json"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"pairs.csv: 2 of 4 pairs name items not in {tmp_path / 'scores.csv'}" in err
    assert "'ghost', 'typo_b'" in err


def test_metrics_accepts_pairs_of_scored_items(tmp_path, capsys):
    assert main(["metrics", *_files(tmp_path, GOOD_PAIRS), "--json", "--bootstrap", "0"]) == 0
    assert json.loads(capsys.readouterr().out)["variants"]["v"]["pairwise_accuracy"] == 0.5


def test_metrics_with_a_manifest_refuses_items_it_does_not_list(tmp_path, capsys):
    args = _files(tmp_path, GOOD_PAIRS + "p1,a,ghost,a\n")
    manifest = tmp_path / "manifest.jsonl"
    manifest.write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i,
                    "prompt_id": "p1",
                    "prompt": "x",
                    "image": f"{i}.png",
                    "t2i_model": "m",
                }
            )
            + "\n"
            for i in "abcd"
        )
    )
    assert main(["metrics", *args, "--manifest", str(manifest)]) == 2
    err = capsys.readouterr().err
    assert "pairs.csv:4: unknown item 'ghost' (not in the manifest)" in err
