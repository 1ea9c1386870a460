"""`titjudge annotate`: the real command serving, stopping, refusing; `--status VOTES`."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from titjudge.cli import main
from titjudge.data.manifest import load_manifest
from titjudge.data.pair_draw import draw_pairs

HEADER = "prompt_id,item_a,item_b,annotator,choice,shown_left,seconds,voted_at\n"


@pytest.mark.slow
def test_the_command_serves_until_ctrl_c_and_resumes(manifest: Path, tmp_path: Path) -> None:
    votes = tmp_path / "votes.csv"
    votes.write_text(HEADER + "P1,P1_m1,P1_m2,Ann,a,a,1.0,\n", encoding="utf-8")
    command = [sys.executable, "-m", "titjudge", "annotate", str(manifest), "--out", str(votes)]
    child = subprocess.Popen(
        [*command, "--per-prompt", "3", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        first = child.stdout.readline()
        assert first.startswith("annotating 15 pairs (5 prompts, 25 images)"), first
        assert "1 answers already there" in first
        lines = [child.stdout.readline()]
        while not lines[-1].startswith("open"):
            lines.append(child.stdout.readline())
        drawn = {p.pair_id for p in draw_pairs(load_manifest(manifest), 3)}
        notes = [line for line in lines if line.startswith("note: 1 answers in")]
        assert len(notes) == ("P1_m1|P1_m2" not in drawn)
        url = lines[-1].split()[-1]
        assert url.startswith("http://127.0.0.1:")
        assert "token" not in url
        with urllib.request.urlopen(url + "api/next?annotator=Ann", timeout=10) as response:
            state = json.load(response)
        assert state["total"] == 15
        assert state["done"] == ("P1_m1|P1_m2" in drawn)  # Ann's answer counts where drawn
    finally:
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=20)
    assert child.returncode == 0, err
    assert "stopped; 1 answers in" in out and "Traceback" not in err


@pytest.mark.slow
def test_other_hosts_get_a_token_in_the_url(manifest: Path, tmp_path: Path) -> None:
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "titjudge",
            "annotate",
            str(manifest),
            "--out",
            str(tmp_path / "v.csv"),
        ]
        + ["--host", "127.0.0.2", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert child.stdout is not None
        child.stdout.readline()
        url = child.stdout.readline().split()[-1]  # a new file: no note line
        assert url.startswith("http://127.0.0.2:") and "/?token=" in url
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(url.split("?")[0] + "api/status", timeout=10)
        assert denied.value.code == 403
        base, token = url.split("?")
        with urllib.request.urlopen(f"{base}api/status?{token}", timeout=10) as response:
            assert json.load(response)["annotators"] == []
    finally:
        child.send_signal(signal.SIGINT)
        child.communicate(timeout=20)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["annotate"], "annotate needs MANIFEST and --out VOTES"),
        (["annotate", "{manifest}"], "annotate needs MANIFEST and --out VOTES"),
        (["annotate", "{manifest}", "--status", "{votes}"], "takes no MANIFEST or --out"),
        (["annotate", "{manifest}", "--out", "{votes}", "--json"], "--json goes with --status"),
        (["annotate", "{manifest}", "--out", "{votes}", "--per-prompt", "0"], "at least 1"),
        (["annotate", "{manifest}", "--out", "{votes}", "--port", "70000"], "--port must be"),
        (["annotate", "{manifest}", "--out", "{manifest}"], "not a votes file"),
        (["annotate", "{manifest}", "--out", "{votes}", "--pairs", "{missing}"], "not found"),
        (["annotate", "--status", "{manifest}"], "not a votes file"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    args: list[str],
    message: str,
    manifest: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    names = {"manifest": manifest, "votes": tmp_path / "v.csv", "missing": tmp_path / "no.csv"}
    assert main([a.format(**names) for a in args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err


def test_a_missing_image_is_refused_before_serving(
    manifest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (manifest.parent / "images" / "P3_m2.png").unlink()
    assert main(["annotate", str(manifest), "--out", str(tmp_path / "v.csv")]) == 2
    assert "1 image(s) cannot be shown: P3_m2: image not found" in capsys.readouterr().err


def test_without_aiohttp_the_command_says_how_to_install_it(
    manifest: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "aiohttp", None)
    monkeypatch.delitem(sys.modules, "titjudge.annotate.server", raising=False)
    assert main(["annotate", str(manifest), "--out", str(tmp_path / "v.csv")]) == 2
    err = capsys.readouterr().err
    assert "needs aiohttp" in err and "[annotate]" in err and err.count("\n") == 1


def test_status_prints_counts_and_agreement(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # three pairs voted by two annotators: (a, a), (b, b), (a, b) after orientation, so
    # alpha = 4/9 = 0.444 and kappa = 1/3 (tests/metrics/test_agreement.py works them out)
    votes = tmp_path / "votes.csv"
    votes.write_text(
        HEADER
        + "P1,x,y,Ann,a,a,2,\n"
        + "P1,y,x,Bob\x1b[31m,b,a,4,\n"
        + "P1,x,z,Ann,b,b,1,\n"
        + "P1,x,z,Bob\x1b[31m,b,a,3,\n"
        + "P1,y,z,Ann,a,b,5,\n"
        + "P1,y,z,Bob\x1b[31m,b,b,1,\n"
        + "P2,u,v,Ann,skip,a,,\n",
        encoding="utf-8",
    )
    assert main(["annotate", "--status", str(votes)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "Bob\\x1b[31m" in out
    ann = next(line for line in out.splitlines() if line.startswith("Ann"))
    assert ann.split() == ["Ann", "3", "2", "1", "0", "1", "67%", "2.0"]
    assert "shared pairs      3" in out
    assert "Krippendorff's α  0.444" in out and "Fleiss' κ         0.333" in out
    assert "strong 2, advantage 0, need experts 1" in out
    assert main(["annotate", "--status", str(votes), "--json"]) == 0
    status = json.loads(capsys.readouterr().out)
    assert status["krippendorff_alpha"] == pytest.approx(4 / 9)
    assert status["fleiss_kappa"] == pytest.approx(1 / 3)
    assert [a["votes"] for a in status["annotators"]] == [3, 3]


def test_a_port_in_use_is_one_line(
    manifest: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["annotate", str(manifest), "--out", str(tmp_path / "v.csv"), "--port", str(port)]
        assert main(args) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{port}" in err and err.count("\n") == 1
