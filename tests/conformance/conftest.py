"""Fixtures for the provider-conformance tests: one loopback provider stand-in per session,
emptied (queues and recorded requests) before each test."""

from __future__ import annotations

import os
from collections.abc import Iterator

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import pytest  # noqa: E402
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
