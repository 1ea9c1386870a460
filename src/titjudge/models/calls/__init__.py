"""The call layer: every model call, whatever backend answers it, goes through here. The one
pipeline (`pipeline`: cache, claim, limits, retries), the two call kinds on top of it (text and
validated objects in `text_client`, embeddings in `embedding_client`), what enters a cache key
(`keys`), a model's limits and pacing (`limits`, `pacing`, `token_estimate`), what a reply
yields or why it cannot be used (`results`, `structured`), and which model answered
(`provenance`). Imports no backend."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
