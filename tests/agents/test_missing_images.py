"""The preflight looks up every image of the manifest (issue 37, the first hour): a run where
none exists is refused with one line and exit 2, before a run dir or a cache is made; where
some are missing, one line says so before the run starts, and exactly those items fail."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from builders import copy_data
from run_dirs import latest_run

from titjudge.ablation.config import AblationConfig, preflight_ablation
from titjudge.cli import main
from titjudge.cli.demo import demo_config
from titjudge.config.load import validate_config

ITEMS = 6  # 3 prompts x 2 models


@pytest.fixture
def bench(synthetic, tmp_path: Path) -> tuple[Path, Path]:
    """A replay + lexical config (no server, no key) over a private copy of a synthetic
    benchmark (the tests delete its images)."""
    data = copy_data(synthetic(3, 2, seed=2, image_size=32), tmp_path)
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps(demo_config(data, tmp_path, None)))  # JSON is YAML
    return data, config


def images(data: Path) -> list[Path]:
    rows = [json.loads(line) for line in (data / "manifest.jsonl").read_text().splitlines()]
    return [data / row["image"] for row in rows]


def test_a_run_whose_images_are_all_missing_is_refused_before_anything_is_made(
    bench, tmp_path, capsys
):
    data, config = bench
    for image in images(data):
        image.unlink()
    code = main(["run", str(config)])
    out, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err + out
    assert f"none of the {ITEMS} images in {data / 'manifest.jsonl'} exists" in err
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_some_missing_images_are_said_up_front_and_only_their_items_fail(bench, tmp_path, capsys):
    data, config = bench
    gone = images(data)[1:3]
    for image in gone:
        image.unlink()
    code = main(["run", str(config)])
    out, err = capsys.readouterr()
    assert code == 1  # items failed
    first = err.strip().splitlines()[0]
    assert first.startswith(f"titjudge: 2 of the {ITEMS} images in {data / 'manifest.jsonl'}")
    assert first.endswith("are missing, e.g. " + str(gone[0]) + ": their items will fail")
    run_dir = latest_run(tmp_path / "runs" / "demo")
    lines = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    failed = {line["item_id"] for line in lines if line["status"] != "ok"}
    ok = {line["item_id"] for line in lines if line["status"] == "ok"}
    assert len(failed) == 2 and len(ok) == ITEMS - 2


def test_the_ablation_preflight_refuses_and_notes_alike(bench):
    data, config = bench
    raw = json.loads(config.read_text())
    grid = validate_config(
        {
            "name": "grid",
            "data": raw["data"],
            "describers": [{"name": "replay", "model": raw["describer"]["model"]}],
            "comparers": [{"name": "lexical", "kind": "lexical"}],
            "run": raw["run"],
        },
        AblationConfig,
        "grid",
    )
    paths = images(data)
    paths[0].unlink()
    notes = preflight_ablation(grid, "grid.yaml")
    assert notes == [
        f"1 of the {ITEMS} images in {data / 'manifest.jsonl'} are missing, e.g. {paths[0]}: "
        "their items will fail"
    ]
    for image in paths[1:]:
        image.unlink()
    with pytest.raises(Exception, match=f"none of the {ITEMS} images"):
        preflight_ablation(grid, "grid.yaml")
