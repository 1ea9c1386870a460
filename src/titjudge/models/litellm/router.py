"""`litellm:` with `api_base: [url, url, ...]`: one model served by several replicas (vLLM on
each GPU, say), its calls spread over them by litellm's Router.

Every URL is a deployment of one model group named after the model. Per endpoint:
`max_parallel_requests` is the model's `concurrency` (the hub gives the model N times that in
all, see `models.hub`). Routing is litellm's `simple-shuffle` with `enable_weighted_failover`:
a call whose endpoint fails (refused connection, 5xx, 429, or its slots all taken) is sent to
another endpoint that is not cooling down, within the same titjudge attempt. An endpoint that
fails is cooled down at its first failure (`allowed_fails=0`) for `COOLDOWN_SECONDS` (a 429's
Retry-After where it gives one), so calls stop going to a dead replica.

titjudge keeps its own retries: the Router retries nothing (`num_retries=0`; litellm's would
retry 400s too and hide Retry-After), and when every endpoint fails a call, the first
endpoint's error is what titjudge classifies (a 429 keeps its Retry-After); when every
endpoint is cooling down, the Router's "no deployments available" is a transient error whose
wait is the cooldown.

litellm's `max_parallel_requests` refuses a call at once (a 429 of litellm's own) when the
endpoint's slots are all taken, rather than queueing it. With N x concurrency in flight that
happens only while an endpoint is cooling down; such a call waits here until some call of this
model ends and is routed again: queued, as a vLLM server queues, not counted as a failed
attempt (the attempt's `timeout` still bounds it).
"""

from __future__ import annotations

import asyncio
from typing import Any

# first: it sets litellm's price map local before litellm is imported
from titjudge.models.litellm.loaded import litellm_module  # isort: skip

from litellm import RateLimitError, Router
from litellm.types.router import RouterRateLimitError, RouterRateLimitErrorBasic

from titjudge.models.core.base import GenerateRequest, Generation, TransientError
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.models.litellm.dialects import Dialect
from titjudge.models.litellm.reply import generation_from
from titjudge.models.litellm.settings import COOLDOWN_SECONDS
from titjudge.records.spec import ModelSpec
from titjudge.safety import redact

litellm = litellm_module()  # set up as titjudge runs it (quiet loggers, no telemetry)

#: the `rate_limit_type` of litellm's own refusal when a deployment's slots are all taken
_SLOTS_TAKEN = "concurrent_requests"


class RouterBackend(LiteLLMBackend):
    """A `litellm:` model reached through several endpoints (see the module docstring)."""

    def __init__(self, spec: ModelSpec, options: ModelOptions):
        super().__init__(spec, options)
        self.endpoints = options.endpoints
        self.per_endpoint = options.concurrency
        priced = set(litellm.model_cost)
        self.router = Router(
            model_list=[self._deployment(url) for url in self.endpoints],
            routing_strategy="simple-shuffle",
            enable_weighted_failover=True,
            max_fallbacks=max(5, len(self.endpoints)),
            num_retries=0,
            allowed_fails=0,
            cooldown_time=COOLDOWN_SECONDS,
        )
        _forget_priceless_registrations(priced)
        #: calls of this model that ended after holding an endpoint's slot
        self._ended = 0
        self._slot_freed = asyncio.Event()

    def _deployment(self, url: str) -> dict[str, Any]:
        params: dict[str, Any] = {"model": self.spec.model_id, "api_base": url}
        if self._api_key:
            params["api_key"] = self._api_key
        if self.per_endpoint is not None:
            params["max_parallel_requests"] = self.per_endpoint
        return {"model_name": self.spec.model_id, "litellm_params": params}

    def request_kwargs(
        self, request: GenerateRequest, dialect: Dialect | None = None
    ) -> dict[str, Any]:
        """As for one endpoint, less what each deployment holds (its URL and key)."""
        kwargs = super().request_kwargs(request, dialect)
        kwargs.pop("api_base", None)
        kwargs.pop("api_key", None)
        return kwargs

    async def send(self, kwargs: dict[str, Any]) -> Generation:
        while True:
            ended = self._ended
            try:
                response = await self.router.acompletion(**kwargs)
            except RateLimitError as exc:
                if getattr(exc, "rate_limit_type", None) != _SLOTS_TAKEN:
                    self._end()
                    raise
                await self._free_slot(ended)
                continue
            except BaseException:
                self._end()
                raise
            self._end()
            generation = generation_from(response)
            generation.max_tokens_sent = kwargs["max_tokens"]
            return generation

    def _end(self) -> None:
        """A call gave its endpoint slot back: wake the calls waiting for one."""
        self._ended += 1
        freed, self._slot_freed = self._slot_freed, asyncio.Event()
        freed.set()

    async def _free_slot(self, ended: int) -> None:
        """Wait until a call of this model has ended since `ended` was read."""
        if self._ended == ended:
            await self._slot_freed.wait()

    def classify_error(self, exc: BaseException) -> BaseException:
        if isinstance(exc, (RouterRateLimitError, RouterRateLimitErrorBasic)):
            wait = getattr(exc, "cooldown_time", None)
            return TransientError(
                f"every endpoint of {self.spec} is cooling down after failures: "
                f"{redact(str(exc)).splitlines()[0][:300]}",
                retry_after=float(wait) if wait is not None else None,
            )
        return super().classify_error(exc)

    async def aclose(self) -> None:
        self.router.discard()
        await super().aclose()


def _forget_priceless_registrations(known: set[str]) -> None:
    """Undo the Router's entries in litellm's price map that hold no price.

    The Router registers every deployment's model in `litellm.model_cost`; for a model litellm
    has no price for (any vLLM server) the entry is empty, and litellm then prices each call of
    that model at 0, in this backend and in every later one of the process, instead of leaving
    the cost unknown. Entries litellm already had, and any with a price, stay.
    """
    for key in set(litellm.model_cost) - known:
        entry = litellm.model_cost[key]
        if not any(value is not None for field, value in entry.items() if "cost" in field):
            del litellm.model_cost[key]


__all__ = ["RouterBackend"]
