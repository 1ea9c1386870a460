"""`batch: true` on a `litellm:openai/...` embedding judge: each text not cached is one line of
an OpenAI batch job on `/v1/embeddings` (the loopback double, `doubles.batch_server`, answers
each line through its embeddings server), never an online request; the vectors are cached
under the texts' own keys, shared with online runs, at the batch price. A provider whose batch
API takes no embeddings (Azure) is refused when the config is read."""

import json

import pytest
from batch_helpers import run_dir as _run_dir
from batch_helpers import summary as _summary
from batch_helpers import write_config as _write
from doubles.batch_server import BatchServer, Plan
from doubles.server import build_responder

from titjudge.cli import main

EMBEDDINGS = "/v1/embeddings"
MODEL = "litellm:openai/text-embedding-3-small"


def _config(data, url, tmp_path, *, batch=True, model=MODEL, **judge):
    return {
        "name": "e2e",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": f"replay:{data / 'descriptions.jsonl'}"},
        "judges": [
            {
                "name": "tit_embed",
                "kind": "embedding",
                "model": model,
                "api_base": url,
                "batch": batch,
                "batch_poll": 0.05,
                "backoff_initial": 0.01,
                "max_attempts": 2,
                **judge,
            }
        ],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }


def _texts(data) -> int:
    """The distinct texts the judge embeds: every prompt and every description."""
    rows = [json.loads(x) for x in (data / "manifest.jsonl").read_text().splitlines() if x]
    described = [json.loads(x) for x in (data / "descriptions.jsonl").read_text().splitlines() if x]
    return len({r["prompt"] for r in rows}) + len({r["description"] for r in described})


def test_embeddings_go_as_batch_lines_and_an_online_rerun_is_cached(synth_data, tmp_path):
    texts = _texts(synth_data)
    with BatchServer(responder=build_responder("auto")) as server:
        config = _config(synth_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.stats.by_endpoint[EMBEDDINGS] == 0  # nothing online
        assert server.batch_creates == 1
        (batch,) = server.batches.values()
        assert batch["endpoint"] == EMBEDDINGS
        rows = [
            json.loads(r) for r in server.contents[batch["input_file_id"]].decode().splitlines()
        ]
        assert {r["url"] for r in rows} == {EMBEDDINGS}
        # one text per line, the online call's body: the model's own name and the text
        assert all(r["body"]["model"] == "text-embedding-3-small" for r in rows)
        assert all(len(r["body"]["input"]) == 1 for r in rows)
        assert len(rows) == texts == server.lines_answered
        assert server.engine.stats.by_endpoint[EMBEDDINGS] == texts
        summary = _summary(tmp_path)
        assert summary["failed_items"] == 0
        stats = summary["batch"][MODEL]
        assert (stats["jobs"], stats["requests"], stats["answered"], stats["failed"]) == (
            1,
            texts,
            texts,
            0,
        )
        scores = (_run_dir(tmp_path) / "scores.csv").read_text()

        config = _config(synth_data, server.url, tmp_path, batch=False)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.stats.by_endpoint[EMBEDDINGS] == 0 and server.batch_creates == 1
        assert (_run_dir(tmp_path) / "scores.csv").read_text() == scores

        # the same run online from an empty cache: the same vectors, so the same scores
        online = tmp_path / "online"
        online.mkdir()
        assert (
            main(["run", _write(_config(synth_data, server.url, online, batch=False), online)]) == 0
        )
        assert server.stats.by_endpoint[EMBEDDINGS] > 0
        assert (_run_dir(online) / "scores.csv").read_text() == scores


def test_embedding_lines_cost_half_the_online_price(synth_data, tmp_path):
    spent = {}
    with BatchServer(responder=build_responder("auto")) as server:
        for mode in ("online", "batch"):
            where = tmp_path / mode
            where.mkdir()
            price = {"input": 0.02, "output": 0.0}
            config = _config(synth_data, server.url, where, batch=mode == "batch", price=price)
            assert main(["run", _write(config, where)]) == 0
            spent[mode] = _summary(where)["usage"]["judge"]
        # and litellm's batch rate where no price is set (text-embedding-3-small: $0.01 / 1M)
        where = tmp_path / "litellm"
        where.mkdir()
        assert main(["run", _write(_config(synth_data, server.url, where), where)]) == 0
        priced = _summary(where)["usage"]["judge"]
        last = list(server.batches.values())[-1]
        lines = server.contents[last["output_file_id"]].decode().splitlines()
        tokens = sum(json.loads(x)["response"]["body"]["usage"]["prompt_tokens"] for x in lines)
    assert spent["online"]["cost"] > 0
    assert spent["batch"]["cost"] == pytest.approx(spent["online"]["cost"] / 2, rel=1e-9)
    assert tokens > 0 and priced["cost"] == pytest.approx(tokens * 0.01e-6, rel=1e-6)


def test_a_failed_embedding_line_is_a_failure_record_not_cached(synth_data, tmp_path):
    with BatchServer(responder=build_responder("auto")) as server:
        server.plan(Plan(fail={0: "This input could not be embedded."}))
        config = _config(synth_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 1
        assert server.stats.by_endpoint[EMBEDDINGS] == 0
        items = (_run_dir(tmp_path) / "items.jsonl").read_text()
        assert "batch line failed: HTTP 400 invalid_request_error: This input could not" in items
        assert _summary(tmp_path)["batch"][MODEL]["failed"] == 1
        # the failure was not cached: online, that one text alone is asked again
        config = _config(synth_data, server.url, tmp_path, batch=False)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.stats.by_endpoint[EMBEDDINGS] == 1


def test_batch_on_an_azure_embedding_model_is_refused_at_load(synth_data, tmp_path, capsys):
    config = _config(
        synth_data, "https://example.openai.azure.com", tmp_path, model="litellm:azure/emb"
    )
    assert main(["run", _write(config, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Azure OpenAI's batch API takes no embeddings models" in err
    assert "litellm:openai/..." in err and "Traceback" not in err
