"""One truth per run: every view of a run shows the numbers of its one record.

A synthetic run through the loopback server with an LLM judge that falls back to an
embedding judge on garbled replies, that embedding judge, and a pairwise judge that ties
some pairs in both orders. The run's tables, `titjudge metrics` (on the run and on its
scores CSV), `titjudge audit` (terminal, HTML, `--json`) and `titjudge.load_run` must show
the same accuracy for every variant; a pair the pairwise judge tied in both orders is never
"agree"; the audit page and `--json` name each variant's model and template sha256.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from bundle_doc import read_bundle
from doubles.server import FakeOpenAIServer, Reply
from judge_helpers import ModesResponder, description_by_item, read_lines, run_config

import titjudge
from titjudge.cli import main
from titjudge.report.analysis.record import AnalysedRun

# every test makes whole runs through the loopback server or reads one
pytestmark = pytest.mark.slow

JUDGES = [
    {
        "name": "tit_llm",
        "kind": "llm",
        "model": "litellm:openai/judge",
        "fallback": "tit_score",
        "temperature": 0.0,
    },
    {
        "name": "tit_score",
        "kind": "embedding",
        "model": "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B",
    },
    {"name": "pw", "kind": "pairwise", "model": "litellm:openai/judge"},
]


class TyingResponder(ModesResponder):
    """The fair responder, except: the pairwise judge answers `tie` for every other human
    pair (both orders), and the LLM judge's reply for two descriptions is garbled (so the
    LLM judge falls back to the embedding judge for those images)."""

    def __init__(self, data: Path, tie_pairs: set[frozenset[str]], garbled: set[str]):
        super().__init__(data)
        self.tie_pairs, self.garbled = tie_pairs, garbled

    def __call__(self, request):  # type: ignore[no-untyped-def]
        text = request.text
        if "FIRST DESCRIPTION:" in text:
            found = re.search(
                r"FIRST DESCRIPTION:\n(.*?)\n\nSECOND DESCRIPTION:\n(.*?)\n\n", text, re.S
            )
            if found and frozenset(found.groups()) in self.tie_pairs:
                return Reply(data={"rationale": "both cover the prompt equally", "winner": "tie"})
        elif not request.images and any(g in request.all_text for g in self.garbled):
            return Reply(content="I would rate this quite highly overall.")
        return super().__call__(request)


@pytest.fixture(scope="module")
def record(synth_data, tmp_path_factory) -> AnalysedRun:
    import csv

    tmp = tmp_path_factory.mktemp("one-record")
    texts = description_by_item(synth_data)
    with (synth_data / "pairs.csv").open() as handle:
        human = [r for r in csv.DictReader(handle) if r["winner"] != "tie"]
    tie_pairs = {frozenset((texts[r["item_a"]], texts[r["item_b"]])) for r in human[::2]}
    garbled = {texts[human[1]["item_a"]], texts[human[3]["item_b"]]}
    with (
        pytest.MonkeyPatch.context() as patch,  # litellm's openai/ provider wants a key
        FakeOpenAIServer(responder=TyingResponder(synth_data, tie_pairs, garbled)) as server,
    ):
        patch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
        return titjudge.evaluate(run_config(synth_data, server.url, tmp, JUDGES))


@pytest.fixture(scope="module")
def run_dir(record: AnalysedRun) -> Path:
    assert record.run_dir is not None
    return record.run_dir


def test_the_record_evaluate_returns_is_the_one_load_run_reads(record) -> None:
    """`titjudge.evaluate` returns the run's record, the one every file of the run dir was
    written from: `load_run` reads back the same type with the same metrics, counts,
    pairwise verdicts and run dir."""
    loaded = titjudge.load_run(record.run_dir)
    assert type(record) is type(loaded) is AnalysedRun
    assert record.run_dir == loaded.run_dir and record.run_dir.parent.name == "modes"
    assert record.metrics_json() == loaded.metrics_json() and record.variants
    assert loaded.summary is not None and record.summary == loaded.summary
    written = json.loads((record.run_dir / "summary.json").read_text())
    assert written == record.summary.summary_json()
    assert written["variants"]["pw"] == record.summary.variants["pw"].model_dump()
    # the pairwise verdicts, in pairs_pw.jsonl's order, are the ones the file holds
    assert list(record.verdicts) == ["pw"] and len(record.verdicts["pw"]) == 24
    assert record.verdicts == loaded.verdicts
    lines = read_lines(record.run_dir / "pairs_pw.jsonl")
    assert [v.line() for v in record.verdicts["pw"]] == lines
    # the exit code `titjudge run` gives: the LLM judge's garbled replies fell back, none failed
    assert record.summary.exit_code == 0 and record.summary.failed_items == 0
    assert record.item_lines == loaded.item_lines and len(record.item_lines) == 16 * 3


def _cli(capsys, *args: str) -> str:
    code = main(list(args))
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def _pct_cells(text: str, name: str, digits: int) -> list[str]:
    """Every 'NN.NN%' on the lines that start with the variant's name (table rows)."""
    pattern = rf"\d+\.\d{{{digits}}}%"
    return [
        cell
        for line in text.splitlines()
        if re.match(rf"^[│┃|\s]*{re.escape(name)}\s", line)
        for cell in re.findall(pattern, line)
    ]


def test_every_view_shows_the_records_accuracy(
    run_dir: Path, capsys, tmp_path, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # table rows unfolded, one line per variant
    record = titjudge.load_run(run_dir)
    assert record.version == 2 and set(record.variants) == {"tit_llm", "tit_score", "pw"}
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert set(metrics["variants"]) == set(record.variants)
    pw = record.variants["pw"]
    assert pw.accuracy_source == "verdicts"
    # the pairwise judge's accuracy is its verdicts': pairs_pw.jsonl's `correct`
    lines = read_lines(run_dir / "pairs_pw.jsonl")
    judged = [line for line in lines if line["human"] in ("a", "b")]
    assert pw.n_pairs == len(judged)
    assert pw.n_correct == sum(line["correct"] is True for line in judged)
    assert pw.n_metric_ties == sum(line["verdict"] == "tie" for line in judged) > 0
    assert record.variants["tit_llm"].get("n_fallback") > 0

    from_metrics_run = json.loads(_cli(capsys, "metrics", str(run_dir), "--json"))
    from_scores = json.loads(
        _cli(
            capsys,
            "metrics",
            str(run_dir / "scores.csv"),
            "--pairs",
            str(Path(record_config(run_dir)["data"]["human_pairs"])),
            "--manifest",
            str(Path(record_config(run_dir)["data"]["manifest"])),
            "--json",
        )
    )
    audit_json = json.loads(_cli(capsys, "audit", str(run_dir), "--json"))
    audit_text = _cli(capsys, "audit", str(run_dir))
    _cli(capsys, "audit", str(run_dir), "--html", str(tmp_path / "page"))
    (page,) = read_bundle(tmp_path / "page")["runs"]["runs"]
    page_variants = {v["name"]: v for v in page["variants"]}
    run_text = _cli(capsys, "metrics", str(run_dir))
    for name, entry in record.variants.items():
        accuracy = entry.pairwise_accuracy
        assert accuracy is not None
        assert metrics["variants"][name]["pairwise_accuracy"] == accuracy
        assert from_metrics_run["variants"][name]["pairwise_accuracy"] == accuracy
        assert from_scores["variants"][name]["pairwise_accuracy"] == accuracy, name
        assert from_scores["variants"][name]["n_correct"] == entry.n_correct
        assert audit_json["variants"][name]["pairwise_accuracy"] == accuracy
        assert page_variants[name]["accuracy"] == accuracy
        # counts of agree / metric tie are the ones the accuracy was computed from
        counts = audit_json["variants"][name]["counts"]
        assert counts["agree"] == entry.n_correct, name
        assert counts["metric_tie"] == entry.n_metric_ties, name
        assert page_variants[name]["n_correct"] == entry.n_correct
        assert f"{100 * accuracy:.1f}%" in _pct_cells(audit_text, name, 1), name
        assert f"{100 * accuracy:.2f}%" in _pct_cells(run_text, name, 2), name
    assert "pw: pairwise accuracy from its verdicts" in run_text and "first-shown" in run_text
    # McNemar tables read the same outcomes: each variant's accuracy on the shared pairs
    for comparison in metrics["comparisons"]:
        for side in ("a", "b"):
            entry = record.variants[comparison[f"variant_{side}"]]
            if comparison["n_pairs"] == entry.n_pairs:
                assert comparison[f"accuracy_{side}"] == entry.pairwise_accuracy


def record_config(run_dir: Path) -> dict:
    import yaml

    return yaml.safe_load((run_dir / "config.yaml").read_text())


def test_a_pair_tied_in_both_orders_is_never_agree(run_dir: Path, capsys) -> None:
    tied = [
        line
        for line in read_lines(run_dir / "pairs_pw.jsonl")
        if line["human"] in ("a", "b") and [o["choice"] for o in line["orders"]] == ["tie", "tie"]
    ]
    assert tied
    for line in tied:  # the terminal view of each such pair: a tie, from the verdict
        pair_id = f"{line['item_a']}|{line['item_b']}"
        text = _cli(capsys, "audit", str(run_dir), "--pair", pair_id, "--variant", "pw")
        assert "── pw: metric tie" in text, pair_id
    audit_json = json.loads(_cli(capsys, "audit", str(run_dir), "--json"))
    pairs = {p["pair_id"]: p for p in audit_json["pairs"]}
    for line in tied:
        shown = pairs[f"{line['item_a']}|{line['item_b']}"]["variants"]["pw"]
        assert shown["outcome"] == "metric_tie"
        assert [o["choice"] for o in shown["orders"]] == ["tie", "tie"]
        assert shown["orders"][0]["rationale"] == "both cover the prompt equally"
        assert shown["orders_agree"] is True
    text = _cli(capsys, "audit", str(run_dir), "--pair", f"{tied[0]['item_a']}|{tied[0]['item_b']}")
    assert "both cover the prompt equally" in text and "first shown" in text
    summary = _cli(capsys, "audit", str(run_dir))
    assert "position" in summary


def test_audit_names_each_variants_model_and_template(run_dir: Path, capsys, tmp_path) -> None:
    from titjudge.prompts.loader import load_template

    audit_json = json.loads(_cli(capsys, "audit", str(run_dir), "--json"))
    _cli(capsys, "audit", str(run_dir), "--html", str(tmp_path / "page"))
    page = (tmp_path / "page" / "bundle.js").read_text()  # the documents the page shows
    metrics = json.loads((run_dir / "metrics.json").read_text())
    expected = {
        "tit_llm": ("litellm:openai/judge", load_template("judge_similarity").sha256),
        "pw": ("litellm:openai/judge", load_template("pairwise").sha256),
        "tit_score": ("litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B", None),
    }
    for name, (model, sha) in expected.items():
        for provenance in (
            audit_json["variants"][name]["provenance"],
            metrics["variants"][name]["provenance"],
        ):
            assert provenance["model"] == model and provenance["template_sha256"] == sha
            if name != "tit_score":  # text replies name their model; embeddings do not
                assert provenance["answered_by"] == ["judge"], name
        assert model in page
        if sha:
            assert sha in page
    assert metrics["variants"]["tit_llm"]["provenance"]["fallback"] == "tit_score"
    assert metrics["variants"]["tit_llm"]["provenance"]["sampling"]["temperature"] == 0.0


def test_load_run_reads_a_name_dirs_latest_run(run_dir: Path) -> None:
    record = titjudge.load_run(run_dir.parent)  # <run.out>/<name>: its LATEST run
    assert record.run_dir == run_dir
    assert [v.verdict for v in record.verdicts["pw"]] == [
        line["verdict"] for line in read_lines(run_dir / "pairs_pw.jsonl")
    ]


def test_metrics_on_a_pairwise_variant_without_its_verdicts_says_why(
    run_dir: Path, tmp_path: Path, capsys
) -> None:
    """A scores CSV whose run config names `pw` as pairwise, with pairs_pw.jsonl gone: one
    line and exit 2, never the win-rate accuracy."""
    import shutil

    for name in ("scores.csv", "config.yaml"):
        shutil.copy(run_dir / name, tmp_path / name)
    pairs = record_config(run_dir)["data"]["human_pairs"]
    assert main(["metrics", str(tmp_path / "scores.csv"), "--pairs", pairs, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    [line] = captured.err.strip().splitlines()
    assert "'pw' is a pairwise judge" in line and "pairs_pw.jsonl is missing" in line


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        (lambda line: line.pop("orders"), "orders: must list the pair's two presentation orders"),
        (
            lambda line: line["orders"][1].update(choice="left"),
            "backward.choice: Input should be 'first', 'second' or 'tie'",
        ),
    ],
    ids=["no-orders", "bad-choice"],
)
def test_a_broken_verdicts_line_is_one_line_naming_file_and_line(
    run_dir: Path, tmp_path: Path, capsys, edit, says
) -> None:
    """A hand-edited pairs_pw.jsonl: `titjudge audit` refuses it in one line, exit 2, as a
    file that is not the one the run wrote (files.json); in a run dir from before files.json,
    it says which line of which file and why. Nothing is read from the other lines as if it
    were fine."""
    import shutil

    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    lines = read_lines(copy / "pairs_pw.jsonl")
    edit(lines[2])
    (copy / "pairs_pw.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert main(["audit", str(copy), "--json"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"{copy / 'pairs_pw.jsonl'}: " in line and "the run wrote" in line, line
    (copy / "files.json").unlink()  # a run dir from before files.json
    assert main(["audit", str(copy), "--json"]) == 2
    [line] = capsys.readouterr().err.strip().splitlines()
    assert f"pairs_pw.jsonl:3: {says}" in line, line


def test_tables_piped_keep_every_row_and_word_on_one_line(run_dir: Path, capsys, monkeypatch):
    """`titjudge metrics RUN | less` or `> report.txt`: not a terminal, so rich would lay
    tables out in 80 columns and break words in cells ('varian / t'); piped, every row and
    header stays on one line."""
    monkeypatch.delenv("COLUMNS", raising=False)
    out = _cli(capsys, "metrics", str(run_dir))
    headers = [line for line in out.splitlines() if "variant" in line and "┃" in line]
    assert headers, out
    assert any("pairwise acc" in h and "fallback" in h for h in headers), headers
    for name in ("tit_llm", "tit_score", "pw"):
        assert any(re.match(rf"^[│┃]\s*{name}\s+│", line) for line in out.splitlines()), name
    assert max(len(line) for line in out.splitlines()) > 80  # laid out wider than a terminal
