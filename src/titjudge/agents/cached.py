"""Items answered entirely from the cache: the run graph's first node (`agents.graph`).

A re-run whose answers are all cached would spend most of its time on LangGraph's work per
step (two steps per item) and on reading images again. So, in one step before the item
workers, each item is tried once with a `models.calls.probe.CacheProbe` (the context's
`probe`): its image as an earlier run remembered it (`ImageLoader.peek`: deferred, not
read), then the item's route in one call (`agents.item.answer`: the very steps the item
graph's nodes wrap, describe, judge, fallback when routed there, finish), so the judges are
gathered, the fallback decided and the result made by the same functions on both paths. An item whose every call
is answered becomes its result here. An item with any answer missing, or an image no
earlier run read unchanged, goes on to the item workers, which ask again everything it
needs (its cached answers are read a second time, counted once). Nothing here sends a
request, claims a key, reads an image or loads a model.
"""

from __future__ import annotations

import asyncio

from titjudge.agents import item as steps
from titjudge.agents.item import RunContext
from titjudge.models.calls.probe import CacheProbe
from titjudge.records import ItemResult
from titjudge.records.items import Item

#: items tried between two yields to the event loop (the progress display keeps ticking)
YIELD_EVERY = 64


async def resolve_cached(items: list[Item], ctx: RunContext) -> tuple[list[ItemResult], list[Item]]:
    """(the results of the items answered from the cache alone, the items left to run)."""
    done: list[ItemResult] = []
    rest: list[Item] = []
    for index, item in enumerate(items):
        if index % YIELD_EVERY == YIELD_EVERY - 1:
            await asyncio.sleep(0)
        result = await _from_cache(item, ctx)
        if result is None:
            rest.append(item)
        else:
            done.append(result)
    return done, rest


async def _from_cache(item: Item, ctx: RunContext) -> ItemResult | None:
    image = ctx.images.peek(item.image)
    if image is None:
        return None
    # an item with a call the cache lacks stops there: the item workers run it
    return await steps.answer(item, ctx, image, cache_only=CacheProbe())


__all__ = ["resolve_cached"]
