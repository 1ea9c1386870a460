"""Bad inputs over the CLI: one clear line and exit 2, or a reported per-item failure.

Never a traceback, and never the loss of a result written before.
"""

import json

import numpy as np
import pytest
from builders import write_config
from doubles.server import FakeOpenAIServer, build_responder
from fault_helpers import config, descriptions
from PIL import Image
from run_dirs import latest_run

from titjudge.cli import main


@pytest.fixture
def server(fault_data):
    with FakeOpenAIServer(
        responder=build_responder("auto", descriptions=descriptions(fault_data)),
        context_window=20_000,
    ) as srv:
        yield srv


def manifest_lines(data):
    return [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines()]


def write_manifest(data, lines):
    (data / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


def run_cli(args, capsys):
    code = main(args)
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    return code, captured.out, captured.err


# ----------------------------------------------------------------------------- exit 2


def _set(cfg, dotted, value):
    node = cfg
    *parents, last = dotted.split(".")
    for part in parents:
        node = node[int(part)] if isinstance(node, list) else node[part]
    node[last] = value


CONFIG_CASES = {
    "unknown key": (
        lambda c: _set(c, "describer.temprature", 0),
        "unknown key 'describer.temprature'",
    ),
    "unknown model spec": (
        lambda c: _set(c, "describer.model", "openai:gpt-4o"),
        "unknown model backend 'openai'",
    ),
    "spec without prefix": (lambda c: _set(c, "judges.0.model", "gpt-4o"), "no backend prefix"),
    "unknown template": (
        lambda c: _set(c, "describer.prompt", "describe_papr"),
        "did you mean 'describe_paper'",
    ),
    "judge template as describer": (
        lambda c: _set(c, "judges.0.prompt", "lmm_score"),
        "needs a 'judge' template",
    ),
    "unknown fallback": (
        lambda c: _set(c, "judges.0.fallback", "lexicl"),
        "did you mean 'lexical'",
    ),
    "missing api key": (
        lambda c: _set(c, "judges.0.api_key_env", "TITJUDGE_UNSET_VAR"),
        "TITJUDGE_UNSET_VAR",
    ),
    "negative concurrency": (lambda c: _set(c, "run.concurrency", -1), "run.concurrency"),
    "missing manifest": (
        lambda c: _set(c, "data.manifest", "/nonexistent/manifest.jsonl"),
        "manifest.jsonl",
    ),
    "missing pairs": (lambda c: _set(c, "data.human_pairs", "/nonexistent/pairs.csv"), "pairs.csv"),
}


@pytest.mark.parametrize("case", sorted(CONFIG_CASES))
def test_config_mistakes_exit_2_with_one_line(case, fault_data, server, tmp_path, capsys):
    cfg = config(fault_data, server.url, tmp_path)
    mutate, message = CONFIG_CASES[case]
    mutate(cfg)
    code, _, err = run_cli(["run", str(write_config(cfg, tmp_path))], capsys)
    assert code == 2 and message in err
    assert len(err.strip().splitlines()) == 1, err
    assert server.stats.total == 0


def test_missing_openai_key_is_caught_before_any_call(
    fault_data, server, tmp_path, capsys, monkeypatch
):
    monkeypatch.delenv("OPENAI_API_KEY")
    code, _, err = run_cli(
        ["run", str(write_config(config(fault_data, server.url, tmp_path), tmp_path))], capsys
    )
    assert code == 2 and "OPENAI_API_KEY" in err and server.stats.total == 0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\ndescriber: {model: [\n", "invalid YAML"),
        ("- just\n- a list\n", "must be a YAML mapping"),
        ("", "missing required key 'name'"),
    ],
)
def test_bad_yaml(text, message, tmp_path, capsys):
    code, _, err = run_cli(["run", str(write_config(text, tmp_path))], capsys)
    assert code == 2 and message in err


MANIFEST_CASES = {
    "empty prompt": (lambda lines: lines[2].update(prompt="   "), "prompt"),
    "duplicate ids": (lambda lines: lines[3].update(item_id=lines[2]["item_id"]), "duplicate"),
    "missing prompt key": (lambda lines: lines[1].pop("prompt"), "prompt"),
}


@pytest.mark.parametrize("case", sorted(MANIFEST_CASES))
def test_bad_manifest(case, fault_copy, server, tmp_path, capsys):
    lines = manifest_lines(fault_copy)
    mutate, message = MANIFEST_CASES[case]
    mutate(lines)
    write_manifest(fault_copy, lines)
    code, _, err = run_cli(
        ["run", str(write_config(config(fault_copy, server.url, tmp_path), tmp_path))], capsys
    )
    assert code == 2 and message in err and "manifest.jsonl:" in err


def test_pair_naming_unknown_item(fault_copy, server, tmp_path, capsys):
    columns = (fault_copy / "pairs.csv").read_text().splitlines()[0].count(",") + 1
    with (fault_copy / "pairs.csv").open("a") as handle:  # a whole row, its votes left empty
        handle.write("p0001,p0001__ghost,p0001__synth-model-01,a" + "," * (columns - 4) + "\n")
    code, _, err = run_cli(
        ["run", str(write_config(config(fault_copy, server.url, tmp_path), tmp_path))], capsys
    )
    assert code == 2 and "p0001__ghost" in err and "pairs.csv:" in err


def test_inconsistent_votes(tmp_path, capsys):
    votes = tmp_path / "votes.csv"
    votes.write_text(
        "prompt_id,item_a,item_b,votes_a,votes_b,votes_tie\np1,a,b,10,3,2\np1,a,c,9,3,2\n"
    )
    code, _, err = run_cli(
        ["data", "aggregate-votes", str(votes), "--out", str(tmp_path / "pairs.csv")], capsys
    )
    assert code == 2 and "votes.csv:3" in err


def test_limit_zero(fault_data, server, tmp_path, capsys):
    path = write_config(config(fault_data, server.url, tmp_path), tmp_path)
    code, _, err = run_cli(["run", str(path), "--limit", "0"], capsys)
    assert code == 2 and "--limit" in err


@pytest.mark.slow
def test_unwritable_out_dir_keeps_earlier_results(fault_data, server, tmp_path, capsys):
    path = write_config(config(fault_data, server.url, tmp_path), tmp_path)
    assert run_cli(["run", str(path), "--limit", "4"], capsys)[0] == 0
    scores = latest_run(tmp_path / "runs" / "faults") / "scores.csv"
    before = scores.read_text()
    requests = server.stats.total
    # a run dir below a file cannot be created (root ignores permission bits, so no chmod)
    code, _, err = run_cli(["run", str(path), "--out", str(scores / "sub")], capsys)
    assert code == 2 and "not writable" in err
    assert scores.read_text() == before and server.stats.total == requests


# ----------------------------------------------------------------------------- per-item failures


def _image_cases(data, lines):
    """Replace images in place; returns {item_id: expected status of its describer}."""
    expected = {}

    def path_of(i):
        return data / lines[i]["image"]

    path_of(0).write_bytes(b"\x89PNG\r\n\x1a\n garbage that is not a png")  # corrupt
    expected[lines[0]["item_id"]] = "corrupt or truncated"
    path_of(1).write_bytes(path_of(1).read_bytes()[:200])  # truncated
    expected[lines[1]["item_id"]] = "corrupt or truncated"
    path_of(2).unlink()  # missing
    expected[lines[2]["item_id"]] = "image file not found"
    path_of(3).write_bytes(b"")  # empty file
    expected[lines[3]["item_id"]] = "image file is empty"
    Image.new("CMYK", (64, 64), (0, 200, 200, 0)).save(
        path_of(4), format="JPEG"
    )  # CMYK: converted, ok
    expected[lines[4]["item_id"]] = None
    Image.fromarray(np.full((64, 64), 40000, dtype=np.uint16)).save(
        path_of(5)
    )  # 16-bit: converted, ok
    expected[lines[5]["item_id"]] = None
    Image.new("RGB", (6000, 300), (9, 9, 9)).save(path_of(6))  # huge: downscaled, ok
    expected[lines[6]["item_id"]] = None
    return expected


@pytest.mark.slow
def test_bad_images_fail_their_items_only(fault_copy, server, tmp_path, capsys):
    lines = manifest_lines(fault_copy)
    expected = _image_cases(fault_copy, lines)
    lines[7]["prompt"] = " ".join(
        ["lighthouse"] * 50_000
    )  # 50,000-word prompt: the judge's context overflows
    write_manifest(fault_copy, lines)
    cfg = config(fault_copy, server.url, tmp_path)
    code, out, _ = run_cli(["run", str(write_config(cfg, tmp_path))], capsys)
    assert code == 1 and "have failed variants" in out
    records = {
        (r["item_id"], r["variant"]): r
        for r in map(json.loads, (latest_run(tmp_path / "runs" / "faults") / "items.jsonl").open())
    }
    for item_id, message in expected.items():
        record = records[(item_id, "lexical")]
        if message is None:
            assert record["status"] == "ok", record["error"]
        else:
            assert record["status"] == "failed" and message in record["error"]
    long = records[(lines[7]["item_id"], "tit_llm")]
    assert long["status"] == "failed" and "context length exceeded" in long["error"]
    assert records[(lines[7]["item_id"], "lexical")]["status"] == "ok"
    summary = json.loads((latest_run(tmp_path / "runs" / "faults") / "summary.json").read_text())
    assert summary["image_errors"] == 4 and summary["failed_items"] == 5


def test_empty_prompt_for_score(fault_data, tmp_path, capsys):
    image = next((fault_data / "images").rglob("*.png"))
    code, _, err = run_cli(["score", str(image), "  "], capsys)
    assert code == 2 and "prompt is empty" in err


@pytest.mark.parametrize("broken", ["corrupt cache.db", "cache dir is a file"])
def test_an_unusable_cache_stops_the_run_before_any_call(
    broken, fault_data, server, tmp_path, capsys
):
    cache_dir = tmp_path / "cache"
    if broken == "corrupt cache.db":
        cache_dir.mkdir()
        (cache_dir / "cache.db").write_bytes(b"garbage, not SQLite " * 500)
        said = f"cache dir {cache_dir}: not a titjudge cache or a corrupt SQLite database"
    else:
        cache_dir.write_text("a file")
        said = f"cache dir {cache_dir} is a file, not a folder"
    code, _, err = run_cli(
        ["run", str(write_config(config(fault_data, server.url, tmp_path), tmp_path))], capsys
    )
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1
    assert server.stats.total == 0
