"""Tables (Markdown, CSV, LaTeX), plots and the HTML audit page."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
