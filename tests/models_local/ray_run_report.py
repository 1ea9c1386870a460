"""For tests/models_local/test_ray_backend.py: a warm `titjudge run` child (tests/cli_process.py)
that writes, once its run has ended, which heavy modules it holds. Only the standard library is imported here: the child unpickles
`report_after_main` by name, so importing this module must not import torch itself.

The forkserver the child is forked from preloads titjudge's CLI, litellm and LangGraph, never
torch, transformers or ray (checked by the test), so torch in the child's `sys.modules` after
the run can only come from the run."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

#: the file the report is written to, named in the child's environment
REPORT_ENV = "TITJUDGE_TEST_RAY_RUN_REPORT"
HEAVY = ("torch", "transformers")


def loaded(modules: tuple[str, ...] = HEAVY) -> list[str]:
    return sorted(m for m in modules if m in sys.modules)


def report_after_main() -> None:
    """`before` for `run_cli`: wrap `titjudge.cli.main` (which the child calls next) so the
    report is written once it returns."""
    import titjudge.cli as cli

    preloaded = loaded((*HEAVY, "ray"))
    run_main = cli.main

    def main(argv: Any = None) -> int:
        try:
            return run_main(argv)
        finally:
            report = {"preloaded": preloaded, "heavy": loaded()}
            Path(os.environ[REPORT_ENV]).write_text(json.dumps(report))

    cli.main = main
