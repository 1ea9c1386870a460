"""Sizing images before they are sent; kept low in `titjudge.records.images` (the data
loader sizes with the same functions) and re-exported here under their old import path."""

from __future__ import annotations

from titjudge.records.images import (
    MAX_SIDE,
    PIL_VERSION,
    downscale,
    draft,
    encode,
    entry,
    fit_image,
    fitted_size,
    read_entry,
    side_bounded_size,
)

__all__ = [
    "MAX_SIDE",
    "PIL_VERSION",
    "downscale",
    "draft",
    "encode",
    "entry",
    "fit_image",
    "fitted_size",
    "read_entry",
    "side_bounded_size",
]
