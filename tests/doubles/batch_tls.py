"""SSL_CERT_FILE naming a CA bundle of one root certificate, for the tests that drive titjudge's
batch adapters against the loopback batch doubles.

litellm's files and batches functions (OpenAI's and Azure's batch adapters) build a new httpx
client for every request to a batch API, and with it a TLS context that loads the CA bundle:
certifi's ~150 roots cost ~40 ms of CPU each time, most of the HTTP cost of a batch run
against a double; one root, ~2 ms. (titjudge's own clients, the Gemini, Vertex and Anthropic
adapters among them, build one context per process: `models.litellm.http`.) The doubles serve plain HTTP on
loopback, so no certificate is ever checked: which roots a TLS peer would be checked against
changes nothing a test sees. httpx reads the variable whenever it builds a context (with
`trust_env`, its default), and a child process a test starts inherits it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def one_root_bundle(directory: Path) -> Iterator[Path]:
    """While the context lasts, SSL_CERT_FILE names `directory`/one-root.pem: the first
    certificate of certifi's bundle."""
    import certifi

    bundle = Path(certifi.where()).read_text(encoding="utf-8")
    pem = re.search(r"-----BEGIN CERTIFICATE-----.+?-----END CERTIFICATE-----\n", bundle, re.S)
    assert pem is not None, f"no certificate in {certifi.where()}"
    path = directory / "one-root.pem"
    path.write_text(pem.group(0), encoding="ascii")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SSL_CERT_FILE", str(path))
        yield path


__all__ = ["one_root_bundle"]
