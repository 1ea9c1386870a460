"""Shared by the fault suite (tests/faults is on sys.path)."""

import json
from pathlib import Path


def descriptions(data: Path) -> dict[str, str]:
    rows = [
        json.loads(line)
        for line in (data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["image_sha256"]: row["description"] for row in rows}


def config(data: Path, url: str, tmp: Path, **run: object) -> dict:
    model = {
        "api_base": url,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "max_attempts": 4,
        "timeout": 1.0,
    }
    return {
        "name": "faults",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:openai/vlm", **model},
        "judges": [
            {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge", **model},
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {
            "cache_dir": str(tmp / "cache"),
            "out": str(tmp / "runs"),
            "concurrency": 16,
            **run,
        },
    }
