"""The public sets titjudge imports, one module per set: each preset cites the dataset card
or repository file its schema and protocol are taken from."""

from __future__ import annotations

from titjudge.data.public.presets import Preset
from titjudge.data.public.sets.pickapic import PICKAPIC_V2

#: every preset, in the order the docs list them
ALL: tuple[Preset, ...] = (PICKAPIC_V2,)

__all__ = ["ALL", "PICKAPIC_V2"]
