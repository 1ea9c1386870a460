"""The preflight looks up every image of the manifest (issue 37, the first hour): a run where
none exists is refused with one line and exit 2, before a run dir or a cache is made; where
some are missing, one line says so before the run starts, and exactly those items fail."""

from __future__ import annotations

import json
import os
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


@pytest.mark.slow  # a whole run in a child process, so that a hang fails the test, not the suite
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_a_fifo_image_fails_its_item_and_the_run_ends(bench, tmp_path):
    """Issue 48: an image that blocks on open (a FIFO, as a hung mount would) hung the run
    once the other items had finished. Now the preflight says so once, the item is a failure
    record naming the reason, every other item is scored and the run ends (exit 1)."""
    from cli_process import run_cli

    data, config = bench
    fifo = images(data)[2]
    fifo.unlink()
    os.mkfifo(fifo)
    done = run_cli(["run", str(config)], timeout=240)  # not a speed bound: it used to never end
    reason = "image is a FIFO (named pipe), not a regular file"
    noted = [line for line in done.stderr.splitlines() if "cannot be read" in line]
    assert noted == [
        f"titjudge: 1 of the {ITEMS} images in {data / 'manifest.jsonl'} cannot be read "
        f"(1 not a regular file or unreadable), e.g. {fifo}: {reason}; their items will fail"
    ]
    assert done.returncode == 1, done.stderr[-2000:]
    run_dir = latest_run(tmp_path / "runs" / "demo")
    lines = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    failed = [line for line in lines if line["status"] == "failed"]
    assert {line["image"] for line in failed} == {str(fifo)}
    for line in failed:  # "no description: image: <path>: <reason>", the describer's own
        assert line["error"].endswith(f"image: {fifo}: {reason}"), line
        assert line["describer"]["error"] == f"image: {fifo}: {reason}", line
    assert sum(line["status"] == "ok" for line in lines) == len(lines) - len(failed)
    assert len({line["item_id"] for line in lines if line["status"] == "ok"}) == ITEMS - 1


def hang_reading(name: str) -> None:
    """In the child: the image called `name` sits on a hung network mount: every read of it
    blocks for good (a blocked read cannot be cancelled), and reads are bounded at 0.5 s."""
    import threading

    import titjudge.user_files as user_files

    opened = user_files._opened

    def blocks(path, what, use):
        if str(path).endswith(name):
            threading.Event().wait()
        return opened(path, what, use)

    user_files._opened = blocks
    user_files.READ_TIMEOUT = 0.5


@pytest.mark.slow  # a whole run in a child process
def test_an_image_on_a_hung_mount_fails_its_item_after_the_read_timeout_and_the_run_ends(
    bench, tmp_path
):
    import functools

    from cli_process import run_cli

    data, config = bench
    hung = images(data)[4]
    name = f"{hung.parent.name}/{hung.name}"
    done = run_cli(["run", str(config)], timeout=240, before=functools.partial(hang_reading, name))
    assert done.returncode == 1, done.stderr[-2000:]
    run_dir = latest_run(tmp_path / "runs" / "demo")
    lines = [json.loads(line) for line in (run_dir / "items.jsonl").read_text().splitlines()]
    failed = [line for line in lines if line["status"] == "failed"]
    assert failed and {line["image"] for line in failed} == {str(hung)}
    reason = f"{hung}: reading the image took over 0.5 s (a hung network mount?)"
    assert all(reason in line["describer"]["error"] for line in failed), failed
    assert len({line["item_id"] for line in lines if line["status"] == "ok"}) == ITEMS - 1
