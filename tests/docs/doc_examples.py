"""The shell and Python examples of README.md and docs/, and how each is run (issue 48: every
example runs as written, or says why not).

The line before a fenced `bash` or `python` block says what it is:

- `<!-- runs: after titjudge demo -->`: run in a folder where `titjudge demo` ran;
- `<!-- runs: against the provider stand-ins -->`: run in a folder laid out as a checkout
  (the shipped `configs/`, the configs' data at their paths, a `cat.png`), with each
  provider the example names answered by a loopback stand-in and its key set;
- `<!-- needs: <what> -->`: not run here, and why (a GPU, a browser, a network install).

A shell block runs line by line as `titjudge ...` commands (an `export K=V` line sets the
variable); a Python block runs in a fresh interpreter, importing only what it imports
itself, so a name that works only because another module was imported first fails here.
The module docstring of `titjudge` (the Python API page's example) runs like a Python block
against the stand-ins, and every `titjudge.<dotted.name>` a page or a public docstring names
must resolve after `import titjudge` alone.
"""

from __future__ import annotations

import inspect
import os
import re
import shlex
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
README = ROOT / "README.md"
#: a shell or Python example, with the line before it (its marker)
CODE_BLOCK = re.compile(r"(?:^([^\n]*)\n)?```(bash|python)\n(.*?)```", re.M | re.S)
RUNS_AFTER_DEMO = "<!-- runs: after titjudge demo -->"
RUNS_AGAINST_STAND_INS = "<!-- runs: against the provider stand-ins -->"
RUNS = (RUNS_AFTER_DEMO, RUNS_AGAINST_STAND_INS)
NEEDS = re.compile(r"^<!-- needs: \S.* -->$")
#: a name under the package, as pages and docstrings write them
DOTTED = re.compile(r"\btitjudge(?:\.[A-Za-z_]\w*)+")


@dataclass(frozen=True)
class Example:
    page: Path
    marker: str
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}: {self.code.splitlines()[0]}"


def user_pages() -> list[Path]:
    """The pages whose examples a user runs (docs/research/ quotes servers' own code)."""
    return [README, *sorted(DOCS.glob("*.md"))]


def examples() -> list[Example]:
    """Every shell and Python example, in page order (README first)."""
    return [
        Example(page, (m.group(1) or "").strip(), m.group(2), m.group(3))
        for page in user_pages()
        for m in CODE_BLOCK.finditer(page.read_text(encoding="utf-8"))
    ]


def module_example() -> str:
    """The example in `titjudge`'s module docstring (its indented lines), as Python."""
    import titjudge

    doc = inspect.getdoc(titjudge) or ""
    lines = [line for line in doc.splitlines() if line.startswith("    ")]
    return textwrap.dedent("\n".join(lines)) + "\n"


def public_docstrings() -> str:
    """The docstrings the Python API page shows: the module's and each public function's."""
    import titjudge

    found = [inspect.getdoc(titjudge) or ""]
    found += [inspect.getdoc(getattr(titjudge, name)) or "" for name in titjudge.__all__]
    return "\n".join(found)


def dotted_names() -> dict[str, str]:
    """Each `titjudge.<name>...` the user pages and the public docstrings write, and where."""
    found: dict[str, str] = {}
    sources = [(p.relative_to(ROOT).as_posix(), p.read_text("utf-8")) for p in user_pages()]
    for source, text in [*sources, ("titjudge's public docstrings", public_docstrings())]:
        for name in DOTTED.findall(text):
            found.setdefault(name.rstrip("."), source)
    return found


def run_python(code: str, cwd: Path, env: dict[str, str], where: str, *args: str) -> str:
    """Run `code` (with `args` as sys.argv[1:]) in a fresh interpreter in `cwd`; its stdout,
    or an AssertionError with the end of its stderr."""
    done = subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, f"{where}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return done.stdout


def python_env(**extra: str) -> dict[str, str]:
    """This process's environment, titjudge's source first on the path, offline."""
    path = [str(ROOT / "src")]
    if os.environ.get("PYTHONPATH"):
        path.append(os.environ["PYTHONPATH"])
    return {**os.environ, "PYTHONPATH": os.pathsep.join(path), "HF_HUB_OFFLINE": "1", **extra}


def shell_commands(example: Example) -> list[list[str]]:
    """Each line of a shell example as words (comments and blank lines dropped)."""
    found = []
    for line in example.code.splitlines():
        words = shlex.split(line, comments=True)
        if words:
            found.append(words)
    return found


__all__ = [
    "NEEDS",
    "README",
    "ROOT",
    "RUNS",
    "RUNS_AFTER_DEMO",
    "RUNS_AGAINST_STAND_INS",
    "Example",
    "dotted_names",
    "examples",
    "module_example",
    "python_env",
    "run_python",
    "shell_commands",
    "user_pages",
]
