"""Read a run dir into `AuditData`: `config.yaml`, `items.jsonl`, `metrics.json`,
`summary.json`, plus the manifest (prompts) and human pairs the config names. A run
without `data.human_pairs` loads with no pairs: its items are what the audit shows.

Every problem with a file is one DataError naming `file:line`; optional files
(metrics.json, summary.json) may be absent. Headline numbers and provenance come from the
run's record (`report.record.load_run`: metrics.json and the pairwise verdicts), so the
terminal, the page and `--json` repeat, never re-derive, the reported accuracy and CI; the
per-pair outcomes are those the metrics counted (a pairwise judge's from its verdicts, the
fallback rule's mixed pairs as not evaluated).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from titjudge.data.manifest import load_manifest
from titjudge.data.pairs import load_pairs
from titjudge.errors import DataError, where
from titjudge.files import iter_jsonl
from titjudge.metrics.fallback import fallback_only
from titjudge.records.calls import total_cost
from titjudge.records.item_line import ItemLine
from titjudge.records.items import HumanPair
from titjudge.records.pairs import PairVerdict
from titjudge.records.run_config import RunConfigFile
from titjudge.records.run_record import RunRecord
from titjudge.records.summary import RunSummary
from titjudge.report.audit.data import (
    OUTCOMES,
    AuditData,
    AuditItem,
    AuditPair,
    AuditVerdict,
    Outcome,
    VariantSummary,
    classify,
    classify_judged,
    score_scale,
)
from titjudge.report.record import load_run


def load_items(path: Path) -> tuple[dict[str, AuditItem], list[str]]:
    """items.jsonl -> items by id (each variant's line) and the variants in first-seen order."""
    raw: dict[str, dict[str, Any]] = {}
    variants: list[str] = []
    for number, obj in iter_jsonl(path, "run items file"):
        loc = where(path, number)
        line = ItemLine.parse(obj, loc)
        entry = raw.setdefault(
            line.item_id,
            {
                "prompt_id": line.prompt_id,
                "t2i_model": line.t2i_model,
                "image": line.image,
                "results": {},
                "describer_cost": None,
            },
        )
        if line.variant in entry["results"]:
            raise DataError(f"{loc}: item {line.item_id!r} has a second {line.variant!r} line")
        entry["results"][line.variant] = line
        if entry["describer_cost"] is None:
            entry["describer_cost"] = line.describer.cost
        if line.variant not in variants:
            variants.append(line.variant)
    if not raw:
        raise DataError(f"{path}: run items file has no lines")
    items = {
        item_id: AuditItem(
            item_id, e["prompt_id"], e["t2i_model"], e["image"], e["results"], e["describer_cost"]
        )
        for item_id, e in raw.items()
    }
    return items, variants


def _config_path(config: RunConfigFile, key: str, config_file: Path) -> Path | None:
    value = config.data_path(key)
    if value is None:
        return None
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


def summarise_variants(
    variants: Sequence[str],
    items: Mapping[str, AuditItem],
    pairs: Sequence[AuditPair],
    record: RunRecord,
) -> dict[str, VariantSummary]:
    """Per variant: the record's numbers and provenance, and the outcome counts of its pairs."""
    summaries = {}
    for name in variants:
        counts: dict[Outcome, int] = dict.fromkeys(OUTCOMES, 0)
        for audit_pair in pairs:
            counts[audit_pair.verdicts[name].outcome] += 1
        results = [i.results[name] for i in items.values() if name in i.results]
        found = record.variants.get(name)
        ci = found.ci.get("pairwise_accuracy") if found else None
        summaries[name] = VariantSummary(
            name=name,
            pairwise_accuracy=found.pairwise_accuracy if found else None,
            ci=(float(ci[0]), float(ci[1])) if isinstance(ci, list) and len(ci) == 2 else None,
            metric_tie_rate=found.metric_tie_rate if found else None,
            n_failed=sum(r.status == "failed" for r in results),
            n_fallback=sum(r.status == "fallback" for r in results),
            cost=total_cost(r.cost for r in results),
            counts=counts,
            scale=score_scale(
                r.score for r in results if r.score is not None and r.status != "failed"
            ),
            provenance=found.provenance if found else None,
            accuracy_source=found.accuracy_source if found else "scores",
            position=found.pairwise if found else None,
            origin=record.origin(name),
        )
    return summaries


def _verdict(
    pair: HumanPair,
    variant: str,
    item_a: AuditItem,
    item_b: AuditItem,
    judged: Mapping[str, Mapping[frozenset[str], PairVerdict]],
    round_digits: int | None,
    borrowed: frozenset[str],
) -> AuditVerdict:
    """The outcome the variant's metrics counted for this pair (see `report.audit.data`);
    `borrowed`: the variants whose every score is their fallback's (none of their own)."""
    if variant in judged:
        return classify_judged(pair, judged[variant].get(frozenset((pair.item_a, pair.item_b))))
    ra, rb = item_a.results.get(variant), item_b.results.get(variant)
    found = classify(pair, ra, rb, round_digits)
    if variant in borrowed and found.outcome != "human_tie":
        return AuditVerdict("failed", found.score_a, found.score_b, None)
    if (
        found.outcome != "human_tie"
        and ra is not None
        and rb is not None
        and "failed" not in (ra.status, rb.status)
        and ra.status != rb.status
    ):  # the fallback rule: a judged score never meets the fallback judge's scale
        return AuditVerdict("failed", found.score_a, found.score_b, None)
    return found


def load_audit(run_dir: Path) -> AuditData:
    """Read a run dir (or a name dir's latest run, `report.runs.resolve_run`) and the data its
    config names; problems are one-line DataErrors."""
    record = load_run(run_dir)
    assert record.run_dir is not None
    run_dir = record.run_dir
    items_path, config_path = run_dir / "items.jsonl", run_dir / "config.yaml"
    config = RunConfigFile.read(run_dir)
    pairs_path = _config_path(config, "human_pairs", config_path)
    manifest_path = _config_path(config, "manifest", config_path)
    if manifest_path is None:
        raise DataError(f"{config_path}: data.manifest is missing; it holds the prompts")
    items, variants = load_items(items_path)
    prompts = {item.prompt_id: item.prompt for item in load_manifest(manifest_path)}
    round_digits = record.settings.round_digits
    judged = {
        name: {frozenset((v.item_a, v.item_b)): v for v in found}
        for name, found in record.verdicts.items()
    }
    borrowed = frozenset(
        name
        for name in variants
        if fallback_only(i.results[name].status for i in items.values() if name in i.results)
    )
    pairs: list[AuditPair] = []
    outside = 0
    # without human pairs there is nothing to agree with: the audit browses the items
    for pair in load_pairs(pairs_path) if pairs_path is not None else []:
        item_a, item_b = items.get(pair.item_a), items.get(pair.item_b)
        if item_a is None or item_b is None:
            outside += 1  # e.g. a `--limit` run: the pair's images were not judged
            continue
        verdicts = {
            v: _verdict(pair, v, item_a, item_b, judged, round_digits, borrowed) for v in variants
        }
        pairs.append(AuditPair(len(pairs), pair, verdicts))
    if pairs_path is not None and not pairs:
        raise DataError(
            f"{pairs_path}: none of its {outside} pairs has both images in the run {run_dir}"
        )
    summary = record.summary or RunSummary()  # summary.json, read by load_run
    return AuditData(
        run_dir=run_dir,
        name=config.name or run_dir.name,
        variants=variants,
        items=items,
        prompts=prompts,
        pairs=pairs,
        summaries=summarise_variants(variants, items, pairs, record),
        n_pairs_outside=outside,
        usage=summary.usage,
        answered_by=summary.answered_by,
        record=record,
    )
