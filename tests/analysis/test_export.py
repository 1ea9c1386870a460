"""`titjudge export RUN --format parquet|csv` writes the run's three frames."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

import titjudge
from titjudge.cli import main

# every test reads a whole run made for it (modes_run, offline_runs in conftest.py)
pytestmark = pytest.mark.slow


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_export_writes_the_three_frames(modes_run, tmp_path, fmt, capsys):
    out = tmp_path / "frames"
    assert main(["export", str(modes_run), "--format", fmt, "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(
        f"{n}.{fmt}" for n in ("items", "metrics", "pairs")
    )
    record = titjudge.load_run(modes_run)
    read = pd.read_parquet if fmt == "parquet" else pd.read_csv
    pairs = read(out / f"pairs.{fmt}")
    assert len(pairs) == len(record.pairs)
    assert pairs.groupby("variant").correct.mean().to_dict() == {
        name: v.pairwise_accuracy for name, v in record.variants.items()
    }
    assert len(read(out / f"items.{fmt}")) == len(record.items)
    assert list(read(out / f"metrics.{fmt}").variant) == list(record.metrics.variant)
    assert str(out / f"pairs.{fmt}") in capsys.readouterr().out


def test_export_defaults_to_the_run_dirs_frames_folder(offline_runs):
    assert main(["export", str(offline_runs.small), "--format", "csv"]) == 0
    assert (offline_runs.small / "frames" / "pairs.csv").is_file()


def test_parquet_without_pyarrow_is_one_line(offline_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert main(["export", str(offline_runs.base), "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err
    assert "parquet export needs pyarrow" in err and "[analysis]" in err and err.count("\n") == 1
    assert not (tmp_path / "x").exists()


def test_export_without_pandas_is_one_line(offline_runs, tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pandas", None)
    assert main(["export", str(offline_runs.base), "--format", "csv", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "need pandas" in err and err.count("\n") == 1
