"""`titjudge estimate CONFIG`: what a run or an ablation grid would spend now, sending nothing."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from titjudge.cli.common import command, config_args, json_arg, preflight, wide_console

if TYPE_CHECKING:
    from titjudge.ablation.config import AblationConfig
    from titjudge.config.schema import RunConfig
    from titjudge.run.estimate import Estimate


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `estimate`."""
    command(
        subparsers,
        "estimate",
        estimate,
        "the calls, tokens and dollars a run or ablation config would spend now (cache misses "
        "only), after the run's own preflight; sends nothing",
        *config_args("run or ablation config (YAML)"),
        json_arg("the estimate"),
    )


def run_configs(path: Path, overrides: list[str]) -> list[RunConfig]:
    """The runs a config stands for: itself, or an ablation grid's enabled rows."""
    return planned_runs(path, overrides)[1]


def planned_runs(
    path: Path, overrides: list[str]
) -> tuple[RunConfig | AblationConfig, list[RunConfig]]:
    """The config as its own command loads it (a run's or a grid's, for its preflight) and the
    runs it stands for: itself, or the grid's enabled rows."""
    from titjudge.config.load import COMMAND_KEYS
    from titjudge.files import load_yaml

    raw = load_yaml(path)
    if any(key in raw for key in COMMAND_KEYS["ablation"]):
        from titjudge.ablation.config import load_ablation_config, row_run_config

        grid = load_ablation_config(path, overrides)
        return grid, [row_run_config(grid, row) for row in grid.rows]
    from titjudge.config.load import load_config

    config = load_config(path, overrides)
    return config, [config]


def config_budget(path: Path, overrides: list[str]) -> float | None:
    """The config's `run.budget_usd` (after `--set`), when it is a valid one."""
    from titjudge.config.load import apply_overrides
    from titjudge.files import load_yaml

    raw = apply_overrides(load_yaml(path), overrides)
    run = raw.get("run") if isinstance(raw, dict) else None
    value = run.get("budget_usd") if isinstance(run, dict) else None
    if not isinstance(value, int | float) or isinstance(value, bool) or value < 0:
        return None
    return float(value)


def budget_verdict(found: Estimate, budget: float) -> str:
    """What the estimate says about `budget`: within it, over it at worst, or unknown."""
    if found.unpriced:
        return (
            "unknown: under run.budget_usd a run refuses unpriced models; give "
            f"{', '.join(found.unpriced)} a price"
        )
    assert found.usd is not None and found.usd_max is not None
    if found.usd_max <= budget:
        return "within it, even at worst"
    if found.usd <= budget:
        return "the expected spend is within it; at worst the run stops at it (exit 3)"
    return "the expected spend is over it: the run will stop at it (exit 3)"


def estimate(args: argparse.Namespace) -> int:
    """Print the estimate (a table, or `--json`); exit 0. The run's preflight comes first (a
    grid's, for an ablation config): what `run` would refuse, estimate refuses in the same
    line (exit 2). Under `run.budget_usd` an unpriced model, which the run would refuse, is
    listed as unknown, not refused."""
    import asyncio

    from titjudge.errors import ConfigError
    from titjudge.run.estimate import estimate_runs

    given = list(args.set or [])
    budget = config_budget(args.config, given)
    overrides = given if budget is None else [*given, "run.budget_usd=null"]
    config, configs = planned_runs(args.config, overrides)
    if not configs:
        raise ConfigError(f"{args.config}: no enabled describer row to estimate")
    preflight(config, str(args.config))
    found = asyncio.run(estimate_runs(configs, args.limit))
    if args.json:
        data = found.to_json()
        if budget is not None:
            data["budget_usd"], data["budget"] = budget, budget_verdict(found, budget)
        print(json.dumps(data, indent=2))
    else:
        print_estimate(found)
        if budget is not None:
            from titjudge.report.render import say

            verdict = budget_verdict(found, budget)
            say(wide_console(), f"budget: ${budget:g} (run.budget_usd): {verdict}")
    return 0


def _money(value: float | None) -> str:
    return "unknown" if value is None else f"${value:.4f}"


def print_estimate(found: Estimate) -> None:
    """The estimate's lines as a table, then the totals and any unpriced model."""
    from titjudge.report.render import add_plain_row, plain_table, say

    console = wide_console()
    if not found.lines:  # nothing to send: no table of zeros
        say(
            console,
            f"estimate: {', '.join(found.runs)} ({found.items} items): nothing to send, $0; "
            f"{found.cached} calls answered from the cache",
        )
        return
    headers = ("role", "model", "calls", "cached", "tokens in", "out (thinking)", "basis")
    table = plain_table(
        f"estimate: {', '.join(found.runs)} ({found.items} items)", (*headers, "usd", "usd max"), 2
    )
    for line in found.lines:
        row: dict[str, Any] = line.to_json()
        add_plain_row(
            table,
            line.role,
            line.model,
            str(line.calls),
            str(line.cached),
            str(line.tokens_in),
            f"{row['tokens_out']} ({row['thinking_tokens']})",
            line.basis,
            _money(line.usd),
            _money(line.usd_max),
        )
    console.print(table)
    prices = {line.model: line.price for line in found.lines if line.price}
    for model, source in prices.items():
        say(console, f"price of {model}: {source}")
    say(
        console,
        f"{found.calls} calls to send: {_money(found.usd)} expected, {_money(found.usd_max)} "
        f"at most (every call at its output and thinking caps); {found.cached} answered from "
        "the cache",
    )
    for model in found.unpriced:
        say(
            console,
            f"{model}: no price (litellm has none); set its price: {{input: $, output: $}} "
            "per 1M tokens to count it",
        )


__all__ = ["estimate", "planned_runs", "print_estimate", "register", "run_configs"]
