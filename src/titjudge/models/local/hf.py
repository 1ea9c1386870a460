"""The `hf:` backend: a local transformers VLM or causal LM, generating in batches.

`hf:/path/to/folder` or `hf:org/name` (a hub id is read from the Hugging Face cache; it
downloads only when the hub is reachable and HF_HUB_OFFLINE is unset). The config says
which kind it is: image-text-to-text models (Qwen2-VL / Qwen2.5-VL, ...) load with
`AutoModelForImageTextToText` + `AutoProcessor`; anything else with `AutoModelForCausalLM`
+ the tokenizer's chat template.

Concurrent `generate()` calls are collected by a micro-batcher (up to `batch_size`
requests sharing max_tokens and temperature, or whatever arrived within a few ms) and run
as one left-padded `model.generate` in a worker thread. Greedy at temperature 0; seeded
per-request sampling otherwise (see `hf_generate`). JSON is asked for in the prompt only
(`json_schema=False`); the call layer validates.

Out of memory: a batch that does not fit is split in halves down to single requests; a
single request that does not fit is a PermanentError (retrying the same input cannot fit).

`params` keys: enable_thinking (bool, default False: a judge should answer, not muse; the
`thinking` option says the same and also reserves a budget),
revision, trust_remote_code, repetition_penalty, top_k, top_p (sampling only),
attn_implementation, max_wait_ms (batch collection window, default 5).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import json
import logging
from functools import partial
from pathlib import Path
from typing import Any

import torch
import transformers

from titjudge.errors import ModelSpecError
from titjudge.models.core.base import (
    Capabilities,
    GenerateRequest,
    Generation,
    PermanentError,
    TextBackend,
)
from titjudge.models.core.options import ModelOptions
from titjudge.models.local.batching import MicroBatcher
from titjudge.models.local.common import (
    Checkpoint,
    cache_hint,
    check_gguf_support,
    check_params,
    first_line,
    is_out_of_memory,
    load_config,
    quiet_gguf_bar,
    quiet_third_party_bars,
    release_model,
    resolve_checkpoint,
    resolve_device,
    resolve_dtype,
    weights_fingerprint,
    with_torch_threads,
)
from titjudge.models.local.hf_generate import HFEngine, run_batch
from titjudge.models.local.hf_plan import (
    CONSTRAINT,
    CPU_BATCH,
    PARAMS,
    constrains,
    hf_cache_facts,
    thinking_setup,
)
from titjudge.records.spec import ModelSpec

log = logging.getLogger(__name__)


#: class-name endings of architectures that generate text
_GENERATING_HEADS = ("ForCausalLM", "ForConditionalGeneration", "LMHeadModel", "ForImageTextToText")


def build(spec: ModelSpec, options: ModelOptions) -> HFTextBackend:
    """Registry entry point (`hf:`)."""
    return HFTextBackend(spec, options)


def model_kind(spec: ModelSpec, config: Any) -> str:
    """'vlm' for image-text-to-text models, 'causal_lm' for text-only ones, from the config."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES,
    )

    model_type = getattr(config, "model_type", None)
    auto_map = getattr(config, "auto_map", None) or {}
    architectures = list(getattr(config, "architectures", None) or [])
    if architectures and not any(name.endswith(_GENERATING_HEADS) for name in architectures):
        raise ModelSpecError(
            f"{spec}: the checkpoint's architecture {', '.join(architectures)} has no text-generation head, "
            "so the hf: backend cannot generate with it (for embedding models use embed:)"
        )
    if (
        model_type in MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES
        or "AutoModelForImageTextToText" in auto_map
    ):
        return "vlm"
    if model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES or "AutoModelForCausalLM" in auto_map:
        return "causal_lm"
    raise ModelSpecError(
        f"{spec}: model type {model_type!r} is neither an image-text-to-text model nor a causal LM, "
        "so the hf: backend cannot generate text with it (for embedding models use embed:)"
    )


class HFTextBackend(TextBackend):
    """A local model behind the TextBackend interface; see the module docstring."""

    def __init__(self, spec: ModelSpec, options: ModelOptions):
        super().__init__(spec)
        params = check_params(spec, options.params, PARAMS)
        self.thinking = thinking_setup(spec, options, params)
        self.checkpoint = resolve_checkpoint(spec, params.get("revision"))
        trust = bool(params.get("trust_remote_code", False))
        quiet_third_party_bars()
        if self.checkpoint.gguf_file is not None:
            check_gguf_support(spec)
            quiet_gguf_bar()
        self.config, self.checkpoint = load_config(spec, self.checkpoint, trust)
        self.kind = model_kind(spec, self.config)
        self.device = resolve_device(spec, options.device)
        self.dtype = resolve_dtype(spec, options.dtype, self.device)
        self.batch_size = options.batch_size or (
            CPU_BATCH if self.device.type == "cpu" else 2 * CPU_BATCH
        )
        tokenizer, processor = _load_text_side(spec, self.checkpoint, self.kind, self.config, trust)
        model = _load_model(
            spec, self.checkpoint, self.kind, self.device, self.dtype, trust, params, options
        )
        eos_ids, pad_id = _stop_and_pad_ids(model, tokenizer)
        vocab = tokenizer.get_vocab()
        think = (
            (vocab["<think>"], vocab["</think>"])
            if "<think>" in vocab and "</think>" in vocab
            else None
        )
        self.engine = HFEngine(
            model=model,
            tokenizer=tokenizer,
            processor=processor,
            device=model.device,
            eos_ids=eos_ids,
            pad_id=pad_id,
            enable_thinking=self.thinking.enable,
            repetition_penalty=_optional_float(params.get("repetition_penalty")),
            top_k=params.get("top_k"),
            top_p=_optional_float(params.get("top_p")),
            think_ids=think,
            constrained=constrains(options),
        )
        self.capabilities = Capabilities(
            vision=self.kind == "vlm", json_schema=self.engine.constrained, logprobs=True
        )
        self.default_concurrency = 2 * self.batch_size  # one batch running, one filling
        wait = float(params.get("max_wait_ms", 5.0)) / 1000.0
        self._batcher: MicroBatcher[GenerateRequest, Generation] = MicroBatcher(
            with_torch_threads(partial(run_batch, self.engine)),
            max_items=self.batch_size,
            max_wait=wait,
        )

    def cache_facts(self) -> dict[str, Any]:
        # the template switch is already keyed through params.enable_thinking; the option too
        return hf_cache_facts(self.thinking.facts, self.engine.constrained)

    @property
    def batch_sizes(self) -> list[int]:
        """Sizes of the `model.generate` batches run so far."""
        return self._batcher.batch_sizes

    async def generate(self, request: GenerateRequest) -> Generation:
        if request.images and not self.capabilities.vision:
            raise PermanentError(f"{self.spec}: a text-only model cannot take images")
        if self.thinking.reserve:  # room for thinking on top of the answer's max_tokens
            request = dataclasses.replace(
                request, max_tokens=request.max_tokens + self.thinking.reserve
            )
        generation = await self._batcher.submit(
            request, key=(request.max_tokens, float(request.temperature or 0.0))
        )
        generation.max_tokens_sent = request.max_tokens
        return generation

    def classify_error(self, exc: BaseException) -> BaseException:
        if is_out_of_memory(exc):
            return PermanentError(f"{self.spec}: out of accelerator memory: {exc}")
        return exc

    def describe(self) -> dict[str, Any]:
        facts = super().describe()
        facts.update(
            kind=self.kind,
            model_type=getattr(self.config, "model_type", None),
            path=self.checkpoint.source if self.checkpoint.local else None,
            gguf_file=self.checkpoint.gguf_file,
            revision=self.checkpoint.commit or self.checkpoint.revision,
            fingerprint=weights_fingerprint(self.checkpoint),
            dtype=str(self.dtype).removeprefix("torch."),
            device=str(self.engine.device),
            batch_size=self.batch_size,
            enable_thinking=self.engine.enable_thinking,
            structured_output=CONSTRAINT if self.engine.constrained else "prompted (no grammar)",
            transformers=transformers.__version__,
            torch=torch.__version__,
        )
        return facts

    async def aclose(self) -> None:
        release_model(self.engine, "model")


def _optional_float(value: Any) -> float | None:
    return None if value is None else float(value)


def _load_model(
    spec: ModelSpec,
    checkpoint: Checkpoint,
    kind: str,
    device: torch.device,
    dtype: torch.dtype,
    trust: bool,
    params: dict[str, Any],
    options: ModelOptions,
) -> Any:
    from transformers import AutoModelForCausalLM, AutoModelForImageTextToText

    auto = AutoModelForImageTextToText if kind == "vlm" else AutoModelForCausalLM
    several_gpus = device.type == "cuda" and torch.cuda.device_count() > 1
    spread = several_gpus and (options.device or "auto") == "auto"
    kwargs: dict[str, Any] = {
        "dtype": dtype,
        "trust_remote_code": trust,
        "device_map": "auto" if spread else str(device),
        **checkpoint.load_kwargs(),
    }
    if "attn_implementation" in params:
        kwargs["attn_implementation"] = params["attn_implementation"]
    try:
        model = auto.from_pretrained(checkpoint.source, **kwargs)
    except (OSError, ValueError) as exc:
        raise ModelSpecError(
            f"{spec}: cannot load weights from {checkpoint.source}: {first_line(exc)}{cache_hint(checkpoint)}"
        ) from None
    return model.eval()


def _load_text_side(
    spec: ModelSpec, checkpoint: Checkpoint, kind: str, config: Any, trust: bool
) -> tuple[Any, Any]:
    """(tokenizer, processor or None), left-padded, with a chat template."""
    from transformers import AutoProcessor, AutoTokenizer

    common = {"trust_remote_code": trust, **checkpoint.load_kwargs()}
    processor = None
    try:
        if kind == "vlm":
            try:
                processor = AutoProcessor.from_pretrained(checkpoint.source, **common)
            except (ImportError, TypeError):
                # without torchvision the video processor cannot be built: an ImportError, or
                # (transformers 5.0-5.x) a TypeError inside video_processing_auto
                if importlib.util.find_spec("torchvision") is not None:
                    raise
                processor = _processor_without_video(checkpoint, config, common)
            tokenizer = processor.tokenizer
        else:
            tokenizer = AutoTokenizer.from_pretrained(checkpoint.source, **common)
    except (OSError, ValueError) as exc:
        raise ModelSpecError(
            f"{spec}: cannot load the tokenizer/processor from {checkpoint.source}: "
            f"{first_line(exc)}{cache_hint(checkpoint)}"
        ) from None
    tokenizer.padding_side = "left"  # generation continues from the right edge of every row
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    templater = processor if processor is not None else tokenizer
    if not getattr(templater, "chat_template", None):
        raise ModelSpecError(
            f"{spec}: {checkpoint.source} has no chat template; the hf: backend needs an instruct/chat model"
        )
    return tokenizer, processor


def _processor_without_video(checkpoint: Checkpoint, config: Any, common: dict[str, Any]) -> Any:
    """Assemble the image processor + tokenizer processor when the video processor needs the
    missing torchvision (Qwen2-VL family). Videos are never sent, so nothing is lost."""
    from transformers import AutoImageProcessor, AutoTokenizer
    from transformers.models.auto.processing_auto import PROCESSOR_MAPPING_NAMES

    image_processor = AutoImageProcessor.from_pretrained(checkpoint.source, **common)
    tokenizer = AutoTokenizer.from_pretrained(checkpoint.source, **common)
    class_name = getattr(image_processor, "processor_class", None) or PROCESSOR_MAPPING_NAMES.get(
        config.model_type
    )
    processor_cls = getattr(transformers, str(class_name), None)
    if processor_cls is None:
        raise ImportError(
            f"processor class {class_name!r} needs torchvision, which is not installed"
        )

    def check_argument_for_proper_class(self: Any, name: str, argument: Any) -> Any:
        if argument is None and "video" in name:
            return None
        return processor_cls.check_argument_for_proper_class(self, name, argument)

    without_video = type(
        processor_cls.__name__,
        (processor_cls,),
        {"check_argument_for_proper_class": check_argument_for_proper_class},
    )
    parts: dict[str, Any] = {"image_processor": image_processor, "tokenizer": tokenizer}
    if "video_processor" in inspect.signature(processor_cls.__init__).parameters:
        parts["video_processor"] = None
    log.info("torchvision missing: built %s without its video processor", processor_cls.__name__)
    return without_video(**parts, chat_template=_processor_chat_template(checkpoint, tokenizer))


def _processor_chat_template(checkpoint: Checkpoint, tokenizer: Any) -> str | None:
    """The tokenizer's template, else the processor's own file (chat_template.jinja / .json)."""
    from transformers.utils import cached_file

    if tokenizer.chat_template:
        return str(tokenizer.chat_template)
    for name in ("chat_template.jinja", "chat_template.json"):
        found = cached_file(
            checkpoint.source,
            name,
            **checkpoint.load_kwargs(),
            _raise_exceptions_for_missing_entries=False,
            _raise_exceptions_for_connection_errors=False,
        )
        if found is not None:
            text = Path(found).read_text(encoding="utf-8")
            return str(json.loads(text)["chat_template"]) if name.endswith(".json") else text
    return None


def _stop_and_pad_ids(model: Any, tokenizer: Any) -> tuple[tuple[int, ...], int]:
    """Stop on every eos the generation config names (Qwen: <|im_end|>, <|endoftext|>) and the tokenizer's."""
    eos: list[int] = []
    configured = getattr(getattr(model, "generation_config", None), "eos_token_id", None)
    for value in [
        *(configured if isinstance(configured, list) else [configured]),
        tokenizer.eos_token_id,
    ]:
        if value is not None and int(value) not in eos:
            eos.append(int(value))
    if not eos:
        raise ModelSpecError("the model names no end-of-sequence token; generation could not stop")
    pad = tokenizer.pad_token_id
    return tuple(eos), int(pad if pad is not None else eos[0])
