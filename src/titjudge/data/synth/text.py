"""Texts of the synthetic benchmark: long prompts from scenes, descriptions from renderings.

A prompt states every element a `Scene` asks for (plus ungraded art-direction prose,
as real long prompts do) in ~200-280 words. A description is what a describer would
say about the *drawn* image: it names rendered elements, states contradictions as
drawn ("a violet fox" when the prompt said crimson), omits missed ones, and uses its
own phrasing so that it is not a copy of the prompt.
"""

from __future__ import annotations

import random

from titjudge.data.synth.scene import Relation, Rendering, Scene, Subject, relation_holds

PROMPT_WORDS = (200, 280)
DESCRIPTION_WORDS = (150, 300)

_ART_DIRECTION = (
    "Keep the arrangement legible so that each subject can be told apart at a glance.",
    "Pay close attention to how the edges of each object meet the background behind it.",
    "The colours named here matter and should be reproduced faithfully rather than reinterpreted.",
    "Avoid clutter: apart from what is described, the scene should stay uncluttered and calm.",
    "Let the environment frame the subjects instead of competing with them for attention.",
    "Every element described here should be clearly visible, with nothing contradicting the requested arrangement.",
    "Treat the picture as a single coherent moment rather than a collage of separate parts.",
    "The spatial relationships between the subjects are essential and must be respected exactly.",
)
_SUBJECT_INTRO = (
    "The scene features",
    "At its heart is",
    "Include",
    "Also present is",
    "Add",
    "Place in the scene",
)
_RELATION_PROMPT = {
    "left_of": (
        "The {a} should be positioned to the left of the {b}.",
        "Put the {a} on the left-hand side of the {b}.",
    ),
    "above": (
        "The {a} must sit higher in the frame than the {b}, clearly above it.",
        "Position the {a} above the {b}.",
    ),
    "larger_than": (
        "The {a} should appear noticeably larger than the {b}.",
        "Make the {a} bigger than the {b}.",
    ),
    "in_front_of": (
        "The {a} stands in front of the {b}, partly covering it.",
        "Let the {a} overlap the {b} from the front.",
    ),
}


def _words(text: str) -> int:
    return len(text.split())


def _a(phrase: str) -> str:
    return ("an " if phrase[0].lower() in "aeiou" else "a ") + phrase


def _name(scene_subject: Subject) -> str:
    return f"{scene_subject.colour.name} {scene_subject.noun.name}"


def write_prompt(scene: Scene, rng: random.Random) -> str:
    """A single-paragraph long prompt naming every graded element of `scene`."""
    s = scene
    opening = rng.choice(
        (
            f"Create a detailed image set {s.setting.prompt}.",
            f"Imagine a carefully composed scene {s.setting.prompt}.",
            f"Depict a single striking moment {s.setting.prompt}.",
        )
    )
    core: list[str] = [opening]
    for k, subject in enumerate(s.subjects):
        intro = _SUBJECT_INTRO[0] if k == 0 else rng.choice(_SUBJECT_INTRO[2:])
        texture = subject.texture.name if subject.texture else "plain"
        core.append(
            f"{intro} {_a(_name(subject))} with a {texture} pattern across its surface, {subject.flavour}."
        )
    for rel in s.relations:
        core.append(_relation_sentence(rel, s, rng))
    core += [
        f"The picture should be {s.composition.prompt}.",
        f"The whole scene is {s.lighting.prompt}, and every surface should respond to that light.",
        f"Stylistically, it should be {s.style.prompt}.",
        f"Balance the {' and '.join(sub.colour.name for sub in s.subjects)} of the subjects against the "
        f"colours of the {s.setting.name} so that nothing blends into the background.",
        f"Enrich the scene with {s.details[0].name} and {s.details[1].name}.",
        s.mood.prompt,
    ]
    target = rng.randint(PROMPT_WORDS[0] + 10, PROMPT_WORDS[1] - 30)
    extras = list(_ART_DIRECTION)
    rng.shuffle(extras)
    while _words(" ".join(core)) < target and extras:
        core.insert(rng.randint(len(s.subjects) + 1, len(core)), extras.pop())
    return " ".join(core)


def _relation_sentence(rel: Relation, scene: Scene, rng: random.Random) -> str:
    template = rng.choice(_RELATION_PROMPT[rel.kind])
    return template.format(a=_name(scene.subjects[rel.a]), b=_name(scene.subjects[rel.b]))


# --------------------------------------------------------------------------- descriptions


def _where(subject: Subject, scale: float) -> str:
    x = 0.5 + (subject.cx - 0.5) * scale
    y = 0.5 + (subject.cy - 0.5) * scale
    horizontal = "left" if x < 0.4 else "right" if x > 0.6 else "middle"
    vertical = "upper " if y < 0.45 else "lower " if y > 0.65 else ""
    return f"the {vertical}centre" if horizontal == "middle" else f"the {vertical}{horizontal}"


def _drawn_relation(rel: Relation, a: Subject, b: Subject) -> str:
    """State the relation between two drawn subjects as it appears, right or wrong."""
    an, bn = a.noun.name, b.noun.name
    if rel.kind == "left_of":
        side = "left" if relation_holds("left_of", a, b) else "right"
        return f"The {an} appears to the {side} of the {bn}."
    if rel.kind == "above":
        return f"The {an} is placed {'higher' if relation_holds('above', a, b) else 'lower'} in the frame than the {bn}."
    if rel.kind == "larger_than":
        return f"The {an} looks {'larger' if relation_holds('larger_than', a, b) else 'smaller'} than the {bn}."
    if relation_holds("in_front_of", a, b):
        return f"The {an} overlaps the {bn}, hiding part of it."
    if relation_holds("in_front_of", b, a):
        return f"The {bn} overlaps the {an} and hides part of it."
    return f"The {an} and the {bn} stand apart without overlapping."


def describe_rendering(rendering: Rendering, rng: random.Random) -> str:
    """A describer-style paragraph of what was drawn, ~150-300 words: the style and setting,
    the subjects and their relations, the light, details and mood, then optional remarks
    until the paragraph is long enough (`rng` drawn from in that order)."""
    parts = [
        *_scene_sentences(rendering, rng),
        *_subject_sentences(rendering, rng),
        *_light_sentences(rendering, rng),
    ]
    return " ".join(_padded(parts, rng))


def _scene_sentences(r: Rendering, rng: random.Random) -> list[str]:
    """The style, the setting, the view and the horizon."""
    parts: list[str] = []
    if r.style is not None:
        parts.append(
            rng.choice(
                (
                    f"This square picture resembles a {r.style.name}, with {r.style.drawn}.",
                    f"Rendered in the manner of a {r.style.name}, the image shows {r.style.drawn}.",
                )
            )
        )
    else:
        parts.append(
            "This square picture is a clean, plain digital rendering without any pronounced artistic treatment."
        )
    if r.setting is not None:
        parts.append(
            rng.choice(
                (
                    f"The background depicts {r.setting.drawn}.",
                    f"Behind everything lies {r.setting.drawn}.",
                )
            )
        )
    else:
        parts.append(
            "There is no recognisable environment: the shapes sit against a flat, pale grey backdrop."
        )
    parts.append(f"The view is {r.composition.drawn}.")
    if r.setting is not None:
        h = r.composition.horizon
        level = "near the top" if h < 0.3 else "roughly midway" if h < 0.65 else "low"
        parts.append(f"The horizon line sits {level} in the frame.")
    return parts


def _subject_sentences(r: Rendering, rng: random.Random) -> list[str]:
    """How many subjects, each subject where it is, their colours together, their relations."""
    scale = r.composition.scale
    parts: list[str] = []
    drawn = sorted((s for s in r.subjects if s is not None), key=lambda s: s.cx)
    counts = {
        1: "One main subject",
        2: "Two main subjects",
        3: "Three main subjects",
        4: "Four main subjects",
    }
    parts.append(
        f"{counts[len(drawn)]} can be made out." if drawn else "No clear subject is visible at all."
    )
    templates = [
        "Toward {where} there is {what}, {surface}.",
        "In {where} of the frame sits {what}, {surface}.",
        "{What} occupies {where}, {surface}.",
        "Looking at {where}, one finds {what}, {surface}.",
    ]
    rng.shuffle(templates)
    for k, subject in enumerate(drawn):
        colour = subject.colour.name if rng.random() < 0.5 else subject.colour.alt
        radius = subject.r * scale
        size = "small" if radius < 0.08 else "medium-sized" if radius < 0.115 else "large"
        what = _a(f"{size} {colour} {subject.noun.name}")
        surface = (
            f"its surface {subject.texture.drawn}"
            if subject.texture
            else "its surface plain and untextured"
        )
        where_ = _where(subject, scale)
        parts.append(
            templates[k].format(where=where_, what=what, What=what.capitalize(), surface=surface)
        )
    if len(drawn) > 1:
        names = [s.colour.alt for s in drawn]
        parts.append(
            f"Together they bring {', '.join(names[:-1])} and {names[-1]} into the picture."
        )
    for rel in r.scene.relations:
        a, b = r.subjects[rel.a], r.subjects[rel.b]
        if a is not None and b is not None:
            parts.append(_drawn_relation(rel, a, b))
    return parts


def _light_sentences(r: Rendering, rng: random.Random) -> list[str]:
    """The lighting, the small details and the mood."""
    parts: list[str] = []
    if r.lighting is not None:
        source = {
            "sun": " A round sun hangs in the sky.",
            "moon": " A pale moon is visible in the sky.",
        }
        parts.append(f"The lighting shows {r.lighting.drawn}.{source.get(r.lighting.source, '')}")
    else:
        parts.append("The light is even and neutral, with no strong colour cast.")
    detail_templates = [
        "Scattered across the image are {}.",
        "One can also notice {}.",
        "The picture also holds {}.",
    ]
    rng.shuffle(detail_templates)
    for detail, template in zip(r.details, detail_templates, strict=False):
        parts.append(template.format(detail.drawn))
    parts.append(
        r.mood.drawn if r.mood is not None else "The overall atmosphere is fairly neutral."
    )
    return parts


def _padded(parts: list[str], rng: random.Random) -> list[str]:
    """`parts` with optional remarks inserted until the paragraph reaches its drawn length."""
    optional = [
        "Each object carries a darker outline in a shade of its own colour.",
        "The forms are simple and geometric rather than photographic.",
        "There is no text or lettering anywhere in the image.",
        "No people are present in the picture.",
        "The image is square, and the composition has no visible frame or border.",
        "Shading is minimal, so the objects read as flat cut-out shapes.",
        "Nothing in the picture carries a logo, signature or watermark.",
        "None of the objects casts a visible shadow on the ground.",
        "Beyond the elements already mentioned, the picture holds no clutter.",
        "Overall the image has a simple, almost diagrammatic quality.",
    ]
    rng.shuffle(optional)
    target = rng.randint(DESCRIPTION_WORDS[0] + 20, DESCRIPTION_WORDS[1] - 60)
    while _words(" ".join(parts)) < target and optional:
        parts.insert(rng.randint(1, len(parts)), optional.pop())
    return parts
