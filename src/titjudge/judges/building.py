"""What building a judge checks before any item is judged: the template's role and variables,
vision for image judges, log-probabilities for the modes that read them. A mismatch is a
ConfigError naming the judge."""

from __future__ import annotations

from dataclasses import dataclass

from titjudge.errors import ConfigError
from titjudge.judges.base import SamplingJudge
from titjudge.judges.options import JudgeOptions, LogprobOptions, ModelJudgeOptions, SampledOptions
from titjudge.judges.repeats import RepeatedJudge
from titjudge.models.core.clients import ClientSource, EmbeddingCalls, TextCalls
from titjudge.models.core.options import ModelOptions
from titjudge.models.core.rules import supports_top_logprobs
from titjudge.prompts.loader import PromptTemplate, load_template

#: OpenAI-compatible servers return at most this many alternatives per token
API_MAX_TOP_LOGPROBS = 20


@dataclass(frozen=True)
class Building:
    """What a kind's build function is given beside its config: the run's clients (`hub`)
    and the describer's model and options, which a describer-bound judge that names no model
    calls, reached the describer's way."""

    describer_model: str
    describer: ModelOptions
    hub: ClientSource

    def text_client(self, config: ModelJudgeOptions) -> TextCalls:
        """The client of the text model `config` calls: its own, or the describer's."""
        return self.hub.text_client(*config.reach(self.describer_model, self.describer))

    def embedding_client(self, config: ModelJudgeOptions) -> EmbeddingCalls:
        return self.hub.embedding_client(*config.reach(self.describer_model, self.describer))


#: the variables of a template that renders only the prompt (the image judges', the
#: checklist's decomposition)
PROMPT_ONLY = frozenset({"prompt"})


def checked_template(
    config: SampledOptions,
    default: str,
    role: str,
    variables: frozenset[str] | None = None,
    *,
    given: str | None = None,
) -> PromptTemplate:
    """The judge's template: the one it names (`given`, else its `prompt`), else `default`;
    its role must be `role` and, when `variables` is given, it must take exactly those."""
    template = load_template(given or config.prompt or default)
    if template.role and template.role != role:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}) uses template {template.name!r}, whose role is "
            f"{template.role!r}; it needs a {role!r} template"
        )
    if variables is not None and template.variables != variables:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}): template {template.name!r} takes "
            f"{', '.join(sorted(template.variables)) or 'no variables'}; it must take "
            f"{', '.join(sorted(variables))}"
        )
    return template


def needs_vision(config: JudgeOptions, client: TextCalls) -> None:
    if not client.backend.capabilities.vision:
        raise ConfigError(
            f"judge {config.name!r} ({config.kind}) needs a vision model; {client.model} is "
            "text-only"
        )


def needs_logprobs(
    config: LogprobOptions, client: TextCalls, why: str, instead: str | None = None
) -> None:
    """The judge's model must return `config.logprobs_k` alternatives per token. `instead`:
    the setting that scores without them (`score_mode=sampled`), named as the `--set` that
    makes it: what the judge measures is not changed behind the user's back when its model is
    swapped to one without log-probabilities."""
    fix = (
        f"; or --set judges.{config.name}.{instead} (comparers.{config.name}.{instead} in a grid)"
        if instead
        else ""
    )
    if not client.backend.capabilities.logprobs:
        raise ConfigError(
            f"judge {config.name!r}: {why} needs token log-probabilities, which "
            f"{client.model} ({client.backend.spec.backend}:) cannot return; use a local hf: model "
            f"or an OpenAI-compatible server{fix}"
        )
    if provider_supports_logprobs(client) is False:
        raise ConfigError(
            f"judge {config.name!r}: {why} needs token log-probabilities, and litellm reports that "
            f"{client.backend.spec.model_id!r} does not support top_logprobs; use an "
            f"OpenAI-compatible server or a local hf: model{fix}"
        )
    if client.backend.spec.backend == "litellm" and config.logprobs_k > API_MAX_TOP_LOGPROBS:
        raise ConfigError(
            f"judge {config.name!r}: top_logprobs {config.logprobs_k} exceeds the "
            f"{API_MAX_TOP_LOGPROBS} an OpenAI-compatible server returns"
        )


def provider_supports_logprobs(client: TextCalls) -> bool | None:
    """For litellm models: whether litellm's provider table lists `top_logprobs` (Anthropic and
    Ollama do not, for example); None when it cannot tell or the backend is not litellm."""
    return supports_top_logprobs(client.backend.spec)


def repeated(judge: SamplingJudge, repeats: int) -> SamplingJudge | RepeatedJudge:
    """The judge itself, or run `repeats` times with the median as its score."""
    return RepeatedJudge(judge, repeats) if repeats > 1 else judge
