"""`batch: true` on a `litellm:gemini/...` model: a run's calls go through the Gemini Batch API
(a loopback double of its File and Batch endpoints, `doubles.gemini_batch_server`, whose lines
are answered as the online generateContent stand-in answers), durably, at batch price."""

import asyncio
import json
import os
import signal
from types import SimpleNamespace

import pytest
from batch_helpers import N_ITEMS, batch_env
from batch_helpers import run_dir as _run_dir
from batch_helpers import summary as _summary
from batch_helpers import wait_for as _wait
from batch_helpers import write_config as _write
from builders import run_config
from cli_process import start_cli
from doubles.gemini_batch_server import GeminiBatchServer, Plan
from pipeline_helpers import stored_descriptions

# importable once doubles.gemini_batch_server (sorted first) put tests/conformance on sys.path
from provider_server import (
    ProviderServer,
    gemini_max_tokens_no_parts,
    gemini_max_tokens_partial,
    gemini_ok,
    gemini_prompt_blocked,
    gemini_safety,
)

from titjudge.cli import main
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm.backend import LiteLLMBackend
from titjudge.records.spec import parse_model_spec

KEY = "gemini-test-key-0123456789abcdef"
DESCRIBER = "litellm:gemini/gemini-2.5-flash"
JUDGE = "litellm:gemini/gemini-2.5-flash-lite"


@pytest.fixture(scope="module", autouse=True)
def batch_data(tmp_path_factory, synthetic):
    with batch_env(tmp_path_factory, synthetic) as data:
        yield data


@pytest.fixture(autouse=True)
def gemini_key(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", KEY)


def _config(data, base, tmp_path, batch=True):
    config = run_config(
        data, tmp_path, url=base, describer_model=DESCRIBER, judge_model=JUDGE, batch=batch
    )
    for section in (config["describer"], config["judges"][0]):
        section["thinking"] = {"budget": 512}  # 2.5 thinks: titjudge wants a budget
    return config


def _server(data) -> GeminiBatchServer:
    return GeminiBatchServer(stored_descriptions(data))


def _online(server) -> int:
    return len(server.requests_for("gemini"))


def _seen(server, tmp_path) -> SimpleNamespace:
    """What the double saw so far, and the latest run's record under `tmp_path`."""
    return SimpleNamespace(
        online=_online(server),
        creates=server.batch_creates,
        lines=server.lines_answered,
        batch_requests=list(server.batch_requests),
        keys_in_urls=server.keys_in_urls,
        summary=_summary(tmp_path),
        scores=(_run_dir(tmp_path) / "scores.csv").read_text(),
        ledgers=list((tmp_path / "cache" / "batches").glob("*.json")),
    )


def _batch_then_online(data, server, url, tmp_path) -> tuple[SimpleNamespace, SimpleNamespace]:
    """The config as batch jobs, then online on the same cache."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    assert main(["run", _write(_config(data, url, tmp_path), tmp_path)]) == 0
    batch = _seen(server, tmp_path)
    assert main(["run", _write(_config(data, url, tmp_path, batch=False), tmp_path)]) == 0
    return batch, _seen(server, tmp_path)


@pytest.fixture(scope="module")
def v1beta_runs(batch_data, tmp_path_factory):
    """With api_base .../v1beta, against one double: the config as batch jobs, online on
    that cache, then online on a cache of its own."""
    tmp = tmp_path_factory.mktemp("gemini-v1beta")
    with pytest.MonkeyPatch.context() as patch, _server(batch_data) as server:
        patch.setenv("GEMINI_API_KEY", KEY)
        batch, rerun = _batch_then_online(batch_data, server, server.gemini_base, tmp / "batch")
        online = _config(batch_data, server.gemini_base, tmp / "online", batch=False)
        assert main(["run", _write(online, tmp)]) == 0
        return SimpleNamespace(
            batch=batch,
            rerun=rerun,
            online=_seen(server, tmp / "online"),
            online_bodies=sorted(
                json.dumps(r.body, sort_keys=True) for r in server.requests_for("gemini")
            ),
            lines=sorted(json.dumps(r.body, sort_keys=True) for r in server.engine.requests),
        )


@pytest.mark.slow
@pytest.mark.parametrize("base", ["v1beta", "host"])
def test_batch_run_answers_every_item_and_an_online_rerun_is_cached(
    batch_data, tmp_path, base, request
):
    """With api_base as litellm takes it (.../v1beta) or a bare host: every call goes as a
    line of a job, the key only in a header; the same config online then finds every answer
    cached."""
    if base == "v1beta":
        runs = request.getfixturevalue("v1beta_runs")
        batch, rerun = runs.batch, runs.rerun
    else:
        with _server(batch_data) as server:
            batch, rerun = _batch_then_online(batch_data, server, server.url, tmp_path)
    assert batch.online == 0  # nothing online: every call went as a batch line
    assert batch.creates == 2  # the descriptions, then the judges that read them
    assert batch.lines == 2 * N_ITEMS
    summary = batch.summary
    assert summary["failed_items"] == 0
    assert summary["batch"][DESCRIBER]["answered"] == N_ITEMS
    assert summary["batch"][JUDGE]["requests"] == N_ITEMS
    assert summary["usage"]["describer"]["cache_hits"] == 0
    # the key went in x-goog-api-key on every call, never in a URL
    assert batch.batch_requests and batch.keys_in_urls == 0
    assert {r.header("x-goog-api-key") for r in batch.batch_requests} == {KEY}
    uploads = [r for r in batch.batch_requests if r.path.startswith("/upload/")]
    assert [r.header("X-Goog-Upload-Command") for r in uploads] == [
        "start",
        "upload, finalize",
    ] * 2
    assert batch.ledgers == []

    assert rerun.online == 0 and rerun.creates == 2
    assert rerun.summary["usage"]["describer"]["cache_hits"] == N_ITEMS
    assert rerun.summary["usage"]["judge"]["cache_hits"] == N_ITEMS
    assert rerun.scores == batch.scores


@pytest.mark.slow
@pytest.mark.parametrize("field", ["error", "status"])
def test_a_failed_line_is_a_failure_record_with_the_providers_reason(batch_data, tmp_path, field):
    with _server(batch_data) as server:
        server.plan(Plan(fail={0: "Unable to process input image."}, fail_field=field))
        config = _config(batch_data, server.gemini_base, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 1
        assert _online(server) == 0
        summary = _summary(tmp_path)
        assert summary["describer_failures"] == 1
        assert summary["batch"][DESCRIBER]["failed"] == 1
        items = (_run_dir(tmp_path) / "items.jsonl").read_text()
        assert "batch line failed: INVALID_ARGUMENT: Unable to process input image." in items


@pytest.mark.slow
def test_a_reply_cut_at_the_token_limit_names_the_cap_the_line_sent(batch_data, tmp_path):
    """As online: a MAX_TOKENS reply is a failure record, and the cap it names is the line's
    maxOutputTokens (the answer's max_tokens plus the thinking budget)."""
    with _server(batch_data) as server:
        server.plan(Plan(truncate={0}))
        config = _config(batch_data, server.gemini_base, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 1
        assert _summary(tmp_path)["describer_failures"] == 1
        lines = server.engine.requests_for("gemini", "gemini-2.5-flash")  # the describer's
        (cap,) = {r.body["generationConfig"]["max_output_tokens"] for r in lines}
        items = (_run_dir(tmp_path) / "items.jsonl").read_text()
        assert "truncated: the reply stopped at the token limit (finish_reason=length" in items
        assert f"cap sent {cap})" in items


@pytest.mark.slow
def test_an_expired_job_sends_its_requests_again(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan(expire=True))
        config = _config(batch_data, server.gemini_base, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        # describer: the expired job (no results) and one for all its lines; then the judges
        assert server.batch_creates == 3
        assert server.lines_answered == 2 * N_ITEMS
        assert _online(server) == 0
        assert _summary(tmp_path)["failed_items"] == 0


@pytest.mark.slow
def test_an_invalid_structured_reply_is_validated_and_reasked(batch_data, tmp_path):
    with _server(batch_data) as server:
        server.plan(Plan())  # the descriptions
        server.plan(Plan(replace={0: "I would rather not answer in JSON."}))  # the judges
        config = _config(batch_data, server.gemini_base, tmp_path)
        assert main(["run", _write(config, tmp_path)]) == 0
        assert server.batch_creates == 3  # the re-ask, quoting the invalid reply, in a third job
        assert server.lines_answered == 2 * N_ITEMS + 1
        summary = _summary(tmp_path)
        assert summary["failed_items"] == 0
        # as the double counts them: the judge's 8 lines and the re-ask's, in two jobs
        judged = summary["batch"][JUDGE]
        assert (judged["jobs"], judged["requests"]) == (2, N_ITEMS + 1)
        assert judged["answered"] == server.lines_answered - N_ITEMS == N_ITEMS + 1
        rows = [
            json.loads(r) for r in (_run_dir(tmp_path) / "items.jsonl").read_text().splitlines()
        ]
        assert [r["variant"] for r in rows if r["details"].get("reasked")] == ["tit_llm"]


@pytest.mark.slow
def test_same_bodies_as_online_and_spend_at_the_batch_price(v1beta_runs):
    """Each line's request is the body the online call POSTs to generateContent, and the
    replies cost litellm's batch rates: for Gemini 2.5 Flash and Flash-Lite, half the list."""
    assert len(v1beta_runs.lines) == 2 * N_ITEMS and v1beta_runs.lines == v1beta_runs.online_bodies
    for role in ("describer", "judge"):
        on = v1beta_runs.online.summary["usage"][role]
        batch = v1beta_runs.batch.summary["usage"][role]
        assert batch["tokens_in"] == on["tokens_in"] > 0
        assert batch["tokens_out"] == on["tokens_out"] > 0
        assert batch["cost"] == pytest.approx(on["cost"] / 2, rel=1e-6)


@pytest.mark.slow
def test_killed_while_creating_resumes_the_job_it_finds_by_display_name(
    batch_data, tmp_path, capsys
):
    """kill -9 once the job is created but before the ledger has its name: Gemini's create is
    not idempotent, so the re-run looks the job up by its display_name (past other jobs, over
    several pages of the list) and polls it: exactly one create for the describer. The killed
    run is a process of its own; the re-run, after it is gone, is the CLI's main here."""
    with _server(batch_data) as server:
        for n in range(5):
            server.decoy(f"someone-else-{n}")
        server.hold()
        config = _config(batch_data, server.gemini_base, tmp_path)
        path = _write(config, tmp_path)
        env = {**os.environ, "GEMINI_API_KEY": KEY}
        proc = start_cli(["run", path], env=env)
        _wait(lambda: server.batch_creates == 1, proc)
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        ledger = tmp_path / "cache" / "batches"
        (found,) = ledger.glob("*.json")
        raw = json.loads(found.read_text())
        for job in raw["jobs"]:  # as if killed before the job's name was recorded
            job["state"], job["job_id"] = "creating", None
        found.write_text(json.dumps(raw))
        server.release()
        capsys.readouterr()
        code = main(["run", path])
        err = capsys.readouterr().err
        assert code == 0, err
        # the describer's job was found and polled, never created again; then the judges' one
        assert server.batch_creates == 2
        listed = [r for r in server.batch_requests if r.path == "/v1beta/batches"]
        assert [r.query.get("pageToken") for r in listed] == [None, "2", "4"]
        assert server.lines_answered == 2 * N_ITEMS and _online(server) == 0
    assert _summary(tmp_path)["failed_items"] == 0


REPLIES = {
    "thoughts and cached tokens": gemini_ok(
        '{"score": 7}', 40, thought_text="Let me think.", prompt_tokens=300
    ),
    "thinking took every token": gemini_max_tokens_no_parts(500),
    "cut at the token limit": gemini_max_tokens_partial("The answer was cut", 200),
    "output blocked for safety": gemini_safety(),
    "prompt blocked": gemini_prompt_blocked(),
}
REPLIES["thoughts and cached tokens"].body["usageMetadata"]["cachedContentTokenCount"] = 120


@pytest.mark.slow
@pytest.mark.parametrize("shape", list(REPLIES))
def test_a_batch_response_reads_as_the_online_reply_does(shape):
    """The same GenerateContentResponse, answered online and as a batch row, is the same
    Generation (text without thought parts, finish reason, thinking and cached tokens), priced
    at litellm's batch rates."""
    reply = REPLIES[shape]
    with ProviderServer() as server:
        options = ModelOptions(api_base=server.gemini_base, thinking={"budget": 128})
        backend = LiteLLMBackend(parse_model_spec(DESCRIBER), options)
        server.enqueue("gemini-2.5-flash", reply)
        online = asyncio.run(backend.generate(GenerateRequest(prompt="hi", max_tokens=50)))
    api = backend.batch_api()
    parsed = api.parse({"key": "tj-1", "custom_id": "tj-1", "response": reply.body})
    assert parsed.error is None and not parsed.unfinished
    batch = parsed.generation
    for name in ("text", "finish_reason", "tokens_in", "tokens_out", "thinking_tokens"):
        assert getattr(batch, name) == getattr(online, name), name
    assert (batch.cached_tokens, batch.model, batch.reasoning) == (
        online.cached_tokens,
        online.model,
        online.reasoning,
    )
    if shape == "thoughts and cached tokens":
        assert batch.text == '{"score": 7}' and batch.cached_tokens == 120
        assert batch.thinking_tokens == 40 and batch.tokens_out == 42
        # litellm's gemini-2.5-flash batch rates: input 1.5e-7, cache read 3e-8, output 1.25e-6
        assert batch.cost == pytest.approx(180 * 1.5e-7 + 120 * 3e-8 + 42 * 1.25e-6)
