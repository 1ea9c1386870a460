"""`titjudge view RUNS --bundle DIR`: the workbench as a folder that works from file://, to
attach to a paper or send to a colleague.

The folder holds the app's own page, script and style, `bundle.js` (every document the
server would answer, computed here by the same views: the runs, every pair's row and its
full view, the pictures of each run, the comparisons of every two runs up to
MAX_COMPARED runs) and each image once, named by its sha256. The page reads the bundle
instead of asking a server and applies the pairs view's filters itself. Written into a
staging folder and renamed into place, so a bundle is never half written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from itertools import combinations
from pathlib import Path
from typing import Any

from titjudge.errors import DataError
from titjudge.workbench.catalog import Catalog
from titjudge.workbench.server import ASSETS, asset
from titjudge.workbench.views import (
    columns_of,
    compare_view,
    every_id,
    pair_rows,
    pair_view,
    pictures_view,
    runs_view,
)

#: comparisons of every two runs are bundled up to this many runs (n(n-1)/2 of them)
MAX_COMPARED = 8
#: the page's policy from file:// (a meta tag: no server sends headers there)
BUNDLE_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "base-uri 'none'; form-action 'none'"
)


def bundle_documents(catalog: Catalog, images: Path) -> dict[str, Any]:
    """Everything the bundle's page shows; each image copied under `images` once."""
    runs = runs_view(catalog)  # marks the runs that cannot be read
    ids = every_id(catalog.runs)
    if not ids:
        raise DataError(f"{catalog.root}: no finished, readable run to bundle")
    rows = pair_rows(catalog, ids)
    copied: dict[str, str | None] = {}
    pairs = {}
    for row in rows:
        found = pair_view(catalog, row["key"], ids)
        run = catalog.get(found["runs"][0]["id"])
        for image in found["images"]:
            source = Path(run.audit.items[image["item_id"]].image)
            image["url"] = _copied(source, images, copied)
        pairs[row["key"]] = found
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
        "compare": compared,
        "pictures": {run_id: pictures_view(catalog, ids, run_id) for run_id in ids},
    }


def _copied(source: Path, images: Path, copied: dict[str, str | None]) -> str | None:
    """The image's path in the bundle (`images/<sha256><suffix>`), copied on first sight;
    None for an image file that is gone (the page says so where it would show it)."""
    if str(source) in copied:
        return copied[str(source)]
    try:
        data = source.read_bytes()
    except OSError:
        copied[str(source)] = None
        return None
    name = hashlib.sha256(data).hexdigest() + source.suffix.lower()
    (images / name).write_bytes(data)
    found = copied[str(source)] = f"images/{name}"
    return found


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
