"""The `clip:` backend and the `clip` judge kind (CLIPScore, PickScore) on a tiny random-weight
CLIPModel: its score is the model's own image-text similarity as transformers computes it
(`CLIPModel.forward`'s `logits_per_image` is the cosine of the projected, normalised features
times `logit_scale`: transformers' modeling_clip.py, and Radford et al. 2021, fig. 3), each
side cached on its own, on a public set imported as a researcher would."""

from __future__ import annotations

import asyncio
import io
import json
import math
from pathlib import Path

import pytest
import torch
from builders import write_config
from doubles.pickapic import Row, write_split
from doubles.tiny_models import build_tiny_clip
from PIL import Image
from run_dirs import latest_run
from transformers import AutoProcessor, CLIPModel

from titjudge.cli import main
from titjudge.judges.embedding import cosine
from titjudge.models.core.base import EmbeddingBackend, PermanentError
from titjudge.models.core.options import ModelOptions
from titjudge.models.registry import build_embedding_backend

LONG = (
    "A quiet harbour at dawn: three fishing boats with red hulls rest against a stone pier, "
    "gulls circle a lighthouse whose lamp is still lit, mist lies over the water and a child "
    "in a yellow raincoat waves from the end of the pier towards the hills behind the town."
)


def png(colour: tuple[int, int, int], size: tuple[int, int] = (40, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, colour).save(out, format="PNG")
    return out.getvalue()


@pytest.fixture(scope="module")
def clip_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_clip(tmp_path_factory.mktemp("tiny-clip"))


def backend_of(spec: str, **params: object) -> EmbeddingBackend:
    return build_embedding_backend(spec, ModelOptions(params=params))


def reference_logits(folder: Path, prompt: str, image: bytes) -> float:
    """CLIPModel's own logits_per_image for (prompt, image), computed by transformers."""
    model = CLIPModel.from_pretrained(folder).eval()
    processor = AutoProcessor.from_pretrained(folder)
    inputs = processor(
        text=[prompt],
        images=[Image.open(io.BytesIO(image)).convert("RGB")],
        return_tensors="pt",
        padding=True,
        truncation=True,
    )
    with torch.no_grad():
        return float(model(**inputs).logits_per_image[0, 0])


def test_the_score_is_the_models_own_image_text_similarity(clip_path: Path) -> None:
    backend = backend_of(f"clip:{clip_path}")
    image = png((200, 30, 30))
    for prompt in ("a red square", LONG):  # LONG is past the text tower's 77 tokens
        (text,) = asyncio.run(backend.embed([prompt]))
        (seen,) = asyncio.run(backend.embed_images([image]))
        assert isinstance(seen, list)
        scale = backend.describe()["logit_scale"]
        assert cosine(text, seen) * scale == pytest.approx(
            reference_logits(clip_path, prompt, image), abs=1e-4
        )
        assert math.sqrt(sum(x * x for x in seen)) == pytest.approx(1.0, abs=1e-5)
    facts = backend.describe()
    assert facts["layout"] == "clip" and facts["max_length"] == 77 and facts["dimension"] == 16


def test_an_image_that_does_not_decode_fails_alone(clip_path: Path) -> None:
    backend = backend_of(f"clip:{clip_path}")
    good = png((10, 200, 10))
    vectors = asyncio.run(backend.embed_images([good, b"not an image", good]))
    assert isinstance(vectors[1], PermanentError) and "does not decode" in str(vectors[1])
    assert isinstance(vectors[0], list) and vectors[0] == pytest.approx(vectors[2], abs=1e-6)


def test_a_checkpoint_without_its_processor_takes_another_checkpoints(tmp_path: Path) -> None:
    """PickScore_v1 is loaded with laion/CLIP-ViT-H-14-laion2B-s32B-b79K's processor (its
    README's example: AutoProcessor from the laion checkpoint, AutoModel from PickScore)."""
    processor = tmp_path / "processor"
    model = build_tiny_clip(tmp_path / "model", processor=processor)
    with pytest.raises(Exception, match="cannot load the embedding model"):
        backend_of(f"clip:{model}")
    backend = backend_of(f"clip:{model}", processor=str(processor))
    assert backend.describe()["processor"] == str(processor.resolve())
    assert len(asyncio.run(backend.embed_images([png((1, 2, 3))]))[0]) == 16  # type: ignore[arg-type]


def imported_pickapic(tmp_path: Path) -> Path:
    """A Pick-a-Pic v2 sample (tests/doubles/pickapic.py: the card's schema) imported with
    `titjudge data import`; one image is shown in two pairs."""
    red, green, blue = png((220, 20, 20)), png((20, 220, 20)), png((20, 20, 220))
    rows = [
        Row("a red apple on a table", red, green, 1.0, 0.0),
        Row("a red apple on a table", red, blue, 0.0, 1.0),
        Row("a green field", green, blue, 0.5, 0.5),
    ]
    source = tmp_path / "pickapic_v2"
    write_split(source, "test_unique", [rows])
    out = tmp_path / "imported"
    assert main(["data", "import", str(source), "--preset", "pickapic-v2", "--out", str(out)]) == 0
    return out


def clip_run(data: Path, tmp_path: Path, checkpoint: Path, **judge: object) -> dict[str, object]:
    return {
        "name": "clip",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"model": f"hf:{checkpoint}"},  # never loaded: no judge reads one
        "judges": [{"name": "clip", "kind": "clip", "model": f"clip:{checkpoint}", **judge}],
        "run": {"cache_dir": str(tmp_path / "cache"), "out": str(tmp_path / "runs")},
    }


def test_a_clip_judge_scores_an_imported_public_set_through_the_cache(
    tmp_path: Path, clip_path: Path
) -> None:
    data = imported_pickapic(tmp_path)
    config = write_config(clip_run(data, tmp_path, clip_path), tmp_path)
    assert main(["run", str(config)]) == 0
    first = latest_run(tmp_path / "runs" / "clip")
    lines = [json.loads(line) for line in (first / "items.jsonl").read_text().splitlines()]
    prompts = {
        json.loads(line)["item_id"]: json.loads(line)["prompt"]
        for line in (data / "manifest.jsonl").open()
    }
    # an item is an image under one prompt: the red image is one item in its two pairs
    assert len(lines) == len(prompts) == 5
    scale = CLIPModel.from_pretrained(clip_path).logit_scale.exp().item()
    for line in lines:
        expected = reference_logits(
            clip_path, prompts[line["item_id"]], Path(line["image"]).read_bytes()
        )
        assert line["variant"] == "clip" and line["status"] == "ok"
        assert line["score"] == pytest.approx(expected / scale, abs=1e-4)
        assert line["describer"]["status"] == "skipped"  # no describer call was made
    metrics = json.loads((first / "metrics.json").read_text())
    variant = metrics["variants"]["clip"]
    assert variant["n_pairs"] == 2 and variant["n_human_ties"] == 1  # the tie is no accuracy pair
    assert variant["provenance"]["kind"] == "clip"
    assert variant["provenance"]["answered_by"] == [str(clip_path)]

    assert main(["run", str(config)]) == 0  # every vector from the cache: the same scores
    second = latest_run(tmp_path / "runs" / "clip")
    assert second != first
    again = [json.loads(line) for line in (second / "items.jsonl").read_text().splitlines()]
    assert [a["score"] for a in again] == [line["score"] for line in lines]
    assert all(a["cached"] for a in again)


def test_clipscore_is_hessels_weighted_clamped_cosine(tmp_path: Path, clip_path: Path) -> None:
    data = imported_pickapic(tmp_path)
    runs = {}
    for score in ("cosine", "clipscore"):
        config = clip_run(data, tmp_path, clip_path, score=score)
        config["name"] = score
        assert main(["run", str(write_config(config, tmp_path, f"{score}.json"))]) == 0
        lines = (latest_run(tmp_path / "runs" / score) / "items.jsonl").read_text().splitlines()
        runs[score] = {json.loads(line)["item_id"]: json.loads(line)["score"] for line in lines}
    for item_id, similarity in runs["cosine"].items():
        assert runs["clipscore"][item_id] == pytest.approx(
            2.5 * max(similarity, 0.0), abs=5e-6
        )  # both rounded to 6 places


@pytest.mark.parametrize(
    ("judge", "said"),
    [
        ({"model": "embed:/nowhere"}, "a clip judge needs a 'clip:' model"),
        ({"repeats": 3}, "repeats"),
        ({"batch": True}, "batch: true needs a"),
        ({"score": "logits"}, "score"),
    ],
)
def test_a_clip_judge_the_kind_cannot_run_is_refused_at_load(
    tmp_path: Path, clip_path: Path, capsys: pytest.CaptureFixture[str], judge, said
) -> None:
    data = imported_pickapic(tmp_path)
    config = clip_run(data, tmp_path, clip_path, **judge)
    capsys.readouterr()
    assert main(["run", str(write_config(config, tmp_path))]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "runs").exists()
