"""An `hf:` model before it loads: its plan (read from config.json, no torch) says what the
loaded backend will say, and the hub hands it out unbuilt until a call misses the cache."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest, TextBackend
from titjudge.models.core.clients import SEND
from titjudge.models.core.lazy import LazyBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.local.hf_plan import plan
from titjudge.records.spec import parse_model_spec


@pytest.mark.slow
@pytest.mark.parametrize("which", ["vl", "qwen3"])
def test_the_plan_says_what_the_loaded_backend_says(
    which: str, vl_backend: TextBackend, qwen3_backend: TextBackend, vl_path: Path, qwen3_path: Path
) -> None:
    backend, path = (vl_backend, vl_path) if which == "vl" else (qwen3_backend, qwen3_path)
    planned = plan(parse_model_spec(f"hf:{path}"), ModelOptions(batch_size=4))
    assert planned is not None
    assert planned.capabilities == backend.capabilities
    assert planned.capabilities.vision is (which == "vl")
    assert planned.cache_facts == backend.cache_facts()
    assert planned.facts["kind"] == backend.describe()["kind"]


@pytest.mark.slow
def test_the_hub_loads_an_hf_model_on_its_first_miss_only(qwen3_path: Path, tmp_path: Path) -> None:
    hub = ModelHub(CallCache(tmp_path / "cache"))
    client = hub.text_client(f"hf:{qwen3_path}", ModelOptions(batch_size=2, max_attempts=1))
    assert isinstance(client.backend, LazyBackend) and not client.backend.built
    assert client.backend.describe()["loaded"] is False
    request = GenerateRequest(prompt="Say hi.", max_tokens=4)

    first = asyncio.run(client.text(request, role="judge", accept_truncated=True, probe=SEND))
    assert first.ok and client.backend.built
    assert client.backend.describe()["kind"] == "causal_lm"  # the loaded backend's record

    again = ModelHub(CallCache(tmp_path / "cache")).text_client(
        f"hf:{qwen3_path}", ModelOptions(batch_size=2, max_attempts=1)
    )
    cached = asyncio.run(again.text(request, role="judge", accept_truncated=True, probe=SEND))
    assert cached.ok and cached.cached and cached.value == first.value
    assert not again.backend.built  # answered from the cache: never loaded


@pytest.mark.slow
def test_a_checkpoint_whose_config_misleads_the_plan_fails_when_it_loads(
    qwen3_path: Path, tmp_path: Path
) -> None:
    """A text-only checkpoint whose config.json carries a vision_config: the plan lets vision
    judges through, so the load must refuse it rather than answer without seeing images."""
    path = tmp_path / "qwen3-with-vision-config"
    shutil.copytree(qwen3_path, path)
    config = json.loads((path / "config.json").read_text())
    (path / "config.json").write_text(json.dumps({**config, "vision_config": {"depth": 1}}))
    hub = ModelHub(CallCache(None))
    client = hub.text_client(f"hf:{path}", ModelOptions(batch_size=2, max_attempts=1))
    assert client.backend.capabilities.vision
    result = asyncio.run(
        client.text(
            GenerateRequest(prompt="hi", max_tokens=4),
            role="judge",
            accept_truncated=True,
            probe=SEND,
        )
    )
    assert not result.ok and "differ from those read from its config" in (result.error or "")
