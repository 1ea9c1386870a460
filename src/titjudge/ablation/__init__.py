"""The Table 4 ablation grid: its config, runner, tables and heatmap."""
