"""A run in progress, live: `titjudge run` keeps live.json in its staging dir while it
lasts (report.live), the workbench lists the staging dir with it and follows it, and the
finished run replaces it, with no live.json left in the run dir."""

from __future__ import annotations

import copy
import json
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import builders
import pytest
from doubles.server import FakeOpenAIServer
from workbench_server import WorkbenchServer


def runs_of(server: WorkbenchServer) -> list[dict[str, Any]]:
    with urllib.request.urlopen(server.url + "/api/runs", timeout=30) as response:
        return json.loads(response.read())["runs"]


def test_a_run_in_progress_is_followed_and_then_replaced_by_its_finished_run(
    tmp_path: Path, synthetic: builders.Synthetic, monkeypatch: pytest.MonkeyPatch
) -> None:
    from titjudge.cli.demo import demo_config
    from titjudge.config.load import validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.report import live
    from titjudge.run.runner import run

    monkeypatch.setattr(live, "LIVE_INTERVAL", 0.1)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    builders.copy_data(synthetic(4, 4, seed=7), tmp_path)
    manifest = {
        json.loads(line)["item_id"]
        for line in (tmp_path / "data" / "manifest.jsonl").read_text().splitlines()
    }
    raw = demo_config(tmp_path / "data", tmp_path, None)
    raw["name"] = "live"
    raw["run"] = {**raw.get("run", {}), "concurrency": 1}
    lexical = copy.deepcopy(raw)
    lexical["judges"] = [{"name": "judge", "kind": "lexical"}]
    run(validate_config(lexical, RunConfig, "live test"))  # one finished run first: r1
    seen: list[dict[str, Any]] = []
    # latency: the 16 items' judge calls take a while, one at a time
    with FakeOpenAIServer(responder="judge", latency=0.15) as fake:
        slow = copy.deepcopy(raw)
        slow["judges"] = [
            {"name": "judge", "kind": "llm", "model": "litellm:openai/judge", "api_base": fake.url}
        ]
        errors: list[BaseException] = []

        def go() -> None:
            try:
                run(validate_config(slow, RunConfig, "live test"))
            except BaseException as exc:  # noqa: BLE001 - reported below
                errors.append(exc)

        worker = threading.Thread(target=go)
        with WorkbenchServer(tmp_path / "runs") as server:
            worker.start()
            while worker.is_alive():
                found = [r for r in runs_of(server) if r["in_progress"] and r.get("live")]
                if found and found[0]["live"]["done"]:
                    seen.append(found[0])
                time.sleep(0.05)
            worker.join()
            assert errors == []
            after = runs_of(server)
    assert seen, "the run was never seen in progress with answers"
    first, last = seen[0]["live"], seen[-1]["live"]
    assert seen[0]["id"] == "r2" and seen[0]["label"].startswith("live/.")
    assert first["name"] == "live" and first["total"] == 16
    assert 1 <= first["done"] <= last["done"] <= 16  # it filled in as answers arrived
    for state in (first, last):
        judge = state["judges"]["judge"]
        assert judge["ok"] + judge["fallback"] + judge["failed"] == state["done"]
        assert {a["item_id"] for a in state["recent"]} <= manifest
        assert all(a["judge"] == "judge" and a["status"] == "ok" for a in state["recent"])
        assert all(a["rationale"] for a in state["recent"])
    # finished: the staging dir left the list, the run is there, and r2 is not given again
    assert [(r["id"], r["in_progress"]) for r in after] == [("r1", False), ("r3", False)]
    finished = sorted(p.parent for p in (tmp_path / "runs").rglob("items.jsonl"))[-1]
    assert not (finished / "live.json").exists()
    assert "live.json" not in (finished / "files.json").read_text()
    metrics = json.loads((finished / "metrics.json").read_text())
    assert after[1]["variants"][0]["n_pairs"] == metrics["variants"]["judge"]["n_pairs"]


def test_the_live_record_counts_each_judges_answers_and_keeps_the_latest(tmp_path: Path):
    from titjudge.records import ItemResult, Progress
    from titjudge.records.items import Item
    from titjudge.records.outcomes import Described, JudgeOutcome
    from titjudge.report.live import RECENT, LiveState
    from titjudge.safety import register_secret

    register_secret("sk-live-secret-123")
    progress = Progress(total=20)
    state = LiveState("x", progress)
    described = Described("a description")
    for n in range(15):
        item = Item(f"i{n}", "P1", "a prompt", tmp_path / f"{n}.png", "m1")
        outcomes = [
            JudgeOutcome("one", "ok", score=float(n), rationale="because " * 100),
            JudgeOutcome("two", "failed", error="401 from sk-live-secret-123")
            if n % 3 == 0
            else JudgeOutcome("two", "fallback", score=1.0),
        ]
        state.item(ItemResult(item, described, outcomes))
        progress.done += 1
    doc = state.doc()
    assert doc["judges"]["one"] == {
        "ok": 15,
        "fallback": 0,
        "failed": 0,
        "mean_score": sum(range(15)) / 15,
    }
    assert doc["judges"]["two"] == {"ok": 0, "fallback": 10, "failed": 5, "mean_score": 1.0}
    assert len(doc["recent"]) == RECENT and doc["recent"][-1]["item_id"] == "i14"
    assert all(len(a["rationale"] or "") <= 400 for a in doc["recent"])
    assert "sk-live-secret-123" not in json.dumps(doc)
    assert doc["phase"] == "items" and doc["done"] == 15 and doc["total"] == 20
