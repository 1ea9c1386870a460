"""What a run recorded is read, scored and reported without the judges or models that made it.

`lint-imports` holds the contract statically (`pyproject.toml`); this pins what it buys at
run time: importing the records, the data loaders, the metrics, the reports and the
annotation app loads no module of `titjudge.judges` or `titjudge.models`, and the old import
paths of the record types that moved down still give the very same objects.
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
    "titjudge.report.audit.html",
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


def test_old_import_paths_give_the_moved_records() -> None:
    from titjudge.data import records as data_records
    from titjudge.judges import base, options, pairwise, repeats
    from titjudge.models import base as model_base
    from titjudge.models import images, provenance, replay, results, spec
    from titjudge.records import (
        calls,
        descriptions,
        image_input,
        items,
        names,
        outcomes,
        pairs,
    )
    from titjudge.records import images as low_images
    from titjudge.records import provenance as low_provenance
    from titjudge.records import repeats as low_repeats
    from titjudge.records import spec as low_spec

    moved = [
        (base.JudgeOutcome, outcomes.JudgeOutcome),
        (base.Described, outcomes.Described),
        (pairwise.PairJudgement, pairs.PairJudgement),
        (pairwise.OrderJudgement, pairs.OrderJudgement),
        (pairwise.PairwiseRun, pairs.PairwiseRun),
        (repeats.spread, low_repeats.spread),
        (repeats.repeat_count, low_repeats.repeat_count),
        (repeats.repeat_score_rows, low_repeats.repeat_score_rows),
        (options.RESERVED_NAMES, names.RESERVED_NAMES),
        (results.CallResult, calls.CallResult),
        (results.Usage, calls.Usage),
        (results.sum_costs, calls.sum_costs),
        (results.total_cost, calls.total_cost),
        (model_base.ImageInput, image_input.ImageInput),
        (model_base.TokenLogprobs, calls.TokenLogprobs),
        (images.MAX_SIDE, low_images.MAX_SIDE),
        (images.fit_image, low_images.fit_image),
        (provenance.provenance_lines, low_provenance.provenance_lines),
        (provenance.model_id_of, low_provenance.model_id_of),
        (replay.DescriptionLine, descriptions.DescriptionLine),
        (spec.parse_model_spec, low_spec.parse_model_spec),
        (data_records.Item, items.Item),
        (data_records.ScoreRow, items.ScoreRow),
    ]
    assert all(old is new for old, new in moved)
