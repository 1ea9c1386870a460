"""The failure summary groups a failure by why it failed, whatever says how: a retried call's
"gave up after N attempts", a judge's re-ask ("re-ask failed: ...", "re-ask truncated ...")."""

from __future__ import annotations

import pytest

from titjudge.report.failures import reason_kind


@pytest.mark.parametrize(
    ("reason", "kind"),
    [
        ("gave up after 6 attempts: no reply within 120 s", "timeout"),
        ("re-ask failed: gave up after 6 attempts: no reply within 120 s", "timeout"),
        (
            "re-ask failed: truncated at max_tokens (finish_reason=length)",
            "truncated at the token limit",
        ),
        ("re-ask truncated at max_tokens (finish_reason=length)", "truncated at the token limit"),
        ("re-ask blocked: the model refused", "blocked by the provider"),
        (
            "connection refused (http://127.0.0.1:9/v1): APIConnectionError: x",
            "connection refused (http://127.0.0.1:9/v1)",
        ),
    ],
)
def test_how_a_call_failed_does_not_hide_why(reason: str, kind: str) -> None:
    assert reason_kind(reason) == kind
