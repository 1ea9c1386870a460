"""Write a run directory (docs/method.md, "Files"). Every file is written atomically
(`titjudge.files.atomic_write`), into the staging dir that `report.runs` moves into place
once the run is complete.

- config.yaml: the resolved config plus what it resolved to (model facts, template
  hashes, package versions); never an API key.
- items.jsonl: one line per (item, variant): description, score, rationale, raw output,
  status, error, tokens, cost, latency, cache hit.
- scores.csv, metrics.json (when human pairs were given), summary.json (counts, usage
  per role, wall time).
- pairs_<judge>.jsonl for each pairwise judge: one line per judged pair with the human
  winner, the verdict, and both presentation orders (choice, every sample, rationale,
  raw output, error, usage).
"""

from __future__ import annotations

import functools
import platform
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from titjudge.data.scores import write_scores
from titjudge.files import atomic_write, jsonl_text
from titjudge.records.item_line import ItemLine
from titjudge.records.items import ScoreRow
from titjudge.records.pairs import PairVerdict

PACKAGES = (
    "titjudge",
    "litellm",
    "langgraph",
    "pydantic",
    "tenacity",
    "diskcache",
    "scipy",
    "numpy",
    "torch",
    "transformers",
)


@functools.cache
def _installed_versions() -> tuple[tuple[str, str], ...]:
    """Read once per process: installed versions do not change under a running process (a
    grid writes its rows' records several times)."""
    found = [("python", platform.python_version())]
    for name in PACKAGES:
        try:
            found.append((name, version(name)))
        except PackageNotFoundError:
            continue
    return tuple(found)


def package_versions() -> dict[str, str]:
    return dict(_installed_versions())


def write_config(out: Path, config: dict[str, Any], resolved: dict[str, Any]) -> Path:
    """config.yaml: the run's config and what it resolved to (`records.run_config`)."""
    from titjudge.records.run_config import RunConfigFile

    return RunConfigFile.made(config, resolved, package_versions()).write(out)


def write_items(out: Path, lines: Iterable[ItemLine]) -> int:
    """items.jsonl, one line per (item, variant) in the order given (the run record's
    `item_lines`); how many lines were written."""
    written = [line.model_dump() for line in lines]
    atomic_write(out / "items.jsonl", jsonl_text(written))
    return len(written)


def write_pairs(out: Path, judge: str, verdicts: Iterable[PairVerdict]) -> Path:
    """pairs_<judge>.jsonl: one line per verdict, in the order given (the run record's,
    `PairwiseRun.in_order`)."""
    path = out / f"pairs_{judge}.jsonl"
    atomic_write(path, jsonl_text(verdict.line() for verdict in verdicts))
    return path


def write_score_rows(out: Path, rows: list[ScoreRow]) -> None:
    write_scores(rows, out / "scores.csv")


def write_json(out: Path, name: str, payload: dict[str, Any]) -> None:
    from titjudge.files import to_json

    atomic_write(out / name, to_json(payload) + "\n")
