"""Comparers: LLM judge, embedding judge, LMM score (image + prompt), self-eval, and the modes
beyond the paper: pairwise, checklist, lmm_yes, `score_mode: expected` and `repeats: N`."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
