"""Run configuration: the schema (`schema`), and loading with overrides (`load`)."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
