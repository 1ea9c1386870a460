"""TIT-Score: cosine similarity between embeddings of prompt and description.

The public example embeds both texts raw; the paper's figure prefixes the query side
with an instruction. `instruction=None` is the former, a string the latter, formatted
the Qwen3-Embedding way: "Instruct: {instruction}\\nQuery:{prompt}". The run records
which was used. The description side is never prefixed.

The model is local (`embed:`) or served (`litellm:`: OpenAI, Gemini, or a vLLM/TEI
`/v1/embeddings` server); either way the texts sent are the same and the score is the same
cosine, so a served Qwen3-Embedding gives the TIT-Score a local one gives. No instruction is
added by model name: a served model gets one only when the judge's config gives it, as a
local one does.
"""

from __future__ import annotations

import math
from operator import mul
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.options import ModelJudgeOptions, no_sampled_call
from titjudge.judges.registry import judge_kind
from titjudge.models.core.clients import CallMode, EmbeddingCalls
from titjudge.models.core.rules import cannot_embed
from titjudge.records.outcomes import JudgeInput, JudgeOutcome
from titjudge.records.spec import parse_model_spec


def query_text(prompt: str, instruction: str | None) -> str:
    return prompt if instruction is None else f"Instruct: {instruction}\nQuery:{prompt}"


def cosine(a: list[float], b: list[float]) -> float:
    """Cosine of two vectors, summed left to right in plain floats (`map(mul)` does the same
    products and additions as a generator over the pairs, in C); vectors of different lengths
    or with no length are a ValueError."""
    if len(a) != len(b):
        raise ValueError(
            f"the prompt and description embeddings differ in length ({len(a)} and {len(b)})"
        )
    dot = sum(map(mul, a, b))
    norm = math.sqrt(sum(map(mul, a, a))) * math.sqrt(sum(map(mul, b, b)))
    if norm == 0.0:
        raise ValueError("zero-length embedding")
    return dot / norm


class VectorJudge(Judge):
    """A judge that scores with an embedding model's vectors (this kind, `judges.clip`)."""

    def __init__(self, config: ModelJudgeOptions, client: EmbeddingCalls):
        super().__init__(config)
        self.client = client

    @property
    def model(self) -> str:
        return self.client.model


class EmbeddingJudge(VectorJudge):
    config: EmbeddingJudgeConfig

    def kind_facts(self) -> dict[str, Any]:
        instruction = self.config.instruction
        return {
            "query_side": "instruction+query" if instruction else "raw",
            "instruction": instruction,
        }

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        query, document = await self.client.embed(
            [query_text(given.item.prompt, self.config.instruction), given.description],
            role="judge",
            probe=probe,
        )
        for side, call in (("prompt", query), ("description", document)):
            if not call.ok or call.value is None:
                failed = JudgeOutcome.failed(
                    self.name, f"embedding of the {side} failed: {call.error}"
                )
                failed.note_model(call.answered_by)
                return failed
        try:
            score = cosine(query.value, document.value)  # type: ignore[arg-type]
        except ValueError as exc:
            return JudgeOutcome.failed(self.name, str(exc))
        outcome = JudgeOutcome(
            variant=self.name,
            status="ok",
            score=round(score, 6),
            rationale=f"cosine similarity of prompt and description embeddings: {score:.4f}",
        )
        outcome.latency = query.latency + document.latency
        outcome.cached = query.cached and document.cached
        for call in (query, document):
            outcome.note_model(call.answered_by)
        return outcome


class EmbeddingJudgeConfig(ModelJudgeOptions):
    """TIT-Score: an embedding model of its own; no template, no sampling."""

    refused: ClassVar[dict[str, str]] = {"repeats": no_sampled_call("embedding")}
    kind: Literal["embedding"]
    instruction: str | None = Field(
        None, description="instruction prefixed to the prompt side; None embeds raw text"
    )

    @model_validator(mode="after")
    def _embedding_model(self) -> EmbeddingJudgeConfig:
        """A `litellm:` model that litellm's model map lists as a chat model cannot embed, and
        an embedding model takes one endpoint (several are for text models)."""
        spec = parse_model_spec(self.model) if self.model else None
        problem = cannot_embed(spec) if spec is not None else None
        if problem is None and isinstance(self.api_base, list):
            problem = "takes one api_base, not a list (several endpoints are for text models)"
        if problem is None and self.batch and spec is not None:
            problem = _no_embedding_batches(spec.model_id, self.params)
        if problem is not None:
            raise ValueError(f"judge {self.name!r}: {self.model}: {problem}")
        return self


def _no_embedding_batches(model_id: str, params: dict[str, object]) -> str | None:
    """Why `batch: true` cannot send this embedding model's calls as batch jobs (None: it
    can): its provider's batch API takes no embeddings, or titjudge drives none for them."""
    from titjudge.models.core.batch import BATCH_EMBEDDING_PROVIDERS

    custom = params.get("custom_llm_provider")
    provider = str(custom) if custom else model_id.partition("/")[0]
    if provider in BATCH_EMBEDDING_PROVIDERS:
        return None
    why = (
        "Azure OpenAI's batch API takes no embeddings models (its batch FAQ)"
        if provider == "azure"
        else f"titjudge sends no embeddings as {provider!r} batch jobs"
    )
    have = ", ".join(f"litellm:{p}/..." for p in BATCH_EMBEDDING_PROVIDERS)
    return f"batch: true on an embedding model needs a batch API that takes embeddings: {why}; embeddings go as batch jobs on {have} only (or drop batch)"


@judge_kind(
    "embedding",
    config=EmbeddingJudgeConfig,
    label="TIT-Score",
    label_several="TIT-Score ({model})",
)
def build_embedding(config: EmbeddingJudgeConfig, building: Building) -> Judge:
    client = building.embedding_client(config)
    return EmbeddingJudge(config, client)
