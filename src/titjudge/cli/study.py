"""`titjudge pack RUN -o FILE.tjpack [--with-images]`, `titjudge reproduce FILE.tjpack
[--out DIR] [--against paper]` and `titjudge drift FILE.tjpack --sample N [--set K=V]...`: a
run as one file a reader can take home, every number of it re-derived from that file alone,
and its judges asked again."""

from __future__ import annotations

import argparse
from pathlib import Path

from titjudge.cli.common import arg, command, set_arg

PACK_EPILOG = """\
One file (a zip) holding the run's resolved config, the templates it used, its images'
digests (the images too with --with-images), every describer and judge answer as parsed
and as raw text with the model that answered, usage and cost, the human pairs, ranks and
ratings its metrics used, its metrics and audit, and the package versions and lock; each
file listed with its sha256. No secret, no absolute path. `titjudge reproduce FILE`
re-derives every number from it on any machine.
"""

REPRODUCE_EPILOG = """\
Checks the pack (format, every file against its sha256: an altered or damaged pack is
refused naming the file), re-derives every number of metrics.json and the audit's verdicts
from the pack's answers and human judgements alone (no key, no network, no cache, no run
dir), writes them as a run dir at DIR/run (the pack's data at DIR/data: `titjudge metrics
DIR/run`, `titjudge audit DIR/run` read it), and compares: exit 0 when every value
matches exactly, else one line per difference and exit 1. --against paper sets the pack's
numbers beside the paper's published ones and says what it could not compare.
"""


DRIFT_EPILOG = """\
Re-asks the pack's models a fixed sample of N items stratified by T2I model and prompt
length, the same N every time, with the requests the run made and an empty cache: the judges
that read descriptions get the stored ones; from a pack made with --with-images the
describer describes each image again and the judges that look at the image see it again
(a pack of digests cannot send them: they are named). Reports per model: answers changed,
new failures, the models that answered now against those recorded, a Wilcoxon signed-rank
test of the paired scores, and on the sampled human pairs the verdicts that flipped and the
agreement with people before and now (exact McNemar). The calls and what the run paid for
them come first; `--set run.budget_usd=X` caps the spend. Exit 0 when nothing changed, 1
when something did.
"""


def register(subparsers: argparse._SubParsersAction) -> None:
    """Add `pack` and `reproduce`."""
    p = command(
        subparsers,
        "pack",
        pack,
        "a run as one file (.tjpack) whose every number `reproduce` re-derives elsewhere",
        arg(
            "run",
            type=Path,
            metavar="RUN|GRID",
            help="run dir (or its <run.out>/<name> folder), or an ablation grid's folder",
        ),
        arg("-o", "--out", type=Path, required=True, metavar="FILE", help="the .tjpack to write"),
        arg("--with-images", action="store_true", help="put the images in the pack too"),
    )
    p.formatter_class = argparse.RawDescriptionHelpFormatter
    p.epilog = PACK_EPILOG
    r = command(
        subparsers,
        "reproduce",
        reproduce,
        "re-derive every number of a .tjpack, offline, and compare with the pack's own",
        arg("pack", type=Path, metavar="FILE", help="a .tjpack written by `titjudge pack`"),
        arg(
            "--out",
            type=Path,
            metavar="DIR",
            help="where to write the run (default: reproduced-<run id>)",
        ),
        arg("--against", choices=["paper"], help="also set the numbers beside the paper's"),
    )
    r.formatter_class = argparse.RawDescriptionHelpFormatter
    r.epilog = REPRODUCE_EPILOG
    d = command(
        subparsers,
        "drift",
        drift,
        "re-ask a .tjpack's judges a fixed sample with the same requests: what changed",
        arg("pack", type=Path, metavar="FILE", help="a .tjpack written by `titjudge pack`"),
        arg("--sample", type=int, required=True, metavar="N", help="items to re-ask (fixed)"),
        set_arg("e.g. judges.tit_llm.api_base=http://host:8000/v1"),
    )
    d.formatter_class = argparse.RawDescriptionHelpFormatter
    d.epilog = DRIFT_EPILOG


def pack(args: argparse.Namespace) -> int:
    from titjudge.study.grid import build_grid_pack, is_grid
    from titjudge.study.pack import build_pack

    where = Path(args.run)
    make = build_grid_pack if is_grid(where) else build_pack
    done = make(where, Path(args.out), with_images=args.with_images)
    size = done.path.stat().st_size / 1e6
    images = f", {done.images} images" if args.with_images else " (images by digest)"
    print(f"wrote {done.path} ({size:.1f} MB, {len(done.files)} files{images})")
    for note in done.notes:
        print(f"note: {note}")
    return 0


def reproduce(args: argparse.Namespace) -> int:
    import tempfile

    from titjudge.errors import DataError
    from titjudge.safety import terminal_safe
    from titjudge.study.reproduce import (
        against_paper,
        compare,
        open_pack,
        rederive,
        write_reproduced,
    )

    source = Path(args.pack)
    with tempfile.TemporaryDirectory(prefix="titjudge-pack-") as folder:
        opened = open_pack(source, Path(folder))
        out = Path(args.out) if args.out else Path(f"reproduced-{source.stem}")
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise DataError(f"{out}: exists and is not an empty folder; name a new one (--out)")
        if opened.manifest.get("kind") == "grid":
            from titjudge.errors import ConfigError
            from titjudge.study.grid import check_grid_pack, reproduce_grid

            if args.against is not None:
                raise ConfigError(
                    "--against paper sets one run beside the paper; give a row's pack"
                )
            check_grid_pack(opened)
            found = reproduce_grid(opened, out)
            print(f"re-derived {source} into {out} (each row and the grid's tables)")
        else:
            record = rederive(opened)
            run_dir = write_reproduced(opened, record, out)
            found = compare(opened, run_dir)
            print(f"re-derived {source} into {run_dir} (from the pack alone)")
            if args.against == "paper":
                for line in against_paper(record):
                    print(terminal_safe(line))
    if found:
        for line in found:
            print(terminal_safe(line))
        print(f"{len(found)} value(s) differ from the pack's")
        return 1
    what = (
        "every row's metrics and audit, ablation.json and the tables"
        if opened.manifest.get("kind") == "grid"
        else "metrics.json and the audit's verdicts"
    )
    print(f"every number matches the pack's exactly ({what})")
    return 0


def drift(args: argparse.Namespace) -> int:
    import tempfile

    from titjudge.safety import terminal_safe
    from titjudge.study.drift import run_drift
    from titjudge.study.reproduce import open_pack

    with tempfile.TemporaryDirectory(prefix="titjudge-drift-") as folder:
        opened = open_pack(Path(args.pack), Path(folder))
        return run_drift(
            opened, args.sample, list(args.set or []), lambda line: print(terminal_safe(line))
        )
