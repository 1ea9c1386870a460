"""The hf: backend on tiny Qwen3 (text) and Qwen2.5-VL (vision) checkpoints."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from titjudge.errors import ConfigError, ModelSpecError
from titjudge.models.core.base import GenerateRequest, Generation, PermanentError, TextBackend
from titjudge.models.core.options import ModelOptions
from titjudge.models.local import hf_generate
from titjudge.models.local.hf_generate import render_prompt, run_batch
from titjudge.models.registry import build_text_backend
from titjudge.records.image_input import ImageInput

PROMPTS = [
    "Score it.",
    "Please calculate the semantic similarity score between two texts. " * 3,
    "A cat on a mat.",
    "Describe the lighting, the colour and the mood of the scene in detail, then give a score.",
]


def generate_all(backend: TextBackend, requests: list[GenerateRequest]) -> list[Generation]:
    async def main() -> list[Generation]:
        return await asyncio.gather(*(backend.generate(r) for r in requests))

    return asyncio.run(main())


def one_by_one(backend: TextBackend, requests: list[GenerateRequest]) -> list[Generation]:
    return [generate_all(backend, [r])[0] for r in requests]


# --------------------------------------------------------------------------- text-only LM


@pytest.mark.slow
def test_batched_greedy_equals_one_by_one(qwen3_backend: Any) -> None:
    requests = [GenerateRequest(prompt=p, max_tokens=12) for p in PROMPTS]
    before = len(qwen3_backend.batch_sizes)
    batched = generate_all(qwen3_backend, requests)
    assert qwen3_backend.batch_sizes[before:] == [4]  # one model.generate for all four
    single = one_by_one(qwen3_backend, requests)
    assert [g.text for g in batched] == [g.text for g in single]
    assert [g.tokens_out for g in batched] == [g.tokens_out for g in single]
    assert all(g.text for g in batched)
    assert len({g.tokens_in for g in batched}) == 4  # really mixed lengths, so padding happened


@pytest.mark.slow
def test_token_counts_and_finish_reason(qwen3_backend: Any) -> None:
    request = GenerateRequest(prompt="A cat on a mat.", system="Judge.", max_tokens=7)
    (generation,) = generate_all(qwen3_backend, [request])
    tokenizer = qwen3_backend.engine.tokenizer
    expected_in = len(
        tokenizer(render_prompt(qwen3_backend.engine, request), add_special_tokens=False)[
            "input_ids"
        ]
    )
    assert generation.tokens_in == expected_in
    assert generation.tokens_out is not None
    if generation.finish_reason == "length":
        assert generation.tokens_out == 7
    else:
        assert generation.finish_reason == "stop" and generation.tokens_out <= 7


@pytest.mark.slow
def test_decode_stops_at_eos_and_strips_special_tokens(qwen3_backend: Any) -> None:
    engine = qwen3_backend.engine
    tok = engine.tokenizer
    words = tok(" the cat", add_special_tokens=False)["input_ids"]
    start = tok.convert_tokens_to_ids("<|im_start|>")
    im_end = tok.convert_tokens_to_ids("<|im_end|>")
    ids = [start, *words, im_end, engine.pad_id, engine.pad_id]
    generation = hf_generate._decode_row(engine, 0, ids, 11, GenerateRequest(prompt="x"), None)
    assert (generation.text, generation.tokens_out, generation.finish_reason) == (
        "the cat",
        len(words) + 2,
        "stop",
    )
    truncated = hf_generate._decode_row(engine, 0, words, 11, GenerateRequest(prompt="x"), None)
    assert (truncated.tokens_out, truncated.finish_reason) == (len(words), "length")


@pytest.mark.slow
def test_reasoning_block_is_not_the_answer(qwen3_backend: Any) -> None:
    engine = qwen3_backend.engine
    tok = engine.tokenizer
    think, end_think = engine.think_ids
    words = tok(" the cat", add_special_tokens=False)["input_ids"]
    assert hf_generate._answer_start(engine, [think, 9, 9, end_think, *words]) == 4
    assert hf_generate._answer_start(engine, [think, 9, 9]) == 3  # budget ran out while thinking
    assert hf_generate._answer_start(engine, words) == 0


@pytest.mark.slow
def test_logprobs_match_a_teacher_forced_forward_pass(qwen3_backend: Any) -> None:
    request = GenerateRequest(prompt="A cat on a mat.", max_tokens=6, top_logprobs=3)
    (generation,) = generate_all(qwen3_backend, [request])
    engine = qwen3_backend.engine
    assert generation.logprobs is not None and generation.tokens_out is not None
    content = generation.tokens_out - (generation.finish_reason == "stop")
    assert len(generation.logprobs) == content
    for entry in generation.logprobs:
        values = list(entry.top.values())
        assert 1 <= len(values) <= 3
        assert values == sorted(values, reverse=True)
        assert all(v <= 0 for v in values) and sum(math.exp(v) for v in values) <= 1 + 1e-6
        # greedy: the chosen token is the most likely one
        assert entry.token in entry.top and entry.logprob == pytest.approx(values[0], abs=1e-6)
    # an independent greedy decode, one full forward pass per step, gives the same tokens and values
    ids = engine.tokenizer(render_prompt(engine, request), add_special_tokens=False)["input_ids"]
    with torch.inference_mode():
        for entry in generation.logprobs:
            logp = torch.log_softmax(
                engine.model(torch.tensor([ids])).logits[0, -1].float(), dim=-1
            )
            chosen = int(logp.argmax())
            assert engine.piece(chosen) == entry.token
            assert entry.logprob == pytest.approx(float(logp[chosen]), abs=1e-4)
            top3 = [engine.piece(int(i)) for i in logp.topk(3).indices]
            assert list(entry.top)[: len(set(top3))] == list(dict.fromkeys(top3))
            ids.append(chosen)


@pytest.mark.slow
def test_no_logprobs_unless_asked(qwen3_backend: Any) -> None:
    (generation,) = generate_all(qwen3_backend, [GenerateRequest(prompt="hi", max_tokens=3)])
    assert generation.logprobs is None


@pytest.mark.slow
def test_sampling_is_seeded_per_request_not_per_batch(qwen3_backend: Any) -> None:
    sampled = GenerateRequest(prompt="A cat on a mat.", max_tokens=10, temperature=1.0)
    others = [GenerateRequest(prompt=p, max_tokens=10, temperature=1.0) for p in PROMPTS[:3]]
    alone = generate_all(qwen3_backend, [sampled])[0].text
    in_batch = generate_all(qwen3_backend, [*others, sampled])[-1].text
    assert alone == in_batch
    resampled = generate_all(qwen3_backend, [dataclasses.replace(sampled, sample=1)])[0].text
    greedy = generate_all(qwen3_backend, [dataclasses.replace(sampled, temperature=0.0)])[0].text
    assert resampled != alone
    assert greedy != alone


@pytest.mark.slow
def test_enable_thinking_toggles_the_template(qwen3_path: Path, qwen3_backend: Any) -> None:
    thinking = build_text_backend(
        f"hf:{qwen3_path}", ModelOptions(params={"enable_thinking": True})
    )
    request = GenerateRequest(prompt="Score it.")
    default_prompt = render_prompt(qwen3_backend.engine, request)
    thinking_prompt = render_prompt(thinking.engine, request)  # type: ignore[attr-defined]
    assert default_prompt.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")
    assert thinking_prompt.endswith("<|im_start|>assistant\n")
    assert thinking.describe()["enable_thinking"] is True


@pytest.mark.slow
def test_system_and_history_are_rendered_in_order(qwen3_backend: Any) -> None:
    request = GenerateRequest(
        prompt="Reply again.",
        system="Judge.",
        history=(("user", "Score it."), ("assistant", "{oops")),
    )
    rendered = render_prompt(qwen3_backend.engine, request)
    assert rendered.startswith(
        "<|im_start|>system\nJudge.<|im_end|>\n<|im_start|>user\nScore it.<|im_end|>\n"
        "<|im_start|>assistant\n{oops<|im_end|>\n<|im_start|>user\nReply again.<|im_end|>\n"
    )


@pytest.mark.slow
def test_text_model_refuses_images(qwen3_backend: Any, make_png: Callable[..., ImageInput]) -> None:
    assert (
        qwen3_backend.capabilities.vision is False and qwen3_backend.capabilities.logprobs is True
    )
    with pytest.raises(PermanentError, match="text-only model cannot take images"):
        generate_all(
            qwen3_backend, [GenerateRequest(prompt="x", images=(make_png(16, 16, (1, 2, 3)),))]
        )


@pytest.mark.slow
def test_event_loop_keeps_running_during_generation(qwen3_backend: Any) -> None:
    async def main() -> int:
        ticks = 0
        done = asyncio.Event()

        async def ticker() -> None:
            nonlocal ticks
            while not done.is_set():
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(ticker())
        await qwen3_backend.generate(GenerateRequest(prompt=PROMPTS[3], max_tokens=40))
        done.set()
        await task
        return ticks

    assert asyncio.run(main()) >= 5


@pytest.mark.slow
def test_out_of_memory_splits_the_batch(
    qwen3_backend: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = hf_generate._generate
    sizes: list[int] = []

    def picky(
        engine: Any, items: list[Any], max_tokens: int, temperature: float
    ) -> list[Generation]:
        sizes.append(len(items))
        if len(items) > 1 or items[0].request.prompt == "too big":
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2 GiB")
        return real(engine, items, max_tokens, temperature)

    monkeypatch.setattr(hf_generate, "_generate", picky)
    requests = [GenerateRequest(prompt=p, max_tokens=3) for p in ("a", "b", "too big", "c")]
    results = run_batch(qwen3_backend.engine, (3, 0.0), requests)
    assert sizes == [4, 2, 1, 1, 2, 1, 1]
    assert [isinstance(r, Generation) for r in results] == [True, True, False, True]
    assert isinstance(results[2], PermanentError) and "out of accelerator memory" in str(results[2])


@pytest.mark.slow
def test_describe_records_placement(qwen3_backend: Any, qwen3_path: Path) -> None:
    facts = qwen3_backend.describe()
    assert (
        facts["backend"] == "hf" and facts["kind"] == "causal_lm" and facts["model_type"] == "qwen3"
    )
    assert (facts["dtype"], facts["device"], facts["batch_size"]) == ("float32", "cpu", 4)
    assert facts["path"] == str(qwen3_path.resolve()) and len(facts["fingerprint"]) == 16
    default = build_text_backend(f"hf:{qwen3_path}", ModelOptions())
    assert default.batch_size == 8 and default.default_concurrency == 16  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- errors


def test_bad_path_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    with pytest.raises(ModelSpecError, match=f"no model folder at {missing}"):
        build_text_backend(f"hf:{missing}", ModelOptions())


@pytest.mark.slow
def test_unknown_param_is_a_config_error(qwen3_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown params key 'enable_thinkin'"):
        build_text_backend(f"hf:{qwen3_path}", ModelOptions(params={"enable_thinkin": True}))


@pytest.mark.slow
def test_encoder_checkpoint_is_not_a_generator(st_path: Path) -> None:
    with pytest.raises(ModelSpecError, match="architecture BertModel has no text-generation head"):
        build_text_backend(f"hf:{st_path}", ModelOptions())


# --------------------------------------------------------------------------- vision-language


@pytest.mark.slow
def test_vlm_batch_with_images_equals_one_by_one(
    vl_backend: Any, make_png: Callable[..., ImageInput]
) -> None:
    assert vl_backend.kind == "vlm" and vl_backend.capabilities.vision is True
    requests = [
        GenerateRequest(
            prompt="Describe the image.", images=(make_png(48, 32, (200, 30, 30)),), max_tokens=8
        ),
        GenerateRequest(
            prompt="No image here, only a longer text prompt to pad against.", max_tokens=8
        ),
        GenerateRequest(
            prompt="Two images.",
            images=(make_png(16, 24, (0, 90, 200)), make_png(32, 32, (9, 9, 9))),
            system="Be brief.",
            max_tokens=8,
        ),
        GenerateRequest(
            prompt="Describe.", images=(make_png(40, 40, (10, 200, 10)),), max_tokens=8
        ),
    ]
    before = len(vl_backend.batch_sizes)
    batched = generate_all(vl_backend, requests)
    assert vl_backend.batch_sizes[before:] == [4]
    single = one_by_one(vl_backend, requests)
    assert [g.text for g in batched] == [g.text for g in single]
    assert all(g.text for g in batched)


@pytest.mark.slow
def test_vlm_counts_image_tokens(vl_backend: Any, make_png: Callable[..., ImageInput]) -> None:
    # 48x32 px exceeds 32*32 px, so it is resized to 32x24 (multiples of patch 4 * merge 2):
    # 8x6 patches of 4 px, merged 2x2 -> 12 image tokens replace the one <|image_pad|>.
    request = GenerateRequest(
        prompt="Describe the image.", images=(make_png(48, 32, (1, 2, 3)),), max_tokens=2
    )
    (generation,) = generate_all(vl_backend, [request])
    rendered = render_prompt(vl_backend.engine, request)
    assert rendered.count("<|vision_start|><|image_pad|><|vision_end|>Describe the image.") == 1
    text_tokens = len(vl_backend.engine.tokenizer(rendered, add_special_tokens=False)["input_ids"])
    assert generation.tokens_in == text_tokens - 1 + 12


@pytest.mark.slow
def test_vlm_bad_image_fails_only_its_request(
    vl_backend: Any, make_png: Callable[..., ImageInput]
) -> None:
    broken = ImageInput(data=b"\x89PNG not really")
    requests = [
        GenerateRequest(prompt="Describe.", images=(make_png(16, 16, (5, 5, 5)),), max_tokens=3),
        GenerateRequest(prompt="Describe.", images=(broken,), max_tokens=3),
    ]

    async def main() -> list[Any]:
        return await asyncio.gather(
            *(vl_backend.generate(r) for r in requests), return_exceptions=True
        )

    good, bad = asyncio.run(main())
    assert isinstance(good, Generation) and good.text
    assert isinstance(bad, PermanentError) and f"image sha256 {broken.sha256[:12]}" in str(bad)


@pytest.mark.slow
def test_hub_id_is_served_from_the_hf_cache(
    qwen3_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hf:org/name` resolves from the Hugging Face cache layout without the network."""
    from huggingface_hub import constants

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--tiny-org--tiny-qwen3"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    shutil.copytree(qwen3_path, repo / "snapshots" / commit)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    backend = build_text_backend("hf:tiny-org/tiny-qwen3", ModelOptions(batch_size=2))
    facts = backend.describe()
    assert backend.checkpoint.local_files_only is True  # type: ignore[attr-defined]
    assert (facts["revision"], facts["path"], facts["kind"]) == (commit, None, "causal_lm")
    (generation,) = generate_all(backend, [GenerateRequest(prompt="A cat on a mat.", max_tokens=5)])
    assert generation.tokens_out is not None and 1 <= generation.tokens_out <= 5


@pytest.mark.slow
def test_repetition_penalty_ignores_padding(qwen3_path: Path) -> None:
    penalised = build_text_backend(
        f"hf:{qwen3_path}", ModelOptions(batch_size=4, params={"repetition_penalty": 1.5})
    )
    requests = [GenerateRequest(prompt=p, max_tokens=12) for p in PROMPTS]
    batched = generate_all(penalised, requests)
    assert [g.text for g in batched] == [g.text for g in one_by_one(penalised, requests)]
    plain = one_by_one(build_text_backend(f"hf:{qwen3_path}", ModelOptions()), requests)
    assert [g.text for g in batched] != [g.text for g in plain]  # the penalty did something


def test_penalty_processor_by_hand() -> None:
    scores = torch.FloatTensor([[2.0, -2.0, 1.0, 4.0]])
    ids = torch.LongTensor([[3, 3, 0, 1]])  # two left pads (id 3), then tokens 0 and 1
    out = hf_generate.PaddingAwareRepetitionPenalty(2.0, torch.tensor([2]))(ids, scores)
    assert out.tolist() == [[1.0, -4.0, 1.0, 4.0]]  # id 3 untouched: it only appears as padding
