"""A fallback judge's scores (another scale) never enter the main judge's rank metrics."""

from pathlib import Path

import pytest

from titjudge.metrics.evaluate import HumanData, evaluate_run
from titjudge.records import ItemResult
from titjudge.records.items import HumanPair, Item, RankRow
from titjudge.records.outcomes import Described, JudgeOutcome

HUMAN_ORDER = ["a", "c", "b", "d"]
#: the LLM judge's scores; c's call failed and fell back to a cosine of 0.95
LLM = {"a": 90.0, "b": 50.0, "d": 10.0}


def _example() -> tuple[list[Item], list[HumanPair], list[RankRow], dict[str, JudgeOutcome]]:
    """The issue's prompt: humans a > c > b > d; items, every pair, ranks and the outcomes."""
    items = [Item(i, "p", "a long prompt", Path(f"/img/{i}.png"), f"m{i}") for i in "abcd"]
    pairs = [
        HumanPair("p", x, y, "a") for n, x in enumerate(HUMAN_ORDER) for y in HUMAN_ORDER[n + 1 :]
    ]
    ranks = [RankRow("p", item_id, n + 1) for n, item_id in enumerate(HUMAN_ORDER)]
    outcomes = {
        i: JudgeOutcome("tit_llm", "ok", score=LLM[i])
        if i in LLM
        else JudgeOutcome("tit_llm", "fallback", score=0.95, error="timeout")
        for i in "abcd"
    }
    return items, pairs, ranks, outcomes


def test_a_fallback_cosine_does_not_reorder_an_llm_judges_ranking():
    """Humans: a > c > b > d. The LLM judge scores a 90, b 50, d 10; c's call failed and fell
    back to a cosine of 0.95. Ranking 0.95 among 0-100 scores puts c last (SRCC 0.4); ranking
    only the judged scores gives 1.0, with c counted as unranked."""
    items, pairs, ranks, outcomes = _example()
    results = [ItemResult(i, Described("a description"), [outcomes[i.item_id]]) for i in items]
    human = HumanData(pairs=pairs, ranks=ranks, items=items)
    record = evaluate_run(results, {}, human, ["tit_llm"], bootstrap=0).metrics
    assert record is not None
    metrics = record.variants["tit_llm"]
    assert metrics.srcc == pytest.approx(1.0)  # 0.4 when the cosine is ranked in
    assert metrics.krcc == pytest.approx(1.0)
    assert metrics.n_fallback_unranked == 1
    # pairs that compare c's cosine with a judged score are left out of the accuracy
    assert metrics.n_pairs_mixed_source == 3
    assert metrics.pairwise_accuracy == pytest.approx(1.0) and metrics.n_pairs == 3


def test_metrics_command_applies_the_same_fallback_rule_as_a_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same example as a scores CSV through `titjudge metrics`: SRCC 1.0, not 0.4, and
    every number equal to the run path's."""
    import json

    from titjudge.cli import main

    items, pairs, ranks, outcomes = _example()
    results = [ItemResult(item, Described("d"), [outcomes[item.item_id]]) for item in items]
    human = HumanData(pairs=pairs, ranks=ranks, items=items)
    record = evaluate_run(results, {}, human, ["tit_llm"], bootstrap=0).metrics
    assert record is not None
    run = record.metrics_json()

    (tmp_path / "scores.csv").write_text(
        "item_id,variant,score,status\n"
        + "".join(f"{i},tit_llm,{o.score},{o.status}\n" for i, o in outcomes.items())
    )
    (tmp_path / "pairs.csv").write_text(
        "prompt_id,item_a,item_b,winner\n" + "".join(f"p,{p.item_a},{p.item_b},a\n" for p in pairs)
    )
    (tmp_path / "manifest.jsonl").write_text(
        "".join(
            json.dumps(
                {
                    "item_id": i.item_id,
                    "prompt_id": "p",
                    "prompt": i.prompt,
                    "image": str(i.image),
                    "t2i_model": i.t2i_model,
                }
            )
            + "\n"
            for i in items
        )
    )
    argv = ["metrics", str(tmp_path / "scores.csv"), "--pairs", str(tmp_path / "pairs.csv")]
    argv += ["--manifest", str(tmp_path / "manifest.jsonl"), "--bootstrap", "0", "--json"]
    assert main(argv) == 0
    cli = json.loads(capsys.readouterr().out)
    assert cli["variants"]["tit_llm"]["srcc"] == pytest.approx(1.0)
    assert cli["variants"]["tit_llm"]["n_fallback_unranked"] == 1
    assert cli["variants"]["tit_llm"]["n_pairs_mixed_source"] == 3
    assert cli["variants"]["tit_llm"] == run["variants"]["tit_llm"]
    assert cli["leaderboard"] == run["leaderboard"]
