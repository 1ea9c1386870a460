"""Structured output in each server's dialect (`models.litellm.dialects`), through real litellm
and real HTTP to the fake server speaking that server's dialect
(`FakeOpenAIServer(server=...)`, whose rules and their sources are in
tests/doubles/server_dialects.py and docs/research/server-dialects.md):

- a chosen dialect is what goes on the wire, and the server constrains the reply by it;
- `auto` (the default at an api_base) learns what an endpoint takes from its documented
  refusal, with at most one refused request however many calls wait, keeps it in the cache
  dir for the next run, says so once, and learns again when the endpoint starts refusing;
- the calls that waited for the learner, and every call once the dialect is known, reach
  the server together, under `auto` as under a chosen dialect.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from doubles.server import FakeOpenAIServer
from doubles.server_dialects import LLAMA_CPP_REFUSAL
from doubles.server_request import ChatRequest, Reply
from doubles.server_scripts import JudgeResponder

from titjudge.cache.store import CallCache
from titjudge.judges.schemas import JudgeVerdict
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.models.litellm.dialects import FACT, DialectMemory, refusal, send_learning

PROMPT = "PROMPT:\na red fox on snow\n\nDESCRIPTION:\na red fox stands on white snow"


class Recorder:
    """The fake's judge, noting the schema each request was constrained to (None: none)."""

    def __init__(self) -> None:
        self.judge = JudgeResponder()
        self.schemas: list[dict | None] = []
        self.bodies: list[dict] = []

    def __call__(self, request: ChatRequest) -> Reply:
        self.schemas.append(request.json_schema)
        self.bodies.append(request.body)
        return self.judge(request)


def calls(server, cache_dir, n: int = 1, concurrency: int = 4, **options):
    """`n` concurrent judge calls (distinct prompts) through one hub; (results, hub facts)."""

    async def go():
        hub = ModelHub(CallCache(cache_dir), default_concurrency=concurrency)
        model = ModelOptions(api_base=server.url, backoff_initial=0.0, **options)
        client = hub.text_client("litellm:openai/judge", model)
        try:
            requests = [GenerateRequest(prompt=f"{PROMPT} number {i}") for i in range(n)]
            results = await asyncio.gather(
                *(client.structured(r, JudgeVerdict, role="judge", probe=SEND) for r in requests)
            )
            return results, client.backend.describe()
        finally:
            await hub.aclose()

    return asyncio.run(go())


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")


@pytest.mark.parametrize(
    ("server_kind", "dialect", "where"),
    [
        ("openai", "json_schema", ("response_format", "json_schema", "schema")),
        ("llama_cpp_python", "json_object", ("response_format", "schema")),
        ("llama_server", "json_object", ("response_format", "schema")),
        ("vllm", "structured_outputs", ("structured_outputs", "json")),
        ("vllm", "guided_json", ("guided_json",)),
        ("tgi", "json_value", ("response_format", "value")),
    ],
)
def test_a_chosen_dialect_is_what_the_server_reads(tmp_path, server_kind, dialect, where):
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server=server_kind) as server:
        (result,), facts = calls(server, tmp_path / "c", structured_output=dialect)
    assert result.ok, result.error
    (body,) = recorder.bodies
    found = body
    for key in where:
        found = found[key]
    assert found["title"] == "JudgeVerdict" and "rationale" in found["properties"]
    assert recorder.schemas == [found]  # the server constrained the reply to it
    assert dialect in facts["structured_output"] or "structured_outputs" in where
    if dialect != "json_schema":
        assert body.get("response_format", {}).get("type") != "json_schema"


def test_prompt_sends_no_schema_and_still_validates(tmp_path):
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server="llama_cpp_python") as server:
        (result,), facts = calls(server, tmp_path / "c", structured_output="prompt")
    assert not result.ok  # the fake's unconstrained judge reply lacks the schema's rationale
    assert "rationale" in (result.error or "")  # validated: a schema mismatch, never a number
    assert all("response_format" not in b for b in recorder.bodies)
    assert facts["structured_output"].startswith("prompted")


def test_auto_learns_llama_cpp_pythons_dialect_with_one_refused_request(tmp_path, caplog):
    recorder = Recorder()
    caplog.set_level(logging.WARNING, logger="titjudge")
    with FakeOpenAIServer(responder=recorder, server="llama_cpp_python") as server:
        results, facts = calls(server, tmp_path / "c", n=12, concurrency=6)
        refused = server.stats.by_fault["dialect"]
        url = server.url
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert refused == 1  # the others waited for the first to learn
    assert len(recorder.schemas) == 12 and all(s is not None for s in recorder.schemas)
    said = [r.getMessage() for r in caplog.records if "refused json_schema" in r.getMessage()]
    assert len(said) == 1 and url in said[0] and "json_object" in said[0]
    assert "HTTP 500" in said[0]
    assert facts["structured_output"].startswith('auto: response_format {"type": "json_object"')
    kept = CallCache(tmp_path / "c").get_meta(FACT + url.rstrip("/"))
    assert kept["dialect"] == "json_object" and kept["refused"][0]["dialect"] == "json_schema"


def test_auto_learns_tgis_dialect_from_its_one_refusal(tmp_path, caplog):
    """TGI refuses OpenAI's shape with a 422 that names the field it wants ("missing field
    `value`", text/plain): the next request goes in TGI's shape, so the endpoint refuses one
    request, and every call is constrained."""
    recorder = Recorder()
    caplog.set_level(logging.WARNING, logger="titjudge")
    with FakeOpenAIServer(responder=recorder, server="tgi") as server:
        results, facts = calls(server, tmp_path / "c", n=8, concurrency=4)
        refused = server.stats.by_fault["dialect"]
        url = server.url.rstrip("/")
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert refused == 1  # json_schema; llama-cpp-python's json_object is skipped
    assert len(recorder.schemas) == 8 and all(s is not None for s in recorder.schemas)
    assert all(
        b["response_format"] == {"type": "json_object", "value": s}
        for b, s in zip(recorder.bodies, recorder.schemas, strict=True)
    )
    said = [r.getMessage() for r in caplog.records if "refused json_schema" in r.getMessage()]
    assert len(said) == 1 and "json_value" not in said[0].split(";")[0] and "HTTP 422" in said[0]
    assert facts["structured_output"].startswith(
        'auto: response_format {"type": "json_object", "value"'
    )
    kept = CallCache(tmp_path / "c").get_meta(FACT + url)
    assert kept["dialect"] == "json_value"
    assert [r["dialect"] for r in kept["refused"]] == ["json_schema"]


def test_a_fact_kept_before_tgis_dialect_existed_is_learnt_again(tmp_path):
    """An older titjudge learnt `prompt` at a TGI endpoint after json_schema and json_object
    were refused: that fact skipped json_value, so it is learnt again (one refusal) and the
    calls are constrained in TGI's shape. A fact that tried every earlier dialect is kept."""
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server="tgi") as server:
        url = server.url.rstrip("/")
        old = [
            {"dialect": "json_schema", "why": "HTTP 422: ... unknown variant `json_schema`"},
            {"dialect": "json_object", "why": "HTTP 422: ..."},
        ]
        CallCache(tmp_path / "c").set_meta(FACT + url, {"dialect": "prompt", "refused": old})
        results, _ = calls(server, tmp_path / "c", n=3)
        refused = server.stats.by_fault["dialect"]
    assert all(r.ok for r in results) and refused == 1
    assert CallCache(tmp_path / "c").get_meta(FACT + url)["dialect"] == "json_value"
    assert all(s is not None for s in recorder.schemas)
    memory = DialectMemory(CallCache(tmp_path / "c"))
    assert memory.dialect(url) == "json_value"  # complete: kept as it is


def test_a_later_run_uses_what_the_endpoint_took_without_a_refusal(tmp_path):
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server="llama_cpp_python") as server:
        calls(server, tmp_path / "c", n=1)
        first = server.stats.by_fault["dialect"]
        server.reset_stats()
        results, _ = calls(server, tmp_path / "c", n=4, concurrency=4)
        again = server.stats.by_fault["dialect"]
    assert first == 1 and again == 0
    assert all(r.ok for r in results)


@pytest.mark.parametrize("server_kind", ["openai", "ollama", "vllm", "llama_server"])
def test_auto_keeps_json_schema_where_the_server_takes_it(tmp_path, server_kind):
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server=server_kind) as server:
        results, facts = calls(server, tmp_path / "c", n=3)
        refused = server.stats.by_fault["dialect"]
    assert refused == 0 and all(r.ok for r in results)
    assert all(b["response_format"]["type"] == "json_schema" for b in recorder.bodies)
    assert all(s is not None for s in recorder.schemas)
    assert facts["structured_output"].startswith('auto: response_format {"type": "json_schema"')


def test_an_endpoint_that_starts_refusing_is_learnt_again(tmp_path):
    """What a URL took may change (another server started on the port): the kept dialect is
    tried first, and its refusal learns afresh."""
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server="llama_cpp_python") as server:
        CallCache(tmp_path / "c").set_meta(
            FACT + server.url.rstrip("/"), {"dialect": "json_schema", "refused": []}
        )
        results, facts = calls(server, tmp_path / "c", n=5, concurrency=5)
        refused = server.stats.by_fault["dialect"]
        url = server.url.rstrip("/")
    assert all(r.ok for r in results)
    assert 1 <= refused <= 5  # those already sent in the kept dialect, then none
    assert "json_object" in facts["structured_output"]
    kept = CallCache(tmp_path / "c").get_meta(FACT + url)
    assert kept["dialect"] == "json_object"
    assert [r["dialect"] for r in kept["refused"]] == ["json_schema"]


class StatusError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status_code, self.message = status, message


@pytest.mark.parametrize(
    ("status", "message", "refused"),
    [
        # llama-cpp-python, FastAPI < 0.124 (doubles.server_dialects.LLAMA_CPP_REFUSAL)
        (500, LLAMA_CPP_REFUSAL.format(kind="json_schema"), True),
        # llama-server before PR #9527 (ggml-org/llama.cpp#9522) and after (400)
        (
            500,
            'response_format type must be one of "text" or "json_object", but got: json_schema',
            True,
        ),
        (400, 'response_format type must be one of "text" or "json_object", but got: x', True),
        # llama-server with --jinja (ggml-org/llama.cpp#11847)
        (400, 'Either "json_schema" or "grammar" can be specified, but not both', True),
        # TGI's axum extractor (docs/research/server-dialects.md, 5b)
        (
            422,
            "Failed to deserialize the JSON body into the target type: response_format: "
            "missing field `value` at line 1 column 90",
            True,
        ),
        # not the shape: a context overflow, an ordinary 500, a rate limit
        (
            400,
            "This model's maximum context length is 4096 tokens. However, you requested "
            "5000 tokens",
            False,
        ),
        (500, "The server had an error processing your request.", False),
        (429, "response_format rate limit", False),
    ],
)
def test_which_errors_are_a_refusal_of_the_dialect(status, message, refused):
    assert (refusal(StatusError(status, message)) is not None) is refused


@pytest.mark.parametrize(
    ("message", "named"),
    [
        # TGI 3.3 (json_schema is a variant; its content goes under `value`)
        ("response_format: missing field `value` at line 1 column 90", "json_value"),
        # TGI before 3.3, serde listing the variants with or without the alias
        (
            "response_format: unknown variant `json_schema`, expected `json` or `regex`",
            "json_value",
        ),
        (
            "response_format: unknown variant `json_schema`, expected one of `json`, "
            "`json_object`, `regex`",
            "json_value",
        ),
        # llama-cpp-python names no shape it wants beyond its types: tried in order
        (LLAMA_CPP_REFUSAL.format(kind="json_schema"), None),
    ],
)
def test_a_refusal_that_names_the_shape_it_wants_is_followed(message, named):
    """TGI's 422 says where the schema goes: the next request is sent in TGI's shape, not
    in llama-cpp-python's, which TGI would refuse too (docs/research/server-dialects.md 5b)."""
    from titjudge.models.litellm.dialects import named_by

    why = refusal(StatusError(422 if named else 500, "Failed to deserialize: " + message))
    assert why is not None and named_by(why) == named


def test_a_learning_request_that_fails_otherwise_leaves_the_next_to_learn():
    """Only a refusal teaches: a timeout of the first request is its own failure, raised as it
    came, and the next request learns."""
    memory = DialectMemory()
    sent: list[str] = []

    async def flaky(dialect):
        sent.append(dialect)
        if len(sent) == 1:
            raise TimeoutError("timed out")
        if dialect == "json_schema":
            raise StatusError(500, LLAMA_CPP_REFUSAL.format(kind="json_schema"))
        return dialect

    async def go():
        with pytest.raises(TimeoutError):
            await send_learning(memory, "http://x/v1", flaky)
        assert memory.dialect("http://x/v1") is None
        return await send_learning(memory, "http://x/v1", flaky)

    assert asyncio.run(go()) == "json_object"
    assert sent == ["json_schema", "json_schema", "json_object"]
    assert memory.dialect("http://x/v1") == "json_object"


def test_requests_that_waited_for_the_learner_are_sent_together():
    """The requests that arrive while one learns the endpoint's dialect wait for its answer
    only: once it is back, all of them are in `send` at once (a regression made each wait for
    every waiter before it, holding the learning lock while it sent). No clock: the fake
    `send` holds each request until all the waiters are inside it, and the first that would
    wait in vain (a serialised send) lets everything through and is counted."""
    memory, endpoint, waiters = DialectMemory(), "http://x/v1", 7
    learner_in, learner_go, all_in = asyncio.Event(), asyncio.Event(), asyncio.Event()
    state = {"in": 0, "most": 0, "alone": 0}

    async def send(dialect):
        if not learner_in.is_set():  # the first request: the one that learns
            learner_in.set()
            await learner_go.wait()
            return dialect
        state["in"] += 1
        state["most"] = max(state["most"], state["in"])
        if state["in"] == waiters:
            all_in.set()
        if not all_in.is_set():
            for _ in range(100):  # plenty of loop turns for the other waiters to come in
                await asyncio.sleep(0)
                if all_in.is_set():
                    break
            else:
                state["alone"] += 1
                all_in.set()
        state["in"] -= 1
        return dialect

    async def go():
        tasks = [asyncio.ensure_future(send_learning(memory, endpoint, send))]
        await learner_in.wait()
        tasks += [
            asyncio.ensure_future(send_learning(memory, endpoint, send)) for _ in range(waiters)
        ]
        for _ in range(10):
            await asyncio.sleep(0)
        assert memory.learning(endpoint) is not None  # they wait for the learner
        learner_go.set()
        return await asyncio.gather(*tasks)

    assert asyncio.run(go()) == ["json_schema"] * (waiters + 1)
    assert state == {"in": 0, "most": waiters, "alone": 0}
    assert memory.learning(endpoint) is None and memory.dialect(endpoint) == "json_schema"


class HoldUntil:
    """The fake's judge, holding each request (after the first `skip`) until `k` are held at
    once; the first request that waits `patience` seconds in vain lets every request through
    from then on, so a client that sends them one by one fails the test rather than hanging
    it. `most` is the largest number held together."""

    def __init__(self, k: int, skip: int = 0, patience: float = 20.0):
        self.k, self.skip, self.patience = k, skip, patience
        self.judge = JudgeResponder()
        self.seen = self.held = self.most = 0
        self.schemas: list[dict | None] = []
        self._all: asyncio.Event | None = None

    async def __call__(self, request: ChatRequest) -> Reply:
        self.schemas.append(request.json_schema)
        self.seen += 1
        if self.seen > self.skip:
            if self._all is None:  # made on the server's own loop
                self._all = asyncio.Event()
            self.held += 1
            self.most = max(self.most, self.held)
            if self.held >= self.k:
                self._all.set()
            try:
                await asyncio.wait_for(self._all.wait(), self.patience)
            except asyncio.TimeoutError:
                self._all.set()
            self.held -= 1
        return self.judge(request)


@pytest.mark.parametrize(
    ("how", "options", "skip"),
    [
        ("auto, learnt by the run's first request", {}, 1),
        ("auto, known from an earlier run", {}, 0),
        ("json_schema, chosen", {"structured_output": "json_schema"}, 0),
    ],
)
def test_concurrent_judge_calls_reach_the_server_together(tmp_path, how, options, skip):
    """N judge calls at concurrency N: with the dialect known (learnt in this run, kept from
    an earlier one, or chosen), every one of them is at the server at once; under `auto` as
    under an explicit dialect. The server double holds each until they all are (see
    `HoldUntil`), and counts them in flight."""
    n = 12
    holder = HoldUntil(k=n - skip, skip=skip)
    with FakeOpenAIServer(responder=holder, server="openai") as server:
        if how.endswith("earlier run"):
            CallCache(tmp_path / "c").set_meta(
                FACT + server.url.rstrip("/"), {"dialect": "json_schema", "refused": []}
            )
        results, facts = calls(server, tmp_path / "c", n=n, concurrency=n, **options)
        in_flight = server.stats.max_in_flight
    assert all(r.ok for r in results), [r.error for r in results if not r.ok]
    assert holder.most == n - skip, how
    assert in_flight >= n - skip
    assert len(holder.schemas) == n and all(s is not None for s in holder.schemas)
    assert "json_schema" in facts["structured_output"]


def test_explain_shows_the_body_in_the_dialect_a_run_would_send(tmp_path):
    """`titjudge explain` reads what the run's cache dir learnt: the body it prints is the
    one a run sends, and a note says why (or that nothing is learnt yet)."""
    from titjudge.models.litellm.dialects import DialectMemory
    from titjudge.models.litellm.explain import explain_request
    from titjudge.records.spec import parse_model_spec

    with FakeOpenAIServer(responder=Recorder(), server="llama_cpp_python") as server:
        calls(server, tmp_path / "c", n=1)
        url = server.url
    spec = parse_model_spec("litellm:openai/judge")
    options = ModelOptions(api_base=url)
    request = GenerateRequest(
        prompt="PROMPT:\nx",
        json_schema=JudgeVerdict.model_json_schema(),
        schema_name="JudgeVerdict",
    )
    fresh = explain_request(spec, options, request, DialectMemory())
    assert fresh.body["response_format"]["type"] == "json_schema"
    assert any("has not been asked yet" in note for note in fresh.notes)
    learnt = explain_request(spec, options, request, DialectMemory(CallCache(tmp_path / "c")))
    assert learnt.body["response_format"]["type"] == "json_object"
    assert learnt.body["response_format"]["schema"]["title"] == "JudgeVerdict"
    assert any("took json_object" in note for note in learnt.notes)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"model": "hf:HuggingFaceTB/SmolLM2-135M-Instruct", "structured_output": "json_object"},
            "structured_output applies to litellm: models",
        ),
        (
            {
                "model": "litellm:openai/judge",
                "structured_output": "json_object",
                "params": {"json_schema_mode": False},
            },
            "params.json_schema_mode: false sends no schema, but structured_output is 'json_object'",
        ),
        ({"model": "litellm:openai/judge", "structured_output": "grammar"}, "structured_output"),
    ],
)
def test_a_structured_output_that_cannot_apply_is_refused_at_load(fields, message):
    from titjudge.config.load import validate_config
    from titjudge.config.schema import JudgeConfig
    from titjudge.errors import ConfigError

    with pytest.raises(ConfigError, match="judges.yaml") as caught:
        validate_config({"name": "j", "kind": "llm", **fields}, JudgeConfig, "judges.yaml")
    assert message in str(caught.value)


def test_a_server_that_echoes_the_model_asked_for_is_asked_what_it_serves(tmp_path):
    """llama-cpp-python answers any model name with the name sent and lists only the model it
    loaded at /v1/models (docs/research/server-dialects.md, section 1): the answer is recorded
    as that model's, and `run.require_model: exact` refuses it for a config naming another."""
    loaded = "model/SmolLM2-135M-Instruct.Q4_1.gguf"

    async def go(url, require):
        hub = ModelHub(CallCache(tmp_path / require), require_model=require)
        client = hub.text_client("litellm:openai/Qwen3-8B", ModelOptions(api_base=url))
        try:
            results = await asyncio.gather(
                *(
                    client.structured(
                        GenerateRequest(prompt=f"{PROMPT} {i}"),
                        JudgeVerdict,
                        role="judge",
                        probe=SEND,
                    )
                    for i in range(3)
                )
            )
            return results, client.backend.describe()
        finally:
            await hub.aclose()

    with FakeOpenAIServer(
        responder=Recorder(), server="llama_cpp_python", models=(loaded,)
    ) as server:
        reported, facts = asyncio.run(go(server.url, "report"))
        exact, _ = asyncio.run(go(server.url, "exact"))
        listed = server.stats.by_endpoint["/v1/models"]
    assert all(r.ok and r.answered_by == loaded for r in reported)
    assert facts["served_models"] == [loaded]
    assert listed == 2  # once per run, however many replies
    assert not any(r.ok for r in exact)
    assert all(loaded in (r.error or "") and "Qwen3-8B" in (r.error or "") for r in exact)


def test_a_server_that_serves_the_name_asked_for_keeps_it(tmp_path):
    recorder = Recorder()
    with FakeOpenAIServer(responder=recorder, server="vllm", models=("judge",)) as server:
        results, facts = calls(server, tmp_path / "c", n=2)
    assert all(r.ok and r.answered_by == "judge" for r in results)
    assert facts["served_models"] == ["judge"]
