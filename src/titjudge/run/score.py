"""Score one image against one prompt with a config's describer and judges (the per-item
graph alone, no human data): the `titjudge score` command and `titjudge.score()`."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from titjudge.agents.graph import drive
from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.errors import DataError
from titjudge.models.core.clients import SEND
from titjudge.records import ItemResult, Progress
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeOutcome
from titjudge.run.context import run_context, run_hub
from titjudge.run.preflight import preflight_run
from titjudge.user_files import user_file_problems

#: used when `score` gets no config: the paper's best TIT-Score-LLM setting
DEFAULT_SCORE_CONFIG = {
    "name": "score",
    "describer": {
        "model": "litellm:gemini/gemini-2.5-pro",
        "max_tokens": 512,
        "thinking": {"budget": 128},
    },
    "judges": [
        {
            "name": "tit_llm_g",
            "kind": "llm",
            "model": "litellm:gemini/gemini-2.5-pro",
            "max_tokens": 1024,
            "thinking": {"budget": 1024},
        },
        {"name": "lexical", "kind": "lexical"},
    ],
}


@dataclass
class SingleScore:
    image: Path
    prompt: str
    result: ItemResult

    @property
    def described(self) -> Described:
        return self.result.described

    @property
    def outcomes(self) -> list[JudgeOutcome]:
        return self.result.outcomes

    @property
    def failed(self) -> bool:
        """Failed as a run counts a failed item (`ItemResult.failed`)."""
        return self.result.failed


def default_score_config() -> RunConfig:
    return validate_config(DEFAULT_SCORE_CONFIG, RunConfig, "built-in score config")


async def score_async(
    image: str | Path, prompt: str, config: RunConfig | None = None
) -> SingleScore:
    config = config or default_score_config()
    image = Path(image)
    if not prompt.strip():
        raise DataError("the prompt is empty")
    problem = user_file_problems([image], "image")[0]  # as the run will open it
    if problem is not None:
        raise DataError(f"{image}: {problem}")
    preflight_run(config, f"config {config.name!r}", with_data=False)
    item = Item(
        item_id=image.stem,
        prompt_id="single",
        prompt=prompt,
        image=image.resolve(),
        t2i_model="unknown",
    )
    hub = run_hub(config.run)  # `run.budget_usd` caps this image's calls as it caps a run's
    cache = hub.cache
    try:
        ctx, judges = run_context(config, hub, None, Progress(total=1), probe=SEND)
        # every judge is asked of the one image: a pairwise one says why it cannot score it
        ctx = dataclasses.replace(ctx, judges=judges, pairwise=[])
        # the run's own driver: the cached pass, then the item graph, as in a run of one item
        (result,) = (await drive([item], ctx))["results"]
    finally:
        await hub.aclose()
        cache.close()
    if result.image_error:
        raise DataError(result.image_error)
    return SingleScore(image=image, prompt=prompt, result=result)


def score(image: str | Path, prompt: str, config: RunConfig | None = None) -> SingleScore:
    """Describe one image and run every configured judge on it, after the preflight of every
    model the config uses."""
    return asyncio.run(score_async(image, prompt, config))
