"""The fake server's own bill: what each answer costs at a per-token rate, from the usage the
server reports for it (prompt tokens as it counts them, the answer's tokens as sent). Tests of
`run.budget_usd` check a run's spend against it, not against titjudge's own accounting."""

from __future__ import annotations

import threading
from typing import Any

from doubles.server_request import ChatRequest, Reply, as_reply
from doubles.server_wire import prompt_token_count, tokenize, truncate


class Billing:
    """Wraps a responder (sync) and bills each answer at `rate` dollars per 1M tokens."""

    def __init__(self, responder: Any, rate: float):
        self.responder = responder
        self.rate = rate
        self.bills: list[float] = []
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Reply:
        reply = as_reply(self.responder(request))
        text, _ = truncate(reply.text, request.max_tokens)
        tokens = prompt_token_count(request) + len(tokenize(text))
        with self._lock:
            self.bills.append(tokens * self.rate / 1e6)
        return reply

    @property
    def total(self) -> float:
        with self._lock:
            return sum(self.bills)
