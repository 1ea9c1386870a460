"""summary.json: read into and written from the run record's `summary`
(`records.summary.RunSummary`, held by `records.run_record.RunRecord.summary`).

The runner writes it once at the end of a run (`write_summary`); `titjudge run`'s closing
lines, every ablation row's lines, `titjudge runs list`, the audit and `titjudge.load_run`
read it back with `load_summary`. A summary.json whose values do not fit is refused with one
line naming the file.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from titjudge.errors import DataError
from titjudge.files import read_json_object
from titjudge.records.summary import RunSummary


def parse_summary(doc: Mapping[str, Any], where: str) -> RunSummary:
    """A summary.json object as a `RunSummary`; a DataError names the first key that does
    not fit."""
    try:
        return RunSummary.model_validate(doc)
    except ValidationError as error:
        first = error.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise DataError(f"{where}: not a run summary ({loc}: {first['msg']})") from None


def load_summary(run_dir: Path) -> RunSummary | None:
    """The run's summary.json as a `RunSummary`; None when it has none (a run that was
    interrupted before writing it, or a folder laid out by hand)."""
    path = run_dir / "summary.json"
    if not path.is_file():
        return None
    return parse_summary(read_json_object(path, "summary file"), str(path))


def write_summary(out: Path, summary: RunSummary) -> None:
    """summary.json: the one place a run's counts are written."""
    from titjudge.report.run_dir import write_json

    write_json(out, "summary.json", summary.summary_json())


__all__ = ["load_summary", "parse_summary", "write_summary"]
