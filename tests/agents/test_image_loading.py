"""A run decodes at most `run.concurrency` images at once, however many item workers it runs
(twice the concurrency): the decode is Pillow's `ImageFile.load`, instrumented here."""

import asyncio
import threading
import time

from builders import run_config
from PIL import ImageFile

from titjudge.config.load import validate_config
from titjudge.config.schema import RunConfig
from titjudge.run.runner import run_async


def _config(synth_data, tmp_path, concurrency):
    raw = run_config(
        synth_data, tmp_path, name="decodes", human_pairs=False, concurrency=concurrency
    )
    return validate_config(raw, RunConfig, "test config")


def test_a_run_decodes_at_most_concurrency_images_at_once(synth_data, tmp_path, monkeypatch):
    decode = ImageFile.ImageFile.load
    lock, seen = threading.Lock(), {"now": 0, "max": 0, "images": 0}
    inside = threading.local()

    def counted(self):
        if getattr(inside, "depth", 0):  # a decode that calls load again is still one decode
            return decode(self)
        inside.depth = 1
        with lock:
            seen["now"] += 1
            seen["images"] += 1
            seen["max"] = max(seen["max"], seen["now"])
        try:
            time.sleep(0.05)  # long enough for every worker to reach its own decode
            return decode(self)
        finally:
            inside.depth = 0
            with lock:
                seen["now"] -= 1

    monkeypatch.setattr(ImageFile.ImageFile, "load", counted)
    outcome = asyncio.run(run_async(_config(synth_data, tmp_path, concurrency=2)))
    assert outcome.summary.items == 16 and outcome.summary.failed_items == 0
    assert seen["images"] >= 16  # every image was decoded through the instrumented path
    assert seen["max"] == 2  # 4 workers, but 2 decodes at once
