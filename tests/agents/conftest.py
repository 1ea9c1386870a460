import pytest


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    """litellm's openai/ provider wants a key even for a loopback server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
