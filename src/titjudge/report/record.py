"""One typed record of a run's results: what metrics.json holds and every view reads.

`RunRecord` is written once, by `write_record` (metrics.json, atomically, into the run's
staging dir), as `metrics.summary.metrics_record` made it (each number once) with each variant's
provenance. Everything that shows a number reads it back with `load_record` /
`load_run`: the run's tables, `titjudge metrics RUN`, `titjudge audit` (terminal, HTML,
`--json`), the ablation tables and `titjudge.load_run`. Nothing recomputes a metric.

Format (`version` 2): the variants under their own key, `variants: {name: {...}}`, so no
variant name meets a run-level key; each variant's metrics (pairwise_accuracy, n_pairs,
n_correct, metric_tie_rate, p_value, srcc, krcc, ndcg, ...; see `metrics.summary`) and its
`provenance`: judge kind, model asked for, models that answered (the calls' `answered_by`),
template name and sha256, thinking and sampling settings, fallback judge. Run-level:
thresholds, leaderboard, comparisons, settings, notes. A format-1 file (variants beside the
run-level keys, no provenance; written before this record) is read with its variants moved
under `variants` and no provenance. A pairwise judge's per-pair verdicts (each order's
choice and rationale) stay in pairs_<judge>.jsonl; `load_run` attaches them (`verdicts`).
`load_run` checks every file of the run against its files.json before it reads one
(`report.run_files`) and attaches that list (`files`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar, overload

from pydantic import ValidationError

from titjudge import files
from titjudge.errors import DataError
from titjudge.files import atomic_write, iter_jsonl, read_json_object
from titjudge.records import ItemResult
from titjudge.records.pairs import PairVerdict
from titjudge.records.run_record import RECORD_VERSION, Provenance, RunRecord

#: format-1 metrics.json's run-level keys (the variants were every other key)
_V1_RUN_KEYS = ("thresholds", "leaderboard", "comparisons", "settings", "notes")
#: a RunRecord subclass a reader asks for (`load_run(path, record_type)`)
R = TypeVar("R", bound=RunRecord)


def answered_models(results: Iterable[ItemResult]) -> dict[str, list[str]]:
    """Per variant, the models that answered its calls (the items' outcomes; a pairwise
    judge's win-rate outcomes carry its orders' models)."""
    found: dict[str, list[str]] = {}
    for result in results:
        for outcome in result.outcomes:
            models = found.setdefault(outcome.variant, [])
            models.extend(m for m in outcome.answered_by if m not in models)
    return found


def build_record(
    record: RunRecord,
    provenances: Mapping[str, Provenance] | None = None,
    describer: Mapping[str, Any] | None = None,
) -> RunRecord:
    """`record` (`metrics.summary.metrics_record`'s) with each variant's provenance and the
    describer that wrote the descriptions its judges read."""
    provenances = provenances or {}
    record.describer = dict(describer) if describer else None
    for name, variant in record.variants.items():
        if name in provenances:
            variant.provenance = provenances[name]
    return record


def write_record(out: Path, record: RunRecord) -> Path:
    """metrics.json: the one place a run's numbers are written."""
    from titjudge.files import to_json

    path = out / "metrics.json"
    atomic_write(path, to_json(record.metrics_json()) + "\n")
    return path


def write_record_files(out: Path, record: RunRecord, *, with_metrics: bool) -> None:
    """Every file of a run dir that its record holds, written from it: scores.csv (its item
    lines' rows, the rows the metrics were computed from), items.jsonl, pairs_<judge>.jsonl
    and, `with_metrics` (the run had human pairs), metrics.json. config.yaml, summary.json and
    files.json are the runner's (`report.run_dir`, `report.run_summary`, `report.run_files`)."""
    from titjudge.report import run_dir

    run_dir.write_score_rows(out, [line.score_row() for line in record.item_lines])
    run_dir.write_items(out, record.item_lines)
    for name, verdicts in record.verdicts.items():
        run_dir.write_pairs(out, name, verdicts)
    for name, fit in record.fits.items():  # a jury's folds and weights
        run_dir.write_json(out, f"jury_{name}.json", fit)
    if with_metrics:
        write_record(out, record)


def parse_record(
    doc: Mapping[str, Any],
    where: str,
    record_type: type[R] = RunRecord,  # type: ignore[assignment]
) -> R:
    """A metrics.json object as a record; a format-1 file is moved into format 2."""
    version = doc.get("version")
    if version is None and "variants" not in doc:  # format 1
        doc = {
            **{k: doc[k] for k in _V1_RUN_KEYS if k in doc},
            "version": 1,
            "variants": {k: v for k, v in doc.items() if k not in _V1_RUN_KEYS},
        }
    elif not isinstance(version, int) or version > RECORD_VERSION:
        raise DataError(
            f"{where}: metrics format {version!r} is not one this titjudge reads "
            f"(up to {RECORD_VERSION}); upgrade titjudge"
        )
    return files.parse_record(record_type, doc, where, "run record")


def load_record(run_dir: Path, record_type: type[RunRecord] = RunRecord) -> RunRecord | None:
    """The run's metrics.json as a record; None when the run wrote none (no human pairs)."""
    path = run_dir / "metrics.json"
    if not path.is_file():
        return None
    return parse_record(read_json_object(path, "metrics file"), str(path), record_type)


def load_verdicts(path: Path) -> list[PairVerdict]:
    """A pairs_<judge>.jsonl file as typed verdicts; a bad line is one DataError."""
    found = []
    for number, obj in iter_jsonl(path, "pairwise verdicts file"):
        try:
            found.append(PairVerdict.from_line(obj))
        except ValidationError as error:
            first = error.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise DataError(f"{path}:{number}: {loc}: {first['msg']}") from None
        except ValueError as error:
            raise DataError(f"{path}:{number}: {error}") from None
    return found


@overload
def load_run(path: str | Path) -> RunRecord: ...
@overload
def load_run(path: str | Path, record_type: type[R]) -> R: ...
def load_run(path: str | Path, record_type: type[RunRecord] = RunRecord) -> RunRecord:
    """The record of a run dir (or of a `<run.out>/<name>` folder's latest run), with each
    pairwise judge's verdicts, its summary.json (`record.summary`) and its files.json
    (`record.files`) attached. Every file is checked against files.json (size and sha256)
    before any is read, a run dir from before files.json with the checks its files allow
    (`report.run_files`). A run without human pairs has no metrics: its record has no
    variants. Problems are one-line DataErrors naming the file. `record_type`: a subclass
    to read it as (`report.analysis.record.AnalysedRun` adds the pandas frames)."""
    from titjudge.report.run_files import verify_run
    from titjudge.report.run_summary import load_summary
    from titjudge.report.runs import resolve_run

    run_dir = resolve_run(Path(path))
    files = verify_run(run_dir)  # a listed items.jsonl that is missing is named here
    if not (run_dir / "items.jsonl").is_file():
        raise DataError(f"{run_dir}: not a run dir (no items.jsonl; make one with `titjudge run`)")
    record = load_record(run_dir, record_type) or record_type()
    record.run_dir = run_dir
    record.files = files
    record.summary = load_summary(run_dir)
    for pairs_file in sorted(run_dir.glob("pairs_*.jsonl")):
        name = pairs_file.stem.removeprefix("pairs_")
        record.verdicts[name] = load_verdicts(pairs_file)
    return record
