"""A re-run answers what the cache holds before the graph runs, and reads no image it need not
send (issue 14: a cached re-run loads nothing). Runs are in-process `run_async` against the
loopback OpenAI-compatible double; `load_image` and `fit_within` are wrapped to count what is read.
The benchmark is 2 prompts x 4 models (`pass_data`, 8 items; the shared `synth_data` has 16):
each count is per item, nothing that grows with the benchmark.
"""

import asyncio
import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from builders import run_config
from doubles.server import FakeOpenAIServer, build_responder
from PIL import Image
from pipeline_helpers import stored_descriptions

import titjudge.data.images as images_module
import titjudge.models.calls.image_fit as call_module
from titjudge.config.schema import RunConfig
from titjudge.records.image_input import ImageInput
from titjudge.run.runner import run_async

N_PROMPTS, N_MODELS = 2, 4
N_ITEMS = N_PROMPTS * N_MODELS  # pass_data


@pytest.fixture(scope="module")
def pass_data(synthetic) -> Path:
    """A SYNTHETIC benchmark of 2 prompts x 4 models, with stored descriptions."""
    return synthetic(N_PROMPTS, N_MODELS)


@pytest.fixture
def pass_copy(pass_data, tmp_path) -> Path:
    """A private copy of `pass_data` a test may change."""
    target = tmp_path / "data"
    shutil.copytree(pass_data, target)
    return target


@pytest.fixture
def reads(monkeypatch) -> dict[str, int]:
    """How many images were read from disk, and resized, since the test began."""
    counts = {"load_image": 0, "fit_image": 0}
    real_load, real_fit = images_module.load_image, call_module.fit_within

    def load_image(path):
        counts["load_image"] += 1
        return real_load(path)

    def fit_within(image, max_pixels, max_bytes, why=""):
        counts["fit_image"] += 1
        return real_fit(image, max_pixels, max_bytes, why)

    monkeypatch.setattr(images_module, "load_image", load_image)
    monkeypatch.setattr(call_module, "fit_within", fit_within)
    return counts


class Recording:
    """The auto responder (descriptions from the fixture's store, judged by overlap),
    keeping the images each request carried (`ImagePart`: decoded bytes)."""

    def __init__(self, data: Path):
        self.auto = build_responder("auto", descriptions=stored_descriptions(data))
        self.images: list[list] = []

    def __call__(self, request):
        self.images.append(list(request.images))
        return self.auto(request)


def _run(config: dict):
    return asyncio.run(run_async(RunConfig.model_validate(config), bootstrap=50))


def _scores(out: Path) -> list[dict]:
    with (out / "scores.csv").open() as handle:
        return list(csv.DictReader(handle))


def _judge(name: str, kind: str, url: str) -> dict:
    model = {"model": "litellm:openai/judge", "api_base": url} if kind == "llm" else {}
    return {"name": name, "kind": kind, **model}


@pytest.mark.slow
def test_a_cached_rerun_reads_no_image_and_gives_the_same_scores(pass_data, tmp_path, reads):
    auto = build_responder("auto", descriptions=stored_descriptions(pass_data))
    with FakeOpenAIServer(responder=auto) as server:
        config = run_config(pass_data, tmp_path, url=server.url)
        fresh = _run(config)
        assert reads["load_image"] == N_ITEMS
        asked = server.stats.total
        first = _scores(fresh.run_dir)

        again = _run(config)
        assert server.stats.total == asked
    assert reads["load_image"] == N_ITEMS  # not one image read again
    assert _scores(again.run_dir) == first
    assert again.summary.cache.calls == again.summary.cache.hits == 2 * N_ITEMS
    assert again.summary.cache.misses == 0


@pytest.mark.slow
def test_a_new_judge_is_asked_and_what_was_cached_counts_once(pass_data, tmp_path, reads):
    """Items the cache cannot answer whole go to the graph: the new judge's calls are made
    (sending the image the earlier run only remembered), the cached ones are read, and each
    counts once in the run's ledgers."""
    responder = Recording(pass_data)
    with FakeOpenAIServer(responder=responder) as server:
        base = run_config(pass_data, tmp_path, url=server.url)
        _run(base)
        asked = len(responder.images)
        more = {**base, "judges": [*base["judges"], {"name": "lmm", "kind": "lmm"}]}
        outcome = _run(more)
    sent = responder.images[asked:]
    assert len(sent) == N_ITEMS  # one LMM Score call per item, nothing asked twice
    described = {image.sha256 for images in responder.images[:asked] for image in images}
    assert all(len(images) == 1 and images[0].sha256 in described for images in sent)
    assert reads["load_image"] == 2 * N_ITEMS  # read again only where a call must send it
    cache = outcome.summary.cache
    assert cache.calls == 3 * N_ITEMS
    assert cache.hits == 2 * N_ITEMS and cache.misses == N_ITEMS
    assert outcome.summary.variants["lmm"].ok == N_ITEMS


@pytest.mark.slow
def test_resized_images_are_keyed_from_memory_on_a_rerun(pass_data, tmp_path, reads):
    """With max_image_pixels below the images' size, the fresh run resizes each image once;
    the re-run keys the resized images by their remembered hash, reading and resizing none."""
    responder = Recording(pass_data)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(pass_data, tmp_path, url=server.url)
        config["describer"]["max_image_pixels"] = 32 * 32
        config["judges"] = [*config["judges"], {"name": "lmm", "kind": "lmm"}]
        fresh = _run(config)
        assert reads["fit_image"] == N_ITEMS  # describer and LMM Score share one resize
        asked = server.stats.total
        sent = [image for images in responder.images for image in images]
        assert len(sent) == 2 * N_ITEMS
        for image in sent:
            with Image.open(io.BytesIO(image.data)) as opened:
                assert opened.width * opened.height <= 32 * 32
        again = _run(config)
        assert server.stats.total == asked
    assert reads == {"load_image": N_ITEMS, "fit_image": N_ITEMS}
    assert _scores(again.run_dir) == _scores(fresh.run_dir)


@pytest.mark.slow
def test_an_image_changed_since_the_last_run_is_read_again(pass_copy, tmp_path, reads):
    responder = Recording(pass_copy)
    with FakeOpenAIServer(responder=responder) as server:
        config = run_config(pass_copy, tmp_path, url=server.url)
        _run(config)
        first = json.loads((pass_copy / "manifest.jsonl").read_text().splitlines()[0])
        image = Path(first["image"])
        if not image.is_absolute():
            image = pass_copy / image
        with Image.open(image) as opened:
            flipped = opened.transpose(Image.Transpose.FLIP_LEFT_RIGHT)
        flipped.save(image)
        asked = server.stats.total
        _run(config)
        new = responder.images[asked:]
    assert reads["load_image"] == N_ITEMS + 1  # only the changed file is read again
    # its description (of the new pixels) and the judge of that; the other items cached
    assert server.stats.total == asked + 2
    assert [len(images) for images in new] == [1, 0]
    assert new[0][0].sha256 == ImageInput(data=image.read_bytes()).sha256
