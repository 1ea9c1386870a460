"""The annotation queue: the pairs the workbench's current filter shows, sent to people,
the pairs the judges part on most first.

A queue is an annotation session (`annotate.session.Session`, ordered) over the filter's
pairs, its images and prompts from the first chosen run that has each pair, its votes
appended to the one votes file `titjudge view --votes VOTES` names (the only file the
workbench writes). Its order: disagreement (`views.disagreement`: 1 minus the largest share
of one verdict among the chosen runs' judges) highest first, then the pairs more judges gave
a verdict on, then the pairs view's own order. A new queue replaces the last; votes already
in the file for its pairs count as answered, so a queue sent again resumes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from titjudge.annotate.session import Session
from titjudge.data.pair_draw import PairToJudge
from titjudge.errors import DataError
from titjudge.records.items import Item
from titjudge.workbench.catalog import Catalog
from titjudge.workbench.views import PairFilter, disagreement, filtered_rows

#: the most pairs one queue holds (a filter wider than this sends its most disputed)
MAX_QUEUE = 5000


@dataclass
class Queue:
    """A queue as the workbench holds it: its session and what it was built from."""

    session: Session
    runs: list[str]
    #: each pair's disagreement, in the queue's order (pair id -> value)
    disagreement: dict[str, float]
    #: pairs the filter passed beyond MAX_QUEUE (or the limit asked for), left out
    left_out: int

    def summary(self) -> dict[str, Any]:
        session = self.session
        return {
            "pairs": len(session.pairs),
            "prompts": len({p.prompt_id for p in session.pairs}),
            "runs": self.runs,
            "left_out": self.left_out,
            "votes": str(session.votes_path),
            "answers_already": sum(1 for row in session.rows if row.pair_key in session.index),
            "first": [
                {"pair": p.pair_id, "disagreement": self.disagreement[p.pair_id]}
                for p in session.pairs[:10]
            ],
        }


def queued_rows(
    catalog: Catalog, run_ids: list[str], found: PairFilter, kind: str | None
) -> list[dict[str, Any]]:
    """The filter's rows in the queue's order, each with its `disagreement`."""
    _, rows = filtered_rows(catalog, run_ids, found, kind)
    scored = [
        (disagreement(row["sides"]), sum(s is not None for s in row["sides"]), n, row)
        for n, row in enumerate(rows)
    ]
    scored.sort(key=lambda entry: (-entry[0], -entry[1], entry[2]))
    return [{**row, "disagreement": value} for value, _, _, row in scored]


def build_queue(
    catalog: Catalog,
    run_ids: list[str],
    found: PairFilter,
    votes: Path,
    kind: str | None = None,
    limit: int | None = None,
) -> Queue:
    """The queue of the filter's pairs (at most `limit`, at most MAX_QUEUE) into `votes`;
    a filter that passes no pair, or a pair whose image is gone, is a DataError."""
    from titjudge.data.manifest import check_images

    cap = min(limit, MAX_QUEUE) if limit is not None else MAX_QUEUE
    if cap < 1:
        raise DataError(f"a queue holds at least one pair, got a limit of {limit}")
    rows = queued_rows(catalog, run_ids, found, kind)
    if not rows:
        raise DataError("the filter passes no pair: nothing to annotate")
    kept = rows[:cap]
    items: dict[str, Item] = {}
    pairs = []
    for row in kept:
        run = catalog.readable(row["runs"][0])
        audit = run.audit
        prompt_id = row["prompt_id"]
        first, second = row["key"][len(prompt_id) + 1 :].split("|", 1)
        for item_id in (first, second):
            if item_id not in items:
                found_item = audit.items[item_id]
                items[item_id] = Item(
                    item_id,
                    prompt_id,
                    audit.prompts.get(prompt_id, ""),
                    Path(found_item.image),
                    found_item.t2i_model,
                )
        pairs.append(PairToJudge(prompt_id, first, second))
    problems = check_images(items.values())
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise DataError(f"{len(problems)} image(s) cannot be shown: {problems[0]}{more}")
    session = Session(list(items.values()), pairs, votes, ordered=True)
    return Queue(
        session,
        run_ids,
        {p.pair_id: row["disagreement"] for p, row in zip(pairs, kept, strict=True)},
        len(rows) - len(kept),
    )


__all__ = ["MAX_QUEUE", "Queue", "build_queue", "queued_rows"]
