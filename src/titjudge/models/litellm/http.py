"""The HTTP clients titjudge opens itself (a self-hosted endpoint's model list, the batch
APIs' uploads, jobs and results), beside the ones litellm keeps.

An `httpx.AsyncClient` made with the default `verify=True` builds a TLS context and loads
the CA bundle into it each time (measured: 15-25 ms of CPU, most of what a model-list lookup
costs on loopback). The context is what httpx builds by default (`httpx.create_ssl_context()`:
certifi's bundle, or the files `SSL_CERT_FILE` / `SSL_CERT_DIR` name), made once per process
and shared by every client, so a batch job polled for hours or a run per endpoint pays it
once.
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx


@functools.cache
def tls_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once."""
    import httpx

    return httpx.create_ssl_context()


def http_client(timeout: float) -> httpx.AsyncClient:
    """A client for one exchange (`async with http_client(t) as client:`), on the shared TLS
    context."""
    import httpx

    return httpx.AsyncClient(timeout=timeout, verify=tls_context())


__all__ = ["http_client", "tls_context"]
