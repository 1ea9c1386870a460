"""What a batch reply costs: litellm's batch price of its usage for the model (its `_batches`
rates, else half the list price: `batch_cost_calculator`), or None, unknown and never a
made-up $0, where litellm's price map has no entry for the model or the reply no usage."""

from __future__ import annotations

from typing import Any

from titjudge.models.litellm.loaded import litellm_module


def batch_cost(usage: Any, model: str, provider: str, **where: Any) -> float | None:
    """litellm's batch price of `usage` for `provider`'s `model` (`where`: the rest of what
    it prices by, e.g. Vertex's `vertex_location`); None where it does not price it."""
    if usage is None:
        return None
    litellm = litellm_module()
    from litellm.cost_calculator import batch_cost_calculator

    try:
        litellm.get_model_info(model, custom_llm_provider=provider)
        prompt, completion = batch_cost_calculator(
            usage, model=model, custom_llm_provider=provider, **where
        )
    except Exception:  # not in litellm's price map: unknown, never a made-up 0
        return None
    return float(prompt + completion)


__all__ = ["batch_cost"]
