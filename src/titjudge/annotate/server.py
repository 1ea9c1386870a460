"""The annotation web app (aiohttp): one page, a status page, a small JSON API, the images.

Routes (every one under the token when the server has one):

    GET  /                 the annotation page        GET /status        the status page
    GET  /assets/<name>    the page's own script and style (a fixed list, from the package)
    GET  /image/<n>        the n-th image of the session's pairs (a number, never a path)
    GET  /api/next         ?annotator=NAME: progress and the next pair
    POST /api/answer       {annotator, pair, answer: left|right|tie|skip, seconds}
    POST /api/undo         {annotator}
    GET  /api/status       every annotator's counts and the agreement (annotate.status)

Safety as every titjudge web app has it (`annotate.web`: the strict CSP, the loopback-or-token
guard, JSON POSTs from this origin only). Prompts and names reach the page as JSON and are
put in as text (`textContent`), never as markup.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from importlib import resources
from typing import Any

from aiohttp import web

from titjudge.annotate.session import Refused, Session, check_name
from titjudge.annotate.status import status_json, summarise
from titjudge.annotate.web import (
    CSP,
    Handler,
    error,
    is_loopback,
    listen,
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
SESSION: web.AppKey[Session] = web.AppKey("session", Session)


def _asset(name: str) -> bytes:
    return resources.files("titjudge.annotate").joinpath("assets", name).read_bytes()


def make_app(session: Session, token: str | None = None) -> web.Application:
    """The app for `session`; with `token`, every request must carry it."""
    secret = token.encode() if token is not None else None
    pages = {path: _asset(name) for path, name in PAGES.items()}
    assets = {name: _asset(name) for name in ASSETS}

    @web.middleware
    async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refused = refusal(request, secret)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except Refused as exc:
            return error(str(exc), exc.status)
        except TitjudgeError as exc:
            return error(f"not saved: {exc}", 500)

    async def page(request: web.Request) -> web.Response:
        body = pages[request.path]
        return web.Response(body=body, content_type="text/html", charset="utf-8")

    async def asset(request: web.Request) -> web.Response:
        name = request.match_info["name"]
        if name not in assets:
            raise web.HTTPNotFound()
        kind = ASSETS[name]
        charset = None if kind.startswith("image/") else "utf-8"
        return web.Response(body=assets[name], content_type=kind, charset=charset)

    async def image(request: web.Request) -> web.Response:
        number = int(request.match_info["number"])
        if number >= len(session.images):
            raise web.HTTPNotFound()
        from titjudge.data.images import load_image

        try:
            loaded = await asyncio.to_thread(load_image, session.images[number])
        except TitjudgeError as exc:  # changed on disk since the server checked it
            return error(f"cannot show this image: {exc}", 500)
        return web.Response(
            body=loaded.data,
            content_type=loaded.mime,
            headers={"Cache-Control": "private, max-age=3600"},
        )

    async def body_of(request: web.Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise Refused("the body is not JSON") from None
        if not isinstance(body, dict):
            raise Refused("the body must be a JSON object")
        return body

    async def next_pair(request: web.Request) -> web.Response:
        return web.json_response(state(session, check_name(request.query.get("annotator"))))

    async def answer(request: web.Request) -> web.Response:
        body = await body_of(request)
        row = await session.answer(
            body.get("annotator"), body.get("pair"), body.get("answer"), body.get("seconds")
        )
        return web.json_response(state(session, row.annotator))

    async def undo(request: web.Request) -> web.Response:
        row = await session.undo((await body_of(request)).get("annotator"))
        return web.json_response(state(session, row.annotator))

    async def status(request: web.Request) -> web.Response:
        return web.json_response(status_json(summarise(session.rows)))

    app = web.Application(middlewares=[guard], client_max_size=16 * 1024)
    app[SESSION] = session
    app.on_response_prepare.append(secure_headers(frozenset(PAGES)))
    for path in PAGES:
        app.router.add_get(path, page)
    app.router.add_get("/assets/{name}", asset)
    app.router.add_get(r"/image/{number:\d{1,9}}", image)
    app.router.add_get("/api/next", next_pair)
    app.router.add_post("/api/answer", answer)
    app.router.add_post("/api/undo", undo)
    app.router.add_get("/api/status", status)
    return app


def state(session: Session, annotator: str) -> dict[str, Any]:
    """What the page shows an annotator: progress, and the next pair (None when done)."""
    shown = session.next_pair(annotator)
    pair = None
    if shown is not None:
        item = session.items[shown.pair.item_a]
        pair = {
            "id": shown.pair.pair_id,
            "prompt_id": shown.pair.prompt_id,
            "prompt": item.prompt,
            "left": f"/image/{session.image_number[shown.left_item]}",
            "right": f"/image/{session.image_number[shown.right_item]}",
        }
    return {
        "annotator": annotator,
        "done": session.done(annotator),
        "total": len(session.pairs),
        "can_undo": session.can_undo(annotator),
        "pair": pair,
    }


async def serve(
    session: Session, host: str, port: int, token: str | None, ready: Callable[[int], None]
) -> None:
    """Listen on host:port until cancelled; `ready(port)` once listening (the bound port)."""
    await listen(make_app(session, token), host, port, ready)


__all__ = ["CSP", "is_loopback", "make_app", "serve", "state"]
