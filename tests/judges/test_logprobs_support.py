"""The config-time check whether a litellm model reports token log-probabilities reads
litellm's local provider table: the import goes through titjudge's litellm backend module,
which sets LITELLM_LOCAL_MODEL_COST_MAP first (a bare import fetches prices online and, with
no network, waits on retries)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

# a fresh interpreter
pytestmark = pytest.mark.slow

CHILD = """
import json, os
from types import SimpleNamespace
from titjudge.judges.building import provider_supports_logprobs
def client(backend, model_id):
    return SimpleNamespace(backend=SimpleNamespace(spec=SimpleNamespace(backend=backend, model_id=model_id)))
print(json.dumps({
    "openai": provider_supports_logprobs(client("litellm", "openai/gpt-4o")),
    "local": provider_supports_logprobs(client("hf", "/some/checkpoint")),
    "cost_map_env": os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP"),
}))
"""


def test_the_logprobs_check_imports_litellm_with_the_local_price_map() -> None:
    env = {k: v for k, v in os.environ.items() if k != "LITELLM_LOCAL_MODEL_COST_MAP"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found == {"openai": True, "local": None, "cost_map_env": "True"}
