"""The Table 4 ablation grid: its config, runner, tables and heatmap."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
