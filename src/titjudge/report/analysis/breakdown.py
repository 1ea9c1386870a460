"""Where a judge fails: pairwise accuracy and SRCC per prompt-length bucket, per T2I model
and, for a checklist judge, per element type; each with its pair count and CI.

Every number is `metrics.summary.metrics_record` run on a subset, with the run's recorded
settings (bootstrap over prompts, seed, confidence), so a bucket's accuracy, CI and SRCC
are computed exactly as metrics.json's are:

- `length`: prompts by their length in words, cut at the quartiles of the run's prompt
  lengths (or at given edges: `100,200,300` gives <=100, 101-200, 201-300, >300). Every
  human pair falls in exactly one bucket, so the buckets' pair counts add up to the run's;
  SRCC is the mean over the bucket's prompts.
- `model`: the pairs with that T2I model on either side (a pair counts for both of its
  models). SRCC ranks all of a prompt's images, so it has no per-model value (None); the
  model's standing is in metrics.json's leaderboard.
- `element`: for a checklist judge, each element type scored alone: an item's score is the
  share of its elements of that type that were satisfied (items whose prompt has none of
  that type are unscored), then judged against the human pairs and ranks like any score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from titjudge.errors import DataError
from titjudge.records.items import HumanPair, RankRow, ScoreRow
from titjudge.report.analysis.run import RunData, prompt_words

Dimension = Literal["length", "model", "element"]
DIMENSIONS: tuple[Dimension, ...] = ("length", "model", "element")
#: checklist element types in the order a breakdown lists them
ELEMENT_TYPES = (
    "entity", "attribute", "relation", "setting", "composition", "lighting", "style", "detail",
)  # fmt: skip


@dataclass(frozen=True)
class GroupRow:
    """One variant's numbers on one group of pairs."""

    group: str
    variant: str
    #: human pairs in the group (ties included) and the non-tie pairs the variant was counted on
    n_human_pairs: int
    n_pairs: int
    n_correct: int
    pairwise_accuracy: float | None
    ci: tuple[float, float] | None
    srcc: float | None
    #: prompts the group's pairs come from
    n_prompts: int
    #: the variant's scores on the group's images, and how many of them came from its
    #: fallback judge (its metrics leave those out: `metrics.fallback`)
    n_scored: int = 0
    n_fallback: int = 0
    #: its model was stopped for the run (`run.stop_after`); None: the run did not record it
    model_stopped: bool | None = None

    @property
    def fallback_share(self) -> float | None:
        """n_fallback / n_scored; None when the group has none of its scores."""
        return self.n_fallback / self.n_scored if self.n_scored else None


@dataclass(frozen=True)
class Breakdown:
    """A run's numbers split along one dimension (`length`, `model`, `element`)."""

    dimension: Dimension
    rows: list[GroupRow]
    #: for `length`: the bucket edges in words (upper bounds; the last bucket is open)
    edges: list[int] | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "dimension": self.dimension,
            "edges": self.edges,
            "rows": [{**asdict(row), "fallback_share": row.fallback_share} for row in self.rows],
        }


def parse_edges(text: str) -> list[int]:
    """`100,200,300` -> [100, 200, 300]; a DataError for anything but increasing integers."""
    try:
        edges = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise DataError(
            f"--length-edges {text!r}: expected word counts such as 100,200,300"
        ) from None
    if not edges or any(b <= a for a, b in zip(edges, edges[1:], strict=False)) or edges[0] < 1:
        raise DataError(f"--length-edges {text!r}: expected increasing positive word counts")
    return edges


def quartile_edges(lengths: Sequence[int]) -> list[int]:
    """Upper bounds of the lower three quartile buckets (duplicates dropped)."""
    cuts = np.quantile(np.asarray(lengths, dtype=float), [0.25, 0.5, 0.75])
    edges = sorted({int(np.floor(c)) for c in cuts})
    return [e for e in edges if e < max(lengths)]


def _bucket_label(index: int, edges: Sequence[int]) -> str:
    if index == 0:
        return f"<={edges[0]} words" if edges else "all"
    if index == len(edges):
        return f">{edges[-1]} words"
    return f"{edges[index - 1] + 1}-{edges[index]} words"


def _rows_for(
    run: RunData,
    group: str,
    pairs: Sequence[HumanPair],
    ranks: Sequence[RankRow],
    rows: Sequence[ScoreRow] | None = None,
    only: Sequence[str] | None = None,
) -> list[GroupRow]:
    if not pairs:
        return []
    variants = run.metrics_on(pairs, ranks, rows).variants
    n_prompts = len({p.prompt_id for p in pairs})
    images = {p.item_a for p in pairs} | {p.item_b for p in pairs}
    scored: dict[str, list[ScoreRow]] = {}
    for row in run.rows if rows is None else rows:
        if row.item_id in images and row.status in ("ok", "fallback"):
            scored.setdefault(row.variant, []).append(row)
    found = []
    for name, entry in variants.items():
        if only is not None and name not in only:
            continue
        ci = entry.ci.get("pairwise_accuracy")
        mine = scored.get(name, [])
        origin = run.record.origin(name)
        found.append(
            GroupRow(
                group=group,
                variant=name,
                n_human_pairs=len(pairs),
                n_pairs=entry.n_pairs,
                n_correct=entry.n_correct,
                pairwise_accuracy=entry.pairwise_accuracy,
                ci=(float(ci[0]), float(ci[1])) if ci else None,
                srcc=entry.srcc,
                n_prompts=n_prompts,
                n_scored=len(mine),
                n_fallback=sum(1 for row in mine if row.status == "fallback"),
                model_stopped=origin.stopped if origin is not None else None,
            )
        )
    return found


def length_breakdown(run: RunData, edges: Sequence[int] | None = None) -> Breakdown:
    """Per prompt-length bucket (quartiles of the run's prompt lengths unless `edges`)."""
    human = run.require_pairs()
    words = {pid: prompt_words(text) for pid, text in human.prompts.items()}
    used = sorted({p.prompt_id for p in human.pairs})
    cuts = list(edges) if edges is not None else quartile_edges([words[p] for p in used])
    bucket = {pid: int(np.searchsorted(cuts, words[pid], side="left")) for pid in used}
    rows: list[GroupRow] = []
    for index in range(len(cuts) + 1):
        prompts = {pid for pid, b in bucket.items() if b == index}
        pairs = [p for p in human.pairs if p.prompt_id in prompts]
        ranks = [r for r in human.ranks if r.prompt_id in prompts]
        rows.extend(_rows_for(run, _bucket_label(index, cuts), pairs, ranks))
    return Breakdown("length", rows, cuts)


def model_breakdown(run: RunData) -> Breakdown:
    """Per T2I model: the pairs with that model on either side (SRCC: None, see above)."""
    human = run.require_pairs()
    models = sorted({i.t2i_model for i in human.items.values()})
    rows: list[GroupRow] = []
    for model in models:
        pairs = [
            p
            for p in human.pairs
            if model in (human.items[p.item_a].t2i_model, human.items[p.item_b].t2i_model)
        ]
        rows.extend(_rows_for(run, model, pairs, []))
    return Breakdown("model", rows)


def checklist_variants(run: RunData) -> list[str]:
    """Variants whose items carry checklist element rows (`details.checklist`)."""
    return list(dict.fromkeys(line.variant for line in run.lines if line.details.get("checklist")))


def element_rows(run: RunData, variant: str, kind: str) -> list[ScoreRow]:
    """`variant`'s items scored on element type `kind` alone (share satisfied), else unscored."""
    found = []
    for line in run.lines:
        if line.variant != variant:
            continue
        elements = [
            e
            for e in line.details.get("checklist") or []
            if isinstance(e, dict) and e.get("type") == kind
        ]
        if line.status == "ok" and elements:
            share = sum(bool(e.get("satisfied")) for e in elements) / len(elements)
            found.append(ScoreRow(line.item_id, variant, share, "ok"))
        else:
            found.append(ScoreRow(line.item_id, variant, None, "failed"))
    return found


def element_breakdown(run: RunData) -> Breakdown:
    """Per checklist element type, for each checklist variant of the run."""
    human = run.require_pairs()
    variants = checklist_variants(run)
    if not variants:
        raise DataError(
            f"{run.run_dir}: no checklist judge in this run, so there are no element types to break down"
        )
    rows: list[GroupRow] = []
    for variant in variants:
        for kind in ELEMENT_TYPES:
            scored = element_rows(run, variant, kind)
            if all(r.score is None for r in scored):
                continue
            rows.extend(_rows_for(run, kind, human.pairs, human.ranks, scored, only=[variant]))
    return Breakdown("element", rows)


def breakdown(run: RunData, dimension: Dimension, edges: Sequence[int] | None = None) -> Breakdown:
    if dimension == "length":
        return length_breakdown(run, edges)
    if dimension == "model":
        return model_breakdown(run)
    if dimension == "element":
        return element_breakdown(run)
    raise DataError(f"unknown breakdown {dimension!r}; choose from {', '.join(DIMENSIONS)}")


def parse_dimensions(text: str) -> list[Dimension]:
    """`length,model` -> ['length', 'model']; an unknown name is a DataError."""
    found = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [d for d in found if d not in DIMENSIONS]
    if unknown or not found:
        raise DataError(
            f"--breakdown {text!r}: choose from {', '.join(DIMENSIONS)} (comma-separated)"
        )
    return [next(d for d in DIMENSIONS if d == f) for f in found]
