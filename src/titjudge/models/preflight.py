"""The preflight: before any model is built or called, every model a config will use is checked
for what it needs to run, and everything missing is named in one line.

Per backend: `litellm:` a provider litellm knows, the client packages litellm needs for it
(google-auth for Vertex AI, boto3 for Bedrock), and credentials in the environment (the
variable named by `api_key_env`, else the provider's usual ones; an `api_base` server such as
vLLM needs none), exactly as the backend reads them when it is built; for the providers
`models.litellm.providers` lists, without importing litellm (a missing key is reported in well
under a second); `hf:` and `embed:` the
`[local]` extra's libraries and the checkpoint (a folder holding config.json, or a hub id, which
must already be in the Hugging Face cache when HF_HUB_OFFLINE forbids downloading it);
`replay:` the descriptions file. Only names of environment variables are printed, never a value.
Which models a config uses is its command's business (`run.preflight`, `ablation.config`).

A `litellm:` model that already has answers in the run's cache is checked later, when its
backend is built on the first call that misses the cache (`models.core.lazy`): checking it now would
import litellm (~3 s) for a re-run that may never call it. A fresh run's models have no answers,
so they are all checked here.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from titjudge.cache.store import CallCache
from titjudge.errors import ConfigError, ModelSpecError, install_hint
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.provider_names import unknown_provider
from titjudge.models.litellm.providers import listed_problems
from titjudge.models.local.common import resolve_checkpoint
from titjudge.records.spec import ModelSpec, parse_model_spec

#: what the `hf:` and `embed:` backends import whatever the checkpoint
LOCAL_LIBRARIES = ("torch", "transformers")
#: the options that decide whether a model can be reached
_REACH = {"api_base", "api_key_env", "params"}


@dataclass(frozen=True)
class ModelUse:
    """One place a config uses a model: its spec, the options it is reached with, and who
    uses it ('describer', 'judge tit_llm_g', 'row gpt-4o', 'comparer tit_score_8b')."""

    model: str
    options: ModelOptions
    user: str


def model_problems(spec: ModelSpec, options: ModelOptions) -> list[str]:
    """What stops `spec`, reached with `options`, from running; empty when nothing does."""
    if spec.backend == "litellm":
        # a provider the table lists is checked without litellm (its import takes seconds)
        listed = listed_problems(spec, options.api_base, options.api_key_env, options.params)
        if listed is not None:
            return listed
        unknown = unknown_provider(spec, options.api_base, options.params)
        if unknown is not None:  # a typo: refused without importing litellm
            return [unknown]
        from titjudge.models.litellm.backend import setup_problems

        return setup_problems(spec, options.api_base, options.api_key_env, options.params)
    if spec.backend in ("hf", "embed", "clip"):
        return _local_problems(spec, options)
    if spec.backend == "replay" and not Path(spec.model_id).is_file():
        return [f"replay descriptions file {spec.model_id} not found"]
    return []


def _local_problems(spec: ModelSpec, options: ModelOptions) -> list[str]:
    problems = []
    missing = [name for name in LOCAL_LIBRARIES if importlib.util.find_spec(name) is None]
    if missing:
        problems.append(f"{' and '.join(missing)} not installed ({install_hint('local')})")
    revision = options.params.get("revision")
    try:
        checkpoint = resolve_checkpoint(spec, revision if isinstance(revision, str) else None)
    except ModelSpecError as exc:
        return [*problems, str(exc).removeprefix(f"{spec}: ")]
    if not checkpoint.local and _offline() and not _in_hf_cache(checkpoint.source, revision):
        problems.append("not in the Hugging Face cache, and downloads are off (HF_HUB_OFFLINE)")
    return problems


def _offline() -> bool:
    """Whether huggingface_hub may not download (its own reading of these variables)."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in {"1", "ON", "YES", "TRUE"}


def _in_hf_cache(repo_id: str, revision: object) -> bool:
    """Whether the hub id's config.json is in the local Hugging Face cache (no network)."""
    if importlib.util.find_spec("huggingface_hub") is None:
        return False
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(
        repo_id, "config.json", revision=revision if isinstance(revision, str) else None
    )
    return isinstance(found, str)


def _users(names: list[str]) -> str:
    """'describer, judges a, b': users grouped by role, in order of first appearance."""
    roles: dict[str, list[str]] = {}
    for name in names:
        role, _, who = name.partition(" ")
        roles.setdefault(role, [])
        if who and who not in roles[role]:
            roles[role].append(who)
    return ", ".join(
        role if not who else f"{role}{'s' if len(who) > 1 else ''} {', '.join(who)}"
        for role, who in roles.items()
    )


def answered_models(cache_dir: Path | None) -> frozenset[str]:
    """The model specs with answers in the cache at `cache_dir` (none when there is no cache)."""
    if cache_dir is None or not (Path(cache_dir) / "cache.db").is_file():
        return frozenset()
    cache = CallCache(cache_dir)
    try:
        return frozenset(cache.models())
    finally:
        cache.close()


def check_models(
    uses: Iterable[ModelUse],
    source: str,
    answered: frozenset[str] = frozenset(),
    others: Iterable[str] = (),
) -> None:
    """Check every use (a `litellm:` model in `answered` is left to its build); raise one
    `ConfigError` naming every problem, each with its model and its users, e.g.
    `GEMINI_API_KEY not set (litellm:gemini/gemini-2.5-pro: describer, judges tit_llm_g, lmm)`,
    after `others` (the command's own: data files, templates) in the same line."""
    found: dict[tuple[str, str], list[str]] = {}
    checked: dict[tuple[str, str], list[str]] = {}
    for use in uses:
        spec = parse_model_spec(use.model)
        if spec.backend == "litellm" and str(spec) in answered:
            continue
        reach = (str(spec), use.options.model_dump_json(include=_REACH))
        if reach not in checked:
            checked[reach] = model_problems(spec, use.options)
        for problem in checked[reach]:
            found.setdefault((problem, str(spec)), []).append(use.user)
    listed = [*others] + [
        f"{problem} ({spec}: {_users(users)})" for (problem, spec), users in found.items()
    ]
    if not listed:
        return
    count = f"{len(listed)} problem{'s' if len(listed) > 1 else ''}"
    raise ConfigError(f"{source}: preflight found {count}, nothing was called: {'; '.join(listed)}")
