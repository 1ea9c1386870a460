"""The pair-by-pair audit: load a run dir, show it in the terminal or as one HTML page."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
