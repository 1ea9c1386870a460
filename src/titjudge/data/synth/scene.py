"""Synthetic scenes: what a prompt asks for, what a simulated T2I model renders, and its true quality.

A `Scene` is sampled per prompt; a `Rendering` per (prompt, model). For every element
the model either gets it right (probability rising with its latent skill, relations
hardest), contradicts it (e.g. draws a blue cat for a red one) or omits it. Spatial
relations are not decided by fiat: the model's layout is perturbed and each relation
is then *measured* on the drawn geometry, so the PNG, the description and the truth
can never disagree. Latent quality = weighted share of prompt elements rendered right
(LongT2IBench-style scoring, docs/method.md, 'Beyond the paper').
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

from titjudge.data.synth.vocab import (
    COLOURS,
    COMPOSITIONS,
    DETAILS,
    LIGHTINGS,
    MOODS,
    NEUTRAL_COMPOSITION,
    NOUNS,
    SETTINGS,
    STYLES,
    SUBJECT_FLAVOUR,
    TEXTURES,
    Colour,
    Composition,
    Detail,
    Lighting,
    Mood,
    Noun,
    Setting,
    Style,
    Texture,
)

T = TypeVar("T")
Status = Literal["correct", "wrong", "missing"]
RelationKind = Literal["left_of", "above", "larger_than", "in_front_of"]

#: element category -> (weight in the quality score, difficulty exponent on skill)
CATEGORIES: dict[str, tuple[float, float]] = {
    "subject": (3.0, 0.3),
    "colour": (1.0, 0.9),
    "texture": (0.75, 1.2),
    "relation": (2.0, 2.0),
    "environment": (2.0, 0.5),
    "composition": (1.0, 1.3),
    "lighting": (1.5, 0.9),
    "style": (1.5, 0.7),
    "detail": (0.5, 1.5),
    "mood": (1.0, 1.1),
}


@dataclass(frozen=True)
class Subject:
    """A subject as requested (or as drawn); geometry in unit coordinates of a neutral frame."""

    noun: Noun
    colour: Colour
    texture: Texture | None
    flavour: str
    cx: float
    cy: float
    r: float
    z: int


@dataclass(frozen=True)
class Relation:
    kind: RelationKind
    a: int
    b: int


@dataclass(frozen=True)
class Scene:
    """Everything one prompt asks for."""

    prompt_id: str
    subjects: tuple[Subject, ...]
    relations: tuple[Relation, ...]
    setting: Setting
    composition: Composition
    lighting: Lighting
    style: Style
    details: tuple[Detail, ...]
    mood: Mood
    hardness: float


@dataclass(frozen=True)
class Element:
    """One graded prompt element and how the rendering treated it."""

    category: str
    label: str
    status: Status

    @property
    def weight(self) -> float:
        return CATEGORIES[self.category][0]


@dataclass(frozen=True)
class Rendering:
    """What one simulated model actually drew for a scene (None = omitted)."""

    scene: Scene
    subjects: tuple[Subject | None, ...]
    setting: Setting | None
    composition: Composition
    lighting: Lighting | None
    style: Style | None
    details: tuple[Detail, ...]
    mood: Mood | None
    elements: tuple[Element, ...]

    @property
    def quality(self) -> float:
        total = sum(e.weight for e in self.elements)
        return sum(e.weight for e in self.elements if e.status == "correct") / total


@dataclass(frozen=True)
class ModelProfile:
    """A simulated T2I model: overall skill plus small per-category strengths."""

    name: str
    skill: float
    offsets: dict[str, float]


# --------------------------------------------------------------------------- geometry


def relation_holds(kind: RelationKind, a: Subject, b: Subject) -> bool:
    """Measure a relation on drawn geometry (smaller y = higher in the frame)."""
    if kind == "left_of":
        return a.cx < b.cx
    if kind == "above":
        return a.cy < b.cy
    if kind == "larger_than":
        return a.r > b.r
    overlap = math.hypot(a.cx - b.cx, a.cy - b.cy) < a.r + b.r
    return overlap and a.z > b.z


def _facts(a: Subject, b: Subject) -> list[RelationKind]:
    """Relations that clearly hold for (a, b), with margins larger than the render jitter."""
    facts: list[RelationKind] = []
    if b.cx - a.cx > 0.12:
        facts.append("left_of")
    if b.cy - a.cy > 0.1:
        facts.append("above")
    if a.r > 1.3 * b.r:
        facts.append("larger_than")
    if a.z > b.z and math.hypot(a.cx - b.cx, a.cy - b.cy) < 0.85 * (a.r + b.r):
        facts.append("in_front_of")
    return facts


def sample_scene(rng: random.Random, prompt_id: str) -> Scene:
    """Sample a scene: 2-4 subjects in a layout, then relations that the layout makes true."""
    n = rng.choice((2, 3, 3, 4))
    nouns = rng.sample(NOUNS, n)
    colours = rng.sample(COLOURS, n)
    order = list(range(n))
    rng.shuffle(order)
    z_order = list(range(n))
    rng.shuffle(z_order)
    subjects: list[Subject] = []
    for i in range(n):
        cx = 0.12 + 0.76 * (order[i] + 0.5) / n + rng.uniform(-0.05, 0.05)
        r = rng.choice((0.065, 0.09, 0.125)) * rng.uniform(0.95, 1.05)
        subjects.append(
            Subject(
                nouns[i],
                colours[i],
                rng.choice(TEXTURES),
                rng.choice(SUBJECT_FLAVOUR),
                cx,
                rng.uniform(0.45, 0.8),
                r,
                z_order[i],
            )
        )
    if rng.random() < 0.45:  # tuck one subject against another so "in front of" can be asked
        i, j = rng.sample(range(n), 2)
        near = subjects[i].cx + 0.6 * (subjects[i].r + subjects[j].r) * rng.choice((-1, 1))
        subjects[j] = replace(
            subjects[j], cx=min(0.92, max(0.08, near)), cy=subjects[i].cy + rng.uniform(-0.04, 0.04)
        )
    pairs = [(i, j) for i in range(n) for j in range(n) if i < j]
    rng.shuffle(pairs)
    wanted = n - 1 + int(n > 2 and rng.random() < 0.5)
    relations: list[Relation] = []
    for i, j in pairs:
        if len(relations) >= wanted:
            break
        options = [(k, i, j) for k in _facts(subjects[i], subjects[j])]
        options += [(k, j, i) for k in _facts(subjects[j], subjects[i])]
        if options:
            kind, a, b = rng.choice(options)
            relations.append(Relation(kind, a, b))
    return Scene(
        prompt_id=prompt_id,
        subjects=tuple(subjects),
        relations=tuple(relations),
        setting=rng.choice(SETTINGS),
        composition=rng.choice(COMPOSITIONS),
        lighting=rng.choice(LIGHTINGS),
        style=rng.choice(STYLES),
        details=tuple(rng.sample(DETAILS, 2)),
        mood=rng.choice(MOODS),
        hardness=rng.uniform(0.8, 1.25),
    )


# --------------------------------------------------------------------------- rendering


def make_models(rng: random.Random, n_models: int) -> list[ModelProfile]:
    """Evenly spread skills in random order, so a model's number does not reveal its rank."""
    if n_models == 1:
        skills = [0.65]
    else:
        skills = [
            0.35 + 0.55 * k / (n_models - 1) + rng.uniform(-0.015, 0.015) for k in range(n_models)
        ]
    rng.shuffle(skills)
    return [
        ModelProfile(
            f"synth-model-{k + 1:02d}",
            round(skill, 4),
            {c: rng.gauss(0.0, 0.05) for c in CATEGORIES},
        )
        for k, skill in enumerate(skills)
    ]


def _other(rng: random.Random, options: Sequence[T], current: T) -> T:
    return rng.choice([o for o in options if o != current])


def render(scene: Scene, model: ModelProfile, rng: random.Random) -> Rendering:
    """Decide what `model` draws for `scene` and grade every requested element."""
    noise = rng.gauss(0.0, 0.06)

    def succeeds(category: str) -> bool:
        skill = min(0.98, max(0.02, model.skill + model.offsets[category] + noise))
        return rng.random() < skill ** (CATEGORIES[category][1] * scene.hardness)

    elements: list[Element] = []
    drawn: list[Subject | None] = []
    for s in scene.subjects:
        if not succeeds("subject"):
            drawn.append(None)
            texture_name = s.texture.name if s.texture else "plain"
            elements += [
                Element("subject", s.noun.name, "missing"),
                Element("colour", f"{s.colour.name} {s.noun.name}", "missing"),
                Element("texture", f"{texture_name} {s.noun.name}", "missing"),
            ]
            continue
        elements.append(Element("subject", s.noun.name, "correct"))
        colour = s.colour if succeeds("colour") else _other(rng, COLOURS, s.colour)
        elements.append(
            Element(
                "colour",
                f"{s.colour.name} {s.noun.name}",
                "correct" if colour == s.colour else "wrong",
            )
        )
        texture: Texture | None = s.texture
        if not succeeds("texture"):
            texture = _other(rng, TEXTURES, s.texture) if rng.random() < 0.35 else None
        status: Status = "correct" if texture == s.texture else "wrong" if texture else "missing"
        texture_name = s.texture.name if s.texture else "plain"
        elements.append(Element("texture", f"{texture_name} {s.noun.name}", status))
        drawn.append(
            replace(
                s,
                colour=colour,
                texture=texture,
                cx=s.cx + rng.uniform(-0.015, 0.015),
                cy=s.cy + rng.uniform(-0.015, 0.015),
                r=s.r * rng.uniform(0.93, 1.07),
            )
        )
    for rel in scene.relations:
        a, b = drawn[rel.a], drawn[rel.b]
        if a is not None and b is not None and not succeeds("relation") and rng.random() < 0.5:
            drawn[rel.a], drawn[rel.b] = _swap(rel.kind, a, b)
    for rel in scene.relations:
        a, b = drawn[rel.a], drawn[rel.b]
        label = f"{scene.subjects[rel.a].noun.name} {rel.kind} {scene.subjects[rel.b].noun.name}"
        state: Status = (
            "missing"
            if a is None or b is None
            else "correct"
            if relation_holds(rel.kind, a, b)
            else "wrong"
        )
        elements.append(Element("relation", label, state))

    setting, s_el = _choose(rng, succeeds("environment"), scene.setting, SETTINGS, 0.4)
    lighting, l_el = _choose(rng, succeeds("lighting"), scene.lighting, LIGHTINGS, 0.4)
    style, st_el = _choose(rng, succeeds("style"), scene.style, STYLES, 0.4)
    mood, m_el = _choose(rng, succeeds("mood"), scene.mood, MOODS, 0.35)
    composition = scene.composition if succeeds("composition") else NEUTRAL_COMPOSITION
    details = tuple(d for d in scene.details if succeeds("detail"))
    elements += [
        Element("environment", scene.setting.name, s_el),
        Element(
            "composition",
            scene.composition.name,
            "correct" if composition == scene.composition else "missing",
        ),
        Element("lighting", scene.lighting.name, l_el),
        Element("style", scene.style.name, st_el),
        Element("mood", scene.mood.name, m_el),
    ]
    elements += [
        Element("detail", d.name, "correct" if d in details else "missing") for d in scene.details
    ]
    return Rendering(
        scene, tuple(drawn), setting, composition, lighting, style, details, mood, tuple(elements)
    )


def _swap(kind: RelationKind, a: Subject, b: Subject) -> tuple[Subject, Subject]:
    """Break a relation the way a careless model would: exchange the property it constrains."""
    if kind == "left_of":
        return replace(a, cx=b.cx), replace(b, cx=a.cx)
    if kind == "above":
        return replace(a, cy=b.cy), replace(b, cy=a.cy)
    if kind == "larger_than":
        return replace(a, r=b.r), replace(b, r=a.r)
    return replace(a, z=b.z), replace(b, z=a.z)


def _choose(
    rng: random.Random, ok: bool, wanted: T, options: Sequence[T], p_wrong: float
) -> tuple[T | None, Status]:
    """(what is drawn, status): the wanted option, a contradicting one, or nothing."""
    if ok:
        return wanted, "correct"
    if rng.random() < p_wrong:
        return _other(rng, options, wanted), "wrong"
    return None, "missing"
