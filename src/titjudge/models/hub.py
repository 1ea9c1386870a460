"""One place that builds backends and clients from config, once per model.

Clients of the same model (say the describer and the self-eval judge on one VLM) share
one backend, one limiter and one usage ledger, so limits hold across roles. Roles that reach
one model differently (another `max_image_pixels`, other `params`) get clients of their own,
and still share that model's one limiter (`limit_key`: the spec and its endpoints), so its
`rpm`, `tpm` and `concurrency` hold across all of them; the config refuses roles that set
those (or `timeout`, retries) differently for one model (`core.options.option_conflicts`). `execution`
says where local models run (in this process, or in Ray actors: `models.core.execution`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.models.calls.breaker import Breaker
from titjudge.models.calls.budget import Budget
from titjudge.models.calls.embedding_client import EmbeddingClient
from titjudge.models.calls.limits import Limiter
from titjudge.models.calls.text_client import ModelClient
from titjudge.models.core.base import Backend, TextBackend
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.core.lazy import LazyBackend
from titjudge.models.core.options import DEFAULT_STOP_AFTER, ModelOptions, RequireModel, limit_key
from titjudge.models.litellm.dialects import DialectMemory
from titjudge.models.registry import build_embedding_backend, build_text_backend
from titjudge.records.calls import Usage
from titjudge.records.spec import parse_model_spec


class ModelHub:
    def __init__(
        self,
        cache: CallCache,
        default_concurrency: int = 32,
        default_rpm: float | None = None,
        execution: ExecutionOptions | None = None,
        require_model: RequireModel = "report",
        stop_after: int = DEFAULT_STOP_AFTER,
        budget: Budget | None = None,
    ):
        self.cache = cache
        #: the structured-output dialect each `auto` endpoint took, kept in the cache dir
        self.dialects = DialectMemory(
            cache, f"{cache.directory}/facts.jsonl" if cache.directory else None
        )
        #: `run.budget_usd`: one ledger for every model and role the hub serves (an ablation's
        #: rows share the hub, so the grid shares it); None: no budget
        self.budget = budget
        #: `run.stop_after`: a model is stopped after this many requests in a row failed for
        #: a reason that will not heal (`models.calls.breaker`); 0: never
        self.stop_after = stop_after
        #: `run.require_model`: whether a reply (text or vectors) from another model is refused
        self.require_model: RequireModel = require_model
        self.default_concurrency = default_concurrency
        self.default_rpm = default_rpm
        self.execution = execution or ExecutionOptions()
        self._text: dict[tuple[Any, ...], ModelClient] = {}
        self._embed: dict[tuple[Any, ...], EmbeddingClient] = {}
        #: one limiter per model (`limit_key`), shared by every client of it
        self._limiters: dict[tuple[str, tuple[str, ...]], Limiter] = {}
        #: one circuit breaker per model (`limit_key`), shared as its limiter is: a dead
        #: endpoint is stopped once for every role and client that calls it
        self._breakers: dict[tuple[str, tuple[str, ...]], Breaker] = {}
        #: the ledgers of released clients, per (model, role): usage is counted for the
        #: hub's whole life, so a snapshot taken before a release stays comparable
        self._released: dict[tuple[str, str], Usage] = {}

    @staticmethod
    def _identity(model: str, options: ModelOptions) -> tuple[Any, ...]:
        """Clients are shared by model and every option that changes where or what it is asked
        (how fast is the model's: its one limiter, `_shared_limiter`); `params` may nest dicts and lists (vLLM's `extra_body`), so it is compared as
        canonical JSON."""
        thinking = options.thinking
        return (
            model,
            tuple(options.endpoints),
            options.api_key_env,
            options.device,
            options.dtype,
            _canonical(options.params),
            _canonical(None if thinking is None else thinking.model_dump(exclude_none=True)),
            options.max_image_pixels,
        )

    def _per_endpoint(self, options: ModelOptions) -> ModelOptions:
        """A model on several endpoints gets its `concurrency` per endpoint, the run's when it
        sets none (each endpoint's Router slots are that many)."""
        if len(options.endpoints) < 2 or options.concurrency is not None:
            return options
        return options.model_copy(update={"concurrency": self.default_concurrency})

    def _shared_breaker(self, model: str, options: ModelOptions) -> Breaker:
        """The model's one breaker, whichever client asks."""
        key = limit_key(model, options)
        if key not in self._breakers:
            self._breakers[key] = Breaker(str(parse_model_spec(model)), self.stop_after)
        return self._breakers[key]

    def _shared_limiter(self, model: str, options: ModelOptions, backend: Backend) -> Limiter:
        """The model's one limiter: made for its first client (`_limiter`), shared by the rest."""
        key = limit_key(model, options)
        if key not in self._limiters:
            self._limiters[key] = self._limiter(options, backend)
        return self._limiters[key]

    def _limiter(self, options: ModelOptions, backend: Backend) -> Limiter:
        """The model's limits: its own `concurrency`, else the run's capped by the backend's
        default (an unbuilt backend's planned default, replaced by the built one's); its own
        `rpm` (else the run's) and `tpm`. With neither rate, the concurrency is learnt from 429s.
        On N endpoints, `concurrency`, `rpm` and `tpm` are each endpoint's: the model gets N
        times them."""
        replicas = max(1, len(options.endpoints))
        rpm = options.rpm or self.default_rpm
        limiter = Limiter(
            replicas
            * (options.concurrency or min(self.default_concurrency, backend.default_concurrency)),
            rpm * replicas if rpm else None,
            options.tpm * replicas if options.tpm else None,
        )
        if isinstance(backend, LazyBackend) and not options.concurrency:
            backend.on_built.append(
                lambda real: limiter.resize(min(self.default_concurrency, real.default_concurrency))
            )
        return limiter

    def text_client(self, model: str, options: ModelOptions) -> ModelClient:
        key = self._identity(model, options)
        if key not in self._text:
            options = self._per_endpoint(options)
            backend = build_text_backend(
                parse_model_spec(model), options, lazy=True, execution=self.execution
            )
            if isinstance(backend, LazyBackend):
                backend.on_built.append(
                    lambda real: (
                        real.use_memory(self.dialects) if isinstance(real, TextBackend) else None
                    )
                )
            else:
                backend.use_memory(self.dialects)
            limiter = self._shared_limiter(model, options, backend)
            self._text[key] = ModelClient(
                backend, self.cache, limiter, options, require_model=self.require_model
            )
            self._text[key].breaker = self._shared_breaker(model, options)
            self._text[key].budget = self.budget
        return self._text[key]

    def embedding_client(self, model: str, options: ModelOptions) -> EmbeddingClient:
        key = self._identity(model, options)
        if key not in self._embed:
            backend = build_embedding_backend(
                parse_model_spec(model), options, lazy=True, execution=self.execution
            )
            limiter = self._shared_limiter(model, options, backend)
            self._embed[key] = EmbeddingClient(
                backend, self.cache, limiter, options, self.require_model
            )
            self._embed[key].breaker = self._shared_breaker(model, options)
            self._embed[key].budget = self.budget
        return self._embed[key]

    async def release(self, model: str) -> None:
        """Close and forget every client of `model` (frees a local model's memory)."""
        for clients in (self._text, self._embed):
            for key in [k for k in clients if k[0] == model]:
                client = clients.pop(key)
                for role, usage in client.usage.items():
                    kept = self._released.get((client.model, role), Usage())
                    self._released[client.model, role] = kept + usage
                await client.backend.aclose()
        spec = str(parse_model_spec(model))
        for key in [k for k in self._limiters if k[0] == spec]:
            del self._limiters[key]

    def _clients(self) -> list[ModelClient | EmbeddingClient]:
        return [*self._text.values(), *self._embed.values()]

    def _ledgers(self) -> list[tuple[str, str, Usage]]:
        """(model spec, role, usage) of every client, released ones included."""
        found = [(model, role, usage) for (model, role), usage in self._released.items()]
        for client in self._clients():
            found.extend((client.model, role, usage) for role, usage in client.usage.items())
        return found

    def usage(self) -> dict[str, Usage]:
        """Totals per role over every client."""
        return _totals((role, usage) for _, role, usage in self._ledgers())

    def usage_by_model(self) -> dict[str, Usage]:
        """Totals per model spec over every role."""
        return _totals((model, usage) for model, _, usage in self._ledgers())

    def retries(self) -> tuple[int, str | None]:
        """Attempts sent again after a transient error so far, over every live client, and
        the kind of the last such error (`Sender.retries`)."""
        senders = [client.sender for client in self._clients()]
        total = sum(sender.retries for sender in senders)
        last = next((s.last_retry for s in reversed(senders) if s.last_retry), None)
        return total, last

    def batch_sent_online(self) -> dict[str, int]:
        """Per `batch: true` model, the calls sent online all the same (none: absent)."""
        found: dict[str, int] = {}
        for client in self._clients():
            if client.sent_online:
                found[client.model] = found.get(client.model, 0) + client.sent_online
        return found

    def stopped(self) -> list[Breaker]:
        """The breakers of the models stopped for the run (`models.calls.breaker`)."""
        return [breaker for breaker in self._breakers.values() if breaker.stopped]

    def describe(self) -> list[dict[str, Any]]:
        return [c.backend.describe() for c in self._clients()]

    async def aclose(self) -> None:
        """Close every backend; a local Ray instance this process started stops with them."""
        for client in self._clients():
            await client.backend.aclose()
        if self.execution.ray:
            from titjudge.models.ray.session import release

            release()


def _totals(ledgers: Iterable[tuple[str, Usage]]) -> dict[str, Usage]:
    totals: dict[str, Usage] = {}
    for key, usage in ledgers:
        totals[key] = totals.get(key, Usage()) + usage
    return totals


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def usage_since(before: dict[str, Usage], after: dict[str, Usage]) -> dict[str, Usage]:
    """Usage added between two `ModelHub.usage()` (or `usage_by_model()`) snapshots: one run
    on a shared hub."""
    return {role: total - before.get(role, Usage()) for role, total in after.items()}
