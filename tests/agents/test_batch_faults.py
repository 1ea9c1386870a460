"""Batch mode where a provider or a config is less kind than the happy path: a job-creation
reply lost after the job was made, images fitted for the model, two clients of one model,
embedding lines under a budget. Each failed before its fix (found in review)."""

import json

import pytest
from batch_helpers import N_ITEMS, batch_env
from batch_helpers import summary as _summary
from builders import run_config
from doubles.batch_server import BatchServer
from doubles.server import build_responder
from pipeline_helpers import stored_descriptions

from titjudge.cli import main

pytestmark = pytest.mark.slow  # each test is a whole run


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


def _config(data, url, tmp_path, **run):
    return run_config(data, tmp_path, url=url, batch=True, **run)


def _write(config, tmp_path, name="run.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return str(path)


class LostCreateReply(BatchServer):
    """POST /v1/batches creates the job, then the reply is lost (a 502 from a proxy, a
    reset connection): the job exists and will be run and billed, so titjudge must find it
    (by its metadata) rather than create another. The create used to be retried in place."""

    lose = 1

    async def _create_batch(self, http):
        made = await super()._create_batch(http)
        if self.lose > 0:
            self.lose -= 1
            return web_error(502)
        return made


def web_error(status):
    from aiohttp import web

    return web.json_response(
        {"error": {"message": "Bad gateway", "type": "server_error"}}, status=status
    )


def test_a_create_whose_reply_is_lost_does_not_create_a_second_job(batch_data, tmp_path):
    server = LostCreateReply(build_responder("auto", descriptions=stored_descriptions(batch_data)))
    with server:
        config = _config(batch_data, server.url, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        # every job the provider holds is run and billed; titjudge read only some of them
        lines = sum(b["request_counts"]["total"] for b in server.batches.values())
        assert server.batch_creates == 2, (
            f"{server.batch_creates} jobs created, {lines} lines billed"
        )


def test_batch_lines_use_the_fitted_image_of_a_remembered_image(batch_data, tmp_path):
    """Run 1 (online) loads the images; run 2 (batch, a smaller max_image_pixels) must fit
    them to key its lines as the online call would: it used to take the cache-only probe's
    shortcut, so each line carried the unfitted image under an unfitted key, and the graph
    then asked every description (and every judge after it) online again."""
    responder = build_responder("auto", descriptions=stored_descriptions(batch_data))
    with BatchServer(responder) as server:
        config = run_config(batch_data, tmp_path, url=server.url)
        config["describer"]["model"] = "litellm:openai/other-vlm"  # only loads the images
        assert main(["run", _write(config, tmp_path)]) == 0
        online_first = server.stats.total
        config = _config(batch_data, server.url, tmp_path)
        config["describer"]["max_image_pixels"] = 32 * 32
        assert main(["run", _write(config, tmp_path)]) == 0
        summary = _summary(tmp_path)
        sent_online = server.stats.total - online_first
        batch = summary.get("batch")
        # the describer's lines went as batch lines AND were asked again online
        assert sent_online == 0 and server.lines_answered == 2 * N_ITEMS, (
            sent_online,
            server.lines_answered,
            batch,
            server.batch_creates,
        )


def test_two_clients_of_one_model_get_their_own_batch_answers(batch_data, tmp_path):
    """Two judges on the same model with different params are two clients (`ModelHub`), one
    model name: each client's calls go in its own job, built by its own backend, and each
    answer reaches the client that asked (they used to be grouped by model name and handed
    to the first client, the second's calls failed as "no batch API")."""
    responder = build_responder("auto", descriptions=stored_descriptions(batch_data))
    with BatchServer(responder) as server:
        config = _config(batch_data, server.url, tmp_path)
        second = dict(config["judges"][0], name="tit_llm_seeded", params={"seed": 7})
        config["judges"].insert(1, second)
        assert main(["run", _write(config, tmp_path)]) == 0
        summary = _summary(tmp_path)
        seeds = [
            {
                json.loads(t)["body"].get("seed")
                for t in server.contents[b["input_file_id"]].decode().splitlines()
            }
            for b in server.batches.values()
        ]
    stats = summary["batch"]["litellm:openai/judge"]
    judged = 2 * N_ITEMS  # each item by each judge
    assert stats == {**stats, "jobs": 2, "requests": judged, "answered": judged, "failed": 0}
    # the describer's job, then one job per judge client, each with its own bodies
    assert server.batch_creates == 3 and seeds[1:] in ([{None}, {7}], [{7}, {None}])
    assert summary["failed_items"] == 0 and summary["usage"]["judge"]["failures"] == 0
    assert server.stats.total == 0


def test_embedding_batch_lines_are_capped_by_the_budget(batch_data, tmp_path):
    """Under run.budget_usd an embedding batch line's worst case (its texts' tokens at the
    batch price) is reserved before it is sent, as a text line's is: one the budget cannot
    cover is not sent (it used to be reserved at $0, so never refused)."""
    embed = "litellm:openai/text-embedding-3-small"
    with BatchServer(responder=build_responder("auto")) as server:
        config = {
            "name": "e2e",
            "data": {
                "manifest": str(batch_data / "manifest.jsonl"),
                "human_pairs": str(batch_data / "pairs.csv"),
            },
            "describer": {"model": f"replay:{batch_data / 'descriptions.jsonl'}"},
            "judges": [
                {
                    "name": "tit_embed",
                    "kind": "embedding",
                    "model": embed,
                    "api_base": server.url,
                    "batch": True,
                    "batch_poll": 0.05,
                    "price": {"input": 1_000_000.0, "output": 0.0},  # $1 a token
                }
            ],
            "run": {
                "cache_dir": str(tmp_path / "cache"),
                "out": str(tmp_path / "runs"),
                "budget_usd": 1.0,  # less than any one text
            },
        }
        assert main(["run", _write(config, tmp_path)]) == 3
        budget = _summary(tmp_path)["budget"]
        assert server.lines_answered == 0 and server.batch_creates == 0
        assert budget["stopped"] is True and budget["spent_usd"] == 0
        assert budget["run_calls_not_sent"] > 0
