"""The fake server's rate limits, refused with the 429s OpenAI sends.

- requests: at most `rpm` admitted requests per `rpm_window` seconds (`SlidingWindowLimiter`);
- tokens: at most `tpm` tokens per `tpm_window` seconds (`TokenWindow`). A request asks for its
  prompt tokens plus its `max_tokens` (OpenAI counts the output cap against the limit when the
  request arrives: "max tokens are also counted and a single input denied if it comes to over
  the limit", https://community.openai.com/t/token-per-minute-rate-limit-for-gpt4-issues/360359/4;
  "a large max_tokens reserves budget even if the model replies briefly",
  https://tokenswise.com/rate-limits/openai/); once answered, its entry is settled to the usage
  the reply reports (prompt + completion tokens), so an unused output cap is freed. That refund
  is this double's assumption: OpenAI does not document it, and users ask
  (https://community.openai.com/t/how-does-rate-limiting-account-for-previous-requests/700646);
  without it a told tpm client's real usage would reach less of the limit, not more.

The tpm refusal's body is OpenAI's, as users quote it (e.g. openai-python users in
FoundationAgents/MetaGPT#523, BuilderIO/micro-agent#86): type "tokens", code
"rate_limit_exceeded", message "Rate limit reached for MODEL in organization ORG on tokens per
min (TPM): Limit X, Used Y, Requested Z. Please try again in 644ms. Visit
https://platform.openai.com/account/rate-limits to learn more." The wait is also sent as
Retry-After and retry-after-ms (the headers openai-python reads), as for the rpm refusal.
"""

from __future__ import annotations

import math
import time
from collections import deque

from aiohttp import web

from doubles.server_stats import SlidingWindowLimiter
from doubles.server_wire import error_response, retry_headers

ORGANIZATION = "org-fake"


class TokenWindow:
    """At most `limit` tokens admitted in any `window` seconds (a sliding log of admissions).

    Not thread-safe: the server calls it from its event loop thread only."""

    def __init__(self, limit: int, window: float = 60.0):
        if limit < 1 or window <= 0:
            raise ValueError("tpm must be >= 1 and window > 0")
        self.limit = limit
        self.window = window
        #: [arrival, tokens] per admitted request; tokens are settled to the real usage
        self._log: deque[list[float]] = deque()

    def used(self, now: float) -> int:
        while self._log and self._log[0][0] <= now - self.window:
            self._log.popleft()
        return int(sum(tokens for _, tokens in self._log))

    def admit(self, requested: int, now: float | None = None) -> list[float] | float:
        """The admitted request's log entry (settle it with the usage), or the seconds until
        enough tokens leave the window for it."""
        now = time.monotonic() if now is None else now
        used = self.used(now)
        if used + requested <= self.limit:
            entry = [now, float(requested)]
            self._log.append(entry)
            return entry
        freed, wait = self.limit - used, self.window
        for arrived, tokens in self._log:  # oldest first: when does enough leave?
            freed += int(tokens)
            if freed >= requested:
                wait = arrived + self.window - now
                break
        return max(wait, 0.001)


def rpm_refusal(limiter: SlidingWindowLimiter | None) -> web.Response | None:
    """A 429 when the request limit is reached (Retry-After: whole seconds until a slot frees)."""
    wait = limiter.admit() if limiter is not None else None
    if wait is None or limiter is None:
        return None
    message = f"Rate limit reached: {limiter.rpm} requests per window."
    retry = retry_headers(max(1, math.ceil(wait)))
    return error_response(429, message, "requests", "rate_limit_exceeded", headers=retry)


def tpm_admit(
    window: TokenWindow, model: str, requested: int
) -> tuple[list[float] | None, web.Response | None]:
    """(the log entry to settle, None) when admitted, else (None, OpenAI's tpm 429)."""
    now = time.monotonic()
    used = window.used(now)
    admitted = window.admit(requested, now)
    if isinstance(admitted, list):
        return admitted, None
    wait = math.ceil(admitted * 1000) / 1000
    shown = f"{round(wait * 1000)}ms" if wait < 1 else f"{wait:.3f}s"
    message = (
        f"Rate limit reached for {model} in organization {ORGANIZATION} on tokens per min (TPM): "
        f"Limit {window.limit}, Used {used}, Requested {requested}. Please try again in {shown}. "
        "Visit https://platform.openai.com/account/rate-limits to learn more."
    )
    headers = retry_headers(wait)
    return None, error_response(429, message, "tokens", "rate_limit_exceeded", headers=headers)
