"""The app over real HTTP on 127.0.0.1: what it serves, what it refuses, its headers."""

from __future__ import annotations

import http.client
import json
from collections.abc import Callable
from typing import Any

from annotate_data import SECRET

from titjudge.annotate.server import CSP


def request(
    server: Any,
    method: str,
    path: str,
    body: Any = None,
    headers: dict[str, str] | None = None,
) -> tuple[int, dict[str, str], bytes]:
    """One raw request (the path is sent as given, no normalising): status, headers, body."""
    connection = http.client.HTTPConnection("127.0.0.1", int(server.url.rsplit(":", 1)[1]))
    sent = dict(headers or {})
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    connection.request(method, path, body=data, headers=sent)
    response = connection.getresponse()
    result = response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    connection.close()
    return result


def test_paths_from_the_request_never_reach_the_file_system(
    make_session: Callable[..., Any], serve: Callable[..., Any]
) -> None:
    server = serve(make_session())
    status, headers, body = request(server, "GET", "/image/0")
    assert status == 200 and headers["content-type"] == "image/png" and body[:4] == b"\x89PNG"
    for path in (
        "/image/25",  # 25 images: 0-24
        "/image/-1",
        "/image/../secret.txt",
        "/image/..%2fsecret.txt",
        "/image/0/../../secret.txt",
        "/image/%2e%2e/%2e%2e/secret.txt",
        "/assets/../../data/secret.txt",
        "/assets/..%2f..%2fsession.py",
        "/assets/session.py",
        "/assets/%2e%2e%2fserver.py",
        "/../secret.txt",
        "/secret.txt",
        "/images/P1_m1.png",
        "/manifest.jsonl",
        "/image/99999999999999999999",
    ):
        status, headers, body = request(server, "GET", path)
        assert status == 404, path
        assert SECRET.encode() not in body and b"import" not in body, path
        assert headers["content-security-policy"] == CSP, path


def test_pages_and_assets_carry_the_strict_headers(
    make_session: Callable[..., Any], serve: Callable[..., Any]
) -> None:
    server = serve(make_session())
    for path, kind in (
        ("/", "text/html"),
        ("/status", "text/html"),
        ("/assets/app.js", "application/javascript"),
        ("/assets/app.css", "text/css"),
        ("/api/next?annotator=ann", "application/json"),
        ("/api/status", "application/json"),
    ):
        status, headers, body = request(server, "GET", path)
        assert status == 200, path
        assert headers["content-type"].startswith(kind)
        assert headers["content-security-policy"] == CSP
        assert "script-src 'self';" in CSP and "unsafe-inline" not in CSP
        assert headers["x-content-type-options"] == "nosniff"
        assert headers["referrer-policy"] == "no-referrer"
        assert b"http://" not in body and b"https://" not in body, path  # no CDN, nothing remote


def test_votes_are_validated(make_session: Callable[..., Any], serve: Callable[..., Any]) -> None:
    session = make_session()
    server = serve(session)
    status, _, body = request(server, "GET", "/api/next?annotator=ann")
    state = json.loads(body)
    pair = state["pair"]["id"]
    assert (state["done"], state["total"], state["can_undo"]) == (0, 50, False)
    refused = [
        ({"annotator": "ann", "pair": "P1_m1|P9_m9", "answer": "left"}, 400, "unknown pair"),
        ({"annotator": "ann", "pair": pair, "answer": "a"}, 400, "answer must be"),
        ({"annotator": "a\nb", "pair": pair, "answer": "left"}, 400, "annotator name"),
        ({"annotator": "ann", "pair": pair, "answer": "left", "seconds": 1e9}, 400, "seconds"),
        (["ann", pair, "left"], 400, "JSON object"),
        (b"{not json", 400, "not JSON"),
    ]
    for body_sent, code, message in refused:
        status, _, body = request(server, "POST", "/api/answer", body_sent)
        assert status == code and message in json.loads(body)["error"], body_sent
    assert session.rows == []
    status, _, body = request(server, "POST", "/api/answer", b"x" * 20_000)
    assert status == 413
    ok = {"annotator": "ann", "pair": pair, "answer": "tie", "seconds": 3.25}
    status, _, body = request(server, "POST", "/api/answer", ok)
    assert status == 200 and json.loads(body)["done"] == 1
    status, _, body = request(server, "POST", "/api/answer", ok)
    assert status == 409
    assert [(r.annotator, r.choice, r.seconds) for r in session.rows] == [("ann", "tie", 3.25)]
    status, _, body = request(server, "POST", "/api/undo", {"annotator": "ann"})
    assert status == 200 and json.loads(body)["pair"]["id"] == pair and session.rows == []


def test_forged_hosts_origins_and_forms_are_refused(
    make_session: Callable[..., Any], serve: Callable[..., Any]
) -> None:
    session = make_session()
    server = serve(session)
    # a DNS-rebinding page reaches 127.0.0.1 under its own name
    status, _, _ = request(server, "GET", "/api/status", headers={"Host": "evil.example:80"})
    assert status == 403
    status, _, _ = request(server, "GET", "/api/status", headers={"Host": "localhost:1"})
    assert status == 200
    pair = session.next_pair("ann").pair.pair_id
    vote = {"annotator": "ann", "pair": pair, "answer": "left"}
    form = b"annotator=ann&pair=" + pair.encode() + b"&answer=left"
    status, _, _ = request(
        server,
        "POST",
        "/api/answer",
        form,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert status == 415
    status, _, _ = request(
        server, "POST", "/api/answer", vote, headers={"Origin": "http://evil.example"}
    )
    assert status == 403
    assert session.rows == []
    origin = server.url
    status, _, _ = request(server, "POST", "/api/answer", vote, headers={"Origin": origin})
    assert status == 200 and len(session.rows) == 1


def test_a_token_guards_everything_but_the_static_assets(
    make_session: Callable[..., Any], serve: Callable[..., Any]
) -> None:
    server = serve(make_session(), token="s3cret-token")
    for path in ("/", "/status", "/image/0", "/api/next?annotator=ann", "/api/status"):
        status, _, body = request(server, "GET", path)
        assert status == 403 and b"token" in body, path
        status, _, _ = request(server, "GET", path + ("&" if "?" in path else "?") + "token=nope")
        assert status == 403, path
        good = path + ("&" if "?" in path else "?") + "token=s3cret-token"
        status, _, _ = request(server, "GET", good, headers={"Host": "annotate.lab:8765"})
        assert status == 200, path
    status, _, _ = request(
        server, "GET", "/api/status", headers={"X-Titjudge-Token": "s3cret-token"}
    )
    assert status == 200
    for asset in ("/assets/app.js", "/assets/app.css"):  # the page's own code, no secret
        assert request(server, "GET", asset)[0] == 200


def test_a_vote_that_cannot_be_written_is_an_error_and_not_counted(
    make_session: Callable[..., Any], serve: Callable[..., Any], monkeypatch: Any
) -> None:
    session = make_session()
    server = serve(session)

    def full_disk(text: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(session, "_append", full_disk)
    pair = session.next_pair("ann").pair.pair_id
    vote = {"annotator": "ann", "pair": pair, "answer": "left"}
    status, _, body = request(server, "POST", "/api/answer", vote)
    assert status == 500 and "No space left on device" in json.loads(body)["error"]
    assert session.rows == [] and session.next_pair("ann").pair.pair_id == pair
