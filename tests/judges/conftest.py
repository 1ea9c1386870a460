from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    """litellm's openai/ provider wants a key even for a loopback server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


@pytest.fixture(scope="session")
def small_data(synthetic) -> Path:
    """A smaller SYNTHETIC benchmark, 3 prompts x 3 models (9 items, 9 human pairs), for the
    tests whose claims hold item by item and do not grow with the benchmark."""
    return synthetic(3, 3)
