"""Serving an aiohttp app from a daemon thread on 127.0.0.1: the lifecycle every loopback
test server shares (the fake OpenAI server, the provider conformance stand-in)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from aiohttp import web


class LoopbackThread:
    """Mixin: `start()`/`stop()`/`with` around the subclass's `astart()`/`aclose()`.

    The subclass sets `self._thread = None` and `self._loop = None` in its constructor and
    implements `astart()` (bind, return the URL), `aclose()` and the `url` property.
    """

    _thread: threading.Thread | None
    _loop: asyncio.AbstractEventLoop | None
    thread_name = "loopback-server"

    _runner: web.AppRunner | None = None

    async def astart(self) -> str:
        raise NotImplementedError

    async def aclose(self) -> None:
        """Stop serving the app `serve` started (a subclass with more to close overrides)."""
        if self._runner is not None:
            await self._runner.cleanup()

    async def serve(self, app: web.Application, **runner: Any) -> int:
        """Serve `app` on 127.0.0.1 at a free port (kept for `aclose`); the port."""
        self._runner = web.AppRunner(app, **runner)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    @property
    def url(self) -> str:
        raise NotImplementedError

    def start(self) -> str:
        """Serve from a daemon thread with its own event loop; returns the base URL."""
        if self._thread is not None:
            raise RuntimeError(f"{self.thread_name} already started")
        ready = threading.Event()
        failure: list[BaseException] = []
        self._thread = threading.Thread(
            target=self._serve_thread, args=(ready, failure), name=self.thread_name, daemon=True
        )
        self._thread.start()
        if not ready.wait(30):
            raise RuntimeError(f"{self.thread_name} did not start within 30 s")
        if failure:
            self._thread = None
            raise failure[0]
        return self.url

    def stop(self) -> None:
        """Stop serving (idempotent); requests still in flight are cancelled."""
        thread, loop = self._thread, self._loop
        if thread is None or loop is None:
            return
        loop.call_soon_threadsafe(loop.stop)
        thread.join(timeout=30)
        self._thread = None

    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _serve_thread(self, ready: threading.Event, failure: list[BaseException]) -> None:
        loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            loop.run_until_complete(self.astart())
        except BaseException as exc:  # handed to start(), which re-raises it
            failure.append(exc)
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(self.aclose())
            pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
            for task in pending:
                task.cancel()
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            loop.close()
