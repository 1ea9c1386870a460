"""The audit page: one self-contained HTML file (no network, no server) built from `AuditData`.

Size and speed at LPG-Bench scale (2,600 images, ~15,600 pairs) come from the data
layout, not from the browser: each image is embedded once as a small WebP/JPEG
thumbnail and referenced by index; every text (prompt, description, rationale, raw
output) is stored once in a string table; pairs are short arrays of indices, outcome
codes and margins. The script renders one page of entries at a time from that JSON.

Safety: everything a model wrote is data. It sits in a non-executed
`application/json` script block with `<`, `>`, `&`, U+2028 and U+2029 escaped, so no
text can close the block; the page script puts it into the DOM with `textContent`
only; a Content-Security-Policy allows no network and only the page's own inline
script and style (by hash).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import io
import json
import logging
import os
import re
from collections.abc import Callable, Coroutine, Iterable, Mapping
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from titjudge.data.images import ImageLoader
from titjudge.errors import DataError
from titjudge.files import atomic_write
from titjudge.records.calls import total_cost
from titjudge.records.item_line import ItemLine
from titjudge.records.provenance import provenance_lines
from titjudge.report.analysis.plot import length_section
from titjudge.report.analysis.run import RunData
from titjudge.report.audit.data import (
    OUTCOMES,
    AuditData,
    AuditVerdict,
    describer_error,
    ok_scores,
    position_line,
    provenance_line,
)

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

THUMB_SIDE = 128
THUMB_QUALITY = 70
_STATUS_CODE = {"ok": 0, "failed": 1, "fallback": 2}
_WINNER_CODE = {"a": 0, "b": 1, "tie": 2}
_OUTCOME_CODE = {name: code for code, name in enumerate(OUTCOMES)}
_JSON_ESCAPES = {
    "<": "\\u003c",
    ">": "\\u003e",
    "&": "\\u0026",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}
_PLACEHOLDER = re.compile(r"__(CSP|TITLE|STYLE|DATA|SCRIPT)__")


# --------------------------------------------------------------------------- thumbnails


def data_uri(image: Image.Image) -> str:
    """A small RGB image as a WebP (JPEG when Pillow lacks WebP) data URI."""
    from PIL import features

    buffer = io.BytesIO()
    if features.check("webp"):  # method 2: half the encode time of 4 for +5% bytes
        image.save(buffer, "WEBP", quality=THUMB_QUALITY, method=2)
        mime = "image/webp"
    else:
        image.save(buffer, "JPEG", quality=THUMB_QUALITY, optimize=True)
        mime = "image/jpeg"
    return f"data:{mime};base64,{base64.b64encode(buffer.getvalue()).decode('ascii')}"


def make_thumbnails(
    paths: Iterable[str], side: int = THUMB_SIDE, workers: int | None = None
) -> dict[str, str | None]:
    """Thumbnail every distinct path once, through a run's image loader: its pixel limits,
    at most `workers` images decoding at once and its budget of decoded pixels (a huge image
    decodes alone). An image that cannot be read gets None and one warning line."""
    unique = list(dict.fromkeys(p for p in paths if p))
    loader = ImageLoader(workers or min(8, os.cpu_count() or 1))

    async def one(path: str) -> str | None:
        try:
            image = await loader.thumbnail(path, side)
        except DataError as exc:
            log.warning("audit: no thumbnail: %s", exc)
            return None
        return data_uri(image)

    async def every() -> list[str | None]:
        return await asyncio.gather(*(one(path) for path in unique))

    return dict(zip(unique, _run_to_end(every), strict=True))


def _run_to_end(main: Callable[[], Coroutine[Any, Any, list[str | None]]]) -> list[str | None]:
    """asyncio.run(main()), also from code already inside an event loop (a notebook, or
    Playwright's sync API in the browser tests), where asyncio.run refuses: there the loop
    runs in a thread of its own."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="titjudge-thumbs") as pool:
        return pool.submit(lambda: asyncio.run(main())).result()


# --------------------------------------------------------------------------- payload


class _Strings:
    """Intern texts so a description or prompt repeated across variants is stored once."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, value: str | None) -> int:
        if value is None or value == "":
            return -1
        found = self._index.get(value)
        if found is None:
            found = self._index[value] = len(self.texts)
            self.texts.append(value)
        return found


def details_text(details: Mapping[str, Any]) -> str | None:
    """A judge's structured details (matches, misses, ...) as plain readable lines."""
    lines = []
    for key, value in details.items():
        if isinstance(value, list):
            lines.append(f"{key} ({len(value)}):" + "".join(f"\n  - {v}" for v in value))
        else:
            lines.append(
                f"{key}: {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
            )
    return "\n".join(lines) or None


def _judged_row(verdict: AuditVerdict, intern: _Strings) -> list[Any] | None:
    """A pairwise judge's verdict on a pair: [verdict, orders agreed, [[first shown, choice,
    rationale, error], ...]]; None for a scoring judge."""
    judged = verdict.judged
    if judged is None:
        return None
    return [
        judged.verdict,
        judged.orders_agree,
        [[o.first, o.choice, intern(o.rationale), intern(o.error)] for o in judged.orders],
    ]


def _result_row(result: ItemLine | None, intern: _Strings) -> list[Any] | None:
    if result is None:
        return None
    return [
        _STATUS_CODE[result.status],
        result.score,
        intern(result.rationale),
        intern(result.error),
        intern(result.raw),
        intern(result.description),
        intern(details_text(result.details)),
        result.cost,
        intern(describer_error(result)),
    ]


def _file_uri(image: str) -> str:
    path = Path(image)
    return path.as_uri() if image and path.is_absolute() else ""


def _short(value: float | None) -> float | None:
    return None if value is None else float(f"{value:.6g}")


def _shown_items(data: AuditData) -> list[str]:
    """The items the page shows: those in a human pair, or every item of a run without pairs."""
    if not data.pairs:
        return list(data.items)
    return list(dict.fromkeys(i for p in data.pairs for i in (p.pair.item_a, p.pair.item_b)))


def _ok_scores(data: AuditData, variant: str) -> dict[str, Any]:
    """How many of the variant's results are ok, and their mean score (None when none)."""
    scores = ok_scores(data, variant)
    return {"n_ok": len(scores), "mean": sum(scores) / len(scores) if scores else None}


def build_payload(
    data: AuditData,
    thumbs: Mapping[str, str | None],
    length: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The page's JSON: string table, thumbnails, items, pairs (see audit.js for the layout);
    `length`: the length breakdown (`report.analysis.plot.length_section`)."""
    intern = _Strings()
    thumb_list: list[str] = []
    thumb_index: dict[str, int] = {}
    used = _shown_items(data)
    models = sorted({data.items[i].t2i_model for i in used})
    prompt_ids = sorted({data.items[i].prompt_id for i in used})
    model_code = {m: n for n, m in enumerate(models)}
    prompt_code = {p: n for n, p in enumerate(prompt_ids)}
    item_code: dict[str, int] = {}
    items: list[list[Any]] = []
    for item_id in used:
        item = data.items[item_id]
        uri = thumbs.get(item.image)
        if uri is not None and item.image not in thumb_index:
            thumb_index[item.image] = len(thumb_list)
            thumb_list.append(uri)
        item_code[item_id] = len(items)
        items.append(
            [
                item_id,
                prompt_code[item.prompt_id],
                model_code[item.t2i_model],
                thumb_index.get(item.image, -1) if uri is not None else -1,
                _file_uri(item.image),
                [_result_row(item.results.get(v), intern) for v in data.variants],
            ]
        )
    pairs = [
        [
            item_code[p.pair.item_a],
            item_code[p.pair.item_b],
            _WINNER_CODE[p.pair.winner],
            [_OUTCOME_CODE[p.verdicts[v].outcome] for v in data.variants],
            [_short(p.verdicts[v].margin) for v in data.variants],
            [_judged_row(p.verdicts[v], intern) for v in data.variants],
        ]
        for p in data.pairs
    ]
    variants = [
        {
            "name": s.name,
            "accuracy": s.pairwise_accuracy,
            "ci": list(s.ci) if s.ci else None,
            "tie_rate": s.metric_tie_rate,
            "n_failed": s.n_failed,
            "n_fallback": s.n_fallback,
            "fallback": s.fallback_text(),
            "origin_note": s.origin_note(),
            "cost": s.cost,
            "counts": dict(s.counts),
            "scale": s.scale,
            "accuracy_source": s.accuracy_source,
            "provenance": provenance_line(s.name, data),
            "position": position_line(s.name, s.position) if s.position else None,
            **_ok_scores(data, s.name),
        }
        for s in (data.summaries[v] for v in data.variants)
    ]
    run = {
        "name": data.name,
        "run_dir": str(data.run_dir.resolve()),
        "n_items": len(data.items),
        # "items": no human pairs, the page lists the run's items instead of pairs
        "mode": "pairs" if data.pairs else "items",
        "n_pairs": len(data.pairs),
        "n_outside": data.n_pairs_outside,
        "n_human_ties": sum(p.pair.winner == "tie" for p in data.pairs),
        "describer_cost": total_cost(data.items[i].describer_cost for i in used),
        "n_missing_images": sum(1 for i in used if thumbs.get(data.items[i].image) is None),
        # the models whose replies came from another model than configured, or from several
        "answered_by": [
            {"line": line, "warning": warning}
            for line, warning in provenance_lines(data.answered_by)
        ],
    }
    return {
        "run": run,
        "variants": variants,
        "models": models,
        "prompts": [[p, intern(data.prompts.get(p))] for p in prompt_ids],
        "items": items,
        "pairs": pairs,
        "thumbs": thumb_list,
        "texts": intern.texts,
        "length": dict(length) if length else None,
    }


def embed_json(payload: Any) -> str:
    """JSON safe inside `<script type="application/json">`: no `<`, `>`, `&`, U+2028/2029 left.

    Those characters can only occur inside JSON strings, where `\\uXXXX` means the same.
    """
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return re.sub("[<>&\u2028\u2029]", lambda m: _JSON_ESCAPES[m.group(0)], text)


# --------------------------------------------------------------------------- page


def _asset(name: str) -> str:
    return (
        resources.files("titjudge.report.audit")
        .joinpath("assets", name)
        .read_text(encoding="utf-8")
    )


def _sha256(text: str) -> str:
    return (
        "'sha256-"
        + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
        + "'"
    )


def render_page(payload: Mapping[str, Any], title: str) -> str:
    """Fill the template; the CSP pins the inline script and style by hash."""
    import html

    style, script = _asset("audit.css"), _asset("audit.js")
    csp = (
        "default-src 'none'; img-src data:; "
        f"style-src {_sha256(style)}; script-src {_sha256(script)}; "
        "base-uri 'none'; form-action 'none'"
    )
    values = {
        "CSP": csp,
        "TITLE": html.escape(title),
        "STYLE": style,
        "DATA": embed_json(payload),
        "SCRIPT": script,
    }
    # one pass, so a placeholder-looking string inside the data is never substituted
    return _PLACEHOLDER.sub(lambda m: values[m.group(1)], _asset("audit.html"))


def write_audit_html(data: AuditData, out: Path, thumb_side: int = THUMB_SIDE) -> Path:
    """Build thumbnails and write the page to `out` (folders created)."""
    used = {data.items[i].image for i in _shown_items(data)}
    thumbs = make_thumbnails(sorted(used), thumb_side)
    length = length_section(RunData(data.record)) if data.pairs else None
    page = render_page(build_payload(data, thumbs, length), f"titjudge audit: {data.name}")
    out = Path(out)
    atomic_write(out, page)
    return out
