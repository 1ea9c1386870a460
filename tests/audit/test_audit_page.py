"""`titjudge audit RUN --html DIR`: the run as the workbench's static copy, in a real headless
Chromium from file://, as a reader opens it. Its numbers, pairs and order are the audit's
(report.audit.data), a run without human pairs is browsed image by image, and the hostile
text of the hand-made run stays text (tests/workbench checks every view of that too)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from browser import ARTIFACTS, BROWSER_MARKS, chromium_context
from bundle_doc import audit_bundle

from titjudge.report.audit.data import sorted_pairs
from titjudge.report.audit.load import load_audit
from titjudge.workbench.catalog import pair_key

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def browser(
    tmp_path_factory: pytest.TempPathFactory, pipeline_run: Path, nopairs_run: Path
) -> Iterator[Any]:
    """One headless Chromium for the module (the runs are made first: sync Playwright keeps
    an event loop running on this thread, and a run uses asyncio.run)."""
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


def opened(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === (location.hash || '#/runs')")
    return page, errors


def go(page: Any, url: str) -> None:
    page.goto(url)
    page.wait_for_function("() => document.body.dataset.ready === (location.hash || '#/runs')")


def test_the_page_of_a_real_run_shows_its_pairs_in_the_audits_order(
    browser: Any, pipeline_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "page"
    bundle = audit_bundle(pipeline_run, out)
    data = load_audit(pipeline_run)
    (variant,) = data.variants
    # most confident mistakes first, as `audit --disagreements` orders them
    expected = [pair_key(p.pair) for p in sorted_pairs(data, data.pairs, variant)]
    page, errors = opened(browser, (out / "index.html").as_uri() + "#/runs")
    accuracy = page.text_content(f"td[data-variant='{variant}'][data-field='accuracy']")
    assert accuracy == f"{100 * data.summaries[variant].pairwise_accuracy:.2f}%"
    seen: list[str] = []
    go(page, (out / "index.html").as_uri() + f"#/pairs?runs=r1&sort=r1:{variant}")
    total = int(page.get_attribute("#total", "data-total"))
    assert total == len(data.pairs) == len(bundle["rows"])
    while True:  # every page, by the pager
        seen += page.eval_on_selector_all(
            "#pairs tr[data-key]", "rows => rows.map(r => r.dataset.key)"
        )
        if page.is_disabled("#next"):
            break
        before = page.evaluate("() => document.body.dataset.ready")
        page.click("#next")
        page.wait_for_function("b => document.body.dataset.ready !== b", arg=before)
    assert seen == expected
    ARTIFACTS.mkdir(exist_ok=True)
    go(page, (out / "index.html").as_uri() + f"#/pair?key={expected[0]}&runs=r1")
    page.screenshot(path=str(ARTIFACTS / "audit.png"))
    assert errors == []
    page.close()


def test_the_page_of_a_run_without_human_pairs_browses_its_images(
    browser: Any, nopairs_run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "page"
    audit_bundle(nopairs_run, out)
    lines = [json.loads(x) for x in (nopairs_run / "items.jsonl").read_text().splitlines()]
    page, errors = opened(browser, (out / "index.html").as_uri() + "#/items?run=r1")
    assert int(page.get_attribute("#items-total", "data-total")) == len(lines) == 12
    shown = page.eval_on_selector_all("#items a[data-item]", "a => a.map(x => x.dataset.item)")
    assert shown == [line["item_id"] for line in lines]
    line = lines[3]
    go(page, (out / "index.html").as_uri() + f"#/item?run=r1&item={line['item_id']}")
    assert page.text_content("[data-field='description']") == line["description"]
    assert page.text_content(".variant [data-field='rationale']") == line["rationale"]
    width = page.evaluate("() => document.querySelector('figure img').naturalWidth")
    assert width > 0  # the image, bundled, shown from file://
    go(page, (out / "index.html").as_uri() + "#/items?run=r1&model=" + line["t2i_model"])
    models = page.eval_on_selector_all(
        "#items tr[data-item] td:nth-child(4)", "c => c.map(x => x.textContent)"
    )
    assert models and set(models) == {line["t2i_model"]}
    assert errors == []
    page.close()


def test_the_page_refuses_a_folder_that_holds_something(handmade_run: Path, tmp_path, capsys):
    from titjudge.cli import main

    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "notes.txt").write_text("mine")
    assert main(["audit", str(handmade_run), "--html", str(taken)]) == 2
    err = capsys.readouterr().err
    assert "exists and is not an empty folder" in err and "Traceback" not in err
    assert (taken / "notes.txt").read_text() == "mine"
