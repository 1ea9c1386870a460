"""Where local models run: in the run's own process, or in Ray actors (`run.execution`).

With `backend: ray`, every `hf:` and `embed:` model is loaded inside Ray actors (one per GPU by
default) and its calls are sent to them; the run's process keeps the graph, the cache, the
limits and the retries, and never loads the weights itself. `litellm:` and `replay:` models are
unaffected. This module only holds the options: it imports nothing of Ray.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from titjudge.models.core.options import StrictModel
from titjudge.records.spec import ModelSpec

#: the backends whose work moves into Ray actors when execution is `ray`
RAY_BACKENDS = ("hf", "embed")


class ExecutionOptions(StrictModel):
    """`run.execution`: in-process (the default) or Ray actors for local models."""

    backend: Literal["process", "ray"] = Field(
        "process",
        description="'process': local models run in the run's process; 'ray': in Ray actors",
    )
    address: str | None = Field(
        None,
        description="Ray cluster to connect to (e.g. 'head-node:6379' or 'auto'); default: "
        "RAY_ADDRESS when set, else a local Ray instance the run starts and stops",
    )
    num_cpus: int | None = Field(
        None, ge=1, description="CPUs of the local Ray instance the run starts (default: all)"
    )
    actors_per_model: int | None = Field(
        None,
        ge=1,
        description="actors per hf:/embed: model (default: one per free GPU for a GPU model, "
        "1 on CPU)",
    )
    num_gpus_per_actor: float | None = Field(
        None,
        ge=0,
        description="GPUs per actor (default: 1 when the cluster has GPUs and the model's "
        "device is not 'cpu', else 0)",
    )
    num_cpus_per_actor: float = Field(
        1.0, gt=0, description="CPUs per actor (also its torch thread count on CPU)"
    )
    max_restarts: int = Field(
        3, ge=0, description="times Ray restarts an actor that died (its model loads again)"
    )

    @model_validator(mode="after")
    def _ray_only(self) -> ExecutionOptions:
        if self.backend != "ray":
            # a dumped config holds every default: only values that differ from it count
            given = sorted(
                name
                for name, field in type(self).model_fields.items()
                if name != "backend" and getattr(self, name) != field.default
            )
            if given:
                raise ValueError(
                    f"{', '.join(given)} only apply with backend: ray (backend is {self.backend!r})"
                )
        return self

    @property
    def ray(self) -> bool:
        return self.backend == "ray"

    def moves(self, spec: ModelSpec) -> bool:
        """Whether `spec`'s model runs in Ray actors under these options."""
        return self.ray and spec.backend in RAY_BACKENDS


__all__ = ["RAY_BACKENDS", "ExecutionOptions"]
