"""The models a run config uses, for the preflight that `titjudge run` and `titjudge score`
(and `titjudge.score()`) do before building any of them (`models.preflight`).

The library's `titjudge.evaluate()` skips it: there, building each backend still refuses
missing credentials and unknown providers, one model at a time, before the first item.
"""

from __future__ import annotations

from titjudge.config import RunConfig
from titjudge.judges.options import ModelJudgeOptions
from titjudge.models.preflight import ModelUse, answered_models, check_models


def run_model_uses(config: RunConfig) -> list[ModelUse]:
    """The describer, then every judge's model as the judge reaches it (a describer-bound judge
    that names none uses the describer's)."""
    describer = config.describer
    uses = [ModelUse(describer.model, describer, "describer")]
    for judge in config.judges:
        if isinstance(judge, ModelJudgeOptions):
            model, options = judge.reach(describer.model, describer)
            uses.append(ModelUse(model, options, f"judge {judge.name}"))
    return uses


def preflight_run(config: RunConfig, source: str) -> None:
    """Raise one `ConfigError` naming everything the config's models are missing (a `litellm:`
    model with answers in the run's cache is checked when a call first misses it)."""
    check_models(run_model_uses(config), source, answered_models(config.run.cache_dir))
