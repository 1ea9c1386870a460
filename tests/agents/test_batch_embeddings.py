"""`batch: true` on a `litellm:openai/...` embedding judge: each text not cached is one line of
an OpenAI batch job on `/v1/embeddings` (the loopback double, `doubles.batch_server`, answers
each line through its embeddings server), never an online request; the vectors are cached
under the texts' own keys, shared with online runs, at the batch price. A provider whose batch
API takes no embeddings (Azure) is refused when the config is read."""

import json
from types import SimpleNamespace

import pytest
from batch_helpers import batch_env
from batch_helpers import run_dir as _run_dir
from batch_helpers import summary as _summary
from batch_helpers import write_config as _write
from builders import run_config, served_embedder
from doubles.batch_server import BatchServer, Plan
from doubles.server import build_responder

from titjudge.cli import main

EMBEDDINGS = "/v1/embeddings"
MODEL = "litellm:openai/text-embedding-3-small"
PRICE = {"input": 0.02, "output": 0.0}


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


def _config(data, url, tmp_path, *, batch=True, model=MODEL, **judge):
    embedder = served_embedder(
        url,
        model=model,
        batch=batch,
        batch_poll=0.05,
        backoff_initial=0.01,
        max_attempts=2,
        **judge,
    )
    return run_config(data, tmp_path, judges=[embedder], concurrency=None)


def _texts(data) -> int:
    """The distinct texts the judge embeds: every prompt and every description."""
    rows = [json.loads(x) for x in (data / "manifest.jsonl").read_text().splitlines() if x]
    described = [json.loads(x) for x in (data / "descriptions.jsonl").read_text().splitlines() if x]
    return len({r["prompt"] for r in rows}) + len({r["description"] for r in described})


def _run(config, where) -> SimpleNamespace:
    """Run `config` from `where` (its cache and runs there): the run's summary and scores."""
    where.mkdir(exist_ok=True)
    assert main(["run", _write(config, where)]) == 0
    return SimpleNamespace(
        summary=_summary(where), scores=(_run_dir(where) / "scores.csv").read_text()
    )


@pytest.fixture(scope="module")
def runs(batch_data, tmp_path_factory):
    """Against one double: batch lines at litellm's rates (no `price`); the same config
    online on that cache; online with a `price` on a cache of its own; batch lines with that
    `price` on another."""
    tmp = tmp_path_factory.mktemp("embedding-runs")
    with pytest.MonkeyPatch.context() as patch, BatchServer(build_responder("auto")) as server:
        patch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        found = SimpleNamespace()
        found.batch = _run(_config(batch_data, server.url, tmp / "batch"), tmp / "batch")
        found.online_lines = server.stats.by_endpoint[EMBEDDINGS]
        found.creates = server.batch_creates
        (job,) = server.batches.values()
        found.job = job
        found.rows = [
            json.loads(r) for r in server.contents[job["input_file_id"]].decode().splitlines()
        ]
        found.output = [
            json.loads(r) for r in server.contents[job["output_file_id"]].decode().splitlines()
        ]
        found.lines = server.lines_answered
        found.engine = server.engine.stats.by_endpoint[EMBEDDINGS]
        rerun = _config(batch_data, server.url, tmp / "batch", batch=False)
        found.rerun = _run(rerun, tmp / "batch")
        found.rerun_online = server.stats.by_endpoint[EMBEDDINGS]
        found.rerun_creates = server.batch_creates
        online = _config(batch_data, server.url, tmp / "online", batch=False, price=PRICE)
        found.online = _run(online, tmp / "online")
        found.online_sent = server.stats.by_endpoint[EMBEDDINGS]
        priced = _config(batch_data, server.url, tmp / "priced", price=PRICE)
        found.priced = _run(priced, tmp / "priced")
        return found


@pytest.mark.slow
def test_embeddings_go_as_batch_lines_and_an_online_rerun_is_cached(batch_data, runs):
    texts = _texts(batch_data)
    assert runs.online_lines == 0  # nothing online
    assert runs.creates == 1
    assert runs.job["endpoint"] == EMBEDDINGS
    rows = runs.rows
    assert {r["url"] for r in rows} == {EMBEDDINGS}
    # one text per line, the online call's body: the model's own name and the text
    assert all(r["body"]["model"] == "text-embedding-3-small" for r in rows)
    assert all(len(r["body"]["input"]) == 1 for r in rows)
    assert len(rows) == texts == runs.lines
    assert runs.engine == texts
    summary = runs.batch.summary
    assert summary["failed_items"] == 0
    stats = summary["batch"][MODEL]
    assert (stats["jobs"], stats["requests"], stats["answered"], stats["failed"]) == (
        1,
        texts,
        texts,
        0,
    )

    # the same config online on that cache: nothing sent, the same scores
    assert runs.rerun_online == 0 and runs.rerun_creates == 1
    assert runs.rerun.scores == runs.batch.scores

    # the same run online from an empty cache (priced: the vectors are the same): the same
    # vectors, so the same scores
    assert runs.online_sent > 0
    assert runs.online.scores == runs.batch.scores


@pytest.mark.slow
def test_embedding_lines_cost_half_the_online_price(runs):
    online = runs.online.summary["usage"]["judge"]
    batch = runs.priced.summary["usage"]["judge"]
    assert online["cost"] > 0
    assert batch["cost"] == pytest.approx(online["cost"] / 2, rel=1e-9)
    # and litellm's batch rate where no price is set (text-embedding-3-small: $0.01 / 1M)
    priced = runs.batch.summary["usage"]["judge"]
    tokens = sum(x["response"]["body"]["usage"]["prompt_tokens"] for x in runs.output)
    assert tokens > 0 and priced["cost"] == pytest.approx(tokens * 0.01e-6, rel=1e-6)


@pytest.mark.slow
def test_a_failed_embedding_line_is_a_failure_record_not_cached(batch_data, tmp_path):
    with BatchServer(responder=build_responder("auto")) as server:
        server.plan(Plan(fail={0: "This input could not be embedded."}))
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 1
        assert server.stats.by_endpoint[EMBEDDINGS] == 0
        items = (_run_dir(tmp_path) / "items.jsonl").read_text()
        assert "batch line failed: HTTP 400 invalid_request_error: This input could not" in items
        assert _summary(tmp_path)["batch"][MODEL]["failed"] == 1
        # the failure was not cached: online, that one text alone is asked again
        config = _config(batch_data, server.url, tmp_path, batch=False)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.stats.by_endpoint[EMBEDDINGS] == 1


def test_batch_on_an_azure_embedding_model_is_refused_at_load(batch_data, tmp_path, capsys):
    config = _config(
        batch_data, "https://example.openai.azure.com", tmp_path, model="litellm:azure/emb"
    )
    assert main(["run", _write(config, tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "Azure OpenAI's batch API takes no embeddings models" in err
    assert "litellm:openai/..." in err and "Traceback" not in err
