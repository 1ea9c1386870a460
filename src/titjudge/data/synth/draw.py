"""Draw a `Rendering` as a PNG with Pillow: crude, but every rendered element is visible.

Subjects are coloured, textured shapes at their drawn positions, sizes and stacking
order; the environment is a sky gradient, ground and a few typical features; lighting
is a light source plus a colour cast; mood adjusts brightness/contrast/saturation;
style is an image filter; details are particles. An omitted element leaves no trace,
so two models' images differ exactly where their renderings differ.
"""

from __future__ import annotations

import io
import math
import random
from functools import lru_cache

import numpy as np
from PIL import Image, ImageChops, ImageDraw, ImageEnhance, ImageFilter, ImageOps

from titjudge.data.synth.scene import Rendering, Subject
from titjudge.data.synth.vocab import RGB, Composition, Lighting, Setting, Style

PLAIN_BACKDROP: RGB = (206, 204, 198)


def _mix(a: RGB, b: RGB, t: float) -> RGB:
    return (
        round(a[0] + (b[0] - a[0]) * t),
        round(a[1] + (b[1] - a[1]) * t),
        round(a[2] + (b[2] - a[2]) * t),
    )


def _background(
    setting: Setting | None,
    composition: Composition,
    lighting: Lighting | None,
    size: int,
    rng: random.Random,
) -> Image.Image:
    """Sky gradient, ground, light source (behind the scenery), then the setting's features."""
    if setting is None:
        image = Image.new("RGB", (size, size), PLAIN_BACKDROP)
        _light_source(ImageDraw.Draw(image), lighting, composition, size)
        return image
    horizon = max(1, min(size - 1, round(composition.horizon * size)))
    pixels = np.empty((size, size, 3), dtype=np.float32)
    t = np.linspace(0.0, 1.0, horizon, dtype=np.float32)[:, None]
    pixels[:horizon] = (np.array(setting.sky[0]) * (1 - t) + np.array(setting.sky[1]) * t)[
        :, None, :
    ]
    shade = np.linspace(1.0, 0.78, size - horizon, dtype=np.float32)[:, None]
    pixels[horizon:] = (np.array(setting.ground, dtype=np.float32) * shade)[:, None, :]
    image = Image.fromarray(pixels.astype(np.uint8), "RGB")
    draw = ImageDraw.Draw(image)
    _light_source(draw, lighting, composition, size)
    _features(draw, setting, horizon, size, rng)
    return image


def _features(
    draw: ImageDraw.ImageDraw, setting: Setting, horizon: int, size: int, rng: random.Random
) -> None:
    """The few shapes that make an environment recognisable."""
    s = size
    if setting.feature == "pines":
        for k in range(8):
            x, h = (k + rng.uniform(0.1, 0.9)) * s / 8, rng.uniform(0.1, 0.24) * s
            draw.polygon(
                [(x - h / 3.2, horizon), (x + h / 3.2, horizon), (x, horizon - h)],
                fill=(28, 66, 40),
            )
    elif setting.feature == "dunes":
        for k in range(4):
            x, w = (k + rng.uniform(0, 1)) * s / 4, rng.uniform(0.25, 0.45) * s
            draw.ellipse(
                (x - w, horizon - w / 5, x + w, horizon + w / 5),
                fill=_mix(setting.ground, (150, 100, 50), 0.3),
            )
    elif setting.feature == "waves":
        for row in range(horizon + 6, s, max(6, s // 24)):
            offset = rng.uniform(0, s / 8)
            for x in np.arange(-s / 8 + offset, s, s / 8):
                draw.arc(
                    (x, row - 4, x + s / 8, row + 4),
                    180,
                    360,
                    fill=(200, 225, 245),
                    width=max(1, s // 128),
                )
        draw.rectangle((0, round(s * 0.9), s, s), fill=(222, 205, 160))
    elif setting.feature == "buildings":
        x = 0.0
        while x < s:
            w, h = rng.uniform(0.1, 0.18) * s, rng.uniform(0.15, 0.38) * s
            draw.rectangle(
                (x, horizon - h, x + w, horizon),
                fill=_mix((60, 60, 72), (120, 120, 135), rng.random()),
            )
            for wy in np.arange(horizon - h + 5, horizon - 5, max(5, s // 32)):
                for wx in np.arange(x + 4, x + w - 4, max(6, s // 28)):
                    if rng.random() < 0.55:
                        draw.rectangle(
                            (wx, wy, wx + max(2, s // 90), wy + max(2, s // 90)),
                            fill=(250, 220, 120),
                        )
            x += w + rng.uniform(0, 0.03) * s
    elif setting.feature == "peaks":
        for k in range(3):
            x, h = (k + rng.uniform(0.2, 0.8)) * s / 3, rng.uniform(0.2, 0.35) * s
            draw.polygon(
                [(x - h, horizon), (x + h, horizon), (x, horizon - h)], fill=(110, 120, 140)
            )
            draw.polygon(
                [
                    (x - h / 3, horizon - 2 * h / 3),
                    (x + h / 3, horizon - 2 * h / 3),
                    (x, horizon - h),
                ],
                fill=(250, 250, 252),
            )
    elif setting.feature == "flowers":
        for _ in range(70):
            x, y, r = rng.uniform(0, s), rng.uniform(horizon + 2, s), max(1.0, s / 110)
            draw.ellipse(
                (x - r, y - r, x + r, y + r),
                fill=rng.choice(((250, 240, 80), (240, 90, 120), (250, 250, 250))),
            )


Ink = int | RGB | None


def _shape(
    draw: ImageDraw.ImageDraw,
    shape: str,
    x: float,
    y: float,
    r: float,
    fill: Ink = None,
    outline: Ink = None,
    width: int = 1,
) -> None:
    """Draw one subject shape centred at (x, y) with radius r."""
    if shape in ("circle", "ellipse_wide", "ellipse_tall"):
        rx, ry = {
            "circle": (r, r),
            "ellipse_wide": (1.4 * r, 0.8 * r),
            "ellipse_tall": (0.7 * r, 1.3 * r),
        }[shape]
        draw.ellipse((x - rx, y - ry, x + rx, y + ry), fill=fill, outline=outline, width=width)
    elif shape in ("square", "rect_tall"):
        rx, ry = (r, r) if shape == "square" else (0.55 * r, 1.5 * r)
        draw.rectangle((x - rx, y - ry, x + rx, y + ry), fill=fill, outline=outline, width=width)
    elif shape == "semicircle":
        box = (x - 1.2 * r, y - 0.9 * r, x + 1.2 * r, y + 1.5 * r)
        draw.pieslice(box, 180, 360, fill=fill, outline=outline, width=width)
    else:
        draw.polygon(_polygon(shape, x, y, r), fill=fill, outline=outline, width=width)


def _polygon(shape: str, x: float, y: float, r: float) -> list[tuple[float, float]]:
    if shape == "triangle":
        return [(x, y - 1.2 * r), (x + 1.1 * r, y + 0.9 * r), (x - 1.1 * r, y + 0.9 * r)]
    if shape == "diamond":
        return [(x, y - 1.3 * r), (x + 0.9 * r, y), (x, y + 1.3 * r), (x - 0.9 * r, y)]
    if shape == "hexagon":
        return [
            (x + r * math.cos(k * math.pi / 3), y + r * math.sin(k * math.pi / 3)) for k in range(6)
        ]
    if shape == "star":
        return [
            (
                x + (r if k % 2 == 0 else 0.45 * r) * math.sin(k * math.pi / 5),
                y - (r if k % 2 == 0 else 0.45 * r) * math.cos(k * math.pi / 5),
            )
            for k in range(10)
        ]
    raise ValueError(f"unknown shape {shape!r}")


def _pattern(draw: ImageDraw.ImageDraw, name: str, x: float, y: float, r: float) -> None:
    """Draw a texture's pattern (white on a mask) over the subject's bounding box."""
    box, step = 1.6 * r, max(3.0, r / 3)
    if name in ("striped", "crosshatched"):
        width = max(1, round(r / 9)) if name == "striped" else 1
        for k in np.arange(-2 * box, 2 * box, step):
            draw.line((x + k - box, y + box, x + k + box, y - box), fill=255, width=width)
            if name == "crosshatched":
                draw.line((x + k - box, y - box, x + k + box, y + box), fill=255, width=width)
    elif name == "polka-dotted":
        dot = max(1.0, r / 7)
        for dx in np.arange(-box, box, step):
            for dy in np.arange(-box, box, step):
                draw.ellipse((x + dx - dot, y + dy - dot, x + dx + dot, y + dy + dot), fill=255)
    elif name == "checkered":
        cell = max(2.0, r / 2.5)
        for i, dx in enumerate(np.arange(-box, box, cell)):
            for j, dy in enumerate(np.arange(-box, box, cell)):
                if (i + j) % 2 == 0:
                    draw.rectangle((x + dx, y + dy, x + dx + cell, y + dy + cell), fill=255)
    elif name == "ringed":
        for rad in np.arange(step, 2 * box, step):
            draw.ellipse(
                (x - rad, y - rad, x + rad, y + rad), outline=255, width=max(1, round(r / 12))
            )


def _subject(image: Image.Image, subject: Subject, comp: Composition) -> None:
    """Fill, texture and outline one subject; masks cover only its bounding box (speed)."""
    size = image.width
    x = (0.5 + (subject.cx - 0.5) * comp.scale) * size
    y = (0.5 + (subject.cy - 0.5) * comp.scale) * size
    r = subject.r * comp.scale * size
    x0, y0 = max(0, math.floor(x - 1.7 * r)), max(0, math.floor(y - 1.7 * r))
    x1, y1 = min(size, math.ceil(x + 1.7 * r)), min(size, math.ceil(y + 1.7 * r))
    if x1 <= x0 or y1 <= y0:
        return
    box, lx, ly = (x0, y0, x1, y1), x - x0, y - y0
    mask = Image.new("L", (x1 - x0, y1 - y0), 0)
    _shape(ImageDraw.Draw(mask), subject.noun.shape, lx, ly, r, fill=255)
    image.paste(subject.colour.rgb, box, mask)
    if subject.texture is not None:
        pattern = Image.new("L", mask.size, 0)
        _pattern(ImageDraw.Draw(pattern), subject.texture.name, lx, ly, r)
        rgb = subject.colour.rgb
        ink = _mix(rgb, (0, 0, 0), 0.55) if sum(rgb) > 330 else _mix(rgb, (255, 255, 255), 0.6)
        image.paste(ink, box, ImageChops.multiply(pattern, mask))
    outline = _mix(subject.colour.rgb, (0, 0, 0), 0.6)
    _shape(
        ImageDraw.Draw(image),
        subject.noun.shape,
        x,
        y,
        r,
        outline=outline,
        width=max(1, size // 128),
    )


def _particles(
    draw: ImageDraw.ImageDraw, kind: str, size: int, sky: float, rng: random.Random
) -> None:
    s, unit = size, max(1.0, size / 128)
    top = max(0.15, sky) * s  # "sky" particles stay in the upper band
    if kind == "stars":
        for _ in range(40):
            x, y = rng.uniform(0, s), rng.uniform(0, top)
            draw.ellipse(
                (x - unit / 2, y - unit / 2, x + unit / 2, y + unit / 2), fill=(255, 255, 240)
            )
    elif kind == "birds":
        for _ in range(6):
            x, y, w = (
                rng.uniform(0.05, 0.95) * s,
                rng.uniform(0.05, 0.6) * top,
                rng.uniform(3, 6) * unit,
            )
            draw.line(
                (x - w, y - w / 2, x, y, x + w, y - w / 2),
                fill=(30, 30, 35),
                width=max(1, round(unit)),
            )
    elif kind == "lanterns":
        for _ in range(7):
            x, y = rng.uniform(0.05, 0.95) * s, rng.uniform(0.1, 0.9) * top
            draw.rectangle(
                (x - 2 * unit, y - 3 * unit, x + 2 * unit, y + 3 * unit), fill=(220, 60, 30)
            )
            draw.ellipse((x - unit, y - unit, x + unit, y + unit), fill=(255, 210, 90))
    elif kind == "snow":
        for _ in range(90):
            x, y, r = rng.uniform(0, s), rng.uniform(0, s), rng.uniform(0.5, 1.3) * unit
            draw.ellipse((x - r, y - r, x + r, y + r), fill=(255, 255, 255))
    elif kind == "leaves":
        for _ in range(30):
            x, y = rng.uniform(0, s), rng.uniform(0, s)
            colour = rng.choice(((210, 110, 30), (160, 80, 30), (230, 160, 40)))
            draw.ellipse(
                (x - 2.5 * unit, y - 1.3 * unit, x + 2.5 * unit, y + 1.3 * unit), fill=colour
            )
    elif kind == "fireflies":
        for _ in range(25):
            x, y = rng.uniform(0, s), rng.uniform(0.3 * s, s)
            draw.ellipse(
                (x - 2 * unit, y - 2 * unit, x + 2 * unit, y + 2 * unit), fill=(250, 240, 150)
            )
            draw.ellipse((x - unit, y - unit, x + unit, y + unit), fill=(255, 255, 60))
    elif kind == "rain":
        for _ in range(70):
            x, y, length = rng.uniform(0, s), rng.uniform(0, s), rng.uniform(6, 12) * unit
            draw.line((x, y, x - length / 3, y + length), fill=(190, 205, 230), width=1)


SKY_PARTICLES = frozenset({"stars", "birds", "lanterns"})


@lru_cache(maxsize=8)
def _vignette(size: int) -> Image.Image:
    """An L mask, bright in the centre and dark at the edges, for the spotlight."""
    grid = np.linspace(-1.0, 1.0, size, dtype=np.float32)
    distance = np.sqrt(grid[None, :] ** 2 + grid[:, None] ** 2)
    return Image.fromarray((255 * np.clip(1.25 - distance, 0.15, 1.0)).astype(np.uint8), "L")


def _light(
    image: Image.Image, lighting: Lighting | None, comp: Composition, size: int
) -> Image.Image:
    if lighting is None:
        return image
    if lighting.source == "spot":
        black = Image.new("RGB", image.size, (0, 0, 0))
        return Image.composite(image, black, _vignette(size))
    return Image.blend(image, Image.new("RGB", image.size, lighting.tint), lighting.alpha)


def _light_source(
    draw: ImageDraw.ImageDraw, lighting: Lighting | None, comp: Composition, size: int
) -> None:
    if lighting is None or lighting.source not in ("sun", "moon"):
        return
    r = 0.06 * size
    if lighting.source == "sun":
        x, y = 0.78 * size, max(1.3 * r, comp.horizon * size - 1.2 * r)
    else:
        x, y = 0.2 * size, 0.14 * size
    draw.ellipse((x - r, y - r, x + r, y + r), fill=lighting.source_rgb)


def _stylise(image: Image.Image, style: Style | None) -> Image.Image:
    if style is None:
        return image
    size = image.width
    if style.filter == "watercolour":
        blurred = image.filter(ImageFilter.GaussianBlur(radius=max(1.0, size / 170)))
        return Image.blend(blurred, Image.new("RGB", image.size, (250, 248, 240)), 0.12)
    if style.filter == "pixel":
        small = image.resize((max(4, size // 10), max(4, size // 10)), Image.Resampling.BOX)
        return small.resize(image.size, Image.Resampling.NEAREST)
    if style.filter == "posterize":
        return ImageOps.posterize(image, 2)
    if style.filter == "oil":
        small = image.resize((size // 3, size // 3), Image.Resampling.BILINEAR)
        return small.resize(image.size, Image.Resampling.BICUBIC).filter(ImageFilter.SMOOTH_MORE)
    if style.filter == "comic":
        return ImageOps.posterize(image.filter(ImageFilter.EDGE_ENHANCE_MORE), 3)
    if style.filter == "pastel":
        return Image.blend(image, Image.new("RGB", image.size, (252, 250, 245)), 0.42)
    raise ValueError(f"unknown style filter {style.filter!r}")


def draw_rendering(rendering: Rendering, size: int, rng: random.Random) -> Image.Image:
    """The PNG-ready RGB image of one rendering."""
    comp = rendering.composition
    image = _background(rendering.setting, comp, rendering.lighting, size, rng)
    draw = ImageDraw.Draw(image)
    sky = comp.horizon if rendering.setting is not None else 0.4
    for detail in rendering.details:
        if detail.particle in SKY_PARTICLES:
            _particles(draw, detail.particle, size, sky, rng)
    for subject in sorted((s for s in rendering.subjects if s is not None), key=lambda s: s.z):
        _subject(image, subject, comp)
    draw = ImageDraw.Draw(image)
    for detail in rendering.details:
        if detail.particle not in SKY_PARTICLES:
            _particles(draw, detail.particle, size, sky, rng)
    image = _light(image, rendering.lighting, comp, size)
    if rendering.mood is not None:
        brightness, contrast, colour = rendering.mood.enhance
        image = ImageEnhance.Brightness(image).enhance(brightness)
        image = ImageEnhance.Contrast(image).enhance(contrast)
        image = ImageEnhance.Color(image).enhance(colour)
    return _stylise(image, rendering.style)


def png_bytes(image: Image.Image, compress_level: int = 1) -> bytes:
    """Encode as PNG; fast settings (no optimize), deterministic for the same pixels."""
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=compress_level)
    return buffer.getvalue()
