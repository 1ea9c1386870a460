"""The README's headline swap runs as written (issue 48): `titjudge run
configs/tit-llm-gemini.yaml --set judges.tit_llm_g.model=litellm:openai/gpt-4o` loads, the
judge's Gemini settings follow the model (said once), and the command goes on to the preflight,
which asks for what the swapped config needs: OpenAI's key for the swapped judge, Gemini's for
the rest. The example itself needs both keys and a dataset (its marker says so); here the line
is taken from the README, byte for byte, and run without them."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
from cli_process import run_cli

from titjudge.config.load import load_config

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SWAP = "--set judges.tit_llm_g.model="


def readme_swap() -> list[str]:
    """The README's one command line that swaps a model, as a shell would split it."""
    blocks = re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    (line,) = [line for block in blocks for line in block.splitlines() if SWAP in line]
    args = shlex.split(line, comments=True)
    assert args[:3] == ["titjudge", "run", "configs/tit-llm-gemini.yaml"], args
    return args


def sets(args: list[str]) -> list[str]:
    return [args[i + 1] for i, arg in enumerate(args) if arg == "--set"]


def test_the_readmes_swap_loads_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    args = readme_swap()
    monkeypatch.chdir(ROOT)  # the README's paths are the checkout's
    config = load_config(args[2], sets(args))
    judge = config.judges[0]
    assert judge.name == "tit_llm_g" and judge.model == "litellm:openai/gpt-4o"
    assert judge.thinking is None and judge.api_key_env is None
    assert len(config.swapped) == 1 and "thinking {budget: 1024}" in config.swapped[0]


@pytest.mark.slow  # a child process, as a reader runs it
def test_the_readmes_swap_on_the_command_line_reaches_the_preflight(tmp_path: Path) -> None:
    args = readme_swap()
    (tmp_path / "configs").mkdir()
    shutil.copy(ROOT / args[2], tmp_path / args[2])
    done = run_cli(args[1:], cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 2, done.stderr
    note, refusal = done.stderr.splitlines()  # the swap said once, then the preflight's line
    assert note.startswith("WARNING titjudge.config.swap: judges.tit_llm_g.model=")
    assert "left out the config's api_key_env GEMINI_API_KEY" in note
    assert refusal.startswith("titjudge: error: configs/tit-llm-gemini.yaml: preflight found")
    # the swap loaded: the swapped judge asks for OpenAI's key, the others for Gemini's
    assert "OPENAI_API_KEY not set (litellm:openai/gpt-4o: judge tit_llm_g)" in refusal
    assert "GEMINI_API_KEY not set (litellm:gemini/gemini-2.5-pro: describer" in refusal
    assert not (tmp_path / "runs").exists()
