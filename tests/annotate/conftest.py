"""A small dataset to annotate (5 prompts x 5 models: 50 pairs), and the app on 127.0.0.1.

Prompt P1 is hostile markup, P2 is 350 words long; the images are tiny PNGs, one colour per
model. A file `secret.txt` beside the manifest is what path-traversal tests try to reach.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from annotate_data import write_dataset
from doubles.loopback import LoopbackThread


@pytest.fixture
def manifest(tmp_path: Path) -> Path:
    return write_dataset(tmp_path / "data")


@pytest.fixture
def make_session(manifest: Path, tmp_path: Path) -> Callable[..., Any]:
    """A Session on the dataset, every pair of each prompt (50), votes in tmp_path."""
    from titjudge.annotate.session import Session
    from titjudge.data.manifest import load_manifest
    from titjudge.data.pair_draw import draw_pairs

    def make(votes: Path | None = None, seed: int = 0, pairs: list[str] | None = None) -> Session:
        items = load_manifest(manifest)
        every = draw_pairs(items, None)
        if pairs is not None:
            every = [p for p in every if p.pair_id in pairs]
        return Session(items, every, votes or tmp_path / "votes.csv", seed)

    return make


class AnnotateServer(LoopbackThread):
    """The real app (`make_app`) served from a daemon thread on 127.0.0.1."""

    thread_name = "annotate-server"

    def __init__(self, session: Any, token: str | None = None):
        self.session, self.token = session, token
        self._thread = None
        self._loop = None
        self._runner: Any = None
        self._port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._port}"

    async def astart(self) -> str:
        from aiohttp import web

        from titjudge.annotate.server import make_app

        self._runner = web.AppRunner(make_app(self.session, self.token))
        await self._runner.setup()
        await web.TCPSite(self._runner, "127.0.0.1", 0).start()
        self._port = self._runner.addresses[0][1]
        return self.url

    async def aclose(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


@pytest.fixture
def serve() -> Iterator[Callable[..., AnnotateServer]]:
    """`serve(session, token=None)` starts the app; every server started is stopped after."""
    started: list[AnnotateServer] = []

    def start(session: Any, token: str | None = None) -> AnnotateServer:
        server = AnnotateServer(session, token)
        server.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
