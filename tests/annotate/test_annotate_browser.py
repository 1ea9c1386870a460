"""The annotation page in a real headless Chromium (Debian's package, driven by Playwright).

Keyboard voting and resuming after a reload, two annotators voting at once from separate
browser contexts, hostile prompts and names shown as text, the long prompt, zoom, skip,
undo, the status page and the token. Skips only when /usr/bin/chromium is absent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from annotate_data import HOSTILE_PROMPT, LONG_PROMPT
from browser import ARTIFACTS, BROWSER_MARKS, CHROMIUM

from titjudge.cli import main
from titjudge.data.annotations import load_annotations
from titjudge.data.pairs import load_pairs
from titjudge.metrics.agreement import krippendorff_alpha_nominal

ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
SCREENSHOT = ARTIFACTS / "annotate.png"

pytestmark = BROWSER_MARKS


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=ARGS, headless=True
        )
        yield browser
        browser.close()


def open_page(chromium: Any, url: str) -> Any:
    """A page in a browser context of its own; script errors and requested URLs collected."""
    context = chromium.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.set_default_timeout(10_000)
    page.errors, page.requests = [], []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda msg: page.errors.append(msg.text) if msg.type == "error" else None)
    page.on("request", lambda request: page.requests.append(request.url))
    page.goto(url)
    return page


def sign_in(page: Any, name: str) -> None:
    page.wait_for_selector("body[data-state='name']")
    page.fill("#name-input", name)
    page.press("#name-input", "Enter")


def wait_for_pair(page: Any, pair_id: str) -> None:
    page.wait_for_selector(f"body[data-state='ready'][data-pair='{pair_id}']")


def expected_choice(key: str, left: str) -> str:
    side = {"ArrowLeft": "left", "1": "left", "ArrowRight": "right", "2": "right"}.get(key)
    if side is None:
        return "tie"
    return left if side == "left" else ("b" if left == "a" else "a")


def test_one_annotator_votes_ten_by_keyboard_and_resumes_at_the_eleventh(
    chromium: Any, make_session: Callable[..., Any], serve: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session()
    server = serve(session)
    order = session.order("Ann")
    page = open_page(chromium, server.url + "/")
    sign_in(page, "Ann")
    keys = ["ArrowLeft", "ArrowRight", "ArrowDown", "1", "2", "0", "ArrowLeft", "2", "0", "1"]
    for n, key in enumerate(keys):
        wait_for_pair(page, order[n].pair.pair_id)
        page.keyboard.press(key)
    wait_for_pair(page, order[10].pair.pair_id)
    rows = [row for _, row in load_annotations(tmp_path / "votes.csv")]
    assert [(r.annotator, r.item_a, r.item_b) for r in rows] == [
        ("Ann", s.pair.item_a, s.pair.item_b) for s in order[:10]
    ]
    assert [r.choice for r in rows] == [
        expected_choice(key, s.left) for key, s in zip(keys, order, strict=False)
    ]
    assert [r.shown_left for r in rows] == [s.left for s in order[:10]]
    assert all(r.seconds is not None and 0 <= r.seconds < 60 for r in rows)
    page.reload()  # the name is remembered, the 11th pair comes back
    wait_for_pair(page, order[10].pair.pair_id)
    assert page.text_content("#progress") == "10 / 50"
    assert page.errors == []
    assert all(url.startswith(server.url) for url in page.requests), page.requests
    page.context.close()


#: every pair of prompts P3 and P4: 20 of the dataset's 50, enough for two annotators' answers
#: to cross in flight, some of their votes to agree and some not
SHARED = [f"P{p}_m{a}|P{p}_m{b}" for p in (3, 4) for a in range(1, 6) for b in range(a + 1, 6)]


def test_two_annotators_vote_twenty_pairs_each_at_once(
    chromium: Any, make_session: Callable[..., Any], serve: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session(pairs=SHARED)
    assert len(session.pairs) == len(SHARED) == 20
    server = serve(session)
    people = {"Ann": "ArrowLeft", "Bob": "ArrowRight"}
    pages = {}
    for name in people:
        pages[name] = open_page(chromium, server.url + "/")
        sign_in(pages[name], name)
    orders = {name: session.order(name) for name in people}
    for n in range(20):
        for name, page in pages.items():
            wait_for_pair(page, orders[name][n].pair.pair_id)
        for name, page in pages.items():  # both answers in flight together
            page.keyboard.press(people[name])
    for page in pages.values():
        page.wait_for_selector("body[data-state='done']")
        assert page.text_content("#progress") == "20 / 20"
        assert page.errors == []
    votes = tmp_path / "votes.csv"
    rows = [row for _, row in load_annotations(votes)]
    assert len(rows) == 40
    for name in people:
        assert {(r.item_a, r.item_b) for r in rows if r.annotator == name} == {
            (p.item_a, p.item_b) for p in session.pairs
        }
    # aggregate-votes reads VOTES: with two annotators a pair is decided when both agree
    out = tmp_path / "pairs.csv"
    assert main(["data", "aggregate-votes", str(votes), "--out", str(out)]) == 0
    by_pair: dict[tuple[str, str], list[str]] = {}
    for r in rows:
        by_pair.setdefault((r.item_a, r.item_b), []).append(r.choice)
    agreed = {pair: c[0] for pair, c in by_pair.items() if c[0] == c[1]}
    assert 0 < len(agreed) < 20  # left vs right over random sides: some agree, some not
    assert {(p.item_a, p.item_b): p.winner for p in load_pairs(out)} == agreed
    # the status view: counts and agreement
    status = pages["Ann"]
    status.goto(server.url + "/status")
    status.wait_for_selector("body[data-state='ready']")
    cells = status.eval_on_selector_all(
        "#annotators tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    assert [c[:2] for c in cells] == [["Ann", "20"], ["Bob", "20"]]
    assert [c[6] for c in cells] == ["100%", "0%"]  # always left; always right
    alpha = krippendorff_alpha_nominal(list(by_pair.values()))
    summary = status.text_content("#summary")
    assert f"{alpha:.3f}" in summary and "shared pairs20" in summary
    for page in pages.values():
        page.context.close()


def test_hostile_text_is_inert_and_the_page_works_by_mouse(
    chromium: Any, make_session: Callable[..., Any], serve: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session(pairs=["P1_m1|P1_m2", "P2_m1|P2_m2"])
    server = serve(session)
    hostile_name = '<img src=x onerror="window.__pwned=1">'
    first, second = session.order(hostile_name)
    assert (first.pair.prompt_id, second.pair.prompt_id) == ("P1", "P2")  # seed 0's order
    page = open_page(chromium, server.url + "/")
    sign_in(page, hostile_name)
    wait_for_pair(page, first.pair.pair_id)
    assert page.text_content("#who") == hostile_name
    assert page.text_content("#prompt") == HOSTILE_PROMPT
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.evaluate("() => document.scripts.length") == 1
    assert (
        page.eval_on_selector_all("img", "els => els.filter(e => /[/]x$/.test(e.src)).length") == 0
    )
    page.click("#skip")
    wait_for_pair(page, second.pair.pair_id)
    # the long prompt: all of it, in a box that scrolls, the buttons still in view
    assert page.text_content("#prompt") == LONG_PROMPT
    assert page.evaluate(
        "() => { const p = document.getElementById('prompt');"
        " return p.scrollHeight > p.clientHeight && getComputedStyle(p).overflowY === 'auto'; }"
    )
    box = page.query_selector("#vote-right").bounding_box()
    assert box is not None and box["y"] + box["height"] <= 900
    page.wait_for_function(
        "() => ['left', 'right'].every(id => document.getElementById(id).naturalWidth === 48)"
    )
    page.click("#left")  # click to zoom
    page.wait_for_selector("#zoom:not([hidden])")
    assert page.eval_on_selector("#zoom-img", "e => e.src") == page.eval_on_selector(
        "#left", "e => e.src"
    )
    page.keyboard.press("Escape")
    page.wait_for_selector("#zoom", state="hidden")
    SCREENSHOT.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOT))
    page.click("#undo")  # takes back the skip
    wait_for_pair(page, first.pair.pair_id)
    assert load_annotations(tmp_path / "votes.csv") == []
    page.click("#vote-left")
    wait_for_pair(page, second.pair.pair_id)
    page.click("#vote-right")
    page.wait_for_selector("body[data-state='done']")
    rows = [row for _, row in load_annotations(tmp_path / "votes.csv")]
    assert [(r.annotator, r.choice) for r in rows] == [
        (hostile_name, first.left),
        (hostile_name, "b" if second.left == "a" else "a"),
    ]
    page.click("#status-link")
    page.wait_for_selector("body[data-state='ready'] #annotators tr")
    assert page.eval_on_selector("#annotators td", "e => e.textContent") == hostile_name
    assert page.evaluate("() => typeof window.__pwned") == "undefined"
    assert page.errors == []
    page.context.close()


def test_the_page_carries_the_token_it_was_opened_with(
    chromium: Any, make_session: Callable[..., Any], serve: Callable[..., Any], tmp_path: Path
) -> None:
    session = make_session(pairs=["P3_m1|P3_m2"])
    server = serve(session, token="tok-123")
    page = open_page(chromium, server.url + "/?token=tok-123")
    sign_in(page, "Ann")
    wait_for_pair(page, "P3_m1|P3_m2")
    page.wait_for_function("() => document.getElementById('left').naturalWidth === 48")
    assert page.get_attribute("#status-link", "href") == "status?token=tok-123"
    page.keyboard.press("0")
    page.wait_for_selector("body[data-state='done']")
    assert [r.choice for _, r in load_annotations(tmp_path / "votes.csv")] == ["tie"]
    assert page.errors == []
    # a remembered name the server refuses (too long) brings the name form back
    page.evaluate("() => localStorage.setItem('titjudge.annotator', 'x'.repeat(70))")
    page.reload()
    page.wait_for_selector("body[data-state='name']")
    assert "annotator name must be 1 to 64" in (page.text_content("#message") or "")
    # the same page without the token (which travels in the URL, never in a cookie or the
    # page's storage): refused
    page.goto(server.url + "/")
    assert "token" in (page.text_content("body") or "")
    page.context.close()
