"""What a litellm provider needs before a call can be sent, known without importing litellm
(~2-3 s): the credential variables litellm's `validate_environment` reads, and the client
packages litellm imports only when it first calls the provider.

The preflight reads these tables for a model written `provider/model` with a provider listed
here, so a missing key is reported within a second of starting. Any other model (a bare name
such as `gpt-4o`, a provider not listed, `params.custom_llm_provider` naming one not listed)
is asked of litellm itself (`backend.setup_problems`), as before, but for a provider prefix
that litellm cannot route: `provider_names.unknown_provider` knows litellm's routing rules as
tables, without importing it, so a typo (`opneai/gpt-4o`) is refused in well under a second.

Credentials mirror litellm's `validate_environment` (litellm/utils.py): the provider is set up
when any one alternative has all its variables in the environment; otherwise the variables
litellm names are reported (without the `*_API_BASE` ones when the config gives `api_base`).
Client packages: Vertex AI authenticates through google-auth (`import google.auth` and its
requests transport, litellm/llms/vertex_ai/vertex_llm_base.py); Bedrock and SageMaker sign
with botocore and build sessions with boto3 (litellm/llms/bedrock/base_aws_llm.py). Neither
is a litellm dependency, so without them every call fails with `No module named ...`.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from typing import Any

from titjudge.records.spec import ModelSpec


@dataclass(frozen=True)
class Needs:
    #: alternatives: the provider is set up when every variable of one of them is set
    any_of: tuple[tuple[str, ...], ...]
    #: the variables named when none is (litellm's `missing_keys`)
    named: tuple[str, ...]


def _one(name: str) -> Needs:
    return Needs(((name,),), (name,))


_AWS = Needs(
    (
        ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
        ("AWS_ROLE_ARN",),
        ("AWS_PROFILE",),
        ("AWS_WEB_IDENTITY_TOKEN_FILE",),
        ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI",),
    ),
    ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"),
)

#: provider -> the credentials it needs (None: none, e.g. a self-hosted vLLM server)
CREDENTIALS: dict[str, Needs | None] = {
    "openai": _one("OPENAI_API_KEY"),
    "azure": Needs(
        (("AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY"),),
        ("AZURE_API_BASE", "AZURE_API_VERSION", "AZURE_API_KEY"),
    ),
    "anthropic": Needs((("ANTHROPIC_API_KEY",), ("ANTHROPIC_AUTH_TOKEN",)), ("ANTHROPIC_API_KEY",)),
    "gemini": Needs(
        (("GOOGLE_API_KEY",), ("GEMINI_API_KEY",)), ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    ),
    "vertex_ai": Needs(
        (("VERTEXAI_PROJECT", "VERTEXAI_LOCATION"),), ("VERTEXAI_PROJECT", "VERTEXAI_LOCATION")
    ),
    "bedrock": _AWS,
    "sagemaker": _AWS,
    "openrouter": _one("OPENROUTER_API_KEY"),
    "together_ai": _one("TOGETHERAI_API_KEY"),
    "groq": _one("GROQ_API_KEY"),
    "mistral": _one("MISTRAL_API_KEY"),
    "deepseek": _one("DEEPSEEK_API_KEY"),
    "xai": _one("XAI_API_KEY"),
    "deepinfra": _one("DEEPINFRA_API_KEY"),
    "cerebras": _one("CEREBRAS_API_KEY"),
    "nvidia_nim": _one("NVIDIA_NIM_API_KEY"),
    "cohere": _one("COHERE_API_KEY"),
    "huggingface": _one("HUGGINGFACE_API_KEY"),
    "perplexity": _one("PERPLEXITYAI_API_KEY"),
    "ollama": _one("OLLAMA_API_BASE"),
    "ollama_chat": _one("OLLAMA_API_BASE"),
    "hosted_vllm": None,
    "lm_studio": None,
}

#: provider -> (module litellm imports, pip package that provides it)
CLIENT_PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    "vertex_ai": (("google.auth", "google-auth"), ("requests", "requests")),
    "bedrock": (("boto3", "boto3"), ("botocore", "botocore")),
    "sagemaker": (("boto3", "boto3"), ("botocore", "botocore")),
}


def listed_provider(spec: ModelSpec, params: dict[str, Any] | None) -> str | None:
    """The provider of `spec` when these tables know it without litellm: `provider/model` with a
    listed provider (or `params.custom_llm_provider` naming one); None: ask litellm."""
    custom = (params or {}).get("custom_llm_provider")
    if custom is not None:
        return custom if isinstance(custom, str) and custom in CREDENTIALS else None
    prefix, sep, _ = spec.model_id.partition("/")
    return prefix if sep and prefix in CREDENTIALS else None


def missing_credentials(provider: str, api_base: str | list[str] | None) -> list[str]:
    """The variables `provider` needs and the environment lacks (empty: none missing)."""
    needs = CREDENTIALS.get(provider)
    if needs is None:
        return []

    def present(name: str) -> bool:
        return name in os.environ or (api_base is not None and name.endswith("API_BASE"))

    if any(all(present(name) for name in option) for option in needs.any_of):
        return []
    return [name for name in needs.named if not (api_base and name.endswith("API_BASE"))]


def missing_keys(
    provider: str, api_base: str | list[str] | None, api_key_env: str | None
) -> list[str]:
    """The credential variables missing for `provider`: the one `api_key_env` names when it
    names one (set but empty counts as missing), else the provider's usual ones."""
    if api_key_env is not None:
        return [] if os.environ.get(api_key_env) else [api_key_env]
    return missing_credentials(provider, api_base)


def missing_packages(provider: str) -> str | None:
    """'<modules> not installed (pip install <packages>)' for the client packages `provider`
    needs and this environment lacks; None when nothing is missing."""
    missing = [
        (module, package)
        for module, package in CLIENT_PACKAGES.get(provider, ())
        if not _importable(module)
    ]
    if not missing:
        return None
    modules = " and ".join(module for module, _ in missing)
    packages = " ".join(package for _, package in missing)
    return f"{modules} not installed, which litellm needs for {provider} (pip install {packages})"


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a parent package that is missing or broken
        return False


def listed_problems(
    spec: ModelSpec,
    api_base: str | list[str] | None,
    api_key_env: str | None,
    params: dict[str, Any] | None,
) -> list[str] | None:
    """`backend.setup_problems` for a model whose provider these tables list, without importing
    litellm: client packages missing, then credentials missing; None when the provider is not
    listed (ask litellm)."""
    provider = listed_provider(spec, params)
    if provider is None:
        return None
    problems = [found] if (found := missing_packages(provider)) else []
    missing = missing_keys(provider, api_base, api_key_env)
    if missing:
        problems.append(f"{' or '.join(missing)} not set")
    return problems
