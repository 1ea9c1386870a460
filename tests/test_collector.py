"""The collector a run tunes while it drives its items (`run.collector.tuned_collector`):
start-up's objects frozen out of every collection, young collections spaced out, and all
of it undone afterwards, even when the run raises (a notebook's collector is its own)."""

from __future__ import annotations

import gc

import pytest

from titjudge.run.collector import YOUNG_THRESHOLD, tuned_collector


def test_the_collector_is_tuned_inside_and_as_it_was_after():
    before = gc.get_threshold()
    alive = [object() for _ in range(1000)]
    with tuned_collector():
        assert gc.get_freeze_count() >= len(alive)
        assert gc.get_threshold()[0] == max(before[0], YOUNG_THRESHOLD)
        assert gc.get_threshold()[1:] == before[1:]
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_it_is_undone_when_the_run_raises():
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), tuned_collector():
        raise RuntimeError("the run stopped")
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == before


def test_a_cycle_made_during_the_run_is_still_collected():
    import weakref

    class Node:
        pass

    with tuned_collector():
        node = Node()
        node.me = node  # a cycle: reference counting alone never frees it
        gone = weakref.ref(node)
        del node
        gc.collect()
        assert gone() is None
