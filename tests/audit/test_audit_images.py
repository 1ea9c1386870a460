"""The audit's page (the workbench's bundle, `audit --html DIR`) reads images as a run does: an
image a run accepted is bundled (reduced), one that cannot be read is left out with one
warning line and the page says so, never a traceback.

Measured on main: `titjudge audit RUN --html page.html` on a run with a 20000x20000 image
(which `run` accepts: the loader's limit is 40000x40000) died with Pillow's
DecompressionBombError, rc 1, since the audit's thumbnailer opened images with Pillow's own
default limit (about 179 megapixels). The CLI runs in a subprocess here, as a user runs it:
no other test can have widened Pillow's process-wide limit first.
"""

from __future__ import annotations

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from audit_run import write_run
from PIL import Image

from titjudge.data.images import MAX_PIXELS, decode_pixels, load_image
from titjudge.errors import DataError

SIDE = 20_000  # 400 megapixels: over Pillow's default guard, within the run loader's limit


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def blank_png(path: Path, width: int, height: int, rows: int | None = None) -> Path:
    """A 1-bit greyscale PNG, white with a black band in the middle (so ~0.1 MB for
    20000x20000, written in well under a second). `rows`: how many rows of pixel data to
    write (fewer than `height` makes a file whose header promises more than it holds)."""
    white = b"\x00" + b"\xff" * ((width + 7) // 8)
    band = b"\x00" + b"\x00" * ((width + 7) // 8)
    rows = height if rows is None else rows
    third = rows // 3
    pixels = zlib.compress(white * third + band * third + white * (rows - 2 * third), 6)
    header = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", pixels)
        + _chunk(b"IEND", b"")
    )
    return path


@pytest.fixture(scope="module")
def big_image_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hand-made run with P1_m1 a 20000x20000 PNG, P1_m2 a corrupt file (and P2_m3, as
    in every hand-made run, missing)."""
    run = write_run(tmp_path_factory.mktemp("audit-big"))
    images = run.parent / "data" / "images"
    blank_png(images / "P1_m1.png", SIDE, SIDE)
    (images / "P1_m2.png").write_bytes(b"\x89PNG\r\n\x1a\nnot really a png")
    return run


@pytest.mark.slow
def test_an_image_the_run_accepts_is_bundled_and_a_bad_one_is_left_out(
    big_image_run: Path, tmp_path: Path
) -> None:
    from bundle_doc import read_bundle

    from titjudge.workbench.bundle import BUNDLE_SIDE

    big = big_image_run.parent / "data" / "images" / "P1_m1.png"
    assert SIDE * SIDE <= MAX_PIXELS and decode_pixels(big) > 0  # the run's loader takes it
    out = tmp_path / "page"
    done = subprocess.run(
        [sys.executable, "-m", "titjudge", "audit", str(big_image_run), "--html", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "DecompressionBomb" not in done.stderr
    # one line per unreadable image, naming it and why; nothing about the big one
    warnings = [line for line in done.stderr.splitlines() if "image left out" in line]
    assert len(warnings) == 2
    assert any("P1_m2.png: corrupt or truncated image" in line for line in warnings)
    assert any("P2_m3.png: image file not found" in line for line in warnings)
    assert "P1_m1" not in done.stderr

    pages = read_bundle(out)["item_pages"]["r1"]
    assert pages["P1_m2"]["url"] is None and pages["P2_m3"]["url"] is None  # page: "could not"
    with Image.open(out / pages["P1_m1"]["url"]) as shown:
        assert shown.size == (BUNDLE_SIDE, BUNDLE_SIDE) and shown.format == "JPEG"
        middle = BUNDLE_SIDE // 2
        assert shown.convert("L").getpixel((middle, middle)) < 64  # the black band, scaled
        assert shown.convert("L").getpixel((middle, 20)) > 192


def test_thumbnails_and_the_run_refuse_the_same_images_alike(tmp_path: Path) -> None:
    """Over the loader's limit (header only, nothing decoded) and a file cut off inside its
    pixel data: the thumbnail and the run's loader give the same one-line DataError."""
    from titjudge.data.images import load_thumbnail

    huge = blank_png(tmp_path / "huge.png", 40_001, 40_000, rows=1)
    short = blank_png(tmp_path / "short.png", 64, 64)
    short.write_bytes(short.read_bytes()[:45])  # signature, header, 12 bytes of pixel data
    for path, reason in ((huge, "megapixel limit"), (short, "corrupt or truncated")):
        with pytest.raises(DataError, match=reason) as by_run:
            load_image(path)
        with pytest.raises(DataError, match=reason) as by_audit:
            load_thumbnail(path, 128)
        assert str(by_run.value) == str(by_audit.value)
