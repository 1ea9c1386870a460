"""Nothing loads until something must be computed: a fully cached re-run imports neither litellm
nor torch, and a model whose answers are all cached is never loaded (issue: speed at the
limits).

A run whose imports are checked is a fresh interpreter (`titjudge run` through the CLI's main),
so `sys.modules` shows what that run really imported; every other run is in-process
(`titjudge.cli.main`: nothing about it needs a process of its own, and the test session
already imported torch to build the checkpoint), where a spy on `LazyBackend` shows which
model's backend a run tried to build. The describer and
the LLM judge are litellm models served by the loopback double, the embedding judge a tiny
random-weight Qwen3-Embedding checkpoint on CPU. The benchmark is 2 prompts x 3 models
(`lazy_data`, 6 items; the shared `synth_data` has 16): what is imported, built or asked
again does not grow with the items, and 6 leave 2 beyond the partly cached run's 4.
"""

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from builders import run_config, write_config
from doubles.server import FakeOpenAIServer, build_responder
from pipeline_helpers import stored_descriptions
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.models.core.lazy import LazyBackend

pytestmark = pytest.mark.slow

pytest.importorskip("torch")
from doubles.tiny_models import build_tiny_qwen3_embedding  # noqa: E402

RUN = """
import json, sys
from titjudge.cli import main
from titjudge.models.core.lazy import LazyBackend
code = main(sys.argv[1:])
print("MODULES " + json.dumps({m: m in sys.modules for m in ("litellm", "torch", "transformers", "langgraph")}))
sys.exit(code)
"""


@pytest.fixture(scope="module")
def lazy_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 2 prompts x 3 models, with stored descriptions."""
    return synthetic(2, 3)


@pytest.fixture(scope="module")
def embedding_path(tmp_path_factory) -> Path:
    return build_tiny_qwen3_embedding(tmp_path_factory.mktemp("tiny-embedding"))


def _config(synth_data: Path, url: str, tmp: Path, embedding: Path) -> Path:
    judges = [
        {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge", "api_base": url},
        {"name": "tit_embed", "kind": "embedding", "model": f"embed:{embedding}"},
    ]
    return write_config(run_config(synth_data, tmp, url=url, judges=judges), tmp)


def _env(without_key: bool) -> dict[str, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    if without_key:
        env.pop("OPENAI_API_KEY", None)
    return env


@pytest.fixture
def in_process(capsys, monkeypatch):
    """`titjudge run CONFIG EXTRA...` in this process: (exit code, stderr)."""

    def run(config: Path, *extra: str, without_key: bool = False) -> tuple[int, str]:
        capsys.readouterr()
        with monkeypatch.context() as patch:
            if without_key:
                patch.delenv("OPENAI_API_KEY", raising=False)
            code = main(["run", str(config), *extra])
        return code, capsys.readouterr().err

    return run


def _run(config: Path, *extra: str, without_key: bool = False):
    """(exit code, modules imported, stderr) of one `titjudge run` in a fresh interpreter."""
    env = _env(without_key)
    done = subprocess.run(
        [sys.executable, "-c", RUN, "run", str(config), *extra],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    return done.returncode, json.loads(line.removeprefix("MODULES ")), done.stderr


def _scores(run_dir: Path) -> list[dict]:
    with (run_dir / "scores.csv").open() as handle:
        return list(csv.DictReader(handle))


def test_a_cached_rerun_imports_no_litellm_and_loads_no_model(
    lazy_data, tmp_path, embedding_path, in_process
):
    auto = build_responder("auto", descriptions=stored_descriptions(lazy_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = _config(lazy_data, server.url, tmp_path, embedding_path)
        code, err = in_process(config)
        assert code == 0, err
        asked = server.stats.total
        first = _scores(latest_run(tmp_path / "runs" / "e2e"))
        run_record = yaml.safe_load(
            (latest_run(tmp_path / "runs" / "e2e") / "config.yaml").read_text()
        )
        # the record written after the graph describes the models loaded during the run
        assert all(m.get("loaded") is not False for m in run_record["resolved"]["models"])

        # the re-run needs no key either: its litellm models answer from the cache
        code, cached, _ = _run(config, without_key=True)
        assert code == 0
        # every item was answered by the graph's cached pass: no model library is imported
        # (LangGraph is: the graph drives a cached re-run too, in three steps)
        assert cached == {
            "litellm": False,
            "torch": False,
            "transformers": False,
            "langgraph": True,
        }
        assert server.stats.total == asked  # nothing asked again
        assert _scores(latest_run(tmp_path / "runs" / "e2e")) == first
        record = yaml.safe_load((latest_run(tmp_path / "runs" / "e2e") / "config.yaml").read_text())
        models = {m["model_id"]: m for m in record["resolved"]["models"]}
        assert models[str(embedding_path)]["loaded"] is False
        assert models["openai/judge"]["loaded"] is False


def test_a_partly_cached_rerun_without_a_key_stops_at_the_first_call_it_must_send(
    lazy_data, tmp_path, embedding_path, in_process, monkeypatch
):
    """The preflight leaves a model with cached answers to its build; when a call then misses
    without credentials, the run stops: one line naming the variable, exit 2, nothing sent.
    Every cached answer is kept: with the key, the re-run asks only for what was missing."""
    auto = build_responder("auto", descriptions=stored_descriptions(lazy_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = _config(lazy_data, server.url, tmp_path, embedding_path)
        assert in_process(config, "--limit", "4")[0] == 0
        asked = server.stats.total
        builds: list[tuple[str, str]] = []  # (model, what its build raised) from here on
        real_build = LazyBackend._build_alone

        def build(self):
            try:
                return real_build(self)
            except Exception as exc:
                builds.append((str(self.spec), type(exc).__name__))
                raise

        monkeypatch.setattr(LazyBackend, "_build_alone", build)
        code, err = in_process(config, without_key=True)
        assert server.stats.total == asked  # nothing sent without a key
        assert code == 2
        # a call missed: the describer's backend was built, and refused for want of the key
        # (before, a fresh interpreter showed only that litellm had been imported)
        assert builds == [("litellm:openai/vlm", "MissingCredentialsError")]
        errors = [line for line in err.splitlines() if "error" in line.lower()]
        assert errors == [
            "titjudge: error: litellm:openai/vlm: a call is not in the cache and must be sent, "
            "but OPENAI_API_KEY is not set; every answer already computed is kept in the cache: "
            "set it and run again"
        ]
        assert "Traceback" not in err
        code, err = in_process(config)
        assert code == 0, err
        items = len(_scores(latest_run(tmp_path / "runs" / "e2e"))) // 2  # two variants per item
        # the 4 items answered before were not asked again: 2 calls (describe, judge) per other
        assert server.stats.total - asked == 2 * (items - 4)


def test_a_fresh_run_without_a_key_is_still_refused_before_anything_runs(
    lazy_data, tmp_path, embedding_path, in_process
):
    with FakeOpenAIServer(responder=build_responder("auto", descriptions={})) as server:
        config = _config(lazy_data, server.url, tmp_path, embedding_path)
        code, err = in_process(config, without_key=True)
        assert server.stats.total == 0
    assert code == 2
    assert "OPENAI_API_KEY not set" in err and "Traceback" not in err
    assert not (tmp_path / "runs" / "e2e").exists()
