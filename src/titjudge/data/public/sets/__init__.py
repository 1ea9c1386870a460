"""The public sets titjudge imports, one module per set: each preset cites the dataset card
or repository file its schema and protocol are taken from."""

from __future__ import annotations

from titjudge.data.public.presets import Preset
from titjudge.data.public.sets.hpd import HPDV2, HPDV3
from titjudge.data.public.sets.imagereward import IMAGEREWARDDB
from titjudge.data.public.sets.pickapic import PICKAPIC_V2
from titjudge.data.public.sets.ratings import EVALMUSE, GENAI_BENCH, LONGT2IBENCH
from titjudge.errors import DataError

#: every preset, in the order the docs list them
ALL: tuple[Preset, ...] = (
    PICKAPIC_V2,
    HPDV2,
    HPDV3,
    IMAGEREWARDDB,
    EVALMUSE,
    GENAI_BENCH,
    LONGT2IBENCH,
)


def presets() -> dict[str, Preset]:
    """Every preset, by name, in the order the docs list them."""
    return {preset.name: preset for preset in ALL}


def preset_named(name: str) -> Preset:
    """The preset called `name`, or a DataError listing those titjudge has."""
    found = presets().get(name)
    if found is None:
        raise DataError(f"unknown preset {name!r}; presets: {', '.join(presets())}")
    return found


__all__ = [
    "ALL",
    "EVALMUSE",
    "GENAI_BENCH",
    "HPDV2",
    "HPDV3",
    "IMAGEREWARDDB",
    "LONGT2IBENCH",
    "PICKAPIC_V2",
    "preset_named",
    "presets",
]
