"""`titjudge export RUN --format parquet|csv`: the run's three frames (`items`, `pairs`,
`metrics`; `report.analysis.frames`) written as items.<ext>, pairs.<ext>, metrics.<ext>
into a folder (default: the run dir's `frames/`), each atomically."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from titjudge.errors import MissingDependencyError, install_hint
from titjudge.files import atomic_open
from titjudge.report.analysis.record import AnalysedRun

Format = Literal["parquet", "csv"]
FORMATS: tuple[Format, ...] = ("parquet", "csv")
FRAMES = ("items", "pairs", "metrics")


def export_frames(record: AnalysedRun, out: Path, fmt: Format) -> list[Path]:
    """Write the frames of `record` (read by `load_run`) into `out`; their paths."""
    if fmt == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise MissingDependencyError(
                "parquet export needs pyarrow, which is not installed; add it with: "
                f"{install_hint('analysis')} (or use --format csv)"
            ) from None
    written = []
    for name in FRAMES:
        frame = getattr(record, name)
        path = out / f"{name}.{fmt}"
        if fmt == "parquet":
            with atomic_open(path, binary=True) as handle:
                frame.to_parquet(handle, index=False)
        else:
            with atomic_open(path) as handle:
                frame.to_csv(handle, index=False)
        written.append(path)
    return written
