"""The synthetic benchmark shaped like LPG-Bench: scenes (`scene`, `vocab`), their long prompts and
descriptions (`text`), drawn PNGs (`draw`), and the whole benchmark with simulated votes (`benchmark`).
For plumbing and benchmarks, not for conclusions about real models."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
