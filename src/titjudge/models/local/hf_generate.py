"""Batched generation for the `hf:` backend; everything here runs in the worker thread.

One call of `run_batch` = one left-padded `model.generate` over requests that share
max_tokens and temperature. Per-request randomness and log-probabilities are done with
our own logits processors so a request's output does not depend on its batch-mates:
- sampling uses the Gumbel-max trick with a per-request seeded generator (argmax of
  logits / T + Gumbel noise is an exact sample from softmax(logits / T)), so generate
  runs greedy and each row draws from its own random stream;
- log-probabilities are recorded from the raw logits (the model's own distribution,
  before temperature or repetition penalty), keeping only the top-k per step;
- the repetition penalty ignores left padding.
"""

from __future__ import annotations

import hashlib
import io
import logging
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from transformers import GenerationConfig, LogitsProcessor, LogitsProcessorList
from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper

from titjudge.models.core.base import GenerateRequest, Generation, PermanentError
from titjudge.models.local.common import free_accelerator_memory, is_out_of_memory
from titjudge.records.calls import TokenLogprobs

log = logging.getLogger(__name__)


@dataclass
class HFEngine:
    """A loaded model and what generation needs to know about it."""

    model: Any
    tokenizer: Any
    #: the multimodal processor for VLMs; None for text-only causal LMs
    processor: Any | None
    device: torch.device
    eos_ids: tuple[int, ...]
    pad_id: int
    enable_thinking: bool = False
    repetition_penalty: float | None = None
    top_k: int | None = None
    top_p: float | None = None
    think_ids: tuple[int, int] | None = None  # (<think>, </think>) when the vocabulary has them
    #: a request's JSON schema constrains its decoding (`models.local.hf_schema`)
    constrained: bool = False
    _piece_cache: dict[int, str] = field(default_factory=dict)

    def piece(self, token_id: int) -> str:
        """The text of one token (as OpenAI-style logprobs show it)."""
        text = self._piece_cache.get(token_id)
        if text is None:
            text = self.tokenizer.decode([token_id], skip_special_tokens=False)
            self._piece_cache[token_id] = text
        return text


# --------------------------------------------------------------------------- prompts


def build_messages(request: GenerateRequest, multimodal: bool) -> list[dict[str, Any]]:
    """Chat messages; images go in the first user turn, before its text (as litellm's do)."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append({"role": "system", "content": _content(request.system, multimodal)})
    attached = False
    for role, text in [*request.history, ("user", request.prompt)]:
        if role == "user" and not attached and request.images:
            parts: list[dict[str, Any]] = [{"type": "image"} for _ in request.images]
            parts.append({"type": "text", "text": text})
            messages.append({"role": "user", "content": parts})
            attached = True
        else:
            messages.append({"role": role, "content": _content(text, multimodal)})
    return messages


def _content(text: str, multimodal: bool) -> str | list[dict[str, Any]]:
    return [{"type": "text", "text": text}] if multimodal else text


def render_prompt(engine: HFEngine, request: GenerateRequest) -> str:
    """The chat-templated prompt text, ending with the assistant generation prompt."""
    if request.images and engine.processor is None:
        raise PermanentError("this model is text-only; it cannot take images")
    messages = build_messages(request, multimodal=engine.processor is not None)
    templater = engine.processor if engine.processor is not None else engine.tokenizer
    extra: dict[str, Any] = {}
    # only templates that read it get it: processors treat unknown template kwargs as their own
    if "enable_thinking" in str(templater.chat_template):
        extra["enable_thinking"] = engine.enable_thinking
    return str(
        templater.apply_chat_template(messages, tokenize=False, add_generation_prompt=True, **extra)
    )


def decode_images(request: GenerateRequest) -> list[Any]:
    from PIL import Image, UnidentifiedImageError

    images = []
    for image in request.images:
        try:
            with Image.open(io.BytesIO(image.data)) as opened:
                images.append(opened.convert("RGB"))
        except (UnidentifiedImageError, OSError) as exc:
            name = image.path or f"image sha256 {image.sha256[:12]}"
            raise PermanentError(f"cannot decode {name}: {exc}") from None
    return images


@dataclass
class _Prepared:
    index: int
    request: GenerateRequest
    text: str
    images: list[Any]


# --------------------------------------------------------------------------- logits processors


def request_seed(request: GenerateRequest) -> int:
    """A seed fixed by the request's content and sample index (63 bits)."""
    digest = hashlib.sha256()
    for part in (request.system or "", request.prompt, repr(request.history), str(request.sample)):
        digest.update(part.encode("utf-8") + b"\x00")
    for image in request.images:
        digest.update(image.sha256.encode())
    return int.from_bytes(digest.digest()[:8], "big") >> 1


class SeededGumbelSampler(LogitsProcessor):
    """Temperature (+ optional top-k / top-p) then per-row seeded Gumbel noise; greedy picks a sample."""

    def __init__(
        self, temperature: float, seeds: list[int], top_k: int | None, top_p: float | None
    ):
        self.temperature = temperature
        self.generators = [torch.Generator().manual_seed(seed) for seed in seeds]
        self.warpers: list[LogitsProcessor] = []
        if top_k:
            self.warpers.append(TopKLogitsWarper(top_k))
        if top_p is not None and top_p < 1.0:
            self.warpers.append(TopPLogitsWarper(top_p))

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        warped = scores / self.temperature
        for warper in self.warpers:
            warped = warper(input_ids, warped)
        vocab = warped.shape[-1]
        uniform = torch.stack([torch.rand(vocab, generator=g) for g in self.generators])
        gumbel = -torch.log(-torch.log(uniform.clamp_(1e-20, 1.0 - 1e-7)))
        return warped + gumbel.to(warped.device, warped.dtype)  # type: ignore[return-value]


class PaddingAwareRepetitionPenalty(LogitsProcessor):
    """transformers' repetition penalty, minus the left padding.

    The stock processor penalises every id in `input_ids`, pads included; the pad token is
    often an end-of-sequence token, so a padded row would be nudged away from stopping and
    a request's output would depend on its batch-mates.
    """

    def __init__(self, penalty: float, pad_lengths: torch.Tensor):
        self.penalty = penalty
        self.pad_lengths = pad_lengths

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        positions = torch.arange(input_ids.shape[1], device=input_ids.device)
        real = positions.unsqueeze(0) >= self.pad_lengths.to(input_ids.device).unsqueeze(1)
        ids = torch.where(real, input_ids, input_ids[:, -1:])  # pads -> a real id of the row
        picked = scores.gather(1, ids)
        picked = torch.where(picked < 0, picked * self.penalty, picked / self.penalty)
        return scores.scatter(1, ids, picked)  # type: ignore[return-value]


class LogprobRecorder(LogitsProcessor):
    """Keeps the top-k log-probabilities of every step and, one step later, the chosen token's.

    Placed first, it sees the raw logits. The chosen token is only known at the next call
    (it is the last column of `input_ids`), so one step of log-probs is kept; `finish`
    reads the final step's choice from the returned sequences.
    """

    def __init__(self, k: int):
        self.k = k
        self.top: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.chosen: list[torch.Tensor] = []
        self._last: torch.Tensor | None = None

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        logp = torch.log_softmax(scores.float(), dim=-1)
        if self._last is not None:
            self.chosen.append(self._last.gather(1, input_ids[:, -1:]).squeeze(1).cpu())
        values, ids = logp.topk(min(self.k, logp.shape[-1]), dim=-1)
        self.top.append((values.cpu(), ids.cpu()))
        self._last = logp
        return scores

    def finish(self, sequences: torch.Tensor) -> None:
        if self._last is not None:
            self.chosen.append(
                self._last.gather(1, sequences[:, -1:].to(self._last.device)).squeeze(1).cpu()
            )
            self._last = None


# --------------------------------------------------------------------------- the batch


def run_batch(
    engine: HFEngine, key: Hashable, requests: list[GenerateRequest]
) -> list[Generation | BaseException]:
    """Generate for requests sharing `key` = (max_tokens, temperature); one result per request.

    A request that cannot be prepared (undecodable image) fails alone. If the batch runs out
    of accelerator memory it is split in halves and retried down to single requests; a single
    request that still does not fit fails with a PermanentError (retrying cannot help).
    """
    max_tokens, temperature = cast(tuple[int, float], key)
    results: list[Generation | BaseException | None] = [None] * len(requests)
    prepared: list[_Prepared] = []
    for index, request in enumerate(requests):
        try:
            prepared.append(
                _Prepared(index, request, render_prompt(engine, request), decode_images(request))
            )
        except Exception as exc:  # this request's own problem: fail it, keep the batch
            results[index] = (
                exc
                if isinstance(exc, PermanentError)
                else PermanentError(f"{type(exc).__name__}: {exc}")
            )
    _generate_splitting(engine, prepared, max_tokens, temperature, results)
    return [r if r is not None else RuntimeError("request was not run") for r in results]


def _generate_splitting(
    engine: HFEngine,
    items: list[_Prepared],
    max_tokens: int,
    temperature: float,
    results: list[Generation | BaseException | None],
) -> None:
    if not items:
        return
    try:
        generations = _generate(engine, items, max_tokens, temperature)
    except Exception as exc:
        if is_out_of_memory(exc):
            free_accelerator_memory()
            if len(items) == 1:
                results[items[0].index] = PermanentError(
                    f"out of accelerator memory on a single request ({exc}); lower max_tokens, "
                    "batch_size or image size, or use a smaller dtype"
                )
                return
            log.warning("out of memory on a batch of %d; retrying in halves", len(items))
            half = len(items) // 2
            _generate_splitting(engine, items[:half], max_tokens, temperature, results)
            _generate_splitting(engine, items[half:], max_tokens, temperature, results)
            return
        if len(items) == 1:
            results[items[0].index] = exc
            return
        log.warning("batch of %d failed (%s); retrying one by one to isolate it", len(items), exc)
        for item in items:
            _generate_splitting(engine, [item], max_tokens, temperature, results)
        return
    for item, generation in zip(items, generations, strict=True):
        results[item.index] = generation


def _encode(engine: HFEngine, items: list[_Prepared]) -> Any:
    texts = [item.text for item in items]
    if engine.processor is not None:
        images = [image for item in items for image in item.images]
        encoded = engine.processor(
            text=texts,
            images=images or None,
            padding=True,
            return_tensors="pt",
            add_special_tokens=False,
        )
    else:
        encoded = engine.tokenizer(
            texts, padding=True, return_tensors="pt", add_special_tokens=False
        )
    encoded = encoded.to(engine.device)
    if "pixel_values" in encoded:
        encoded["pixel_values"] = encoded["pixel_values"].to(engine.model.dtype)
    return encoded


@torch.inference_mode()
def _generate(
    engine: HFEngine, items: list[_Prepared], max_tokens: int, temperature: float
) -> list[Generation]:
    encoded = _encode(engine, items)
    top_k_logprobs = max(item.request.top_logprobs for item in items)
    processors = LogitsProcessorList()
    recorder = LogprobRecorder(top_k_logprobs) if top_k_logprobs > 0 else None
    if recorder is not None:
        processors.append(recorder)
    if engine.repetition_penalty and engine.repetition_penalty != 1.0:
        pad_lengths = (encoded["attention_mask"] == 0).sum(dim=1)
        processors.append(PaddingAwareRepetitionPenalty(engine.repetition_penalty, pad_lengths))
    schemas = [item.request.json_schema if engine.constrained else None for item in items]
    if any(schema is not None for schema in schemas):
        from titjudge.models.local.hf_schema import SchemaConstraint

        n_vocab = engine.model.get_output_embeddings().weight.shape[0]
        processors.append(SchemaConstraint(engine.tokenizer, schemas, n_vocab, engine.eos_ids))
    if temperature > 0:
        seeds = [request_seed(item.request) for item in items]
        processors.append(SeededGumbelSampler(temperature, seeds, engine.top_k, engine.top_p))
    config = GenerationConfig(
        max_new_tokens=max_tokens,
        do_sample=False,
        num_beams=1,
        eos_token_id=list(engine.eos_ids),
        pad_token_id=engine.pad_id,
        return_dict_in_generate=True,
    )
    output = engine.model.generate(**encoded, generation_config=config, logits_processor=processors)
    sequences = output.sequences if hasattr(output, "sequences") else output
    if recorder is not None:
        recorder.finish(sequences)
    prompt_len = encoded["input_ids"].shape[1]
    new_tokens = sequences[:, prompt_len:].cpu()
    tokens_in = encoded["attention_mask"].sum(dim=1).tolist()
    return [
        _decode_row(
            engine, row, new_tokens[row].tolist(), int(tokens_in[row]), item.request, recorder
        )
        for row, item in enumerate(items)
    ]


def _decode_row(
    engine: HFEngine,
    row: int,
    ids: list[int],
    tokens_in: int,
    request: GenerateRequest,
    recorder: LogprobRecorder | None,
) -> Generation:
    stop = next((i for i, token in enumerate(ids) if token in engine.eos_ids), None)
    content = ids if stop is None else ids[:stop]
    start = _answer_start(engine, content)
    text = engine.tokenizer.decode(content[start:], skip_special_tokens=True).strip()
    logprobs = None
    if recorder is not None and request.top_logprobs > 0:
        logprobs = _row_logprobs(engine, row, content, start, request.top_logprobs, recorder)
    return Generation(
        text=text,
        tokens_in=tokens_in,
        tokens_out=len(content) + (stop is not None),
        finish_reason="length" if stop is None else "stop",
        logprobs=logprobs,
    )


def _answer_start(engine: HFEngine, content: list[int]) -> int:
    """Skip a leading <think>...</think> block: reasoning is not the answer.

    An unfinished block (the token budget ran out while thinking) leaves no answer at all.
    """
    if engine.think_ids is None:
        return 0
    open_id, close_id = engine.think_ids
    if close_id in content:
        return len(content) - content[::-1].index(close_id)
    if open_id in content:
        return len(content)
    return 0


def _row_logprobs(
    engine: HFEngine, row: int, content: list[int], start: int, k: int, recorder: LogprobRecorder
) -> list[TokenLogprobs]:
    entries: list[TokenLogprobs] = []
    for step in range(start, len(content)):
        token_id = content[step]
        values, ids = recorder.top[step]
        top: dict[str, float] = {}
        for value, top_id in zip(values[row, :k].tolist(), ids[row, :k].tolist(), strict=True):
            top.setdefault(engine.piece(top_id), float(value))  # first = most likely spelling
        entries.append(
            TokenLogprobs(
                token=engine.piece(token_id), logprob=float(recorder.chosen[step][row]), top=top
            )
        )
    return entries
