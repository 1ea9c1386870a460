"""End-to-end runs of the graph: describer and judge through litellm on a loopback server."""

import csv
import json

import pytest
from builders import run_config, write_config
from doubles.server import FakeOpenAIServer, Fault, Reply, build_responder
from pipeline_helpers import items_of, stored_descriptions
from run_dirs import latest_run

import titjudge
from titjudge.cli import main


def read_json(path):
    return json.loads(path.read_text())


@pytest.mark.slow
def test_full_run_then_cached_rerun_is_identical(synth_data, tmp_path):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = run_config(synth_data, tmp_path, url=server.url)
        first = titjudge.evaluate(config)
        run_dir = first.run_dir
        assert first.summary.exit_code == 0 and first.summary.items == 16
        # one description per image, one judge call per item; nothing asked twice
        assert server.stats.total == 32 and server.stats.duplicates() == 0
        scores = (run_dir / "scores.csv").read_text()
        metrics = (run_dir / "metrics.json").read_text()
        rows = list(csv.DictReader(scores.splitlines()))
        assert {r["variant"] for r in rows} == {"tit_llm", "lexical"} and len(rows) == 32
        assert all(r["status"] == "ok" and float(r["score"]) >= 0 for r in rows)

        second = titjudge.evaluate(config)
        assert server.stats.total == 32  # served from the cache
        assert (second.run_dir / "scores.csv").read_text() == scores
        assert (second.run_dir / "metrics.json").read_text() == metrics
        assert second.summary.cache.hits == 32

    assert first.summary.usage["judge"].tokens_in > 0
    # the re-run's: nothing paid for again
    summary = read_json(second.run_dir / "summary.json")
    assert (
        summary["usage"]["describer"]["calls"] == 16 and summary["usage"]["judge"]["tokens_in"] == 0
    )
    report = read_json(run_dir / "metrics.json")
    assert report["variants"]["tit_llm"]["n_pairs"] == report["variants"]["lexical"]["n_pairs"] > 0
    # the stored descriptions are faithful, so a word-overlap judge beats chance
    assert report["variants"]["tit_llm"]["pairwise_accuracy"] > 0.5
    lines = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    llm = [line for line in lines if line["variant"] == "tit_llm"]
    assert len(llm) == 16 and all(
        line["rationale"] and line["raw"] and line["description"] for line in llm
    )
    config_doc = (run_dir / "config.yaml").read_text()
    assert "judge_similarity" in config_doc and "sha256" in config_doc and "langgraph" in config_doc


@pytest.mark.slow
def test_failures_are_isolated_and_counted_exactly(data_copy, tmp_path):
    items = items_of(data_copy)
    descriptions = stored_descriptions(data_copy)
    corrupt, refused, garbled = items[0], items[5], items[10]
    (data_copy / corrupt["image"]).write_bytes(b"\x89PNG\r\n\x1a\n truncated")
    refused_sha = next(
        sha
        for sha, _ in descriptions.items()
        if (data_copy / refused["image"]).read_bytes() and sha == _sha(data_copy / refused["image"])
    )
    garbled_text = descriptions[_sha(data_copy / garbled["image"])]
    assert list(descriptions.values()).count(garbled_text) == 1
    auto = build_responder("auto", descriptions=descriptions)

    def responder(request):
        if request.images and request.images[0].sha256 == refused_sha:
            return Fault("400", message="image rejected by safety filter")
        if not request.images and garbled_text in request.all_text:
            return Reply(content="I would rate this quite highly overall.")
        return auto(request)

    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(data_copy, tmp_path, url=server.url)
        config["judges"][0]["fallback"] = "lexical"
        outcome = titjudge.evaluate(config)

    summary = read_json(outcome.run_dir / "summary.json")
    assert summary["variants"] == {
        "tit_llm": {"ok": 13, "fallback": 1, "failed": 2},
        "lexical": {"ok": 14, "fallback": 0, "failed": 2},
    }
    assert (
        summary["failed_items"] == 2
        and summary["image_errors"] == 1
        and summary["describer_failures"] == 1
    )
    assert outcome.summary.exit_code == 1
    metrics = read_json(outcome.run_dir / "metrics.json")
    assert (
        metrics["variants"]["tit_llm"]["n_failed"],
        metrics["variants"]["tit_llm"]["n_fallback"],
    ) == (2, 1)
    lines = {
        (r["item_id"], r["variant"]): r
        for r in map(json.loads, (outcome.run_dir / "items.jsonl").open())
    }
    assert "corrupt or truncated" in lines[(corrupt["item_id"], "tit_llm")]["error"]
    assert "image rejected by safety filter" in lines[(refused["item_id"], "lexical")]["error"]
    fell_back = lines[(garbled["item_id"], "tit_llm")]
    assert fell_back["status"] == "fallback" and "invalid output after re-ask" in fell_back["error"]
    assert fell_back["score"] == lines[(garbled["item_id"], "lexical")]["score"]
    scores = {
        (r["item_id"], r["variant"]): r
        for r in csv.DictReader((outcome.run_dir / "scores.csv").open())
    }
    assert scores[(corrupt["item_id"], "tit_llm")]["score"] == ""  # a failure is never a number


def _sha(path):
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.slow
def test_cli_run_limit_and_exit_codes(synth_data, tmp_path, capsys):
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as server:
        path = write_config(run_config(synth_data, tmp_path, url=server.url), tmp_path)
        assert main(["run", str(path), "--limit", "5", "--out", str(tmp_path / "five")]) == 0
        assert server.stats.total == 10
    assert len((tmp_path / "five" / "scores.csv").read_text().splitlines()) == 1 + 5 * 2
    out = capsys.readouterr().out
    assert "tit_llm" in out and "run dir:" in out

    assert main(["run", str(path), "--set", "describer.max_token=5"]) == 2
    err = capsys.readouterr().err
    assert "unknown key 'describer.max_token'" in err and "did you mean 'max_tokens'" in err
    assert main(["run", str(path), "--set", f"data.manifest={tmp_path / 'nope.jsonl'}"]) == 2
    assert "nope.jsonl" in capsys.readouterr().err


def test_unwritable_out_dir_fails_before_any_call(synth_data, tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with FakeOpenAIServer() as server:
        path = write_config(run_config(synth_data, tmp_path, url=server.url), tmp_path)
        assert main(["run", str(path), "--out", str(blocker / "sub")]) == 2
        assert server.stats.total == 0
    assert "not writable" in capsys.readouterr().err


@pytest.mark.slow
def test_score_command_prints_description_and_verdicts(synth_data, tmp_path, capsys):
    item = items_of(synth_data)[0]
    auto = build_responder("auto", descriptions=stored_descriptions(synth_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = run_config(synth_data, tmp_path, url=server.url)
        path = tmp_path / "run.yaml"
        path.write_text(json.dumps(config))
        code = main(
            ["score", str(synth_data / item["image"]), item["prompt"], "--config", str(path)]
        )
    out = capsys.readouterr().out
    assert code == 0
    assert stored_descriptions(synth_data)[_sha(synth_data / item["image"])][:60] in out
    assert "tit_llm [ok]" in out and "lexical [ok]" in out and "score:" in out


def test_python_score_api(synth_data, tmp_path):
    item = items_of(synth_data)[3]
    with FakeOpenAIServer(
        responder=build_responder("auto", stored_descriptions(synth_data))
    ) as server:
        result = titjudge.score(
            synth_data / item["image"],
            item["prompt"],
            config=run_config(synth_data, tmp_path, url=server.url),
        )
    by_name = {o.variant: o for o in result.outcomes}
    assert result.described.text and by_name["tit_llm"].status == "ok"
    assert 0 <= by_name["tit_llm"].score <= 100 and 0 < by_name["lexical"].score <= 1


def test_replay_describer_needs_no_server_and_rejects_unknown_images(data_copy, tmp_path):
    config = run_config(
        data_copy,
        tmp_path,
        url="http://127.0.0.1:9/v1",
        judges=[{"name": "lex", "kind": "lexical"}],
    )
    config["describer"] = {"model": f"replay:{data_copy / 'descriptions.jsonl'}"}
    from PIL import Image

    stranger = items_of(data_copy)[2]
    Image.new("RGB", (8, 8), (1, 2, 3)).save(data_copy / stranger["image"])
    outcome = titjudge.evaluate(config)
    assert outcome.summary.variants["lex"].model_dump() == {"ok": 15, "fallback": 0, "failed": 1}
    bad = [line for line in outcome.item_lines if line.item_id == stranger["item_id"]]
    assert [line.variant for line in bad] == ["lex"]
    assert "holds no description for this image" in (bad[0].error or "")


@pytest.mark.slow
def test_demo_runs_offline(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    # 2 prompts x 3 models: 6 pairs of a prompt's images for the lexical judge
    assert main(["demo", "--out", str(tmp_path / "demo"), "--prompts", "2", "--models", "3"]) == 0
    out = capsys.readouterr().out
    assert "SYNTHETIC" in out and "replay" in out and "GEMINI_API_KEY" in out
    metrics = read_json(latest_run(tmp_path / "demo" / "runs" / "demo") / "metrics.json")
    assert "lexical" in metrics["variants"] and metrics["variants"]["lexical"]["n_pairs"] > 0
    assert (tmp_path / "demo" / "demo.yaml").is_file()
