"""The call cache: keys, store, stats, clearing."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
