"""The per-item graph's routing and the run graph's fan-out, with in-process stand-ins for
the describer and the judges (no server, no model)."""

import asyncio
import json

from builders import run_config
from PIL import Image

import titjudge.agents.finish as finish_module
from titjudge.agents.graph import build_graph
from titjudge.agents.item import RunContext
from titjudge.agents.nodes import build_item_graph
from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.judges.base import Judge
from titjudge.judges.options import JudgeOptions
from titjudge.models.core.clients import SEND
from titjudge.prompts.loader import load_template
from titjudge.records import RunEvaluation
from titjudge.records.calls import CallResult
from titjudge.records.item_line import item_lines, read_item_lines
from titjudge.records.items import Item
from titjudge.records.origins import StatusCounts
from titjudge.records.outcomes import JudgeOutcome
from titjudge.records.run_record import RunRecord, VariantRecord
from titjudge.run.runner import run_async


def _config(name):
    return JudgeOptions(name=name, kind="test")


class FixedJudge(Judge):
    """Scores every item `fixed`, or fails every item when `fixed` is None."""

    def __init__(self, name, fixed, needs_description=False):
        super().__init__(_config(name))
        self.fixed, self.needs_description = fixed, needs_description

    async def score(self, given, *, probe):
        if self.fixed is None:
            return JudgeOutcome.failed(self.name, "refused")
        return JudgeOutcome(self.name, "ok", score=self.fixed, rationale="fine")


class GatedDescriber:
    """Describes every image at once, except the image of `slow_id`: that one waits until
    `release` is set."""

    def __init__(self, slow_id):
        self.slow_id, self.release, self.order = slow_id, asyncio.Event(), []

    async def text(self, request, **_):
        item_id = request.images[0].path.stem
        if item_id == self.slow_id:
            await self.release.wait()
        return CallResult(ok=True, value=f"a description of {item_id}")


class RecordingJudge(Judge):
    """Reads descriptions; records the order it judged items in and calls `on_judged`."""

    def __init__(self, on_judged):
        super().__init__(_config("reader"))
        self.on_judged, self.order = on_judged, []

    async def score(self, given, *, probe):
        self.order.append(given.item.item_id)
        self.on_judged(given.item.item_id)
        return JudgeOutcome(self.name, "ok", score=float(len(given.description)))


def _items(tmp_path, ids):
    items = []
    for item_id in ids:
        path = tmp_path / f"{item_id}.png"
        Image.new("RGB", (4, 4), (10, 20, 30)).save(path)
        items.append(Item(item_id, "p1", "a red cube", path, "m"))
    return items


def _ctx(judges, fallbacks=None, describer=None, **extra):
    return RunContext(
        describer=describer,
        describe_template=load_template("describe_paper"),
        describe_max_tokens=64,
        describe_temperature=0.0,
        judges=judges,
        fallbacks=fallbacks or {},
        variant_order=[j.name for j in judges],
        **{"probe": SEND, **extra},
    )


async def _visited(ctx, item):
    app, nodes, final = build_item_graph(), [], {}
    async for update in app.astream({"item": item}, stream_mode="updates", context=ctx):
        for node, values in update.items():
            nodes.append(node)
            final.update(values)
    return nodes, final


def test_fallback_node_runs_only_when_a_judge_with_a_fallback_failed(tmp_path):
    item = _items(tmp_path, ["a"])[0]
    failing, backup, other = FixedJudge("main", None), FixedJudge("backup", 0.4), FixedJudge("x", 1)

    nodes, final = asyncio.run(_visited(_ctx([failing, backup], {"main": "backup"}), item))
    assert nodes == ["describe", "judge", "fallback"]
    main = final["outcomes"][0]
    assert (main.status, main.score, main.error) == ("fallback", 0.4, "refused")
    assert main.rationale == "[fallback to backup] fine"
    assert main.details["fallback_from"] == "backup"

    nodes, final = asyncio.run(
        _visited(_ctx([FixedJudge("main", 0.9), backup], {"main": "backup"}), item)
    )
    assert nodes == ["describe", "judge"] and final["outcomes"][0].status == "ok"

    # a failed judge without a fallback of its own does not take the edge
    nodes, final = asyncio.run(_visited(_ctx([failing, other], {"x": "main"}), item))
    assert nodes == ["describe", "judge"] and final["outcomes"][0].status == "failed"


def test_no_describer_call_when_no_judge_reads_descriptions(tmp_path):
    item = _items(tmp_path, ["a"])[0]
    _, final = asyncio.run(_visited(_ctx([FixedJudge("img", 0.5)], describer=None), item))
    assert final["described"].status == "skipped"


def test_an_item_is_judged_as_soon_as_its_own_description_returns(tmp_path):
    ids = [f"i{n:02d}" for n in range(12)]
    items = _items(tmp_path, ids)
    describer = GatedDescriber(slow_id="i00")

    def on_judged(item_id):
        if len(judge.order) == len(ids) - 1:  # every other item is judged: let i00 go
            describer.release.set()

    judge = RecordingJudge(on_judged)
    ctx = _ctx([judge], describer=describer)
    app = build_graph()
    state = asyncio.run(
        asyncio.wait_for(
            app.ainvoke({"items": items, "results": []}, {"max_concurrency": 4}, context=ctx),
            timeout=30,
        )
    )
    assert judge.order[-1] == "i00" and sorted(judge.order) == ids
    evaluation = state["evaluation"]
    assert [r.item.item_id for r in evaluation.results] == ids  # ordered by id once, at the end
    assert evaluation.n_failed_items == 0 and evaluation.status_counts == {
        "reader": StatusCounts(ok=12)
    }
    assert ctx.progress.done == 12


def _replay_config(synth_data, tmp_path):
    raw = run_config(synth_data, tmp_path, name="replayed", concurrency=None)
    return validate_config(raw, RunConfig, "test config")


def test_results_come_out_in_item_order_whatever_order_items_finish(synth_data, tmp_path):
    config = _replay_config(synth_data, tmp_path)
    record = asyncio.run(run_async(config))
    ids = [line.item_id for line in record.item_lines]
    assert ids == sorted(ids) and len({*ids}) == 16
    lines = (record.run_dir / "items.jsonl").read_text().splitlines()
    assert [json.loads(line)["item_id"] for line in lines] == ids


def test_the_runner_writes_the_evaluator_output_as_it_is(synth_data, tmp_path, monkeypatch):
    config = _replay_config(synth_data, tmp_path)
    seen = {}

    def marked(results, pairwise, human, order, **kwargs):
        seen["n"] = len(results)
        kept = sorted(results, key=lambda r: r.item.item_id)[:2]
        seen["first"] = kept[0].item.item_id
        return RunEvaluation(
            results=kept,
            lines=list(item_lines(kept[:1])),  # the written lines are these, not rebuilt
            metrics=RunRecord(variants={"marker": VariantRecord(pairwise_accuracy=0.123)}),
            pairwise={},
            status_counts={"marker": StatusCounts(ok=7, failed=5)},
            n_failed_items=5,
        )

    monkeypatch.setattr(finish_module, "evaluate_run", marked)
    outcome = asyncio.run(run_async(config))
    out = outcome.run_dir
    assert seen["n"] == 16
    written = json.loads((out / "metrics.json").read_text())
    assert written["variants"]["marker"]["pairwise_accuracy"] == 0.123
    assert outcome.metrics_json() == written
    summary = json.loads((out / "summary.json").read_text())
    assert summary["failed_items"] == 5 and summary["items"] == 2
    assert summary["variants"] == {"marker": {"ok": 7, "fallback": 0, "failed": 5}}
    [line] = outcome.item_lines
    assert read_item_lines(out / "items.jsonl") == [line] and line.item_id == seen["first"]
    assert (out / "scores.csv").read_text().splitlines() == [
        "item_id,variant,score,status",
        f"{line.item_id},{line.variant},{line.score!r},{line.status}",
    ]
    assert outcome.summary.exit_code == 1 and outcome.summary.failed_items == 5


class FailsOn(Judge):
    """Fails the item `bad_id`, scores every other item 0.7."""

    def __init__(self, name, bad_id):
        super().__init__(_config(name))
        self.bad_id, self.needs_description = bad_id, False

    async def score(self, given, *, probe):
        if given.item.item_id == self.bad_id:
            return JudgeOutcome.failed(self.name, "refused")
        return JudgeOutcome(self.name, "ok", score=0.7, rationale="fine")


def test_one_worker_run_takes_the_feed_item_by_item_with_fallback_only_where_needed(tmp_path):
    first, *rest = _items(tmp_path, ["a", "b", "c"])
    ctx = _ctx([FailsOn("main", "b"), FixedJudge("backup", 0.4)], {"main": "backup"})
    seen = []
    ctx.progress.on_update = lambda progress: seen.append((progress.described, progress.done))

    async def run():
        app, nodes, final = build_item_graph(), [], None
        stream = app.astream(
            {"item": first, "feed": iter(rest)}, stream_mode=["updates", "values"], context=ctx
        )
        async for mode, chunk in stream:
            if mode == "updates":
                nodes.extend(chunk)
            else:
                final = chunk
        return nodes, final

    nodes, final = asyncio.run(run())
    assert nodes == ["describe", "judge", "describe", "judge", "fallback", "describe", "judge"]
    assert [r.item.item_id for r in final["results"]] == ["a", "b", "c"]
    assert [r.outcomes[0].status for r in final["results"]] == ["ok", "fallback", "ok"]
    # each item reported as described, then as it finishes, before the next is described
    assert seen == [(1, 0), (1, 1), (2, 1), (2, 2), (3, 2), (3, 3)]
    assert final["image"] is None  # the last item's image is not kept


class OrderDescriber:
    """Describes at once; records the order it was asked in and the mode each call came in."""

    def __init__(self):
        self.asked, self.probes = [], []

    async def text(self, request, *, probe, **_):
        self.asked.append(request.images[0].path.stem)
        self.probes.append(probe)
        return CallResult(ok=True, value="a description")


def test_a_probing_pass_is_the_graph_in_item_order_and_evaluates_nothing(tmp_path):
    """The batch phase's rounds, the estimate and explain run the run's own graph under a
    probe (`agents.graph.drive`): every item through describe, judge and its fallback, the
    calls met in the items' order (one worker), the probe handed to every call, and no
    evaluator; the run's own progress is not touched."""
    from titjudge.agents.graph import drive
    from titjudge.models.calls.probe import CacheProbe

    ids = [f"i{n:02d}" for n in range(9)]
    describer = OrderDescriber()
    judges = [FixedJudge("main", None, needs_description=True), FixedJudge("backup", 0.4)]
    ctx = _ctx(judges, {"main": "backup"}, describer=describer)
    probe = CacheProbe()

    state = asyncio.run(drive(_items(tmp_path, ids), ctx.probing(probe=probe), concurrency=8))

    assert describer.asked == ids and all(p is probe for p in describer.probes)
    assert [r.item.item_id for r in state["results"]] == ids
    assert {r.outcomes[0].status for r in state["results"]} == {"fallback"}
    assert "evaluation" not in state and state["pairwise"] == {}
    assert (ctx.progress.described, ctx.progress.done) == (0, 0)


def test_only_the_graph_and_the_cached_pass_call_the_item_steps():
    """One driver: the item steps (`agents.item`) are called by the graph's nodes and by the
    cached pass, which is itself the graph's first node (imported by graph.py alone), by no
    other module of titjudge."""
    import ast
    from pathlib import Path

    import titjudge

    steps = {"describe", "judge", "fallback", "finish"}
    callers, cached_pass = set(), set()
    for path in Path(titjudge.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom):
                continue
            names = {alias.name for alias in node.names}
            if (node.module == "titjudge.agents" and "item" in names) or (  # the steps' module
                node.module == "titjudge.agents.item" and steps & names  # a step by name
            ):
                callers.add(path.name)
            if node.module == "titjudge.agents.cached":
                cached_pass.add(path.name)
    assert callers == {"nodes.py", "cached.py"}
    assert cached_pass == {"graph.py"}
