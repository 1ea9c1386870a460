"""`titjudge explain CONFIG`: the exact request each model would be sent, without sending it.

Per role (the describer, each judge that asks a model for a verdict), for the manifest's
first item: the provider's URL, headers (keys redacted) and JSON body, as litellm would send
them (`models.litellm.explain`). The judges' requests quote a stand-in for the description,
which only the describer's answer would give. Nothing is sent and no key is needed: a key
that is not set is a note, not an error. Config problems are one line and exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from titjudge.cli.common import add_set, command


def register(subparsers: argparse._SubParsersAction) -> None:
    p = command(
        subparsers,
        "explain",
        explain,
        "print the exact request each model would be sent for the first item, sending nothing",
    )
    p.add_argument("config", type=Path, help="run config (YAML)")
    add_set(p)


def explain(args: argparse.Namespace) -> int:
    from titjudge.config import load_config
    from titjudge.data.manifest import load_manifest
    from titjudge.errors import ConfigError

    config = load_config(args.config, args.set)
    if config.data is None:
        raise ConfigError(f"config {config.name!r} has no 'data' section; add data.manifest")
    items = load_manifest(config.data.manifest)  # the human pairs are not read
    if not items:
        raise ConfigError(f"{config.data.manifest} has no items")
    for role, model, request, note in asyncio.run(_requests(config, items[0])):
        _print_role(role, model, request, note)
    return 0


async def _requests(config: Any, item: Any) -> list[tuple[str, str, Any, str | None]]:
    """(role, model, options and request or None, note) for the describer and each judge."""
    from titjudge.cache.store import CallCache
    from titjudge.judges.registry import build_judges
    from titjudge.models.calls.structured import response_schema
    from titjudge.models.core.base import GenerateRequest
    from titjudge.models.hub import ModelHub
    from titjudge.prompts.loader import load_template
    from titjudge.records.image_input import ImageInput
    from titjudge.records.images import fit_image
    from titjudge.records.outcomes import Described

    describer = config.describer
    image = ImageInput.from_path(item.image)
    if describer.max_image_pixels is not None:
        image = fit_image(image, describer.max_image_pixels)
    system, user = load_template(describer.prompt).render()
    found: list[tuple[str, str, Any, str | None]] = [
        (
            f"describer (item {item.item_id})",
            describer.model,
            (
                describer,
                GenerateRequest(
                    prompt=user,
                    system=system,
                    images=(image,),
                    max_tokens=describer.max_tokens,
                    temperature=describer.temperature,
                ),
            ),
            None,
        )
    ]
    stand_in = Described(text=f"<the describer's description of item {item.item_id}>")
    with tempfile.TemporaryDirectory() as scratch:  # the hub's cache: nothing is stored
        hub = ModelHub(CallCache(Path(scratch)))
        try:
            judges = build_judges(config.judges, describer.model, describer, hub)
            for judge_config, judge in zip(config.judges, judges, strict=True):
                role = f"judge {judge_config.name} ({judge_config.kind})"
                inner: Any = getattr(judge, "inner", judge)
                reach = getattr(judge_config, "reach", None)
                if reach is None:
                    found.append((role, "", None, "asks no model"))
                    continue
                model, options = reach(describer.model, describer)
                if not hasattr(inner, "verdict_request"):
                    found.append(
                        (
                            role,
                            model,
                            None,
                            f"explain shows llm and lmm verdicts, not {judge_config.kind}",
                        )
                    )
                    continue
                request = inner.verdict_request(item, image, stand_in, 0)
                if isinstance(request, str):
                    found.append((role, model, None, request))
                    continue
                schema = inner.scoring.schema
                if inner.client.backend.capabilities.json_schema:
                    request = _with_schema(request, response_schema(schema), schema.__name__)
                found.append((role, model, (options, request), None))
        finally:
            await hub.aclose()
    return found


def _with_schema(request: Any, schema: dict[str, Any], name: str) -> Any:
    import dataclasses

    return dataclasses.replace(request, json_schema=schema, schema_name=name)


def _print_role(role: str, model: str, planned: Any, note: str | None) -> None:
    from titjudge.models.core.spec import parse_model_spec

    print(f"== {role}: {model}" if model else f"== {role}")
    if planned is None:
        print(f"   {note}")
        return
    options, request = planned
    spec = parse_model_spec(model)
    if spec.backend != "litellm":
        print(f"   {spec.backend}: runs here, nothing is sent over the network")
        return
    from titjudge.models.litellm.explain import explain_request

    explained = explain_request(spec, options, request)
    for line in explained.notes:
        print(f"   note: {line}")
    print(f"POST {explained.url}")
    for name, value in explained.headers.items():
        print(f"{name}: {value}")
    print(json.dumps(explained.body, indent=2, ensure_ascii=False))
    print()


__all__ = ["register"]
