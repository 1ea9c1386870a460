"""A real run packed, for the pack, reproduce and drift tests: its judges answered by the
loopback OpenAI stand-in (`judges.judge_helpers.ModesResponder`), its server gone after."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from doubles.server import FakeOpenAIServer
from judges.judge_helpers import ModesResponder, run_config

import titjudge
from titjudge.cli import main


def packed_run(
    synth_data: Path, tmp: Path, judges: list[dict[str, Any]], key: str, *, images: bool = False
) -> tuple[Path, Path, Path]:
    """A run of `judges` on a private copy of `synth_data` under `tmp`, packed to
    tmp/study.tjpack (with the images: `images`); (the pack, the run dir, the data copy)."""
    data = tmp / "data"
    shutil.copytree(synth_data, data)
    with (
        pytest.MonkeyPatch.context() as patch,
        FakeOpenAIServer(responder=ModesResponder(data)) as server,
    ):
        patch.setenv("OPENAI_API_KEY", key)
        record = titjudge.evaluate(run_config(data, server.url, tmp, judges))
        assert record.run_dir is not None
        with_images = ["--with-images"] if images else []
        assert (
            main(["pack", str(record.run_dir), "-o", str(tmp / "study.tjpack"), *with_images]) == 0
        )
    return tmp / "study.tjpack", record.run_dir, data
