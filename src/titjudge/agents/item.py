"""One item's steps, the one implementation that both item paths run: the item graph's nodes
(`agents.nodes`) wrap them, and the cached pass (`agents.cached`) calls them directly under a
cache-only probe. `describe` (load the image unless given, describe it), `judge` (every
per-item judge, gathered with `gather_eager`, and the route: on to `fallback` or done),
`fallback` and `finish` (the item's result, reported). Nothing here imports LangGraph, so a
re-run answered entirely from the cache never loads it.

Every per-item error is caught here and becomes a failure record: one bad image or one
failed call never cancels its siblings. A cache that cannot be used stops the run.
"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from titjudge.agents.gather import gather_eager
from titjudge.cache.store import CacheError
from titjudge.data.images import ImageLoader
from titjudge.errors import DataError
from titjudge.judges.base import Judge
from titjudge.judges.jury import JuryJudge
from titjudge.judges.pairwise import PairwiseJudge
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.probe import CacheProbe
from titjudge.models.calls.text_client import ModelClient
from titjudge.models.core.base import GenerateRequest, MissingCredentialsError
from titjudge.models.core.clients import SEND, Send
from titjudge.prompts.loader import PromptTemplate
from titjudge.records import ItemResult, Progress
from titjudge.records.image_input import ImageInput
from titjudge.records.items import HumanPair, Item
from titjudge.records.outcomes import Described, JudgeInput, JudgeOutcome

log = logging.getLogger(__name__)

#: where an item goes after its judges: its fallbacks, or done
Route = Literal["fallback", "done"]


@dataclass
class RunContext:
    """The run's fixed inputs, handed to every node as LangGraph's run context.

    `judges` score one item at a time; `pairwise` judges run after every item is
    described, over `pairs` (the run's human pairs; None: every pair within a prompt).
    `human`, `bootstrap` and `seed` are the evaluator's. `images` loads every worker's
    images, bounding the decodes in flight (the runner's holds `run.concurrency`).
    """

    describer: ModelClient
    describe_template: PromptTemplate
    describe_max_tokens: int
    describe_temperature: float | None
    judges: list[Judge]
    fallbacks: dict[str, str] = field(default_factory=dict)
    progress: Progress = field(default_factory=Progress)
    pairwise: list[PairwiseJudge] = field(default_factory=list)
    #: the juries (`judges.jury`): decided from the others once every pair is judged
    juries: list[JuryJudge] = field(default_factory=list)
    pairs: list[HumanPair] | None = None
    #: judge names in config order: the order of every item's outcomes
    variant_order: list[str] = field(default_factory=list)
    #: keep descriptions cut at max_tokens (marked truncated) instead of failing them
    describe_keep_truncated: bool = False
    human: HumanData | None = None
    bootstrap: int = 1000
    seed: int = 0
    images: ImageLoader = field(default_factory=lambda: ImageLoader(concurrency=1))
    #: the calls' mode, handed to every call the steps make (`models.core.clients.CallMode`):
    #: `SEND` answers (a miss is sent, and paid for); a probe answers from the cache alone (the
    #: cached pass, the batch phase's rounds, the estimate), each run over a copy of the
    #: context holding it. Required: no context sends unless its maker says so.
    probe: CacheProbe | Send = field(kw_only=True)

    @property
    def sends(self) -> bool:
        """Whether the calls made in this context send what the cache misses (`SEND`)."""
        return self.probe is SEND

    def probing(self, *, probe: CacheProbe) -> RunContext:
        """This context with its calls made under `probe`, and a progress of its own: what a
        probing pass meets is not the run's progress."""
        return dataclasses.replace(self, probe=probe, progress=Progress(total=self.progress.total))


async def describe(item: Item, ctx: RunContext, image: ImageInput | None = None) -> dict[str, Any]:
    """The describe step: the item's image (loaded, unless the caller holds it already), its
    description, and the image's error when it cannot be loaded (then nothing is asked)."""
    if image is None:
        try:
            image = await ctx.images.load(item.image)
        except CacheError:  # what was learnt of the image cannot be stored: the run stops
            raise
        except DataError as exc:
            failed = Described(text=None, error=f"image: {exc}")
            return {"image": None, "described": failed, "image_error": str(exc)}
    return {"image": image, "described": await describe_image(image, ctx), "image_error": None}


async def describe_image(image: ImageInput, ctx: RunContext) -> Described:
    """The describer's description of `image` (skipped when no judge reads one)."""
    every = [*ctx.judges, *ctx.pairwise]
    if every and not any(judge.needs_description for judge in every):
        return Described.skipped()
    system, user = ctx.describe_template.render()
    request = GenerateRequest(
        prompt=user,
        system=system,
        images=(image,),
        max_tokens=ctx.describe_max_tokens,
        temperature=ctx.describe_temperature,
    )
    call = await ctx.describer.text(
        request,
        role="describer",
        template=ctx.describe_template.record(),
        accept_truncated=ctx.describe_keep_truncated,
        probe=ctx.probe,
    )
    if not call.ok:
        return Described(text=None, call=call, error=call.error)
    return Described(text=call.value, call=call)


async def judge(
    item: Item, image: ImageInput | None, described: Described, ctx: RunContext
) -> tuple[Route, list[JudgeOutcome]]:
    """The judge step: every per-item judge on the item, concurrently (`gather_eager`), in
    config order, and the route: to `fallback` only when a judge with a fallback failed."""
    given = JudgeInput(item, image, described)
    outcomes = await gather_eager(safe_judge(j, given, probe=ctx.probe) for j in ctx.judges)
    return ("fallback" if needs_fallback(outcomes, ctx.fallbacks) else "done"), outcomes


def needs_fallback(outcomes: list[JudgeOutcome], fallbacks: dict[str, str]) -> bool:
    """Whether a judge that has a configured fallback failed."""
    return any(o.status == "failed" and o.variant in fallbacks for o in outcomes)


def fallback(outcomes: list[JudgeOutcome], ctx: RunContext) -> list[JudgeOutcome]:
    """The fallback step: each failed judge with a fallback takes its fallback's score."""
    return apply_fallbacks(outcomes, ctx.fallbacks)


def finish(
    item: Item,
    described: Described,
    outcomes: list[JudgeOutcome],
    image_error: str | None,
    ctx: RunContext,
) -> ItemResult:
    """The item is done: its result, reported to the run's progress."""
    result = ItemResult(item=item, described=described, outcomes=outcomes, image_error=image_error)
    ctx.progress.item_done(result)
    return result


async def answer(
    item: Item, ctx: RunContext, image: ImageInput, *, cache_only: CacheProbe | None = None
) -> ItemResult | None:
    """The item's whole route in one call, the route the item graph's nodes take step by step
    (`agents.nodes`): describe, judge, the fallback when the judges route there, finish.

    With `cache_only` (the cached pass's probe), the calls are made under it (`ctx.probing`) and the route
    stops (None) at the first step with an answer the cache lacks; an item answered whole
    has its answers counted (`cache_only.commit`) before it counts as described and done."""
    probe = cache_only
    calls = ctx if probe is None else ctx.probing(probe=probe)
    described = (await describe(item, calls, image))["described"]
    if probe is not None and probe.missed:  # the graph describes it again
        return None
    route, outcomes = await judge(item, image, described, calls)
    if probe is not None:
        if probe.missed:
            return None
        probe.commit()
    ctx.progress.item_described()
    if route == "fallback":
        outcomes = fallback(outcomes, ctx)
    return finish(item, described, outcomes, None, ctx)


async def safe_judge(judge: Judge, given: JudgeInput, *, probe: CacheProbe | Send) -> JudgeOutcome:
    try:
        return await judge.judge(given, probe=probe)
    except (CacheError, MissingCredentialsError):  # the cache cannot be used, or a call must
        raise  # be sent without its key: the whole run stops, not one item
    except Exception as exc:  # a judge bug for one item must not cancel its siblings
        log.exception("judge %s crashed on item %s", judge.name, given.item.item_id)
        return JudgeOutcome.failed(judge.name, f"internal error: {type(exc).__name__}: {exc}")


def apply_fallbacks(outcomes: list[JudgeOutcome], fallbacks: dict[str, str]) -> list[JudgeOutcome]:
    """Replace a failed judge's score by its fallback's, marked `fallback` with the original error."""
    by_name = {o.variant: o for o in outcomes}
    for outcome in outcomes:
        backup_name = fallbacks.get(outcome.variant)
        backup = by_name.get(backup_name) if backup_name else None
        if outcome.status == "failed" and backup is not None and backup.status == "ok":
            outcome.status = "fallback"
            outcome.score = backup.score
            outcome.details["fallback_from"] = backup.variant
            outcome.rationale = f"[fallback to {backup.variant}] {backup.rationale or ''}".strip()
    return outcomes


__all__ = [
    "Route",
    "RunContext",
    "apply_fallbacks",
    "describe",
    "describe_image",
    "fallback",
    "finish",
    "judge",
    "needs_fallback",
    "safe_judge",
]
