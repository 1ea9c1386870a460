"""`titjudge reproduce FILE.tjpack [--out DIR] [--against paper]`: every number of a packed
run re-derived from the pack alone (no key, no network, no cache, no run dir), written as a
run dir, and diffed against the pack's own.

Opening a pack checks it first: its format and version (a pack from a newer titjudge is
refused), that it holds exactly the files its manifest lists, each with the sha256 and size
listed (a damaged or altered pack is refused naming the file that fails), and that no
entry's name reaches outside the folder it is opened into.

Re-deriving: the metrics are computed again, by the same code a run computes them with
(`metrics.summary.metrics_record`, then each repeated judge's spreads), from the pack's item
lines (the scores its judges gave), pairwise verdicts, human pairs, ranks and ratings, with
the settings the pack's metrics.json records (bootstrap resamples, seed, gain, top-k,
rounding). Each variant's provenance (the models asked and answering, templates) is the
pack's record of who answered: a fact, not a number, carried over. The audit's verdicts are
derived again from the written run dir (`report.audit`). Then every value of metrics.json
and of the audit's document is compared with the pack's: exactly, numbers and text alike.
"""

from __future__ import annotations

import json
import shutil
import zipfile
import zlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from titjudge.errors import DataError
from titjudge.records.percent import percent
from titjudge.study.pack import FORMAT, MANIFEST, PACK_VERSION, point_data, sha256_of

#: what `--against paper` compares with: the paper's headline numbers (docs/reproduce.md)
PAPER = {
    "TIT-Score-LLM (Gemini 2.5 Pro) pairwise accuracy": 0.6651,
    "TIT-Score (Qwen3-Embedding) pairwise accuracy": 0.6638,
    "T2I model ranking SRCC": 0.929,
}


#: what reading a damaged zip raises (a flipped byte can land in any field of it)
DAMAGED = (
    zipfile.BadZipFile,
    zlib.error,
    OSError,
    EOFError,
    ValueError,
    NotImplementedError,
    UnicodeDecodeError,
)


@dataclass
class Pack:
    """An opened, checked pack: its manifest and the folder its files were written to."""

    path: Path
    manifest: dict[str, Any]
    folder: Path

    @property
    def run(self) -> Path:
        return self.folder / "run"

    @property
    def data(self) -> Path:
        return self.folder / "data"


def _safe_name(name: str, pack: Path) -> PurePosixPath:
    found = PurePosixPath(name)
    if found.is_absolute() or ".." in found.parts or not found.parts:
        raise DataError(f"{pack}: entry {name!r} reaches outside the pack; refused")
    return found


def open_pack(path: Path, into: Path) -> Pack:
    """The pack at `path`, checked and written under `into`; anything wrong is one DataError
    naming the file."""
    try:
        archive = zipfile.ZipFile(path)
    except FileNotFoundError:
        raise DataError(f"{path}: not found") from None
    except DAMAGED as exc:
        raise DataError(f"{path}: not a titjudge pack ({exc})") from None
    with archive:
        manifest = _manifest(archive, path)
        listed: dict[str, Any] = manifest["files"]
        names = [n for n in archive.namelist() if n != MANIFEST]
        extra = sorted(set(names) - set(listed))
        if extra:
            raise DataError(f"{path}: {extra[0]} is not in the pack's manifest; refused")
        absent = sorted(set(listed) - set(names))
        if absent:
            raise DataError(f"{path}: {absent[0]} is listed but missing; the pack is damaged")
        for name in sorted(listed):
            target = into / Path(*_safe_name(name, path).parts)
            try:
                data = archive.read(name)
            except DAMAGED as exc:
                raise DataError(f"{path}: {name} is damaged ({exc}); refused") from None
            want = listed[name]
            if len(data) != want.get("bytes") or sha256_of(data) != want.get("sha256"):
                raise DataError(
                    f"{path}: {name} fails its sha256: the pack was altered or damaged; refused"
                )
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return Pack(path, manifest, into)


def _manifest(archive: zipfile.ZipFile, path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(archive.read(MANIFEST))
    except KeyError:
        raise DataError(f"{path}: no {MANIFEST}: not a titjudge pack") from None
    except DAMAGED as exc:
        raise DataError(f"{path}: {MANIFEST} is damaged ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{path}: not a titjudge pack (no format {FORMAT!r} in {MANIFEST})")
    version = manifest.get("version")
    if not isinstance(version, int) or version > PACK_VERSION:
        raise DataError(
            f"{path}: pack format version {version!r} is newer than this titjudge reads "
            f"(up to {PACK_VERSION}); upgrade titjudge"
        )
    if not isinstance(manifest.get("files"), dict):
        raise DataError(f"{path}: {MANIFEST} lists no files")
    return manifest


def _item_results(lines: list[Any], items: Mapping[str, Any]) -> list[Any]:
    """The item lines as item results (what a repeated judge's spreads are computed from)."""
    from titjudge.records import ItemResult
    from titjudge.records.outcomes import Described, JudgeOutcome

    by_item: dict[str, list[Any]] = {}
    for line in lines:
        by_item.setdefault(line.item_id, []).append(line)
    results = []
    for item_id in sorted(by_item):
        outcomes = [
            JudgeOutcome(
                line.variant,
                line.status,
                score=line.score,
                rationale=line.rationale,
                raw=line.raw,
                error=line.error,
                details=line.details,
            )
            for line in by_item[item_id]
        ]
        results.append(
            ItemResult(items[item_id], Described(by_item[item_id][0].description), outcomes)
        )
    return results


def rederive(pack: Pack) -> Any:
    """The run's record computed again from the pack's files (module docstring)."""
    from titjudge.data.human import load_ratings, run_human_data
    from titjudge.data.manifest import load_manifest
    from titjudge.files import iter_jsonl, read_json_object
    from titjudge.metrics.evaluate import HumanData, repeat_spreads
    from titjudge.metrics.summary import MetricSettings, metrics_record
    from titjudge.records.item_line import ItemLine
    from titjudge.records.public_set import PublicSet
    from titjudge.records.run_record import RunRecord
    from titjudge.report.record import build_record, load_verdicts, parse_record

    lines = [
        ItemLine.parse(obj, f"{pack.path}:run/items.jsonl:{n}")
        for n, obj in iter_jsonl(pack.run / "items.jsonl", "run items file")
    ]
    items = load_manifest(pack.data / "manifest.jsonl")
    kept = {line.item_id for line in lines}
    ranks_file = pack.data / "ranks.csv"
    pairs, ranks = run_human_data(
        items, kept, pack.data / "pairs.csv", ranks_file if ranks_file.is_file() else None
    )
    verdicts = {
        path.stem.removeprefix("pairs_"): load_verdicts(path)
        for path in sorted(pack.run.glob("pairs_*.jsonl"))
    }
    own: RunRecord = parse_record(
        read_json_object(pack.run / "metrics.json", "metrics file"), f"{pack.path}:run/metrics.json"
    )
    given = own.settings
    if given.gain not in ("linear", "exponential"):
        raise DataError(f"{pack.path}: run/metrics.json: unknown gain {given.gain!r}")
    settings = MetricSettings(
        bootstrap=given.bootstrap,
        seed=given.seed,
        gain="exponential" if given.gain == "exponential" else "linear",
        top_k=given.top_k,
        round_digits=given.round_digits,
        confidence=given.confidence,
    )
    dataset = PublicSet.beside(pack.data / "manifest.jsonl")
    ratings = None
    if dataset is not None and dataset.rated:
        ratings = load_ratings(pack.data / "ratings.csv", kept)
    kept_items = [item for item in items if item.item_id in kept]
    human = HumanData(pairs, ranks, kept_items, dataset, ratings)
    record = metrics_record(
        [line.score_row() for line in lines],
        pairs,
        ranks,
        kept_items,
        verdicts=verdicts,
        settings=settings,
        protocol=human.protocol(),
    )
    by_id = {item.item_id: item for item in items}
    for variant, found in repeat_spreads(_item_results(lines, by_id), human, verdicts).items():
        if variant in record.variants:
            record.variants[variant].repeats = found
    provenances = {n: v.provenance for n, v in own.variants.items() if v.provenance is not None}
    record = build_record(record, provenances, own.describer)
    record.dataset = dataset
    record.item_lines = lines
    record.verdicts = verdicts
    return record


def write_reproduced(pack: Pack, record: Any, out: Path) -> Path:
    """The re-derived run as a run dir at out/run (its data at out/data): metrics.json,
    items.jsonl, scores.csv, pairs_<judge>.jsonl written from the record, config.yaml
    pointing at out/data, the pack's summary.json, files.json last."""
    import yaml

    from titjudge.files import atomic_write
    from titjudge.report.record import write_record_files
    from titjudge.report.run_files import write_run_files

    run_dir, data = out / "run", out / "data"
    shutil.copytree(pack.data, data)
    run_dir.mkdir(parents=True)
    config = point_data(
        yaml.safe_load((pack.run / "config.yaml").read_text(encoding="utf-8")), data
    )
    atomic_write(
        run_dir / "config.yaml", yaml.safe_dump(config, sort_keys=False, allow_unicode=True)
    )
    write_record_files(run_dir, record, with_metrics=True)
    shutil.copyfile(pack.run / "summary.json", run_dir / "summary.json")
    write_run_files(run_dir)
    return run_dir


def _leaves(value: Any, at: str = "") -> Iterator[tuple[str, Any]]:
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _leaves(value[key], f"{at}.{key}" if at else str(key))
    elif isinstance(value, list):
        for n, entry in enumerate(value):
            yield from _leaves(entry, f"{at}[{n}]")
    else:
        yield at, value


def differences(name: str, packed: Any, again: Any) -> list[str]:
    """One line per value that differs between two documents (a key only one has too)."""
    left, right = dict(_leaves(packed)), dict(_leaves(again))
    lines = []
    for key in sorted(set(left) | set(right)):
        if key not in right:
            lines.append(f"{name}: {key}: in the pack ({left[key]!r}), not re-derived")
        elif key not in left:
            lines.append(f"{name}: {key}: re-derived ({right[key]!r}), not in the pack")
        elif left[key] != right[key] or type(left[key]) is not type(right[key]):
            lines.append(f"{name}: {key}: pack {left[key]!r}, re-derived {right[key]!r}")
    return lines


def compare(pack: Pack, run_dir: Path) -> list[str]:
    """Every difference between the pack's numbers and the re-derived run's."""
    from titjudge.report.audit.json_view import audit_json
    from titjudge.report.audit.load import load_audit
    from titjudge.study.pack import DATA_FILES, rewrite_paths

    found = differences(
        "metrics.json",
        json.loads((pack.run / "metrics.json").read_text(encoding="utf-8")),
        json.loads((run_dir / "metrics.json").read_text(encoding="utf-8")),
    )
    again = audit_json(load_audit(run_dir))
    again.pop("run_dir", None)
    packed_audit = json.loads((pack.run / "audit.json").read_text(encoding="utf-8"))
    names = {str((run_dir.parent / "data" / n).resolve()): f"data/{n}" for _, n in DATA_FILES}
    again = json.loads(json.dumps(rewrite_paths(again, names)))
    found += differences("audit", _comparable(packed_audit), _comparable(again))
    return found


def _comparable(audit: dict[str, Any]) -> dict[str, Any]:
    """The audit's document without what names where files are (paths differ by machine)."""
    return {k: v for k, v in audit.items() if k not in ("run_dir", "name")}


def against_paper(record: Any) -> list[str]:
    """The pack's numbers beside the paper's headline numbers (PAPER), one line each, and
    what could not be compared."""
    lines = []
    by_kind: dict[str, list[tuple[str, float | None]]] = {}
    for name, variant in record.variants.items():
        kind = variant.provenance.kind if variant.provenance else None
        by_kind.setdefault(kind or "?", []).append((name, variant.pairwise_accuracy))
    for label, published in PAPER.items():
        kind = "llm" if "LLM" in label else "embedding" if "Embedding" in label else None
        if kind is None:
            board = record.leaderboard
            srccs = {n: v.leaderboard_srcc for n, v in record.variants.items()} if board else {}
            shown = ", ".join(f"{n} {v:.3f}" for n, v in srccs.items() if v is not None)
            lines.append(
                f"{label}: paper {published:.3f}; this run {shown or 'none (no T2I models)'}"
            )
            continue
        ours = [(n, a) for n, a in by_kind.get(kind, []) if a is not None]
        shown = ", ".join(f"{n} {percent(a, 2)}" for n, a in ours) or f"none (no {kind} judge)"
        lines.append(f"{label}: paper {percent(published, 2)}; this run {shown}")
    lines.append(
        "not compared: the paper's Table 3 per-model ranks and its per-judge table are not "
        "published in a form titjudge holds; the paper's numbers are on LPG-Bench's unreleased "
        "annotations, so a run on other pairs is beside them, not a reproduction of them"
    )
    return lines


__all__ = [
    "PAPER",
    "Pack",
    "against_paper",
    "compare",
    "differences",
    "open_pack",
    "rederive",
    "write_reproduced",
]
