"""Prompt templates as versioned text files, loaded by name with their hash."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
