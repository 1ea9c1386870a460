import asyncio
import io
import os
import re
import struct
import threading
import time
import warnings
import zlib

import numpy as np
import pytest
from PIL import Image

from titjudge.data import images
from titjudge.data.images import ImageLoader, load_image
from titjudge.errors import DataError
from titjudge.records.images import MAX_SIDE


def save(path, image, fmt="PNG", **kw):
    image.save(path, format=fmt, **kw)
    return path


def test_rgb_png_passes_through_byte_for_byte(tmp_path):
    path = save(tmp_path / "a.png", Image.new("RGB", (16, 16), (200, 10, 10)))
    loaded = load_image(path)
    assert loaded.data == path.read_bytes() and loaded.mime == "image/png"


def test_cmyk_jpeg_becomes_rgb_png(tmp_path):
    path = save(tmp_path / "c.jpg", Image.new("CMYK", (16, 16), (0, 255, 255, 0)), "JPEG")
    loaded = load_image(path)
    decoded = Image.open(io.BytesIO(loaded.data))
    assert (decoded.format, decoded.mode, loaded.mime) == ("PNG", "RGB", "image/png")


def test_16bit_png_becomes_8bit(tmp_path):
    array = np.full((8, 8), 65535 // 2, dtype=np.uint16)
    path = save(tmp_path / "g.png", Image.fromarray(array))
    decoded = Image.open(io.BytesIO(load_image(path).data))
    assert decoded.mode == "L" and abs(decoded.getpixel((0, 0)) - 127) <= 1


def test_huge_image_is_downscaled(tmp_path, monkeypatch):
    monkeypatch.setattr(images, "MAX_SIDE", 64)
    path = save(tmp_path / "h.png", Image.new("RGB", (200, 100)))
    decoded = Image.open(io.BytesIO(load_image(path).data))
    assert max(decoded.size) == 64


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "image file not found"),
        (b"", "image file is empty"),
        (b"not an image at all", "not a readable image"),
    ],
)
def test_bad_files_name_the_problem(tmp_path, content, message):
    path = tmp_path / "x.png"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DataError, match=message) as err:
        load_image(path)
    assert str(path) in str(err.value)


def test_truncated_png_is_corrupt(tmp_path):
    path = save(tmp_path / "t.png", Image.effect_noise((64, 64), 50).convert("RGB"))
    path.write_bytes(path.read_bytes()[:300])
    with pytest.raises(DataError, match="corrupt or truncated"):
        load_image(path)


def _png_header(width, height):
    """A greyscale PNG that declares `width` x `height` and holds one row: Pillow reads the
    size from the IHDR chunk without decoding (PNG spec, section 11.2.2)."""

    def chunk(kind, body):
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + chunk(b"IDAT", zlib.compress(b"\0" * 10))
        + chunk(b"IEND", b"")
    )


@pytest.mark.slow
def test_a_huge_png_is_downscaled_to_max_side_without_a_warning(tmp_path):
    """90 Mpx is over Pillow's default bomb threshold (89.5 Mpx), which warned."""
    path = save(tmp_path / "huge.png", Image.new("L", (10_000, 9_000), 128))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = load_image(path)
    decoded = Image.open(io.BytesIO(loaded.data))
    assert decoded.size == (MAX_SIDE, round(9_000 * MAX_SIDE / 10_000))
    assert loaded.mime == "image/png" and decoded.getpixel((5, 5)) == 128


def test_a_large_jpeg_decodes_at_reduced_scale_and_stays_jpeg(tmp_path, monkeypatch):
    path = save(tmp_path / "wide.jpg", Image.new("RGB", (9_000, 600), (10, 120, 200)), "JPEG")
    resized_from = []
    resize = Image.Image.resize

    def recording(self, size, *args, **kwargs):
        resized_from.append(self.size)
        return resize(self, size, *args, **kwargs)

    monkeypatch.setattr(Image.Image, "resize", recording)
    loaded = load_image(path)
    assert resized_from == [(4_500, 300)]  # decoded at half scale: never at 9000x600
    decoded = Image.open(io.BytesIO(loaded.data))
    assert (decoded.format, decoded.size, loaded.mime) == ("JPEG", (4_096, 273), "image/jpeg")
    # what the loader budgets for it: the half-scale decode, the resize's intermediate (the
    # target width x the decoded height) and the result
    assert images.decode_pixels(path) == 4_500 * 300 + 4_096 * 300 + 4_096 * 273


@pytest.mark.parametrize("side", [50_000, 60_000])  # Pillow warns, then refuses, above 40000^2
def test_an_image_over_the_ceiling_is_refused_in_one_line(tmp_path, side):
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(side, side))
    with warnings.catch_warnings(record=True) as caught, pytest.raises(DataError) as err:
        load_image(path)
    message = str(err.value)
    limit = "image over the 1600 megapixel limit (40000x40000); downscale it"
    assert message == f"{path}: {limit}" and caught == []
    assert images.decode_pixels(path) == 0  # the loader does not budget for it either


def _instrumented(monkeypatch, costs, held=0.05):
    """Replace the decode (`load_image`) and its header probe by stand-ins: each path costs
    `costs[path]` pixels and decodes for `held` seconds; returns what was seen at once."""
    seen = {"now": 0, "pixels": 0, "max": 0, "max_pixels": 0, "order": []}
    lock = threading.Lock()

    def decode(path):
        with lock:
            seen["now"] += 1
            seen["pixels"] += costs[path]
            seen["max"] = max(seen["max"], seen["now"])
            seen["max_pixels"] = max(seen["max_pixels"], seen["pixels"])
            seen["order"].append(path)
        time.sleep(held)
        with lock:
            seen["now"] -= 1
            seen["pixels"] -= costs[path]
        return path

    monkeypatch.setattr(images, "header_pixels", costs.__getitem__)
    monkeypatch.setattr(images, "load_image", decode)
    return seen


async def _load_all(loader, paths):
    return await asyncio.gather(*(loader.load(p) for p in paths))


def test_the_loader_decodes_at_most_concurrency_images_at_once(monkeypatch):
    costs = {f"i{n}": 10 for n in range(12)}
    seen = _instrumented(monkeypatch, costs)
    loaded = asyncio.run(_load_all(ImageLoader(concurrency=3), list(costs)))
    assert loaded == list(costs) and seen["max"] == 3


def test_the_loader_keeps_decoded_pixels_within_its_budget(monkeypatch):
    costs = {"a": 60, "b": 60, "c": 60, "big": 250, "d": 30, "e": 30}
    seen = _instrumented(monkeypatch, costs)
    asyncio.run(_load_all(ImageLoader(concurrency=8, pixel_budget=130), list(costs)))
    assert seen["max_pixels"] == 250  # the image over the budget decoded alone
    assert seen["order"] == list(costs)  # first come, first served: d and e waited for big


def test_a_cancelled_wait_gives_its_place_back(monkeypatch):
    costs = {"a": 1, "b": 1, "c": 1}
    seen = _instrumented(monkeypatch, costs, held=0.2)

    async def scenario():
        loader = ImageLoader(concurrency=1)
        first = asyncio.create_task(loader.load("a"))
        await asyncio.sleep(0.05)
        waiting = asyncio.create_task(loader.load("b"))
        await asyncio.sleep(0.05)
        waiting.cancel()
        return await asyncio.gather(first, loader.load("c")), loader

    (results, loader) = asyncio.run(scenario())
    assert results == ["a", "c"] and seen["order"] == ["a", "c"]
    assert (loader._decoding, loader._pixels, list(loader._waiting)) == (0, 0, [])


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_a_fifo_is_a_data_error_for_the_run_and_the_audit_never_a_blocked_open(tmp_path):
    """Issue 48: `decode_pixels` opened the path with Pillow, which blocks on a FIFO until a
    writer comes; every reader of an image now refuses it with one reason."""
    fifo = tmp_path / "f.png"
    os.mkfifo(fifo)
    reason = f"{fifo}: image is a FIFO (named pipe), not a regular file"
    with pytest.raises(DataError, match=re.escape(reason)):
        load_image(fifo)
    with pytest.raises(DataError, match=re.escape(reason)):
        images.load_thumbnail(fifo, 64)
    assert images.decode_pixels(fifo) == 0
    loader = ImageLoader(concurrency=2)
    with pytest.raises(DataError, match=re.escape(reason)):
        asyncio.run(loader.load(fifo))
    with pytest.raises(DataError, match=re.escape(reason)):
        asyncio.run(loader.thumbnail(fifo, 64))
