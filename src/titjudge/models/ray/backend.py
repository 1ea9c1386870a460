"""`hf:` and `embed:` backends whose work runs in Ray actors (`run.execution.backend: ray`).

The run's process keeps everything but the model: the graph, the cache, claims, limits and
retries (`models.calls.pipeline`) all stay here, and only the backend's compute calls (`generate`,
`embed`) cross to the actors. Each actor builds the real backend itself from the same spec and
options (`models.ray.actors`), so its weights load there and this process never imports torch
for it. Requests travel as they are: images are the PNG/JPEG bytes the run already holds,
which the backend decodes itself.

Sizing: `num_gpus_per_actor` (default 1 when the cluster has GPUs and the model's device is not
'cpu', else 0, with `num_cpus_per_actor` CPUs), `actors_per_model` (default one per free GPU for
a GPU model, 1 on CPU). Actors that cannot all be placed in what the cluster has free are
refused with the numbers, rather than left waiting. Each call goes to the actor with the fewest
calls in flight (in turn among equals), where it joins that actor's own batches.

Errors: an actor that died (`RayActorError`) is a transient error, so the call layer's retry
reaches the restarted actor (Ray restarts it up to `max_restarts` times) or another one; an
actor that just failed is passed over for a while when another is there. A model error inside
the actor keeps its kind and its message (`ray_actors.RemoteFailure`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from typing import Any

from titjudge.errors import ConfigError, ModelSpecError
from titjudge.models.core.base import (
    Backend,
    Capabilities,
    EmbeddingBackend,
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
    TransientError,
)
from titjudge.models.core.execution import ExecutionOptions
from titjudge.models.core.lazy import BackendPlan
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.common import first_line
from titjudge.models.ray.session import check_installed, connect
from titjudge.records.spec import ModelSpec

#: seconds an actor that just failed is passed over while another one is up
DOWN_SECONDS = 30.0
#: seconds to wait for resources that released actors still hold before refusing
ROOM_WAIT_SECONDS = 10.0


def check_use(spec: ModelSpec, options: ModelOptions) -> None:
    """Before anything is built: Ray is installed, and the device does not name one GPU."""
    check_installed()
    device = (options.device or "auto").strip().lower()
    if ":" in device:
        raise ConfigError(
            f"{spec}: device {options.device!r} names one GPU, but with run.execution.backend "
            "'ray' each actor sees only the GPUs Ray gives it: use 'auto', 'cuda' or 'cpu'"
        )


def plan_in_actors(plan: BackendPlan, execution: ExecutionOptions) -> BackendPlan:
    """The in-process plan (capabilities, cache facts: the same keys either way) for a model
    that will run in actors; the limiter's default covers every actor."""
    return dataclasses.replace(
        plan,
        default_concurrency=plan.default_concurrency * (execution.actors_per_model or 1),
        facts={**plan.facts, "execution": "ray"},
    )


def build(
    kind: str, spec: ModelSpec, options: ModelOptions, execution: ExecutionOptions
) -> Backend:
    """The backend for `spec` ('text' or 'embed'), its actors started and their model loaded."""
    pool = ActorPool(kind, spec, options, execution)
    if kind == "text":
        return RayTextBackend(spec, pool)
    return RayEmbeddingBackend(spec, pool)


class ActorPool:
    """The actors holding one model, and which of them gets the next call."""

    def __init__(
        self, kind: str, spec: ModelSpec, options: ModelOptions, execution: ExecutionOptions
    ):
        import ray

        from titjudge.models.ray.actors import ModelActor

        self.spec = spec
        cluster = connect(execution)
        gpus, count = _sizing(spec, options, execution)
        _wait_for_room(spec, count, gpus, execution.num_cpus_per_actor)
        # the options as the backend reads them (not the config section's own class)
        plain = ModelOptions(**{name: getattr(options, name) for name in ModelOptions.model_fields})
        self.actors = [
            ModelActor.options(  # type: ignore[attr-defined]
                num_cpus=execution.num_cpus_per_actor,
                num_gpus=gpus,
                max_restarts=execution.max_restarts,
                max_task_retries=0,  # the call layer retries, with its own backoff
            ).remote(kind, str(spec), plain)
            for _ in range(count)
        ]
        try:
            facts = ray.get([actor.facts.remote() for actor in self.actors])
        except ray.exceptions.RayError as exc:
            self.close()
            raise ModelSpecError(
                f"{spec}: a Ray actor could not start: {first_line(exc)}"
            ) from None
        errors = [f["error"] for f in facts if f.get("error")]
        if errors:
            self.close()
            raise ModelSpecError(errors[0])
        self.facts: dict[str, Any] = facts[0]
        self.record = {
            "backend": "ray",
            "cluster": cluster,
            "actors": count,
            "num_gpus_per_actor": gpus,
            "num_cpus_per_actor": execution.num_cpus_per_actor,
        }
        self.inflight = [0] * count
        #: calls each actor answered (a model error is an answer too)
        self.served = [0] * count
        self.down_until = [0.0] * count
        self._turn = 0

    @property
    def size(self) -> int:
        return len(self.actors)

    def pick(self) -> int:
        """The actor for the next call: up before recently failed, then fewest in flight,
        then in turn."""
        now = time.monotonic()
        order = [(self._turn + k) % self.size for k in range(self.size)]
        self._turn = (self._turn + 1) % self.size
        return min(order, key=lambda i: (self.down_until[i] > now, self.inflight[i]))

    async def call(self, method: str, argument: Any) -> Any:
        """`method(argument)` on one actor; a RemoteFailure is raised as its own kind."""
        import ray

        from titjudge.models.ray.actors import RemoteFailure

        index = self.pick()
        self.inflight[index] += 1
        try:
            ref = getattr(self.actors[index], method).remote(argument)
            try:
                reply = await ref
            except asyncio.CancelledError:  # the call timed out here: stop it there too
                ray.cancel(ref)
                raise
        except ray.exceptions.RayActorError as exc:
            self.down_until[index] = time.monotonic() + DOWN_SECONDS
            raise TransientError(
                f"{self.spec}: Ray actor {index} is not available: {first_line(exc)}"
            ) from None
        except ray.exceptions.RayError as exc:
            cause = getattr(exc, "cause", None) or exc
            raise PermanentError(f"{self.spec}: Ray actor {index}: {first_line(cause)}") from None
        finally:
            self.inflight[index] -= 1
        self.served[index] += 1
        if isinstance(reply, RemoteFailure):
            raise reply.error()
        return reply

    def close(self) -> None:
        import ray

        for actor in self.actors:
            ray.kill(actor)
        self.actors = []


def _sizing(
    spec: ModelSpec, options: ModelOptions, execution: ExecutionOptions
) -> tuple[float, int]:
    """(GPUs per actor, actors) for this model on this cluster."""
    import ray

    cluster_gpus = float(ray.cluster_resources().get("GPU", 0.0))
    on_cpu = (options.device or "auto").strip().lower() == "cpu"
    gpus = execution.num_gpus_per_actor
    if gpus is None:
        gpus = 1.0 if cluster_gpus and not on_cpu else 0.0
    if gpus and on_cpu:
        raise ConfigError(
            f"{spec}: device is 'cpu' but run.execution.num_gpus_per_actor is {gpus:g}"
        )
    if execution.actors_per_model is not None:
        return gpus, execution.actors_per_model
    if not gpus:
        return gpus, 1
    free = float(ray.available_resources().get("GPU", 0.0))
    return gpus, max(1, int(free // gpus))


def _wait_for_room(spec: ModelSpec, count: int, gpus: float, cpus: float) -> None:
    """Wait (briefly: released actors free their resources a moment later) until `count`
    actors fit in what the cluster has free; refuse with the numbers if they never do."""
    import ray

    deadline = time.monotonic() + ROOM_WAIT_SECONDS
    while True:
        free = ray.available_resources()
        free_gpus, free_cpus = float(free.get("GPU", 0.0)), float(free.get("CPU", 0.0))
        if free_gpus + 1e-9 >= count * gpus and free_cpus + 1e-9 >= count * cpus:
            return
        if time.monotonic() >= deadline:
            raise ConfigError(
                f"{spec}: {count} Ray actor(s) need {count * gpus:g} GPU(s) and {count * cpus:g} "
                f"CPU(s), but the cluster has {free_gpus:g} GPU(s) and {free_cpus:g} CPU(s) free "
                "(other models' actors hold the rest); lower run.execution.actors_per_model, "
                "num_gpus_per_actor (e.g. 0.5 to share a GPU) or num_cpus_per_actor"
            )
        time.sleep(0.2)


class _Pooled:
    """What a backend served by an `ActorPool` reports: its facts come from the actors."""

    pool: ActorPool

    def cache_facts(self) -> dict[str, Any]:
        return dict(self.pool.facts["cache_facts"])

    def describe(self) -> dict[str, Any]:
        return {**self.pool.facts["describe"], "execution": self.pool.record}

    async def aclose(self) -> None:
        self.pool.close()


class RayTextBackend(_Pooled, TextBackend):
    """An `hf:` model served by Ray actors."""

    def __init__(self, spec: ModelSpec, pool: ActorPool):
        super().__init__(spec)
        self.pool = pool
        self.capabilities = Capabilities(**(pool.facts["capabilities"] or {}))
        self.default_concurrency = pool.size * int(pool.facts["default_concurrency"])

    async def generate(self, request: GenerateRequest) -> Generation:
        reply: Generation = await self.pool.call("generate", request)
        return reply


class RayEmbeddingBackend(_Pooled, EmbeddingBackend):
    """An `embed:` model served by Ray actors."""

    def __init__(self, spec: ModelSpec, pool: ActorPool):
        super().__init__(spec)
        self.pool = pool
        self.default_concurrency = pool.size * int(pool.facts["default_concurrency"])

    async def embed(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        vectors: list[list[float]] = await self.pool.call("embed", texts)
        return vectors

    async def embed_each(self, texts: list[str]) -> list[list[float] | BaseException]:
        """Each text's vector, or its own error (sent back as a RemoteFailure)."""
        from titjudge.models.ray.actors import RemoteFailure

        if not texts:
            return []
        answers: list[list[float] | RemoteFailure] = await self.pool.call("embed_each", texts)
        return [a.error() if isinstance(a, RemoteFailure) else a for a in answers]


__all__ = [
    "ActorPool",
    "RayEmbeddingBackend",
    "RayTextBackend",
    "build",
    "check_use",
    "plan_in_actors",
]
