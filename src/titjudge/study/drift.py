"""`titjudge drift FILE.tjpack --sample N [--set K=V]...`: re-ask a pack's judges a fixed sample
of its items with the same requests, and say what changed.

The sample: the pack's items grouped by T2I model and prompt-length quartile, each group
ordered by the sha256 of its item ids, N taken round-robin over the groups in a fixed order:
the same N items every time, every model and length represented as far as N allows.

The requests: each judge as the pack's config resolved it (`--set` takes the same keys as
`titjudge run --set`, e.g. `judges.<name>.api_base=...` for a model now served elsewhere, or
`judges.<name>.model=...` for a local model whose path the pack does not hold), given each
sampled item's prompt and the description the pack stored: the request the run made. A
fresh, empty cache, so every call is sent. A pairwise judge is asked again on the sampled
human pairs (both orders, the stored descriptions). Judges that look at the image (the
pack holds digests, not images) and juries (they ask no model) are not re-asked, and are
named.

What it reports, per judge: scores changed (exact comparison) with the mean and largest
difference, new failures, the models that answered now against those the pack recorded,
and on the human pairs both of whose images are sampled: verdicts that flipped, agreement
with the people before and now with the exact McNemar p-value between them. Before sending,
the calls it will make and what the same calls cost when the run made them (unknown where
unpriced); `run.budget_usd` (`--set run.budget_usd=...`) is honoured. Exit 0 when nothing
changed, 1 when something did.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from titjudge.errors import DataError
from titjudge.study.reproduce import Pack

#: kinds re-asked from a stored description (the others need the image, or pairs)
TEXT_KINDS = frozenset({"llm", "embedding", "lexical", "checklist"})


@dataclass
class JudgeDrift:
    """What changed for one judge on the sample."""

    name: str
    #: what was re-asked: "items" (scores) or "pairs" (a pairwise judge's verdicts)
    unit: str = "items"
    asked: int = 0
    #: (item or pair, then, now): scores, or a pairwise judge's verdicts
    changed: list[tuple[str, Any, Any]] = field(default_factory=list)
    new_failures: list[str] = field(default_factory=list)
    models_then: set[str] = field(default_factory=set)
    models_now: set[str] = field(default_factory=set)
    flips: int = 0
    pairs: int = 0
    right_then: int = 0
    right_now: int = 0
    p_value: float | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.changed or self.new_failures or self.models_now - self.models_then)

    def lines(self) -> list[str]:
        diffs = [
            abs(a - b)
            for _, a, b in self.changed
            if isinstance(a, (int, float)) and isinstance(b, (int, float))
        ]
        what = "scores" if self.unit == "items" else "verdicts"
        out = [
            f"{self.name}: {self.asked} {self.unit} re-asked; {len(self.changed)} {what} changed"
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
        if self.pairs:
            p = "n/a" if self.p_value is None else f"{self.p_value:.4g}"
            out.append(
                f"{self.name}: {self.pairs} human pairs in the sample: {self.flips} verdicts "
                f"flipped; agreement with people {self.right_then} then, {self.right_now} now "
                f"(exact McNemar p {p})"
            )
        for item_id, then_score, now_score in self.changed[:5]:
            out.append(f"  {item_id}: {then_score!r} -> {now_score!r}")
        for reason in self.new_failures[:3]:
            out.append(f"  now failed: {reason}")
        return out


def _length_quartile(words: int, edges: list[int]) -> int:
    return sum(words > edge for edge in edges)


def sample_items(lines: list[dict[str, Any]], prompts: dict[str, str], n: int) -> list[str]:
    """N item ids, stratified by T2I model and prompt-length quartile (module docstring)."""
    items: dict[str, dict[str, Any]] = {}
    for line in lines:
        items.setdefault(line["item_id"], line)
    if n < 1:
        raise DataError(f"--sample must be at least 1, got {n}")
    if n > len(items):
        raise DataError(f"--sample {n} is larger than the pack: it holds {len(items)} items")
    words = sorted(len(prompts.get(x["prompt_id"], "").split()) for x in items.values())
    edges = [words[len(words) * q // 4] for q in (1, 2, 3)]
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for item_id, line in items.items():
        length = len(prompts.get(line["prompt_id"], "").split())
        groups[(line["t2i_model"], _length_quartile(length, edges))].append(item_id)
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


def estimate_lines(config: Any, lines: list[dict[str, Any]], sample: list[str]) -> list[str]:
    """The calls drift will make, and what the same calls cost when the run made them."""
    from titjudge.records.calls import sum_costs

    chosen = set(sample)
    out = []
    for judge in config.judges:
        if judge.kind not in TEXT_KINDS:
            continue
        mine = [x for x in lines if x["variant"] == judge.name and x["item_id"] in chosen]
        model = getattr(judge, "model", None)
        if model is None:
            out.append(f"{judge.name}: {len(mine)} items, no model call (computed here)")
            continue
        cost = sum_costs([x.get("cost") for x in mine])
        shown = "unknown (a call was not priced)" if cost is None else f"${cost:.4f}"
        out.append(f"{judge.name}: {len(mine)} calls to {model}; the run paid {shown} for them")
    return out


async def _reask(
    config: Any, items: list[Any], descriptions: dict[str, str], pairs: list[Any]
) -> dict[str, dict[Any, Any]]:
    """Each text judge's new outcome per item ({judge: {item_id: JudgeOutcome}}) and each
    pairwise judge's new verdict per sampled human pair ({judge: {(a, b): PairVerdict}})."""
    from titjudge.cache.store import CallCache
    from titjudge.judges.pairwise import PairwiseJudge
    from titjudge.judges.registry import build_judges
    from titjudge.models.core.clients import SEND
    from titjudge.records.outcomes import Described, JudgeInput
    from titjudge.run.context import run_hub

    hub = run_hub(config.run, CallCache(config.run.cache_dir))
    wanted = [j for j in config.judges if j.kind in TEXT_KINDS or j.kind == "pairwise"]
    described = {item.item_id: Described(descriptions.get(item.item_id)) for item in items}
    prompts = {item.prompt_id: item.prompt for item in items}
    try:
        found: dict[str, dict[Any, Any]] = {}
        for judge in build_judges(wanted, config.describer.model, config.describer, hub):
            if isinstance(judge, PairwiseJudge):
                verdicts = await asyncio.gather(
                    *(
                        judge.judge_pair(prompts[p.prompt_id], p, described, probe=SEND)
                        for p in pairs
                    )
                )
                found[judge.name] = {(v.item_a, v.item_b): v for v in verdicts}
                continue
            given = [JudgeInput(item, None, described[item.item_id]) for item in items]
            outcomes = await asyncio.gather(*(judge.judge(g, probe=SEND) for g in given))
            found[judge.name] = {g.item.item_id: o for g, o in zip(given, outcomes, strict=True)}
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
    lines: list[dict[str, Any]],
    now: dict[str, dict[Any, Any]],
    pairs: list[Any],
    verdicts: dict[str, dict[tuple[str, str], Any]] | None = None,
) -> list[JudgeDrift]:
    """Per judge: the stored answers against the new ones (module docstring); a pairwise
    judge's new verdicts against its stored `verdicts` (pairs_<judge>.jsonl)."""
    from titjudge.metrics.compare import mcnemar_exact

    stored = {(x["variant"], x["item_id"]): x for x in lines}
    found = []
    for name, outcomes in now.items():
        if name in (verdicts or {}):
            found.append(_pairwise_drift(name, outcomes, (verdicts or {})[name]))
            continue
        drift = JudgeDrift(name)
        for item_id, outcome in outcomes.items():
            then = stored.get((name, item_id))
            if then is None:
                continue
            drift.asked += 1
            drift.models_then.update(then.get("answered_by") or [])
            drift.models_now.update(outcome.answered_by)
            own_then, own_now = _stored_score(then), _new_score(outcome)
            if own_now is None and own_then is not None:
                drift.new_failures.append(f"{item_id}: {outcome.error}")
            elif own_now != own_then:
                drift.changed.append((item_id, own_then, own_now))
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


def _stored_score(line: dict[str, Any] | None) -> float | None:
    return line["score"] if line is not None and line["status"] == "ok" else None


def _new_score(outcome: Any) -> float | None:
    return outcome.score if outcome is not None and outcome.status == "ok" else None


def _side(a: float | None, b: float | None) -> str | None:
    """Which image two own scores prefer ("tie" when equal); None without both."""
    if a is None or b is None:
        return None
    return "a" if a > b else "b" if b > a else "tie"


def run_drift(pack: Pack, sample: int, overrides: list[str], say: Any) -> int:
    """Drift of the opened pack (module docstring); `say` prints a line. The exit code."""
    import yaml

    from titjudge.data.manifest import load_manifest
    from titjudge.data.pairs import load_pairs
    from titjudge.report.record import load_verdicts
    from titjudge.run.loop import run_to_end
    from titjudge.study.pack import json_lines

    lines = [json.loads(x) for x in json_lines((pack.run / "items.jsonl").read_text())]
    items = {item.item_id: item for item in load_manifest(pack.data / "manifest.jsonl")}
    prompts = {item.prompt_id: item.prompt for item in items.values()}
    chosen = sample_items(lines, prompts, sample)
    config = drift_config(pack, overrides)
    packed = yaml.safe_load((pack.run / "config.yaml").read_text(encoding="utf-8"))
    asked = TEXT_KINDS | {"pairwise"}
    skipped = [j["name"] for j in packed.get("judges") or [] if j.get("kind") not in asked]
    say(
        f"sample: {len(chosen)} items of {len({x['item_id'] for x in lines})} (by T2I model and prompt length)"
    )
    for line in estimate_lines(config, lines, chosen):
        say(f"estimate: {line}")
    if skipped:
        say(
            f"not re-asked: {', '.join(skipped)} (a jury asks no model; the others look at the "
            "image, and a pack holds digests)"
        )
    descriptions: dict[str, str] = {}
    for line in lines:
        if line.get("description"):
            descriptions.setdefault(line["item_id"], line["description"])
    picked = set(chosen)
    pairs = [
        p for p in load_pairs(pack.data / "pairs.csv") if p.item_a in picked and p.item_b in picked
    ]
    now = run_to_end(_reask(config, [items[i] for i in chosen], descriptions, pairs))
    stored = {
        path.stem.removeprefix("pairs_"): {(v.item_a, v.item_b): v for v in load_verdicts(path)}
        for path in sorted(pack.run.glob("pairs_*.jsonl"))
    }
    drifts = compare_drift(lines, now, pairs, stored)
    for drift in drifts:
        for text in drift.lines():
            say(text)
    if any(d.drifted for d in drifts):
        say("drift: the judges answer differently now")
        return 1
    say("no drift: every re-asked judge gave the stored answers, from the same models")
    return 0


__all__ = ["JudgeDrift", "compare_drift", "drift_config", "run_drift", "sample_items"]
