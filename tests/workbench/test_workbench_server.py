"""The workbench's server and command without a browser: its safety (loopback only, the
token, the CSP, ids never paths), its refusals (one line, exit 2), that it never writes a run
dir, and its JSON against the records."""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from workbench_server import WorkbenchServer

from titjudge.cli import main


def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_every_view_answers_from_the_records_and_writes_nothing(swapped):
    before = digests(swapped)
    with WorkbenchServer(swapped) as server:
        status, headers, body = get(server.url + "/")
        assert status == 200 and "script-src 'self'" in headers["Content-Security-Policy"]
        assert "<script>" not in body.decode()  # the page's only script is its own file
        runs = json.loads(get(server.url + "/api/runs")[2])["runs"]
        assert [r["id"] for r in runs] == ["r1", "r2"]
        pairs = json.loads(get(server.url + "/api/pairs?runs=r2,r1&filter=all")[2])
        assert pairs["total"] == 24 and [c["label"] for c in pairs["columns"]] == [
            "r1:judge",
            "r2:judge",
        ]  # the columns in the runs' order, whatever order the query gave
        key = pairs["rows"][0]["key"]
        one = json.loads(get(server.url + f"/api/pair?key={key}&runs=r1,r2")[2])
        status, headers, image = get(server.url + one["images"][0]["url"])
        assert status == 200 and headers["Content-Type"].startswith("image/")
        for path in ("/api/compare?a=r1&b=r2", "/api/pictures?runs=r1,r2"):
            assert get(server.url + path)[0] == 200
    assert digests(swapped) == before


@pytest.mark.parametrize(
    ("path", "status", "says"),
    [
        ("/api/pairs?runs=r9", 404, "no run 'r9' here"),
        ("/api/pairs?runs=r1&filter=wrongest", 400, "unknown filter 'wrongest'"),
        ("/api/pairs?runs=r1&filter=changed", 400, "filter 'changed' needs two runs"),
        ("/api/pairs?runs=r1&min_words=many", 400, "min_words must be a whole number"),
        ("/api/pair?key=nope&runs=r1", 400, "no chosen run has the pair"),
        ("/image/r1/..%2F..%2Fetc%2Fpasswd", 400, "no image"),
        ("/image/../../etc/passwd", 404, None),
    ],
)
def test_a_bad_request_is_one_line_and_reaches_no_other_file(swapped, path, status, says):
    with WorkbenchServer(swapped) as server:
        found, _, body = get(server.url + path)
    assert found == status
    if says is not None:
        assert says in json.loads(body)["error"]


def test_without_a_token_only_loopback_names_and_with_one_only_the_token(swapped):
    with WorkbenchServer(swapped) as server:
        assert get(server.url + "/api/runs", {"Host": "evil.example:80"})[0] == 403
    with WorkbenchServer(swapped, token="s3cret") as server:
        assert get(server.url + "/api/runs")[0] == 403
        assert get(server.url + "/api/runs?token=wrong")[0] == 403
        assert get(server.url + "/api/runs?token=s3cret")[0] == 200
        assert get(server.url + "/api/runs", {"X-Titjudge-Token": "s3cret"})[0] == 200
        assert get(server.url + "/assets/app.js")[0] == 200  # the app's own code is no secret


def test_the_command_refuses_bad_input_in_one_line(tmp_path, capsys, swapped):
    assert main(["view", str(tmp_path / "none")]) == 2
    assert main(["view", str(tmp_path)]) == 2  # a folder holding no run
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "x").write_text("mine")
    assert main(["view", str(swapped), "--bundle", str(taken)]) == 2
    assert (taken / "x").read_text() == "mine" and not (tmp_path / ".taken.partial").exists()
    assert main(["view", str(swapped), "--port", "70000"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 4 and "Traceback" not in err
    assert "none: not found" in lines[0] and "no run under it" in lines[1]
    assert "not an empty folder" in lines[2] and "--port must be 0 to 65535" in lines[3]


def test_a_run_in_progress_is_listed_as_such(tmp_path, swapped):
    import shutil

    root = tmp_path / "runs"
    shutil.copytree(swapped, root)
    from titjudge.report.runs import stage_run
    from titjudge.workbench.catalog import Catalog
    from titjudge.workbench.views import runs_view

    staged = stage_run(history=root / "swap")  # the staging dir a run writes into
    assert staged.staging.name.startswith(".") and staged.staging.is_dir()
    runs = runs_view(Catalog.find(root))["runs"]
    assert [r["in_progress"] for r in runs] == [True, False, False]  # hidden names sort first
    assert runs[0]["live"] is None  # no live.json: nothing but "in progress" to say


def test_a_columns_most_confident_mistakes_come_first_as_the_audit_orders_them(swapped):
    from titjudge.report.audit.data import sorted_pairs
    from titjudge.report.audit.load import load_audit
    from titjudge.workbench.catalog import pair_key

    runs = sorted(p.parent for p in swapped.rglob("items.jsonl"))
    with WorkbenchServer(swapped) as server:
        for number, run in enumerate(runs, 1):
            data = load_audit(run)
            expected = [pair_key(p.pair) for p in sorted_pairs(data, data.pairs, "judge")]
            found = json.loads(get(server.url + f"/api/pairs?runs=r1,r2&sort=r{number}:judge")[2])
            assert [row["key"] for row in found["rows"]] == expected[:50]
            assert "keys" not in found["rows"][0] and "text" not in found["rows"][0]
        status, _, body = get(server.url + "/api/pairs?runs=r1&sort=r2:judge")
        assert status == 400 and "no column 'r2:judge' to sort by" in json.loads(body)["error"]


def test_the_images_view_filters_and_pages_a_runs_items(swapped):
    run = sorted(p.parent for p in swapped.rglob("items.jsonl"))[1]
    lines = [json.loads(x) for x in (run / "items.jsonl").read_text().splitlines()]
    with WorkbenchServer(swapped) as server:
        doc = json.loads(get(server.url + "/api/items?run=r2")[2])
        assert doc["total"] == len(lines) == 16 and doc["variants"] == ["judge"]
        assert [r["item_id"] for r in doc["rows"]] == [x["item_id"] for x in lines]
        assert [r["results"][0]["score"] for r in doc["rows"]] == [x["score"] for x in lines]
        model = lines[0]["t2i_model"]
        doc = json.loads(get(server.url + f"/api/items?run=r2&model={model}")[2])
        assert {r["t2i_model"] for r in doc["rows"]} == {model} and doc["total"] == 4
        from urllib.parse import quote

        word = quote(lines[5]["rationale"][:12].lower())
        doc = json.loads(get(server.url + f"/api/items?run=r2&q={word}")[2])
        assert lines[5]["item_id"] in [r["item_id"] for r in doc["rows"]]
        one = json.loads(get(server.url + f"/api/item?run=r2&item={lines[5]['item_id']}")[2])
        assert one["variants"][0]["rationale"] == lines[5]["rationale"]
        assert one["description"] == lines[5]["description"]
        for path, says in (
            ("/api/items?run=r2&status=odd", "unknown status 'odd'"),
            ("/api/item?run=r2&item=nope", "no item 'nope'"),
        ):
            status, _, body = get(server.url + path)
            assert status == 400 and says in json.loads(body)["error"]


def test_without_aiohttp_a_bundle_is_written_and_serving_says_what_to_install(swapped, tmp_path):
    """aiohttp is the `[annotate]` extra: a static copy needs no web library, and serving
    without it is one line naming the extra, never a traceback."""
    import subprocess
    import sys

    blocked = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def fake(name, *a, **k):\n"
        "    if name.split('.')[0] == 'aiohttp':\n"
        "        raise ImportError(\"No module named 'aiohttp'\")\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = fake\n"
        "from titjudge.cli import main\n"
        "sys.exit(main(sys.argv[1:]))\n"
    )
    out = tmp_path / "bundle"
    done = subprocess.run(
        [sys.executable, "-c", blocked, "view", str(swapped), "--bundle", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert (out / "index.html").is_file()
    done = subprocess.run(
        [sys.executable, "-c", blocked, "view", str(swapped), "--port", "0"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "needs aiohttp to serve" in done.stderr and "--bundle DIR" in done.stderr
