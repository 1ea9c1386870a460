"""Models that run in this process: local transformers checkpoints (`hf:`: `hf`, its batched
generation in `hf_generate`, its plan in `hf_plan`), local embedding models (`embed:`: `embed`
picks the layout, `embed_base`, `embed_last_token`, `embed_st`, its plan in `embed_plan`), what
they share (`common`: checkpoint lookup, device, dtype, the micro-batcher) and stored
descriptions (`replay:`, `replay`). torch and transformers load only when a backend is built."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
