"""`kind: jury`: members' preferences combined by weights fitted on the other folds' prompts
(judges.jury), checked by hand on a small example, on folds that share no prompt, and in a
real run whose metrics count the jury's held-out verdicts like any pairwise judge's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from doubles.server import FakeOpenAIServer
from judges.judge_helpers import ModesResponder, run_config

import titjudge
from titjudge.cli import main
from titjudge.judges.jury import JuryJudge, JuryJudgeConfig, deal_folds, decide_jury
from titjudge.records import ItemResult
from titjudge.records.items import HumanPair, Item
from titjudge.records.outcomes import Described, JudgeOutcome

PROMPTS = ["P1", "P2", "P3", "P4"]


def example(seed: int):
    """Four prompts of three images x > y > z (people: x beats y and z, y beats z: 12
    pairs); m1 always scores x > y > z; m2 does on P1 and P2 and the reverse on P3 and P4."""
    results, pairs = [], []
    for prompt in PROMPTS:
        for image, rank in (("x", 3), ("y", 2), ("z", 1)):
            item = Item(f"{prompt}_{image}", prompt, "p", Path("i.png"), image)
            flipped = 4 - rank if prompt in ("P3", "P4") else rank
            outcomes = [
                JudgeOutcome("m1", "ok", score=float(rank)),
                JudgeOutcome("m2", "ok", score=float(flipped)),
            ]
            results.append(ItemResult(item, Described("d"), outcomes))
        pairs += [
            HumanPair(prompt, f"{prompt}_x", f"{prompt}_y", "a"),
            HumanPair(prompt, f"{prompt}_x", f"{prompt}_z", "a"),
            HumanPair(prompt, f"{prompt}_y", f"{prompt}_z", "a"),
        ]
    jury = JuryJudge(JuryJudgeConfig(name="jury", kind="jury", members=["m1", "m2"], folds=2))
    return decide_jury(jury, results, {}, pairs, seed)


def test_the_jury_equals_a_hand_computation_on_a_small_example():
    # seed 0 deals the shuffled prompts into folds {P2, P3} and {P1, P4}
    assert deal_folds(PROMPTS, 2, 0) == [["P2", "P3"], ["P1", "P4"]]
    run = example(seed=0)
    # fold 1 (P2, P3 held out) is fitted on P1 and P4: m1 6 of 6 -> ln(7/1); m2 3 of 6
    # (right on P1, wrong on P4) -> ln(4/4) = 0. Fold 2 (P1, P4) on P2 and P3: the same.
    # So every pair is m1's vote: 12 of 12 right.
    weights = [f["weights"] for f in run.fit["folds"]]
    assert weights == [{"m1": pytest.approx(math.log(7)), "m2": 0.0}] * 2
    assert [v.verdict for v in run.judgements] == ["a"] * 12
    # seed 1: folds {P3, P4} and {P1, P2}. Fold 1 is fitted on P1, P2, where both members are
    # right 6 of 6 (ln 7 each); on P3, P4 they vote a and b: sum 0, a tie on those 6 pairs.
    # Fold 2 is fitted on P3, P4: m1 ln 7, m2 0 of 6 -> ln(1/7) < 0 -> 0: m1's vote, right.
    assert deal_folds(PROMPTS, 2, 1) == [["P3", "P4"], ["P1", "P2"]]
    run = example(seed=1)
    by_prompt = {}
    for v in run.judgements:
        by_prompt.setdefault(v.prompt_id, set()).add(v.verdict)
    assert by_prompt == {"P1": {"a"}, "P2": {"a"}, "P3": {"tie"}, "P4": {"tie"}}
    assert run.fit["folds"][1]["weights"] == {"m1": pytest.approx(math.log(7)), "m2": 0.0}
    shown = next(v for v in run.judgements if v.prompt_id == "P3").forward.rationale
    assert "fold 1 of 2" in shown and "sum +0.000 -> tie" in shown


def test_too_few_pairs_is_said_plainly_and_no_pair_is_judged():
    run = example(seed=0)
    from titjudge.judges.jury import MIN_PAIRS

    few = [v for v in run.judgements][: MIN_PAIRS - 1]
    pairs = [HumanPair(v.prompt_id, v.item_a, v.item_b, "a") for v in few]
    jury = JuryJudge(JuryJudgeConfig(name="jury", kind="jury", members=["m1", "m2"]))
    again = decide_jury(jury, [], {}, pairs, 0)
    assert all(v.verdict is None for v in again.judgements)
    assert (
        again.fit["fitted"] is False and "too few human pairs to fit a jury" in again.fit["reason"]
    )
    assert "too few human pairs" in (again.judgements[0].forward.error or "")


def test_a_member_with_no_scores_fails_every_pair_saying_which():
    results = [
        ItemResult(
            Item(f"{p}_{i}", p, "p", Path("i.png"), i),
            Described("d"),
            [JudgeOutcome("m1", "ok", score=float(n)), JudgeOutcome.failed("m2", "down")],
        )
        for p in PROMPTS
        for n, i in enumerate("xyz")
    ]
    pairs = [
        HumanPair(p, f"{p}_{a}", f"{p}_{b}", "b") for p in PROMPTS for a, b in ("xy", "xz", "yz")
    ]
    jury = JuryJudge(JuryJudgeConfig(name="jury", kind="jury", members=["m1", "m2"]))
    run = decide_jury(jury, results, {}, pairs, 0)
    assert all(v.verdict is None for v in run.judgements)
    assert "jury member 'm2' has no preference on any human pair" in run.fit["reason"]


JUDGES = [
    {"name": "tit_llm", "kind": "llm", "model": "litellm:openai/judge"},
    {"name": "lexical", "kind": "lexical"},
    {"name": "jury", "kind": "jury", "members": ["tit_llm", "lexical"], "folds": 3},
]


@pytest.mark.slow
def test_a_run_with_a_jury_scores_it_on_held_out_folds_that_share_no_prompt(
    synthetic, tmp_path, monkeypatch
):
    import builders

    builders.copy_data(synthetic(6, 4, seed=3), tmp_path)
    data = tmp_path / "data"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with FakeOpenAIServer(responder=ModesResponder(data)) as server:
        record = titjudge.evaluate(run_config(data, server.url, tmp_path, JUDGES))
    run_dir = record.run_dir
    fit = json.loads((run_dir / "jury_jury.json").read_text())
    held = [set(f["prompts"]) for f in fit["folds"]]
    verdict_lines = (run_dir / "pairs_jury.jsonl").read_text().splitlines()
    decided = {json.loads(x)["prompt_id"] for x in verdict_lines if json.loads(x)["human"] != "tie"}
    assert len(held) == 3 and set().union(*held) == decided and len(decided) == 6
    assert all(not (a & b) for i, a in enumerate(held) for b in held[i + 1 :])  # disjoint
    verdicts = [json.loads(x) for x in (run_dir / "pairs_jury.jsonl").read_text().splitlines()]
    fold_of = {p: n + 1 for n, f in enumerate(held) for p in f}
    for line in verdicts:
        rationale = line["orders"][0]["rationale"]
        assert rationale.startswith(f"fold {fold_of[line['prompt_id']]} of 3")
    for number, fold in enumerate(fit["folds"]):
        # trained on the pairs of the other folds' prompts only
        others = [v for v in verdicts if v["prompt_id"] not in held[number] and v["human"] != "tie"]
        assert fold["n_train_pairs"] == len(others)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    jury = metrics["variants"]["jury"]
    correct = sum(1 for v in verdicts if v["correct"] is True)
    assert jury["n_correct"] == correct and jury["accuracy_source"] == "verdicts"
    assert jury["ci"]["pairwise_accuracy"] is not None
    tested = {(c["variant_a"], c["variant_b"]) for c in metrics["comparisons"]}
    assert ("jury", "tit_llm") in tested and ("jury", "lexical") in tested  # the paired tests
    assert "jury_jury.json" in (run_dir / "files.json").read_text()


@pytest.mark.parametrize(
    ("jury", "says"),
    [
        ({"members": ["lexical", "ghost"]}, "jury 'jury' names unknown judge 'ghost'"),
        ({"members": ["jury", "lexical"]}, "names itself as a member"),
        ({"members": ["lexical"]}, "at least 2"),
        ({"members": ["lexical", "lexical2"], "fallback": "lexical"}, "a jury takes no fallback"),
    ],
)
def test_a_bad_jury_is_one_line_at_load(tmp_path, capsys, synth_data, jury, says):
    import yaml

    config = {
        "name": "j",
        "data": {
            "manifest": str(synth_data / "manifest.jsonl"),
            "human_pairs": str(synth_data / "pairs.csv"),
        },
        "describer": {"model": f"replay:{synth_data / 'descriptions.jsonl'}"},
        "judges": [
            {"name": "lexical", "kind": "lexical"},
            {"name": "lexical2", "kind": "lexical"},
            {"name": "jury", "kind": "jury", **jury},
        ],
        "run": {"out": str(tmp_path / "runs")},
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert says in err and "Traceback" not in err
    config["data"].pop("human_pairs")
    config["judges"][2] = {"name": "jury", "kind": "jury", "members": ["lexical", "lexical2"]}
    path.write_text(yaml.safe_dump(config))
    assert main(["run", str(path)]) == 2
    assert "is fitted to human pairs; set data.human_pairs" in capsys.readouterr().err
