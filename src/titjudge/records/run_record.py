"""The typed record of a run's results: the types of what metrics.json holds and every view
reads (`report.record` writes, parses and loads it; see there for the format). They sit with
the other records of a run, below every stage, so a grid's cells (`records.CellResult`) hold
a variant's record as typed as the run's own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from titjudge.records.item_line import ItemLine, read_item_lines
from titjudge.records.metric_values import Num, PositionBias
from titjudge.records.origins import StatusCounts, VariantOrigin
from titjudge.records.pairs import PairVerdict
from titjudge.records.public_set import PublicSet
from titjudge.records.run_files import RunFiles
from titjudge.records.summary import RunSummary

#: the format of metrics.json (`report.record.write_record`): 2 puts the variants under
#: their own key; 1 (before) mixed them with the run-level keys, so a judge config still
#: refuses those as names (`records.names.RESERVED_NAMES`) and a format-1 file is never
#: ambiguous
RECORD_VERSION = 2


class Provenance(BaseModel):
    """Where a variant's numbers came from."""

    kind: str | None = None
    #: the model spec the config asked for (None: a judge without a model, e.g. lexical)
    model: str | None = None
    #: the models whose replies gave the variant's calls, as the replies name them
    answered_by: list[str] = Field(default_factory=list)
    template: str | None = None
    template_sha256: str | None = None
    thinking: dict[str, Any] | None = None
    sampling: dict[str, Any] = Field(default_factory=dict)
    #: the judge that scored this variant's failed items (its own scale: see metrics.fallback)
    fallback: str | None = None


class Spread(BaseModel):
    """One metric across a repeated judge's N samples (`metrics.summary.metrics_record`): mean, std
    (n-1; 0 for one value), min and max over the samples where it is defined, and every
    sample's value (None where undefined)."""

    mean: float
    std: float
    min: float
    max: float
    values: list[Num]


class RepeatSpreads(BaseModel):
    """A repeated judge's metrics computed with each sample's scores alone: `n` samples and,
    per metric the catalog aggregates over repeats (`metrics.catalog.repeat_metrics`), its
    `Spread` (None where no sample defines it), under the metric's name."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, Spread | None] = Field(init=False)  # type: ignore[assignment]

    n: int

    def spread(self, metric: str) -> Spread | None:
        return (self.model_extra or {}).get(metric)


#: VariantRecord fields metrics.json holds only where they apply (a key of their own when
#: set, absent otherwise, as before they were declared)
_WHERE_THEY_APPLY = (
    "leaderboard_srcc",
    "n_pairs_mixed_source",
    "n_fallback_unranked",
    "pairwise",
    "repeats",
)


class ProtocolScore(BaseModel):
    """A public set's own number for one variant, as the set's paper computes it
    (`metrics.protocols`): `value` the headline, `values` the numbers reported beside it."""

    #: "inversion" (HPSv2), "tie-aware" (PickScore), "ratings" (SRCC vs the mean opinion score)
    measure: str
    value: Num = None
    #: what the value is over (`unit`: prompts, pairs or images) and how many were left out
    n: int = 0
    unit: str = ""
    skipped: int = 0
    values: dict[str, Num] = Field(default_factory=dict)


class VariantRecord(BaseModel):
    """One variant's metrics and its provenance. Every field `metrics.summary.metrics_record`
    gives is declared here; a metric registered in the catalog (`metrics.catalog.register`)
    is an extra field under its own name, as the catalog declares it (`get` reads both)."""

    model_config = ConfigDict(extra="allow")

    pairwise_accuracy: Num = None
    n_pairs: int = 0
    n_correct: int = 0
    metric_tie_rate: Num = None
    n_metric_ties: int = 0
    p_value: Num = None
    srcc: Num = None
    n_prompts: int = 0
    krcc: Num = None
    ndcg: Num = None
    n_prompts_ndcg: int = 0
    #: "scores" (score differences) or "verdicts" (a pairwise judge's verdicts)
    accuracy_source: str = "scores"
    provenance: Provenance | None = None
    #: pairs left out because a side failed or was unscored; human ties (excluded)
    n_pairs_skipped: int = 0
    n_human_ties: int = 0
    #: the chance thresholds for this variant's own n_pairs
    thresholds: Thresholds | None = None
    n_prompts_skipped: int = 0
    n_prompts_skipped_ndcg: int = 0
    tie_calibrated_accuracy: Num = None
    tie_epsilon: Num = None
    #: on data imported from a public set whose papers publish another number than the
    #: pairwise accuracy: that number (dataset.json's `measure`)
    protocol: ProtocolScore | None = None
    #: per metric with an interval (`metrics.catalog`), its [low, high] (None: none drawn)
    ci: dict[str, list[float] | None] = Field(default_factory=dict)
    #: score rows; scored (ok + fallback); failed; fallback
    n_items: int = 0
    n_scored: int = 0
    n_failed: int = 0
    n_fallback: int = 0
    #: with a manifest: the SRCC of this variant's T2I-model ranking with the human one
    leaderboard_srcc: Num = None
    #: a variant with a fallback judge: pairs whose two sides came from different judges
    #: (left out of accuracy) and fallback-scored items left out of its rankings
    n_pairs_mixed_source: int | None = None
    n_fallback_unranked: int | None = None
    #: a pairwise judge's position bias and order agreement (`metrics.pairwise_stats`)
    pairwise: PositionBias | None = None
    #: a repeated judge's metrics per sample (`repeats: N`)
    repeats: RepeatSpreads | None = None

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        found: dict[str, Any] = handler(self)
        unset = [k for k in _WHERE_THEY_APPLY if k not in self.model_fields_set]
        return {k: v for k, v in found.items() if k not in unset}

    def get(self, key: str, default: Any = None) -> Any:
        """A field by name, declared or registered (`srcc`, `ci`, a catalog metric, ...)."""
        if key in type(self).model_fields:
            return getattr(self, key)
        return (self.model_extra or {}).get(key, default)


class Thresholds(BaseModel):
    """Correct pairs (k) and accuracy (k/n) needed on `n_pairs` pairs to beat chance, at 95%
    and 99.9% (`metrics.significance.significance_thresholds` computes them).

    `mean` and `sd` are the normal approximation's; `p_95` / `p_999` are the exact binomial
    P(X >= k), the real one-sided level of each threshold. Every k, accuracy and p is None
    when there are no pairs; a k above n_pairs (very few pairs) cannot be reached, and its p
    is None. An older metrics.json's missing values are None too."""

    n_pairs: int = 0
    mean: Num = None
    sd: Num = None
    k_95: int | None = None
    acc_95: Num = None
    p_95: Num = None
    k_999: int | None = None
    acc_999: Num = None
    p_999: Num = None


class Standing(BaseModel):
    """One T2I model's place: its mean per-prompt rank, its position, the prompts behind it."""

    average_rank: Num = None
    rank: Num = None
    n_prompts: int = 0


class RankerStandings(BaseModel):
    """One variant's model ranking and its SRCC with the human one."""

    srcc: Num = None
    models: dict[str, Standing] = Field(default_factory=dict)


class Leaderboard(BaseModel):
    """The T2I model leaderboard: every model's standing by humans and by each variant."""

    models: list[str] = Field(default_factory=list)
    human: dict[str, Standing] = Field(default_factory=dict)
    variants: dict[str, RankerStandings] = Field(default_factory=dict)


class Comparison(BaseModel):
    """Two variants on the pairs both were counted on: the exact McNemar table and p."""

    variant_a: str
    variant_b: str
    n_pairs: int
    both_correct: int
    a_only: int
    b_only: int
    both_wrong: int
    p_value: Num = None
    accuracy_a: Num = None
    accuracy_b: Num = None


class Settings(BaseModel):
    """How the metrics were computed (the defaults are `metrics.summary.metrics_record`'s)."""

    model_config = ConfigDict(extra="allow")

    bootstrap: int = 1000
    bootstrap_unit: str = "prompt"
    confidence: float = 0.95
    seed: int = 0
    gain: str = "linear"
    top_k: int | None = None
    round_digits: int | None = None
    n_prompts: int = 0
    n_human_pairs: int = 0
    n_human_ties: int = 0


class RunRecord(BaseModel):
    """A run's results: per variant its metrics and provenance; run-level facts apart."""

    version: int = RECORD_VERSION
    variants: dict[str, VariantRecord] = Field(default_factory=dict)
    #: the chance thresholds for the largest n_pairs of any variant
    thresholds: Thresholds | None = None
    #: None without the items' T2I models (a `metrics` call given no manifest)
    leaderboard: Leaderboard | None = None
    comparisons: list[Comparison] = Field(default_factory=list)
    settings: Settings = Field(default_factory=Settings)
    notes: list[str] = Field(default_factory=list)
    #: the describer that wrote every description the judges read (config facts)
    describer: dict[str, Any] | None = None
    #: the public preference set the human data was imported from and the protocol the
    #: numbers follow (its dataset.json); absent from metrics.json when the data is not one
    dataset: PublicSet | None = None
    #: filled by `load_run`, never written to metrics.json
    run_dir: Path | None = Field(default=None, exclude=True)
    verdicts: dict[str, list[PairVerdict]] = Field(default_factory=dict, exclude=True)
    #: each jury's fit (`judges.jury`): jury_<name>.json in the run dir
    fits: dict[str, dict[str, Any]] = Field(default_factory=dict, exclude=True)
    #: the run's counts (summary.json): set by the run that wrote them and by `load_run`,
    #: never written to metrics.json
    summary: RunSummary | None = Field(default=None, exclude=True)
    #: every file the run wrote with its size and sha256 (files.json, written last): set by
    #: the run that wrote them and by `load_run`, which checked them (None: a run dir from
    #: before files.json), never written to metrics.json
    files: RunFiles | None = Field(default=None, exclude=True)
    #: items.jsonl's lines: held by the run that wrote the file from them, read from
    #: `run_dir` when first asked for otherwise (`item_lines`)
    _item_lines: list[ItemLine] | None = PrivateAttr(default=None)

    @property
    def item_lines(self) -> list[ItemLine]:
        """items.jsonl, one typed line per (item, variant) in the run's order: each
        variant's score, status, rationale or error, the describer's part and usage. The
        run writes items.jsonl and scores.csv from these; a record read from a run dir reads
        them from its items.jsonl when first asked for (a bad line is one DataError), a
        record of no run dir (`metrics SCORES`) has none."""
        if self._item_lines is None:
            path = None if self.run_dir is None else self.run_dir / "items.jsonl"
            self._item_lines = read_item_lines(path) if path is not None else []
        return self._item_lines

    @item_lines.setter
    def item_lines(self, lines: list[ItemLine]) -> None:
        self._item_lines = lines

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        found: dict[str, Any] = handler(self)
        if found.get("describer") is None:  # a record of scores alone (`metrics SCORES`)
            found.pop("describer", None)
        return found

    def origin(self, variant: str) -> VariantOrigin | None:
        """Where `variant`'s scores came from (its share from its fallback) and whether its
        model was stopped: the run's summary.json `origins`. A record of scores alone (no
        run: `metrics SCORES`) has them from its own counts, the stop not known; None where
        the run's summary does not record them (a run from an older titjudge: not known)."""
        if self.summary is not None:
            return (self.summary.origins or {}).get(variant)
        found = self.variants.get(variant)
        if found is None or self.run_dir is not None:
            return None
        return VariantOrigin.of(
            StatusCounts(ok=found.n_scored - found.n_fallback, fallback=found.n_fallback),
            fallback=found.provenance.fallback if found.provenance is not None else None,
        )

    def metrics_json(self) -> dict[str, Any]:
        """The dict metrics.json holds (and `metrics --json` gives)."""
        doc = self.model_dump(mode="json")
        if doc.get("dataset") is None:
            doc.pop("dataset", None)
        return doc


__all__ = [
    "RECORD_VERSION",
    "Comparison",
    "Leaderboard",
    "PositionBias",
    "ProtocolScore",
    "Provenance",
    "Num",
    "RankerStandings",
    "RepeatSpreads",
    "RunRecord",
    "Settings",
    "Spread",
    "Standing",
    "Thresholds",
    "VariantRecord",
]
