"""Which hosts a titjudge web app answers without a token: loopback names only. No web
library here, so the commands decide whether a server needs a token (and `view --bundle`
writes its folder) without aiohttp installed."""

from __future__ import annotations

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1", "[::1]"})


def is_loopback(host: str) -> bool:
    return host.strip().lower() in LOOPBACK


def hostname(host_header: str) -> str:
    """The name in a Host header, without its port ('[::1]:80' -> '[::1]')."""
    if host_header.startswith("["):
        return host_header.split("]", 1)[0] + "]"
    return host_header.rsplit(":", 1)[0] if host_header.count(":") == 1 else host_header


__all__ = ["LOOPBACK", "hostname", "is_loopback"]
