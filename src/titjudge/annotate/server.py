"""The annotation web app (aiohttp): one page, a status page, a small JSON API, the images.

Routes (every one under the token when the server has one):

    GET  /                 the annotation page        GET /status        the status page
    GET  /assets/<name>    the page's own script and style (a fixed list, from the package)
    GET  /image/<n>        the n-th image of the session's pairs (a number, never a path)
    GET  /api/next         ?annotator=NAME: progress and the next pair
    POST /api/answer       {annotator, pair, answer: left|right|tie|skip, seconds}
    POST /api/undo         {annotator}
    GET  /api/status       every annotator's counts and the agreement (annotate.status)

The same routes serve the workbench's annotation view (`titjudge view --votes`) under
`/annotate/` (`add_annotation`, with its queue as the session); the page's every URL is
relative, so it works under either.

Safety as every titjudge web app has it (`annotate.web`: the strict CSP, the loopback-or-token
guard, JSON POSTs from this origin only). Prompts and names reach the page as JSON and are
put in as text (`textContent`), never as markup.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from aiohttp import web

from titjudge.annotate.session import Refused, Session, check_name
from titjudge.annotate.status import status_json, summarise
from titjudge.annotate.web import (
    CSP,
    Handler,
    asset_route,
    error,
    image_response,
    is_loopback,
    listen,
    page_response,
    read_assets,
    refusal,
    secure_headers,
)
from titjudge.errors import TitjudgeError

ASSETS = {
    "app.js": "application/javascript",
    "app.css": "text/css",
    "status.js": "application/javascript",
    "icon.svg": "image/svg+xml",
}
PAGES = {"/": "index.html", "/status": "status.html"}


def refusable(handler: Handler) -> Handler:
    """`handler` with what the session refuses (and a vote that could not be saved) as a
    JSON error with its status."""

    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            return await handler(request)
        except Refused as exc:
            return error(str(exc), exc.status)
        except TitjudgeError as exc:
            return error(f"not saved: {exc}", 500)

    return handle


async def body_of(request: web.Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise Refused("the body is not JSON") from None
    if not isinstance(body, dict):
        raise Refused("the body must be a JSON object")
    return body


def add_annotation(app: web.Application, current: Callable[[], Session], prefix: str = "") -> None:
    """The annotation page, status page, assets, images and API under `prefix` ("" or
    "/annotate"), on the session `current()` returns (it raises Refused when there is none)."""
    assets = read_assets("titjudge.annotate", ASSETS)
    html = read_assets("titjudge.annotate", {name: "text/html" for name in PAGES.values()})
    pages = {prefix + path: html[name][0] for path, name in PAGES.items()}

    async def page(request: web.Request) -> web.Response:
        return page_response(pages[request.path])

    async def image(request: web.Request) -> web.Response:
        session = current()
        number = int(request.match_info["number"])
        if number >= len(session.images):
            raise web.HTTPNotFound()
        from titjudge.data.images import load_image

        try:
            loaded = await asyncio.to_thread(load_image, session.images[number])
        except TitjudgeError as exc:  # changed on disk since the server checked it
            return error(f"cannot show this image: {exc}", 500)
        return image_response(loaded)

    async def next_pair(request: web.Request) -> web.Response:
        session = current()
        return web.json_response(state(session, check_name(request.query.get("annotator"))))

    async def answer(request: web.Request) -> web.Response:
        body = await body_of(request)
        session = current()
        row = await session.answer(
            body.get("annotator"), body.get("pair"), body.get("answer"), body.get("seconds")
        )
        return web.json_response(state(session, row.annotator))

    async def undo(request: web.Request) -> web.Response:
        session = current()
        row = await session.undo((await body_of(request)).get("annotator"))
        return web.json_response(state(session, row.annotator))

    async def status(request: web.Request) -> web.Response:
        return web.json_response(status_json(summarise(current().rows)))

    for path in pages:
        app.router.add_get(path, page)
    app.router.add_get(prefix + "/assets/{name}", asset_route(assets))
    app.router.add_get(prefix + r"/image/{number:\d{1,9}}", refusable(image))
    app.router.add_get(prefix + "/api/next", refusable(next_pair))
    app.router.add_post(prefix + "/api/answer", refusable(answer))
    app.router.add_post(prefix + "/api/undo", refusable(undo))
    app.router.add_get(prefix + "/api/status", refusable(status))


def make_app(session: Session, token: str | None = None) -> web.Application:
    """The app for `session`; with `token`, every request must carry it."""
    secret = token.encode() if token is not None else None

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = refusal(request, secret)
        return refused if refused is not None else await handler(request)

    app = web.Application(middlewares=[guard], client_max_size=16 * 1024)
    app.on_response_prepare.append(secure_headers(frozenset(PAGES)))
    add_annotation(app, lambda: session)
    return app


def state(session: Session, annotator: str) -> dict[str, Any]:
    """What the page shows an annotator: progress, and the next pair (None when done), and
    the agreement so far (`annotate.status`), so the page shows it change with each vote."""
    shown = session.next_pair(annotator)
    pair = None
    if shown is not None:
        item = session.items[shown.pair.item_a]
        pair = {
            "id": shown.pair.pair_id,
            "prompt_id": shown.pair.prompt_id,
            "prompt": item.prompt,
            # relative: the page is at / (annotate) or /annotate/ (the workbench)
            "left": f"image/{session.image_number[shown.left_item]}",
            "right": f"image/{session.image_number[shown.right_item]}",
        }
    agreement = summarise(session.rows)
    return {
        "annotator": annotator,
        "done": session.done(annotator),
        "total": len(session.pairs),
        "can_undo": session.can_undo(annotator),
        "pair": pair,
        "agreement": {
            "shared_pairs": agreement.shared_pairs,
            "fleiss_kappa": agreement.kappa,
            "observed": agreement.observed,
            "chance": agreement.chance,
        },
    }


async def serve(
    session: Session, host: str, port: int, token: str | None, ready: Callable[[int], None]
) -> None:
    """Listen on host:port until cancelled; `ready(port)` once listening (the bound port)."""
    await listen(make_app(session, token), host, port, ready)


__all__ = ["CSP", "add_annotation", "is_loopback", "make_app", "serve", "state"]
