"""The workbench web app (aiohttp): one page, its script and style, a JSON API over the runs'
records, and the runs' images.

Routes (every one under the token when the server has one):

    GET /                      the app (one page; its views are the URL's #fragment)
    GET /assets/<name>         its script, style and icon (a fixed list, from the package)
    GET /api/runs              every run: headline numbers, models, cost, status
    GET /api/compare?a=&b=     two runs: config changes, paired tests (`titjudge compare`)
    GET /api/pairs?runs=&filter=&a=&b=&min_words=&max_words=&model=&q=&kind=&page=
                               one page of the runs' pairs that pass the filters
    GET /api/pair?key=&runs=   one pair in every chosen run, side by side
    GET /api/pictures?runs=&focus=
                               heatmap, accuracy by length, leaderboard, calibration
    GET /api/items?run=&q=&model=&status=&page=
                               one page of a run's images (`workbench.items`)
    GET /api/item?run=&item=   one image in full: description, every judge's answer
    GET /image/<run>/<item>    an image of a run's manifest (by ids, never by a path)
    POST /api/queue            {runs, filter, a, b, min_words, max_words, model, q, kind,
                               limit}: the filter's pairs become the annotation queue
    GET  /api/queue            the queue now (null when none)
    /annotate/...              the annotation page on the queue (`annotate.server`'s routes:
                               the page, its status page, next / answer / undo / status)

The app reads run dirs and never writes them; with `votes` (`titjudge view --votes VOTES`)
it appends the queue's answers to that one file, as `titjudge annotate` does. Safety as
every titjudge web app has it (`annotate.web`): a strict CSP with no inline script,
loopback only without a token, the token on every request otherwise; every string reaches
the page as JSON and is put in as text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from aiohttp import web

from titjudge.annotate.server import add_annotation, body_of
from titjudge.annotate.session import Refused, Session
from titjudge.annotate.web import (
    Handler,
    asset_route,
    error,
    image_response,
    listen,
    page_response,
    read_assets,
    refusal,
    secure_headers,
)
from titjudge.errors import DataError, TitjudgeError
from titjudge.workbench.catalog import Catalog
from titjudge.workbench.items import ItemFilter, item_view, items_view
from titjudge.workbench.pages import ASSETS, asset
from titjudge.workbench.queue import Queue, build_queue
from titjudge.workbench.views import (
    PairFilter,
    compare_view,
    pair_view,
    pairs_view,
    pictures_view,
    runs_view,
    split_ids,
)

PAGES = frozenset({"/", "/annotate/", "/annotate/status"})
#: what POST /api/queue reads besides `limit` (the pairs view's query, as text)
QUEUE_FIELDS = (
    "runs",
    "filter",
    "a",
    "b",
    "min_words",
    "max_words",
    "model",
    "q",
    "kind",
    "sort",
)
CATALOG: web.AppKey[Catalog] = web.AppKey("catalog", Catalog)


def _number(query: Any, name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise DataError(f"{name} must be a whole number, got {value!r}")
    try:
        return int(value)
    except ValueError:
        raise DataError(f"{name} must be a whole number, got {value!r}") from None


def pair_filter(query: Any) -> PairFilter:
    """The pairs view's filters from a query string (the page's form)."""
    return PairFilter(
        which=query.get("filter") or "all",
        run_a=query.get("a") or None,
        run_b=query.get("b") or None,
        min_words=_number(query, "min_words"),
        max_words=_number(query, "max_words"),
        t2i_model=query.get("model") or None,
        query=query.get("q") or None,
        sort=query.get("sort") or None,
    )


def make_app(
    catalog: Catalog, token: str | None = None, votes: Path | None = None
) -> web.Application:
    """The app over `catalog`; with `token`, every request must carry it; with `votes`, the
    annotation queue appends its answers there."""
    secret = token.encode() if token is not None else None
    assets = read_assets("titjudge.workbench", {k: v for k, v in ASSETS.items() if k != "icon.svg"})
    assets.update(read_assets("titjudge.annotate", {"icon.svg": ASSETS["icon.svg"]}))
    page_body = asset("index.html")
    # the views read files and build indexes: one at a time, off the event loop
    lock = asyncio.Lock()

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = refusal(request, secret)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except Refused as exc:
            return error(str(exc), exc.status)
        except DataError as exc:
            return error(str(exc), 404 if str(exc).startswith("no run") else 400)
        except TitjudgeError as exc:
            return error(str(exc), 500)

    async def computed(view: Callable[[], Any]) -> web.Response:
        async with lock:
            found = await asyncio.to_thread(view)
        return web.json_response(found)

    async def page(_request: web.Request) -> web.Response:
        return page_response(page_body)

    async def image(request: web.Request) -> web.Response:
        run_id, item_id = request.match_info["run"], request.match_info["item"]

        def load() -> Any:
            from titjudge.data.images import load_image

            found = catalog.readable(run_id).audit.items.get(item_id)
            if found is None:
                raise DataError(f"no image {item_id!r} in run {run_id}")
            return load_image(found.image)

        async with lock:
            loaded = await asyncio.to_thread(load)
        return image_response(loaded)

    app = web.Application(middlewares=[guard], client_max_size=16 * 1024)
    app[CATALOG] = catalog
    app.on_response_prepare.append(secure_headers(PAGES))
    app.router.add_get("/", page)
    app.router.add_get("/assets/{name}", asset_route(assets))
    add_views(app, catalog, computed)
    app.router.add_get(r"/image/{run:r\d{1,6}}/{item}", image)
    add_queue(app, catalog, lock, votes)
    return app


Computed = Callable[[Callable[[], Any]], Awaitable[web.Response]]


def add_views(app: web.Application, catalog: Catalog, computed: Computed) -> None:
    """The JSON API of every page: each view computed off the event loop, one at a time."""

    async def runs(_request: web.Request) -> web.Response:
        return await computed(lambda: runs_view(catalog))

    async def compare(request: web.Request) -> web.Response:
        q = request.query
        return await computed(lambda: compare_view(catalog, q.get("a", ""), q.get("b", "")))

    async def pairs(request: web.Request) -> web.Response:
        q = request.query
        chosen, found = split_ids(q.get("runs")), pair_filter(q)
        number = _number(q, "page") or 1
        kind = q.get("kind") or None
        return await computed(lambda: pairs_view(catalog, chosen, found, number, kind))

    async def pair(request: web.Request) -> web.Response:
        q = request.query
        return await computed(
            lambda: pair_view(catalog, q.get("key", ""), split_ids(q.get("runs")))
        )

    async def pictures(request: web.Request) -> web.Response:
        q = request.query
        return await computed(
            lambda: pictures_view(catalog, split_ids(q.get("runs")), q.get("focus") or None)
        )

    async def items(request: web.Request) -> web.Response:
        q = request.query
        found = ItemFilter(q.get("q") or None, q.get("model") or None, q.get("status") or "all")
        number = _number(q, "page") or 1
        return await computed(lambda: items_view(catalog, q.get("run", ""), found, number))

    async def item(request: web.Request) -> web.Response:
        q = request.query
        return await computed(lambda: item_view(catalog, q.get("run", ""), q.get("item", "")))

    app.router.add_get("/api/runs", runs)
    app.router.add_get("/api/compare", compare)
    app.router.add_get("/api/pairs", pairs)
    app.router.add_get("/api/pair", pair)
    app.router.add_get("/api/pictures", pictures)
    app.router.add_get("/api/items", items)
    app.router.add_get("/api/item", item)


def add_queue(
    app: web.Application, catalog: Catalog, lock: asyncio.Lock, votes: Path | None
) -> None:
    """/api/queue (the filter's pairs to people) and the annotation page on the queue under
    /annotate/; without `votes` both say how to start the app with a votes file."""
    queue: list[Queue] = []

    def no_votes() -> Refused:
        return Refused(
            "annotating needs a votes file: start the workbench with "
            "`titjudge view RUNS --votes VOTES.csv`",
            409,
        )

    def current() -> Session:
        if votes is None:
            raise no_votes()
        if not queue:
            raise Refused("no annotation queue yet: send a filter's pairs from the pairs view", 409)
        return queue[0].session

    async def queue_now(_request: web.Request) -> web.Response:
        return web.json_response(
            {"votes": str(votes) if votes else None, "queue": queue[0].summary() if queue else None}
        )

    async def make_queue(request: web.Request) -> web.Response:
        body = await body_of(request)
        if votes is None:
            raise no_votes()
        fields = {name: _text(body, name) for name in QUEUE_FIELDS}
        chosen, found = split_ids(fields["runs"]), pair_filter(fields)
        limit, kind = _number(body, "limit"), fields["kind"] or None
        async with lock:
            built = await asyncio.to_thread(
                lambda: build_queue(catalog, chosen, found, votes, kind, limit)
            )
        queue[:] = [built]
        return web.json_response({"votes": str(votes), "queue": built.summary()})

    app.router.add_get("/api/queue", queue_now)
    app.router.add_post("/api/queue", make_queue)
    add_annotation(app, current, "/annotate")


def _text(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if value is None:
        return ""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise DataError(f"{name} must be text")
    return value


async def serve(
    catalog: Catalog,
    where: tuple[str, int],
    token: str | None,
    votes: Path | None,
    ready: Callable[[int], None],
) -> None:
    """Listen on `where` (host, port) until cancelled; `ready(port)` once listening."""
    await listen(make_app(catalog, token, votes), where[0], where[1], ready)


__all__ = ["ASSETS", "make_app", "pair_filter", "serve"]
