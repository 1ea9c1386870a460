"""The ablation tests' grid config, on the small synthetic benchmark (`bench` in conftest.py),
and the one plain grid several tests share (`plain_grid`).

Imported by name (`ablation_grids`), never as `conftest`."""

from __future__ import annotations

import asyncio
import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import builders

from titjudge.ablation.config import AblationConfig
from titjudge.ablation.grid import run_ablation_async
from titjudge.config.load import validate_config
from titjudge.records import AblationResult

COLUMNS = ["LMM Score", "Self-Eval", "TIT-Score", "Lexical", "TIT-Score-judge-llm"]
VARIANTS = ["lmm_score", "self_eval", "tit_score", "lexical", "tit_llm"]
N_PROMPTS = 3
N_ITEMS = 9  # 3 prompts x 3 T2I models (`bench`)
FAST = {"backoff_initial": 0.01, "backoff_max": 0.1}


def grid_config(
    bench: Path,
    url: str,
    tmp: Path,
    embedder: str | None = None,
    extra_columns: list[dict[str, Any]] | None = None,
    extra_rows: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Two rows (a sharp and a blurry VLM) and the columns of COLUMNS at the loopback server
    `url`, on `bench` with its ranks: `builders.grid_config`."""
    return builders.grid_config(
        bench,
        tmp,
        ranks=True,
        describers=[
            {
                "name": "sharp",
                "label": "Sharp VLM",
                "model": "litellm:openai/vlm-sharp",
                "api_base": url,
                **FAST,
            },
            {
                "name": "blurry",
                "label": "Blurry VLM",
                "model": "litellm:openai/vlm-blurry",
                "api_base": url,
                **FAST,
            },
            *(extra_rows or []),
        ],
        comparers=[
            {"name": "lmm_score", "kind": "lmm"},
            {"name": "self_eval", "kind": "self_eval"},
            *([{"name": "tit_score", "kind": "embedding", "model": embedder}] if embedder else []),
            {"name": "lexical", "kind": "lexical"},
            {
                "name": "tit_llm",
                "kind": "llm",
                "model": "litellm:openai/judge-llm",
                "api_base": url,
                **FAST,
            },
            *(extra_columns or []),
        ],
    )


def run_grid(raw: dict[str, Any], out: Path | None) -> AblationResult:
    """The grid of `raw` run in this process into `out` exactly (None: a new run dir of the
    config's history, `<run.out>/<name>/<run id>/`)."""
    config = validate_config(raw, AblationConfig, "test grid")
    return asyncio.run(run_ablation_async(config, out=out))


def read_csv(path: Path) -> list[list[str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


#: $ per 1M tokens, input and output, that the plain grid's server bills every answer at
RATE = 10.0


@dataclass(frozen=True)
class PlainGrid:
    """`grid_config(bench, url, tmp)` run once, in process, into `out`: two rows and the
    lmm, self_eval, lexical and llm columns, every call answered by a fresh `GridResponder`."""

    out: Path
    result: AblationResult
    #: how often the grid called titjudge.data.manifest.load_manifest and .pairs.load_pairs
    reads: dict[str, int]
    #: the server's own bill for the whole grid at RATE (doubles.billing), and its requests
    bill: float
    calls: int
