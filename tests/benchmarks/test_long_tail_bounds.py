"""The long-tail benchmark's bounds (benchmarks/long_tail_bounds.py) on hand-made logs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from long_tail_bounds import (  # noqa: E402
    Chain,
    chain_bound,
    item_chains,
    prompt_key,
    replay,
    replay_roles,
    saturated_utilisation,
)


def chain(name: str, describe_s: float, judge_s: float, image: str | None = None) -> Chain:
    image = image or name
    return Chain((image, None), describe_s, (image, prompt_key(name)), judge_s)


# five items, two slots, four workers; the long describe call comes last in the manifest
FIVE = [
    chain("a", 1, 10),
    chain("b", 1, 1),
    chain("c", 1, 1),
    chain("d", 1, 1),
    chain("e", 10, 1),
]


def test_replay_follows_the_greedy_first_come_first_served_schedule() -> None:
    # t=0: workers take a-d, slots run describe a, b; at 1 describe c, d (judge a, b queue
    # behind them); at 2 judge a [2, 12], judge b [2, 3]; at 3 b's worker takes e, whose
    # describe queues behind judge c [3, 4] and judge d [4, 5]; describe e [5, 15], judge e
    # [15, 16]
    intervals = replay(FIVE, concurrency=2, workers=4)
    assert sorted(intervals) == [
        (0, 1), (0, 1), (1, 2), (1, 2), (2, 3), (2, 12), (3, 4), (4, 5), (5, 15), (15, 16)
    ]  # fmt: skip
    assert max(f for _, f in intervals) == 16


def test_replay_with_a_judge_of_its_own_gives_each_role_its_slots() -> None:
    # one describe slot, one judge slot: describes run back to back [0, 1] [1, 2] [2, 3];
    # judge a [1, 4] holds the judge's slot while judges b and c queue behind it, though
    # the describer's slot is free from 3 on (a single pool of 2 would have run them there)
    three = [chain("a", 1, 3), chain("b", 1, 1), chain("c", 1, 1)]
    roles = replay_roles(three, concurrency=1, workers=3, judge_slots=1)
    assert roles == {"describe": [(0, 1), (1, 2), (2, 3)], "judge": [(1, 4), (4, 5), (5, 6)]}
    assert sorted(replay(three, 1, 3, judge_slots=1)) == sorted(sum(roles.values(), []))
    assert max(f for _, f in replay(three, concurrency=2, workers=3)) == 4


def test_chain_bound_is_the_larger_of_work_over_slots_and_the_longest_chain() -> None:
    # work: 14 s of describes + 14 s of judges over 2 slots = 14; longest chain 11 (a and e)
    assert chain_bound(FIVE, 2) == 14
    assert chain_bound(FIVE, 4) == 11


def test_saturated_utilisation_runs_to_the_last_moment_enough_calls_were_unfinished() -> None:
    # finishes 1 1 2 2 3 4 5 12 15 16: the 2nd latest is 15, so the phase is [0, 15];
    # busy slot-seconds in it: 4 describes of 1, judge a 10, judges b-d 3, describe e 10 = 27
    length, share = saturated_utilisation(replay(FIVE, 2, 4), 2)
    assert length == 15
    assert share == pytest.approx(27 / 30)
    with pytest.raises(ValueError, match="cannot fill"):
        saturated_utilisation([(0, 1)], 2)


def test_an_item_sharing_an_image_waits_for_the_describe_call_under_way() -> None:
    # b's image is a's: one describe call [0, 1], then judge a [1, 3] and judge b [3, 4]
    shared = [chain("a", 1, 2), chain("b", 1, 1, image="a")]
    assert sorted(replay(shared, concurrency=1, workers=2)) == [(0, 1), (1, 3), (3, 4)]
    assert chain_bound(shared, 1) == 4  # the shared describe counts once


def test_item_chains_reads_answered_records_in_manifest_order() -> None:
    def record(image: str, prompt: str | None, arrived: float, finished: float, status=200):
        key = prompt_key(prompt) if prompt is not None else None
        return {
            "image": image, "prompt": key, "arrived": arrived, "finished": finished,
            "status": status,
        }  # fmt: skip

    records = [
        record("x", None, 0, 2),
        record("y", None, 0, 1),
        record("x", "wide prompt", 2, 5),
        record("y", "tall prompt", 1, 2, status=500),  # a refused call, then its answer
        record("y", "tall prompt", 2, 2.5),
    ]
    chains = item_chains(records, [("y", " tall prompt\n"), ("x", "wide prompt")])
    assert [(c.describe_s, c.judge_s) for c in chains] == [(1, 0.5), (2, 3)]
    with pytest.raises(ValueError, match="1 of 1 items"):
        item_chains(records, [("z", "wide prompt")])
