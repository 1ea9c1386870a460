"""The workbench in a real headless Chromium (Debian's package, driven by Playwright), served
and as a bundle from file://, over two real runs of one config with its judge swapped.

Every number a page shows is checked against the run's own files (metrics.json,
summary.json), and every filter's pairs against the pairs worked out here from items.jsonl
and pairs.csv (a pair is right when the human winner scored strictly higher). Screenshots go
to ci-artifacts/ (the docs page's pictures are taken by `test_the_docs_screenshots`)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import ARTIFACTS, BROWSER_MARKS, chromium_context
from playwright.sync_api import expect
from workbench_server import WorkbenchServer, human_rows, run_scores

pytestmark = BROWSER_MARKS


def shot(page: Any, name: str) -> None:
    """The screenshot docs/workbench.md shows (the site build takes it from ci-artifacts/,
    docs/hooks/reference.py SCREENSHOTS), from the served app."""
    if page.url.startswith("http"):
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / name))


def pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("items.jsonl"))


def human_pairs(run: Path) -> dict[tuple[str, str], dict[str, str]]:
    """The run's pairs file's rows by (item_a, item_b), as the file has them."""
    return {(row["item_a"], row["item_b"]): row for row in human_rows(run)}


def outcomes(run: Path) -> dict[str, str]:
    """Per pair key: agree / wrong (disagree or tie) / tie (human), from the run's files."""
    scores = run_scores(run)
    found = {}
    for row in human_rows(run):
        a, b = sorted((row["item_a"], row["item_b"]))
        key = f"{row['prompt_id']}|{a}|{b}"
        if row["winner"] == "tie":
            found[key] = "tie"
            continue
        win, lose = (row["item_a"], row["item_b"])[:: 1 if row["winner"] == "a" else -1]
        found[key] = "agree" if scores[win] > scores[lose] else "wrong"
    return found


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory, swapped: Path) -> Iterator[Any]:
    with chromium_context(tmp_path_factory.mktemp("chromium-profile"), width=1400) as context:
        yield context


@pytest.fixture(scope="module")
def served(swapped: Path) -> Iterator[WorkbenchServer]:
    with WorkbenchServer(swapped) as server:
        yield server


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory, swapped: Path) -> Path:
    from titjudge.cli import main

    out = tmp_path_factory.mktemp("bundle") / "workbench"
    assert main(["view", str(swapped), "--bundle", str(out)]) == 0
    return out / "index.html"


def opened(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    go(page, url)
    return page, errors


def go(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === (location.hash || '#/runs')")


@pytest.fixture(params=["served", "bundle"])
def where(request: pytest.FixtureRequest, served: WorkbenchServer, bundle: Path) -> str:
    """The app's base URL: the server's, or the bundle's index.html from file://."""
    return served.url + "/" if request.param == "served" else bundle.as_uri()


def test_the_runs_page_shows_each_runs_numbers_as_its_records_hold_them(browser, where, swapped):
    page, errors = opened(browser, where + "#/runs")
    for number, run in enumerate(run_dirs(swapped), 1):
        metrics = json.loads((run / "metrics.json").read_text())
        summary = json.loads((run / "summary.json").read_text())
        for name, variant in metrics["variants"].items():
            cell = f"[data-run=r{number}][data-variant={name}]"
            assert page.inner_text(f"td{cell}[data-field=accuracy]") == pct(
                variant["pairwise_accuracy"]
            )
            low, high = variant["ci"]["pairwise_accuracy"]
            assert page.inner_text(f"td{cell}[data-field=ci]") == f"[{pct(low)}, {pct(high)}]"
            assert page.inner_text(f"td{cell}[data-field=n_pairs]") == str(variant["n_pairs"])
            assert page.inner_text(f"td{cell}[data-field=kind]") == variant["provenance"]["kind"]
        unpriced = sum(role["unpriced_calls"] for role in summary["usage"].values())
        priced = sum(role["priced_cost"] for role in summary["usage"].values())
        cost = page.locator("td[data-field=cost]").nth(number - 1).inner_text()
        if unpriced:  # the LLM judge's calls have no price: unknown, never $0
            assert cost == f"cost unknown ({unpriced} unpriced calls)"
        else:
            assert cost == f"${priced:.4f}"
    assert errors == []
    shot(page, "workbench-runs.png")


def shown_keys(page: Any) -> list[str]:
    return page.eval_on_selector_all("#pairs tr[data-key]", "rows => rows.map(r => r.dataset.key)")


@pytest.mark.parametrize("which", ["changed", "all_wrong", "disagree", "all"])
def test_each_filter_shows_the_pairs_the_runs_files_say(browser, where, swapped, which):
    first, second = (outcomes(run) for run in run_dirs(swapped))
    expected = []
    for key in first:
        a, b = first[key], second[key]
        scored = [o for o in (a, b) if o != "tie"]
        keep = {
            "changed": a != "tie" and a != b,
            "all_wrong": bool(scored) and "agree" not in scored,
            "disagree": "agree" in scored and "wrong" in scored,
            "all": True,
        }[which]
        if keep:
            expected.append(key)
    url = (
        where + f"#/pairs?runs=r1,r2&filter={which}" + ("&a=r1&b=r2" if which == "changed" else "")
    )
    page, errors = opened(browser, url)
    assert sorted(shown_keys(page)) == sorted(expected)
    assert page.get_attribute("#total", "data-total") == str(len(expected))
    assert errors == []
    if which == "changed":
        shot(page, "workbench-pairs.png")


def test_a_pairs_rationales_from_both_runs_are_side_by_side(browser, where, swapped):
    runs = run_dirs(swapped)
    page, errors = opened(browser, where + "#/pairs?runs=r1,r2&filter=changed&a=r1&b=r2")
    key = shown_keys(page)[0]
    page.click(f"#pairs tr[data-key='{key}'] a")
    page.wait_for_function("() => document.body.dataset.ready.startsWith('#/pair?')")
    _, item_a, item_b = key.split("|")
    for number, run in enumerate(runs, 1):
        lines = {
            (row["item_id"], row["variant"]): row
            for row in map(json.loads, (run / "items.jsonl").read_text().splitlines())
        }
        block = page.locator(f".variant[data-run=r{number}][data-variant=judge]")
        shown = block.locator("[data-field=rationale]").all_inner_texts()
        # image A's rationale, then image B's, as items.jsonl holds them
        assert shown == [
            lines[(item_a, "judge")]["rationale"],
            lines[(item_b, "judge")]["rationale"],
        ]
    # people's votes and margin, as the pairs file keeps them (in the key's image order)
    rows = human_pairs(runs[0])
    human = rows.get((item_a, item_b)) or rows[(item_b, item_a)]
    votes = [int(human[k]) for k in ("votes_a", "votes_b", "votes_tie")]
    if human["item_a"] != item_a:
        votes = [votes[1], votes[0], votes[2]]
    assert f"{votes[0]}–{votes[1]}" in page.text_content("#people")
    assert f"margin {abs(votes[0] - votes[1])} of {sum(votes)}" in page.text_content("#people")
    # both runs' blocks sit in one page: the lexical one and the LLM one
    assert page.locator(".variant").count() == 2
    widths = page.eval_on_selector_all(".images img", "imgs => imgs.map(i => i.naturalWidth)")
    assert len(widths) == 2 and all(w > 0 for w in widths)
    assert errors == []
    page.locator(".variant").first.scroll_into_view_if_needed()
    shot(page, "workbench-pair.png")


def test_compare_and_pictures_show_the_records_numbers(browser, served, swapped):
    from titjudge.report.analysis.compare import compare_runs
    from titjudge.report.analysis.run import RunData

    runs = run_dirs(swapped)
    found = compare_runs([RunData.load(r) for r in runs], labels=["r1", "r2"]).as_dict()
    page, errors = opened(browser, served.url + "/#/compare?a=r1&b=r2")
    for column in found["variants"]:
        cell = f"td[data-column='{column['column']}'][data-field=accuracy]"
        assert page.inner_text(cell) == pct(column["pairwise_accuracy"])
    assert page.inner_text("td[data-field=p_value]") == f"{found['mcnemar'][0]['p_value']:.4g}"
    assert "kind" in page.inner_text("#changes")  # lexical -> llm is a config change
    go(page, served.url + "/#/pictures?runs=r1,r2")
    for number, run in enumerate(runs, 1):
        accuracy = json.loads((run / "metrics.json").read_text())["variants"]["judge"]
        cell = page.inner_text(f"#heatmap td[data-run=r{number}][data-variant=judge]")
        assert cell == pct(accuracy["pairwise_accuracy"])
    assert page.locator("#calibration svg circle").count() > 0
    assert errors == []
    shot(page, "workbench-pictures.png")


def test_hostile_strings_are_text_and_run_nothing_served_and_bundled(
    browser, hostile_runs, tmp_path
):
    from audit.audit_run import HOSTILE

    from titjudge.cli import main

    out = tmp_path / "bundle"
    assert main(["view", str(hostile_runs), "--bundle", str(out)]) == 0
    with WorkbenchServer(hostile_runs) as server:
        for base in (server.url + "/", (out / "index.html").as_uri()):
            page, errors = opened(browser, base + "#/pairs?runs=r1")
            keys = shown_keys(page)
            assert keys
            for key in keys:
                go(page, base + f"#/pair?key={key}&runs=r1")
                assert page.evaluate("() => window.__pwned") is None
            go(page, base + "#/pairs?runs=r1&q=pwned")  # the rationale's text is searchable
            assert shown_keys(page)
            shown = page.inner_text("body")
            go(page, base + f"#/pair?key={shown_keys(page)[0]}&runs=r1")
            assert HOSTILE.split(" ")[0] in page.inner_text("body")
            assert page.evaluate("() => window.__pwned") is None
            # the images view and each image's page (the hostile rationale, error and details)
            go(page, base + "#/items?run=r1")
            items = page.eval_on_selector_all(
                "#items a[data-item]", "a => a.map(x => x.dataset.item)"
            )
            assert items
            for item in items:
                go(page, base + f"#/item?run=r1&item={item}")
                assert page.evaluate("() => window.__pwned") is None
            go(page, base + "#/items?run=r1&q=pwned")
            assert page.locator("#items tr[data-item]").count() >= 1
            # only the app's own scripts ever ran: none came from the runs' text
            assert page.evaluate("() => document.scripts.length") <= 2
            assert errors == [] or all("Failed to load resource" in e for e in errors), errors
            assert shown


def test_a_filters_pairs_go_to_the_annotation_queue_and_kappa_follows_the_votes(
    browser, swapped, tmp_path
):
    from titjudge.annotate.status import status_json, summarise
    from titjudge.data.annotations import load_annotations

    votes = tmp_path / "votes.csv"
    with WorkbenchServer(swapped, votes=votes) as server:
        page, errors = opened(browser, server.url + "/#/pairs?runs=r1,r2&filter=disagree")
        total = int(page.get_attribute("#total", "data-total"))
        assert page.text_content("#to-queue") == f"Annotate these {total} pairs"
        page.click("#to-queue")
        page.wait_for_selector("#open-queue")
        assert page.text_content("#queue-result").startswith(f"{total} pairs of ")
        with urllib.request.urlopen(server.url + "/api/queue") as response:
            queue = json.loads(response.read())["queue"]
        assert queue["pairs"] == total
        page.click("#open-queue")
        page.wait_for_url("**/annotate/")
        # one page, two annotators in turn (the page remembers one name): the queue's first
        # two pairs, in its order, for each; ann left then tie, bea tie then tie
        for name, answers in (("ann", ("left", "tie")), ("bea", ("tie", "tie"))):
            if name == "bea":
                page.click("#rename")
            page.fill("#name-input", name)
            page.click("#name-start")
            for n, answer in enumerate(answers):
                page.wait_for_function(
                    "id => document.body.dataset.pair === id && document.body.dataset.state === 'ready'",
                    arg=queue["first"][n]["pair"],
                )
                page.click({"left": "#vote-left", "tie": "#vote-tie"}[answer])
            page.wait_for_function(
                "id => document.body.dataset.pair === id && document.body.dataset.state === 'ready'",
                arg=queue["first"][2]["pair"],
            )
        status = status_json(summarise([row for _, row in load_annotations(votes)]))
        assert status["shared_pairs"] == 2 and status["fleiss_kappa"] is not None
        fixed = [
            page.evaluate("v => v.toFixed(2)", status[k])
            for k in ("fleiss_kappa", "chance_agreement")
        ]
        assert page.text_content("#agreement") == f"κ {fixed[0]} (chance {fixed[1]}, 2 shared)"
        shot(page, "workbench-annotate.png")
        assert errors == []
        page.close()


def test_the_runs_page_follows_a_run_in_progress_as_its_answers_arrive(browser, swapped, tmp_path):
    import shutil

    from titjudge.files import atomic_write
    from titjudge.records import ItemResult, Progress
    from titjudge.records.items import Item
    from titjudge.records.outcomes import Described, JudgeOutcome
    from titjudge.report.live import LIVE_FILE, LiveState

    root = tmp_path / "runs"
    shutil.copytree(swapped, root)
    staging = root / "swap" / ".20991231T000000Z-0000.partial"
    staging.mkdir()
    progress = Progress(total=16)
    state = LiveState("swap", progress)

    def answered(n: int) -> None:
        item = Item(f"P1_m{n}", "P1", "p", tmp_path / "x.png", "m1")
        outcome = JudgeOutcome("judge", "ok", score=0.5, rationale=f"<b>rationale {n}</b>")
        state.item(ItemResult(item, Described("d"), [outcome]))
        progress.done += 1
        atomic_write(staging / LIVE_FILE, json.dumps(state.doc()))

    answered(1)
    with WorkbenchServer(root) as server:
        page, errors = opened(browser, server.url + "/#/runs")
        # the staging dir sorts first (a hidden name): r1; the finished runs r2, r3
        page.locator("#runs input[data-run='r2']").check()  # kept ticked across refreshes
        live = "section.live[data-run='r1'] [data-field='live-progress']"
        assert page.text_content(live).startswith(" 1 / 16 items (6%), 0 failed")
        for n in range(2, 5):
            answered(n)
        # waited for through a locator, not an evaluated predicate: the page's CSP has no
        # unsafe-eval, which Playwright 1.45 (the lowest allowed) needs for a function with an arg
        expect(page.locator(live)).to_have_text(re.compile(r"^ 4 / 16 items"))
        rows = page.locator("section.live li[data-item]")
        assert rows.first.get_attribute("data-item") == "P1_m4"  # the latest first
        assert "<b>rationale 4</b>" in rows.first.text_content()  # as text, not markup
        assert page.locator("section.live b").count() == 0
        assert page.locator("#runs input[data-run='r2']").is_checked()
        # the run finishes: its staging dir goes, its run dir comes, the page says so
        shutil.rmtree(staging)
        shutil.copytree(run_dirs(swapped)[0], root / "swap" / "20991231T000000Z-0000")
        page.locator("section.live").wait_for(state="detached")
        page.wait_for_selector("#runs input[data-run='r4']")
        assert errors == []
        page.close()
