"""Vocabulary of the synthetic benchmark: every element a prompt can ask for, with how to draw it.

Each entry pairs the words used in prompts and descriptions with the drawing
parameters, so what a text says and what a PNG shows come from one record. The six
blocks follow LPG-Bench: subjects (with attributes and relations), environment,
composition, lighting/colour, art style, details/mood.
"""

from __future__ import annotations

from dataclasses import dataclass

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Colour:
    name: str
    rgb: RGB
    alt: str  # a second way to say it, so descriptions do not copy prompts word for word


@dataclass(frozen=True)
class Noun:
    name: str
    shape: str  # key into synth_draw's shape table


@dataclass(frozen=True)
class Texture:
    name: str  # adjective used in prompts: "striped"
    drawn: str  # phrase used in descriptions: "banded with diagonal stripes"


@dataclass(frozen=True)
class Setting:
    name: str
    prompt: str
    drawn: str
    sky: tuple[RGB, RGB]  # top, bottom
    ground: RGB
    feature: str  # key into synth_draw's feature table


@dataclass(frozen=True)
class Composition:
    name: str
    prompt: str
    drawn: str
    scale: float  # subject size and spread around the frame centre
    horizon: float  # horizon height as a fraction of the frame, from the top


@dataclass(frozen=True)
class Lighting:
    name: str
    prompt: str
    drawn: str
    tint: RGB
    alpha: float
    source: str  # "sun", "moon", "spot" or "none"
    source_rgb: RGB


@dataclass(frozen=True)
class Style:
    name: str
    prompt: str
    drawn: str
    filter: str  # key into synth_draw's style filters


@dataclass(frozen=True)
class Detail:
    name: str
    drawn: str
    particle: str  # key into synth_draw's particle table


@dataclass(frozen=True)
class Mood:
    name: str
    prompt: str
    drawn: str
    enhance: tuple[float, float, float]  # brightness, contrast, colour saturation


COLOURS: tuple[Colour, ...] = (
    Colour("crimson", (200, 24, 48), "deep red"),
    Colour("cobalt blue", (30, 70, 200), "strong blue"),
    Colour("emerald green", (20, 160, 80), "rich green"),
    Colour("golden yellow", (245, 200, 30), "warm yellow"),
    Colour("violet", (140, 60, 200), "purple"),
    Colour("tangerine", (250, 130, 20), "bright orange"),
    Colour("turquoise", (40, 200, 200), "blue-green"),
    Colour("ivory", (245, 240, 220), "creamy white"),
    Colour("charcoal", (45, 45, 50), "near-black"),
    Colour("rose pink", (240, 120, 170), "soft pink"),
    Colour("chestnut brown", (130, 70, 30), "reddish brown"),
    Colour("silver grey", (170, 175, 185), "cool grey"),
)

NOUNS: tuple[Noun, ...] = (
    Noun("fox", "triangle"),
    Noun("deer", "triangle"),
    Noun("cat", "circle"),
    Noun("hot-air balloon", "circle"),
    Noun("owl", "ellipse_tall"),
    Noun("violin", "ellipse_tall"),
    Noun("whale", "ellipse_wide"),
    Noun("teapot", "ellipse_wide"),
    Noun("robot", "square"),
    Noun("treasure chest", "square"),
    Noun("lighthouse", "rect_tall"),
    Noun("clock tower", "rect_tall"),
    Noun("kite", "diamond"),
    Noun("gemstone", "diamond"),
    Noun("beehive", "hexagon"),
    Noun("lantern", "hexagon"),
    Noun("starfish", "star"),
    Noun("sea urchin", "star"),
    Noun("tortoise", "semicircle"),
    Noun("umbrella", "semicircle"),
)

TEXTURES: tuple[Texture, ...] = (
    Texture("striped", "banded with diagonal stripes"),
    Texture("polka-dotted", "dotted with round spots"),
    Texture("checkered", "covered in a chequerboard of squares"),
    Texture("ringed", "marked with concentric rings"),
    Texture("crosshatched", "scored with fine crossing lines"),
)

SETTINGS: tuple[Setting, ...] = (
    Setting(
        "misty pine forest",
        "deep inside a misty pine forest where dark conifers crowd the horizon",
        "a forest of dark pointed pine trees",
        ((190, 205, 195), (150, 170, 160)),
        (40, 90, 50),
        "pines",
    ),
    Setting(
        "sun-baked desert",
        "in a vast sun-baked desert with rolling dunes stretching away",
        "a sandy desert with rounded dunes",
        ((120, 180, 235), (250, 225, 170)),
        (225, 190, 120),
        "dunes",
    ),
    Setting(
        "rocky ocean shore",
        "on a rocky ocean shore with waves rolling in from the open sea",
        "a seashore with rows of blue waves",
        ((110, 170, 230), (200, 225, 245)),
        (40, 100, 170),
        "waves",
    ),
    Setting(
        "rain-slicked city street",
        "on a rain-slicked city street lined with tall apartment blocks",
        "a city street framed by tall buildings with lit windows",
        ((90, 100, 125), (150, 155, 170)),
        (70, 70, 75),
        "buildings",
    ),
    Setting(
        "snowy mountain pass",
        "high on a snowy mountain pass ringed by jagged white peaks",
        "snow-capped mountain peaks above a white slope",
        ((150, 190, 235), (215, 230, 245)),
        (235, 240, 248),
        "peaks",
    ),
    Setting(
        "wildflower meadow",
        "in a sprawling wildflower meadow dotted with blossoms",
        "a green meadow sprinkled with small flowers",
        ((100, 170, 240), (185, 220, 250)),
        (80, 170, 70),
        "flowers",
    ),
)

COMPOSITIONS: tuple[Composition, ...] = (
    Composition(
        "close-up",
        "framed as an intimate close-up so the subjects fill most of the picture",
        "seen from close up, the subjects filling much of the frame",
        1.3,
        0.42,
    ),
    Composition(
        "wide establishing shot",
        "captured as a wide establishing shot that shows the whole scene",
        "taken from far back, the subjects small within a broad view",
        0.65,
        0.55,
    ),
    Composition(
        "low-angle view",
        "seen from a low angle near the ground so the sky dominates",
        "viewed from low down, with a tall band of sky over a low horizon",
        1.0,
        0.78,
    ),
    Composition(
        "bird's-eye view",
        "shown from a high bird's-eye view looking down on the ground",
        "looking down from above, the ground taking up most of the picture",
        0.85,
        0.18,
    ),
)
#: what is drawn when a model ignores the requested framing
NEUTRAL_COMPOSITION = Composition(
    "medium shot", "", "shown at an ordinary eye-level medium distance", 1.0, 0.6
)

LIGHTINGS: tuple[Lighting, ...] = (
    Lighting(
        "golden-hour sunlight",
        "bathed in warm golden-hour sunlight from a low sun",
        "warm orange light from a low sun",
        (255, 165, 60),
        0.22,
        "sun",
        (255, 190, 80),
    ),
    Lighting(
        "cold moonlight",
        "lit only by cold silvery moonlight from a full moon",
        "a cold blue cast under a pale moon",
        (50, 80, 170),
        0.38,
        "moon",
        (235, 235, 220),
    ),
    Lighting(
        "neon glow",
        "washed in a vivid magenta and cyan neon glow",
        "a saturated magenta wash",
        (240, 40, 200),
        0.25,
        "none",
        (0, 0, 0),
    ),
    Lighting(
        "overcast daylight",
        "under flat, soft overcast daylight with no hard shadows",
        "flat grey daylight",
        (165, 165, 170),
        0.3,
        "none",
        (0, 0, 0),
    ),
    Lighting(
        "dramatic spotlight",
        "lit by a single dramatic spotlight that leaves the edges in darkness",
        "a bright centre falling off into dark edges",
        (0, 0, 0),
        0.0,
        "spot",
        (0, 0, 0),
    ),
)

STYLES: tuple[Style, ...] = (
    Style(
        "watercolour",
        "painted as a loose watercolour with soft bleeding edges",
        "soft, blurred edges like a watercolour wash",
        "watercolour",
    ),
    Style(
        "pixel art",
        "rendered as chunky retro pixel art with a visible pixel grid",
        "blocky, with large square pixels like retro game art",
        "pixel",
    ),
    Style(
        "flat vector illustration",
        "designed as a flat vector illustration with few solid colours",
        "flat areas of a few solid colours, like a vector graphic",
        "posterize",
    ),
    Style(
        "oil painting",
        "executed as a rich oil painting with smooth blended strokes",
        "smoothly blended, painterly surfaces",
        "oil",
    ),
    Style(
        "comic-book inking",
        "drawn in comic-book style with crisp inked outlines",
        "sharpened edges and bold contrasty outlines, like a comic panel",
        "comic",
    ),
    Style(
        "pastel drawing",
        "made as a pale pastel drawing with chalky light tones",
        "washed-out, chalky pale tones",
        "pastel",
    ),
)

DETAILS: tuple[Detail, ...] = (
    Detail("drifting snowflakes", "small white flecks scattered through the air", "snow"),
    Detail(
        "falling autumn leaves",
        "little orange and brown leaves tumbling through the scene",
        "leaves",
    ),
    Detail("glowing fireflies", "tiny yellow points of light hovering about", "fireflies"),
    Detail("streaks of rain", "thin slanted streaks of rain", "rain"),
    Detail("floating paper lanterns", "small red lanterns floating in the sky", "lanterns"),
    Detail("a flock of distant birds", "a handful of dark birds in flight", "birds"),
    Detail("scattered stars", "pinpricks of starlight in the upper sky", "stars"),
)

MOODS: tuple[Mood, ...] = (
    Mood(
        "serene",
        "The mood should feel serene and unhurried, a quiet moment held still.",
        "The picture reads as calm and gentle, with softened contrast.",
        (1.05, 0.85, 0.95),
    ),
    Mood(
        "ominous",
        "The mood should be ominous, heavy with a sense of something about to happen.",
        "The picture feels dark and foreboding, with deep shadows and hard contrast.",
        (0.72, 1.3, 0.8),
    ),
    Mood(
        "whimsical",
        "The mood should be whimsical and playful, like a page from a storybook.",
        "The picture feels playful, its colours pushed bright and candy-like.",
        (1.1, 1.0, 1.45),
    ),
    Mood(
        "melancholic",
        "The mood should be melancholic and wistful, tinged with loss.",
        "The picture feels subdued and wistful, its colours drained toward grey.",
        (0.9, 0.85, 0.55),
    ),
)

#: phrases a prompt adds around a subject; flavour only, not graded and not drawn
SUBJECT_FLAVOUR: tuple[str, ...] = (
    "rendered with careful attention to its silhouette",
    "standing out clearly against its surroundings",
    "placed with a deliberate sense of weight",
    "its outline crisp and easy to read",
    "given a quietly dignified presence",
    "catching the eye before anything else",
)
