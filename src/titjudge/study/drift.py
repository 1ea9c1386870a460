"""`titjudge drift FILE.tjpack --sample N [--set K=V]...`: re-ask a pack's models a fixed sample
of its items with the same requests, and say what changed.

The sample: the pack's items grouped by T2I model and prompt-length quartile, each group
ordered by the sha256 of its item ids, N taken round-robin over the groups in a fixed order:
the same N items every time, every model and length represented as far as N allows.

The requests: the describer and each judge as the pack's config resolved them (`--set`
takes the same keys as `titjudge run --set`, e.g. `judges.<name>.api_base=...` for a model
now served elsewhere, or `judges.<name>.model=...` for a local model whose path the pack
does not hold), through a fresh, empty cache, so every call is sent:
- a judge that reads descriptions is given each sampled item's prompt and the description
  the pack stored (the request the run made, whatever the describer says today);
- with a pack that holds the images (`titjudge pack --with-images`), the describer is asked
  to describe each sampled image again, and each judge that looks at the image (LMM Score,
  P(yes), CLIP) is given the image (and the stored description): the requests the run made.
  A pack of digests only cannot send them: those are named, not re-asked;
- a pairwise judge is asked again on the sampled human pairs (both orders, the stored
  descriptions). Juries ask no model (`reproduce` re-derives them) and are named.

What it reports, per model: answers changed (exact comparison: scores, verdicts,
descriptions) with the mean and largest difference of scores, new failures, the models that
answered now against those the pack recorded; on the items both then and now scored, the
Wilcoxon signed-rank test of the paired scores (`metrics.exact.wilcoxon_signed_rank`: is
there a systematic shift?); on the human pairs both of whose images are sampled, verdicts
that flipped and agreement with the people before and now with the exact McNemar p-value
between them. Before sending, the calls it will make and what the same calls cost when the
run made them (unknown where unpriced); `run.budget_usd` (`--set run.budget_usd=...`) is
honoured. Exit 0 when nothing changed, 1 when something did.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from titjudge.errors import DataError
from titjudge.models.core.clients import SEND
from titjudge.study.reproduce import Pack

if TYPE_CHECKING:
    from titjudge.judges.base import Judge
    from titjudge.models.hub import ModelHub
    from titjudge.records.item_line import ItemLine
    from titjudge.records.items import HumanPair, Item

#: the name the describer's drift is reported under
DESCRIBER = "describer"
#: what a re-asked model answers for: an item's score, a pair's verdict, an item's description
Unit = Literal["items", "pairs", "descriptions"]


@dataclass
class JudgeDrift:
    """What changed for one judge (or the describer) on the sample."""

    name: str
    unit: Unit = "items"
    asked: int = 0
    #: (item or pair, then, now): scores, a pairwise judge's verdicts, or descriptions
    changed: list[tuple[str, Any, Any]] = field(default_factory=list)
    new_failures: list[str] = field(default_factory=list)
    models_then: set[str] = field(default_factory=set)
    models_now: set[str] = field(default_factory=set)
    #: (then, now) of every item scored both times: the paired test's data
    paired: list[tuple[float, float]] = field(default_factory=list)
    flips: int = 0
    pairs: int = 0
    right_then: int = 0
    right_now: int = 0
    p_value: float | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.changed or self.new_failures or self.models_now - self.models_then)

    @property
    def shift_p(self) -> float | None:
        """Wilcoxon signed-rank p of the paired scores now against then (None: none paired)."""
        from titjudge.metrics.exact import wilcoxon_signed_rank

        if not self.paired:
            return None
        return wilcoxon_signed_rank([now - then for then, now in self.paired])

    def lines(self) -> list[str]:
        diffs = [abs(now - then) for then, now in self.paired if now != then]
        what = {"items": "scores", "pairs": "verdicts", "descriptions": "descriptions"}[self.unit]
        asked = "images described again" if self.unit == "descriptions" else f"{self.unit} re-asked"
        out = [
            f"{self.name}: {self.asked} {asked}; {len(self.changed)} {what} changed"
            + (
                f" (mean |diff| {sum(diffs) / len(diffs):.4g}, largest {max(diffs):.4g})"
                if diffs
                else ""
            )
            + f"; {len(self.new_failures)} new failures"
        ]
        then = ", ".join(sorted(self.models_then)) or "(not recorded)"
        now = ", ".join(sorted(self.models_now)) or "(none: no model call)"
        if self.models_now != self.models_then:
            out.append(f"{self.name}: answered by {now} now; the pack recorded {then}")
        if self.paired and diffs:
            mean = sum(b - a for a, b in self.paired) / len(self.paired)
            out.append(
                f"{self.name}: {len(self.paired)} items scored then and now: mean change "
                f"{mean:+.4g}, Wilcoxon signed-rank p {self.shift_p:.4g} (a systematic shift?)"
            )
        if self.pairs:
            p = "n/a" if self.p_value is None else f"{self.p_value:.4g}"
            out.append(
                f"{self.name}: {self.pairs} human pairs in the sample: {self.flips} verdicts "
                f"flipped; agreement with people {self.right_then} then, {self.right_now} now "
                f"(exact McNemar p {p})"
            )
        for item_id, then_value, now_value in self.changed[:5]:
            out.append(f"  {item_id}: {_change(then_value, now_value)}")
        for reason in self.new_failures[:3]:
            out.append(f"  now failed: {reason}")
        return out


def _change(then: Any, now: Any) -> str:
    """One changed answer as a line shows it: two texts from where they first differ (40
    characters of each), anything else as its repr."""
    if not (isinstance(then, str) and isinstance(now, str)):
        return f"{then!r} -> {now!r}"
    at = next(
        (i for i, (a, b) in enumerate(zip(then, now, strict=False)) if a != b),
        min(len(then), len(now)),
    )
    return f"from character {at}: {then[at : at + 40]!r} -> {now[at : at + 40]!r}"


def _length_quartile(words: int, edges: list[int]) -> int:
    return sum(words > edge for edge in edges)


def sample_items(lines: list[ItemLine], prompts: dict[str, str], n: int) -> list[str]:
    """N item ids, stratified by T2I model and prompt-length quartile (module docstring)."""
    items: dict[str, ItemLine] = {}
    for line in lines:
        items.setdefault(line.item_id, line)
    if n < 1:
        raise DataError(f"--sample must be at least 1, got {n}")
    if n > len(items):
        raise DataError(f"--sample {n} is larger than the pack: it holds {len(items)} items")
    words = sorted(len(prompts.get(x.prompt_id, "").split()) for x in items.values())
    edges = [words[len(words) * q // 4] for q in (1, 2, 3)]
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for item_id, line in items.items():
        length = len(prompts.get(line.prompt_id, "").split())
        groups[(line.t2i_model, _length_quartile(length, edges))].append(item_id)
    order = [
        sorted(ids, key=lambda i: hashlib.sha256(i.encode()).hexdigest())
        for _, ids in sorted(groups.items())
    ]
    chosen: list[str] = []
    while len(chosen) < n:
        for ids in order:
            if ids and len(chosen) < n:
                chosen.append(ids.pop(0))
    return chosen


def drift_config(pack: Pack, overrides: list[str]) -> Any:
    """The pack's config with its data paths in the opened pack, then `overrides`."""
    import yaml

    from titjudge.config.load import configured
    from titjudge.config.schema import RunConfig
    from titjudge.study.pack import point_data

    raw = yaml.safe_load((pack.run / "config.yaml").read_text(encoding="utf-8"))
    raw.pop("resolved", None)
    # a jury asks no model (reproduce re-derives it): left out, so nothing is asked of it
    raw["judges"] = [j for j in raw.get("judges") or [] if j.get("kind") != "jury"]
    point_data(raw, pack.data)
    raw.setdefault("run", {})["cache_dir"] = str(pack.folder / "fresh-cache")
    return configured(raw, overrides, RunConfig, f"{pack.path}:run/config.yaml")


@dataclass
class Sample:
    """What drift asks again: the sampled items, the pack's lines for them, the stored
    descriptions, the sampled human pairs, and whether the pack holds the images."""

    items: list[Item]
    lines: list[ItemLine]
    descriptions: dict[str, str]
    pairs: list[HumanPair]
    images: bool
    #: how many items the pack holds
    of: int


@dataclass
class DriftPlan:
    """Who drift asks: the judges by what they are given, whether the describer is asked
    again, and what is named as not asked (with why). `context`: the run's context (its
    describer, template and image loader), built when the pack holds the images."""

    text: list[Judge] = field(default_factory=list)
    image: list[Judge] = field(default_factory=list)
    pairwise: list[Any] = field(default_factory=list)
    context: Any = None
    describer: bool = False
    not_asked: list[str] = field(default_factory=list)


def plan(config: Any, hub: ModelHub, sample: Sample, packed_juries: list[str]) -> DriftPlan:
    """The judges (and the describer) of `config` built from `hub`, sorted by what each is
    given; nothing is sent."""
    from titjudge.judges.pairwise import PairwiseJudge
    from titjudge.judges.registry import build_judges
    from titjudge.run.context import run_context

    asked = DriftPlan(not_asked=[f"{j} (a jury asks no model)" for j in packed_juries])
    if sample.images:
        from titjudge.records import Progress

        asked.context, judges = run_context(config, hub, None, Progress(), probe=SEND)
        # a run none of whose judges reads a description asked the describer nothing
        asked.describer = any(j.needs_description for j in judges)
    else:
        judges = build_judges(config.judges, config.describer.model, config.describer, hub)
    for judge in judges:
        if isinstance(judge, PairwiseJudge):
            asked.pairwise.append(judge)
        elif judge.needs_description:
            asked.text.append(judge)
        elif sample.images:
            asked.image.append(judge)
        else:
            asked.not_asked.append(f"{judge.name} (it looks at the image)")
    if not sample.images:
        asked.not_asked.insert(0, f"{DESCRIBER} (it looks at the image)")
    return asked


def estimate_lines(config: Any, asked: DriftPlan, sample: Sample) -> list[str]:
    """The calls drift will make, and what the same calls cost when the run made them."""
    from titjudge.records.calls import sum_costs

    out = []
    if asked.describer:
        first: dict[str, ItemLine] = {}
        for line in sample.lines:
            first.setdefault(line.item_id, line)
        cost = sum_costs([x.describer.cost for x in first.values()])
        out.append(_estimate(DESCRIBER, len(first), config.describer.model, cost))
    options = {j.name: j for j in config.judges}
    for judge in [*asked.text, *asked.image]:
        mine = [x for x in sample.lines if x.variant == judge.name]
        option = options[judge.name]
        model = getattr(option, "model", None)
        if model is None and getattr(option, "describer_bound", False):
            model = config.describer.model  # lmm, lmm_yes, self_eval: the describer's model
        if model is None:
            out.append(f"{judge.name}: {len(mine)} items, no model call (computed here)")
            continue
        out.append(_estimate(judge.name, len(mine), model, sum_costs([x.cost for x in mine])))
    return out


def _estimate(name: str, calls: int, model: str, cost: float | None) -> str:
    shown = "unknown (a call was not priced)" if cost is None else f"${cost:.4f}"
    return f"{name}: {calls} calls to {model}; the run paid {shown} for them"


async def _look_again(asked: DriftPlan, sample: Sample) -> dict[str, dict[Any, Any]]:
    """The describer's new description ({describer: {item_id: Described}}) and each image
    judge's new outcome per item, from the packed images: one load of each image."""
    from titjudge.agents.item import describe_image, safe_judge
    from titjudge.errors import DataError as ImageError
    from titjudge.records.outcomes import Described, JudgeInput, JudgeOutcome

    context = asked.context
    found: dict[str, dict[Any, Any]] = {j.name: {} for j in asked.image}
    if asked.describer:
        found[DESCRIBER] = {}

    async def one(item: Item) -> None:
        failed = None
        try:
            image = await context.images.load(item.image)
        except ImageError as exc:
            image, failed = None, f"image: {exc}"
        stored = Described(sample.descriptions.get(item.item_id))
        if asked.describer:
            found[DESCRIBER][item.item_id] = (
                Described(None, error=failed)
                if image is None
                else await describe_image(image, context)
            )
        for judge in asked.image:
            found[judge.name][item.item_id] = (
                JudgeOutcome.failed(judge.name, failed or "no image")
                if image is None
                else await safe_judge(judge, JudgeInput(item, image, stored), probe=SEND)
            )

    await asyncio.gather(*(one(item) for item in sample.items))
    return found


async def _reask(asked: DriftPlan, sample: Sample, hub: ModelHub) -> dict[str, dict[Any, Any]]:
    """Each judge's new outcome per item ({judge: {item_id: JudgeOutcome}}), each pairwise
    judge's new verdict per sampled human pair ({judge: {(a, b): PairVerdict}}) and, from a
    pack with images, the describer's new descriptions; the hub closed after."""
    from titjudge.records.outcomes import Described, JudgeInput

    described = {
        item.item_id: Described(sample.descriptions.get(item.item_id)) for item in sample.items
    }
    prompts = {item.prompt_id: item.prompt for item in sample.items}
    try:
        found: dict[str, dict[Any, Any]] = {}
        for pairwise in asked.pairwise:
            verdicts = await asyncio.gather(
                *(
                    pairwise.judge_pair(prompts[p.prompt_id], p, described, probe=SEND)
                    for p in sample.pairs
                )
            )
            found[pairwise.name] = {(v.item_a, v.item_b): v for v in verdicts}
        for judge in asked.text:
            given = [JudgeInput(item, None, described[item.item_id]) for item in sample.items]
            outcomes = await asyncio.gather(*(judge.judge(g, probe=SEND) for g in given))
            found[judge.name] = {g.item.item_id: o for g, o in zip(given, outcomes, strict=True)}
        if asked.context is not None and (asked.describer or asked.image):
            found.update(await _look_again(asked, sample))
        return found
    finally:
        await hub.aclose()
        hub.cache.close()


def _tally(drift: JudgeDrift, human: str, then: str | None, now: str | None) -> tuple[int, int]:
    """One human pair's verdicts then and now counted into `drift`; (right only then, right
    only now) for the McNemar test."""
    if human == "tie" or then is None or now is None:
        return 0, 0
    drift.pairs += 1
    drift.flips += then != now
    right_then, right_now = then == human, now == human
    drift.right_then += right_then
    drift.right_now += right_now
    return int(right_then and not right_now), int(right_now and not right_then)


def compare_drift(
    lines: list[ItemLine],
    now: dict[str, dict[Any, Any]],
    pairs: list[HumanPair],
    verdicts: dict[str, dict[tuple[str, str], Any]] | None = None,
) -> list[JudgeDrift]:
    """Per judge: the stored answers against the new ones (module docstring); a pairwise
    judge's new verdicts against its stored `verdicts` (pairs_<judge>.jsonl); the
    describer's new descriptions against the stored ones."""
    from titjudge.metrics.compare import mcnemar_exact

    stored = {(x.variant, x.item_id): x for x in lines}
    found = []
    for name, outcomes in now.items():
        if name in (verdicts or {}):
            found.append(_pairwise_drift(name, outcomes, (verdicts or {})[name]))
            continue
        if name == DESCRIBER:
            found.append(_describer_drift(lines, outcomes))
            continue
        drift = JudgeDrift(name)
        for item_id, outcome in outcomes.items():
            then = stored.get((name, item_id))
            if then is None:
                continue
            drift.asked += 1
            drift.models_then.update(then.answered_by)
            drift.models_now.update(outcome.answered_by)
            own_then, own_now = _stored_score(then), _new_score(outcome)
            if own_now is None and own_then is not None:
                drift.new_failures.append(f"{item_id}: {outcome.error}")
            elif own_now != own_then:
                drift.changed.append((item_id, own_then, own_now))
            if own_then is not None and own_now is not None:
                drift.paired.append((own_then, own_now))
        counts = [
            _tally(
                drift,
                pair.winner,
                _side(*(_stored_score(stored.get((name, i))) for i in (pair.item_a, pair.item_b))),
                _side(*(_new_score(outcomes.get(i)) for i in (pair.item_a, pair.item_b))),
            )
            for pair in pairs
        ]
        drift.p_value = (
            mcnemar_exact(sum(c[0] for c in counts), sum(c[1] for c in counts))
            if drift.pairs
            else None
        )
        found.append(drift)
    return found


def _describer_drift(lines: list[ItemLine], now: dict[str, Any]) -> JudgeDrift:
    """The describer's new descriptions against the stored ones (exact text), its new
    failures and the models that answered then and now."""
    drift = JudgeDrift(DESCRIBER, unit="descriptions")
    first: dict[str, ItemLine] = {}
    for line in lines:
        first.setdefault(line.item_id, line)
    for item_id, described in now.items():
        then = first.get(item_id)
        if then is None or then.describer.status == "skipped":
            continue
        drift.asked += 1
        if then.describer.answered_by:
            drift.models_then.add(then.describer.answered_by)
        if described.call is not None and described.call.answered_by:
            drift.models_now.add(described.call.answered_by)
        old = then.description if then.describer.status == "ok" else None
        if described.text is None and old is not None:
            drift.new_failures.append(f"{item_id}: {described.error}")
        elif described.text != old:
            drift.changed.append((item_id, old, described.text))
    return drift


def _pairwise_drift(
    name: str, now: dict[tuple[str, str], Any], then: dict[tuple[str, str], Any]
) -> JudgeDrift:
    """A pairwise judge on the sampled pairs: changed verdicts, new failures, the answering
    models, and agreement with people then and now (exact McNemar)."""
    from titjudge.metrics.compare import mcnemar_exact

    drift = JudgeDrift(name, unit="pairs")
    a_only = b_only = 0
    for key, verdict in now.items():
        before = then.get(key)
        if before is None:
            continue
        drift.asked += 1
        for order in before.orders:
            drift.models_then.update(order.answered_by)
        for order in verdict.orders:
            drift.models_now.update(order.answered_by)
        old, new = before.verdict, verdict.verdict
        label = f"{key[0]}|{key[1]}"
        if new is None and old is not None:
            drift.new_failures.append(f"{label}: {verdict.forward.error or verdict.backward.error}")
            continue
        if old != new:
            drift.changed.append((label, old, new))
        only_then, only_now = _tally(drift, before.human or "tie", old, new)
        a_only, b_only = a_only + only_then, b_only + only_now
    drift.p_value = mcnemar_exact(a_only, b_only) if drift.pairs else None
    return drift


def _stored_score(line: ItemLine | None) -> float | None:
    return line.score if line is not None and line.status == "ok" else None


def _new_score(outcome: Any) -> float | None:
    return outcome.score if outcome is not None and outcome.status == "ok" else None


def _side(a: float | None, b: float | None) -> str | None:
    """Which image two own scores prefer ("tie" when equal); None without both."""
    if a is None or b is None:
        return None
    return "a" if a > b else "b" if b > a else "tie"


def read_sample(pack: Pack, n: int) -> Sample:
    """The pack's fixed sample of `n` items (module docstring), with what the pack stored."""
    from titjudge.data.manifest import load_manifest
    from titjudge.data.pairs import load_pairs
    from titjudge.records.item_line import read_item_lines

    lines = read_item_lines(pack.run / "items.jsonl")
    items = {item.item_id: item for item in load_manifest(pack.data / "manifest.jsonl")}
    prompts = {item.prompt_id: item.prompt for item in items.values()}
    chosen = sample_items(lines, prompts, n)
    picked = set(chosen)
    descriptions: dict[str, str] = {}
    for line in lines:
        if line.description is not None and line.item_id in picked:
            descriptions.setdefault(line.item_id, line.description)
    pairs = [
        p for p in load_pairs(pack.data / "pairs.csv") if p.item_a in picked and p.item_b in picked
    ]
    return Sample(
        items=[items[i] for i in chosen],
        lines=[x for x in lines if x.item_id in picked],
        descriptions=descriptions,
        pairs=pairs,
        images=bool(pack.manifest.get("with_images")),
        of=len(set(line.item_id for line in lines)),
    )


def run_drift(pack: Pack, sample: int, overrides: list[str], say: Any) -> int:
    """Drift of the opened pack (module docstring); `say` prints a line. The exit code."""
    import yaml

    from titjudge.cache.store import CallCache
    from titjudge.report.record import load_verdicts
    from titjudge.run.context import run_hub
    from titjudge.run.loop import run_to_end

    chosen = read_sample(pack, sample)
    config = drift_config(pack, overrides)
    packed = yaml.safe_load((pack.run / "config.yaml").read_text(encoding="utf-8"))
    juries = [j["name"] for j in packed.get("judges") or [] if j.get("kind") == "jury"]
    say(f"sample: {len(chosen.items)} items of {chosen.of} (by T2I model and prompt length)")
    hub = run_hub(config.run, CallCache(config.run.cache_dir))
    try:
        asked = plan(config, hub, chosen, juries)
    except BaseException:
        run_to_end(hub.aclose())
        hub.cache.close()
        raise
    for line in estimate_lines(config, asked, chosen):
        say(f"estimate: {line}")
    if asked.not_asked:
        why = "" if chosen.images else "; a pack of digests holds no image: pack --with-images"
        say(f"not re-asked: {', '.join(asked.not_asked)}{why}")
    now = run_to_end(_reask(asked, chosen, hub))
    stored = {
        path.stem.removeprefix("pairs_"): {(v.item_a, v.item_b): v for v in load_verdicts(path)}
        for path in sorted(pack.run.glob("pairs_*.jsonl"))
    }
    drifts = compare_drift(chosen.lines, now, chosen.pairs, stored)
    for drift in drifts:
        for text in drift.lines():
            say(text)
    if any(d.drifted for d in drifts):
        say("drift: the models answer differently now")
        return 1
    say("no drift: every re-asked model gave the stored answers, and the same models answered")
    return 0


__all__ = ["JudgeDrift", "compare_drift", "drift_config", "run_drift", "sample_items"]
