"""What every titjudge web app shares (the annotation app and the workbench): the headers
that confine a page to its own server, the loopback-or-token guard, and listening.

Safety: every response carries a strict Content-Security-Policy (scripts, styles, images
and requests from this server only; no inline script, no framing), `nosniff` and
`no-referrer` (the token in the URL never leaves in a Referer). Without a token (the
loopback default) a request must name a loopback host (a page elsewhere that rebinds its
DNS name to 127.0.0.1 is refused); with one, every request but the app's own script and
style must carry it (`?token=` or the `X-Titjudge-Token` header; the page adds it). POSTs
must be JSON (a cross-site form cannot send that without asking first) from this origin.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable, Mapping
from importlib import resources
from typing import Any

from aiohttp import web

from titjudge.annotate.hosts import LOOPBACK, hostname, is_loopback

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cross-Origin-Resource-Policy": "same-origin",
}
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
#: paths of the apps' own scripts and styles (no secret, fetched without the token: a
#: <script src> cannot carry a header); the workbench serves the annotation page's under
#: /annotate/
ASSET_PREFIXES = ("/assets/", "/annotate/assets/")
#: what a response may be cached as (the browser keeps an image an hour)
IMAGE_CACHE = "private, max-age=3600"


def error(message: str, status: int) -> web.Response:
    return web.json_response({"error": message}, status=status)


def refusal(request: web.Request, secret: bytes | None) -> web.Response | None:
    """Why the guard refuses `request` (a response to send), or None to let it through."""
    if secret is None:
        if not is_loopback(hostname(request.host)):
            return error("this server answers loopback addresses only", 403)
    elif not request.path.startswith(ASSET_PREFIXES):  # the app's own code is no secret
        given = request.query.get("token") or request.headers.get("X-Titjudge-Token") or ""
        if not hmac.compare_digest(given.encode(), secret):
            return error("missing or wrong token: open the URL the server printed", 403)
    if request.method == "POST":
        if request.content_type != "application/json":
            return error("send JSON", 415)
        origin = request.headers.get("Origin")
        if origin is not None and origin != f"{request.scheme}://{request.host}":
            return error("cross-origin request refused", 403)
    return None


def secure_headers(
    pages: frozenset[str],
) -> Callable[[web.Request, web.StreamResponse], Awaitable[None]]:
    """The response hook adding HEADERS; every API (`/api/`, `/annotate/api/`) and `pages`
    are never cached."""

    async def headers(request: web.Request, response: web.StreamResponse) -> None:
        response.headers.update(HEADERS)
        path = request.path
        if path.startswith(("/api/", "/annotate/api/")) or path in pages:
            response.headers["Cache-Control"] = "no-store"

    return headers


def read_assets(package: str, kinds: Mapping[str, str]) -> dict[str, tuple[bytes, str]]:
    """Each named file of `package`'s assets folder with its content type."""
    folder = resources.files(package).joinpath("assets")
    return {name: (folder.joinpath(name).read_bytes(), kind) for name, kind in kinds.items()}


def asset_route(assets: Mapping[str, tuple[bytes, str]]) -> Handler:
    """The handler of `/assets/{name}`: one of `assets` (a fixed list), else 404."""

    async def route(request: web.Request) -> web.Response:
        found = assets.get(request.match_info["name"])
        if found is None:
            raise web.HTTPNotFound()
        body, kind = found
        charset = None if kind.startswith("image/") else "utf-8"
        return web.Response(body=body, content_type=kind, charset=charset)

    return route


def page_response(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="text/html", charset="utf-8")


def image_response(loaded: Any) -> web.Response:
    """An image `data.images.load_image` read (its bytes and type), kept by the browser."""
    return web.Response(
        body=loaded.data, content_type=loaded.mime, headers={"Cache-Control": IMAGE_CACHE}
    )


async def listen(app: web.Application, host: str, port: int, ready: Callable[[int], None]) -> None:
    """Serve `app` on host:port until cancelled; `ready(port)` once listening (the bound
    port); a port that cannot be had is one ConfigError."""
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    try:
        await site.start()
    except OSError as exc:
        await runner.cleanup()
        from titjudge.errors import ConfigError

        raise ConfigError(f"cannot listen on {host}:{port} ({exc.strerror or exc})") from None
    bound = runner.addresses[0][1] if runner.addresses else port
    ready(bound)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


__all__ = [
    "ASSET_PREFIXES",
    "CSP",
    "HEADERS",
    "LOOPBACK",
    "asset_route",
    "error",
    "hostname",
    "image_response",
    "is_loopback",
    "listen",
    "page_response",
    "read_assets",
    "refusal",
    "secure_headers",
]
