import io

import numpy as np
import pytest
from PIL import Image

from titjudge.data import images
from titjudge.data.images import load_image
from titjudge.errors import DataError


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
