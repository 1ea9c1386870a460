"""The exact requests a config would send for its first prompt, per model and role, sent
nowhere: what `titjudge explain` prints.

The run's own steps (`agents.item`: describe, judge; `agents.finish.judge_pairs`) run over the
first prompt's images under an estimate probe (`models.calls.estimate_probe`) against a scratch
cache, so every call misses, none is sent and no key is read: each call's request, as its
client built it for the cache key, is kept the first time its model, role, kind and template
are met. A description the judges read is a stand-in (only the describer's answer would give
it), and so is a checklist's element list, which each image's verdict call reads (only the
decomposition's answer would give it); the config's judges that ask no model are named apart.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from titjudge.cache.store import CallCache
from titjudge.config.schema import RunConfig
from titjudge.errors import ConfigError
from titjudge.metrics.evaluate import HumanData
from titjudge.models.calls.estimate_probe import EstimateProbe
from titjudge.models.calls.pipeline import CallPipeline
from titjudge.models.calls.probe import ComputeOne
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.records.calls import CallResult
from titjudge.run.context import run_hub
from titjudge.run.estimate import probe_run

#: what the judges' requests quote where the describer's answer would stand
STAND_IN = "<the describer's description of this image: known only once the describer answers>"
#: what a checklist's verdict request lists where the prompt's decomposition would stand
ELEMENTS_STAND_IN = "<this prompt's elements: known only once its decomposition answers>"


@dataclass(frozen=True)
class Planned:
    """One request a model would be sent: who sends it, to which model, built how."""

    role: str
    model: str
    kind: str
    template: str | None
    options: ModelOptions
    request: GenerateRequest | None = None
    #: an embedding call's text
    text: str | None = None


@dataclass
class ExplainProbe(EstimateProbe):
    """An estimate probe that also keeps the first request of each model, role, kind and
    template, and answers a missed description with `STAND_IN` and a missed decomposition
    with `ELEMENTS_STAND_IN`."""

    planned: list[Planned] = field(default_factory=list)
    _met: set[tuple[str, str, str, str | None]] = field(default_factory=set)

    def miss(
        self, client: CallPipeline[Any], key: str, compute: ComputeOne | None = None
    ) -> CallResult[Any]:
        asked = self._asked.get(key)
        if asked is not None:
            template = (asked.template or {}).get("name")
            met = (client.model, asked.role, asked.kind, template)
            if met not in self._met:
                self._met.add(met)
                self.planned.append(
                    Planned(
                        asked.role,
                        client.model,
                        asked.kind,
                        template,
                        client.options,
                        asked.request,
                        asked.text,
                    )
                )
        result = super().miss(client, key, compute)
        if asked is not None and asked.kind == "text" and result.ok:
            result = CallResult(ok=True, value=STAND_IN, raw=STAND_IN)
            self._answers[key] = result
        elif asked is not None and asked.stand_in is not None and result.ok:
            stand_in = asked.stand_in(ELEMENTS_STAND_IN)
            result = CallResult(ok=True, value=stand_in, raw=ELEMENTS_STAND_IN)
            self._answers[key] = result
        return result


async def first_requests(config: RunConfig) -> tuple[str, list[Planned]]:
    """The first prompt's id and the requests its images would send (see the module)."""
    from titjudge.data.human import run_human_data
    from titjudge.data.manifest import load_manifest

    if config.data is None:
        raise ConfigError(f"config {config.name!r} has no 'data' section; add data.manifest")
    all_items = load_manifest(config.data.manifest)
    if not all_items:
        raise ConfigError(f"{config.data.manifest} has no items")
    prompt_id = all_items[0].prompt_id
    items = [item for item in all_items if item.prompt_id == prompt_id]
    human = None  # the human pairs are read only for the pairwise judges, which judge them
    if config.data.human_pairs is not None and not all(j.scores_per_item for j in config.judges):
        kept = {item.item_id for item in items}
        pairs, ranks = run_human_data(all_items, kept, config.data.human_pairs, config.data.ranks)
        human = HumanData(pairs=pairs, ranks=ranks, items=items)
    with tempfile.TemporaryDirectory() as scratch:  # every call misses; nothing is kept
        cache = CallCache(Path(scratch))
        hub = run_hub(config.run, cache, budget=False, require_model="report")
        try:
            probe = ExplainProbe()
            await probe_run(config, hub, items, human, probe=probe)
        finally:
            await hub.aclose()
            cache.close()
    return prompt_id, probe.planned


__all__ = ["ELEMENTS_STAND_IN", "STAND_IN", "ExplainProbe", "Planned", "first_requests"]
