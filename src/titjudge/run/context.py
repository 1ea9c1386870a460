"""What every run builds first, in one place: the hub its clients come from (`run_hub`) and the
run's context (`run_context`: the describer, the templates, the judges, the image loader).
`titjudge run`, the ablation grid (one hub for all its rows), `titjudge score`, `estimate` and
`explain` build them here, so a run setting reaches each the same way."""

from __future__ import annotations

from titjudge.agents.item import RunContext
from titjudge.cache.store import CallCache
from titjudge.config.schema import RunConfig, RunSettings
from titjudge.data.images import ImageLoader
from titjudge.judges.base import Judge
from titjudge.judges.jury import JuryJudge
from titjudge.judges.pairwise import PairwiseJudge
from titjudge.judges.registry import build_judges
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.budget import Budget
from titjudge.models.calls.probe import CacheProbe
from titjudge.models.core.clients import Send
from titjudge.models.core.options import RequireModel
from titjudge.models.hub import ModelHub
from titjudge.prompts.loader import load_template
from titjudge.records import Progress


def run_hub(
    run: RunSettings,
    cache: CallCache | None = None,
    *,
    budget: bool = True,
    require_model: RequireModel | None = None,
) -> ModelHub:
    """The hub a run's clients come from, set from its `run` settings: concurrency, rpm,
    execution, `require_model`, `stop_after` and (unless `budget` is False: nothing is sent,
    or the command takes no budget) one ledger for `budget_usd`. `cache`: the one to share
    (default: the run's `cache_dir`, opened here); `require_model` overrides the setting."""
    return ModelHub(
        cache if cache is not None else CallCache(run.cache_dir),
        default_concurrency=run.concurrency,
        default_rpm=run.rpm,
        execution=run.execution,
        require_model=require_model or run.require_model,
        stop_after=run.stop_after,
        budget=Budget(run.budget_usd) if budget and run.budget_usd is not None else None,
    )


def run_context(
    config: RunConfig,
    hub: ModelHub,
    human: HumanData | None,
    progress: Progress,
    bootstrap: int = 1000,
    *,
    probe: CacheProbe | Send,
) -> tuple[RunContext, list[Judge]]:
    """The run's context (its clients, templates, judges and image loader) and every judge
    built, pairwise ones included: what `run` drives (`probe=SEND`) and `titjudge estimate`
    probes (its probe: nothing is sent)."""
    describer = hub.text_client(config.describer.model, config.describer)
    template = load_template(config.describer.prompt)
    judges = build_judges(config.judges, config.describer.model, config.describer, hub)
    ctx = RunContext(
        describer=describer,
        describe_template=template,
        describe_max_tokens=config.describer.max_tokens,
        describe_temperature=config.describer.temperature,
        describe_keep_truncated=config.describer.on_truncation == "keep",
        judges=[j for j in judges if j.per_item],
        fallbacks={j.name: j.fallback for j in config.judges if j.fallback},
        progress=progress,
        pairwise=[j for j in judges if isinstance(j, PairwiseJudge)],
        juries=[j for j in judges if isinstance(j, JuryJudge)],
        pairs=human.pairs if human is not None else None,
        variant_order=[j.name for j in config.judges],
        human=human,
        bootstrap=bootstrap,
        seed=config.run.seed,
        images=ImageLoader(config.run.concurrency, known=hub.cache),
        probe=probe,
    )
    return ctx, judges


__all__ = ["run_context", "run_hub"]
