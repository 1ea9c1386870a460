"""Write a run directory (docs/method.md, "Files"). Every file is written atomically.

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

import json
import os
import platform
import tempfile
from collections.abc import Iterable
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

import yaml

from titjudge.data.records import ScoreRow
from titjudge.data.scores import write_scores
from titjudge.errors import ConfigError
from titjudge.judges.pairwise import PairwiseRun
from titjudge.records import ItemResult

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


def prepare_out_dir(path: Path) -> Path:
    """Create the run dir and prove it is writable before any model is called."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".write-test-"):
            pass
    except OSError as exc:
        raise ConfigError(f"output dir {path}: not writable ({exc.strerror or exc})") from None
    return path


def atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def package_versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            continue
    return found


def write_config(out: Path, config: dict[str, Any], resolved: dict[str, Any]) -> None:
    doc = {**config, "resolved": {**resolved, "packages": package_versions()}}
    doc = json.loads(json.dumps(doc, default=str))  # plain types only (versions, paths, dtypes)
    atomic_write(out / "config.yaml", yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))


def item_lines(results: Iterable[ItemResult]) -> Iterable[dict[str, Any]]:
    """One line per (item, variant), in the order given (a run's evaluator orders items by id)."""
    for result in results:
        item, described = result.item, result.described
        call = described.call
        describer = {
            "status": "ok" if described.text is not None else "failed",
            "error": described.error if described.text is None else None,
            "tokens_in": call.tokens_in if call else 0,
            "tokens_out": call.tokens_out if call else 0,
            "cost": call.cost if call else None,
            "latency": round(call.latency, 4) if call else 0.0,
            "cached": call.cached if call else False,
            "attempts": call.attempts if call else 0,
        }
        if call is not None and call.finish_reason not in (None, "stop"):
            describer["finish_reason"] = call.finish_reason
        if call is not None and call.thinking_tokens:
            describer["thinking_tokens"] = call.thinking_tokens
        if call is not None and call.truncated:
            describer["truncated"] = True
        for outcome in result.outcomes:
            yield {
                "item_id": item.item_id,
                "prompt_id": item.prompt_id,
                "t2i_model": item.t2i_model,
                "image": str(item.image),
                "variant": outcome.variant,
                "status": outcome.status,
                "score": outcome.score,
                "rationale": outcome.rationale,
                "error": outcome.error,
                "details": outcome.details,
                "raw": outcome.raw,
                "description": described.text,
                "describer": describer,
                "tokens_in": outcome.tokens_in,
                "tokens_out": outcome.tokens_out,
                "cost": outcome.cost,
                "latency": round(outcome.latency, 4),
                "cached": outcome.cached,
            }


def write_items(out: Path, results: Iterable[ItemResult]) -> int:
    lines = [json.dumps(line, ensure_ascii=False) for line in item_lines(results)]
    atomic_write(out / "items.jsonl", "\n".join(lines) + ("\n" if lines else ""))
    return len(lines)


def write_pairs(out: Path, run: PairwiseRun) -> Path:
    """pairs_<judge>.jsonl, in (prompt, item_a, item_b) order."""
    ordered = sorted(run.judgements, key=lambda j: (j.prompt_id, j.item_a, j.item_b))
    lines = [json.dumps(j.record(), ensure_ascii=False) for j in ordered]
    path = out / f"pairs_{run.judge}.jsonl"
    atomic_write(path, "\n".join(lines) + ("\n" if lines else ""))
    return path


def write_score_rows(out: Path, rows: list[ScoreRow]) -> None:
    fd, tmp = tempfile.mkstemp(dir=out, prefix=".scores.csv.")
    os.close(fd)
    try:
        write_scores(rows, tmp)
        os.replace(tmp, out / "scores.csv")
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(out: Path, name: str, payload: dict[str, Any]) -> None:
    from titjudge.metrics.summary import to_json

    atomic_write(out / name, to_json(payload) + "\n")
