"""The audit page in a real headless Chromium (Debian's package, driven by Playwright).

Asserts from the DOM: entry counts, filters, sorting, paging, that hostile model text is
shown as text with no script run, and that a page of LPG-Bench size becomes usable fast.
Skips only when /usr/bin/chromium is absent (CI installs it).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from audit_run import PAIRS
from browser import ARTIFACTS, BROWSER_MARKS, chromium_context

from titjudge.cli import main
from titjudge.records.item_line import ItemLine
from titjudge.records.items import HumanPair
from titjudge.records.run_record import RunRecord
from titjudge.report.audit.data import (
    AuditData,
    AuditItem,
    AuditPair,
    classify,
    sorted_pairs,
)
from titjudge.report.audit.html import build_payload, make_thumbnails, render_page
from titjudge.report.audit.load import load_audit, summarise_variants

SCREENSHOT = ARTIFACTS / "audit.png"

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def browser(
    tmp_path_factory: pytest.TempPathFactory, pipeline_run: Path, nopairs_run: Path
) -> Iterator[Any]:
    """One headless Chromium with a fresh profile for the module.

    Sync Playwright keeps an event loop running on this thread, so the pipeline runs
    (which use asyncio.run) are built first.
    """
    with chromium_context(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context


def open_page(browser: Any, html: Path) -> tuple[Any, list[str], list[str]]:
    """Open the page; collect script errors and every URL the page asked for."""
    page = browser.new_page()
    page.set_default_timeout(10_000)
    errors: list[str] = []
    requests: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("request", lambda request: requests.append(request.url))
    page.goto(html.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=30_000)
    return page, errors, requests


def shown(page: Any) -> list[str]:
    return page.eval_on_selector_all("article.entry", "els => els.map(e => e.dataset.pair)")


def margins(page: Any) -> list[float | None]:
    raw = page.eval_on_selector_all("article.entry", "els => els.map(e => e.dataset.margin)")
    return [float(m) if m else None for m in raw]


def count(page: Any) -> tuple[int, int]:
    matched, total = page.eval_on_selector("#count", "e => [e.dataset.matched, e.dataset.total]")
    return int(matched), int(total)


def choose(page: Any, **labels: str) -> None:
    for name, label in labels.items():
        page.select_option(f"#f-{name}", label=label)


def pair_ids(indices: list[int]) -> list[str]:
    return [f"{PAIRS[i][0]}|{PAIRS[i][1]}" for i in indices]


@pytest.fixture(scope="module")
def handmade_page(
    browser: Any, handmade_run: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    html = tmp_path_factory.mktemp("audit-page") / "audit.html"
    assert main(["audit", str(handmade_run), "--html", str(html)]) == 0
    page, errors, requests = open_page(browser, html)
    page.errors, page.requests = errors, requests
    yield page
    page.close()


def test_hostile_rationale_is_text_and_runs_nothing(handmade_page: Any) -> None:
    page = handmade_page
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    body = page.evaluate("() => document.body.textContent")
    for text in (
        "<script>window.__pwned=1</script>",
        '<img src=x onerror="window.__pwned=1">',
        "</script><script>window.__pwned=1</script>",
        "[bold red]boom[/]",
    ):
        assert text in body
    assert page.evaluate("() => document.scripts.length") == 2
    sources = page.eval_on_selector_all(
        "img", "els => els.map(e => e.getAttribute('src').slice(0, 11))"
    )
    assert sources and set(sources) == {"data:image/"}
    assert page.errors == []
    assert all(url.startswith(("file://", "data:")) for url in page.requests), page.requests


def test_entry_count_matches_the_run(handmade_page: Any, handmade_run: Path) -> None:
    choose(
        handmade_page,
        variant="any variant",
        outcome="all",
        model="all",
        prompt="all",
        sort="most confident mistakes first",
    )
    data = load_audit(handmade_run)
    assert count(handmade_page) == (6, 6)
    assert shown(handmade_page) == [p.pair_id for p in sorted_pairs(data, data.pairs, None)]
    assert handmade_page.text_content("#page") == "page 1 of 1"


def test_filters_change_what_is_shown(handmade_page: Any) -> None:
    page = handmade_page
    choose(page, variant="llm", outcome="disagree")
    assert shown(page) == ["P1_m1|P1_m3"] and count(page) == (1, 6)
    choose(page, outcome="failed")
    assert shown(page) == pair_ids([3, 5])
    choose(page, variant="emb", outcome="disagree")
    assert shown(page) == pair_ids([1, 2])
    choose(page, variant="any variant", outcome="human tie")
    assert shown(page) == pair_ids([4])
    choose(page, outcome="all", model="m1")
    assert sorted(shown(page)) == sorted(pair_ids([0, 2, 3, 5]))
    choose(page, model="all")
    page.select_option("#f-prompt", value="1")  # options: all, P1, P2
    assert sorted(shown(page)) == sorted(pair_ids([3, 4, 5]))
    choose(page, prompt="all", outcome="metric tie")
    assert shown(page) == pair_ids([1])
    choose(page, outcome="all")
    assert count(page) == (6, 6)


def test_sorting_by_margin(handmade_page: Any) -> None:
    page = handmade_page
    choose(
        page,
        variant="llm",
        outcome="all",
        model="all",
        prompt="all",
        sort="most confident mistakes first",
    )
    assert shown(page) == pair_ids([2, 1, 0, 4, 3, 5])
    assert margins(page)[:3] == [-3.0, 0.0, 3.0]  # scored pairs: margin ascending
    choose(page, variant="emb")
    assert margins(page)[:5] == sorted(margins(page)[:5])
    assert shown(page) == pair_ids([1, 2, 3, 5, 0, 4])
    choose(page, variant="llm", sort="most confident agreements first")
    assert shown(page) == pair_ids([0, 1, 2, 4, 3, 5])
    choose(page, sort="pair order")
    assert shown(page) == pair_ids([0, 1, 2, 3, 4, 5])
    choose(page, sort="most confident mistakes first")
    SCREENSHOT.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    print(f"audit page screenshot: {SCREENSHOT}")
    assert SCREENSHOT.stat().st_size > 10_000


def test_paging_through_a_real_run(browser: Any, pipeline_run: Path, tmp_path: Path) -> None:
    html = tmp_path / "audit.html"
    assert main(["audit", str(pipeline_run), "--html", str(html)]) == 0
    page, errors, _ = open_page(browser, html)
    n_pairs = len((pipeline_run.parent / "data" / "pairs.csv").read_text().splitlines()) - 1
    assert count(page) == (n_pairs, n_pairs) == (50, 50)
    first = shown(page)
    assert len(first) == 25 and page.text_content("#page") == "page 1 of 2"
    page.click("#next")
    second = shown(page)
    assert len(second) == 25 and not set(first) & set(second)
    assert page.text_content(".entry .rank") == "#26" and page.is_disabled("#next")
    data = load_audit(pipeline_run)
    assert first + second == [p.pair_id for p in sorted_pairs(data, data.pairs, "lexical")]
    assert errors == []
    page.close()


def lpg_sized(tmp_path: Path, n_prompts: int = 200, n_models: int = 13) -> AuditData:
    """An in-memory run of LPG-Bench size: 2,600 images, 15,600 pairs, 2 variants."""
    rng = random.Random(7)
    words = [
        "red",
        "ball",
        "green",
        "grass",
        "grey",
        "sky",
        "tall",
        "tower",
        "soft",
        "light",
        "calm",
    ]
    items, pairs = {}, []
    for p in range(n_prompts):
        ids = [f"p{p:04d}_m{m:02d}" for m in range(n_models)]
        for m, item_id in enumerate(ids):
            description = " ".join(rng.choice(words) for _ in range(260))
            ids_of = {"item_id": item_id, "prompt_id": f"p{p:04d}", "t2i_model": f"model-{m:02d}"}
            results = {
                "llm": ItemLine.model_construct(
                    **ids_of,
                    variant="llm",
                    status="ok",
                    score=float(rng.randint(1, 10)),
                    rationale=description[:400],
                    description=description,
                    raw='{"score": 7}',
                ),
                "emb": ItemLine.model_construct(
                    **ids_of,
                    variant="emb",
                    status="ok",
                    score=rng.random(),
                    description=description,
                ),
            }
            items[item_id] = AuditItem(
                item_id, f"p{p:04d}", f"model-{m:02d}", str(tmp_path / f"{item_id}.png"), results
            )
        for a in range(n_models):
            for b in range(a + 1, n_models):
                pair = HumanPair(f"p{p:04d}", ids[a], ids[b], rng.choice(("a", "b", "b", "tie")))
                verdicts = {
                    v: classify(pair, items[ids[a]].results[v], items[ids[b]].results[v])
                    for v in ("llm", "emb")
                }
                pairs.append(AuditPair(len(pairs), pair, verdicts))
    prompts = {f"p{p:04d}": "A long prompt " * 40 for p in range(n_prompts)}
    return AuditData(
        tmp_path,
        "lpg-sized",
        ["llm", "emb"],
        items,
        prompts,
        pairs,
        summarise_variants(["llm", "emb"], items, pairs, RunRecord()),
        0,
        {},
    )


def test_lpg_sized_page_is_usable_fast(browser: Any, tmp_path: Path, handmade_run: Path) -> None:
    data = lpg_sized(tmp_path)
    image = load_audit(handmade_run).items["P1_m1"].image
    uri = make_thumbnails([image])[image]  # one real thumbnail
    assert uri is not None
    started = time.perf_counter()
    page_html = render_page(
        build_payload(data, {item.image: uri for item in data.items.values()}), "lpg"
    )
    built = time.perf_counter() - started
    html = tmp_path / "audit.html"
    html.write_text(page_html, encoding="utf-8")
    page, errors, _ = open_page(browser, html)
    ready_ms = page.evaluate("() => window.__auditReadyMs")
    assert count(page) == (15_600, 15_600)
    assert page.evaluate("() => document.querySelectorAll('article.entry').length") == 25
    choose(page, variant="emb", outcome="disagree")
    update_ms = page.evaluate("() => window.__auditLastUpdateMs")
    assert all(
        o == "disagree"
        for o in page.eval_on_selector_all(
            "article.entry", "els => els.map(e => e.dataset.outcome)"
        )
    )
    print(
        f"LPG-sized page (2,600 images, 15,600 pairs, 2 variants): {html.stat().st_size / 1e6:.1f} MB, "
        f"built in {built:.2f} s, usable {ready_ms:.0f} ms after navigation start, filter+sort {update_ms:.0f} ms"
    )
    assert ready_ms < 10_000 and update_ms < 2_000
    assert errors == []
    page.close()


def test_page_of_a_run_without_human_pairs_browses_items(
    browser: Any, nopairs_run: Path, tmp_path: Path
) -> None:
    """No human pairs: the page opens, one entry per image with its description and each
    variant's rationale; the model filter and the sort by score work."""
    import json

    html = tmp_path / "items.html"
    assert main(["audit", str(nopairs_run), "--html", str(html)]) == 0
    lines = [json.loads(x) for x in (nopairs_run / "items.jsonl").read_text().splitlines()]
    page, errors, _ = open_page(browser, html)
    try:
        assert count(page) == (12, 12)
        shown_items = page.eval_on_selector_all(
            "article.entry", "els => els.map(e => e.dataset.item)"
        )
        assert shown_items == [line["item_id"] for line in lines]
        body = page.evaluate("() => document.body.textContent")
        for line in lines:
            assert line["description"] in body and line["rationale"] in body
        assert "no human pairs" in page.text_content("#run-facts")
        choose(page, model="synth-model-02")
        assert count(page) == (3, 12)
        choose(page, model="all", sort="highest score first")
        scores = page.eval_on_selector_all(
            "article.entry", "els => els.map(e => Number(e.dataset.score))"
        )
        assert scores == sorted((line["score"] for line in lines), reverse=True)
        assert errors == []
    finally:
        page.close()
