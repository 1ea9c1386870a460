"""repeats: N samples per item (distinct cache keys), median score, spread per item and per metric.

On `small_data` (3 prompts x 3 models: 9 items, 9 human pairs): every claim holds item by
item or sample by sample, none grows with the benchmark."""

import hashlib
import statistics

import numpy as np
import pytest
from doubles.server import FakeOpenAIServer, Reply
from doubles.server_text import jaccard
from judge_helpers import ModesResponder, description_by_item, manifest, read_lines, run_config

import titjudge
from titjudge.data.scores import load_scores
from titjudge.metrics.summary import MetricSettings
from titjudge.metrics.summary import metrics_record as evaluate
from titjudge.records.items import ScoreRow

# every test makes whole runs through the loopback server or reads one
pytestmark = pytest.mark.slow


def offset(prompt: str, seed: int) -> int:
    """The sample-dependent shift the server adds to its score: -10..10, 0 for sample 0."""
    if seed == 0:
        return 0
    return (
        int(hashlib.sha256(f"{seed}|{prompt[:40]}|{len(prompt)}".encode()).hexdigest(), 16) % 21
        - 10
    )


class NoisyJudge(ModesResponder):
    """Judge scores = round(100 * Jaccard) + an offset fixed by the request's seed (litellm sends
    seed = sample index for sample > 0 at temperature > 0)."""

    def __call__(self, request):
        reply = super().__call__(request)
        if self.log[-1][0] != "judge":
            return reply
        seed = int(request.body.get("seed") or 0)
        self._note("sample", seed)
        data = dict(reply.data)
        data["score"] = min(100, max(0, data["score"] + offset(request.text, seed)))
        return Reply(data=data)


def expected_samples(data, repeats):
    prompts = {row["item_id"]: row["prompt"] for row in manifest(data)}
    texts = description_by_item(data)
    from titjudge.prompts.loader import load_template

    template = load_template("judge_similarity")
    found = {}
    for item_id, prompt in prompts.items():
        user = template.render(prompt=prompt, description=texts[item_id])[1]
        base = round(jaccard(prompt, user.split("DESCRIPTION:\n", 1)[1]) * 100 + 1e-9)
        found[item_id] = [min(100, max(0, base + offset(user, k))) for k in range(repeats)]
    return found


def test_repeats_median_spread_and_cache(small_data, tmp_path):
    judge = {
        "name": "rep",
        "kind": "llm",
        "model": "litellm:openai/judge",
        "temperature": 0.7,
        "repeats": 3,
    }
    responder = NoisyJudge(small_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(small_data, server.url, tmp_path, [judge])
        n = len(manifest(small_data))
        assert n == 9
        outcome = titjudge.evaluate(config)
        assert responder.count("judge") == 3 * n  # 3 samples per item, each its own request
        assert sorted({seed for kind, seed in responder.log if kind == "sample"}) == [0, 1, 2]
        titjudge.evaluate(config)
        assert responder.count("judge") == 3 * n  # all cached
        config["judges"][0]["repeats"] = 5
        five = titjudge.evaluate(config)
        assert responder.count("judge") == 5 * n  # only samples 3 and 4 are new
        config["judges"][0]["repeats"] = 1
        one = titjudge.evaluate(config)
        assert responder.count("judge") == 5 * n  # sample 0 is what a non-repeated run asks

    samples = expected_samples(small_data, 3)
    by_item = {line.item_id: line for line in outcome.item_lines if line.variant == "rep"}
    for item_id, result in by_item.items():
        record = result.details["repeats"]
        assert record["scores"] == samples[item_id]
        assert result.score == statistics.median(samples[item_id])
        assert record["stdev"] == pytest.approx(statistics.stdev(samples[item_id]))
        q1, q3 = np.percentile(samples[item_id], [25, 75])
        assert record["iqr"] == pytest.approx(q3 - q1)
        assert [s["sample"] for s in result.details["samples"]] == [0, 1, 2]
    assert any(len(set(s)) > 1 for s in samples.values())

    # the metric's spread across repeats: each repeat's metrics from its own sample alone
    spread = outcome.metrics_json()["variants"]["rep"]["repeats"]
    items = {row["item_id"] for row in manifest(small_data)}
    human_pairs, ranks = _human(small_data)
    per_k = [
        evaluate(
            [ScoreRow(i, "r", samples[i][k], "ok") for i in sorted(items)],
            human_pairs,
            ranks,
            settings=MetricSettings(bootstrap=0),
        ).variants["r"]
        for k in range(3)
    ]
    accuracies = [m.pairwise_accuracy for m in per_k]
    assert spread["n"] == 3 and spread["pairwise_accuracy"]["values"] == accuracies
    assert spread["pairwise_accuracy"]["mean"] == pytest.approx(statistics.fmean(accuracies))
    assert spread["pairwise_accuracy"]["std"] == pytest.approx(statistics.stdev(accuracies))
    assert spread["srcc"]["min"] == pytest.approx(min(m.srcc for m in per_k))
    assert five.metrics_json()["variants"]["rep"]["repeats"]["n"] == 5
    five_samples = expected_samples(small_data, 5)
    assert {line.item_id: line.score for line in five.item_lines if line.variant == "rep"} == {
        i: statistics.median(v) for i, v in five_samples.items()
    }
    # each run's own dir: the repeats=5 run's scores are the medians of five, the repeats=1
    # re-run's are sample 0 alone
    rows = load_scores(five.run_dir / "scores.csv")
    assert {r.item_id: r.score for r in rows} == {
        i: statistics.median(five_samples[i]) for i in items
    }
    rows = load_scores(one.run_dir / "scores.csv")
    assert one.run_dir != five.run_dir
    assert {r.item_id: r.score for r in rows} == {i: samples[i][0] for i in items}


def _human(data):
    from titjudge.config.schema import RunConfig
    from titjudge.run.runner import load_run_data

    config = RunConfig.model_validate(
        {
            "name": "x",
            "data": {
                "manifest": str(data / "manifest.jsonl"),
                "human_pairs": str(data / "pairs.csv"),
            },
            "describer": {"model": "litellm:openai/vlm"},
        }
    )
    _, human = load_run_data(config, None)
    return human.pairs, human.ranks


def test_repeated_pairwise_judge_reports_spread_from_verdicts(small_data, tmp_path):
    judge = {
        "name": "pair",
        "kind": "pairwise",
        "model": "litellm:openai/judge",
        "temperature": 0.5,
        "repeats": 2,
    }
    responder = ModesResponder(small_data)
    with FakeOpenAIServer(responder=responder) as server:
        outcome = titjudge.evaluate(run_config(small_data, server.url, tmp_path, [judge]))
    assert responder.count("pair") == 9 * 2 * 2  # pairs x orders x samples
    entry = outcome.metrics_json()["variants"]["pair"]
    # the loopback judge is deterministic, so both repeats agree with the median verdicts exactly
    assert entry["repeats"]["pairwise_accuracy"]["values"] == [entry["pairwise_accuracy"]] * 2
    assert entry["repeats"]["pairwise_accuracy"]["std"] == 0.0
    line = read_lines(outcome.run_dir / "pairs_pair.jsonl")[0]
    assert len(line["orders"][0]["samples"]) == 2
