"""`titjudge score` counts a failure as a run does (`ItemResult.failed`): a description no
judge reads is skipped, not failed."""

import json

from doubles.server import FakeOpenAIServer
from judge_helpers import ModesResponder, manifest, run_config

from titjudge.cli import main
from titjudge.records import ItemResult, Progress
from titjudge.records.items import Item
from titjudge.records.outcomes import Described, JudgeOutcome


def _score(synth_data, tmp_path, judges, capsys):
    item = manifest(synth_data)[0]
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        path = tmp_path / "score.json"
        path.write_text(json.dumps(run_config(synth_data, server.url, tmp_path, judges)))
        code = main(
            ["score", str(synth_data / item["image"]), item["prompt"], "--config", str(path)]
        )
    return code, capsys.readouterr().out, responder


def test_score_with_an_image_only_judge_succeeds_without_a_description(
    synth_data, tmp_path, capsys
):
    code, out, responder = _score(
        synth_data, tmp_path, [{"name": "yes", "kind": "lmm_yes"}], capsys
    )
    assert code == 0
    assert "failed" not in out and "skipped: no judge reads descriptions" in out
    assert "yes [ok]" in out and "score:" in out
    assert (responder.count("describe"), responder.count("yes")) == (0, 1)


def test_score_with_an_lmm_judge_exits_0(synth_data, tmp_path, capsys):
    code, out, responder = _score(
        synth_data, tmp_path, [{"name": "lmm_score", "kind": "lmm"}], capsys
    )
    assert code == 0 and "lmm_score [ok]" in out and "score:" in out
    assert "failed: not needed" not in out and responder.count("describe") == 0


def test_score_still_fails_when_a_judge_fails(synth_data, tmp_path, capsys):
    judges = [{"name": "yes", "kind": "lmm_yes"}]
    item = manifest(synth_data)[0]
    config = run_config(synth_data, "http://127.0.0.1:9/v1", tmp_path, judges)  # nobody listens
    path = tmp_path / "score.json"
    path.write_text(json.dumps(config))
    code = main(["score", str(synth_data / item["image"]), item["prompt"], "--config", str(path)])
    out = capsys.readouterr().out
    assert code == 1 and "yes [failed]" in out and "skipped: no judge reads descriptions" in out


def _result(described, *statuses):
    item = Item("a", "p", "a cube", "a.png", "m")
    outcomes = [
        JudgeOutcome(f"v{i}", s, score=None if s == "failed" else 1.0)
        for i, s in enumerate(statuses)
    ]
    return ItemResult(item=item, described=described, outcomes=outcomes)


def test_one_definition_of_a_failed_item():
    ok, skipped = Described(text="a cube"), Described.skipped()
    failed = Described(text=None, error="timeout")
    assert not _result(ok, "ok", "fallback").failed
    assert not _result(skipped, "ok").failed
    assert _result(skipped, "ok", "failed").failed
    assert _result(failed).failed and _result(failed, "ok").failed
    progress = Progress(total=3)
    for result in (_result(skipped, "ok"), _result(failed), _result(ok, "failed")):
        progress.item_done(result)
    assert (progress.done, progress.failed_items) == (3, 2)


def test_score_says_a_batch_model_answered_online(synth_data, tmp_path, capsys):
    """`batch: true` cannot wait 24 h for one image: score asks now, and says so."""
    item = manifest(synth_data)[0]
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(synth_data, server.url, tmp_path, [{"name": "lmm", "kind": "lmm"}])
        config["describer"]["batch"] = True
        path = tmp_path / "score.json"
        path.write_text(json.dumps(config))
        code = main(
            ["score", str(synth_data / item["image"]), item["prompt"], "--config", str(path)]
        )
        assert server.stats.total >= 1  # sent online, not queued for a job
    out = capsys.readouterr().out
    assert code == 0
    assert (
        "note: batch: true is for runs" in out
        and "litellm:openai/vlm online at the list price" in out
    )


def test_score_honours_the_configs_budget(synth_data, tmp_path, capsys):
    """`run.budget_usd` is a setting the user gave: `titjudge score` holds it as a run does,
    so a call whose worst case the budget cannot cover is not sent."""
    item = manifest(synth_data)[0]
    responder = ModesResponder(synth_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(synth_data, server.url, tmp_path, [{"name": "yes", "kind": "lmm_yes"}])
        config["describer"]["price"] = {"input": 2.0, "output": 8.0}
        config["run"]["budget_usd"] = 0.000001
        path = tmp_path / "score.json"
        path.write_text(json.dumps(config))
        code = main(
            ["score", str(synth_data / item["image"]), item["prompt"], "--config", str(path)]
        )
        sent = server.stats.total
    out = capsys.readouterr().out
    assert code == 1 and sent == 0
    assert "yes [failed]" in out and "budget" in out
