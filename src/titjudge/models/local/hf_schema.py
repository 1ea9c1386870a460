"""Local `hf:` models decode under a judge's JSON schema (constrained decoding).

A small local judge asked for JSON by its prompt alone rambles or breaks the format (the
measurement is in benchmarks/RESULTS.md, section 19); under a grammar every token it picks
keeps the reply a prefix of a schema-valid object. The grammar comes from llguidance
(`llguidance.LLMatcher.grammar_from_json_schema`), chosen over xgrammar and outlines by what
it needs (docs/research/server-dialects.md, section 7): no Python dependency and one 8 MB
abi3 wheel, where xgrammar pulls triton (about 1 GB) on Linux and outlines is a framework
around either; it masks logits through numpy on CPU, with no compiler. It is optional (the
`[local]` extra installs it): without it, or with `structured_output: prompt` on the model, the
JSON is asked for in the prompt and validated, as before.

One `SchemaConstraint` per `generate()` call: a matcher per row that has a schema (rows
without one are left alone), fed each row's last token, its mask applied before sampling.
Whitespace between JSON tokens is not free (`whitespace_flexible: False`): a small model
given the choice fills its budget with spaces.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import torch
from transformers import LogitsProcessor

log = logging.getLogger(__name__)


class SchemaConstraint(LogitsProcessor):
    """Masks each constrained row's logits to the tokens its schema's grammar allows."""

    def __init__(
        self,
        tokenizer: Any,
        schemas: list[dict[str, Any] | None],
        n_vocab: int,
        eos_ids: tuple[int, ...] = (),
    ):
        import llguidance
        import llguidance.hf

        self.lltok = _llg_tokenizer(tokenizer, n_vocab)
        self.matchers: list[Any | None] = []
        for schema in schemas:
            if schema is None:
                self.matchers.append(None)
                continue
            grammar = llguidance.LLMatcher.grammar_from_json_schema(
                json.dumps(schema), overrides={"whitespace_flexible": False}
            )
            self.matchers.append(llguidance.LLMatcher(self.lltok, grammar))
        self.steps = 0
        #: the ids that end a reply (the chat template's end of turn as well as the
        #: tokenizer's end of text): allowed once the JSON is complete, the only choice after
        self.eos = torch.tensor(sorted(set(eos_ids)), dtype=torch.long)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        from llguidance.numpy import allocate_token_bitmask, fill_next_token_bitmask

        if self.steps:
            last = input_ids[:, -1].tolist()
            for row, matcher in enumerate(self.matchers):
                if matcher is not None and not matcher.is_stopped():
                    matcher.consume_token(last[row])
        self.steps += 1
        mask = allocate_token_bitmask(len(self.matchers), self.lltok.vocab_size)
        masked = scores
        for row, matcher in enumerate(self.matchers):
            if matcher is None or matcher.is_error():
                continue  # unconstrained (or a token the grammar could not take: left free)
            if matcher.is_stopped():  # the JSON is complete: only an end of reply
                allowed = torch.zeros(scores.shape[-1], dtype=torch.bool)
            else:
                fill_next_token_bitmask(matcher, mask, row)
                allowed = _unpack(mask[row], scores.shape[-1])
            if matcher.is_stopped() or matcher.is_accepting():
                allowed[self.eos[self.eos < scores.shape[-1]]] = True
            if masked is scores:
                masked = scores.clone()  # type: ignore[assignment]
            keep = allowed.to(scores.device)
            masked[row] = torch.where(keep, scores[row], torch.finfo(scores.dtype).min)
        return masked


_TOKENIZERS: dict[tuple[int, int], Any] = {}


def _llg_tokenizer(tokenizer: Any, n_vocab: int) -> Any:
    """llguidance's view of the model's tokenizer (about a second to build: once per model)."""
    import llguidance.hf

    key = (id(tokenizer), n_vocab)
    if key not in _TOKENIZERS:
        _TOKENIZERS[key] = llguidance.hf.from_tokenizer(tokenizer, n_vocab=n_vocab)
    return _TOKENIZERS[key]


def _unpack(bits: Any, n_vocab: int) -> torch.Tensor:
    """A row of llguidance's packed int32 bitmask as one bool per token id."""
    words = torch.from_numpy(bits.astype("int64") & 0xFFFFFFFF)
    shifts = torch.arange(32, dtype=torch.int64)
    flags = ((words.unsqueeze(1) >> shifts) & 1).bool().flatten()
    if flags.shape[0] < n_vocab:
        flags = torch.cat([flags, torch.zeros(n_vocab - flags.shape[0], dtype=torch.bool)])
    return flags[:n_vocab]


__all__ = ["SchemaConstraint"]
