"""Manifests, dataset importers, human pairs, vote aggregation, rankings, synthetic benchmark."""
