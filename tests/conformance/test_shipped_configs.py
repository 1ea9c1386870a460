"""The shipped Gemini, GPT-4o and vLLM configs, run end to end as users run them
(`titjudge run CONFIG --set ...api_base=...`), through litellm, against the provider stand-in
answering with the providers' documented shapes (each builder in provider_server.py cites
its source). Every case in the real-world-readiness issue ends as described there:

- Gemini MAX_TOKENS with no parts / with cut text, SAFETY: failure records naming the finish
  reason and the answer and thinking tokens; never judged, never cached; tokens still count.
- A judge reply with no text is never re-asked (no empty model turn is ever sent).
- Gemini 429 `retryDelay` in the body is honoured; OpenAI `Retry-After` likewise.
- OpenAI `insufficient_quota` stops requests to that model for the rest of the run.
- A 401 that echoes the key: the key reaches no run file, cache or log.
- thinking budgets reach `thinkingConfig` on top of the answer's `maxOutputTokens`;
  Qwen3's switch reaches vLLM as body-level `chat_template_kwargs`; nested `params` arrive
  unchanged; schemas stay in each provider's subset (OpenAI strict); images are bounded.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from provider_server import (
    RecordedRequest,
    Reply,
    gemini_429_retry_info,
    gemini_empty_text_parts,
    gemini_generation_config,
    gemini_max_tokens_no_parts,
    gemini_max_tokens_partial,
    gemini_ok,
    gemini_parts,
    gemini_safety,
    openai_401_echo_key_whole,
    openai_429_insufficient_quota,
    openai_429_rate_limit,
    openai_length,
    openai_ok,
    schema_ref_sibling_paths,
)
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.models.litellm.schemas import openai_strict_violations
from titjudge.records.summary import EXIT_DEGRADED

REPO = Path(__file__).resolve().parents[2]
GEMINI_KEY = "AIzaSy-conformance-secret-0123456789"
OPENAI_KEY = "sk-proj-conformance-secret-0123456789abcdef"
ITEM_TAG = re.compile(r"ITEM<([A-Za-z0-9_.\-]+)>")


@pytest.fixture(scope="module")
def data(synthetic) -> Path:
    """2 prompts x 3 models: six items, each image mapped back to its item id."""
    return synthetic(2, 3, seed=3)


def _items(data: Path) -> dict[str, str]:
    """sha256 of each image's bytes -> item id (PNGs are sent byte for byte)."""
    found = {}
    for line in (data / "manifest.jsonl").read_text().splitlines():
        row = json.loads(line)
        found[hashlib.sha256((data / row["image"]).read_bytes()).hexdigest()] = row["item_id"]
    return found


def _item_ids(data: Path) -> list[str]:
    return sorted(
        json.loads(x)["item_id"] for x in (data / "manifest.jsonl").read_text().splitlines()
    )


def _run(config: str, data: Path, tmp: Path, *sets: str) -> int:
    args = [
        "run",
        str(REPO / "configs" / config),
        "--set",
        f"data.manifest={data / 'manifest.jsonl'}",
        "--set",
        f"data.human_pairs={data / 'pairs.csv'}",
        "--set",
        f"run.cache_dir={tmp / 'cache'}",
        "--set",
        f"run.out={tmp / 'runs'}",
        "--set",
        "run.rpm=null",
    ]
    for value in sets:
        args += ["--set", value]
    return main(args)


def _records(tmp: Path) -> list[dict[str, Any]]:
    (name_dir,) = [p for p in (tmp / "runs").iterdir() if p.is_dir()]
    run_dir = latest_run(name_dir)
    return [json.loads(x) for x in (run_dir / "items.jsonl").read_text().splitlines()]


def _by(records: list[dict[str, Any]], variant: str) -> dict[str, dict[str, Any]]:
    return {r["item_id"]: r for r in records if r["variant"] == variant}


def _everything_written(tmp: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(tmp.rglob("*")) if p.is_file())


def _verdict(score: Any = 70) -> str:
    return json.dumps({"rationale": "Most elements match.", "score": score})


# ----------------------------------------------------------------------------- Gemini


def _gemini_image_item(req: RecordedRequest, images: dict[str, str]) -> str | None:
    for part in gemini_parts(req):
        inline = part.get("inline_data") or part.get("inlineData")
        if inline:
            return images[hashlib.sha256(base64.b64decode(inline["data"])).hexdigest()]
    return None


def _all_text(req: RecordedRequest) -> str:
    return json.dumps(req.body)


@pytest.mark.slow
def test_gemini_config_end_to_end(provider_server, data, tmp_path, monkeypatch, caplog):
    """configs/tit-llm-gemini.yaml: 6 items, one documented Gemini behaviour per item."""
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    images = _items(data)
    ids = _item_ids(data)
    no_parts, partial, safety, waits, bad_score, cut_verdict = ids
    seen: dict[str, list[float]] = {}
    lock = threading.Lock()

    def answer(req: RecordedRequest) -> Reply:
        item = _gemini_image_item(req, images)
        if item is not None:  # a describe call: the image, no prompt
            with lock:
                seen.setdefault(item, []).append(time.monotonic())
                count = len(seen[item])
            if item == no_parts:  # thinking used the whole output cap
                return gemini_max_tokens_no_parts(thoughts=640)
            if item == partial:
                return gemini_max_tokens_partial("A partial description that stops", thoughts=90)
            if item == safety:
                return gemini_safety()
            if item == waits and count == 1:
                return gemini_429_retry_info(delay="1s")
            return gemini_ok(f"ITEM<{item}> a detailed description of the scene.", thoughts=100)
        tagged = ITEM_TAG.search(_all_text(req))
        assert tagged, "a judge call must quote the description"
        item = tagged.group(1)
        if item == bad_score:  # a boolean is not a score: re-asked once, then a failure
            return gemini_ok(_verdict(True), thoughts=50)
        if item == cut_verdict:  # the judge's verdict came back with no text
            return gemini_max_tokens_no_parts(thoughts=2048)
        return gemini_ok(_verdict(70), thoughts=300)

    provider_server.enqueue("*", *[answer] * 200)
    tmp = tmp_path / "g"
    base = provider_server.gemini_base
    sets = (
        f"describer.api_base={base}",
        f"judges.tit_llm_g.api_base={base}",
        f"judges.tit_llm_g_paper.api_base={base}",
        "run.concurrency=4",
    )
    caplog.set_level("INFO")
    code = _run("tit-llm-gemini.yaml", data, tmp, *sets)
    records = _records(tmp)
    described = _by(records, "lexical")
    # finished with failed items reported, and tit_llm_g's scores came mostly from its
    # lexical fallback (two of its three): exit 4, not 1
    statuses = [r["status"] for r in _by(records, "tit_llm_g").values()]
    assert statuses.count("fallback") > statuses.count("ok") > 0
    assert code == EXIT_DEGRADED

    # Thinking ate the cap: a failure naming the finish reason and both token counts.
    error = described[no_parts]["describer"]["error"]
    assert error.startswith("truncated: the reply stopped at the token limit (finish_reason=length")
    assert "answer 0 tokens of max_tokens 512, thinking 640 tokens, cap sent 640" in error
    assert described[no_parts]["description"] is None
    # A cut description is never accepted as one
    assert described[partial]["description"] is None
    assert "thinking 90 tokens" in described[partial]["describer"]["error"]
    # SAFETY
    assert described[safety]["describer"]["error"] == (
        "blocked: the provider withheld the reply (finish_reason=content_filter)"
    )
    # the failed calls' tokens still count
    assert described[no_parts]["describer"]["tokens_out"] == 640
    # Gemini's retryDelay (in the body, no Retry-After header) was waited out
    first, second = seen[waits][:2]
    assert second - first >= 0.95
    assert described[waits]["description"].startswith(f"ITEM<{waits}>")

    judged = _by(records, "tit_llm_g")
    assert judged[waits]["status"] == "ok" and judged[waits]["score"] == 70.0
    assert judged[bad_score]["status"] == "fallback"  # to lexical, the original error kept
    assert "invalid output after re-ask" in judged[bad_score]["error"]
    assert "score: Input should be a valid number" in judged[bad_score]["error"]
    assert judged[cut_verdict]["error"].startswith("truncated: the reply stopped at the token")
    paper = _by(records, "tit_llm_g_paper")
    assert paper[bad_score]["status"] == "failed" and paper[bad_score]["score"] is None
    for item in (no_parts, partial, safety):  # no description: never judged
        assert judged[item]["error"].startswith("no description")

    requests = provider_server.requests_for("gemini")
    describe = [r for r in requests if _gemini_image_item(r, images)]
    judge = [r for r in requests if not _gemini_image_item(r, images)]
    for req in describe:
        config = gemini_generation_config(req)
        assert config["thinkingConfig"]["thinkingBudget"] == 128
        assert config["maxOutputTokens"] == 512 + 128  # the answer's 512 on top of thinking
    for req in judge:
        config = gemini_generation_config(req)
        assert config["thinkingConfig"]["thinkingBudget"] == 1024
        assert config["maxOutputTokens"] == 1024 + 1024
        schema = config.get("responseJsonSchema")
        assert schema is not None and schema_ref_sibling_paths(schema) == []
    # no request ever carried an empty part (a re-ask after an empty reply would)
    assert all(gemini_empty_text_parts(r) == [] for r in requests)
    reasks = [r for r in judge if len(r.body["contents"]) > 1]
    assert len(reasks) == 2  # the boolean score, once per LLM judge; never the empty verdict
    # the key went in the header only, and is nowhere on disk or in the log
    assert all(r.header("x-goog-api-key") == GEMINI_KEY for r in requests)
    assert GEMINI_KEY.encode() not in _everything_written(tmp)
    assert GEMINI_KEY not in caplog.text

    (name_dir,) = [p for p in (tmp / "runs").iterdir() if p.is_dir()]
    summary = json.loads((latest_run(name_dir) / "summary.json").read_text())
    describer = summary["usage"]["describer"]
    assert (describer["failures"], describer["truncated"], describer["blocked"]) == (3, 2, 1)
    assert summary["usage"]["judge"]["truncated"] == 2  # the empty verdict, for both LLM judges

    # Failures were not cached: a re-run asks again for exactly those, and nothing else.
    provider_server.reset()
    provider_server.enqueue("*", *[answer] * 200)
    assert _run("tit-llm-gemini.yaml", data, tmp, *sets) == EXIT_DEGRADED  # as before
    again = provider_server.requests_for("gemini")
    asked = sorted({_gemini_image_item(r, images) for r in again} - {None})
    assert asked == sorted([no_parts, partial, safety])
    rejudged = {
        ITEM_TAG.search(_all_text(r)).group(1) for r in again if not _gemini_image_item(r, images)
    }
    assert rejudged == {bad_score, cut_verdict}


def test_gemini_pro_refuses_thinking_off_before_any_request(
    provider_server, data, tmp_path, monkeypatch, capsys
):
    monkeypatch.setenv("GEMINI_API_KEY", GEMINI_KEY)
    code = _run(
        "tit-llm-gemini.yaml",
        data,
        tmp_path,
        f"describer.api_base={provider_server.gemini_base}",
        "describer.thinking=off",
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "only works in thinking mode" in err
    assert provider_server.requests == []


# ----------------------------------------------------------------------------- OpenAI


def _chat_image_item(req: RecordedRequest, images: dict[str, str]) -> str | None:
    for message in req.body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            for part in content:
                if part.get("type") == "image_url":
                    data = part["image_url"]["url"].split(",", 1)[1]
                    return images.get(hashlib.sha256(base64.b64decode(data)).hexdigest(), "?")
    return None


@pytest.mark.slow
def test_gpt4o_config_end_to_end(provider_server, data, tmp_path, monkeypatch, caplog):
    """configs/tit-llm-gpt4o.yaml: Retry-After, a cut description, a 401 echoing the key,
    strict structured outputs."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    images = _items(data)
    waits, cut, leaks, *_ = _item_ids(data)
    seen: dict[str, list[float]] = {}

    def answer(req: RecordedRequest) -> Reply:
        item = _chat_image_item(req, images)
        if item is not None:
            seen.setdefault(item, []).append(time.monotonic())
            if item == waits and len(seen[item]) == 1:
                return openai_429_rate_limit(retry_after="1")
            if item == cut:
                return openai_length("A description that runs out of room and")
            return openai_ok(f"ITEM<{item}> a scene with every element.")
        item = ITEM_TAG.search(_all_text(req)).group(1)
        if item == leaks:  # a proxy in front of OpenAI that echoes the whole key
            return openai_401_echo_key_whole(OPENAI_KEY)
        return openai_ok(_verdict(64))

    provider_server.enqueue("*", *[answer] * 100)
    tmp = tmp_path / "o"
    base = provider_server.openai_base
    caplog.set_level("DEBUG")
    code = _run(
        "tit-llm-gpt4o.yaml",
        data,
        tmp,
        f"describer.api_base={base}",
        f"judges.tit_llm_4o.api_base={base}",
    )
    assert code == 1
    records = _records(tmp)
    described, judged = _by(records, "lexical"), _by(records, "tit_llm_4o")
    assert seen[waits][1] - seen[waits][0] >= 0.95  # Retry-After: 1
    assert described[waits]["description"].startswith(f"ITEM<{waits}>")
    assert described[cut]["description"] is None
    assert described[cut]["describer"]["error"].startswith(
        "truncated: the reply stopped at the token limit (finish_reason=length"
    )
    assert judged[leaks]["status"] == "fallback"
    assert "Incorrect API key provided: [REDACTED]" in judged[leaks]["error"]
    assert OPENAI_KEY.encode() not in _everything_written(tmp)
    assert OPENAI_KEY not in caplog.text

    judge_requests = [
        r for r in provider_server.requests_for("chat") if not _chat_image_item(r, images)
    ]
    assert judge_requests
    for req in judge_requests:
        response_format = req.body["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["strict"] is True
        assert openai_strict_violations(response_format["json_schema"]["schema"]) == []


@pytest.mark.slow
def test_insufficient_quota_stops_the_model_and_keeps_the_rest(
    provider_server, data, tmp_path, monkeypatch, caplog
):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    provider_server.enqueue("*", *[lambda req: openai_429_insufficient_quota()] * 100)
    caplog.set_level("WARNING")
    code = _run(
        "tit-llm-gpt4o.yaml",
        data,
        tmp_path,
        f"describer.api_base={provider_server.openai_base}",
        f"judges.tit_llm_4o.api_base={provider_server.openai_base}",
        "run.concurrency=2",
    )
    assert code == EXIT_DEGRADED  # the model was stopped (a spent quota trips its breaker)
    # at most the requests already in flight when the first answer came back
    assert len(provider_server.requests) <= 2
    records = _records(tmp_path)
    errors = [r["describer"]["error"] for r in records if r["variant"] == "lexical"]
    assert len(errors) == 6 and all("quota exhausted" in e for e in errors)
    assert sum("not sent" in e for e in errors) >= 4
    warnings = [
        r for r in caplog.records if "No further requests go to this model" in r.getMessage()
    ]
    assert len(warnings) == 1


# ----------------------------------------------------------------------------- vLLM


@pytest.mark.slow
def test_vllm_config_end_to_end(provider_server, data, tmp_path):
    """configs/vllm-qwen.yaml: Qwen3's thinking switch in the body, nested params unchanged,
    json_schema response_format, images bounded by max_image_pixels."""
    images = _items(data)

    def answer(req: RecordedRequest) -> Reply:
        item = _chat_image_item(req, images)
        if item is not None:  # resized images match no original: tag by what arrived
            sent = hashlib.sha256(req.raw.encode()).hexdigest()[:8]
            return openai_ok(f"ITEM<{sent}> a scene.", model=req.model)
        return openai_ok(_verdict(55), model=req.model)

    provider_server.enqueue("*", *[answer] * 100)
    base = provider_server.openai_base
    code = _run(
        "vllm-qwen.yaml",
        data,
        tmp_path,
        f"describer.api_base={base}",
        f"judges.tit_llm_q8b.api_base={base}",
        "describer.max_image_pixels=4096",
        "judges.tit_llm_q8b.params={extra_body: {repetition_penalty: 1.05, stop: ['</answer>']}}",
    )
    assert code == 0
    records = _records(tmp_path)
    assert all(r["status"] == "ok" for r in records)
    chats = provider_server.requests_for("chat")
    qwen3 = [r for r in chats if r.model == "Qwen/Qwen3-8B"]
    vl = [r for r in chats if r.model == "Qwen/Qwen2.5-VL-7B-Instruct"]
    assert len(qwen3) == 6 and len(vl) == 12  # describe + self_eval on the VLM
    for req in qwen3:
        # the per-request switch vLLM documents, at the top level of the body
        assert req.body["chat_template_kwargs"] == {"enable_thinking": False}
        assert req.body["repetition_penalty"] == 1.05 and req.body["stop"] == ["</answer>"]
        assert "enable_thinking" not in req.body
        assert req.body["response_format"]["type"] == "json_schema"
        assert req.body["max_tokens"] == 1024
    for req in vl:
        assert "chat_template_kwargs" not in req.body  # not a Qwen3 model
        url = (
            next(
                p["image_url"]["url"]
                for m in req.body["messages"]
                if isinstance(m["content"], list)
                for p in m["content"]
                if p["type"] == "image_url"
            )
            if _chat_image_item(req, images) is not None
            else None
        )
        if url is not None:
            with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as image:
                assert image.size[0] * image.size[1] <= 4096


@pytest.mark.slow
def test_expected_score_reads_vllm_logprobs(provider_server, data, tmp_path):
    """score_mode expected on a vLLM server: top_logprobs asked, the reply's logprobs used."""
    import titjudge

    def answer(req: RecordedRequest) -> Reply:
        if req.body.get("logprobs"):
            assert req.body["top_logprobs"] == 20
            verdict = json.dumps({"rationale": "ok", "score": 7})
            tokens = [
                {"token": t, "logprob": -0.01, "top_logprobs": []}
                for t in ['{"rationale": "ok", "score": ']
            ]
            tokens.append(
                {
                    "token": "7",
                    "logprob": -0.2,
                    "top_logprobs": [
                        {"token": "7", "logprob": -0.2},
                        {"token": "8", "logprob": -1.8},
                    ],
                }
            )
            tokens.append({"token": "}", "logprob": 0.0, "top_logprobs": []})
            return openai_ok(verdict, model=req.model, logprobs=tokens)
        return openai_ok("ITEM<x> a scene.", model=req.model)

    provider_server.enqueue("*", *[answer] * 50)
    base = provider_server.openai_base
    config = {
        "name": "vllm-expected",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": "litellm:hosted_vllm/Qwen/Qwen2.5-VL-7B-Instruct", "api_base": base},
        "judges": [
            {
                "name": "q_expected",
                "kind": "llm",
                "model": "litellm:hosted_vllm/Qwen/Qwen3-8B",
                "api_base": base,
                "score_mode": "expected",
                "thinking": "off",
            }
        ],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }
    outcome = titjudge.evaluate(config)
    scores = [line.score for line in outcome.item_lines]
    assert all(s is not None and 7.0 < s < 7.5 for s in scores)


@pytest.mark.slow
def test_score_prints_model_text_without_terminal_control(
    provider_server, data, monkeypatch, capsys
):
    """`titjudge score`: escape sequences and bidi overrides in model text are shown, not run."""
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    hostile = "A cat.\x1b[2J\x1b]0;owned\x07 \u202eevil"

    def answer(req: RecordedRequest) -> Reply:
        if _chat_image_item(req, {}) is not None:
            return openai_ok(hostile)
        return openai_ok(json.dumps({"rationale": hostile, "score": 50}))

    provider_server.enqueue("*", *[answer] * 4)
    image = next((data / "images").rglob("*.png"))
    base = provider_server.openai_base
    code = main(
        [
            "score",
            str(image),
            "a cat",
            "--config",
            str(REPO / "configs" / "tit-llm-gpt4o.yaml"),
            "--set",
            f"describer.api_base={base}",
            "--set",
            f"judges.tit_llm_4o.api_base={base}",
            "--set",
            f"run.cache_dir={data.parent / 'score-cache'}",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert out.count("\\x1b[2J") == 2 and out.count("\\u202e") == 2  # description and rationale
