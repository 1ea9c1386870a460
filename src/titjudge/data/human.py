"""The human side of a run: its pairs and ranks, narrowed to the items the run judged.

`titjudge run` scores a variant against these (`run.runner.load_run_data`), and the
analysis of a finished run (`report.analysis`) reads them back the same way from the paths
its config.yaml names, so both see the same pairs and ranks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from pathlib import Path

from titjudge.data import pairs as pair_files
from titjudge.data.ranking import rank_items
from titjudge.records.items import HumanPair, Item, RankRow


def run_human_data(
    all_items: Sequence[Item],
    kept: Collection[str],
    pairs_path: Path,
    ranks_path: Path | None,
) -> tuple[list[HumanPair], list[RankRow]]:
    """The pairs (checked against every manifest item) whose two images are both `kept`,
    and the ranks of the kept items (`ranks_path`, or ranks derived from those pairs)."""
    # read through the module, as the run did before this function: a test that counts
    # the file reads (tests/ablation) patches `titjudge.data.pairs.load_pairs`
    pairs = pair_files.load_pairs(pairs_path, {i.item_id: i for i in all_items})
    pairs = [p for p in pairs if p.item_a in kept and p.item_b in kept]
    if ranks_path is not None:
        ranks = [r for r in pair_files.load_ranks(ranks_path) if r.item_id in kept]
    else:
        ranks = rank_items(pairs)
    return pairs, ranks


def load_ratings(path: Path, kept: Collection[str]) -> dict[str, float]:
    """A rated set's mean opinion score per image (`ratings.csv`: prompt_id, item_id, mos,
    n_ratings, as `titjudge data import` writes it), for the kept items; a missing file or a
    row that is not a finite number is one DataError naming the line."""
    import csv
    import math

    from titjudge.errors import DataError

    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as exc:
        raise DataError(
            f"{path}: cannot read the set's ratings ({exc.strerror or exc}); dataset.json "
            "beside the manifest says the set is rated, so its import writes ratings.csv"
        ) from None
    found: dict[str, float] = {}
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in ("item_id", "mos") if c not in (reader.fieldnames or ())]
        if missing:
            raise DataError(f"{path}: missing column(s) {', '.join(missing)}")
        for line, row in enumerate(reader, 2):
            try:
                mos = float(row["mos"] or "")
            except ValueError:
                mos = math.nan
            if not math.isfinite(mos):
                raise DataError(f"{path}:{line}: mos {row['mos']!r} is not a finite number")
            if row["item_id"] in kept:
                found[row["item_id"]] = mos
    return found
