"""`titjudge explain CONFIG`: the exact request each model would be sent, without sending it.

Per model and role, for the manifest's first prompt: the describer's request, each judge's
(llm, lmm, lmm_yes, checklist, pairwise, embedding: whatever the run would ask a model),
found by running the run's own steps against a scratch cache (`run.explain`), so what is
shown is what the run builds. For a `litellm:` model, the provider's URL, headers (keys
redacted) and JSON body as litellm would send them (`models.litellm.explain`); images are
summarized. The judges' requests quote a stand-in for the description, which only the
describer's answer would give, and a checklist's verdict request a stand-in for the prompt's
elements, which only its decomposition would give. Nothing is sent. The run's own preflight
comes first: what `titjudge run` would refuse (no image readable, a key not set, an unknown
provider, a checkpoint not there), explain refuses in the same one line, exit 2; a model whose
answers are in the run's cache is not checked, as the run does not, and its missing key is a
note beside its request. Config problems are one line and exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from titjudge.cli.common import command, config_args, preflight


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `explain`."""
    command(
        subparsers,
        "explain",
        explain,
        "print the exact request each model would be sent for the first prompt, sending "
        "nothing, after the run's own preflight",
        *config_args(limit=False),
    )


def explain(args: argparse.Namespace) -> int:
    from titjudge.config.load import load_config
    from titjudge.run.explain import first_requests

    config = load_config(args.config, args.set)
    preflight(config, str(args.config))
    prompt_id, planned = asyncio.run(first_requests(config))
    print(f"# the requests for prompt {prompt_id}'s images (the manifest's first prompt)\n")
    memory = _dialects(config.run.cache_dir)
    for each in planned:
        _print_planned(each, memory)
    asking = {each.model for each in planned}
    for judge in config.judges:
        reach = getattr(judge, "reach", None)
        if reach is None:
            print(f"== judge {judge.name} ({judge.kind}): asks no model\n")
        elif reach(config.describer.model, config.describer)[0] not in asking:
            print(f"== judge {judge.name} ({judge.kind}): no request reached for this prompt\n")
    return 0


def _dialects(cache_dir: Any) -> Any:
    """What the run's cache dir says `auto` endpoints took (None: no cache there yet)."""
    from titjudge.cache.store import CacheError, CallCache
    from titjudge.models.litellm.dialects import DialectMemory

    try:
        return DialectMemory(CallCache(cache_dir, create=False)) if cache_dir else None
    except CacheError:
        return None


def _print_planned(planned: Any, memory: Any = None) -> None:
    from titjudge.models.litellm.settings import SELF_HOSTED
    from titjudge.records.spec import parse_model_spec

    what = planned.role if planned.template is None else f"{planned.role}, {planned.template}"
    print(f"== {what} ({planned.kind}): {planned.model}")
    spec = parse_model_spec(planned.model)
    if spec.backend != "litellm":
        print(f"   {spec.backend}: runs here, nothing is sent over the network\n")
        return
    if planned.request is None:  # an embedding: {"model", "input"} to <api_base>/embeddings
        provider, _, model = spec.model_id.partition("/")
        base = planned.options.endpoints[0] if planned.options.endpoints else None
        if base is not None and provider in SELF_HOSTED:
            # an OpenAI-compatible server gets the model without litellm's provider prefix
            print(f"POST {base.rstrip('/')}/embeddings")
            body = {"model": model, "input": [planned.text]}
        else:
            print(f"   note: litellm translates this for the {provider} provider")
            body = {"model": spec.model_id, "input": [planned.text]}
        print(json.dumps(body, indent=2, ensure_ascii=False))
        print()
        return
    from titjudge.models.litellm.explain import explain_request

    explained = explain_request(spec, planned.options, planned.request, memory)
    for line in explained.notes:
        print(f"   note: {line}")
    print(f"POST {explained.url}")
    for name, value in explained.headers.items():
        print(f"{name}: {value}")
    print(json.dumps(explained.body, indent=2, ensure_ascii=False))
    print()


__all__ = ["register"]
