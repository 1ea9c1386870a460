"""configs/served-embeddings.yaml as users run it: the describer on the fake OpenAI server,
the three served embedding judges on the loopback embeddings server (vLLM's /v1/embeddings,
OpenAI's, Gemini's batchEmbedContents; doubles/embeddings_server.py cites their documented
shapes)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from doubles.embeddings_server import EmbeddingsServer
from doubles.server import FakeOpenAIServer
from doubles.server_text import hashed_embedding
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.judges.embedding import cosine, query_text

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "configs" / "served-embeddings.yaml"
KEYS = ("OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
INSTRUCTION = "Given an image description, retrieve the prompt it was generated from"


@pytest.fixture(scope="module")
def data(synthetic) -> Path:
    return synthetic(2, 2)


def run(tmp: Path, data: Path, *sets: str) -> int:
    args = ["run", str(CONFIG)]
    for value in (
        f"data.manifest={data / 'manifest.jsonl'}",
        f"data.human_pairs={data / 'pairs.csv'}",
        f"run.cache_dir={tmp / 'cache'}",
        f"run.out={tmp / 'runs'}",
        *sets,
    ):
        args += ["--set", value]
    return main(args)


def records(tmp: Path) -> list[dict[str, Any]]:
    (name_dir,) = [p for p in (tmp / "runs").iterdir() if p.is_dir()]
    run_dir = latest_run(name_dir)  # the latest run's records
    return [json.loads(x) for x in (run_dir / "items.jsonl").read_text().splitlines()]


def test_without_keys_the_preflight_names_openai_and_gemini_only(
    data, tmp_path, capsys, monkeypatch
):
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)
    code = run(tmp_path, data)
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert (
        "OPENAI_API_KEY not set (litellm:openai/text-embedding-3-large: judge tit_score_openai)"
        in err
    )
    assert (
        "GEMINI_API_KEY not set (litellm:gemini/gemini-embedding-001: judge tit_score_gemini)"
        in err
    )
    assert "hosted_vllm" not in err  # servers at an api_base need no key
    assert not (tmp_path / "runs").exists()


@pytest.mark.slow
def test_served_judges_score_every_item_and_a_rerun_asks_nothing(data, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-served-embeddings-0123456789")
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-served-embeddings-0123456789")
    with FakeOpenAIServer(responder="describe") as chat, EmbeddingsServer(dim=64) as emb:
        sets = (
            f"describer.api_base={chat.url}",
            f"judges.tit_score_8b.api_base={emb.url}",
            f"judges.tit_score_openai.api_base={emb.url}",
            f"judges.tit_score_gemini.api_base={emb.gemini_base}",
        )
        assert run(tmp_path, data, *sets) == 0
        first = records(tmp_path)
        sent = len(emb.requests)
        assert run(tmp_path, data, *sets) == 0
        assert len(emb.requests) == sent  # every embedding came from the cache
    prompts = {
        json.loads(line)["item_id"]: json.loads(line)["prompt"]
        for line in (data / "manifest.jsonl").read_text().splitlines()
    }
    by_variant: dict[str, dict[str, dict[str, Any]]] = {}
    for record in first:
        by_variant.setdefault(record["variant"], {})[record["item_id"]] = record
    assert set(by_variant) >= {"tit_score_8b", "tit_score_openai", "tit_score_gemini"}
    for variant in ("tit_score_8b", "tit_score_openai", "tit_score_gemini"):
        assert len(by_variant[variant]) == len(prompts)
        assert all(r["status"] == "ok" for r in by_variant[variant].values())
    sent_texts = {t for request in emb.requests for t in request["texts"]}
    documents = [t for t in sent_texts if not t.startswith("Instruct:")]
    for item_id, record in by_variant["tit_score_8b"].items():
        query = query_text(prompts[item_id], INSTRUCTION)
        assert query in sent_texts  # the instruction on the prompt side, as sent locally
        scores = [cosine(hashed_embedding(query, 64), hashed_embedding(d, 64)) for d in documents]
        assert any(round(score, 6) == record["score"] for score in scores)
    gemini = [r for r in emb.requests if r["path"].endswith(":batchEmbedContents")]
    assert gemini and all(
        q["taskType"] == "SEMANTIC_SIMILARITY" for r in gemini for q in r["body"]["requests"]
    )
    openai = [r for r in emb.requests if r["body"].get("model") == "text-embedding-3-large"]
    assert openai and all(r["body"]["dimensions"] == 1024 for r in openai)
