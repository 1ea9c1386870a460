"""Secrets never leave the process in error text; model text never drives a terminal."""

import logging

from titjudge.safety import REDACTED, RedactingFilter, redact, register_secret, terminal_safe


def test_environment_keys_and_registered_keys_are_redacted(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-proj-abcdef1234567890")
    register_secret("custom-secret-value-42")
    text = (
        "Incorrect API key provided: sk-proj-abcdef1234567890. Proxy echoed custom-secret-value-42"
    )
    assert redact(text) == f"Incorrect API key provided: {REDACTED}. Proxy echoed {REDACTED}"


def test_key_material_in_urls_and_headers_is_redacted_whatever_its_value():
    url = "POST https://generativelanguage.googleapis.com/v1beta/models/x:generateContent?key=AIzaUNKNOWN&alt=sse"
    assert "AIzaUNKNOWN" not in redact(url) and "&alt=sse" in redact(url)
    header = "headers: {'Authorization': 'Bearer sk-unknown-0123456789'}"
    assert "sk-unknown-0123456789" not in redact(header)
    assert "x-goog-api-key: [REDACTED]" in redact("x-goog-api-key: AIzaSomething")


def test_short_values_and_ordinary_text_are_left_alone(monkeypatch):
    monkeypatch.setenv("SOME_TOKEN", "abc")  # too short to redact by value
    assert (
        redact("abc is fine, and so is a key of the dict")
        == "abc is fine, and so is a key of the dict"
    )


def test_log_records_are_redacted_at_the_handler(monkeypatch, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "AIzaSyD-secret-secret-secret")
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    logger = logging.getLogger("titjudge.test.redact")
    logger.addHandler(handler)
    logger.propagate = False
    try:
        logger.warning("provider said %s", "API key AIzaSyD-secret-secret-secret not valid")
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "AIzaSyD-secret" not in err and REDACTED in err


def test_terminal_control_is_shown_not_executed():
    hostile = "ok\x1b[2J\x1b]0;pwned\x07 \u202etxt.exe"
    shown = terminal_safe(hostile)
    assert "\x1b" not in shown and "\x07" not in shown and "\u202e" not in shown
    assert "\\x1b[2J" in shown and "\\u202e" in shown


def test_the_cli_redacts_each_record_once_however_often_it_runs(tmp_path, capsys):
    """A process that calls main() again (a notebook, a test session) keeps one redacting
    filter per handler: one more per call redacted every record once per call made so far."""
    from titjudge.cli import main

    handler = logging.StreamHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        for _ in range(3):
            assert main(["cache", "stats", "--cache-dir", str(tmp_path / "none")]) == 2
        assert sum(isinstance(f, RedactingFilter) for f in handler.filters) == 1
    finally:
        root.removeHandler(handler)
