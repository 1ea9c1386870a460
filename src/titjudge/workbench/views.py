"""What each workbench page shows, as JSON, read only from the runs' typed records.

- `runs_view`: every run with its headline numbers per variant (metrics.json's accuracy, CI,
  pairs, failures, fallback share, the model asked for and the models that answered), cost
  (spent, or unknown where a call was not priced), status;
- `compare_view`: two runs' config changes and paired tests: `titjudge compare`'s numbers;
- `pair_rows` / `pairs_view`: one row per human pair of the chosen runs, each (run, variant)
  column's outcome as the audit counts it (`report.audit.data`: the outcome metrics.json
  counted), filtered and paged here so a page never holds every pair;
- `pair_view`: one pair in full: the prompt, both images, each image's description, and
  every selected run's every variant with its scores, rationales and details side by side;
- `pictures_view`: the Table 4 heatmap (variant x run accuracy), accuracy by prompt length
  with CIs, the leaderboard against the human ranking, and each variant's calibration (its
  score against the human win rate).

A pair is the same pair in every run when it has the same prompt and the same two images
(either order): its key is `prompt_id|item|item`, the items in sorted order, and every view
shows the images in that order.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from titjudge.errors import DataError
from titjudge.records.calls import Usage
from titjudge.records.items import HumanPair
from titjudge.records.provenance import provenance_lines
from titjudge.report.audit.data import AuditData, AuditPair, AuditVerdict, sort_key
from titjudge.workbench.catalog import Catalog, RunRef, pair_key

#: rows per page of the pairs view
PAGE_SIZE = 50
FILTERS = ("all", "all_wrong", "disagree", "changed")
SCORED = frozenset({"agree", "disagree", "metric_tie"})


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


# ------------------------------------------------------------------------------------ runs


def run_entry(run: RunRef) -> dict[str, Any]:
    """One run's line on the runs page (read from its record; a run that cannot be read
    says why, a run in progress says so)."""
    entry: dict[str, Any] = {"id": run.id, "label": run.label, "in_progress": run.in_progress}
    if run.in_progress:
        return {**entry, "live": run.live}
    try:
        record = run.record
    except DataError as exc:
        run.problem = str(exc)
        return {**entry, "problem": run.problem}
    summary = record.summary
    usage = list(summary.usage.values()) if summary is not None else []
    total = sum(usage, Usage())
    variants = []
    for name, found in record.variants.items():
        origin = record.origin(name)
        provenance = found.provenance
        variants.append(
            {
                "name": name,
                "kind": provenance.kind if provenance else None,
                "model": provenance.model if provenance else None,
                "answered_by": provenance.answered_by if provenance else [],
                "fallback_judge": provenance.fallback if provenance else None,
                "template": provenance.template if provenance else None,
                "template_sha256": provenance.template_sha256 if provenance else None,
                "accuracy": _finite(found.pairwise_accuracy),
                "ci": found.ci.get("pairwise_accuracy"),
                "n_pairs": found.n_pairs,
                "n_correct": found.n_correct,
                "srcc": _finite(found.srcc),
                "n_failed": found.n_failed,
                "n_fallback": found.n_fallback,
                "fallback_share": origin.percent() if origin is not None else None,
                "origin_note": origin.note(name) if origin is not None else None,
                "protocol": found.protocol.model_dump(mode="json") if found.protocol else None,
            }
        )
    return {
        **entry,
        "name": (summary.name if summary is not None else "") or run.path.parent.name,
        "run_id": run.path.name,
        "items": summary.items if summary is not None else None,
        "failed_items": summary.failed_items if summary is not None else None,
        "stopped": summary.stopped_models if summary is not None else None,
        "cost": total.cost,
        "cost_text": total.cost_text() if usage else "no calls recorded",
        "dataset": record.dataset.line() if record.dataset is not None else None,
        # a model that answered as another (re-routed, renamed), several, or unrecorded
        "answered_notes": [
            {"text": line, "warning": warning}
            for line, warning in provenance_lines(summary.answered_by if summary else {})
        ],
        "variants": variants,
    }


def runs_view(catalog: Catalog) -> dict[str, Any]:
    """Every run, looked for again first (a run that finished since appears; one in progress
    shows its live record)."""
    catalog.refresh()
    return {"root": str(catalog.root), "runs": [run_entry(run) for run in catalog.runs]}


def compare_view(catalog: Catalog, a: str, b: str) -> dict[str, Any]:
    """`titjudge compare A B`'s document for two runs of the workbench."""
    from titjudge.report.analysis.compare import compare_runs
    from titjudge.report.analysis.run import RunData

    runs = [catalog.readable(a), catalog.readable(b)]
    found = compare_runs([RunData(run.record) for run in runs], labels=[r.id for r in runs])
    return {**found.as_dict(), "labels": {run.id: run.label for run in runs}}


# ----------------------------------------------------------------------------------- pairs


def in_order(catalog: Catalog, run_ids: Sequence[str]) -> list[str]:
    """The chosen runs in the catalog's order (each once; an unknown id is a DataError), so
    the pairs and columns of a choice do not depend on the order it was given in."""
    for run_id in run_ids:
        catalog.get(run_id)
    chosen = set(run_ids)
    return [run.id for run in catalog.runs if run.id in chosen]


@dataclass(frozen=True)
class Column:
    """One (run, variant) of the pairs view."""

    run: RunRef
    variant: str

    @property
    def label(self) -> str:
        return f"{self.run.id}:{self.variant}"

    @property
    def kind(self) -> str | None:
        found = self.run.record.variants.get(self.variant)
        return found.provenance.kind if found is not None and found.provenance else None

    def as_json(self) -> dict[str, Any]:
        return {"label": self.label, "run": self.run.id, "variant": self.variant, "kind": self.kind}


def columns_of(catalog: Catalog, run_ids: Sequence[str], kind: str | None) -> list[Column]:
    """Every variant of the chosen runs, in the catalog's run order (`kind`: only judges of
    that kind)."""
    found = []
    for run_id in in_order(catalog, run_ids):
        run = catalog.readable(run_id)
        for name in run.audit.variants:
            column = Column(run, name)
            if kind is None or column.kind == kind:
                found.append(column)
    return found


def _rationales(audit: AuditData, pair: AuditPair, variant: str) -> str:
    """Every rationale the variant gave on the pair (each image's, a pairwise verdict's)."""
    texts = []
    for item_id in (pair.pair.item_a, pair.pair.item_b):
        line = audit.items[item_id].results.get(variant)
        if line is not None and line.rationale:
            texts.append(line.rationale)
    judged = pair.verdicts[variant].judged
    if judged is not None:
        texts.extend(o.rationale or "" for o in (judged.forward, judged.backward))
    return "\n".join(texts)


def pair_rows(
    catalog: Catalog, run_ids: Sequence[str], kind: str | None = None
) -> list[dict[str, Any]]:
    """One row per human pair of the chosen runs, in the first run's order then the next's:
    its key, prompt, length, models, the human winner (of the key's two images) and each
    column's outcome (None where its run lacks the pair) and rationale text. Built once per
    choice of runs and kind, and kept (the run dirs do not change under the app)."""
    run_ids = in_order(catalog, run_ids)
    cached = catalog.rows.get((tuple(run_ids), kind))
    if cached is not None:
        return cached
    rows = _built_rows(catalog, run_ids, kind)
    if len(catalog.rows) >= 16:  # a few choices kept, the oldest dropped
        catalog.rows.pop(next(iter(catalog.rows)))
    catalog.rows[(tuple(run_ids), kind)] = rows
    return rows


def _built_rows(catalog: Catalog, run_ids: list[str], kind: str | None) -> list[dict[str, Any]]:
    columns = columns_of(catalog, run_ids, kind)
    indexes = {run_id: catalog.readable(run_id).by_key for run_id in run_ids}
    order = list(dict.fromkeys(k for run_id in run_ids for k in indexes[run_id]))
    rows = []
    for key in order:
        first = next(indexes[r][key] for r in run_ids if key in indexes[r])
        run = next(catalog.readable(r) for r in run_ids if key in indexes[r])
        audit = run.audit
        pair = first.pair
        a, b = sorted((pair.item_a, pair.item_b))
        winner = pair.winner if pair.winner == "tie" else ("a" if _winner(pair) == a else "b")
        prompt = audit.prompts.get(pair.prompt_id, "")
        outcomes: list[str | None] = []
        sides: list[str | None] = []
        texts: list[str] = []
        keys: list[list[float] | None] = []
        for column in columns:
            found = indexes[column.run.id].get(key)
            if found is None:
                outcomes.append(None)
                sides.append(None)
                texts.append("")
                keys.append(None)
                continue
            verdict = found.verdicts[column.variant]
            outcomes.append(verdict.outcome)
            summary = column.run.audit.summaries.get(column.variant)
            keys.append(list(sort_key(verdict, summary.scale if summary else 1.0)))
            sides.append(preferred_side(found.pair, verdict, a))
            texts.append(_rationales(column.run.audit, found, column.variant))
        rows.append(
            {
                "key": key,
                "prompt_id": pair.prompt_id,
                "prompt": prompt,
                "words": len(prompt.split()),
                "models": [audit.items[a].t2i_model, audit.items[b].t2i_model],
                "winner": winner,
                "votes": key_votes(pair, a),
                "outcomes": outcomes,
                "sides": sides,
                #: per column, the audit's "most confident mistakes first" key
                "keys": keys,
                "runs": [r for r in run_ids if key in indexes[r]],
                "text": [t.lower() for t in texts],
            }
        )
    return rows


def _winner(pair: HumanPair) -> str:
    return pair.item_a if pair.winner == "a" else pair.item_b


def key_votes(pair: HumanPair, first: str) -> list[int] | None:
    """The pair's human votes in the key's order (for the key's a, for its b, ties), where
    the pairs file keeps them; None otherwise."""
    if pair.votes is None:
        return None
    a, b, tie = pair.votes
    return [a, b, tie] if pair.item_a == first else [b, a, tie]


def preferred_side(pair: HumanPair, verdict: AuditVerdict, first: str) -> str | None:
    """Which of the key's images (`first` is its "a") the variant preferred: "a", "b" or
    "tie"; None where it gave no verdict (a failure). A pairwise judge's from its verdict,
    a pointwise judge's from the margin the audit counted (its sign against the human
    winner, or image a minus image b on a human tie)."""
    if verdict.outcome == "failed":
        return None
    if verdict.judged is not None:
        said = verdict.judged.verdict
        if said is None or said == "tie":
            return said
        chosen = verdict.judged.item_a if said == "a" else verdict.judged.item_b
    else:
        if verdict.margin is None:
            return None
        if verdict.margin == 0:
            return "tie"
        if pair.winner == "tie":
            chosen = pair.item_a if verdict.margin > 0 else pair.item_b
        else:
            other = pair.item_b if pair.winner == "a" else pair.item_a
            chosen = _winner(pair) if verdict.margin > 0 else other
    return "a" if chosen == first else "b"


def disagreement(sides: Sequence[str | None]) -> float:
    """How far the judges' verdicts on a pair part: 1 minus the largest share of one
    verdict (a, b or tie) among those that gave one; 0 where fewer than two did."""
    given = [side for side in sides if side is not None]
    if len(given) < 2:
        return 0.0
    return 1.0 - max(given.count(side) for side in set(given)) / len(given)


@dataclass(frozen=True)
class PairFilter:
    """The pairs view's filters (the bundle's script applies the same, `app.js` matches)."""

    which: str = "all"
    #: for `changed`: the two runs whose outcomes differ, by id
    run_a: str | None = None
    run_b: str | None = None
    min_words: int | None = None
    max_words: int | None = None
    t2i_model: str | None = None
    query: str | None = None
    #: a column label (`r1:judge`): its pairs most confident mistakes first (the audit's
    #: order: margin / the variant's score spread ascending, then human ties, then failures)
    sort: str | None = None

    def check(self) -> None:
        if self.which not in FILTERS:
            raise DataError(f"unknown filter {self.which!r}; filters: {', '.join(FILTERS)}")
        if self.which == "changed" and (self.run_a is None or self.run_b is None):
            raise DataError("filter 'changed' needs two runs, a and b")


def changed_columns(labels: Sequence[str], found: PairFilter) -> list[tuple[int, int]]:
    """For `changed`: each (run A's column, run B's column) of a variant both runs have."""
    position = {label: n for n, label in enumerate(labels)}
    pairs = []
    for label, n in position.items():
        run, _, variant = label.partition(":")
        other = position.get(f"{found.run_b}:{variant}")
        if run == found.run_a and other is not None:
            pairs.append((n, other))
    return pairs


def keeps(row: Mapping[str, Any], found: PairFilter, changed: Sequence[tuple[int, int]]) -> bool:
    """Whether `row` passes `found` (`changed`: `changed_columns`, for that filter)."""
    if found.min_words is not None and row["words"] < found.min_words:
        return False
    if found.max_words is not None and row["words"] > found.max_words:
        return False
    if found.t2i_model is not None and found.t2i_model not in row["models"]:
        return False
    if found.query and not any(found.query.lower() in text for text in row["text"]):
        return False
    outcomes = row["outcomes"]
    scored = [o for o in outcomes if o in SCORED]
    if found.which == "all_wrong":
        return bool(scored) and "agree" not in scored
    if found.which == "disagree":
        return "agree" in scored and any(o != "agree" for o in scored)
    if found.which == "changed":
        return any(
            outcomes[a] in SCORED
            and outcomes[b] in SCORED
            and (outcomes[a] == "agree") != (outcomes[b] == "agree")
            for a, b in changed
        )
    return True


def filtered_rows(
    catalog: Catalog, run_ids: Sequence[str], found: PairFilter, kind: str | None = None
) -> tuple[list[Column], list[dict[str, Any]]]:
    """The chosen runs' columns and every pair row that passes the filter, in order (the
    runs' own, or with `found.sort` a column's most confident mistakes first)."""
    found.check()
    if not run_ids:
        raise DataError("choose at least one run")
    columns = columns_of(catalog, run_ids, kind)
    labels = [c.label for c in columns]
    changed = changed_columns(labels, found)
    rows = [row for row in pair_rows(catalog, run_ids, kind) if keeps(row, found, changed)]
    if found.sort is not None:
        if found.sort not in labels:
            raise DataError(f"no column {found.sort!r} to sort by; columns: {', '.join(labels)}")
        at = labels.index(found.sort)
        # a column's pairs by its margin, most confident mistakes first; pairs its run lacks last
        rows.sort(key=lambda row: row["keys"][at] or [9, 0.0])
    return columns, rows


def pairs_view(
    catalog: Catalog,
    run_ids: Sequence[str],
    found: PairFilter,
    page: int = 1,
    kind: str | None = None,
) -> dict[str, Any]:
    """One page of the chosen runs' pairs that pass the filter, with the total."""
    columns, rows = filtered_rows(catalog, run_ids, found, kind)
    pages = max(1, math.ceil(len(rows) / PAGE_SIZE))
    page = min(max(1, page), pages)
    shown = rows[(page - 1) * PAGE_SIZE : page * PAGE_SIZE]
    return {
        "columns": [c.as_json() for c in columns],
        "total": len(rows),
        "page": page,
        "pages": pages,
        "rows": [{k: v for k, v in row.items() if k not in ("text", "keys")} for row in shown],
        "models": sorted({m for row in rows for m in row["models"]}),
    }


# ------------------------------------------------------------------------------------ pair


def _side(audit: AuditData, item_id: str, variant: str) -> dict[str, Any]:
    line = audit.items[item_id].results.get(variant)
    if line is None:
        return {"status": None}
    return {
        "status": line.status,
        "score": _finite(line.score),
        "rationale": line.rationale,
        "error": line.error,
        "details": line.details,
        "answered_by": line.answered_by,
    }


def _judged(verdict: AuditVerdict) -> list[dict[str, Any]] | None:
    if verdict.judged is None:
        return None
    return [
        {
            "first": o.first,
            "second": o.second,
            "winner": o.winner(),
            "rationale": o.rationale,
            "error": o.error,
        }
        for o in (verdict.judged.forward, verdict.judged.backward)
    ]


def pair_view(catalog: Catalog, key: str, run_ids: Sequence[str]) -> dict[str, Any]:
    """One pair in every chosen run that has it: images in the key's order."""
    runs = []
    head: dict[str, Any] | None = None
    for run_id in run_ids:
        run = catalog.readable(run_id)
        audit = run.audit
        found = run.by_key.get(key)
        if found is None:
            continue
        pair = found.pair
        a, b = sorted((pair.item_a, pair.item_b))
        if head is None:
            head = {
                "key": key,
                "prompt": audit.prompts.get(pair.prompt_id, ""),
                "prompt_id": pair.prompt_id,
                "winner": pair.winner
                if pair.winner == "tie"
                else ("a" if _winner(pair) == a else "b"),
                "votes": key_votes(pair, a),
                "images": [
                    {
                        "item_id": i,
                        "t2i_model": audit.items[i].t2i_model,
                        "url": f"/image/{run.id}/{i}",
                    }
                    for i in (a, b)
                ],
            }
        variants = []
        for name in audit.variants:
            verdict = found.verdicts[name]
            swapped = pair.item_a != a
            summary = audit.summaries.get(name)
            variants.append(
                {
                    "name": name,
                    "kind": summary.provenance.kind if summary and summary.provenance else None,
                    "outcome": verdict.outcome,
                    "margin": _finite(verdict.margin),
                    "sides": [_side(audit, a, name), _side(audit, b, name)],
                    "judged": _judged(verdict),
                    "swapped": swapped,
                }
            )
        descriptions = [_description(audit, i) for i in (a, b)]
        runs.append(
            {"id": run.id, "label": run.label, "descriptions": descriptions, "variants": variants}
        )
    if head is None:
        raise DataError(f"no chosen run has the pair {key!r}")
    return {**head, "runs": runs}


def _description(audit: AuditData, item_id: str) -> str | None:
    for line in audit.items[item_id].results.values():
        if line.description:
            return line.description
    return None


# -------------------------------------------------------------------------------- pictures


def heatmap(catalog: Catalog, run_ids: Sequence[str]) -> dict[str, Any]:
    """Variant x run pairwise accuracy (Table 4's layout), each cell the record's."""
    runs = [catalog.readable(r) for r in run_ids]
    names = list(dict.fromkeys(n for run in runs for n in run.record.variants))
    cells = {
        name: [
            (
                {
                    "accuracy": _finite(run.record.variants[name].pairwise_accuracy),
                    "ci": run.record.variants[name].ci.get("pairwise_accuracy"),
                    "fallback_share": (o.percent() if (o := run.record.origin(name)) else None),
                }
                if name in run.record.variants
                else None
            )
            for run in runs
        ]
        for name in names
    }
    return {
        "runs": [{"id": r.id, "label": r.label} for r in runs],
        "variants": names,
        "cells": cells,
    }


def by_length(run: RunRef) -> dict[str, Any]:
    """Accuracy with its CI per prompt-length bucket (`titjudge breakdown --by length`)."""
    from titjudge.report.analysis.breakdown import length_breakdown
    from titjudge.report.analysis.run import RunData

    return length_breakdown(RunData(run.record)).as_dict()


def calibration(run: RunRef, bins: int = 10) -> dict[str, Any]:
    """Per variant: its scored images in `bins` equal-count bins by score, each bin's mean
    score against its images' human win rate (wins + half the ties over the pairs they are
    in), from the pairs the audit read."""
    audit = run.audit
    wins: dict[str, float] = {}
    games: dict[str, int] = {}
    for found in audit.pairs:
        pair = found.pair
        for item_id in (pair.item_a, pair.item_b):
            games[item_id] = games.get(item_id, 0) + 1
            won = 0.5 if pair.winner == "tie" else float(_winner(pair) == item_id)
            wins[item_id] = wins.get(item_id, 0.0) + won
    found_variants = {}
    for name in audit.variants:
        scored = sorted(
            (line.score, wins[i] / games[i])
            for i, item in audit.items.items()
            if i in games
            and (line := item.results.get(name)) is not None
            and line.status == "ok"
            and line.score is not None
        )
        found_variants[name] = _binned(scored, bins)
    return {"variants": found_variants}


def _binned(points: Sequence[tuple[float, float]], bins: int) -> list[dict[str, float]]:
    if not points:
        return []
    size = max(1, math.ceil(len(points) / bins))
    out = []
    for start in range(0, len(points), size):
        chunk = points[start : start + size]
        out.append(
            {
                "score": sum(p[0] for p in chunk) / len(chunk),
                "win_rate": sum(p[1] for p in chunk) / len(chunk),
                "n": len(chunk),
            }
        )
    return out


def leaderboard(run: RunRef) -> dict[str, Any] | None:
    board = run.record.leaderboard
    return board.model_dump(mode="json") if board is not None else None


def pictures_view(
    catalog: Catalog, run_ids: Sequence[str], focus: str | None = None
) -> dict[str, Any]:
    """The pictures page: the heatmap over the chosen runs, and for the focused run (the
    first by default) accuracy by length, its leaderboard and calibration."""
    if not run_ids:
        raise DataError("choose at least one run")
    run = catalog.readable(focus or run_ids[0])
    return {
        "heatmap": heatmap(catalog, run_ids),
        "focus": {"id": run.id, "label": run.label},
        "by_length": by_length(run),
        "leaderboard": leaderboard(run),
        "calibration": calibration(run),
    }


def split_ids(text: str | None) -> list[str]:
    return [part for part in (text or "").split(",") if part]


def every_id(runs: Iterable[RunRef]) -> list[str]:
    return [run.id for run in runs if not run.in_progress and run.problem is None]


__all__ = [
    "FILTERS",
    "PAGE_SIZE",
    "PairFilter",
    "compare_view",
    "changed_columns",
    "disagreement",
    "filtered_rows",
    "keeps",
    "pair_key",
    "pair_rows",
    "pair_view",
    "pairs_view",
    "pictures_view",
    "preferred_side",
    "runs_view",
]
