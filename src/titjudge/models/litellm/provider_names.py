"""Whether litellm could route a model by its provider prefix, known without importing litellm
(~3 s of CPU; more on a busy machine): a misspelt provider (`litellm:opneai/gpt-4o`) is refused
by the preflight in well under a second, with or without an `api_base`, and nothing litellm
could route is refused.

The rules are litellm's own, in its order (litellm 1.110,
litellm/litellm_core_utils/get_llm_provider_logic.py `_get_llm_provider`): USE_LITELLM_PROXY
routes everything to the proxy; `custom_llm_provider` names the provider; a prefix that names a
provider (`provider_list`, the `LlmProviders` enum in litellm/types/utils.py, and the
JSON-configured providers of litellm/llms/openai_like/providers.json); an `api_base` at a
known provider's URL (`openai_compatible_endpoints`, litellm/constants.py, matched by host and
path as `_endpoint_matches_api_base` does); a model name its price map lists
(model_prices_and_context_window_backup.json), its routing rules (the map's
`fallback_generalizations`), a Replicate version id (a `:`), and a few name prefixes routed by
`model.startswith`. Anything else litellm refuses: "LLM Provider NOT provided".

The tables are litellm's at `LITELLM_RELEASE`, the release requirements.lock pins;
tests/models/test_provider_names.py compares them with that litellm, so they cannot drift.
Under any other installed release they are read from its files instead (still no import), so
a provider a newer litellm adds is never refused by an older table.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from titjudge.errors import did_you_mean
from titjudge.records.spec import ModelSpec

#: the litellm release the tables below were read from
LITELLM_RELEASE = "1.110.2"

#: every provider litellm routes by a model's prefix
PROVIDERS = frozenset(
    """
    a2a a2a_agent abliteration ai21 ai21_chat aiand aihubmix aiml aiohttp_openai amazon_nova
    anthropic anthropic_text apertis assemblyai auto_router aws_polly aws_textract azure
    azure_ai azure_speech azure_text baseten bedrock bedrock_mantle bespoke bigmodel
    black_forest_labs bytez cerebras charity_engine chatgpt chutes clarifai clf_ai_gateway
    cloudflare codestral cognition cohere cohere_chat cometapi compactifai coralbricks cortecs
    crusoe cursor custom custom_openai darkbloom dashscope databricks databricks_agent datarobot
    deepgram deepinfra deepseek docker_model_runner dotprompt edenai elevenlabs empiriolabs
    empower eu_jev fal_ai featherless_ai fireworks_ai friendliai galadriel gdc gemini gigachat
    github github_copilot gmi gradient_ai groq helicone heroku hosted_vllm hostinger_router
    huggingface humanloop hyperbolic inception inferenceapis infinity jina_ai kyma lambda_ai
    langflow langfuse langgraph laya lemonade libertai litellm_agent litellm_proxy llamafile
    llamagate lm_studio manus maritalk meta meta_llama microsoft_365_copilot milvus minimax
    mistral modelscope mongodb moonshot morph nace nadir nano-gpt nebius neosantara nlp_cloud
    novita nscale nvidia_nim nvidia_riva oci ollama ollama_chat oobabooga openai openai_like
    opencode_go openinfer openrouter opensearch ovhcloud parallel_ai parasail perplexity petals
    pg_vector pinstripes poe predibase prism publicai qwen_ai_platform qwencloud ragflow recraft
    reducto refuseless reka replicate runwayml s3_vectors sagemaker sagemaker_chat
    sagemaker_nova sail sambanova sap sarvam scaledown scaleway scx-ai snowflake soniox
    stability strands_decider streamlake synthetic tencent tensormesh text-completion-codestral
    text-completion-inception text-completion-openai together_ai topaz transcribe triton
    typesafe v0 valkey veniceai vercel_ai_gateway vertex_ai vertex_ai_beta vllm volcengine
    voyage wally wandb watsonx watsonx_text xai xiaomi_mimo xinference zai zerogpu
    """.split()
)
#: prefixes of the price map's model names that name no provider (litellm routes those names)
PRICED_PREFIXES = frozenset(
    """
    1024-x-1024 1024-x-1536 1536-x-1024 512-x-512 agentcore amazon-nova anyscale apiserpent
    bing_grounding dataforseo duckduckgo exa_ai firecrawl google_pse high linkup low max-x-max
    medium nimble searxng serper standard tavily tinyfish you_com
    """.split()
)
#: litellm's `openai_compatible_endpoints`: an api_base at one routes any name to its provider
ENDPOINTS = tuple(
    """
    api.perplexity.ai api.endpoints.anyscale.com/v1 api.deepinfra.com/v1/openai
    api.clfaigateway.dev/v1 api.mistral.ai/v1 codestral.mistral.ai/v1/chat/completions
    codestral.mistral.ai/v1/fim/completions api.groq.com/openai/v1
    https://integrate.api.nvidia.com/v1 https://api.getnadir.com/v1 api.deepseek.com/v1
    api.together.ai/v1 api.together.xyz/v1 app.empower.dev/api/v1
    https://api.friendli.ai/serverless/v1 api.sambanova.ai/v1 api.x.ai/v1 ollama.com
    api.galadriel.ai/v1 api.llama.com/compat/v1/ api.featherless.ai/v1
    inference.api.nscale.com/v1 api.studio.nebius.ai/v1
    https://dashscope-intl.aliyuncs.com/compatible-mode/v1
    https://dashscope.aliyuncs.com/compatible-mode/v1 https://api-inference.modelscope.cn/v1
    https://api.moonshot.ai/v1 https://api.publicai.co/v1 https://api.aiand.com/v1
    https://api.synthetic.new/openai/v1 https://serverless.tensormesh.ai/v1
    https://api.stima.tech/v1 https://nano-gpt.com/api/v1 https://api.poe.com/v1
    https://llm.chutes.ai/v1/ https://api.v0.dev/v1 https://api.morphllm.com/v1
    https://api.lambda.ai/v1 https://api.inceptionlabs.ai/v1 https://api.hyperbolic.xyz/v1
    https://ai-gateway.helicone.ai/ https://ai-gateway.vercel.sh/v1 https://api.edenai.run/v3
    https://api.inference.wandb.ai/v1 https://api.clarifai.com/v2/ext/openai/v1
    https://api.libertai.io/v1 https://pinstripes.io/v1 https://api.meta.ai/v1
    https://api.sailresearch.com/v1 https://api.cognition.ai/v1
    https://inference.coralbricks.ai/v1 https://api.cortecs.ai/v1 https://api.scx.ai/v1
    https://api.prisminference.com/v1 https://api.reka.ai/v1 https://inference.runanywhere.ai/v1
    https://gigachat.devices.sberbank.ru/api/v1 https://api.openinfer.ai/v1
    https://vanchin.streamlake.ai/api/gateway/v1/endpoints
    """.split()
)
#: the price map's routing rules: (pattern, provider), searched case-insensitively
ROUTING = (
    (r"^(?:[a-z-]+\.)?anthropic\.claude-", "bedrock"),
    (r"^claude-[a-z]+-\d+(?:[-.]\d+)?(?:-\d{8})?$", "anthropic"),
    (r"^jev-(?:latest|preview|1\.13\.0|1\.14\.0)$", "typesafe"),
)
#: name prefixes `_get_llm_provider` routes with `model.startswith` that name no provider
STARTS = ("gpt-image",)


@dataclass(frozen=True)
class RoutingTables:
    """What litellm routes by, as data (see the module docstring)."""

    providers: frozenset[str]
    priced_prefixes: frozenset[str]
    endpoints: tuple[str, ...]
    routing: tuple[tuple[str, str], ...]
    starts: tuple[str, ...]


SHIPPED = RoutingTables(PROVIDERS, PRICED_PREFIXES, ENDPOINTS, ROUTING, STARTS)


@functools.cache
def routing_tables() -> RoutingTables | None:
    """The tables of the installed litellm: the shipped ones at `LITELLM_RELEASE`, else read
    from its files; None when litellm is not installed or its files are not as expected (then
    litellm itself is asked)."""
    try:
        installed = version("litellm")
    except PackageNotFoundError:
        return None
    return SHIPPED if installed == LITELLM_RELEASE else read_tables()


def read_tables() -> RoutingTables | None:
    """The tables read from the installed litellm's files without importing it; None when one
    of them is missing or not shaped as litellm 1.110 writes it."""
    found = importlib.util.find_spec("litellm")
    if found is None or not found.submodule_search_locations:
        return None
    root = Path(next(iter(found.submodule_search_locations)))
    try:
        enum = ast.parse((root / "types" / "utils.py").read_text(encoding="utf-8"))
        constants = ast.parse((root / "constants.py").read_text(encoding="utf-8"))
        logic = (root / "litellm_core_utils" / "get_llm_provider_logic.py").read_text("utf-8")
        configured = json.loads((root / "llms" / "openai_like" / "providers.json").read_text())
        prices = json.loads((root / "model_prices_and_context_window_backup.json").read_text())
    except (OSError, SyntaxError, ValueError):
        return None
    providers = {
        stmt.value.value
        for node in enum.body
        if isinstance(node, ast.ClassDef) and node.name == "LlmProviders"
        for stmt in node.body
        if isinstance(stmt, ast.Assign)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    } | set(configured if isinstance(configured, dict) else ())
    endpoints = _endpoints(constants)
    if not providers or endpoints is None or not isinstance(prices, dict):
        return None
    rules = (prices.get("fallback_generalizations") or {}).get("rules") or []
    return RoutingTables(
        providers=frozenset(providers),
        priced_prefixes=frozenset(
            {name.split("/", 1)[0] for name in prices if "/" in name} - providers
        ),
        endpoints=endpoints,
        routing=tuple(
            (rule["pattern"], rule["model_info"]["litellm_provider"])
            for rule in rules
            if isinstance(rule, dict)
            and isinstance(rule.get("model_info"), dict)
            and list(rule["model_info"]) == ["litellm_provider"]
        ),
        starts=tuple(
            start
            for start in re.findall(r'model\.startswith\("([^"]+)"\)', logic)
            if start.rstrip("/") not in providers
        ),
    )


def _endpoints(module: ast.Module) -> tuple[str, ...] | None:
    """`openai_compatible_endpoints` of litellm/constants.py: strings, or names of the
    module's string constants."""
    strings: dict[str, str] = {}
    listed: list[ast.expr] | None = None
    for node in module.body:
        target: ast.expr | None = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        value = getattr(node, "value", None)
        if not isinstance(target, ast.Name) or value is None:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            strings[target.id] = value.value
        elif target.id == "openai_compatible_endpoints" and isinstance(value, ast.List):
            listed = value.elts
    if listed is None:
        return None
    found = []
    for item in listed:
        if isinstance(item, ast.Constant) and isinstance(item.value, str):
            found.append(item.value)
        elif isinstance(item, ast.Name) and item.id in strings:
            found.append(strings[item.id])
        else:
            return None
    return tuple(found)


def at_endpoint(endpoint: str, api_base: str) -> bool:
    """litellm's `_endpoint_matches_api_base`: the same host, and the api_base's path under the
    endpoint's (a bare host or a URL alike)."""

    def parse(value: str) -> Any:
        return urlparse(value if "://" in value else f"https://{value}")

    known, given = parse(endpoint), parse(api_base)
    host = (known.hostname or "").lower()
    if not host or host != (given.hostname or "").lower():
        return False
    path = known.path.rstrip("/")
    asked = given.path.rstrip("/")
    return not path or asked == path or asked.startswith(path + "/")


def unknown_provider(
    spec: ModelSpec, api_base: str | list[str] | None, params: dict[str, Any] | None
) -> str | None:
    """'unknown litellm provider ...' when litellm could not route `spec` by any of its rules
    (the module docstring); None when it could, or when the tables cannot tell (ask litellm).
    For a list of endpoints, one that routes it is enough."""
    prefix, slash, _ = spec.model_id.partition("/")
    if not slash or (params or {}).get("custom_llm_provider") or ":" in spec.model_id:
        return None
    if os.environ.get("USE_LITELLM_PROXY", "").strip().lower() in ("true", "1", "yes"):
        return None
    tables = routing_tables()
    if tables is None or prefix in tables.providers or prefix in tables.priced_prefixes:
        return None
    if spec.model_id.startswith(tables.starts) or any(
        re.search(pattern, spec.model_id, re.IGNORECASE) for pattern, _ in tables.routing
    ):
        return None
    urls = [api_base] if isinstance(api_base, str) else list(api_base or [])
    if any(at_endpoint(known, url) for url in urls for known in tables.endpoints):
        return None
    return f"unknown litellm provider {prefix!r}{did_you_mean(prefix, sorted(tables.providers))}"


__all__ = ["LITELLM_RELEASE", "RoutingTables", "read_tables", "routing_tables", "unknown_provider"]
