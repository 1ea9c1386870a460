"""Build the configured judges, in config order, from one model hub.

Everything a judge kind needs from its model and templates is checked here, before any
item is judged: template roles and variables, vision for image judges, log-probabilities
for `score_mode: expected` and `lmm_yes`. A mismatch is a ConfigError naming the judge.
"""

from __future__ import annotations

from titjudge.config import DescriberConfig, JudgeConfig
from titjudge.errors import ConfigError
from titjudge.judges.base import Judge, SamplingJudge
from titjudge.judges.checklist import ChecklistJudge
from titjudge.judges.embedding import EmbeddingJudge
from titjudge.judges.lexical import LexicalJudge
from titjudge.judges.llm import LLMJudge, Scoring
from titjudge.judges.lmm import LMMJudge
from titjudge.judges.lmm_yes import LMMYesJudge
from titjudge.judges.pairwise import PairwiseJudge
from titjudge.judges.repeats import RepeatedJudge
from titjudge.models.call import ModelClient
from titjudge.models.hub import ModelHub
from titjudge.prompts.loader import PromptTemplate, load_template

DEFAULT_TEMPLATES = {
    "llm": "judge_similarity",
    "self_eval": "judge_similarity",
    "lmm": "lmm_score",
    "pairwise": "pairwise",
    "checklist": "checklist_judge",
    "lmm_yes": "lmm_yes",
}
#: score_mode expected defaults to templates whose scores are one token each
EXPECTED_TEMPLATES = {"llm": "judge_expected", "self_eval": "judge_expected", "lmm": "lmm_expected"}
#: the scale a shipped template asks for, where it is not the default 0-100
TEMPLATE_SCALES = {"judge_expected": (1, 9), "lmm_expected": (1, 9)}
#: template role and variables each kind renders
TEMPLATE_NEEDS: dict[str, tuple[str, frozenset[str]]] = {
    "llm": ("judge", frozenset({"prompt", "description"})),
    "self_eval": ("judge", frozenset({"prompt", "description"})),
    "lmm": ("lmm", frozenset({"prompt"})),
    "lmm_yes": ("lmm", frozenset({"prompt"})),
    "pairwise": ("pairwise", frozenset({"prompt", "first", "second"})),
    "checklist": ("judge", frozenset({"prompt", "elements", "description"})),
    "decompose": ("decompose", frozenset({"prompt"})),
}
#: OpenAI-compatible servers return at most this many alternatives per token
API_MAX_TOP_LOGPROBS = 20


def _template(config: JudgeConfig, name: str, need: str) -> PromptTemplate:
    template = load_template(name)
    role, variables = TEMPLATE_NEEDS[need]
    if template.role and template.role != role:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}) uses template {template.name!r}, whose role is "
            f"{template.role!r}; it needs a {role!r} template"
        )
    if config.kind not in ("llm", "self_eval", "lmm") and template.variables != variables:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}): template {template.name!r} takes "
            f"{', '.join(sorted(template.variables)) or 'no variables'}; it must take {', '.join(sorted(variables))}"
        )
    return template


def _needs_logprobs(config: JudgeConfig, client: ModelClient, why: str) -> None:
    if not client.backend.capabilities.logprobs:
        raise ConfigError(
            f"judge {config.name!r}: {why} needs token log-probabilities, which "
            f"{client.model} ({client.backend.spec.backend}:) cannot return; use a local hf: model "
            "or an OpenAI-compatible server"
        )
    if provider_supports_logprobs(client) is False:
        raise ConfigError(
            f"judge {config.name!r}: {why} needs token log-probabilities, and litellm reports that "
            f"{client.backend.spec.model_id!r} does not support top_logprobs; use an OpenAI-compatible "
            "server or a local hf: model"
        )
    if client.backend.spec.backend == "litellm" and config.logprobs_k > API_MAX_TOP_LOGPROBS:
        raise ConfigError(
            f"judge {config.name!r}: top_logprobs {config.logprobs_k} exceeds the "
            f"{API_MAX_TOP_LOGPROBS} an OpenAI-compatible server returns"
        )


def provider_supports_logprobs(client: ModelClient) -> bool | None:
    """For litellm models: whether litellm's provider table lists `top_logprobs` (Anthropic and
    Ollama do not, for example); None when it cannot tell or the backend is not litellm."""
    if client.backend.spec.backend != "litellm":
        return None
    import litellm

    try:
        params = litellm.get_supported_openai_params(model=client.backend.spec.model_id)
    except Exception:  # an unknown provider: litellm cannot tell, so the run finds out per call
        return None
    return None if params is None else "top_logprobs" in params


def scoring_for(config: JudgeConfig, template: PromptTemplate) -> Scoring:
    lo, hi = config.scale or TEMPLATE_SCALES.get(template.name, (0, 100))
    return Scoring(mode=config.score_mode, lo=lo, hi=hi, top_logprobs=config.logprobs_k)


def build_judge(config: JudgeConfig, describer: DescriberConfig, hub: ModelHub) -> Judge:
    # lmm, lmm_yes and self_eval default to the describer's own VLM, reached the describer's way
    options = config if config.model is not None else describer
    model = config.model or describer.model
    if config.kind == "lexical":
        return LexicalJudge(config.name)
    if config.kind == "embedding":
        return EmbeddingJudge(config.name, hub.embedding_client(model, options), config.instruction)
    default = (EXPECTED_TEMPLATES if config.score_mode == "expected" else DEFAULT_TEMPLATES)[
        config.kind
    ]
    template = _template(config, config.prompt or default, config.kind)
    client = hub.text_client(model, options)
    if config.kind in ("lmm", "lmm_yes") and not client.backend.capabilities.vision:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}) needs a vision model; {model} is text-only"
        )
    if config.score_mode == "expected":
        _needs_logprobs(config, client, "score_mode 'expected'")
    judge: SamplingJudge
    if config.kind == "pairwise":
        return PairwiseJudge(
            config.name, client, template, config.max_tokens, config.temperature, config.repeats
        )
    if config.kind == "lmm_yes":
        _needs_logprobs(config, client, "an lmm_yes judge")
        judge = LMMYesJudge(config.name, client, template, config.temperature, config.logprobs_k)
    elif config.kind == "checklist":
        decompose = _template(config, config.decompose_prompt or "checklist_decompose", "decompose")
        judge = ChecklistJudge(
            config.name,
            client,
            decompose,
            template,
            config.checklist_weights,
            config.max_tokens,
            config.temperature,
        )
    elif config.kind == "lmm":
        judge = LMMJudge(
            config.name,
            client,
            template,
            config.max_tokens,
            config.temperature,
            scoring_for(config, template),
        )
    else:
        judge = LLMJudge(
            config.name,
            client,
            template,
            config.max_tokens,
            config.temperature,
            kind=config.kind,
            scoring=scoring_for(config, template),
        )
    return RepeatedJudge(judge, config.repeats) if config.repeats > 1 else judge


def build_judges(
    judges: list[JudgeConfig], describer: DescriberConfig, hub: ModelHub
) -> list[Judge]:
    return [build_judge(config, describer, hub) for config in judges]
