"""Shared by the pipeline tests (imported as a module: tests/agents is on sys.path)."""

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


def api_config(
    data: Path, url: str, tmp: Path, judges: list[dict] | None = None, **run: object
) -> dict:
    """Describer and LLM judge through litellm against the loopback server."""
    return {
        "name": "e2e",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {
            "model": "litellm:openai/vlm",
            "api_base": url,
            "backoff_initial": 0.01,
            "max_attempts": 3,
        },
        "judges": judges
        if judges is not None
        else [
            {
                "name": "tit_llm",
                "kind": "llm",
                "model": "litellm:openai/judge",
                "api_base": url,
                "backoff_initial": 0.01,
                "max_attempts": 3,
            },
            {"name": "lexical", "kind": "lexical"},
        ],
        "run": {"cache_dir": str(tmp / "cache"), "out": str(tmp / "runs"), "concurrency": 8, **run},
    }
