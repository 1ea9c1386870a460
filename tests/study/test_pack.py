"""`titjudge pack` and `titjudge reproduce`: a real run (an LLM judge with a fallback, an
embedding judge and a pairwise judge, every call answered by the loopback OpenAI stand-in)
packed, then its cache, run dir, data and server gone and no key set: every number of
metrics.json and the audit's verdicts re-derived from the pack alone, exactly. A flipped
byte, an added file, a newer format are refused naming what fails; the pack holds no secret
and no absolute path."""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path

import pytest
from study_runs import packed_run

from titjudge.cli import main

pytestmark = pytest.mark.slow
KEY = "sk-test-pack-secret-0123456789"
JUDGES = [
    {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge", "fallback": "tit_score"},
    {
        "name": "tit_score",
        "kind": "embedding",
        "model": "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B",
    },
    {"name": "pw", "kind": "pairwise", "model": "litellm:openai/judge"},
]


@pytest.fixture(scope="module")
def packed(synth_data: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict]:
    """The pack of a real run, and the run's metrics.json as it was; then the run, its data
    (a private copy) and its cache are deleted."""
    tmp = tmp_path_factory.mktemp("pack")
    out, run_dir, data = packed_run(synth_data, tmp, JUDGES, KEY)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    for gone in (tmp / "runs", data, tmp / "cache"):
        shutil.rmtree(gone, ignore_errors=True)
    assert not data.exists()
    return out, metrics


def test_a_pack_reproduces_every_number_with_no_key_no_server_no_cache_no_run(
    packed, tmp_path, capsys, monkeypatch
):
    out, metrics = packed
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["reproduce", str(out), "--out", "again"]) == 0
    said = capsys.readouterr().out
    assert "every number matches the pack's exactly" in said
    again = json.loads((tmp_path / "again" / "run" / "metrics.json").read_text())
    assert again == metrics  # byte-for-byte the same numbers, every variant and table
    assert {"tit_llm", "tit_score", "pw"} <= set(again["variants"])
    # the reproduced run dir is a run dir: the metrics command reads it as any run
    assert main(["metrics", str(tmp_path / "again" / "run"), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (
        shown["variants"]["pw"]["pairwise_accuracy"]
        == metrics["variants"]["pw"]["pairwise_accuracy"]
    )


def test_a_changed_number_is_one_line_per_difference(packed, tmp_path, capsys):
    out, metrics = packed
    changed = tmp_path / "changed.tjpack"
    with zipfile.ZipFile(out) as source, zipfile.ZipFile(changed, "w") as target:
        manifest = json.loads(source.read("manifest.json"))
        for name in source.namelist():
            data = source.read(name)
            if name == "run/metrics.json":  # a number edited, and its digest updated to match
                doc = json.loads(data)
                doc["variants"]["tit_llm"]["n_correct"] += 1
                data = json.dumps(doc).encode()
                from titjudge.study.pack import sha256_of

                manifest["files"][name] = {"sha256": sha256_of(data), "bytes": len(data)}
            if name != "manifest.json":
                target.writestr(name, data)
        target.writestr("manifest.json", json.dumps(manifest))
    assert main(["reproduce", str(changed), "--out", str(tmp_path / "r")]) == 1
    lines = [x for x in capsys.readouterr().out.splitlines() if x.startswith("metrics.json:")]
    n = metrics["variants"]["tit_llm"]["n_correct"]
    assert lines == [f"metrics.json: variants.tit_llm.n_correct: pack {n + 1}, re-derived {n}"]


def _rewrite(source: Path, target: Path, change) -> None:
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            name, data = change(info.filename, old.read(info.filename))
            if name is not None:
                new.writestr(name, data)


def test_a_damaged_or_altered_pack_is_refused_naming_the_file(packed, tmp_path, capsys):
    out, _ = packed
    flipped = tmp_path / "flipped.tjpack"
    _rewrite(
        out,
        flipped,
        lambda n, d: (
            (n, d[:-2] + bytes([d[-2] ^ 1]) + d[-1:]) if n == "run/items.jsonl" else (n, d)
        ),
    )
    extra = tmp_path / "extra.tjpack"
    _rewrite(out, extra, lambda n, d: (n, d))
    with zipfile.ZipFile(extra, "a") as archive:
        archive.writestr("run/notes.txt", "added later")
    newer = tmp_path / "newer.tjpack"
    _rewrite(
        out,
        newer,
        lambda n, d: (
            (n, json.dumps({**json.loads(d), "version": 99}).encode())
            if n == "manifest.json"
            else (n, d)
        ),
    )
    raw = out.read_bytes()  # bytes flipped inside the compressed file itself, at many places
    for at in range(200, len(raw) - 200, max(1, (len(raw) - 400) // 40)):
        damaged = bytearray(raw)
        damaged[at] ^= 0xFF
        (tmp_path / "raw.tjpack").write_bytes(bytes(damaged))
        assert main(["reproduce", str(tmp_path / "raw.tjpack"), "--out", str(tmp_path / "x")]) in (
            0,  # a flip in a zip field nothing reads (e.g. a timestamp) leaves every file whole
            2,
        )
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) <= 1, err
        shutil.rmtree(tmp_path / "x", ignore_errors=True)
    cases = [
        (flipped, "run/items.jsonl fails its sha256"),
        (extra, "run/notes.txt is not in the pack's manifest"),
        (newer, "pack format version 99 is newer than this titjudge reads"),
        (tmp_path / "none.tjpack", "not found"),
    ]
    for path, says in cases:
        assert main(["reproduce", str(path), "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err
        assert says in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()  # nothing written from a refused pack


def test_the_pack_holds_no_secret_no_absolute_path_and_the_answers_raw_and_parsed(packed):
    out, _ = packed
    with zipfile.ZipFile(out) as archive:
        texts = {n: archive.read(n).decode("utf-8") for n in archive.namelist()}
        stamps = {info.date_time for info in archive.infolist()}
    assert stamps == {(2020, 1, 1, 0, 0, 0)}
    for name, text in texts.items():
        assert KEY not in text, name
        assert "/tmp/" not in text and "/work/" not in text and "/root/" not in text, name
    lines = [json.loads(x) for x in texts["run/items.jsonl"].splitlines()]
    llm = [x for x in lines if x["variant"] == "tit_llm" and x["status"] == "ok"]
    assert llm and all(x["raw"] and x["score"] is not None for x in llm)  # raw and parsed
    assert all(x["answered_by"] == ["judge"] for x in llm)
    assert all(x["image"].startswith("sha256:") for x in lines)
    assert set(texts) >= {
        "run/config.yaml",
        "run/audit.json",
        "data/pairs.csv",
        "env/versions.json",
    }
    assert any(n.startswith("templates/") for n in texts)
    manifest = json.loads(texts["manifest.json"])
    assert set(manifest["files"]) == set(texts) - {"manifest.json"}


def test_the_demo_packs_and_reproduces(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["demo"]) == 0
    capsys.readouterr()
    assert main(["pack", "titjudge-demo/runs/demo", "-o", "demo.tjpack", "--with-images"]) == 0
    assert "images" in capsys.readouterr().out
    shutil.rmtree("titjudge-demo")
    assert main(["reproduce", "demo.tjpack", "--out", "again", "--against", "paper"]) == 0
    said = capsys.readouterr().out
    assert "TIT-Score (Qwen3-Embedding) pairwise accuracy: paper 66.38%" in said
    assert "not compared:" in said and "every number matches" in said
    assert any((tmp_path / "again" / "data" / "images").iterdir())  # the images came along


def test_bad_pack_input_is_one_line(tmp_path, capsys, packed):
    out, _ = packed
    assert main(["pack", str(tmp_path / "nothing"), "-o", str(tmp_path / "a.tjpack")]) == 2
    assert main(["pack", str(tmp_path), "-o", str(tmp_path / "a.zip")]) == 2
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "x").write_text("mine")
    assert main(["reproduce", str(out), "--out", str(tmp_path / "taken")]) == 2
    lines = [x for x in capsys.readouterr().err.splitlines() if x.strip()]
    assert len(lines) == 3 and all("Traceback" not in x for x in lines)
    assert "not an empty folder" in lines[2]


def test_a_secret_inside_a_rationale_reaches_no_file_of_the_pack(tmp_path, capsys, monkeypatch):
    """A provider error or rationale that quotes a key: redacted in items.jsonl and in the
    audit's document alike, value by value, so the pack still reads back whole (the
    hand-made run's hostile texts hold line separators inside JSON strings)."""
    from audit.audit_run import write_run

    run = write_run(tmp_path)
    secret = "sk-live-quoted-in-a-rationale-987654"
    monkeypatch.setenv("SOME_PROVIDER_API_KEY", secret)  # a key the environment holds
    lines = (run / "items.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["rationale"] = f"the key {secret} was echoed"
    (run / "items.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    (run / "files.json").unlink(missing_ok=True)  # the hand-made run as an older run reads
    out = tmp_path / "s.tjpack"
    assert main(["pack", str(run), "-o", str(out)]) == 0, capsys.readouterr().err
    with zipfile.ZipFile(out) as archive:
        for name in archive.namelist():
            assert secret not in archive.read(name).decode("utf-8", "replace"), name
        assert "[REDACTED]" in archive.read("run/items.jsonl").decode()
    capsys.readouterr()
    # the hand-made record is not what titjudge computes from its items (written by hand, it
    # lacks the paired tests): reproduce reads the whole pack and names those values (exit 1)
    assert main(["reproduce", str(out), "--out", str(tmp_path / "again")]) == 1
    said = capsys.readouterr()
    assert "comparisons[0]" in said.out and "invalid JSON" not in said.err + said.out
