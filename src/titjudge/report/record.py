"""One typed record of a run's results: what metrics.json holds and every view reads.

`RunRecord` is written once, by `write_record` (metrics.json, atomically, into the run's
staging dir), from the dict `metrics.summary.evaluate` computed (each number once) and each
variant's provenance. Everything that shows a number reads it back with `load_record` /
`load_run`: the run's tables, `titjudge metrics RUN`, `titjudge audit` (terminal, HTML,
`--json`), the ablation tables and `titjudge.load_run`. Nothing recomputes a metric.

Format (`version` 2): the variants under their own key, `variants: {name: {...}}`, so no
variant name meets a run-level key; each variant's metrics (pairwise_accuracy, n_pairs,
n_correct, metric_tie_rate, p_value, srcc, krcc, ndcg, ...; see `metrics.summary`) and its
`provenance`: judge kind, model asked for, models that answered (the calls' `answered_by`),
template name and sha256, thinking and sampling settings, fallback judge. Run-level:
thresholds, leaderboard, comparisons, settings, notes. A format-1 file (variants beside the
run-level keys, no provenance; written before this record) is read with its variants moved
under `variants` and no provenance. A pairwise judge's per-pair verdicts (each order's
choice and rationale) stay in pairs_<judge>.jsonl; `load_run` attaches them (`verdicts`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from titjudge.errors import DataError
from titjudge.files import atomic_write, iter_jsonl, read_json_object
from titjudge.records import ItemResult

#: the format `write_record` writes (`metrics.summary.METRICS_VERSION`)
RECORD_VERSION = 2
#: format-1 metrics.json's run-level keys (the variants were every other key)
_V1_RUN_KEYS = ("thresholds", "leaderboard", "comparisons", "settings", "notes")
#: judge config keys that are sampling settings
_SAMPLING_KEYS = (
    "temperature",
    "max_tokens",
    "repeats",
    "score_mode",
    "scale",
    "top_logprobs",
)


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


class VariantRecord(BaseModel):
    """One variant's metrics (the named fields: every tabled metric of `metrics.catalog` with
    the counts it stands on, tested against it; and every other field `evaluate` gives) and
    its provenance."""

    model_config = ConfigDict(extra="allow")

    pairwise_accuracy: float | None = None
    n_pairs: int = 0
    n_correct: int = 0
    metric_tie_rate: float | None = None
    n_metric_ties: int = 0
    p_value: float | None = None
    srcc: float | None = None
    n_prompts: int = 0
    krcc: float | None = None
    ndcg: float | None = None
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
    tie_calibrated_accuracy: float | None = None
    tie_epsilon: float | None = None
    #: per metric with an interval (`metrics.catalog`), its [low, high] (None: none drawn)
    ci: dict[str, list[float] | None] = Field(default_factory=dict)
    #: score rows; scored (ok + fallback); failed; fallback
    n_items: int = 0
    n_scored: int = 0
    n_failed: int = 0
    n_fallback: int = 0

    def get(self, key: str, default: Any = None) -> Any:
        """A field by name, declared or extra (`ci`, `thresholds`, `leaderboard_srcc`, ...)."""
        if key in type(self).model_fields:
            return getattr(self, key)
        return (self.model_extra or {}).get(key, default)


class Thresholds(BaseModel):
    """Correct pairs (k) and accuracy (k/n) needed on `n_pairs` pairs to beat chance, at 95%
    and 99.9%, with each k's exact one-sided p (`metrics.significance.Thresholds`, as
    written); an older file's missing values are None."""

    n_pairs: int = 0
    mean: float | None = None
    sd: float | None = None
    k_95: int | None = None
    acc_95: float | None = None
    p_95: float | None = None
    k_999: int | None = None
    acc_999: float | None = None
    p_999: float | None = None


class Standing(BaseModel):
    """One T2I model's place: its mean per-prompt rank, its position, the prompts behind it."""

    average_rank: float | None = None
    rank: float | None = None
    n_prompts: int = 0


class RankerStandings(BaseModel):
    """One variant's model ranking and its SRCC with the human one."""

    srcc: float | None = None
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
    p_value: float | None = None
    accuracy_a: float | None = None
    accuracy_b: float | None = None


class Settings(BaseModel):
    """How the metrics were computed (the defaults are `metrics.summary.evaluate`'s)."""

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


class OrderVerdict(BaseModel):
    """One presentation order of a pair as the pairwise judge answered it."""

    first: str
    second: str
    choice: Literal["first", "second", "tie"] | None = None
    rationale: str | None = None
    error: str | None = None
    answered_by: list[str] = Field(default_factory=list)


class PairVerdict(BaseModel):
    """A pairwise judge's verdict on one human pair: `a`, `b`, `tie` (the orders disagreed
    or both tied), None (an order failed); both orders with their rationales."""

    prompt_id: str
    item_a: str
    item_b: str
    human: Literal["a", "b", "tie"] | None = None
    verdict: Literal["a", "b", "tie"] | None = None
    orders: list[OrderVerdict]

    @property
    def orders_agree(self) -> bool | None:
        """Whether both orders picked the same image (or both tied); None if one failed."""
        one, two = (_picked(o) for o in self.orders)
        return None if one is None or two is None else one == two

    @property
    def pair_id(self) -> str:
        return f"{self.item_a}|{self.item_b}"


def _picked(order: OrderVerdict) -> str | None:
    if order.choice is None:
        return None
    return {"first": order.first, "second": order.second, "tie": "tie"}[order.choice]


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
    #: filled by `load_run`, never written to metrics.json
    run_dir: Path | None = Field(default=None, exclude=True)
    verdicts: dict[str, list[PairVerdict]] = Field(default_factory=dict, exclude=True)

    def metrics_json(self) -> dict[str, Any]:
        """The dict metrics.json holds (and `metrics --json`, `RunOutcome.metrics` give)."""
        return self.model_dump(mode="json")


#: a RunRecord subclass a reader asks for (`load_run(path, record_type)`)
R = TypeVar("R", bound=RunRecord)


def answered_models(results: Iterable[ItemResult]) -> dict[str, list[str]]:
    """Per variant, the models that answered its calls (the items' outcomes; a pairwise
    judge's win-rate outcomes carry its orders' models)."""
    found: dict[str, list[str]] = {}
    for result in results:
        for outcome in result.outcomes:
            models = found.setdefault(outcome.variant, [])
            models.extend(m for m in outcome.answered_by if m not in models)
    return found


def variant_provenance(
    judge_configs: Sequence[Mapping[str, Any]],
    judge_records: Sequence[Mapping[str, Any]],
    answered: Mapping[str, Iterable[str]],
) -> dict[str, Provenance]:
    """Each judge's provenance from its config entry, the run's record of the built judge
    (template name and hash) and the models that answered its calls."""
    built = {str(r.get("name")): r for r in judge_records}
    found = {}
    for judge in judge_configs:
        name = str(judge.get("name"))
        record = built.get(name, {})
        template = record.get("template")
        template = template if isinstance(template, Mapping) else {}
        thinking = judge.get("thinking")
        found[name] = Provenance(
            kind=judge.get("kind"),
            model=judge.get("model") or record.get("model"),
            answered_by=sorted(set(answered.get(name, ()))),
            template=template.get("name"),
            template_sha256=template.get("sha256"),
            thinking=dict(thinking) if isinstance(thinking, Mapping) else None,
            sampling={k: judge[k] for k in _SAMPLING_KEYS if judge.get(k) is not None},
            fallback=judge.get("fallback"),
        )
    return found


def build_record(
    metrics: Mapping[str, Any],
    provenances: Mapping[str, Provenance] | None = None,
    describer: Mapping[str, Any] | None = None,
) -> RunRecord:
    """The record of `metrics` (`metrics.summary.evaluate`'s dict) with each variant's
    provenance; a DataError names what does not fit the format."""
    from titjudge.metrics.summary import jsonable

    provenances = provenances or {}
    doc = dict(jsonable(dict(metrics)))
    try:
        record = RunRecord.model_validate(
            {**doc, "describer": dict(describer) if describer else None}
        )
    except ValidationError as error:
        raise DataError(f"metrics do not fit the run record: {error.errors()[0]['msg']}") from None
    for name, variant in record.variants.items():
        if name in provenances:
            variant.provenance = provenances[name]
    return record


def write_record(out: Path, record: RunRecord) -> Path:
    """metrics.json: the one place a run's numbers are written."""
    from titjudge.metrics.summary import to_json

    path = out / "metrics.json"
    atomic_write(path, to_json(record.metrics_json()) + "\n")
    return path


def parse_record(
    doc: Mapping[str, Any],
    where: str,
    record_type: type[R] = RunRecord,  # type: ignore[assignment]
) -> R:
    """A metrics.json object as a record; a format-1 file is moved into format 2."""
    version = doc.get("version")
    if version is None and "variants" not in doc:  # format 1
        doc = {
            **{k: doc[k] for k in _V1_RUN_KEYS if k in doc},
            "version": 1,
            "variants": {k: v for k, v in doc.items() if k not in _V1_RUN_KEYS},
        }
    elif not isinstance(version, int) or version > RECORD_VERSION:
        raise DataError(
            f"{where}: metrics format {version!r} is not one this titjudge reads "
            f"(up to {RECORD_VERSION}); upgrade titjudge"
        )
    try:
        return record_type.model_validate(doc)
    except ValidationError as error:
        first = error.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        raise DataError(f"{where}: not a run record ({loc}: {first['msg']})") from None


def load_record(run_dir: Path, record_type: type[RunRecord] = RunRecord) -> RunRecord | None:
    """The run's metrics.json as a record; None when the run wrote none (no human pairs)."""
    path = run_dir / "metrics.json"
    if not path.is_file():
        return None
    return parse_record(read_json_object(path, "metrics file"), str(path), record_type)


def load_verdicts(path: Path) -> list[PairVerdict]:
    """A pairs_<judge>.jsonl file as typed verdicts; a bad line is one DataError."""
    found = []
    for number, obj in iter_jsonl(path, "pairwise verdicts file"):
        try:
            found.append(PairVerdict.model_validate(obj))
        except ValidationError as error:
            first = error.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise DataError(f"{path}:{number}: {loc}: {first['msg']}") from None
    return found


@overload
def load_run(path: str | Path) -> RunRecord: ...
@overload
def load_run(path: str | Path, record_type: type[R]) -> R: ...
def load_run(path: str | Path, record_type: type[RunRecord] = RunRecord) -> RunRecord:
    """The record of a run dir (or of a `<run.out>/<name>` folder's latest run), with each
    pairwise judge's verdicts attached. A run without human pairs has no metrics: its
    record has no variants. Problems are one-line DataErrors. `record_type`: a subclass to
    read it as (`report.analysis.record.AnalysedRun` adds the pandas frames)."""
    from titjudge.report.runs import resolve_run

    run_dir = resolve_run(Path(path))
    if not (run_dir / "items.jsonl").is_file():
        raise DataError(f"{run_dir}: not a run dir (no items.jsonl; make one with `titjudge run`)")
    record = load_record(run_dir, record_type) or record_type()
    record.run_dir = run_dir
    for pairs_file in sorted(run_dir.glob("pairs_*.jsonl")):
        name = pairs_file.stem.removeprefix("pairs_")
        record.verdicts[name] = load_verdicts(pairs_file)
    return record
