import builders
import pytest


@pytest.fixture(scope="session")
def fault_data(synthetic):
    """SYNTHETIC benchmark for the fault suite: 6 prompts x 4 models, seed 1."""
    return synthetic(6, 4, seed=1)


@pytest.fixture
def fault_copy(fault_data, tmp_path):
    return builders.copy_data(fault_data, tmp_path)


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
