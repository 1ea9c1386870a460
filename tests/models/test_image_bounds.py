"""`max_image_pixels`: images above the bound are downscaled before they are sent, and the
resized image is what the cache keys on."""

import asyncio
import io

from PIL import Image

from titjudge.cache.store import CallCache
from titjudge.models.core.base import GenerateRequest
from titjudge.models.core.clients import SEND
from titjudge.models.core.options import ModelOptions
from titjudge.models.hub import ModelHub
from titjudge.records.image_input import ImageInput
from titjudge.records.images import fit_image, fitted_size


def _png(width, height, color=(200, 30, 30)):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), color).save(buffer, format="PNG")
    return ImageInput(data=buffer.getvalue(), mime="image/png")


def _jpeg(width, height):
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), (10, 120, 200)).save(buffer, format="JPEG")
    return ImageInput(data=buffer.getvalue(), mime="image/jpeg")


def test_fitted_size_keeps_the_aspect_and_the_bound():
    assert fitted_size(1000, 500, 10**6) == (1000, 500)
    w, h = fitted_size(4000, 3000, 1_003_520)
    assert w * h <= 1_003_520 and abs(w / h - 4 / 3) < 0.01 and w * h > 0.99 * 1_003_520


def test_large_images_are_downscaled_small_ones_untouched():
    small = _png(64, 64)
    assert fit_image(small, 64 * 64) is small
    big = fit_image(_jpeg(3000, 2000), 600_000)
    with Image.open(io.BytesIO(big.data)) as image:
        assert image.size[0] * image.size[1] <= 600_000 and image.format == "JPEG"
    assert big.mime == "image/jpeg"


def test_the_bound_is_part_of_the_cache_key(tmp_path):
    """Requests go to the replay-free `litellm:` client's key function without a network call."""
    hub = ModelHub(CallCache(tmp_path / "cache"))
    image = _png(800, 800)
    request = GenerateRequest(prompt="describe", images=(image,))

    def key_for(bound):
        client = hub.text_client(
            "litellm:hosted_vllm/m",
            ModelOptions(api_base="http://127.0.0.1:9/v1", max_image_pixels=bound),
        )
        fitted, _ = asyncio.run(client.fitter.fit(request, probe=SEND))
        from titjudge.models.calls.keys import generation_key

        return fitted, generation_key(client.backend.spec, fitted, params=client.params)

    same, key_none = key_for(None)
    assert same is request
    fitted_a, key_a = key_for(200_000)
    fitted_b, key_b = key_for(100_000)
    assert len({key_none, key_a, key_b}) == 3
    assert fitted_a.images[0].sha256 != image.sha256
    # deterministic: the same bound gives the same bytes, so a re-run reuses its answers
    assert key_for(200_000)[1] == key_a
    asyncio.run(hub.aclose())
