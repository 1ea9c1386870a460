"""Comparers: LLM judge, embedding judge, LMM score (image + prompt), self-eval."""
