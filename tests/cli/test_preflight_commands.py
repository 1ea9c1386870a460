"""`titjudge estimate` and `titjudge explain` run the preflight `titjudge run` runs, and refuse
what it refuses in the same one line, exit 2 (issue 48: `estimate` of a config none of whose
images exists said `nothing to send, $0`, exit 0). Each kind of refusal, on each command, on
the shipped Gemini config as a user runs it; GEMINI_API_BASE points at a closed loopback port
so that nothing could leave the machine were anything sent."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from builders import copy_data

from titjudge.cli import main

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "tit-llm-gemini.yaml"
COMMANDS = ("run", "estimate", "explain")
MODEL = "litellm:gemini/gemini-2.5-pro"


@pytest.fixture
def data(synthetic, tmp_path: Path) -> Path:
    """A private copy of a 2 prompts x 2 models benchmark (tests replace its images)."""
    return copy_data(synthetic(2, 2, seed=4, image_size=32), tmp_path)


@pytest.fixture(autouse=True)
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSy-preflight-commands")
    monkeypatch.setenv("GEMINI_API_BASE", "http://127.0.0.1:9/v1beta")  # discard: never answers
    monkeypatch.chdir(tmp_path)


def images(data: Path) -> list[Path]:
    return sorted((data / "images").rglob("*.png"))


def refusal(command: str, data: Path, tmp: Path, capsys, *sets: str, config: Path = CONFIG) -> str:
    """The command's one stderr line; it must exit 2 and write no run dir."""
    args = [command, str(config), "--set", f"data.manifest={data / 'manifest.jsonl'}"]
    args += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    args += ["--set", f"run.out={tmp / 'runs'}", "--set", f"run.cache_dir={tmp / 'cache'}"]
    for value in sets:
        args += ["--set", value]
    code = main(args)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1, (command, code, out[-1000:], err[-2000:])
    assert "preflight found" in lines[0] and "nothing was called" in lines[0]
    assert not (tmp / "runs").exists()
    return lines[0]


def each_command(data: Path, tmp: Path, capsys, *sets: str, config: Path = CONFIG) -> str:
    """The line every command refuses with: the same one."""
    lines = {
        command: refusal(command, data, tmp, capsys, *sets, config=config) for command in COMMANDS
    }
    assert len(set(lines.values())) == 1, lines
    return lines["run"]


def test_no_image_there(data, tmp_path, capsys) -> None:
    for image in images(data):
        image.unlink()
    line = each_command(data, tmp_path, capsys)
    assert f"none of the 4 images in {data / 'manifest.jsonl'} exists" in line


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_no_image_a_regular_file(data, tmp_path, capsys) -> None:
    for image in images(data):
        image.unlink()
        os.mkfifo(image)
    line = each_command(data, tmp_path, capsys)
    said = f"none of the 4 images in {data / 'manifest.jsonl'} can be read (4 not a regular file"
    assert f"{said} or unreadable), e.g. {data / 'images'}" in line
    assert line.endswith(": image is a FIFO (named pipe), not a regular file (data.manifest)")


def test_a_key_not_set(data, tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    line = each_command(data, tmp_path, capsys)
    assert f"GEMINI_API_KEY not set ({MODEL}: describer, judges tit_llm_g, tit_llm_g_paper)" in line


def test_an_unknown_provider(data, tmp_path, capsys) -> None:
    """A provider misspelt in the config file (a `--set` swap to one is refused at load:
    tests/config/test_swap.py)."""
    text = CONFIG.read_text().replace(
        'model: "litellm:gemini/gemini-2.5-pro", prompt: judge_similarity,',
        'model: "litellm:nosuchprovider/x", prompt: judge_similarity,',
    )
    assert "nosuchprovider" in text
    config = tmp_path / "typo.yaml"
    config.write_text(
        text.replace(
            "thinking: {budget: 1024}, api_key_env: GEMINI_API_KEY, fallback",
            "api_key_env: GEMINI_API_KEY, fallback",
        )
    )
    line = each_command(data, tmp_path, capsys, config=config)
    assert "unknown litellm provider 'nosuchprovider'" in line
    assert "(litellm:nosuchprovider/x: judge tit_llm_g)" in line


def test_some_images_unreadable_is_one_note_and_the_estimate_goes_on(data, tmp_path, capsys):
    """What `run` notes and runs past (some items will fail), estimate notes and prices."""
    gone = images(data)[0]
    gone.unlink()
    args = ["estimate", str(CONFIG), "--set", f"data.manifest={data / 'manifest.jsonl'}"]
    args += ["--set", f"data.human_pairs={data / 'pairs.csv'}"]
    args += ["--set", f"run.cache_dir={tmp_path / 'cache'}", "--json"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert err.strip().splitlines() == [
        f"titjudge: 1 of the 4 images in {data / 'manifest.jsonl'} are missing, e.g. {gone}: "
        "their items will fail"
    ]
    assert '"calls":' in out
