"""What a run recorded is read, scored and reported without the judges or models that made it.

`lint-imports` holds the contract statically (`pyproject.toml`); this pins what it buys at
run time: importing the records, the data loaders, the metrics, the reports and the
annotation app loads no module of `titjudge.judges` or `titjudge.models`.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: the modules that read records: every one of them imported in one child process
READERS = (
    "titjudge.records",
    "titjudge.records.repeats",
    "titjudge.records.provenance",
    "titjudge.records.images",
    "titjudge.records.descriptions",
    "titjudge.data.images",
    "titjudge.data.image_digests",
    "titjudge.data.synth.benchmark",
    "titjudge.metrics.evaluate",
    "titjudge.metrics.pairwise_stats",
    "titjudge.metrics.summary",
    "titjudge.report.run_dir",
    "titjudge.report.audit.load",
    "titjudge.report.audit.terminal",
    "titjudge.annotate.session",
    "titjudge.annotate.status",
    "titjudge.annotate.server",
)

_PROBE = """
import importlib, json, sys
for name in json.loads(sys.argv[1]):
    importlib.import_module(name)
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[:2] in (["titjudge", "judges"], ["titjudge", "models"]))))
"""


@pytest.mark.slow
def test_readers_of_records_import_no_judge_and_no_model() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(READERS)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
