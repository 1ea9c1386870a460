"""Tiny random-weight checkpoints built offline, shaped like the real models we load.

Tests, benchmarks and the offline example need a Qwen2.5-VL describer, a Qwen3 judge
and an embedding model without network access. These builders write folders that the
`hf:` and `embed:` loaders read exactly as they read a downloaded checkpoint: same
config classes, tokenizer class, special tokens and chat templates, just tiny sizes and
random weights (seeded, so every build gives the same weights and tokenizer).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Qwen chat / vision special tokens, in the order they get ids 0..6 in the tiny vocab.
QWEN_SPECIAL_TOKENS: tuple[str, ...] = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)
#: Qwen3 reasoning markers: added tokens that are *not* special (as in the real Qwen3).
QWEN3_THINK_TOKENS: tuple[str, ...] = ("<think>", "</think>")

#: The Qwen2.5-VL chat template (ChatML with image / video placeholders).
QWEN25_VL_CHAT_TEMPLATE = (
    "{% set image_count = namespace(value=0) %}{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}<|im_start|>system\n"
    "You are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}<|im_end|>\n"
    "{% else %}{% for content in message['content'] %}"
    "{% if content['type'] == 'image' or 'image' in content or 'image_url' in content %}"
    "{% set image_count.value = image_count.value + 1 %}"
    "<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif content['type'] == 'video' or 'video' in content %}"
    "<|vision_start|><|video_pad|><|vision_end|>"
    "{% elif 'text' in content %}{{ content['text'] }}{% endif %}{% endfor %}<|im_end|>\n"
    "{% endif %}{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: The Qwen3 chat template, reduced to what matters here: ChatML, reasoning removed
#: from earlier assistant turns, and `enable_thinking=False` pre-filling an empty think block.
QWEN3_CHAT_TEMPLATE = (
    "{%- for message in messages %}"
    "{%- set content = message['content'] if message['content'] is string else '' %}"
    "{%- if message['role'] == 'assistant' and '</think>' in content %}"
    "{%- set content = content.split('</think>')[-1].lstrip('\\n') %}{%- endif %}"
    "{{- '<|im_start|>' + message['role'] + '\\n' + content + '<|im_end|>\\n' }}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}"
    "{%- if enable_thinking is defined and enable_thinking is false %}"
    "{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}{%- endif %}"
)

#: Generic English (image-description flavoured) so common words become single tokens.
_CORPUS = """
A photograph of a small red cat sitting on a woven mat near a wooden door. The morning
light falls through a tall window and paints warm yellow stripes across the floor. In the
background a green plant grows in a blue ceramic pot, and a stack of old books rests on a
low table. The image is sharp, with soft shadows and a calm, quiet mood.
A wide landscape at sunset: mountains covered in snow rise above a dark pine forest, a
river winds through the valley and reflects the orange and purple sky. Birds fly in a loose
line over the water. The composition follows the rule of thirds, with the horizon placed
low and the clouds filling most of the frame.
A busy city street at night, wet with rain. Neon signs glow in pink, cyan and gold, people
walk under black umbrellas, a yellow taxi waits at the corner, and tall glass buildings
vanish into the fog. The style is cinematic, with strong contrast and deep blue tones.
A close portrait of an elderly woman with silver hair and kind brown eyes. She wears a
knitted scarf and smiles gently. The background is blurred, the lighting is soft and comes
from the left side, and the colours are muted and natural, like an oil painting.
A cartoon illustration of a friendly robot holding a bunch of balloons in a park. Children
play on the grass, a dog chases a ball, and white clouds drift across a bright summer sky.
The lines are clean, the shapes are simple, and the palette is cheerful and saturated.
Describe the image in detail: the main subject, the environment, the composition and
framing, the lighting and colour, the art style, and the small details that set the mood.
Please calculate the semantic similarity score between two texts. Answer with a number
from one to ten and a short reason. The score is high when both texts describe the same
scene, objects, attributes and relations, and low when they disagree or miss key parts.
Quarterly tax report, revenue, budget, invoice, total, account, market, price, value.
"""


def _corpus_lines() -> list[str]:
    lines = [line.strip() for line in _CORPUS.strip().splitlines() if line.strip()]
    return lines * 4  # repeat so frequent pairs win merges deterministically


def _seed(seed: int) -> None:
    import torch

    torch.manual_seed(seed)


# --------------------------------------------------------------------------- tokenizers


def build_qwen_tokenizer(
    thinking: bool = False,
    eos_token: str = "<|im_end|>",
    padding_side: str = "right",
    vocab_size: int = 640,
) -> Any:
    """A byte-level BPE `Qwen2Tokenizer` (any text tokenises) with the Qwen special tokens."""
    from tokenizers import AddedToken, Regex, Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import BPE
    from tokenizers.trainers import BpeTrainer
    from transformers import Qwen2Tokenizer
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    raw = Tokenizer(BPE(unk_token=None))
    raw.normalizer = normalizers.NFC()
    raw.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=list(QWEN_SPECIAL_TOKENS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    raw.train_from_iterator(_corpus_lines(), trainer)
    model = json.loads(raw.to_str())["model"]
    tokenizer = Qwen2Tokenizer(
        vocab=model["vocab"],
        merges=[tuple(pair) for pair in model["merges"]],  # type: ignore[misc]
        eos_token=eos_token,
        pad_token="<|endoftext|>",
        model_max_length=32768,
        padding_side=padding_side,
    )
    tokenizer.add_tokens(
        [AddedToken(tok, special=True, normalized=False) for tok in QWEN_SPECIAL_TOKENS]
    )
    if thinking:
        tokenizer.add_tokens(
            [AddedToken(tok, special=False, normalized=False) for tok in QWEN3_THINK_TOKENS]
        )
    return tokenizer


def build_wordpiece_tokenizer(vocab_size: int = 600) -> Any:
    """An uncased WordPiece `BertTokenizer` like all-MiniLM-L6-v2's ([UNK] covers unseen characters)."""
    from tokenizers import Tokenizer, normalizers, pre_tokenizers
    from tokenizers.models import WordPiece
    from tokenizers.trainers import WordPieceTrainer
    from transformers import BertTokenizer

    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    raw = Tokenizer(WordPiece(unk_token="[UNK]"))
    raw.normalizer = normalizers.BertNormalizer(lowercase=True)
    raw.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    alphabet = [chr(c) for c in range(33, 127)]
    trainer = WordPieceTrainer(
        vocab_size=vocab_size,
        special_tokens=specials,
        initial_alphabet=alphabet,
    )
    raw.train_from_iterator(_corpus_lines(), trainer)
    vocab = json.loads(raw.to_str())["model"]["vocab"]
    return BertTokenizer(vocab=vocab, do_lower_case=True, model_max_length=128)


# --------------------------------------------------------------------------- checkpoints


def _token_ids(tokenizer: Any, tokens: tuple[str, ...]) -> dict[str, int]:
    ids = {tok: tokenizer.convert_tokens_to_ids(tok) for tok in tokens}
    missing = [
        tok
        for tok, i in ids.items()
        if i is None or i == tokenizer.unk_token_id and tok != tokenizer.unk_token
    ]
    if missing:
        raise RuntimeError(f"tiny tokenizer lacks special tokens {missing}")
    return ids


def _chat_generation_config(tokenizer: Any) -> Any:
    from transformers import GenerationConfig

    ids = _token_ids(tokenizer, ("<|im_end|>", "<|endoftext|>"))
    return GenerationConfig(
        eos_token_id=[ids["<|im_end|>"], ids["<|endoftext|>"]], pad_token_id=ids["<|endoftext|>"]
    )


#: the transformer shape shared by the tiny Qwen3 causal LM and embedding model
TINY_QWEN3: dict[str, Any] = {
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 16,
}


def _tiny_qwen3(seed: int, head_dim: int) -> tuple[Any, Any]:
    """(model, tokenizer): the 2-layer Qwen3 judge with Qwen3's `enable_thinking` template."""
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = build_qwen_tokenizer(thinking=True)
    tokenizer.chat_template = QWEN3_CHAT_TEMPLATE
    ids = _token_ids(tokenizer, ("<|endoftext|>", "<|im_end|>"))
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        **{**TINY_QWEN3, "head_dim": head_dim},
        max_position_embeddings=4096,
        initializer_range=0.2,
        tie_word_embeddings=True,
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    _seed(seed)
    model = Qwen3ForCausalLM(config).eval()
    model.generation_config = _chat_generation_config(tokenizer)
    return model, tokenizer


def build_tiny_qwen3(path: str | Path, seed: int = 0) -> Path:
    """A 2-layer Qwen3 causal LM (the judge), with Qwen3's `enable_thinking` chat template."""
    path = Path(path)
    model, tokenizer = _tiny_qwen3(seed, TINY_QWEN3["head_dim"])
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_qwen3_gguf(path: str | Path, seed: int = 0) -> tuple[Path, Path]:
    """The tiny Qwen3 judge twice: as a transformers folder and as one float32 GGUF file
    written the way llama.cpp's converter lays it out (its tensor names and metadata keys,
    gguf-py's; a byte-level BPE tokenizer as `gpt2` with the Qwen pre-tokenizer, the chat
    template in `tokenizer.chat_template`). Returns (folder, file). Its attention heads are
    128 wide: transformers reads no head width from a qwen3 GGUF and takes Qwen3's 128."""
    import gguf

    path = Path(path)
    model, tokenizer = _tiny_qwen3(seed, 128)
    config = model.config
    ids = _token_ids(tokenizer, ("<|endoftext|>", "<|im_end|>"))
    folder = path / "folder"
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)

    file = path / "tiny-qwen3-f32.gguf"
    writer = gguf.GGUFWriter(str(file), "qwen3")
    writer.add_name("tiny-qwen3")
    writer.add_context_length(config.max_position_embeddings)
    writer.add_embedding_length(config.hidden_size)
    writer.add_block_count(config.num_hidden_layers)
    writer.add_feed_forward_length(config.intermediate_size)
    writer.add_head_count(config.num_attention_heads)
    writer.add_head_count_kv(config.num_key_value_heads)
    writer.add_key_length(config.head_dim)
    writer.add_value_length(config.head_dim)
    writer.add_rope_freq_base(float(config.rope_parameters["rope_theta"]))
    writer.add_layer_norm_rms_eps(config.rms_norm_eps)
    writer.add_vocab_size(len(tokenizer))
    raw = json.loads(tokenizer.backend_tokenizer.to_str())
    vocab = {**raw["model"]["vocab"], **{a["content"]: a["id"] for a in raw["added_tokens"]}}
    tokens = sorted(vocab, key=vocab.__getitem__)
    # llama.cpp's types: special added tokens are control, other added ones (<think>) user
    # defined, so a reader keeps both whole
    added = {a["id"]: a["special"] for a in raw["added_tokens"]}
    kinds = {True: gguf.TokenType.CONTROL, False: gguf.TokenType.USER_DEFINED}
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("qwen2")
    writer.add_token_list(tokens)
    writer.add_token_types(
        [kinds[added[i]] if i in added else gguf.TokenType.NORMAL for i in range(len(tokens))]
    )
    writer.add_token_merges(
        [" ".join(m) if isinstance(m, list) else m for m in raw["model"]["merges"]]
    )
    writer.add_bos_token_id(ids["<|endoftext|>"])
    writer.add_eos_token_id(ids["<|im_end|>"])
    writer.add_pad_token_id(ids["<|endoftext|>"])
    writer.add_chat_template(tokenizer.chat_template)
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.QWEN3, config.num_hidden_layers)
    for name, tensor in model.state_dict().items():
        if name == "lm_head.weight":  # tied to the embedding, as llama.cpp writes it
            continue
        gguf_name = names.get_name(name, try_suffixes=(".weight", ".bias"))
        if gguf_name is None:
            raise RuntimeError(f"no GGUF name for {name}")
        writer.add_tensor(gguf_name, tensor.float().numpy())
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return folder, file


def build_tiny_qwen3_embedding(path: str | Path, seed: int = 0) -> Path:
    """A Qwen3 base model saved the way Qwen3-Embedding is: `AutoModel`, left padding, eos appended."""
    from tokenizers import processors
    from transformers import Qwen3Config, Qwen3Model

    path = Path(path)
    tokenizer = build_qwen_tokenizer(eos_token="<|endoftext|>", padding_side="left")
    eos_id = _token_ids(tokenizer, ("<|endoftext|>",))["<|endoftext|>"]
    # Qwen3-Embedding's tokenizer appends <|endoftext|>, whose hidden state is the embedding.
    tokenizer.backend_tokenizer.post_processor = processors.TemplateProcessing(
        single="$A <|endoftext|>",
        pair="$A <|endoftext|> $B <|endoftext|>",
        special_tokens=[("<|endoftext|>", eos_id)],
    )
    config = Qwen3Config(
        vocab_size=len(tokenizer),
        **TINY_QWEN3,
        max_position_embeddings=8192,
        initializer_range=0.2,
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        pad_token_id=eos_id,
    )
    _seed(seed)
    Qwen3Model(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def build_tiny_qwen25_vl(path: str | Path, seed: int = 0) -> Path:
    """A 2-layer Qwen2.5-VL (the describer) with a 2-block vision tower and its processor.

    Patch 4 / merge 2 and at most 32x32 pixels keep an image to a handful of tokens.
    """
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    try:  # transformers >= 5.4: the PIL processor has its own class; the plain one is torchvision's
        from transformers.models.qwen2_vl.image_processing_pil_qwen2_vl import (
            Qwen2VLImageProcessorPil,
        )
    except ModuleNotFoundError:  # transformers 5.0-5.3: the plain class is the PIL one
        from transformers import Qwen2VLImageProcessor as Qwen2VLImageProcessorPil

    path = Path(path)
    tokenizer = build_qwen_tokenizer()
    tokenizer.chat_template = QWEN25_VL_CHAT_TEMPLATE
    ids = _token_ids(tokenizer, QWEN_SPECIAL_TOKENS)
    hidden, heads = 64, 4
    head_dim = hidden // heads
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": len(tokenizer),
            "hidden_size": hidden,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": heads,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            "initializer_range": 0.2,
            # mrope splits the rotary half-dimension into (temporal, height, width) sections
            "rope_parameters": {
                "rope_type": "default",
                "rope_theta": 1e6,
                "mrope_section": _mrope(head_dim),
            },
            "bos_token_id": ids["<|endoftext|>"],
            "eos_token_id": ids["<|im_end|>"],
            "pad_token_id": ids["<|endoftext|>"],
        },
        vision_config={
            "depth": 2,
            "hidden_size": 32,
            "intermediate_size": 64,
            "num_heads": 2,
            "patch_size": 4,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 16,
            "fullatt_block_indexes": [1],
            "out_hidden_size": hidden,
            "initializer_range": 0.2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        tie_word_embeddings=False,
    )
    _seed(seed)
    model = Qwen2_5_VLForConditionalGeneration(config).eval()
    model.generation_config = _chat_generation_config(tokenizer)
    model.save_pretrained(path)
    # Saved as a hub checkpoint is (tokenizer + chat template + image processor naming its
    # processor class), so AutoProcessor assembles the processor and adds a video processor
    # only where torchvision exists; the `hf:` loader copes when it does not.
    image_processor = Qwen2VLImageProcessorPil(
        patch_size=4, merge_size=2, temporal_patch_size=2, min_pixels=8 * 8, max_pixels=32 * 32
    )
    image_processor.processor_class = "Qwen2_5_VLProcessor"  # type: ignore[attr-defined]
    image_processor.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


def _mrope(head_dim: int) -> list[int]:
    """Three mrope sections summing to head_dim / 2 (real 128-dim heads use [16, 24, 24])."""
    half = head_dim // 2
    first = half // 4
    rest = half - first
    return [first, rest // 2, rest - rest // 2]


def build_tiny_sentence_transformer(path: str | Path, seed: int = 0) -> Path:
    """A 2-layer BERT laid out as sentence-transformers writes it: mean pooling, then Normalize."""
    from transformers import BertConfig, BertModel

    path = Path(path)
    tokenizer = build_wordpiece_tokenizer()
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
        initializer_range=0.2,
        pad_token_id=tokenizer.pad_token_id,
    )
    _seed(seed)
    BertModel(config).eval().save_pretrained(path)
    tokenizer.save_pretrained(path)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
        {
            "idx": 2,
            "name": "2",
            "path": "2_Normalize",
            "type": "sentence_transformers.models.Normalize",
        },
    ]
    pooling = {
        "word_embedding_dimension": config.hidden_size,
        "pooling_mode_cls_token": False,
        "pooling_mode_mean_tokens": True,
        "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False,
        "pooling_mode_weightedmean_tokens": False,
        "pooling_mode_lasttoken": False,
        "include_prompt": True,
    }
    _write_json(path / "modules.json", modules)
    _write_json(path / "1_Pooling" / "config.json", pooling)
    _write_json(path / "sentence_bert_config.json", {"max_seq_length": 128, "do_lower_case": False})
    (path / "2_Normalize").mkdir(exist_ok=True)
    return path


def build_tiny_clip(path: str | Path, seed: int = 0, *, processor: Path | None = None) -> Path:
    """A 2-layer `CLIPModel` (text and vision towers, 16-d projections, 32x32 images) with a
    character-level `CLIPTokenizer` (its byte-pair vocabulary with no merges: every printable
    character, alone and as a word's end `</w>`) and a `CLIPImageProcessor`: the layout of
    openai/clip-vit-*. With `processor`, the tokenizer and image processor are saved there
    instead, as PickScore_v1 is used with another checkpoint's processor."""
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor, CLIPTokenizer

    path = Path(path)
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for suffix in ("", "</w>"):
        for code in range(33, 127):
            vocab.setdefault(chr(code) + suffix, len(vocab))
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[], model_max_length=77)
    images = CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32})
    tower = {"hidden_size": 32, "intermediate_size": 37, "num_hidden_layers": 2}
    config = CLIPConfig(
        text_config={
            **tower,
            "num_attention_heads": 4,
            "vocab_size": len(vocab),
            "max_position_embeddings": 77,
            "bos_token_id": 0,
            "eos_token_id": 1,
            "pad_token_id": 1,
        },
        vision_config={**tower, "num_attention_heads": 4, "image_size": 32, "patch_size": 8},
        projection_dim=16,
    )
    _seed(seed)
    CLIPModel(config).eval().save_pretrained(path)
    CLIPProcessor(image_processor=images, tokenizer=tokenizer).save_pretrained(processor or path)
    return path


def _write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
