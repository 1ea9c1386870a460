"""Read a run dir into `AuditData`: `config.yaml`, `items.jsonl`, `metrics.json`,
`summary.json`, plus the manifest (prompts) and human pairs the config names.

Every problem with a file is one DataError naming `file:line`; optional files
(metrics.json, summary.json) may be absent. Headline numbers come from metrics.json
where the run wrote them (so the page repeats, never re-derives, the reported accuracy
and CI) and from our own pair counts otherwise.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from titjudge.config import load_yaml
from titjudge.data.manifest import iter_jsonl, load_manifest
from titjudge.data.pairs import load_pairs
from titjudge.data.records import ScoreStatus
from titjudge.errors import ConfigError, DataError, where
from titjudge.report.audit.data import (
    OUTCOMES,
    AuditData,
    AuditItem,
    AuditPair,
    Outcome,
    VariantResult,
    VariantSummary,
    classify,
    score_scale,
)

_STATUSES: tuple[str, ...] = ("ok", "failed", "fallback")


def _opt_str(obj: dict[str, Any], key: str, loc: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, str):
        return value
    raise DataError(f"{loc}: field '{key}' must be a string or null, got {type(value).__name__}")


def _mapping(value: Any) -> dict[str, Any]:
    """`value` when it is a JSON object, else {} (optional sections of optional files)."""
    return value if isinstance(value, dict) else {}


def _opt_num(value: Any) -> float | None:
    """A finite number or None (costs and scores are never NaN in the views)."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def parse_item_line(obj: dict[str, Any], loc: str) -> tuple[str, str, str, str, str, VariantResult]:
    """Validate one items.jsonl line: (item_id, prompt_id, t2i_model, image, variant, result)."""
    ids = []
    for key in ("item_id", "prompt_id", "t2i_model", "variant"):
        value = obj.get(key)
        if not isinstance(value, str) or not value:
            raise DataError(f"{loc}: field '{key}' must be a non-empty string, got {value!r}")
        ids.append(value)
    status = obj.get("status")
    if status not in _STATUSES:
        raise DataError(f"{loc}: status must be one of {', '.join(_STATUSES)}; got {status!r}")
    score = obj.get("score")
    if status == "failed":
        if score is not None:
            raise DataError(f"{loc}: status 'failed' must have score null, got {score!r}")
    elif _opt_num(score) is None:
        raise DataError(f"{loc}: status {status!r} needs a finite number as score, got {score!r}")
    details = obj.get("details") or {}
    if not isinstance(details, dict):
        raise DataError(f"{loc}: field 'details' must be an object, got {type(details).__name__}")
    describer = _mapping(obj.get("describer"))
    result = VariantResult(
        status=cast(ScoreStatus, status),
        score=None if score is None else float(score),
        rationale=_opt_str(obj, "rationale", loc),
        error=_opt_str(obj, "error", loc),
        raw=_opt_str(obj, "raw", loc),
        details=details,
        description=_opt_str(obj, "description", loc),
        describer_error=describer.get("error") if isinstance(describer.get("error"), str) else None,
        cost=_opt_num(obj.get("cost")),
        tokens_in=int(obj.get("tokens_in") or 0),
        tokens_out=int(obj.get("tokens_out") or 0),
        cached=bool(obj.get("cached")),
    )
    image = obj.get("image")
    return ids[0], ids[1], ids[2], image if isinstance(image, str) else "", ids[3], result


def load_items(path: Path) -> tuple[dict[str, AuditItem], list[str]]:
    """items.jsonl -> items by id (results per variant) and the variants in first-seen order."""
    raw: dict[str, dict[str, Any]] = {}
    variants: list[str] = []
    for number, obj in iter_jsonl(path, "run items file"):
        loc = where(path, number)
        item_id, prompt_id, t2i_model, image, variant, result = parse_item_line(obj, loc)
        entry = raw.setdefault(
            item_id,
            {
                "prompt_id": prompt_id,
                "t2i_model": t2i_model,
                "image": image,
                "results": {},
                "describer_cost": None,
            },
        )
        if variant in entry["results"]:
            raise DataError(f"{loc}: item {item_id!r} has a second {variant!r} line")
        entry["results"][variant] = result
        describer = obj.get("describer")
        if isinstance(describer, dict) and entry["describer_cost"] is None:
            entry["describer_cost"] = _opt_num(describer.get("cost"))
        if variant not in variants:
            variants.append(variant)
    if not raw:
        raise DataError(f"{path}: run items file has no lines")
    items = {
        item_id: AuditItem(
            item_id, e["prompt_id"], e["t2i_model"], e["image"], e["results"], e["describer_cost"]
        )
        for item_id, e in raw.items()
    }
    return items, variants


def _config_path(config: dict[str, Any], key: str, config_file: Path) -> Path | None:
    data = config.get("data")
    value = data.get(key) if isinstance(data, dict) else None
    if value is None:
        return None
    if not isinstance(value, str):
        raise ConfigError(f"{config_file}: data.{key} must be a path, got {value!r}")
    path = Path(value)
    if not path.exists():
        hint = (
            "; relative paths are taken from the working directory, so run the audit "
            "from where the run was started"
            if not path.is_absolute()
            else ""
        )
        raise DataError(f"{config_file}: data.{key} {value!r} not found{hint}")
    return path


def _json_or_empty(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not valid JSON ({exc})") from None
    if not isinstance(loaded, dict):
        raise DataError(f"{path}: expected a JSON object")
    return loaded


def summarise_variants(
    variants: Sequence[str],
    items: Mapping[str, AuditItem],
    pairs: Sequence[AuditPair],
    metrics: Mapping[str, Any],
) -> dict[str, VariantSummary]:
    summaries = {}
    for name in variants:
        counts: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        for audit_pair in pairs:
            counts[audit_pair.verdicts[name].outcome] += 1
        results = [i.results[name] for i in items.values() if name in i.results]
        costs = [r.cost for r in results if r.cost is not None]
        m = _mapping(metrics.get(name))
        scored = counts["agree"] + counts["disagree"] + counts["metric_tie"]
        ci = (m.get("ci") or {}).get("pairwise_accuracy")
        summaries[name] = VariantSummary(
            name=name,
            pairwise_accuracy=m.get(
                "pairwise_accuracy", counts["agree"] / scored if scored else None
            ),
            ci=(float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None,
            metric_tie_rate=m.get(
                "metric_tie_rate", counts["metric_tie"] / scored if scored else None
            ),
            n_failed=sum(r.status == "failed" for r in results),
            n_fallback=sum(r.status == "fallback" for r in results),
            cost=sum(costs) if costs else None,
            counts=counts,
            scale=score_scale(
                r.score for r in results if r.score is not None and r.status != "failed"
            ),
        )
    return summaries


def load_audit(run_dir: Path) -> AuditData:
    """Read a run dir and the data its config names; problems are one-line DataErrors."""
    run_dir = Path(run_dir)
    items_path, config_path = run_dir / "items.jsonl", run_dir / "config.yaml"
    if not items_path.is_file():
        raise DataError(f"{run_dir}: not a run dir (no items.jsonl; make one with `titjudge run`)")
    config = load_yaml(config_path)
    pairs_path = _config_path(config, "human_pairs", config_path)
    if pairs_path is None:
        raise DataError(
            f"{config_path}: the run has no data.human_pairs; the audit compares with humans"
        )
    manifest_path = _config_path(config, "manifest", config_path)
    if manifest_path is None:
        raise DataError(f"{config_path}: data.manifest is missing; it holds the prompts")
    items, variants = load_items(items_path)
    prompts = {item.prompt_id: item.prompt for item in load_manifest(manifest_path)}
    metrics = _json_or_empty(run_dir / "metrics.json")
    settings = _mapping(metrics.get("settings"))
    round_digits = (
        settings.get("round_digits") if isinstance(settings.get("round_digits"), int) else None
    )
    pairs: list[AuditPair] = []
    outside = 0
    for pair in load_pairs(pairs_path):
        item_a, item_b = items.get(pair.item_a), items.get(pair.item_b)
        if item_a is None or item_b is None:
            outside += 1  # e.g. a `--limit` run: the pair's images were not judged
            continue
        verdicts = {
            v: classify(pair, item_a.results.get(v), item_b.results.get(v), round_digits)
            for v in variants
        }
        pairs.append(AuditPair(len(pairs), pair, verdicts))
    if not pairs:
        raise DataError(
            f"{pairs_path}: none of its {outside} pairs has both images in the run {run_dir}"
        )
    summary = _json_or_empty(run_dir / "summary.json")
    return AuditData(
        run_dir=run_dir,
        name=str(config.get("name") or run_dir.name),
        variants=variants,
        items=items,
        prompts=prompts,
        pairs=pairs,
        summaries=summarise_variants(variants, items, pairs, metrics),
        n_pairs_outside=outside,
        usage=_mapping(summary.get("usage")),
    )
