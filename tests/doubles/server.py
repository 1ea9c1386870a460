"""A real OpenAI-compatible HTTP server on loopback, with latency and fault injection.

Tests and benchmarks drive it through litellm exactly as they would a provider:

    with FakeOpenAIServer(responder="judge", latency=0.2) as server:
        litellm.completion(model="openai/test-model", api_base=server.url, api_key="sk-test", ...)

or from another process, in the repository root (`server_command()` and `server_env()` build
this for a subprocess): `PYTHONPATH=tests python -m doubles.server --port 0 --latency 0.2`
prints its base URL (ending in /v1) as the first line of stdout and serves until
SIGTERM/SIGINT. Endpoints: POST /v1/chat/completions, POST /v1/embeddings,
GET /v1/models, GET /health, GET /stats.

Faults are deterministic: whether the n-th arrival of a given request body fails, and
how, is a hash of (seed, body hash, n), independent of arrival order under concurrency;
a retry (n+1) draws afresh. Replies queued with `script()` are used first, in arrival
order, and override both the responder and the fault rate.

What titjudge's litellm backend makes of each fault (`classify_litellm_error`; the tests in
tests/testing assert it): 429, rpm and tpm -> TransientError, `rate_limited`, `retry_after`
read from the Retry-After header; 500, 503, malformed (a 200 cut mid-JSON), reset, timeout
and a dead server -> TransientError; 400 and 401 -> PermanentError; context_length ->
PermanentError "context length exceeded: ...". Content faults arrive as normal replies.

Modules: `server_app` (handlers, fault decisions), `server_answer` (a chat answer, streamed
or not), `server_limits` (rpm and tpm 429s), `server_request` (ChatRequest, Reply,
Fault), `server_scripts` (responders), `server_text` (descriptions, judge score,
embeddings), `server_wire` (OpenAI JSON shapes, tokens, logprobs), `server_stats`.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aiohttp import web

from doubles.loopback import LoopbackThread
from doubles.server_app import FakeOpenAIApp
from doubles.server_request import (
    FAULT_KINDS,
    BadRequest,
    ChatRequest,
    Fault,
    ImagePart,
    Reply,
    Responder,
    TokenLogprob,
)
from doubles.server_scripts import (
    RESPONDERS,
    AutoResponder,
    DescribeResponder,
    JudgeResponder,
    ScriptedResponder,
    build_responder,
    echo_responder,
    load_descriptions,
    load_script,
)
from doubles.server_stats import ServerStats
from titjudge.errors import TitjudgeError

__all__ = [
    "AutoResponder",
    "BadRequest",
    "ChatRequest",
    "DescribeResponder",
    "FakeOpenAIApp",
    "FakeOpenAIServer",
    "Fault",
    "ImagePart",
    "JudgeResponder",
    "Reply",
    "Responder",
    "ScriptedResponder",
    "ServerStats",
    "TokenLogprob",
    "build_responder",
    "echo_responder",
    "main",
    "server_command",
    "server_env",
    "start_server_process",
    "stop_server_process",
]


class FakeOpenAIServer(LoopbackThread, FakeOpenAIApp):
    thread_name = "fake-openai"
    """The fake server, serving from a daemon thread with its own event loop (`start()` /
    `stop()` or `with`), or from the caller's loop (`await astart()` / `await aclose()`).

    Constructor arguments: see `FakeOpenAIApp`. `responder` is a callable or a built-in
    name (auto, echo, describe, judge); `faults` names the kinds drawn at `fault_rate`.
    `max_concurrent`: at most that many /v1 requests are worked on at once, the others wait
    their turn, as a vLLM server admits at most `--max-num-seqs` sequences to a batch and
    queues the rest (docs.vllm.ai, engine arguments: "Maximum number of sequences per
    iteration"), so one server's capacity is max_concurrent / latency requests a second.
    """

    def __init__(self, *args: Any, max_concurrent: int | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.max_concurrent = max_concurrent
        self._admitted: asyncio.Semaphore | None = None
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._url: str | None = None

    @property
    def url(self) -> str:
        """Base URL ending in /v1 (what litellm takes as api_base)."""
        if self._url is None:
            raise RuntimeError("fake server is not running; call start() first")
        return self._url

    def make_app(self) -> web.Application:
        app = super().make_app()
        if self.max_concurrent is not None:
            self._admitted = asyncio.Semaphore(self.max_concurrent)
            app.middlewares.append(self._one_of_max_concurrent)
        return app

    @web.middleware
    async def _one_of_max_concurrent(self, http: web.Request, handler: Any) -> web.StreamResponse:
        if self._admitted is None or not http.path.startswith("/v1/"):
            return await handler(http)  # type: ignore[no-any-return]
        async with self._admitted:
            return await handler(http)  # type: ignore[no-any-return]

    async def astart(self) -> str:
        """Serve from the running event loop; returns the base URL."""
        runner = web.AppRunner(
            self.make_app(), access_log=None, handler_cancellation=True, shutdown_timeout=0.5
        )
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port, backlog=1024)
        await site.start()
        self._runner = runner
        self.port = runner.addresses[0][1]
        self._url = f"http://{self.host}:{self.port}/v1"
        return self._url

    async def aclose(self) -> None:
        """Close the listening socket and connections, cancelling unfinished handlers."""
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None
        self._url = None


# --------------------------------------------------------------------------- command line


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m doubles.server",
        description="OpenAI-compatible fake server on 127.0.0.1; prints its base URL on the first stdout line.",
    )
    parser.add_argument("--port", type=int, default=0, help="port (0 = any free port)")
    parser.add_argument("--responder", default="auto", choices=RESPONDERS)
    parser.add_argument(
        "--descriptions", type=Path, help="JSONL of {image_sha256, description} for describe"
    )
    parser.add_argument("--script", type=Path, help="JSONL of replies for the scripted responder")
    parser.add_argument(
        "--latency", type=float, default=0.0, help="seconds added to every /v1 request"
    )
    parser.add_argument("--jitter", type=float, default=0.0, help="extra uniform [0, J) seconds")
    parser.add_argument(
        "--latency-sigma",
        type=float,
        default=0.0,
        help="> 0: --latency is the median of a seeded lognormal draw with this sigma",
    )
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument(
        "--faults", default="429,500,503", help=f"comma list from: {','.join(FAULT_KINDS)}"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--max-concurrent", type=int, help="work on at most this many /v1 requests at once"
    )
    parser.add_argument(
        "--rpm", type=int, help="requests admitted per --rpm-window seconds; 429 beyond"
    )
    parser.add_argument("--rpm-window", type=float, default=60.0)
    parser.add_argument(
        "--tpm", type=int, help="tokens admitted per --tpm-window seconds; 429 beyond"
    )
    parser.add_argument("--tpm-window", type=float, default=60.0)
    parser.add_argument(
        "--retry-after", type=float, default=1.0, help="Retry-After seconds of injected 429s"
    )
    parser.add_argument(
        "--timeout-delay", type=float, default=30.0, help="stall of the 'timeout' fault"
    )
    parser.add_argument("--embedding-dim", type=int, default=256)
    parser.add_argument(
        "--context-window", type=int, help="answer context_length_exceeded beyond this"
    )
    parser.add_argument("--api-key", help="require this bearer key (401 otherwise)")
    parser.add_argument("--prompt-marker", help="regex of the judge's PROMPT heading")
    parser.add_argument("--description-marker", help="regex of the judge's DESCRIPTION heading")
    parser.add_argument("--end-marker", help="regex that ends the judge's sections")
    return parser


def server_from_args(args: argparse.Namespace) -> FakeOpenAIServer:
    """Build the server a command line describes; bad input raises ConfigError/DataError."""
    markers = {
        key: value
        for key, value in (
            ("prompt_marker", args.prompt_marker),
            ("description_marker", args.description_marker),
            ("end_marker", args.end_marker),
        )
        if value
    }
    responder = build_responder(
        args.responder,
        descriptions=load_descriptions(args.descriptions) if args.descriptions else None,
        script=load_script(args.script) if args.script else None,
        **markers,
    )
    return FakeOpenAIServer(
        responder,
        latency=args.latency,
        jitter=args.jitter,
        latency_sigma=args.latency_sigma,
        fault_rate=args.fault_rate,
        faults=[f.strip() for f in args.faults.split(",") if f.strip()],
        seed=args.seed,
        rpm=args.rpm,
        retry_after=args.retry_after,
        port=args.port,
        timeout_delay=args.timeout_delay,
        embedding_dim=args.embedding_dim,
        context_window=args.context_window,
        api_key=args.api_key,
        rpm_window=args.rpm_window,
        max_concurrent=args.max_concurrent,
        tpm=args.tpm,
        tpm_window=args.tpm_window,
    )


async def _serve_forever(server: FakeOpenAIServer) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    url = await server.astart()
    sys.stdout.write(url + "\n")
    sys.stdout.flush()
    try:
        await stop.wait()
    finally:
        await server.aclose()


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    try:
        server = server_from_args(args)
    except TitjudgeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    asyncio.run(_serve_forever(server))
    return 0


#: the folder that holds the `doubles` package (the repository's tests/)
TESTS_DIR = Path(__file__).resolve().parent.parent


def server_command() -> list[str]:
    """`python -m doubles.server` for this interpreter (run it with `server_env()`)."""
    return [sys.executable, "-m", "doubles.server"]


def server_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: os.environ) with tests/ put first on PYTHONPATH, so that a child
    Python finds the `doubles` package, which is not part of the installed titjudge."""
    env = dict(os.environ if base is None else base)
    paths = [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(TESTS_DIR), *paths])
    return env


def start_server_process(
    args: Sequence[str], timeout: float = 30.0, stderr: Any = None
) -> tuple[subprocess.Popen[str], str]:
    """Launch `python -m doubles.server ARGS` (tests/ on PYTHONPATH) and wait for its URL line."""
    proc = subprocess.Popen(
        [*server_command(), *args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
        env=server_env(),
    )
    assert proc.stdout is not None
    line: list[str] = []
    reader = threading.Thread(
        target=lambda: line.append(proc.stdout.readline() if proc.stdout else ""), daemon=True
    )
    reader.start()
    reader.join(timeout)
    url = line[0].strip() if line else ""
    if not url.startswith("http://"):
        if reader.is_alive():
            state = f"printed no URL within {timeout:g} s"
        else:
            try:  # stdout ended or held something else: the process is probably exiting
                state = f"exited with code {proc.wait(10)}"
            except subprocess.TimeoutExpired:
                state = f"printed {url!r} instead of its URL"
        stop_server_process(proc)
        raise RuntimeError(f"fake server process {state} (args: {' '.join(args)}); see its stderr")
    return proc, url


def stop_server_process(proc: subprocess.Popen[str], timeout: float = 10.0) -> int:
    """SIGTERM, wait, SIGKILL if needed; returns the exit code."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)
    if proc.stdout is not None:
        proc.stdout.close()
    return int(proc.returncode)


if __name__ == "__main__":
    sys.exit(main())
