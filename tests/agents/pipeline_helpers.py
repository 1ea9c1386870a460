"""Shared by the pipeline tests (imported as a module: tests/agents is on sys.path); their
run config is `builders.run_config`."""

import json
from pathlib import Path


def stored_descriptions(data: Path) -> dict[str, str]:
    rows = [
        json.loads(line)
        for line in (data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["image_sha256"]: row["description"] for row in rows}


def items_of(data: Path) -> list[dict]:
    return [
        json.loads(line)
        for line in (data / "manifest.jsonl").read_text().splitlines()
        if line.strip()
    ]
