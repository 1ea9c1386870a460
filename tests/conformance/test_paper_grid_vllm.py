"""configs/paper-grid-vllm.yaml (docs/ablation.md, "Running the full grid on GPUs") as users run it: the
served rows and comparers pointed at loopback stand-ins for their vLLM servers (the fake
OpenAI-compatible chat server and the /v1/embeddings double, whose shapes cite vLLM's and
OpenAI's docs), the API rows switched off with the docs' `--set`s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from doubles.embeddings_server import EmbeddingsServer
from doubles.server import FakeOpenAIServer, build_responder
from run_dirs import latest_run

from titjudge.cli import main

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "paper-grid-vllm.yaml"
SERVED_ROWS = ("qwen25-vl-72b", "qwen25-vl-32b", "qwen25-vl-7b")
SERVED_JUDGES = ("tit_llm_q8b", "tit_llm_q14b")


@pytest.fixture(scope="module")
def data(synthetic) -> Path:
    return synthetic(2, 3, seed=3)


def ablation(tmp: Path, data: Path, *sets: str) -> int:
    args = ["ablation", str(CONFIG)]
    for value in (
        f"data.manifest={data / 'manifest.jsonl'}",
        f"data.human_pairs={data / 'pairs.csv'}",
        f"run.cache_dir={tmp / 'cache'}",
        f"run.out={tmp / 'runs'}",
        *sets,
    ):
        args += ["--set", value]
    return main(args)


def test_without_keys_only_the_api_models_are_named(data, tmp_path, capsys, monkeypatch):
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    assert ablation(tmp_path, data) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.endswith(
        "preflight found 2 problems, nothing was called: GEMINI_API_KEY not set "
        "(litellm:gemini/gemini-2.5-pro: row gemini-25-pro, comparer tit_llm_g); "
        "OPENAI_API_KEY not set (litellm:openai/gpt-4o: row gpt-4o)"
    )
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_served_rows_fill_every_served_cell_and_a_rerun_asks_nothing(data, tmp_path, monkeypatch):
    for key in ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    off = (
        "describers.gemini-25-pro.enabled=false",
        "describers.gpt-4o.enabled=false",
        "comparers.tit_llm_g.enabled=false",
    )
    auto = build_responder("auto")
    bodies: list[dict] = []

    def recording(request):  # the built-in answers, and every body kept to check what vLLM got
        bodies.append(request.body)
        return auto(request)

    with FakeOpenAIServer(responder=recording) as chat, EmbeddingsServer(dim=64) as emb:
        sets = (
            *off,
            *(f"describers.{row}.api_base={chat.url}" for row in SERVED_ROWS),
            *(f"comparers.{judge}.api_base={chat.url}" for judge in SERVED_JUDGES),
            f"comparers.tit_score_8b.api_base={emb.url}",
        )
        assert ablation(tmp_path, data, *sets) == 0
        asked = (len(bodies), len(emb.requests))
        assert ablation(tmp_path, data, *sets) == 0
        assert (len(bodies), len(emb.requests)) == asked  # all from the cache
    models = {body["model"] for body in bodies}
    assert models == {
        "Qwen/Qwen2.5-VL-72B-Instruct",
        "Qwen/Qwen2.5-VL-32B-Instruct",
        "Qwen/Qwen2.5-VL-7B-Instruct",
        "Qwen/Qwen3-8B",
        "Qwen/Qwen3-14B",
    }
    judges = [body for body in bodies if body["model"].startswith("Qwen/Qwen3-")]
    assert judges and all(
        b.get("chat_template_kwargs") == {"enable_thinking": False} for b in judges
    )
    assert {r["body"]["model"] for r in emb.requests} == {"Qwen/Qwen3-Embedding-8B"}
    (name_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    grid = json.loads((latest_run(name_dir) / "ablation.json").read_text())
    text = json.dumps(grid)
    for row in SERVED_ROWS:
        assert row in text
