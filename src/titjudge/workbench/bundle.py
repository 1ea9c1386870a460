"""`titjudge view RUNS --bundle DIR`: the workbench as a folder that works from file://, to
attach to a paper or send to a colleague.

The folder holds the app's own page, script and style, `bundle.js` (every document the
server would answer, computed here by the same views: the runs, every pair's row and its
full view, every run's items and each item's full view, the pictures of each run, the
comparisons of every two runs up to MAX_COMPARED runs) and each image once, named by the
sha256 of its bundled bytes: at most BUNDLE_SIDE pixels on its longer side, as JPEG, read
under the run's own image limits and decoding budget (`data.images.ImageLoader`; an image
that cannot be read is left out, one warning, and the page says so where it would show it),
so a bundle of thousands of images stays a folder to send. The page reads the bundle
instead of asking a server and applies the views' filters itself. Written into a staging
folder and renamed into place, so a bundle is never half written. `titjudge audit RUN
--html DIR` writes the bundle of one run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import io
import json
import logging
import os
import shutil
from collections.abc import Iterable
from itertools import combinations
from pathlib import Path
from typing import Any

from titjudge.errors import DataError
from titjudge.workbench.catalog import Catalog
from titjudge.workbench.items import item_rows, item_view
from titjudge.workbench.pages import ASSETS, asset
from titjudge.workbench.views import (
    columns_of,
    compare_view,
    every_id,
    pair_rows,
    pair_view,
    pictures_view,
    runs_view,
)

log = logging.getLogger(__name__)

#: comparisons of every two runs are bundled up to this many runs (n(n-1)/2 of them)
MAX_COMPARED = 8
#: a bundled image's longer side at most, in pixels, and its JPEG quality
BUNDLE_SIDE = 1024
BUNDLE_QUALITY = 85
#: the page's policy from file:// (a meta tag: no server sends headers there)
BUNDLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)


def bundle_documents(catalog: Catalog, images: Path) -> dict[str, Any]:
    """Everything the bundle's page shows; each image written under `images` once."""
    runs = runs_view(catalog)  # marks the runs that cannot be read
    ids = every_id(catalog.runs)
    if not ids:
        raise DataError(f"{catalog.root}: no finished, readable run to bundle")
    rows = pair_rows(catalog, ids)
    pairs = {row["key"]: pair_view(catalog, row["key"], ids) for row in rows}
    items = {run_id: item_rows(catalog.readable(run_id)) for run_id in ids}
    item_docs = {
        run_id: {row["item_id"]: item_view(catalog, run_id, row["item_id"]) for row in found}
        for run_id, found in items.items()
    }
    paths = {}  # each image's file, by the URL the server would give it
    for run_id in ids:
        for item_id, item in catalog.readable(run_id).audit.items.items():
            paths[f"/image/{run_id}/{item_id}"] = item.image
    bundled = bundle_images(paths.values(), images)
    for found in pairs.values():
        for image in found["images"]:
            image["url"] = bundled.get(paths.get(image["url"], ""))
    for docs in item_docs.values():
        for doc in docs.values():
            doc["url"] = bundled.get(paths.get(doc["url"], ""))
    compared = {}
    if len(ids) <= MAX_COMPARED:
        for a, b in combinations(ids, 2):
            try:
                compared[f"{a}|{b}"] = compare_view(catalog, a, b)
            except DataError:  # runs that share no pair: the page says it has none
                continue
    return {
        "runs": runs,
        "columns": [c.as_json() for c in columns_of(catalog, ids, None)],
        "rows": rows,
        "pairs": pairs,
        "items": items,
        "item_pages": item_docs,
        "compare": compared,
        "pictures": _pictures(catalog, ids),
    }


def _pictures(catalog: Catalog, ids: list[str]) -> dict[str, Any]:
    """The pictures page focused on each run that has human pairs (a run without them has
    no accuracy to picture)."""
    found = {}
    for run_id in ids:
        if not catalog.readable(run_id).audit.pairs:
            continue
        found[run_id] = pictures_view(catalog, [i for i in ids if _paired(catalog, i)], run_id)
    return found


def _paired(catalog: Catalog, run_id: str) -> bool:
    return bool(catalog.readable(run_id).audit.pairs)


def _jpeg(image: Any) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=BUNDLE_QUALITY, optimize=True)
    return buffer.getvalue()


def bundle_images(paths: Iterable[str], images: Path) -> dict[str, str | None]:
    """Each distinct image file written once under `images` (at most BUNDLE_SIDE pixels a
    side, JPEG, named by its sha256), by path: its path in the bundle, or None for an image
    that cannot be read (one warning line each)."""
    from titjudge.data.images import ImageLoader

    unique = list(dict.fromkeys(p for p in paths if p))
    loader = ImageLoader(min(4, os.cpu_count() or 1))

    async def one(path: str) -> str | None:
        try:
            image = await loader.thumbnail(path, BUNDLE_SIDE)
        except DataError as exc:
            log.warning("bundle: image left out: %s", exc)
            return None
        data = await asyncio.to_thread(_jpeg, image)
        name = f"{hashlib.sha256(data).hexdigest()}.jpg"
        await asyncio.to_thread((images / name).write_bytes, data)
        return f"images/{name}"

    async def every() -> list[str | None]:
        return await asyncio.gather(*(one(path) for path in unique))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        done = asyncio.run(every())
    else:  # called from inside an event loop (a notebook): the images' loop in a thread
        with concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="titjudge-bundle") as pool:
            done = pool.submit(lambda: asyncio.run(every())).result()
    return dict(zip(unique, done, strict=True))


def write_bundle(catalog: Catalog, out: Path) -> Path:
    """The bundle of every run in `catalog` at `out` (a folder that must not exist yet, or
    be empty); `out/index.html` opens it."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise DataError(f"{out}: exists and is not an empty folder; name a new one")
    staging = out.with_name(f".{out.name}.partial")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        (staging / "images").mkdir(parents=True)
        (staging / "assets").mkdir()
        documents = bundle_documents(catalog, staging / "images")
        for name in ASSETS:
            (staging / "assets" / name).write_bytes(asset(name))
        payload = json.dumps(documents, ensure_ascii=True, separators=(",", ":"))
        (staging / "bundle.js").write_text(f"window.TITJUDGE_BUNDLE = {payload};\n")
        page = asset("index.html").decode()
        page = page.replace(
            "<!-- bundle -->",
            f'<meta http-equiv="Content-Security-Policy" content="{BUNDLE_CSP}">\n'
            '<script src="bundle.js"></script>',
        )
        (staging / "index.html").write_text(page, encoding="utf-8")
        if out.exists():
            out.rmdir()
        staging.rename(out)
    except OSError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise DataError(f"{out}: cannot write the bundle ({exc.strerror or exc})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "index.html"


__all__ = ["MAX_COMPARED", "bundle_documents", "write_bundle"]
