"""What the shipped commands and recipes do to a checkout: no two commands that serve default
to one port, and every recipe at the top of a shipped config writes only into paths git
ignores (a recipe that wrote `data/` into the checkout left it dirty and broke a test)."""

from __future__ import annotations

import ast
import re
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
#: the commands a user runs that serve on a port: titjudge's own and the shipped scripts'
COMMAND_SOURCES = [
    *sorted((REPO / "src" / "titjudge" / "cli").glob("*.py")),
    *sorted((REPO / "benchmarks").glob("*.py")),
]
#: a recipe line in a config's header comment, indented: `#   titjudge ...`, `#   python ...`
RECIPE = re.compile(r"^#\s{2,}((?:titjudge|python3?) .*?)\s*(?:#.*)?$")


def port_defaults() -> dict[str, int]:
    """Every `add_argument("--port", ..., default=N)` (or the CLI's `arg("--port", ...)`,
    `cli.common.arg`, or `web_args(N)`, `cli.common.web_args`) of a shipped command, by
    file."""
    found = {}
    for path in COMMAND_SOURCES:
        for node in ast.walk(ast.parse(path.read_text())):
            if not (
                isinstance(node, ast.Call)
                and (
                    getattr(node.func, "attr", "") == "add_argument"
                    or getattr(node.func, "id", "") == "arg"
                )
            ):
                if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "web_args":
                    (port,) = node.args
                    assert isinstance(port, ast.Constant), f"{path}: web_args(a constant)"
                    found[path.relative_to(REPO).as_posix()] = port.value
                continue
            flags = [a.value for a in node.args if isinstance(a, ast.Constant)]
            default = next((k.value for k in node.keywords if k.arg == "default"), None)
            if "--port" in flags and isinstance(default, ast.Constant) and default.value:
                found[path.relative_to(REPO).as_posix()] = default.value
    return found


def test_no_two_shipped_commands_default_to_one_port():
    ports = port_defaults()
    assert "src/titjudge/cli/annotate.py" in ports and "benchmarks/ablation_offline.py" in ports
    assert ports["src/titjudge/cli/view.py"] == 8767
    assert len(set(ports.values())) == len(ports), ports


def test_the_offline_config_points_at_its_servers_default_port():
    port = port_defaults()["benchmarks/ablation_offline.py"]
    text = (REPO / "configs" / "ablation-offline.yaml").read_text()
    bases = set(re.findall(r"api_base: \"(http://127\.0\.0\.1:\d+/v1)\"", text))
    assert bases == {f"http://127.0.0.1:{port}/v1"}
    assert f"serve --port {port} " in text


def written_paths(config: Path) -> list[str]:
    """What a config's recipe and its run write: each recipe command's `--out`, and the
    config's own `run.out` and `run.cache_dir`."""
    paths = []
    for line in config.read_text().splitlines():
        found = RECIPE.match(line)
        if found is None:
            continue
        words = shlex.split(found.group(1).rstrip("&").strip())
        paths += [words[i + 1] for i, word in enumerate(words[:-1]) if word == "--out"]
    run = (yaml.safe_load(config.read_text()) or {}).get("run") or {}
    paths += [str(run[key]) for key in ("out", "cache_dir") if key in run]
    return paths


def test_every_shipped_recipe_writes_only_into_ignored_paths():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("needs a git checkout to ask git what it ignores")
    configs = sorted((REPO / "configs").glob("*.yaml"))
    written = {config.name: written_paths(config) for config in configs}
    assert "data/synth" not in str(written)  # the offline recipe's old folder
    assert any(".titjudge/offline/synth" in p for p in written["ablation-offline.yaml"])
    for name, paths in written.items():
        assert paths, name  # every shipped config writes its runs somewhere
        for path in paths:
            ignored = subprocess.run(
                ["git", "check-ignore", "-q", "--no-index", path.rstrip("/") + "/x"],
                cwd=REPO,
                check=False,
            )
            assert ignored.returncode == 0, f"{name}: {path} is not ignored by git"
