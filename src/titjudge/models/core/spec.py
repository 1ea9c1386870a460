"""Model spec strings, parsed in one place: `<backend>:<id>`; kept low in
`titjudge.records.spec` (provenance lines of a recorded run read them too) and re-exported
here under their old import path."""

from __future__ import annotations

from titjudge.records.spec import BACKENDS, ModelSpec, parse_model_spec

__all__ = ["BACKENDS", "ModelSpec", "parse_model_spec"]
