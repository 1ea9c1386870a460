"""The whole graph on tiny random-weight checkpoints, loaded through the real hf:/embed: loaders.

Random weights write gibberish, so the LLM judge cannot produce valid JSON: every one of
its items must end as a failure with the validation error, never as a score, while the
embedding judge scores every described item.
"""

import json

import pytest
import torch
from doubles.tiny_models import (
    build_tiny_qwen3,
    build_tiny_qwen3_embedding,
    build_tiny_qwen25_vl,
)

import titjudge


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tiny")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield {
        "vl": build_tiny_qwen25_vl(root / "vl"),
        "lm": build_tiny_qwen3(root / "lm"),
        "embed": build_tiny_qwen3_embedding(root / "embed"),
    }
    torch.set_num_threads(before)


@pytest.mark.slow
def test_local_describer_and_judges(synth_data, tiny, tmp_path):
    local = {"device": "cpu", "batch_size": 4, "max_attempts": 1}
    config = {
        "name": "local",
        "data": {
            "manifest": str(synth_data / "manifest.jsonl"),
            "human_pairs": str(synth_data / "pairs.csv"),
        },
        # random weights never stop on their own: keep the cut descriptions (marked truncated)
        "describer": {
            "model": f"hf:{tiny['vl']}",
            "max_tokens": 24,
            "on_truncation": "keep",
            **local,
        },
        "judges": [
            {
                "name": "tit_score",
                "kind": "embedding",
                "model": f"embed:{tiny['embed']}",
                "device": "cpu",
            },
            {
                "name": "tit_llm",
                "kind": "llm",
                "model": f"hf:{tiny['lm']}",
                "max_tokens": 16,
                **local,
            },
        ],
        "run": {
            "cache_dir": str(tmp_path / "cache"),
            "out": str(tmp_path / "runs"),
            "concurrency": 8,
        },
    }
    outcome = titjudge.evaluate(config, limit=8)
    described = [
        line
        for line in outcome.item_lines
        if line.variant == "tit_score" and line.description is not None
    ]
    assert described, "the tiny VLM produced no text at all"
    counts = outcome.summary.variants
    assert counts["tit_score"].ok == len(described)
    assert counts["tit_llm"].ok == 0 and counts["tit_llm"].failed == 8
    lines = [
        json.loads(line) for line in (outcome.run_dir / "items.jsonl").read_text().splitlines()
    ]
    for line in lines:
        if line["variant"] == "tit_llm" and line["description"] is not None:
            # 16 tokens of gibberish hit the limit: a cut verdict is named as such, never re-asked
            assert line["score"] is None
            assert line["error"].startswith("truncated: the reply stopped at the token limit")
            assert line["describer"]["truncated"] is True
            assert line["describer"]["finish_reason"] == "length"
    resolved = (outcome.run_dir / "config.yaml").read_text()
    assert "hf" in resolved and str(tiny["vl"]) in resolved

    again = titjudge.evaluate(config, limit=8)  # all served from the cache except the failures
    assert again.summary.cache.hits >= len(described) * 2
    assert [line.description for line in again.item_lines] == [
        line.description for line in outcome.item_lines
    ]


@pytest.mark.slow
def test_loading_local_models_prints_no_third_party_bar(synth_data, tiny, tmp_path, capfd):
    """transformers' "Loading weights" bar (tqdm) and huggingface_hub's bars stay off: the
    run's own progress is the only one. They are switched on first, as in a fresh process."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.enable_progress_bar()
    config = {
        "name": "bars",
        "data": {"manifest": str(synth_data / "manifest.jsonl")},
        "describer": {"model": f"replay:{synth_data / 'descriptions.jsonl'}"},
        "judges": [
            {
                "name": "emb",
                "kind": "embedding",
                "model": f"embed:{tiny['embed']}",
                "device": "cpu",
            },
            {
                "name": "llm",
                "kind": "llm",
                "model": f"hf:{tiny['lm']}",
                "max_tokens": 4,
                "device": "cpu",
                "max_attempts": 1,
            },
        ],
        "run": {
            "cache_dir": str(tmp_path / "cache"),
            "out": str(tmp_path / "runs"),
            "concurrency": 4,
        },
    }
    capfd.readouterr()
    outcome = titjudge.evaluate(config, limit=2)
    err = capfd.readouterr().err
    assert outcome.summary.variants["emb"].ok == 2
    assert "it/s" not in err and "%|" not in err and "Loading weights" not in err, err
