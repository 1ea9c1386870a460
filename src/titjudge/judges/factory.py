"""Build the configured judges, in config order, from one model hub."""

from __future__ import annotations

from titjudge.config import DescriberConfig, JudgeConfig
from titjudge.errors import ConfigError
from titjudge.judges.base import Judge
from titjudge.judges.embedding import EmbeddingJudge
from titjudge.judges.lexical import LexicalJudge
from titjudge.judges.llm import LLMJudge
from titjudge.judges.lmm import LMMJudge
from titjudge.models.hub import ModelHub
from titjudge.prompts.loader import load_template

DEFAULT_TEMPLATES = {"llm": "judge_similarity", "self_eval": "judge_similarity", "lmm": "lmm_score"}


def build_judge(config: JudgeConfig, describer: DescriberConfig, hub: ModelHub) -> Judge:
    # lmm and self_eval default to the describer's own VLM, reached the describer's way
    options = config if config.model is not None else describer
    model = config.model or describer.model
    if config.kind == "lexical":
        return LexicalJudge(config.name)
    if config.kind == "embedding":
        return EmbeddingJudge(config.name, hub.embedding_client(model, options), config.instruction)
    template = load_template(config.prompt or DEFAULT_TEMPLATES[config.kind])
    wanted = {"lmm": "lmm"}.get(config.kind, "judge")
    if template.role and template.role != wanted:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}) uses template {template.name!r}, whose role is "
            f"{template.role!r}; it needs a {wanted!r} template"
        )
    client = hub.text_client(model, options)
    if config.kind == "lmm":
        if not client.backend.capabilities.vision:
            raise ConfigError(f"judge {config.name!r} (lmm) needs a vision model; {model} is text-only")
        return LMMJudge(config.name, client, template, config.max_tokens, config.temperature)
    return LLMJudge(config.name, client, template, config.max_tokens, config.temperature, kind=config.kind)


def build_judges(judges: list[JudgeConfig], describer: DescriberConfig, hub: ModelHub) -> list[Judge]:
    return [build_judge(config, describer, hub) for config in judges]
