"""Judge kinds, each registered by its own module with `@judge_kind`: its config model, its
ablation heading and its build function. The run config's judge union, the ablation's column
headings and `build_judges` all read the kinds from here, so adding a kind is adding one module
to this package: every module in it is imported on first use of the registry.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union

from pydantic import Field

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.options import JudgeOptions, ModelJudgeOptions
from titjudge.models.core.clients import ClientSource
from titjudge.models.core.options import ModelOptions

#: build(config, building): the judge, checked against its model
Builder = Callable[[Any, Building], Judge]


@dataclass(frozen=True)
class JudgeKind:
    name: str
    config: type[JudgeOptions]
    build: Builder
    #: ablation column heading; `{model}` is replaced by the judge model's short name
    label: str
    #: the heading when several enabled columns have this kind
    label_several: str

    @property
    def describer_bound(self) -> bool:
        """Whether the kind uses the describer's own VLM when it names no model."""
        return issubclass(self.config, ModelJudgeOptions) and self.config.describer_bound

    def heading(self, model_short: str, several: bool) -> str:
        return (self.label_several if several else self.label).format(model=model_short)


_KINDS: dict[str, JudgeKind] = {}
_state = {"discovered": False, "union_built": False}


def judge_kind(
    name: str, *, config: type[JudgeOptions], label: str, label_several: str | None = None
) -> Callable[[Builder], Builder]:
    """Register the decorated build function as judge kind `name` with its config model, whose
    `kind` field must be `Literal[name]`."""

    def register(build: Builder) -> Builder:
        if name in _KINDS:
            raise ValueError(f"judge kind {name!r} is registered twice")
        if config.model_fields["kind"].annotation != Literal[name]:
            raise TypeError(f"{config.__name__}.kind must be Literal[{name!r}]")
        if _state["union_built"]:
            raise RuntimeError(
                f"judge kind {name!r} registered after the run config was built; import its "
                "module before titjudge.config"
            )
        _KINDS[name] = JudgeKind(name, config, build, label, label_several or label)
        return build

    return register


def kinds() -> dict[str, JudgeKind]:
    """Every registered kind, by name, in the order their modules registered them."""
    if not _state["discovered"]:
        _state["discovered"] = True
        package = importlib.import_module("titjudge.judges")
        for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
            importlib.import_module(f"{package.__name__}.{module}")
    return dict(_KINDS)


def tagged_union(members: Sequence[type[JudgeOptions]]) -> Any:
    """A pydantic union of config models told apart by their `kind`."""
    return Annotated[Union[tuple(members)], Field(discriminator="kind")]  # noqa: UP007


def judge_config_union() -> Any:
    """The config of one judge of any registered kind. Kinds registered after this is built
    would be missing from the run config, so registering one then is an error."""
    members = [kind.config for kind in kinds().values()]
    _state["union_built"] = True
    return tagged_union(members)


def build_judge(
    config: JudgeOptions, describer_model: str, describer: ModelOptions, hub: ClientSource
) -> Judge:
    """Build one configured judge; describer-bound kinds that name no model use the describer's
    model, reached with the describer's options."""
    return kinds()[config.kind].build(config, Building(describer_model, describer, hub))


def build_judges(
    configs: Sequence[JudgeOptions],
    describer_model: str,
    describer: ModelOptions,
    hub: ClientSource,
) -> list[Judge]:
    """The configured judges, in config order, each checked against its model before any item
    is judged."""
    return [build_judge(config, describer_model, describer, hub) for config in configs]
