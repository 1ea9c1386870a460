"""Where a test finds a run: `<run.out>/<name>/<run id>/`, the id read from the LATEST file
(tests/ is on sys.path). Read here directly, not through titjudge's own resolver, so a test of
a run's files does not lean on the code that lays them out."""

from pathlib import Path


def latest_run(name_dir: Path) -> Path:
    """The run dir that `<name_dir>/LATEST` names."""
    return name_dir / (name_dir / "LATEST").read_text(encoding="utf-8").strip()
