"""litellm's exceptions as titjudge's error classes: `classify` (the one classification of
text and embedding calls, with quotas and the wait a provider asks for), `lasting` (reasons
that will not heal within a run, which stop a model) and `reasons` (content filters, and
whether a call was refused before any token)."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
