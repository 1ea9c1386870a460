from pathlib import Path

import pytest

from titjudge.data.synth.benchmark import synthesize


@pytest.fixture(scope="session")
def synth_data(tmp_path_factory) -> Path:
    """A small SYNTHETIC benchmark: 4 prompts x 4 models, with stored descriptions and elements."""
    out = tmp_path_factory.mktemp("synth-judges") / "data"
    synthesize(out, n_prompts=4, n_models=4, seed=0)
    return out


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    """litellm's openai/ provider wants a key even for a loopback server."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")


@pytest.fixture(scope="session")
def small_data(tmp_path_factory) -> Path:
    """A smaller SYNTHETIC benchmark, 3 prompts x 3 models (9 items, 9 human pairs), for the
    tests whose claims hold item by item and do not grow with the benchmark."""
    out = tmp_path_factory.mktemp("synth-judges-small") / "data"
    synthesize(out, n_prompts=3, n_models=3, seed=0)
    return out
