"""Fixtures for the provider-conformance tests: one loopback provider stand-in per session,
emptied (queues and recorded requests) before each test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402
from provider_calls import ModelLayer  # noqa: E402
from provider_server import ProviderServer  # noqa: E402


@pytest.fixture(scope="session")
def _provider_server_session() -> Iterator[ProviderServer]:
    with ProviderServer() as server:
        yield server


@pytest.fixture
def provider_server(_provider_server_session: ProviderServer) -> Iterator[ProviderServer]:
    """The running stand-in; ``.gemini_base`` / ``.openai_base`` are the api_base values."""
    server = _provider_server_session
    server.reset()
    server.validate_gemini = True
    yield server
    server.reset()


@pytest.fixture
def layer(
    provider_server: ProviderServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> ModelLayer:
    """titjudge's backends and call layer aimed at the stand-in (see provider_calls.py)."""
    return ModelLayer(provider_server, monkeypatch, tmp_path)
