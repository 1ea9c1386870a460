"""Shared by the fault suite (tests/faults is on sys.path)."""

import json
from pathlib import Path

import builders


def descriptions(data: Path) -> dict[str, str]:
    rows = [
        json.loads(line)
        for line in (data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["image_sha256"]: row["description"] for row in rows}


def config(data: Path, url: str, tmp: Path, **run: object) -> dict:
    """`builders.run_config` named `faults`: four attempts a call, each within a second,
    backing off at most 0.05 s; 16 items at once unless `run` says otherwise."""
    return builders.run_config(
        data,
        tmp,
        url=url,
        name="faults",
        max_attempts=4,
        model_options={"backoff_max": 0.05, "timeout": 1.0},
        **{"concurrency": 16, **run},
    )
