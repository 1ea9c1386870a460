"""A cut reply's reason says what would have given it room: the cap, or the server's context.

A self-hosted server ends a reply where its context window ends and still says
`finish_reason: "length"`: llama-cpp-python clips `max_tokens` to `n_ctx - prompt tokens`
(llama.py, docs/research/server-dialects.md section 1), so the reply stops short of the cap
sent. The case that found it: a checklist decomposition with a 3,488-token prompt on a
4,096-token context, cap 1,216, stopped after 608 tokens (usage.total_tokens = 4096)."""

from titjudge.models.calls.results import incomplete_reason
from titjudge.models.core.base import Generation


def cut(tokens_in: int, tokens_out: int, cap: int, thinking: int | None = None) -> str:
    gen = Generation(
        text='{"elements": [',
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        finish_reason="length",
        max_tokens_sent=cap,
        thinking_tokens=thinking,
    )
    reason = incomplete_reason(gen, cap)
    assert reason is not None and reason.startswith("truncated: ")
    return reason


def test_a_reply_cut_short_of_the_cap_names_the_context_window_not_max_tokens():
    reason = cut(3488, 608, 1216)
    assert (
        "answer 608 tokens of max_tokens 1216" in reason and "608 tokens short of the cap" in reason
    )
    assert "reached 4096 tokens" in reason and "context window" in reason
    assert "raising max_tokens will not help" in reason and "--n_ctx" in reason


def test_a_reply_that_used_the_whole_cap_says_raise_max_tokens():
    reason = cut(3488, 1216, 1216)
    assert "context window" not in reason and reason.endswith("raise max_tokens")


def test_a_thinking_reply_keeps_the_thinking_advice():
    reason = cut(100, 400, 640, thinking=300)
    assert "context window" not in reason and "thinking budget" in reason
