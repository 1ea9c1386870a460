"""The tiny checkpoints look like the real ones to transformers' own loaders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from doubles.tiny_models import (
    QWEN3_THINK_TOKENS,
    QWEN_SPECIAL_TOKENS,
    build_qwen_tokenizer,
    build_tiny_qwen3_embedding,
)
from transformers import AutoConfig, AutoModel, AutoTokenizer

pytestmark = pytest.mark.doubles  # tests of the tiny checkpoints in tests/doubles/tiny_models.py


@pytest.mark.slow
def test_vl_config_token_ids_match_tokenizer(vl_path: Path) -> None:
    config = AutoConfig.from_pretrained(vl_path)
    tokenizer = AutoTokenizer.from_pretrained(vl_path)
    ids = tokenizer.convert_tokens_to_ids
    assert config.image_token_id == ids("<|image_pad|>")
    assert config.video_token_id == ids("<|video_pad|>")
    assert config.vision_start_token_id == ids("<|vision_start|>")
    assert config.vision_end_token_id == ids("<|vision_end|>")
    head_dim = config.text_config.hidden_size // config.text_config.num_attention_heads
    assert sum(config.text_config.rope_parameters["mrope_section"]) == head_dim // 2
    assert config.text_config.vocab_size == len(tokenizer)
    assert config.vision_config.out_hidden_size == config.text_config.hidden_size


@pytest.mark.slow
def test_vl_saved_like_a_hub_checkpoint(vl_path: Path) -> None:
    preprocessor = json.loads((vl_path / "preprocessor_config.json").read_text())
    assert preprocessor["processor_class"] == "Qwen2_5_VLProcessor"
    assert preprocessor["image_processor_type"] == "Qwen2VLImageProcessor"
    assert (preprocessor["patch_size"], preprocessor["merge_size"]) == (4, 2)
    generation = json.loads((vl_path / "generation_config.json").read_text())
    tokenizer = AutoTokenizer.from_pretrained(vl_path)
    assert generation["eos_token_id"] == [
        tokenizer.convert_tokens_to_ids("<|im_end|>"),
        tokenizer.convert_tokens_to_ids("<|endoftext|>"),
    ]


def test_tokenizer_covers_any_text_and_strips_specials() -> None:
    tokenizer = build_qwen_tokenizer(thinking=True)
    text = "Zebra, 42 € ünïcödé — 漢字 <|im_start|>user\n<think>"
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids) == text  # byte-level BPE: lossless for any string
    assert tokenizer.decode(ids, skip_special_tokens=True) == text.replace("<|im_start|>", "")
    # special tokens are single tokens, ids 0..6 in declaration order
    assert [tokenizer.convert_tokens_to_ids(t) for t in QWEN_SPECIAL_TOKENS] == list(range(7))
    for token in QWEN3_THINK_TOKENS:
        assert len(tokenizer(token)["input_ids"]) == 1
    # common corpus words are whole tokens
    assert [len(tokenizer(w)["input_ids"]) for w in (" the", " image", " cat")] == [1, 1, 1]


@pytest.mark.slow
def test_qwen3_template_honours_enable_thinking(qwen3_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(qwen3_path)
    messages = [{"role": "system", "content": "Judge."}, {"role": "user", "content": "Score it."}]
    off = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=False
    )
    on = tokenizer.apply_chat_template(
        messages, tokenize=False, add_generation_prompt=True, enable_thinking=True
    )
    prefix = "<|im_start|>system\nJudge.<|im_end|>\n<|im_start|>user\nScore it.<|im_end|>\n<|im_start|>assistant\n"
    assert on == prefix
    assert off == prefix + "<think>\n\n</think>\n\n"


@pytest.mark.slow
def test_qwen3_template_drops_reasoning_of_earlier_turns(qwen3_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(qwen3_path)
    messages = [
        {"role": "user", "content": "Q"},
        {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nA"},
        {"role": "user", "content": "again"},
    ]
    rendered = tokenizer.apply_chat_template(messages, tokenize=False)
    assert "hmm" not in rendered
    assert "<|im_start|>assistant\nA<|im_end|>" in rendered


@pytest.mark.slow
def test_embedding_checkpoint_pads_left_and_appends_eos(qwen3_embedding_path: Path) -> None:
    tokenizer = AutoTokenizer.from_pretrained(qwen3_embedding_path)
    assert tokenizer.padding_side == "left"
    batch = tokenizer(["a cat", "a cat on the mat today"], padding=True)
    eos = tokenizer.convert_tokens_to_ids("<|endoftext|>")
    assert [row[-1] for row in batch["input_ids"]] == [eos, eos]
    assert batch["attention_mask"][0][0] == 0 and batch["attention_mask"][1][0] == 1
    model = AutoModel.from_pretrained(qwen3_embedding_path)
    assert type(model).__name__ == "Qwen3Model"


@pytest.mark.slow
def test_sentence_transformer_layout(st_path: Path) -> None:
    modules = json.loads((st_path / "modules.json").read_text())
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == [
        "Transformer",
        "Pooling",
        "Normalize",
    ]
    pooling = json.loads((st_path / "1_Pooling" / "config.json").read_text())
    assert pooling["pooling_mode_mean_tokens"] is True
    assert pooling["word_embedding_dimension"] == AutoConfig.from_pretrained(st_path).hidden_size


@pytest.mark.slow
def test_builds_are_deterministic(tmp_path: Path, qwen3_embedding_path: Path) -> None:
    again = build_tiny_qwen3_embedding(tmp_path / "again")
    for name in ("model.safetensors", "tokenizer.json", "config.json"):
        assert (again / name).read_bytes() == (qwen3_embedding_path / name).read_bytes(), name
