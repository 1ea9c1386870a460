"""Where an annotation stands: each annotator's answers, agreement on shared pairs, the rules.

`titjudge annotate --status VOTES` prints it and the server's status page shows it. Shared
pairs are those with votes (a, b or tie; skips are not votes) from two annotators or more;
Krippendorff's alpha and Fleiss' kappa are computed on them (titjudge.metrics.agreement),
each None ("n/a") where undefined; kappa comes with its observed agreement and its chance
agreement (the base rate it corrects for: with one label on most votes, a high observed
agreement is mostly chance). "Left" is the share of an annotator's a/b votes that
went to the image shown on the left: far from 50% hints at position bias. "Rules" is what
`titjudge data aggregate-votes VOTES --panel-size any` would decide from the votes so far
(the paper's A.11 rules, each pair's own vote count setting its thresholds).
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.data.annotations import AnnotationRow, count_votes, oriented
from titjudge.data.votes import aggregate_votes
from titjudge.metrics.agreement import fleiss_kappa, fleiss_parts, krippendorff_alpha_nominal


@dataclass
class AnnotatorCounts:
    name: str
    a: int = 0
    b: int = 0
    tie: int = 0
    skip: int = 0
    left: int = 0
    sided: int = 0
    seconds: list[float] = field(default_factory=list)

    @property
    def votes(self) -> int:
        return self.a + self.b + self.tie

    @property
    def left_share(self) -> float | None:
        return self.left / self.sided if self.sided else None

    @property
    def median_seconds(self) -> float | None:
        return statistics.median(self.seconds) if self.seconds else None


@dataclass
class Status:
    annotators: list[AnnotatorCounts]
    pairs_voted: int
    shared_pairs: int
    alpha: float | None
    kappa: float | None
    rules: dict[str, int]
    #: kappa's parts: the observed agreement and the chance agreement (its base rate: what
    #: two annotators would agree on by the labels' shares alone); None where kappa is
    observed: float | None = None
    chance: float | None = None


def summarise(rows: Sequence[AnnotationRow]) -> Status:
    """The status of the answers in `rows` (a votes file's rows, in file order)."""
    people: dict[str, AnnotatorCounts] = {}
    units: dict[frozenset[str], list[str]] = defaultdict(list)
    heads: dict[frozenset[str], str] = {}
    for row in rows:
        person = people.setdefault(row.annotator, AnnotatorCounts(row.annotator))
        if row.choice == "skip":
            person.skip += 1
            continue
        setattr(person, row.choice, getattr(person, row.choice) + 1)
        if row.seconds is not None:
            person.seconds.append(row.seconds)
        if row.choice != "tie" and row.shown_left is not None:
            person.sided += 1
            person.left += row.choice == row.shown_left
        head = heads.setdefault(row.pair_key, row.item_a)
        units[row.pair_key].append(oriented(row, head))
    shared = [labels for labels in units.values() if len(labels) >= 2]
    counted = count_votes(enumerate(rows, start=2), Path("votes"), panel_size=None)
    result = aggregate_votes([vote for _, vote in counted.votes])
    rules = Counter(decision.rule for decision in result.decisions)
    parts = fleiss_parts(shared)
    return Status(
        annotators=sorted(people.values(), key=lambda p: p.name),
        pairs_voted=len(units),
        shared_pairs=len(shared),
        alpha=krippendorff_alpha_nominal(shared),
        kappa=fleiss_kappa(shared),
        rules={rule: rules.get(rule, 0) for rule in ("strong", "advantage", "unresolved")},
        observed=parts[0] if parts is not None else None,
        chance=parts[1] if parts is not None else None,
    )


def status_json(status: Status) -> dict[str, Any]:
    return {
        "annotators": [
            {
                "name": p.name,
                "votes": p.votes,
                "a": p.a,
                "b": p.b,
                "tie": p.tie,
                "skip": p.skip,
                "left_share": p.left_share,
                "median_seconds": p.median_seconds,
            }
            for p in status.annotators
        ],
        "pairs_voted": status.pairs_voted,
        "shared_pairs": status.shared_pairs,
        "krippendorff_alpha": status.alpha,
        "fleiss_kappa": status.kappa,
        "observed_agreement": status.observed,
        "chance_agreement": status.chance,
        "rules": status.rules,
    }


def _number(value: float | None, pattern: str) -> str:
    return "n/a" if value is None else format(value, pattern)


def status_lines(status: Status) -> list[str]:
    """The status as plain lines (names as given; the caller makes them terminal-safe)."""
    header = ("annotator", "votes", "a", "b", "tie", "skip", "left", "median s")
    table = [header] + [
        (
            p.name,
            str(p.votes),
            str(p.a),
            str(p.b),
            str(p.tie),
            str(p.skip),
            _number(p.left_share, ".0%"),
            _number(p.median_seconds, ".1f"),
        )
        for p in status.annotators
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip()
        for row in table
    ]
    rules = status.rules
    lines += [
        "",
        f"pairs voted       {status.pairs_voted}",
        f"shared pairs      {status.shared_pairs} (voted by 2 or more annotators)",
        f"Krippendorff's α  {_number(status.alpha, '.3f')} (nominal, on shared pairs)",
        f"Fleiss' κ         {_number(status.kappa, '.3f')} (on shared pairs; observed "
        f"{_number(status.observed, '.3f')}, chance {_number(status.chance, '.3f')})",
        f"paper's rules     strong {rules['strong']}, advantage {rules['advantage']}, "
        f"need experts {rules['unresolved']} (each pair's own votes; aggregate-votes "
        "--panel-size any)",
    ]
    return lines
