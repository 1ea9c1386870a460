"""A CLIP-family judge: the baselines the public preference sets publish (CLIPScore, PickScore)
as columns of the same ablation. It looks at the image, not at a description: the prompt goes
through the checkpoint's text tower, the image through its vision tower (`clip:` backend,
`models.local.clip`), and the score is read from the two vectors, each cached on its own (the
prompt once for all its images, an image once for all the pairs that show it).

`score`:
- `cosine` (default): the cosine of the two vectors. PickScore's score and CLIP's
  `logits_per_image` are this cosine times the checkpoint's `logit_scale` (one constant per
  model, recorded in the run): they order images, and so decide pairs, exactly as it does.
- `clipscore`: CLIPScore (Hessel et al. 2021, arXiv:2104.08718, eq. 1): 2.5 * max(cosine, 0).

The text tower reads at most its first `max_position_embeddings` tokens (77 for OpenAI CLIP and
PickScore): the long prompts this project is about are truncated, as every CLIP score is.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from titjudge.judges.base import Judge
from titjudge.judges.building import Building
from titjudge.judges.embedding import VectorJudge, cosine
from titjudge.judges.options import ModelJudgeOptions, no_sampled_call
from titjudge.judges.registry import judge_kind
from titjudge.models.core.clients import CallMode
from titjudge.records.outcomes import JudgeInput, JudgeOutcome
from titjudge.records.spec import parse_model_spec

#: CLIPScore's weight w (Hessel et al. 2021, eq. 1)
CLIPSCORE_WEIGHT = 2.5


class ClipJudge(VectorJudge):
    needs_description = False
    config: ClipJudgeConfig

    def kind_facts(self) -> dict[str, Any]:
        return {"score": self.config.score}

    async def score(self, given: JudgeInput, *, probe: CallMode) -> JudgeOutcome:
        (text,) = await self.client.embed([given.item.prompt], role="judge", probe=probe)
        (image,) = await self.client.embed_images([given.picture], role="judge", probe=probe)
        for side, call in (("prompt", text), ("image", image)):
            if not call.ok or call.value is None:
                failed = JudgeOutcome.failed(
                    self.name, f"CLIP embedding of the {side} failed: {call.error}"
                )
                failed.note_model(call.answered_by)
                return failed
        try:
            similarity = cosine(text.value, image.value)  # type: ignore[arg-type]
        except ValueError as exc:
            return JudgeOutcome.failed(self.name, str(exc))
        if self.config.score == "clipscore":
            score = CLIPSCORE_WEIGHT * max(similarity, 0.0)
            rationale = f"CLIPScore 2.5 * max(cos, 0) with cos(prompt, image) = {similarity:.4f}"
        else:
            score = similarity
            rationale = f"cosine of the prompt's and the image's CLIP embeddings: {similarity:.4f}"
        outcome = JudgeOutcome(
            variant=self.name, status="ok", score=round(score, 6), rationale=rationale
        )
        outcome.latency = text.latency + image.latency
        outcome.cached = text.cached and image.cached
        for call in (text, image):
            outcome.note_model(call.answered_by)
        return outcome


class ClipJudgeConfig(ModelJudgeOptions):
    """A CLIP-family model of its own (`clip:`); no template, no sampling, no batch jobs (a
    local model: `ModelJudgeOptions` refuses `batch: true` for it)."""

    refused: ClassVar[dict[str, str]] = {"repeats": no_sampled_call("CLIP")}
    kind: Literal["clip"]
    score: Literal["cosine", "clipscore"] = Field(
        "cosine",
        description="'cosine' of prompt and image embeddings (orders as PickScore and CLIP's "
        "logits do), or 'clipscore': 2.5 * max(cosine, 0) (Hessel et al. 2021)",
    )

    @model_validator(mode="after")
    def _clip_model(self) -> ClipJudgeConfig:
        spec = parse_model_spec(self.model) if self.model else None
        problem = None
        if spec is None or spec.backend != "clip":
            problem = "a clip judge needs a 'clip:' model (e.g. clip:openai/clip-vit-large-patch14)"
        elif isinstance(self.api_base, list) or self.api_base:
            problem = "a clip: model runs locally and takes no api_base"
        if problem is not None:
            raise ValueError(f"judge {self.name!r}: {self.model}: {problem}")
        return self


@judge_kind("clip", config=ClipJudgeConfig, label="CLIP", label_several="CLIP ({model})")
def build_clip(config: ClipJudgeConfig, building: Building) -> Judge:
    return ClipJudge(config, building.embedding_client(config))
