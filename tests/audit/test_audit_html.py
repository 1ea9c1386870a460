"""The audit page as a file: escaping of the embedded JSON, CSP hashes, one copy per image/text."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from audit_run import HOSTILE
from PIL import Image

from titjudge.cli import main
from titjudge.report.audit.html import (
    build_payload,
    details_text,
    embed_json,
    make_thumbnails,
    render_page,
)
from titjudge.report.audit.load import load_audit

ASSETS = Path(__file__).parents[2] / "src" / "titjudge" / "report" / "audit" / "assets"


def page_of(run: Path, tmp_path: Path) -> str:
    out = tmp_path / "audit.html"
    assert main(["audit", str(run), "--html", str(out)]) == 0
    return out.read_text(encoding="utf-8")


def embedded(page: str) -> dict:
    match = re.search(r'<script type="application/json" id="audit-data">(.*?)</script>', page, re.S)
    assert match is not None
    return json.loads(match.group(1))


def test_embed_json_leaves_no_character_that_can_end_the_block() -> None:
    payload = {"t": [HOSTILE, "a & b > c < d", "line\u2029sep", "<!-- x -->"]}
    text = embed_json(payload)
    for bad in ("<", ">", "&", "\u2028", "\u2029"):
        assert bad not in text
    assert json.loads(text) == payload
    assert "\\u003c/script\\u003e" in text


@pytest.mark.slow
def test_page_keeps_hostile_text_inside_the_json_block(handmade_run: Path, tmp_path: Path) -> None:
    page = page_of(handmade_run, tmp_path)
    assert page.lower().count("</script") == 2  # the JSON block's and the script's own end tags
    assert page.lower().count("<script") == 2
    assert "window.__pwned" in page  # the text is there, escaped
    assert "<script>window.__pwned" not in page and "<img src=x" not in page
    assert HOSTILE in embedded(page)["texts"]


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.mark.slow
def test_csp_allows_only_the_pages_own_inline_script_and_style(
    handmade_run: Path, tmp_path: Path
) -> None:
    page = page_of(handmade_run, tmp_path)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page).group(1)
    script = re.search(r"<script>(.*?)</script>", page, re.S).group(1)
    style = re.search(r"<style>(.*?)</style>", page, re.S).group(1)
    assert csp == (
        f"default-src 'none'; img-src data:; style-src {_hash(style)}; "
        f"script-src {_hash(script)}; base-uri 'none'; form-action 'none'"
    )
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)


def test_page_script_never_parses_text_as_html() -> None:
    script = re.sub(r"^\s*//.*$", "", (ASSETS / "audit.js").read_text(encoding="utf-8"), flags=re.M)
    for sink in (
        "innerHTML",
        "outerHTML",
        "insertAdjacentHTML",
        "document.write",
        "eval(",
        "new Function",
    ):
        assert sink not in script
    assert "textContent" in script


def test_payload_stores_each_image_and_text_once(handmade_run: Path, tmp_path: Path) -> None:
    payload = embedded(page_of(handmade_run, tmp_path))
    assert len(payload["items"]) == 6 and len(payload["pairs"]) == 6
    assert len(payload["thumbs"]) == 5  # P2_m3's file is missing
    assert payload["run"]["n_missing_images"] == 1
    assert [item[3] for item in payload["items"]] == [0, 1, 2, 3, 4, -1]
    descriptions = [t for t in payload["texts"] if t.startswith("A picture made by")]
    assert len(descriptions) == 6  # one per image although both variants carry it
    assert len(payload["texts"]) == len(set(payload["texts"]))
    p1_m3 = next(item for item in payload["items"] if item[0] == "P1_m3")
    llm, emb = p1_m3[5]
    assert payload["texts"][llm[2]] == HOSTILE and llm[5] == emb[5]
    # pair 3 (P1_m1 vs P1_m3, B better): llm disagrees by 3, emb by 0.15
    assert payload["pairs"][2] == [0, 2, 1, [1, 1], [-3.0, -0.15], [None, None]]
    assert payload["variants"][0]["ci"] == [0.1, 0.6]
    # provenance from the run record: model asked for, answering model, template sha256
    assert "litellm:openai/judge" in payload["variants"][0]["provenance"]
    assert "judge-2024-08-06" in payload["variants"][0]["provenance"]
    assert "ab" * 32 in payload["variants"][0]["provenance"]


def test_thumbnails_are_small_data_uris(handmade_run: Path) -> None:
    data = load_audit(handmade_run)
    image = data.items["P1_m1"].image
    thumbs = make_thumbnails([image, image, data.items["P2_m3"].image])
    assert list(thumbs) == [image, data.items["P2_m3"].image]  # each path once
    uri = thumbs[image]
    assert uri is not None and uri.startswith("data:image/")
    decoded = Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1])))
    assert max(decoded.size) == 128
    assert thumbs[data.items["P2_m3"].image] is None  # unreadable: no thumbnail, no error


def test_details_and_placeholders_render_as_plain_text(handmade_run: Path) -> None:
    assert (
        details_text({"matches": ["a", "b"], "score_raw": 7})
        == "matches (2):\n  - a\n  - b\nscore_raw: 7"
    )
    assert details_text({}) is None
    data = load_audit(handmade_run)
    payload = build_payload(data, {})
    payload["texts"].append("__SCRIPT__ __DATA__")
    page = render_page(payload, "t")
    assert "__SCRIPT__ __DATA__" in page and page.count("(function () {") == 1


@pytest.mark.parametrize(
    "args, message",
    [
        (["--limit", "3"], "--limit goes with --disagreements"),
        (["--disagreements", "--variant", "lm"], "no variant 'lm'"),
    ],
)
def test_cli_input_errors_exit_2(handmade_run: Path, args: list[str], message: str, capsys) -> None:
    assert main(["audit", str(handmade_run), *args]) == 2
    assert message in capsys.readouterr().err
