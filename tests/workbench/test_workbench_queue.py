"""The workbench's annotation queue (`titjudge view --votes VOTES`): a filter's pairs go to
people in the order of the judges' disagreement, the annotation page is served by the
workbench under /annotate/, votes land in VOTES only, and the agreement (Fleiss' kappa with
its observed and chance agreement) follows the votes."""

from __future__ import annotations

import csv
import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from workbench_server import WorkbenchServer, human_rows, run_scores

from titjudge.cli import main


def call(
    url: str, body: Any = None, headers: dict[str, str] | None = None, raw: bytes | None = None
) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    sent = {"Content-Type": "application/json", **(headers or {})} if data is not None else {}
    request = urllib.request.Request(url, data=data, headers=sent)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"null")


def digests(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def preferences(run: Path) -> dict[str, str]:
    """Per pair key (prompt|first|second, items sorted): which image the run's judge scored
    higher ("a" = the first), or "tie", from items.jsonl and the human pairs file alone."""
    scores = run_scores(run)
    found = {}
    for row in human_rows(run):
        a, b = sorted((row["item_a"], row["item_b"]))
        key = f"{row['prompt_id']}|{a}|{b}"
        found[key] = "tie" if scores[a] == scores[b] else "a" if scores[a] > scores[b] else "b"
    return found


def every_pair(server: WorkbenchServer, query: str) -> list[str]:
    keys, page = [], 1
    while True:
        status, doc = call(server.url + f"/api/pairs?{query}&page={page}")
        assert status == 200
        keys += [row["key"] for row in doc["rows"]]
        if page >= doc["pages"]:
            return keys
        page += 1


def test_the_queue_orders_the_filters_pairs_by_judge_disagreement(swapped, tmp_path):
    runs = sorted(p.parent for p in swapped.rglob("items.jsonl"))
    prefs = [preferences(run) for run in runs]
    votes = tmp_path / "votes.csv"
    with WorkbenchServer(swapped, votes=votes) as server:
        view_order = every_pair(server, "runs=r1,r2&filter=all")
        status, found = call(server.url + "/api/queue", {"runs": "r1,r2", "filter": "all"})
        assert status == 200, found
        queue = found["queue"]
        # by hand: two judges; 0.5 where they prefer different images (or one ties), else 0
        split = {k: 0.5 if prefs[0][k] != prefs[1][k] else 0.0 for k in view_order}
        expected = sorted(view_order, key=lambda k: (-split[k], view_order.index(k)))
        assert 0 < sum(v > 0 for v in split.values()) < len(split)  # the order is tested
        assert queue["pairs"] == 24 and queue["left_out"] == 0 and queue["runs"] == ["r1", "r2"]
        assert [q["disagreement"] for q in queue["first"]] == [split[k] for k in expected[:10]]
        # one annotator walks the queue: the pairs come in exactly that order
        shown = []
        for _ in range(len(expected)):
            status, state = call(server.url + "/annotate/api/next?annotator=ann")
            pair = state["pair"]
            shown.append(f"{pair['prompt_id']}|{pair['id']}")
            status, _ = call(
                server.url + "/annotate/api/answer",
                {"annotator": "ann", "pair": pair["id"], "answer": "tie", "seconds": 1},
            )
            assert status == 200
        assert shown == expected
        assert call(server.url + "/annotate/api/next?annotator=ann")[1]["pair"] is None


def test_a_filter_and_a_limit_make_the_queue_and_votes_go_to_votes_only(swapped, tmp_path):
    votes = tmp_path / "votes.csv"
    before = digests(swapped)
    with WorkbenchServer(swapped, votes=votes) as server:
        disputed = every_pair(server, "runs=r1,r2&filter=disagree")
        status, found = call(
            server.url + "/api/queue", {"runs": "r1,r2", "filter": "disagree", "limit": 2}
        )
        assert status == 200 and found["queue"]["pairs"] == 2
        assert found["queue"]["left_out"] == len(disputed) - 2
        pairs = []
        for name in ("ann", "bea"):
            state = call(server.url + f"/annotate/api/next?annotator={name}")[1]
            pairs.append(state["pair"]["id"])
        assert pairs[0] == pairs[1]  # a queue: everyone gets its first pair first
        # ann: tie, tie; bea: tie, left -> units [tie, tie], [tie, x]: observed 0.5,
        # chance (3/4)^2 + (1/4)^2 = 0.625, kappa (0.5 - 0.625) / 0.375 = -1/3
        for name, answers in (("ann", ("tie", "tie")), ("bea", ("tie", "left"))):
            for answer in answers:
                pair = call(server.url + f"/annotate/api/next?annotator={name}")[1]["pair"]
                status, state = call(
                    server.url + "/annotate/api/answer",
                    {"annotator": name, "pair": pair["id"], "answer": answer, "seconds": 2},
                )
                assert status == 200
        agreement = state["agreement"]
        assert agreement["shared_pairs"] == 2
        assert agreement["observed"] == pytest.approx(0.5)
        assert agreement["chance"] == pytest.approx(0.625)
        assert agreement["fleiss_kappa"] == pytest.approx(-1 / 3)
        status, doc = call(server.url + "/annotate/api/status")
        assert doc["chance_agreement"] == pytest.approx(0.625)
        # the same queue sent again resumes: its four answers are already there
        found = call(server.url + "/api/queue", {"runs": "r1,r2", "filter": "disagree", "limit": 2})
        assert found[1]["queue"]["answers_already"] == 4
    with votes.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["annotator"] for r in rows] == ["ann", "ann", "bea", "bea"]
    assert {f"{r['item_a']}|{r['item_b']}" for r in rows} <= {k.split("|", 1)[1] for k in disputed}
    assert digests(swapped) == before  # the run dirs are never written
    # the votes file is what `data aggregate-votes` reads
    assert main(["data", "aggregate-votes", str(votes), "--out", str(tmp_path / "p.csv")]) == 0


@pytest.mark.parametrize(
    ("votes", "body", "status", "says"),
    [
        (False, {"runs": "r1"}, 409, "titjudge view RUNS --votes"),
        (True, {"runs": "r1", "min_words": 100000}, 400, "passes no pair"),
        (True, {"runs": "r1", "limit": 0}, 400, "at least one pair"),
        (True, {"runs": "r9"}, 404, "no run 'r9'"),
        (True, {"runs": "r1", "filter": ["all"]}, 400, "filter must be text"),
        (True, {"runs": "r1", "limit": True}, 400, "limit must be a whole number"),
    ],
)
def test_a_bad_queue_is_one_line(swapped, tmp_path, votes, body, status, says):
    with WorkbenchServer(swapped, votes=tmp_path / "v.csv" if votes else None) as server:
        found, doc = call(server.url + "/api/queue", body)
        assert found == status and says in doc["error"]
        # before any queue the annotation API says what to do, and writes nothing
        found, doc = call(server.url + "/annotate/api/next?annotator=ann")
        assert found == 409
    assert not (tmp_path / "v.csv").exists()


def test_the_queue_refuses_what_a_page_elsewhere_could_send(swapped, tmp_path):
    with WorkbenchServer(swapped, votes=tmp_path / "v.csv") as server:
        url = server.url + "/api/queue"
        assert call(url, raw=b"runs=r1", headers={"Content-Type": "text/plain"})[0] == 415
        evil = {"Origin": "http://evil.example"}
        assert call(url, {"runs": "r1"}, headers=evil)[0] == 403
        assert call(url, raw=b"{nope")[0] == 400
    with WorkbenchServer(swapped, token="s3cret", votes=tmp_path / "v.csv") as server:
        assert call(server.url + "/api/queue", {"runs": "r1"})[0] == 403
        assert call(server.url + "/annotate/")[0] == 403
        status, _ = call(server.url + "/api/queue?token=s3cret", {"runs": "r1"})
        assert status == 200


def test_the_command_refuses_a_bad_votes_file_in_one_line(swapped, tmp_path, capsys):
    wrong = tmp_path / "pairs.csv"
    wrong.write_text("prompt_id,item_a,item_b,winner\nP1,a,b,a\n")
    assert main(["view", str(swapped), "--votes", str(wrong)]) == 2
    assert main(["view", str(swapped), "--votes", str(tmp_path)]) == 2
    assert main(["view", str(swapped), "--votes", str(tmp_path / "no" / "v.csv")]) == 2
    assert main(["view", str(swapped), "--votes", "v.csv", "--bundle", str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 4 and "Traceback" not in err
    assert "not a votes file" in lines[0] and "found a folder" in lines[1]
    assert "does not exist" in lines[2] and "--bundle is read only" in lines[3]
    assert wrong.read_text() == "prompt_id,item_a,item_b,winner\nP1,a,b,a\n"
