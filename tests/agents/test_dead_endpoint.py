"""A describer whose endpoint refuses every call (a 401 with OpenAI's invalid_api_key body, a
404 with its model_not_found body, a closed port) on 60 items: the model is stopped after
`run.stop_after` requests in a row, so at most stop_after + concurrency requests are made
(counted at the double, and in the items' attempts), not max_attempts per item; the output
(captured here: not a terminal) shows one grouped reason and the stop, summary.json the same,
exit 4 (a model was stopped); a re-run asks again (failures are never cached). 60 items (it
was 200) are still over four times what may be sent (stop_after + concurrency = 13).

A judge whose endpoint is dead, with `fallback: lexical` as the shipped Gemini and vLLM configs
set it (issue 48's case): its 48 scores are all lexical's and its model is stopped, so the run
exits 4, its row shows no number of its own and says why, the record says the same, and
`titjudge runs list` names the fallback and the stop (it said `48 items, 0 failed`, exit 0,
the row lexical's own accuracy)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from builders import closed_url, dead_judge_config
from doubles.server import FakeOpenAIServer, Fault, Reply
from run_dirs import latest_run

from titjudge import load_run
from titjudge.cli import main
from titjudge.records.summary import EXIT_DEGRADED

CONCURRENCY = 8
STOP_AFTER = 5
N_PROMPTS, N_MODELS = 12, 5
N_ITEMS = N_PROMPTS * N_MODELS
#: OpenAI's 401 for a wrong key (github.com/chatanywhere/GPT_API_free/issues/62; the same
#: shape in github.com/continuedev/continue/issues/11409); the key is masked in the message
INVALID_KEY = (
    "Incorrect API key provided: sk-VKMIs***************************************wjh3. You can "
    "find your API key at https://platform.openai.com/account/api-keys."
)
#: OpenAI's 404 for an unknown model (github.com/openai/codex/issues/7074)
NO_MODEL = "The model `vlm` does not exist or you do not have access to it."
KINDS = {
    "401": "401 unauthorized (the API key was refused)",
    "404": "404 model not found",
    "closed": "connection refused",
}


@pytest.fixture(scope="module")
def items(synthetic) -> Path:
    # small images drawn in one process (the refusals do not depend on them)
    return synthetic(N_PROMPTS, N_MODELS, image_size=64)


@dataclass(frozen=True)
class Finished:
    returncode: int
    stdout: str
    stderr: str


@pytest.fixture
def run_titjudge(capsys, monkeypatch):
    """`titjudge run CONFIG` in this process (nothing here needs a process of its own: a warm
    child imported what the run needs again, ~0.7 s a run), its output captured: not a
    terminal, the summary is printed all the same."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("COLUMNS", "400")

    def run(config: Path) -> Finished:
        capsys.readouterr()
        code = main(["run", str(config)])
        out, err = capsys.readouterr()
        return Finished(code, out, err)

    return run


def _attempts(run_dir: Path) -> int:
    lines = (run_dir / "items.jsonl").read_text().splitlines()
    return sum(json.loads(line)["describer"].get("attempts", 0) for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("refusal", ["401", "404", "closed"])
def test_dead_describer_is_stopped_and_named_once(items, tmp_path, refusal, run_titjudge):
    kind = "401" if refusal == "closed" else refusal  # nothing listens there: never answered
    fault = Fault(kind, message=INVALID_KEY if kind == "401" else NO_MODEL)
    server = FakeOpenAIServer(responder=lambda request: Reply(fault=fault))
    url = closed_url() if refusal == "closed" else server.start()
    config = tmp_path / "dead.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "dead",
                "data": {"manifest": str(items / "manifest.jsonl")},
                "describer": {"model": "litellm:openai/vlm", "api_base": url},
                "judges": [{"name": "lexical", "kind": "lexical"}],
                "run": {
                    "cache_dir": str(tmp_path / "cache"),
                    "out": str(tmp_path / "runs"),
                    "concurrency": CONCURRENCY,
                    "stop_after": STOP_AFTER,
                },
            }
        )
    )
    try:
        done = run_titjudge(config)
        assert done.returncode == EXIT_DEGRADED, done.stderr
        run_dir = latest_run(tmp_path / "runs" / "dead")
        sent = _attempts(run_dir)
        assert sent <= STOP_AFTER + CONCURRENCY
        if refusal != "closed":
            assert server.stats.total == sent
        kind = KINDS[refusal] + (f" ({url})" if refusal == "closed" else "")
        # one grouped line for the describer's N_ITEMS failures, one for the stop
        grouped = [
            line for line in done.stdout.splitlines() if "describer litellm:openai/vlm" in line
        ]
        assert grouped == [
            f"  describer litellm:openai/vlm: {N_ITEMS} x {kind}, {N_ITEMS - sent} not sent"
        ]
        assert (
            f"stopped: litellm:openai/vlm after {STOP_AFTER} requests in a row failed with {kind}"
            in done.stdout
        )
        failures = json.loads((run_dir / "summary.json").read_text())["failures"]
        describer = [g for g in failures["groups"] if g["role"] == "describer"]
        assert [(g["kind"], g["count"]) for g in describer] == [(kind, N_ITEMS)]
        assert failures["stopped"][0]["reason"] == kind

        again = run_titjudge(config)  # nothing was cached: the re-run asks again
        assert again.returncode == EXIT_DEGRADED
        resent = _attempts(latest_run(tmp_path / "runs" / "dead"))
        assert 0 < resent <= STOP_AFTER + CONCURRENCY
        if refusal != "closed":
            assert server.stats.total == sent + resent
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("refusal", ["401", "closed"])
def test_dead_judge_with_a_fallback_is_no_success(
    synthetic, tmp_path, refusal, run_titjudge, capsys
):
    data = synthetic(12, 4, image_size=64)  # 48 items, their descriptions replayed
    server = FakeOpenAIServer(
        responder=lambda request: Reply(fault=Fault("401", message=INVALID_KEY))
    )
    url = closed_url() if refusal == "closed" else server.start()
    config = tmp_path / "dead-judge.yaml"
    config.write_text(json.dumps(dead_judge_config(data, tmp_path, url, stop_after=STOP_AFTER)))
    try:
        done = run_titjudge(config)
    finally:
        server.stop()
    assert done.returncode == EXIT_DEGRADED, done.stderr
    record = load_run(tmp_path / "runs" / "dead-judge")
    own, fallback = record.variants["tit_llm"], record.variants["lexical"]
    assert fallback.pairwise_accuracy is not None and fallback.n_pairs > 0
    # no number of its own: not lexical's accuracy, pairs or CI under its name
    assert own.pairwise_accuracy is None and own.n_pairs == 0 and own.srcc is None
    assert own.ci["pairwise_accuracy"] is None and own.tie_calibrated_accuracy is None
    origin = record.origin("tit_llm")
    assert origin is not None
    assert (origin.n_fallback, origin.n_scored, origin.fallback_share) == (48, 48, 1.0)
    assert origin.fallback == "lexical" and origin.stopped is True
    assert record.origin("lexical").fallback_share == 0.0  # type: ignore[union-attr]
    pairs_table = done.stdout.split("Agreement with human judgments: pairs", 1)[1]
    row = next(line for line in pairs_table.splitlines() if line.startswith("│ tit_llm"))
    cells = [cell.strip() for cell in row.strip("│").split("│")]
    assert cells[1] == "-" and cells[-1] == "48 (100%)"  # accuracy; fallback scores, share
    assert (
        "tit_llm: no number of its own: all 48 of its scores came from its fallback lexical; "
        "its model litellm:openai/judge was stopped by its circuit breaker" in done.stdout
    )

    assert main(["runs", "list", str(tmp_path / "runs")]) == 0
    listed = capsys.readouterr().out
    assert (
        "48 items, 0 failed; fallback: tit_llm 48 of 48 (100%) from lexical; "
        "stopped: litellm:openai/judge" in listed
    )


@pytest.mark.slow
def test_without_human_pairs_the_means_say_whose_scores_they_are(synthetic, tmp_path, run_titjudge):
    data = synthetic(12, 4, image_size=64)
    raw = dead_judge_config(data, tmp_path, closed_url(), stop_after=STOP_AFTER)
    del raw["data"]["human_pairs"]  # no metrics: each T2I model's mean score per variant
    config = tmp_path / "dead-judge.yaml"
    config.write_text(json.dumps(raw))
    done = run_titjudge(config)
    assert done.returncode == EXIT_DEGRADED, done.stderr
    assert "No human pairs: T2I models ranked by mean score" in done.stdout
    assert (
        "tit_llm: no number of its own: all 48 of its scores came from its fallback lexical"
        in done.stdout
    )
    summary = json.loads(
        (latest_run(tmp_path / "runs" / "dead-judge") / "summary.json").read_text()
    )
    assert summary["origins"]["tit_llm"]["stopped"] is True
    assert summary["model_means"]["tit_llm"]["ranking"] == []  # ok items only: none
