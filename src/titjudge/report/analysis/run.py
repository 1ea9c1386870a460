"""A finished run read for analysis: its record, config, summary, item lines, and (from the
paths its config names) the human pairs, ranks and prompts it was scored against.

Read through the records the run's writer uses (`report.record`, `records.item_line`) and
narrowed to the run's items the way `titjudge run` narrows them (`data.human.run_human_data`),
so re-evaluating it (`RunData.evaluate`) reproduces metrics.json.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from titjudge.errors import DataError
from titjudge.records.item_line import ItemLine
from titjudge.records.items import HumanPair, Item, RankRow, ScoreRow
from titjudge.records.run_config import RunConfigFile
from titjudge.records.run_record import RunRecord
from titjudge.records.summary import RunSummary
from titjudge.report.record import load_run


@dataclass(frozen=True)
class HumanSide:
    """The human data a run was scored against (empty pairs: the run had none)."""

    items: dict[str, Item]
    prompts: dict[str, str]
    pairs: list[HumanPair]
    ranks: list[RankRow]


def prompt_words(text: str) -> int:
    """A prompt's length in words (whitespace-separated)."""
    return len(text.split())


class RunData:
    """One run dir, loaded once; the human side is read when first asked for."""

    def __init__(self, record: RunRecord):
        if record.run_dir is None:
            raise DataError("this run record was not read from a run dir (use titjudge.load_run)")
        self.record = record
        self.run_dir: Path = record.run_dir

    @classmethod
    def load(cls, path: str | Path) -> RunData:
        return cls(load_run(path))

    @cached_property
    def config(self) -> RunConfigFile:
        """config.yaml: the config the run ran with and what it resolved to, typed."""
        return RunConfigFile.read(self.run_dir)

    @cached_property
    def summary(self) -> RunSummary | None:
        """summary.json: counts, usage per role, wall time (None when absent)."""
        return self.record.summary

    @property
    def lines(self) -> list[ItemLine]:
        """items.jsonl, one typed line per (item, variant) (`RunRecord.item_lines`)."""
        return self.record.item_lines

    @cached_property
    def rows(self) -> list[ScoreRow]:
        """The score rows the run's metrics read (a failed line has no score)."""
        return [line.score_row() for line in self.lines]

    @cached_property
    def variants(self) -> list[str]:
        """Variants in items.jsonl order."""
        return list(dict.fromkeys(line.variant for line in self.lines))

    @property
    def round_digits(self) -> int | None:
        return self.record.settings.round_digits

    def _data_path(self, key: str) -> Path | None:
        value = self.config.data_path(key)
        if value is None:
            return None
        path = Path(str(value))
        if not path.exists():
            hint = (
                ""
                if path.is_absolute()
                else " (relative paths are read from the working directory)"
            )
            raise DataError(f"{self.run_dir / 'config.yaml'}: data.{key} {value!r} not found{hint}")
        return path

    @cached_property
    def human(self) -> HumanSide:
        """The manifest's items and prompts, and the human pairs and ranks of the run's items."""
        from titjudge.data.human import run_human_data
        from titjudge.data.manifest import load_manifest

        manifest = self._data_path("manifest")
        if manifest is None:
            raise DataError(f"{self.run_dir / 'config.yaml'}: data.manifest is missing")
        all_items = load_manifest(manifest)
        kept = {line.item_id for line in self.lines}
        items = {i.item_id: i for i in all_items if i.item_id in kept}
        prompts = {i.prompt_id: i.prompt for i in items.values()}
        pairs_path = self._data_path("human_pairs")
        if pairs_path is None:
            return HumanSide(items, prompts, [], [])
        pairs, ranks = run_human_data(all_items, kept, pairs_path, self._data_path("ranks"))
        return HumanSide(items, prompts, pairs, ranks)

    def require_pairs(self) -> HumanSide:
        human = self.human
        if not human.pairs:
            raise DataError(
                f"{self.run_dir}: the run has no human pairs (data.human_pairs), so nothing to break down"
            )
        return human

    def metrics_on(
        self,
        pairs: Sequence[HumanPair] | None = None,
        ranks: Sequence[RankRow] | None = None,
        rows: Sequence[ScoreRow] | None = None,
        bootstrap: int | None = None,
    ) -> RunRecord:
        """`metrics.summary.metrics_record` on this run with its recorded settings: on its own
        pairs, ranks and rows unless others are given (a subset: a length bucket, shared
        pairs)."""
        from titjudge.metrics.summary import MetricSettings, metrics_record

        settings = self.record.settings
        human = self.human
        return metrics_record(
            self.rows if rows is None else rows,
            human.pairs if pairs is None else pairs,
            human.ranks if ranks is None else ranks,
            list(human.items.values()),
            verdicts=self.record.verdicts,
            settings=MetricSettings(
                bootstrap=settings.bootstrap if bootstrap is None else bootstrap,
                seed=settings.seed,
                gain=settings.gain,  # type: ignore[arg-type]
                top_k=settings.top_k,
                round_digits=self.round_digits,
                confidence=settings.confidence,
            ),
        )
