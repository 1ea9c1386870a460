"""Comparers: LLM judge, embedding judge, LMM score (image + prompt), self-eval, and the modes
beyond the paper: pairwise, checklist, lmm_yes, `score_mode: expected` and `repeats: N`."""
