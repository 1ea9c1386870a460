"""`titjudge data ...` through `titjudge.cli.main`: exit codes, files written, messages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from PIL import Image

from titjudge.cli import main
from titjudge.data.manifest import load_manifest

VOTES = (
    "prompt_id,item_a,item_b,votes_a,votes_b,votes_tie,expert_1,expert_2,expert_3\n"
    "p1,a,b,10,5,0,,,\n"
    "p1,a,c,7,6,2,,,\n"
    "p1,b,c,7,6,2,b,b,a\n"
)


def test_synth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "bench"
    args = [
        "data",
        "synth",
        "--prompts",
        "3",
        "--models",
        "3",
        "--out",
        str(out),
        "--image-size",
        "48",
        "--seed",
        "5",
    ]
    assert main(args) == 0
    stdout = capsys.readouterr().out
    assert "SYNTHETIC benchmark" in stdout and "images     9" in stdout
    for name in (
        "manifest.jsonl",
        "descriptions.jsonl",
        "votes.csv",
        "pairs.csv",
        "ranks.csv",
        "truth.csv",
        "SYNTHETIC.md",
    ):
        assert (out / name).is_file(), name
    assert len(list((out / "images").rglob("*.png"))) == 9
    assert main(args) == 0  # regenerating its own folder is allowed


def test_synth_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["data", "synth", "--prompts", "2", "--models", "1", "--out", str(tmp_path / "x")])
        == 2
    )
    assert "--models must be at least 2" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exc:
        main(["data", "synth", "--prompts", "2", "--models", "3"])
    assert exc.value.code == 2


def test_aggregate_votes_reports_unresolved_rows(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES)
    out = tmp_path / "pairs.csv"
    assert main(["data", "aggregate-votes", str(votes), "--out", str(out)]) == 0
    assert out.read_text() == (  # each pair with the votes that decided it
        "prompt_id,item_a,item_b,winner,votes_a,votes_b,votes_tie\np1,a,b,a,10,5,0\np1,b,c,b,7,6,2\n"
    )
    captured = capsys.readouterr()
    assert "strong consensus       1" in captured.out and "unresolved (left out)  1" in captured.out
    assert f"{votes}:3: p1 a vs c (votes a/b/tie 7/6/2)" in captured.err


def test_aggregate_votes_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES.replace("p1,a,c,7,6,2", "p1,a,c,7,-6,2"))
    assert main(["data", "aggregate-votes", str(votes), "--out", str(tmp_path / "p.csv")]) == 2
    assert f"{votes}:3: votes_b must not be negative" in capsys.readouterr().err
    assert not (tmp_path / "p.csv").exists()


def test_aggregate_votes_panel_size(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(VOTES.replace("p1,a,c,7,6,2", "p1,a,c,6,2,1"))  # a panel of 9 on row 3
    out = str(tmp_path / "p.csv")
    assert main(["data", "aggregate-votes", str(votes), "--out", out]) == 2
    assert f"{votes}:3: votes add up to 9 but the panel has 15" in capsys.readouterr().err
    assert main(["data", "aggregate-votes", str(votes), "--out", out, "--panel-size", "any"]) == 0
    assert Path(out).read_text().splitlines()[2] == "p1,a,c,a,6,2,1"  # 6 of 9: strong consensus
    assert (
        main(["data", "aggregate-votes", str(votes), "--out", out, "--panel-size", "fifteen"]) == 2
    )
    assert "--panel-size must be a whole number or 'any'" in capsys.readouterr().err


def test_rank(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("prompt_id,item_a,item_b,winner\np1,a,b,a\np1,b,c,tie\np1,a,c,a\np2,d,e,b\n")
    out = tmp_path / "ranks.csv"
    assert main(["data", "rank", str(pairs), "--out", str(out)]) == 0
    assert out.read_text() == "prompt_id,item_id,rank\np1,a,1\np1,b,2.5\np1,c,2.5\np2,e,1\np2,d,2\n"
    assert "prompts with shared ranks  1" in capsys.readouterr().out
    pairs.write_text("prompt_id,item_a,item_b,winner\np1,a,b,maybe\n")
    assert main(["data", "rank", str(pairs), "--out", str(out)]) == 2
    assert f"{pairs}:2: winner must be one of a, b, tie" in capsys.readouterr().err


def test_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    root.mkdir()
    (root / "prompts.csv").write_text("prompt_id,prompt\np1,a red cat\np2,a blue dog\n")
    for model, pid in [("m1", "p1"), ("m1", "p2"), ("m2", "p1")]:
        (root / "images" / model).mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4)).save(root / "images" / model / f"{pid}.png")
    out = tmp_path / "manifest.jsonl"
    assert main(["data", "import", str(root), "--out", str(out)]) == 0
    items = load_manifest(out)
    assert [(i.item_id, i.prompt) for i in items] == [
        ("p1__m1", "a red cat"),
        ("p1__m2", "a red cat"),
        ("p2__m1", "a blue dog"),
    ]
    assert items[0].image == root / "images" / "m1" / "p1.png"
    captured = capsys.readouterr()
    assert "prompt-file layout" in captured.out and "images          3" in captured.out
    assert "images/m2/p2.*" in captured.err
    assert main(["data", "import", str(tmp_path / "none"), "--out", str(out)]) == 2
    assert "folder not found" in capsys.readouterr().err


def test_import_prompt_texts_layout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "ds"
    (root / "prompts").mkdir(parents=True)
    (root / "prompts" / "p1.txt").write_text("a red cat\n")
    (root / "prompts" / "p2.txt").write_text("a blue dog\n")
    for model, name in [("m1", "p1.png"), ("m1", "p2.jpeg"), ("m2", "p1.webp")]:
        (root / "images" / model).mkdir(parents=True, exist_ok=True)
        Image.new("RGB", (4, 4)).save(root / "images" / model / name)
    out = tmp_path / "manifest.jsonl"
    assert main(["data", "import", str(root), "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [
        (r["item_id"], r["prompt_id"], r["prompt"], r["image"], r["t2i_model"]) for r in rows
    ] == [
        ("p1__m1", "p1", "a red cat", "ds/images/m1/p1.png", "m1"),
        ("p1__m2", "p1", "a red cat", "ds/images/m2/p1.webp", "m2"),
        ("p2__m1", "p2", "a blue dog", "ds/images/m1/p2.jpeg", "m1"),
    ]
    captured = capsys.readouterr()
    assert "prompt-texts layout" in captured.out and "missing images  1" in captured.out
    assert "1 expected image(s) not found" in captured.err and "images/m2/p2.*" in captured.err


def _help(*command: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", *command, "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return done.stdout


def test_rank_help_names_the_method() -> None:
    text = _help("data", "rank")
    assert "Copeland" in text and "wins minus losses" in text
    assert "merge sort" in text and "c>a" in text and "incomplete pairs" in text


def test_import_help_lists_every_layout() -> None:
    text = _help("data", "import")
    for layout in (
        "DIR/prompts.jsonl | prompts.csv | prompts.json",
        "DIR/<prompt_id>/prompt.txt",
        "DIR/<prompt_id>/<model>.<ext>",
        "DIR/prompts/<prompt_id>.txt",
        "DIR/images/<model>/<prompt_id>.<ext>",
        "--mapping FILE, a CSV or JSONL with prompt_id, prompt, image, t2i_model",
        "png, jpg, jpeg, webp",
    ):
        assert layout in text, layout
