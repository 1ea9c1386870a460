"""One item, one path (issue 29): an item finished by the graph on a fresh run and by the
cached pass on a fully cached re-run comes out the same, for a config with a fallback that
fires, a repeated judge and a repeated pairwise judge.

Both runs are in-process (the re-run through the CLI's main); a spy on the graph's cached
pass (`titjudge.agents.graph.resolve_cached`) shows that on the re-run every item went
through it and none went on to the item workers. A fresh interpreter's `sys.modules` showed the same at ~7 s of
CPU; tests/agents/test_lazy_loading.py keeps that check of what a cached re-run imports. The LLM judge scores with `score_mode: expected`, and the loopback
server withholds the score's log-probabilities for a few items: a valid (so cached) verdict
that the judge cannot score, so the fallback to the embedding judge fires on both runs
with nothing asked again. The benchmark is 2 prompts x 4 models (`one_path_data`, 8 items,
12 pairs; the shared `synth_data` has 16 items, ~130 model calls a run where this makes ~65):
the comparison is item by item and pair by pair, nothing that grows with the benchmark.
"""

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from doubles.embeddings_server import EmbeddingsServer
from doubles.server import FakeOpenAIServer, Reply, TokenLogprob
from judges.judge_helpers import ModesResponder, run_config
from run_dirs import latest_run

import titjudge
import titjudge.agents.graph as graph_module
from titjudge.cli import main

#: the benchmark's size (`one_path_data`)
N_PROMPTS, N_MODELS = 2, 4
N_ITEMS = N_PROMPTS * N_MODELS
#: items whose expected score cannot be computed (every fourth one)
POISONED = range(0, N_ITEMS, 4)

#: what may differ between a fresh run and its cached re-run: timings, cache flags, when it ran
VOLATILE = {"latency", "cached", "wall_seconds", "created", "started", "finished"}


@pytest.fixture(scope="module")
def one_path_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 2 prompts x 4 models, with stored descriptions."""
    return synthetic(N_PROMPTS, N_MODELS)


class WithheldLogprobs(ModesResponder):
    """ModesResponder, but an expected-score request about a poisoned item's description gets
    its verdict with log-probabilities that hold no score token."""

    def __init__(self, data: Path, poisoned: set[str]):
        super().__init__(data)
        self.poisoned = poisoned

    def __call__(self, request):
        reply = super().__call__(request)
        if request.logprobs and any(text in request.text for text in self.poisoned):
            return Reply(data=reply.data, logprobs=(TokenLogprob("{}", -0.01),))
        return reply


def _config(data: Path, url: str, embed_url: str, tmp: Path) -> dict[str, Any]:
    judges = [
        {
            "name": "tit_llm",
            "kind": "llm",
            "model": "litellm:openai/judge",
            "score_mode": "expected",
            "fallback": "tit_embed",
        },
        {
            "name": "tit_embed",
            "kind": "embedding",
            "model": "litellm:hosted_vllm/Qwen/Qwen3-Embedding-8B",
            "api_base": embed_url,
        },
        {"name": "rep", "kind": "llm", "model": "litellm:openai/judge", "temperature": 0.7},
        {"name": "lexical", "kind": "lexical"},
        {"name": "pair", "kind": "pairwise", "model": "litellm:openai/judge"},
    ]
    config = run_config(data, url, tmp, judges, name="one_path")
    config["judges"][2]["repeats"] = 3
    config["judges"][4].update(temperature=0.5, repeats=2)
    return config


def _strip(value: Any, run_id: str) -> Any:
    """`value` without its volatile keys, its run's id (in a path or a field) made `<run>`."""
    if isinstance(value, dict):
        return {k: _strip(v, run_id) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [_strip(v, run_id) for v in value]
    if isinstance(value, str):
        return value.replace(run_id, "<run>")
    return value


def _outputs(run: Path) -> dict[str, Any]:
    def lines(name: str) -> list[Any]:
        text = (run / name).read_text()
        return [_strip(json.loads(line), run.name) for line in text.splitlines() if line.strip()]

    return {
        "scores.csv": (run / "scores.csv").read_text().replace(run.name, "<run>"),
        "metrics.json": _strip(json.loads((run / "metrics.json").read_text()), run.name),
        "items.jsonl": lines("items.jsonl"),
        "pairs_pair.jsonl": lines("pairs_pair.jsonl"),
    }


@pytest.mark.slow
def test_fresh_graph_and_cached_pass_write_the_same_run(
    one_path_data, tmp_path, monkeypatch, capsys
):
    rows = [
        json.loads(line)
        for line in (one_path_data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    poisoned = {rows[i]["description"] for i in POISONED}
    responder = WithheldLogprobs(one_path_data, poisoned)
    with FakeOpenAIServer(responder=responder) as server, EmbeddingsServer(dim=32) as embed:
        config = _config(one_path_data, server.url, embed.url, tmp_path)
        fresh = titjudge.evaluate(config)
        fell_back = fresh.summary.variants["tit_llm"].fallback
        assert fell_back == len(POISONED) and fresh.summary.variants["tit_llm"].ok == N_ITEMS - len(
            POISONED
        )
        assert fresh.summary.variants["rep"].ok == N_ITEMS
        asked, embedded = server.stats.total, len(embed.requests)
        first = _outputs(fresh.run_dir)

        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config))
        passes = []  # (answered, left to the item workers) of the re-run's cached pass
        real_pass = graph_module.resolve_cached

        async def resolve_cached(items, ctx):
            answered, rest = await real_pass(items, ctx)
            passes.append((len(answered), len(rest)))
            return answered, rest

        monkeypatch.setattr(graph_module, "resolve_cached", resolve_cached)
        assert main(["run", str(path)]) == 0, capsys.readouterr().err
        assert (server.stats.total, len(embed.requests)) == (asked, embedded)  # nothing asked
    assert passes == [(N_ITEMS, 0)]  # every item by the cached pass, none by a worker
    again = latest_run(tmp_path / "runs" / "one_path")
    assert again != fresh.run_dir
    second = _outputs(again)
    for name, found in first.items():
        assert second[name] == found, name
