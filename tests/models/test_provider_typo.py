"""A misspelled litellm provider is refused by the preflight without importing litellm (its
import takes seconds; issue 37, the first hour; issue 48: with an api_base too), and nothing
litellm could route is refused that way: every provider it names, a model its price map lists
under another prefix, a custom_llm_provider, an api_base at a provider litellm knows by its
URL are left to litellm.

The routing rules modelled are litellm's own, read in its source (litellm 1.x,
litellm/litellm_core_utils/get_llm_provider_logic.py `_get_llm_provider`): JSON-configured
providers (litellm/llms/openai_like/providers.json) and `provider_list` (the `LlmProviders`
enum, litellm/types/utils.py) by the model's prefix, known providers' URLs by `api_base`
(`openai_compatible_endpoints`, matched by `_endpoint_matches_api_base`),
`custom_llm_provider`, Replicate ids by their `:`, USE_LITELLM_PROXY, then model names its price
map lists. The tables themselves are compared with litellm in test_provider_names.py."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from titjudge.models.litellm.provider_names import unknown_provider
from titjudge.records.spec import parse_model_spec


def fast_check(model: str, api_base: str | None = None, **params: str) -> str | None:
    return unknown_provider(parse_model_spec(model), api_base, params or None)


def test_a_misspelled_provider_is_named_with_the_provider_meant():
    assert fast_check("litellm:opneai/gpt-4o") == (
        "unknown litellm provider 'opneai' (did you mean 'openai'?)"
    )
    assert fast_check("litellm:nosuchprovider/x") == "unknown litellm provider 'nosuchprovider'"


def test_a_misspelled_provider_at_a_server_of_ones_own_is_named_too():
    # litellm routes an unknown prefix by api_base only at a provider's own URL: a vLLM server
    # at 127.0.0.1 or a gateway of one's own is none, so litellm would refuse the model
    for api_base in ("http://127.0.0.1:8001/v1", "https://api.example.com/v1"):
        assert fast_check("litellm:opneai/x", api_base=api_base) == (
            "unknown litellm provider 'opneai' (did you mean 'openai'?)"
        )
    # a list of replicas, none of them a provider's URL
    assert (
        unknown_provider(
            parse_model_spec("litellm:opneai/x"),
            ["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"],
            None,
        )
        == "unknown litellm provider 'opneai' (did you mean 'openai'?)"
    )


def test_what_litellm_could_route_is_left_to_litellm():
    assert fast_check("litellm:gpt-4o") is None  # a bare name: litellm knows model names
    # an api_base at a provider's URL routes any name to that provider (here groq, together,
    # nvidia_nim): host and path as _endpoint_matches_api_base matches them
    assert fast_check("litellm:mylab/llama-3", api_base="https://api.groq.com/openai/v1") is None
    assert fast_check("litellm:mylab/llama-3", api_base="https://API.together.xyz/v1/") is None
    assert fast_check("litellm:mylab/llama", api_base="https://integrate.api.nvidia.com/v1") is None
    # ... but not a look-alike: another host, or the host with the provider's path elsewhere
    assert fast_check("litellm:mylab/x", api_base="https://evil.example/api.groq.com/openai/v1")
    assert fast_check("litellm:mylab/x", api_base="https://api.groq.com/other/v1")
    assert fast_check("litellm:Qwen/Qwen3-8B", custom_llm_provider="hosted_vllm") is None
    # price-map models whose prefix is no provider name (anyscale/..., gmi/...)
    assert fast_check("litellm:anyscale/meta-llama/Llama-2-7b-chat-hf") is None
    assert fast_check("litellm:owner/model:0123abcd") is None  # Replicate's version ids


def test_no_provider_litellm_names_is_refused():
    import litellm

    names = [str(getattr(p, "value", p)) for p in litellm.provider_list]
    assert len(names) > 100
    assert [n for n in names if fast_check(f"litellm:{n}/some-model") is not None] == []


@pytest.mark.slow  # a fresh interpreter: what it imports is the subject
@pytest.mark.parametrize("api_base", [None, "http://127.0.0.1:8001/v1"])
def test_the_run_stops_with_one_line_before_importing_litellm(api_base, tmp_path):
    config = tmp_path / "run.yaml"
    describer = {"model": "litellm:opneai/gpt-4o"} | ({"api_base": api_base} if api_base else {})
    config.write_text(
        json.dumps(
            {
                "name": "typo",
                "describer": describer,
                "judges": [{"name": "lexical", "kind": "lexical"}],
                "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
            }
        )
    )
    child = (
        "import sys\n"
        "from titjudge.cli import main\n"
        f"code = main(['run', {str(config)!r}])\n"
        "print('litellm imported' if 'litellm' in sys.modules else 'litellm not imported')\n"
        "sys.exit(code)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 2, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "litellm not imported"
    (line,) = done.stderr.strip().splitlines()
    assert "unknown litellm provider 'opneai' (did you mean 'openai'?)" in line
    assert not (tmp_path / "runs").exists()
