"""What bounds the long-tailed run of benchmark 10, from the server's request log.

The fake server names in each request record the item it is about: the image a describe
call describes, or the image whose description a judge call carries plus the hash of the
judge's PROMPT section. From those, per item in manifest order, its describe and judge
latencies; then

- the chain bound: max(sum of latencies / concurrency, the longest describe + judge chain
  of one item), since no judge call can start before its item's description is back;
- the replay: the schedule a zero-overhead client of titjudge's design keeps on exactly
  these latencies (items taken in manifest order by `workers` workers, `concurrency`
  slots served first come first served, an item's judge call queued when its describe call
  returns, a call that an earlier item already made shared, not repeated);
- the saturated-phase slot utilisation of a schedule (see `saturated_utilisation`), of all
  its calls or of one role's (describer and judge as two models, each with its own slots).
"""

from __future__ import annotations

import hashlib
import heapq
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

#: a request's identity in the log: (image sha256, prompt sha256 or None for describe)
Key = tuple[str, str | None]


@dataclass(frozen=True)
class Chain:
    """One item: its describe call and its judge call, each a key and a latency in seconds."""

    describe: Key
    describe_s: float
    judge: Key
    judge_s: float


def prompt_key(prompt: str) -> str:
    """The hash the fake server records for a judge call's PROMPT section."""
    return hashlib.sha256(prompt.strip().encode()).hexdigest()


def item_chains(records: Sequence[dict[str, Any]], items: Sequence[tuple[str, str]]) -> list[Chain]:
    """The describe -> judge chain of each item (`items`: (image sha256, prompt text), in
    manifest order) from the answered requests in `records`. A key answered more than once
    (a repeated call) counts the sum of its durations, as the repeats ran one after another.
    An item without an answered describe or judge record is a ValueError."""
    latency: dict[Key, float] = defaultdict(float)
    for record in records:
        if record["status"] == 200:
            latency[(record["image"], record["prompt"])] += record["finished"] - record["arrived"]
    chains, missing = [], 0
    for image, prompt in items:
        describe, judge = (image, None), (image, prompt_key(prompt))
        if describe not in latency or judge not in latency:
            missing += 1
            continue
        chains.append(Chain(describe, latency[describe], judge, latency[judge]))
    if missing:
        raise ValueError(
            f"{missing} of {len(items)} items have no answered describe or judge call in the log"
        )
    return chains


def distinct_latencies(chains: Sequence[Chain]) -> dict[Key, float]:
    """Each distinct call's latency (items sharing a call count it once)."""
    found: dict[Key, float] = {}
    for chain in chains:
        found[chain.describe] = chain.describe_s
        found[chain.judge] = chain.judge_s
    return found


def chain_bound(chains: Sequence[Chain], concurrency: int) -> float:
    """max(sum of the distinct calls' latencies / concurrency, the longest describe + judge
    chain): even a client that knew every latency in advance finishes no sooner."""
    total = sum(distinct_latencies(chains).values())
    return max(total / concurrency, max(c.describe_s + c.judge_s for c in chains))


def replay(
    chains: Sequence[Chain], concurrency: int, workers: int, judge_slots: int | None = None
) -> list[tuple[float, float]]:
    """The (start, finish) of every distinct call when a zero-overhead client runs `chains`
    from time 0: `workers` workers each take the next item in order, queue its describe
    call, on its return queue its judge call, on that one's return take the next item;
    `concurrency` slots start queued calls first come first served the moment one is free.
    A call already made (or under way) for an earlier item is waited for, not repeated.
    With `judge_slots`, the describer and the judge are two models: describe calls share
    `concurrency` slots and judge calls `judge_slots` of their own (`replay_roles`)."""
    roles = replay_roles(chains, concurrency, workers, judge_slots)
    return roles["describe"] + roles["judge"]


def replay_roles(
    chains: Sequence[Chain], concurrency: int, workers: int, judge_slots: int | None = None
) -> dict[str, list[tuple[float, float]]]:
    """`replay`'s calls by role: {"describe": [(start, finish)], "judge": [...]}, each in
    the order the calls started."""
    latency = distinct_latencies(chains)
    done: set[Key] = set()
    waiting: dict[Key, list[tuple[int, int]]] = defaultdict(list)  # key -> (item, stage)
    # one pool of slots, or one per role: its queue and its free slots
    pools = ["all"] if judge_slots is None else ["describe", "judge"]
    queues: dict[str, deque[Key]] = {pool: deque() for pool in pools}
    free = {"all": concurrency} if judge_slots is None else {
        "describe": concurrency, "judge": judge_slots
    }  # fmt: skip
    running: list[tuple[float, int, Key]] = []
    intervals: dict[str, list[tuple[float, float]]] = {"describe": [], "judge": []}
    next_item, now, order = 0, 0.0, 0

    def role(key: Key) -> str:
        return "describe" if key[1] is None else "judge"

    def pool(key: Key) -> str:
        return "all" if judge_slots is None else role(key)

    def advance(item: int, stage: int) -> None:
        """Item `item` reached `stage` (0 describe, 1 judge, 2 finished) at `now`."""
        nonlocal next_item
        while True:
            if stage == 2:
                if next_item >= len(chains):
                    return
                item, stage, next_item = next_item, 0, next_item + 1
            key = chains[item].judge if stage else chains[item].describe
            if key not in done:
                if key not in waiting:
                    queues[pool(key)].append(key)
                waiting[key].append((item, stage + 1))
                return
            stage += 1

    for _ in range(workers):
        advance(0, 2)
    while any(queues.values()) or running:
        for name in pools:
            while free[name] and queues[name]:
                key = queues[name].popleft()
                heapq.heappush(running, (now + latency[key], order, key))
                intervals[role(key)].append((now, now + latency[key]))
                free[name], order = free[name] - 1, order + 1
        now, _, key = heapq.heappop(running)
        free[pool(key)] += 1
        done.add(key)
        for item, stage in waiting.pop(key):
            advance(item, stage)
    return intervals


def saturated_utilisation(
    intervals: Sequence[tuple[float, float]], concurrency: int
) -> tuple[float, float]:
    """(length of the saturated phase in seconds, mean busy slots / `concurrency` over it).

    The saturated phase runs from the first call's start to the `concurrency`-th latest
    finish: the last moment at which at least `concurrency` calls were still unfinished, so
    until then a client could have had every slot busy (after it, fewer calls remain than
    slots and the run drains). Busy slots are the calls started and not yet finished,
    averaged over time. Needs at least `concurrency` calls of some duration."""
    if len(intervals) < concurrency:
        raise ValueError(f"{len(intervals)} calls cannot fill {concurrency} slots")
    start = min(a for a, _ in intervals)
    end = sorted(f for _, f in intervals)[-concurrency]
    if end <= start:
        raise ValueError("no saturated phase: the calls finished as they started")
    busy = sum(max(0.0, min(f, end) - max(a, start)) for a, f in intervals)
    return end - start, busy / (concurrency * (end - start))
