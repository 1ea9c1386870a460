import shutil

import pytest

from titjudge.data.synth.benchmark import synthesize


@pytest.fixture(scope="session")
def fault_data(tmp_path_factory):
    """SYNTHETIC benchmark for the fault suite: 6 prompts x 4 models."""
    out = tmp_path_factory.mktemp("faults") / "data"
    synthesize(out, n_prompts=6, n_models=4, seed=1)
    return out


@pytest.fixture
def fault_copy(fault_data, tmp_path):
    target = tmp_path / "data"
    shutil.copytree(fault_data, target)
    return target


@pytest.fixture(autouse=True)
def fake_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
