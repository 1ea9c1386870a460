"""How titjudge talks to litellm (`litellm:<provider/model>`): a model's settings worked out
without importing litellm (`settings`, `embed_settings`), the text backend (`backend`; several
endpoints through litellm's Router in `router`; `factory` picks), served embeddings (`embed`),
reading a reply (`reply`) and response schemas in each provider's structured-output subset
(`schemas`). litellm itself is imported only by `backend` and what builds on it, on the first
call that must be sent."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
