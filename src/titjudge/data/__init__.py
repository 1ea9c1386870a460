"""Manifests, dataset importers, human pairs, vote aggregation, rankings, synthetic benchmark."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
