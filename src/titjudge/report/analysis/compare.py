"""Several runs side by side (`titjudge compare`): on the human pairs they share, each
variant's accuracy with its CI, SRCC and KRCC; an exact McNemar test and Cohen's kappa of
the verdicts between every two variants; what changed between the runs' configs.

A pair is shared when every run has it (same prompt, same two images, either order) with
the same human verdict; runs over different pairs are compared on that intersection and
the report says so, with the counts. Every number is `metrics.summary.metrics_record` (accuracy,
CI, SRCC, KRCC: each run on the shared pairs, the ranks of their images, its recorded
settings) or reads `metrics.outcomes` (McNemar, kappa): the outcomes metrics.json counts.
Each variant comes with its origin as its run recorded it (`RunRecord.origin`: its share of
scores from its fallback, whether its model was stopped); one scored only by its fallback has
no number of its own here either.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from itertools import combinations
from typing import TYPE_CHECKING, Any

from titjudge.errors import DataError, did_you_mean
from titjudge.records.items import HumanPair
from titjudge.records.run_record import Comparison
from titjudge.report.analysis.run import RunData

if TYPE_CHECKING:
    from titjudge.metrics.catalog import Metric

#: per-judge config keys that say what judged (models, prompts, thinking, sampling)
_JUDGE_KEYS = (
    "kind", "model", "prompt", "decompose_prompt", "thinking", "temperature", "max_tokens",
    "repeats", "score_mode", "scale", "weights", "fallback", "instruction",
)  # fmt: skip
_DESCRIBER_KEYS = ("model", "prompt", "thinking", "temperature", "max_tokens")


def _pair_key(pair: HumanPair) -> tuple[str, frozenset[str]]:
    return pair.prompt_id, frozenset((pair.item_a, pair.item_b))


def _human_winner(pair: HumanPair) -> str:
    return "tie" if pair.winner == "tie" else pair.item_a if pair.winner == "a" else pair.item_b


def shared_pairs(runs: Sequence[RunData]) -> tuple[list[HumanPair], int]:
    """The first run's pairs that every run has with the same human verdict, and how many
    pairs in the runs' union were left out because their human verdicts differ."""
    winners = [{_pair_key(p): _human_winner(p) for p in run.require_pairs().pairs} for run in runs]
    common = set(winners[0]).intersection(*winners[1:])
    conflicting = {k for k in common if len({w[k] for w in winners}) > 1}
    first = runs[0].human.pairs
    return [p for p in first if _pair_key(p) in common and _pair_key(p) not in conflicting], len(
        conflicting
    )


def _flat(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping):
        for key, inner in value.items():
            _flat(inner, f"{prefix}.{key}", out)
    else:
        out[prefix] = value


def config_facts(run: RunData) -> dict[str, Any]:
    """What judged in a run, flattened: describer and each judge's model, prompt, thinking,
    sampling; template hashes from the record's provenance."""
    config = run.config
    facts: dict[str, Any] = {}
    for key in _DESCRIBER_KEYS:
        if key in config.describer:
            _flat(config.describer[key], f"describer.{key}", facts)
    resolved = config.resolved.describer if config.resolved is not None else None
    if resolved is not None and resolved.template is not None:
        facts["describer.template_sha256"] = resolved.template.sha256
    for judge in config.judges:
        entry = judge.model_dump()
        for key in _JUDGE_KEYS:
            if entry.get(key) is not None:
                _flat(entry[key], f"judges.{judge.name}.{key}", facts)
    for name, variant in run.record.variants.items():
        found = variant.provenance
        if found is not None and found.template_sha256:
            facts[f"judges.{name}.template_sha256"] = found.template_sha256
    return facts


def config_changes(runs: Sequence[RunData], labels: Sequence[str]) -> list[dict[str, Any]]:
    """Each later run against the first: every fact that differs (absent: None)."""
    base = config_facts(runs[0])
    changes = []
    for run, label in zip(runs[1:], labels[1:], strict=True):
        other = config_facts(run)
        for key in sorted(set(base) | set(other)):
            if base.get(key) != other.get(key):
                changes.append(
                    {"run": label, "key": key, "from": base.get(key), "to": other.get(key)}
                )
    return changes


@dataclass(frozen=True)
class RunComparison:
    """`titjudge compare`'s findings (see the module docstring)."""

    runs: list[dict[str, Any]]
    n_shared_pairs: int
    n_shared_non_tie: int
    n_conflicting: int
    variants: list[dict[str, Any]]
    #: each pair of columns' exact McNemar test, typed as the run record types its own
    mcnemar: list[Comparison]
    agreement: list[dict[str, Any]]
    config_changes: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """`compare --json`'s document."""
        found = asdict(self)
        found["mcnemar"] = [test.model_dump(mode="json") for test in self.mcnemar]
        return found


def compared_metrics() -> tuple[Metric, ...]:
    """The metrics a comparison shows per variant: those of the terminal's pairs and rankings
    tables (`metrics.catalog`), a registered one included."""
    from titjudge.metrics.catalog import in_table

    return (*in_table("pairs"), *in_table("rankings"))


def _columns(
    runs: Sequence[RunData], labels: Sequence[str], wanted: Sequence[str] | None
) -> list[tuple[int, str, str]]:
    """(run index, variant, column label) of every variant to compare."""
    unique = len(runs) == 1
    columns = [
        (i, v, v if unique else f"{label}:{v}")
        for i, (run, label) in enumerate(zip(runs, labels, strict=True))
        for v in run.variants
    ]
    if wanted:
        known = {v for _, v, _ in columns} | {c for _, _, c in columns}
        for name in wanted:
            if name not in known:
                raise DataError(
                    f"no variant {name!r} in these runs{did_you_mean(name, known)}; "
                    f"variants: {', '.join(sorted(known))}"
                )
        columns = [c for c in columns if c[1] in wanted or c[2] in wanted]
    return columns


def compare_runs(
    runs: Sequence[RunData],
    labels: Sequence[str] | None = None,
    variants: Sequence[str] | None = None,
) -> RunComparison:
    """Compare the variants of `runs` on their shared pairs (`variants`: only these, by
    name or `run:variant` label)."""
    from titjudge.metrics.compare import mcnemar_from_outcomes
    from titjudge.metrics.kappa import verdict_agreement
    from titjudge.metrics.outcomes import run_outcomes

    labels = list(labels) if labels is not None else [f"r{i + 1}" for i in range(len(runs))]
    pairs, conflicting = shared_pairs(runs)
    if not pairs:
        raise DataError("these runs share no human pair (same prompt, same two images)")
    items = {i for p in pairs for i in (p.item_a, p.item_b)}
    columns = _columns(runs, labels, variants)
    numbers, outcomes = {}, {}
    for index, run in enumerate(runs):
        ranks = [r for r in run.human.ranks if r.item_id in items]
        numbers[index] = run.metrics_on(pairs, ranks).variants
        _, outcomes[index] = run_outcomes(run.rows, pairs, run.record.verdicts, run.round_digits)
    table = []
    for index, variant, label in columns:
        entry = numbers[index].get(variant)
        # where its scores came from, whether its model was stopped (None: not recorded)
        origin = runs[index].record.origin(variant)
        table.append(
            {
                "column": label,
                "run": labels[index],
                "variant": variant,
                "n_pairs": entry.n_pairs if entry else None,
                "n_correct": entry.n_correct if entry else None,
                **{m.name: entry.get(m.name) if entry else None for m in compared_metrics()},
                "ci": entry.ci.get("pairwise_accuracy") if entry else None,
                "origin": origin.model_dump(mode="json") if origin is not None else None,
                "origin_note": origin.note(label) if origin is not None else None,
            }
        )
    tests: list[Comparison] = []
    agreements: list[dict[str, Any]] = []
    for (ia, va, la), (ib, vb, lb) in combinations(columns, 2):
        oa, ob = outcomes[ia].get(va), outcomes[ib].get(vb)
        if oa is None or ob is None:
            continue
        result = mcnemar_from_outcomes(la, oa.outcomes, lb, ob.outcomes)
        tests.append(result)
        agreed = verdict_agreement(la, oa.outcomes, lb, ob.outcomes)
        agreements.append({**asdict(agreed), "agreement": agreed.agreement})
    notes = []
    sizes = [len(run.human.pairs) for run in runs]
    if any(size != len(pairs) for size in sizes):
        notes.append(
            f"the runs have different human pairs ({', '.join(map(str, sizes))}); compared on "
            f"the {len(pairs)} they share"
            + (
                f" ({conflicting} more left out: their human verdicts differ)"
                if conflicting
                else ""
            )
        )
    return RunComparison(
        runs=[
            {
                "label": label,
                "run_dir": str(run.run_dir),
                "name": run.config.name or None,
                "n_pairs": size,
            }
            for label, run, size in zip(labels, runs, sizes, strict=True)
        ],
        n_shared_pairs=len(pairs),
        n_shared_non_tie=sum(p.winner != "tie" for p in pairs),
        n_conflicting=conflicting,
        variants=table,
        mcnemar=tests,
        agreement=agreements,
        config_changes=config_changes(runs, labels),
        notes=notes,
    )
