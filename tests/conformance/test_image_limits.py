"""Images within each provider's documented byte limit (issue 30): a 12 MB PNG of noise
(incompressible) reaches an Anthropic-shaped stand-in under 5 MB and a Vertex-shaped one
under 7 MB through `titjudge run`, re-encoded (JPEG q90) and downscaled; what was done is in
the item's record, and the fitted image's hash (not the original's) keys the call."""

from __future__ import annotations

import io
import json
from pathlib import Path

import builders
import numpy as np
import pytest
import yaml
from image_limit_server import ANTHROPIC_IMAGE_LIMIT, VERTEX_INLINE_LIMIT, ImageLimitServer
from PIL import Image
from run_dirs import latest_run

from titjudge.cli import main
from titjudge.models.core.image_limit import ImageLimit
from titjudge.models.core.options import ModelOptions
from titjudge.models.litellm import settings as litellm_settings
from titjudge.models.litellm.image_limits import IMAGE_LIMITS, image_limit_for
from titjudge.records.image_input import ImageInput
from titjudge.records.images import fit_bytes, sent_bytes
from titjudge.records.spec import parse_model_spec


def _noise_png(side: int = 2048, seed: int = 0) -> bytes:
    pixels = np.random.default_rng(seed).integers(0, 256, (side, side, 3), dtype=np.uint8)
    buffer = io.BytesIO()
    # noise does not compress: stored (level 0) is as big as deflated, at half the CPU
    Image.fromarray(pixels).save(buffer, format="PNG", compress_level=0)
    return buffer.getvalue()


@pytest.fixture(scope="module")
def noisy(tmp_path_factory, synthetic) -> Path:
    """One prompt, two images, each replaced by a 2048x2048 noise PNG of ~12.6 MB (in a copy
    of the shared benchmark)."""
    out = builders.copy_data(synthetic(1, 2, seed=5), tmp_path_factory.mktemp("limits"))
    for n, line in enumerate((out / "manifest.jsonl").read_text().splitlines()):
        image = out / json.loads(line)["image"]
        image.write_bytes(_noise_png(seed=n))
        assert image.stat().st_size > 12_000_000
    return out


def _run(data: Path, tmp: Path, describer: dict) -> int:
    config = {
        "name": "limits",
        "data": {"manifest": str(data / "manifest.jsonl"), "human_pairs": str(data / "pairs.csv")},
        "describer": {"max_attempts": 1, **describer},
        "judges": [{"name": "lexical", "kind": "lexical"}],
        "run": {"cache_dir": str(tmp / "cache"), "out": str(tmp / "runs"), "concurrency": 2},
    }
    path = tmp / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return main(["run", str(path)])


def _describer_records(tmp: Path) -> list[dict]:
    run_dir = latest_run(tmp / "runs" / "limits")
    return [json.loads(x)["describer"] for x in (run_dir / "items.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_12mb_png_reaches_anthropic_under_5mb(noisy, tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test-0123456789")
    with ImageLimitServer() as server:
        describer = {"model": "litellm:anthropic/claude-sonnet-4-5", "api_base": server.url}
        assert _run(noisy, tmp_path, describer) == 0
        assert server.statuses == [200, 200]  # nothing the limit refuses was sent
        assert all(seen.base64_bytes <= ANTHROPIC_IMAGE_LIMIT for seen in server.images)
        assert {seen.mime for seen in server.images} == {"image/jpeg"}
        records = _describer_records(tmp_path)
        assert all(r["status"] == "ok" for r in records)
        for record in records:
            (note,) = record["image_fit"]
            assert note.startswith("image/png 2048x2048 ") and "-> image/jpeg q90 " in note
            assert note.endswith(
                "to fit anthropic: 5242880 bytes per image, 32000000 bytes per request"
            )
        # a re-run keys the fitted images from the cache dir: nothing is sent again
        assert _run(noisy, tmp_path, describer) == 0
        assert len(server.statuses) == 2


@pytest.mark.slow
def test_a_12mb_png_reaches_vertex_under_7mb(noisy, tmp_path, monkeypatch):
    """litellm's `vertex_ai/` provider needs google-auth and Google credentials, which no
    test has; Vertex AI's generateContent body is the Gemini API's, so litellm's `gemini/`
    provider talks to the Vertex-shaped route, with the table's Vertex AI row applied."""
    monkeypatch.setenv("GEMINI_API_KEY", "AIza-test-key-000000")
    monkeypatch.setattr(
        litellm_settings, "image_limit_for", lambda model_id, params=None: IMAGE_LIMITS["vertex_ai"]
    )
    with ImageLimitServer() as server:
        describer = {
            "model": "litellm:gemini/gemini-2.5-pro",
            "api_base": server.url + "/v1beta",
            "thinking": {"budget": 128},
        }
        assert _run(noisy, tmp_path, describer) == 0
        assert server.statuses == [200, 200]
        assert all(seen.decoded_bytes < VERTEX_INLINE_LIMIT for seen in server.images)
        assert all(seen.base64_bytes <= 7_000_000 for seen in server.images)
        for record in _describer_records(tmp_path):
            assert (
                record["status"] == "ok"
                and "to fit vertex_ai: 7000000 bytes" in record["image_fit"][0]
            )


def test_the_vertex_and_anthropic_rows_reach_their_backends(monkeypatch):
    for model, provider in [
        ("litellm:vertex_ai/gemini-2.5-pro", "vertex_ai"),
        ("litellm:anthropic/claude-sonnet-4-5", "anthropic"),
        ("litellm:gemini/gemini-2.5-pro", "gemini"),
        ("litellm:hosted_vllm/llava-hf/llava-1.5-7b-hf", None),
    ]:
        spec = parse_model_spec(model)
        options = (
            ModelOptions(thinking={"budget": 128}) if "gemini-2.5" in model else ModelOptions()
        )
        found = litellm_settings.plan(spec, options).image_limit
        assert (found.provider if found else None) == provider
    assert image_limit_for("claude-sonnet-4-5") is IMAGE_LIMITS["anthropic"]
    assert image_limit_for("x", {"custom_llm_provider": "bedrock"}) is IMAGE_LIMITS["bedrock"]


def test_a_per_request_limit_is_divided_among_the_images():
    gemini = IMAGE_LIMITS["gemini"]  # 20 MB per request, none per image
    assert gemini.budget(1) == 18_000_000 and gemini.budget(4) == 4_500_000
    anthropic = IMAGE_LIMITS["anthropic"]  # the per-image limit binds until 6 images
    assert anthropic.budget(1) == 5_242_880 and anthropic.budget(10) == 2_880_000
    assert ImageLimit("x").budget(3) is None


@pytest.mark.slow
def test_fitting_is_deterministic_and_keeps_what_fits():
    png = ImageInput(_noise_png(side=1024, seed=3), "image/png")
    small, note = fit_bytes(png, 10 * len(png.data))
    assert small is png and note is None
    one, note = fit_bytes(png, 1_000_000, "test")
    two, _ = fit_bytes(png, 1_000_000, "test")
    assert one.sha256 == two.sha256 and sent_bytes(len(one.data)) <= 1_000_000
    assert one.mime == "image/jpeg" and note.endswith("to fit test")
    pixels = np.random.default_rng(4).integers(0, 256, (512, 512, 4), dtype=np.uint8)
    rgba = Image.fromarray(pixels, "RGBA")
    buffer = io.BytesIO()
    rgba.save(buffer, format="PNG")
    alpha, _ = fit_bytes(ImageInput(buffer.getvalue(), "image/png"), 20_000)
    assert alpha.mime == "image/webp"  # JPEG would drop the alpha channel
