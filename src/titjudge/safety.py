"""Two rules for text that leaves the process: no secret in it, no terminal control in it.

Secrets: a provider's error message may repeat the API key it was given (a 401 that
quotes the key, a proxy that echoes the request, a URL with `?key=`). Every error is passed
through `redact` before it is recorded, logged or printed, so a key reaches no run file,
cache, audit page, log or terminal.

Terminals: model text is untrusted. `terminal_safe` shows control characters (escape
sequences, bidi overrides) as `\\x1b`-style escapes, so a rationale can neither style the
output nor drive the terminal.
"""

from __future__ import annotations

import logging
import os
import re

REDACTED = "[REDACTED]"
#: environment variables whose values are treated as secrets
_SECRET_NAME = re.compile(r"(API_?KEY|_KEY|_TOKEN|SECRET|PASSWORD|CREDENTIALS?)$", re.IGNORECASE)
#: secrets shorter than this are not redacted by value (they would match ordinary words)
MIN_SECRET_LENGTH = 8
#: key material in URLs and headers, whatever its value (e.g. Gemini's `?key=...`)
_KEY_PATTERNS = (
    re.compile(r"(?i)([?&](?:key|api_key|apikey|access_token)=)[^&\s\"'#]+"),
    re.compile(
        r"(?i)(\b(?:authorization|x-goog-api-key|api-key|x-api-key)[\"']?\s*[:=]\s*[\"']?)(?:bearer\s+)?[^\s\"',}]+"
    ),
    re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._\-]{8,}"),
)
_registered: set[str] = set()

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def register_secret(value: str | None) -> None:
    """Redact `value` wherever it appears from now on (keys read via `api_key_env`)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        _registered.add(value)


def _secrets() -> list[str]:
    found = set(_registered)
    for name, value in os.environ.items():
        if value and len(value) >= MIN_SECRET_LENGTH and _SECRET_NAME.search(name):
            found.add(value)
    return sorted(found, key=len, reverse=True)  # longest first: a key containing another


def redact(text: str) -> str:
    """`text` with every known secret value, and key material in URLs/headers, replaced."""
    if not text:
        return text
    for secret in _secrets():
        if secret in text:
            text = text.replace(secret, REDACTED)
    for pattern in _KEY_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


class RedactingFilter(logging.Filter):
    """Redacts every record's formatted message (third-party loggers included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message or record.args:
            record.msg, record.args = cleaned, None
        if record.exc_info and record.exc_info[1] is not None:
            record.exc_text = redact(logging.Formatter().formatException(record.exc_info))
            record.exc_info = None
        return True


def terminal_safe(value: object) -> str:
    """Untrusted text for a terminal: control characters shown as escapes, never executed."""
    return _UNSAFE.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(value))


__all__ = ["REDACTED", "RedactingFilter", "redact", "register_secret", "terminal_safe"]
