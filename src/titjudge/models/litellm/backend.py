"""`litellm:<provider/model>`: any litellm provider (Gemini, OpenAI, vLLM, ...).

litellm's own retries are off (`num_retries=0, max_retries=0`): the call layer retries
with tenacity, only on transient errors (litellm's would also retry 400s). Its disk
cache is not used either (a hit needs fastapi); ours is. Images go as base64 data URIs.
Its exceptions become titjudge's error classes in `models.litellm.errors.classify`; what a model
needs set up (a key, a client package, a known provider) is checked here (`setup_problems`).
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
from typing import Any

from titjudge.errors import ConfigError, did_you_mean
from titjudge.models.core.base import (
    GenerateRequest,
    Generation,
    MissingCredentialsError,
    TextBackend,
)
from titjudge.models.core.image_limit import ImageLimit
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.dialects import (
    AUTO_ORDER,
    Dialect,
    DialectMemory,
    response_kwargs,
    send_learning,
)
from titjudge.models.litellm.http import http_client
from titjudge.models.litellm.image_limits import image_limit_for
from titjudge.models.litellm.loaded import litellm_module
from titjudge.models.litellm.messages import build_messages
from titjudge.models.litellm.providers import (
    listed_provider,
    missing_keys,
    missing_packages,
)
from titjudge.models.litellm.reply import generation_from
from titjudge.models.litellm.schemas import gemini_schema, inline_ref_siblings, openai_strict_schema
from titjudge.models.litellm.settings import DEFAULT_CONCURRENCY, SELF_HOSTED, settings
from titjudge.models.litellm.wire.client import WireClient
from titjudge.models.litellm.wire.errors import WireError, classify_wire_error
from titjudge.records.spec import ModelSpec
from titjudge.safety import register_secret


class LiteLLMBackend(TextBackend):
    default_concurrency = DEFAULT_CONCURRENCY

    def __init__(self, spec: ModelSpec, options: ModelOptions, *, offline: bool = False):
        """`offline`: build what a request would be without reading a key or checking the
        provider's setup (`titjudge explain`); such a backend sends nothing it is not given a
        key for."""
        super().__init__(spec)
        self.settings = settings(spec, options, read_key=not offline)
        self.api_base = self.settings.api_base
        self.timeout = self.settings.timeout
        self.params = self.settings.params
        self.family = self.settings.family
        self.thinking = self.settings.thinking
        if not offline:
            self._check_setup()
        self._api_key = self.settings.api_key
        register_secret(self._api_key)
        self.capabilities = self.settings.capabilities
        self._schemas: dict[str, tuple[dict[str, Any], bool]] = {}
        #: what `auto` endpoints took (the hub gives its own, kept in the cache dir)
        self.dialects = DialectMemory()
        #: the model ids the endpoint's /v1/models lists (asked once, when a reply echoes)
        self._served: list[str] | None = None
        self._serving: asyncio.Future[list[str] | None] | None = None
        route = self.settings.direct
        #: the direct path (`models.litellm.wire`), or None: the requests go through litellm
        self.wire = WireClient(route, spec.model_id, self._api_key) if route else None

    def _check_setup(self) -> None:
        """Refuse to build when the provider is unknown or its credentials are absent (the
        variable named by `api_key_env`, else the provider's usual ones, which litellm reads).
        A model sent direct is checked from the providers' tables, without litellm."""
        provider = listed_provider(self.spec, self.params) if self.settings.direct else None
        if provider is None:
            check_setup(self.spec, self.api_base, self.settings.api_key_env, self.params)
            return
        missing = missing_keys(provider, self.api_base, self.settings.api_key_env)
        if missing:
            raise MissingCredentialsError(self.spec, missing)

    def describe(self) -> dict[str, Any]:
        learned = self.dialects.known(self.endpoint) if self.settings.structured == "auto" else None
        served = {"served_models": self._served} if self._served else {}
        return {**super().describe(), **self.settings.facts(learned), **served}

    def cache_facts(self) -> dict[str, Any]:
        return self.settings.cache_facts()

    def image_limit(self) -> ImageLimit | None:
        return image_limit_for(self.spec.model_id, self.params)

    def thinking_reserve(self) -> int | None:
        return self.thinking.reserve

    def use_memory(self, memory: DialectMemory) -> None:
        """Where an `auto` model's endpoint dialect is learnt and kept (the hub's, shared by
        its backends and kept in the cache dir)."""
        self.dialects = memory

    @property
    def endpoint(self) -> str:
        """The endpoint an `auto` dialect is learnt for (a list's first: replicas of one server)."""
        base = self.api_base[0] if isinstance(self.api_base, list) else self.api_base
        return (base or f"provider:{self.spec.model_id.partition('/')[0]}").rstrip("/")

    def dialect(self) -> Dialect:
        """The dialect a request is sent in now: the configured one, else what the endpoint
        took (`auto`), else the first `auto` tries."""
        setting = self.settings.structured
        if setting != "auto":
            return setting  # type: ignore[return-value]
        return self.dialects.dialect(self.endpoint) or AUTO_ORDER[0]

    def response_format(self, schema: dict[str, Any], name: str) -> dict[str, Any]:
        """The `json_schema` response_format (`structured_kwargs` in that dialect)."""
        return self.structured_kwargs(schema, name, "json_schema")["response_format"]

    def structured_kwargs(
        self, schema: dict[str, Any], name: str, dialect: Dialect
    ) -> dict[str, Any]:
        """What asks for JSON of `schema` in `dialect`: the schema in the provider's subset,
        OpenAI strict mode where the schema allows it."""
        key = json.dumps(schema, sort_keys=True)
        if key not in self._schemas:
            subset = self.settings.rules.schema_subset
            if subset == "gemini":
                self._schemas[key] = (gemini_schema(schema), False)
            elif subset == "openai_strict":
                made = openai_strict_schema(schema)
                self._schemas[key] = (made, True) if made else (inline_ref_siblings(schema), False)
            else:
                self._schemas[key] = (inline_ref_siblings(schema), False)
        sent, strict = self._schemas[key]
        return response_kwargs(dialect, sent, name, strict)

    def request_kwargs(
        self, request: GenerateRequest, dialect: Dialect | None = None
    ) -> dict[str, Any]:
        """Everything sent for `request` (the tests read this to see what a provider gets);
        a schema goes in `dialect` (default: `dialect()`)."""
        kwargs: dict[str, Any] = {
            "model": self.spec.model_id,
            "messages": build_messages(request, single_turn=self.settings.rules.single_turn_reask),
            "max_tokens": request.max_tokens + self.thinking.reserve,
            "timeout": self.timeout,
            "num_retries": 0,
            "max_retries": 0,
        }
        if request.temperature is not None and not (
            # a family that takes only the provider's default (OpenAI reasoning models, Claude
            # while it thinks) gets none; the config resolves such a role's to None, so this
            # only guards callers that build requests themselves
            self.settings.omits_temperature and request.temperature != 1
        ):
            kwargs["temperature"] = request.temperature
        kwargs.update(copy.deepcopy(self.params))
        kwargs.update(self.thinking.kwargs)
        if self.thinking.body:
            kwargs["extra_body"] = _deep_merge(kwargs.get("extra_body") or {}, self.thinking.body)
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if request.json_schema is not None:
            asked = self.structured_kwargs(
                request.json_schema, request.schema_name or "output", dialect or self.dialect()
            )
            if "extra_body" in asked:
                asked["extra_body"] = _deep_merge(
                    kwargs.get("extra_body") or {}, asked["extra_body"]
                )
            kwargs.update(asked)
        if request.top_logprobs:
            kwargs["logprobs"] = True
            kwargs["top_logprobs"] = request.top_logprobs
        if request.sample and request.temperature and "temperature" in kwargs:
            kwargs.setdefault("seed", request.sample)
        return kwargs

    async def generate(self, request: GenerateRequest) -> Generation:
        """The reply to `request`; a schema under `auto` goes in the dialect its endpoint
        takes, learnt on first use (`models.litellm.dialects.send_learning`). At a self-hosted
        endpoint whose reply only echoes the model asked for, the model is what the endpoint
        says it serves (`served_model`)."""
        if request.json_schema is None or self.settings.structured != "auto":
            generation = await self.send(self.request_kwargs(request))
        else:

            async def send_in(dialect: Dialect) -> Generation:
                return await self.send(self.request_kwargs(request, dialect))

            generation = await send_learning(self.dialects, self.endpoint, send_in)
        if self.api_base and generation.model is not None and self.self_hosted:
            generation.model = await self.served_model(generation.model)
        return generation

    @property
    def self_hosted(self) -> bool:
        """An OpenAI-compatible server at the config's api_base (vLLM, SGLang, llama.cpp,
        Ollama, ...), not a hosted provider's own API reached through a proxy URL."""
        provider = str(
            self.params.get("custom_llm_provider") or self.spec.model_id.partition("/")[0]
        )
        return provider in SELF_HOSTED

    async def served_model(self, said: str) -> str:
        """The model that answered, where a reply's `model` proves nothing: a server that
        echoes the request's model (llama-cpp-python does, whatever it loaded; so do Ollama,
        SGLang and TGI) is asked its `/v1/models` once, and when the name asked for is not
        among what it serves, the one model it serves answers (several: all are named).
        A name the reply gives other than the one sent is the server's own, and kept."""
        asked = self.spec.model_id.partition("/")[2] or self.spec.model_id
        if said != asked:
            return said
        if self._served is None:  # asked once, however many replies wait for it
            if self._serving is None:
                self._serving = asyncio.ensure_future(
                    served_models(self.endpoint, self._api_key, self.timeout)
                )
            serving = self._serving
            found = await asyncio.shield(serving)
            if found is None:  # no answer (a busy single-slot server, a lost connection):
                if self._serving is serving:  # the next reply asks again; this one's stands
                    self._serving = None
                return said
            self._served = found
        served = self._served
        if not served or said in served:
            return said
        return served[0] if len(served) == 1 else " or ".join(served)

    async def send(self, kwargs: dict[str, Any]) -> Generation:
        """One request as built by `request_kwargs`: on the direct path where the model
        takes it (`wire`), else through `litellm.acompletion`."""
        if self.wire is not None:
            generation = await self.wire.send(kwargs)
        else:
            generation = generation_from(await litellm_module().acompletion(**kwargs))
        generation.max_tokens_sent = kwargs["max_tokens"]
        return generation

    def classify_error(self, exc: BaseException) -> BaseException:
        where = self.api_base if isinstance(self.api_base, str) else None
        if isinstance(exc, WireError):
            return classify_wire_error(exc, where)
        from titjudge.models.litellm.errors.classify import classify_litellm_error

        return classify_litellm_error(exc, where)

    async def aclose(self) -> None:
        if self.wire is not None:
            await self.wire.aclose()
        await super().aclose()

    def batch_api(self) -> Any:
        """The provider's batch API for this model, or None (`models.litellm.batch.api`); one
        per backend, as an adapter keeps what the bodies it built need when sent (Anthropic's
        betas)."""
        from titjudge.models.litellm.batch.api import batch_api_for

        if not hasattr(self, "_batch_api"):
            self._batch_api = batch_api_for(self, self.spec.model_id, self.params, self._api_key)
        return self._batch_api

    def answered_by(self, generation: Generation) -> str | None:
        """What the reply's own model field says (litellm's `response.model`), never the model
        asked for: a provider may answer with another (see `models.calls.provenance`)."""
        return generation.model


async def served_models(base: str, key: str | None, timeout: float) -> list[str] | None:
    """The ids `base`/models lists (OpenAI's "List models": `{"data": [{"id": ...}]}`, which
    vLLM, SGLang, llama-server, llama-cpp-python and Ollama serve); empty when it answers
    otherwise (the reply's own model then stands); None when no answer came within the
    model's `timeout` (a server with one slot answers the list after the completions ahead of
    it: a shorter wait missed it under load, and every reply then kept the name asked for)."""
    import httpx

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with http_client(timeout) as client:
            answer = await client.get(f"{base.rstrip('/')}/models", headers=headers)
    except httpx.HTTPError:
        return None
    try:
        data = answer.json().get("data") if answer.status_code == 200 else None
    except (ValueError, AttributeError):
        return []
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and m.get("id")]


def setup_problems(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None = None,
) -> list[str]:
    """What stops `spec` from being called as configured, found without calling it: a provider
    litellm does not know, or credentials absent from the environment (a variable named by
    `api_key_env`, else any of the provider's usual ones; an `api_base` stands in for the
    provider's base-URL variables, and providers that need no key, such as hosted_vllm, need
    none; a list of endpoints serves one model, so its first stands for all). Only variable
    names appear, never a value."""
    unknown, packages, missing = _setup(spec, api_base, api_key_env, params)
    if unknown is not None:
        return [unknown]
    return [
        *([packages] if packages else []),
        *([f"{' or '.join(missing)} not set"] if missing else []),
    ]


def check_setup(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None = None,
) -> None:
    """`setup_problems` as errors, for a backend's build (on the first call that must be sent):
    an unknown provider or a missing client package is a ConfigError; absent credentials a MissingCredentialsError, which
    stops the run (exit 2) rather than failing each call."""
    unknown, packages, missing = _setup(spec, api_base, api_key_env, params)
    if unknown is not None:
        raise ConfigError(f"{spec}: {unknown}")
    if packages:
        raise ConfigError(f"{spec}: {packages}")
    if missing:
        raise MissingCredentialsError(spec, missing)


def _setup(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None,
) -> tuple[str | None, str | None, list[str]]:
    """(why litellm cannot serve `spec`, or None; the client packages it lacks for the
    provider, or None; the credential variables missing)."""
    litellm = litellm_module()
    api_base = api_base[0] if isinstance(api_base, list) else api_base
    custom = (params or {}).get("custom_llm_provider")
    try:
        _, provider, _, _ = litellm.get_llm_provider(
            model=spec.model_id, custom_llm_provider=custom, api_base=api_base
        )
    except Exception:  # litellm raises BadRequestError: "LLM Provider NOT provided"
        return _unknown_provider(spec.model_id), None, []
    packages = missing_packages(provider)
    if api_key_env is not None:
        return None, packages, [] if os.environ.get(api_key_env) else [api_key_env]
    model = f"{provider}/{spec.model_id}" if custom else spec.model_id
    found = litellm.validate_environment(model=model, api_base=api_base)
    missing = [
        k for k in found.get("missing_keys", []) if not (api_base and k.endswith("API_BASE"))
    ]
    if missing and not found.get("keys_in_environment"):
        return None, packages, missing
    return None, packages, []


def _unknown_provider(model_id: str) -> str:
    known = [getattr(p, "value", str(p)) for p in litellm_module().provider_list]
    provider, slash, _ = model_id.partition("/")
    if not slash:
        return (
            f"litellm cannot tell which provider serves {model_id!r}; write it as "
            "'provider/model', e.g. 'openai/gpt-4o'"
        )
    return f"unknown litellm provider {provider!r}{did_you_mean(provider, known)}"


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = copy.deepcopy(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def supports_top_logprobs(model_id: str) -> bool | None:
    """Whether litellm's provider table lists `top_logprobs` for `model_id` (Anthropic and
    Ollama do not, for example); None when it cannot tell (an unknown provider: the run finds
    out per call). litellm is imported here, after LITELLM_LOCAL_MODEL_COST_MAP is set (a bare
    `import litellm` fetches its price map online: ~2.4 s of retries offline)."""
    try:
        params = litellm_module().get_supported_openai_params(model=model_id)
    except Exception:
        return None
    return None if params is None else "top_logprobs" in params


__all__ = ["LiteLLMBackend", "check_setup", "setup_problems", "supports_top_logprobs"]
