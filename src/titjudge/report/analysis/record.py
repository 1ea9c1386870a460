"""A run's record with its run dir as pandas DataFrames: what `titjudge.load_run` returns.

`AnalysedRun` is the `RunRecord` every view reads (`report.record`), read the same way, plus
the frames built from it when first asked for (`report.analysis.frames`; pandas comes with
the `analysis` extra and is imported only then), config.yaml and summary.json typed
(`records.summary.RunSummary`, the record's `summary`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import PrivateAttr

from titjudge.records.run_config import RunConfigFile
from titjudge.records.run_record import RunRecord
from titjudge.report.analysis.run import RunData
from titjudge.report.record import load_run

if TYPE_CHECKING:
    import pandas as pd


class AnalysedRun(RunRecord):
    """A run's record and, built on demand, its frames."""

    #: the run dir read for the frames below, loaded when one is first asked for
    _analysis: Any = PrivateAttr(default=None)

    @classmethod
    def of(cls, record: RunRecord) -> AnalysedRun:
        """`record` itself (the same field values, not copies) as an `AnalysedRun`: how
        `titjudge.evaluate` returns the record its run just wrote."""
        found = cls.model_construct(
            record.model_fields_set,
            **{name: getattr(record, name) for name in RunRecord.model_fields},
        )
        found._item_lines = record._item_lines  # the lines the run wrote items.jsonl from
        return found

    def analysis(self) -> RunData:
        """The run dir this record was read from, loaded for analysis (`report.analysis`)."""
        if self._analysis is None:
            self._analysis = RunData(self)
        return self._analysis  # type: ignore[no-any-return]

    @property
    def items(self) -> pd.DataFrame:
        """One row per (item, variant) of items.jsonl, as a pandas DataFrame (needs the
        `analysis` extra; `report.analysis.frames`)."""
        from titjudge.report.analysis.frames import items_frame

        return items_frame(self.analysis())

    @property
    def pairs(self) -> pd.DataFrame:
        """One row per (human pair, variant); `correct` is the pair's part of pairwise
        accuracy as metrics.json counts it (`report.analysis.frames`)."""
        from titjudge.report.analysis.frames import pairs_frame

        return pairs_frame(self.analysis())

    @property
    def metrics(self) -> pd.DataFrame:
        """One row per variant: metrics.json's numbers, CIs and provenance."""
        from titjudge.report.analysis.frames import metrics_frame

        return metrics_frame(self.analysis())

    @property
    def config(self) -> RunConfigFile:
        """The run's config.yaml, typed (`records.run_config.RunConfigFile`: `name`, `data`,
        `judges`, `resolved`, ...; `.doc` is the whole mapping)."""
        return self.analysis().config


def load_analysed_run(path: str | Path) -> AnalysedRun:
    """`report.record.load_run`, read as an `AnalysedRun`."""
    return load_run(path, AnalysedRun)
