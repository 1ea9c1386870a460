"""Deterministic text for the fake OpenAI server: descriptions, judge JSON, embeddings.

Everything here is a pure function of its inputs, so tests can hand-compute the answers:
- content words: lowercase runs of letters/digits (2+ characters) minus English stopwords;
- judge score: Jaccard(content words of prompt, of description) scaled to the score range;
- embeddings: signed feature hashing of content words (a bag of hashed words), so texts
  that share words get a higher cosine and unrelated ones a cosine near 0;
- descriptions: ~250 words assembled from fixed vocabularies by an RNG seeded with the
  image's sha256.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from typing import Any

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers herself him himself his how i if in into is it its
    itself just me more most my myself no nor not now of off on once only or other our ours
    ourselves out over own same she should so some such than that the their theirs them themselves
    then there these they this those through to too under until up very was we were what when where
    which while who whom why will with would you your yours yourself yourselves""".split()  # noqa: SIM905
)
_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> list[str]:
    """Lowercase word tokens of 2+ characters that are not stopwords, in order, with repeats."""
    return [w for w in _WORD.findall(text.lower()) if len(w) >= 2 and w not in STOPWORDS]


def jaccard(a: str, b: str) -> float:
    """|A & B| / |A | B| over content-word sets; ValueError when neither text has any."""
    set_a, set_b = set(content_words(a)), set(content_words(b))
    union = set_a | set_b
    if not union:
        raise ValueError("neither text has a content word")
    return len(set_a & set_b) / len(union)


def scaled(unit: float, lo: float, hi: float) -> int:
    """`lo + unit * (hi - lo)` rounded half up to an integer."""
    return math.floor(lo + unit * (hi - lo) + 0.5)


def overlap_score(prompt: str, description: str, lo: float, hi: float) -> int:
    """The judge responder's score: Jaccard of content words scaled to [lo, hi], rounded."""
    return scaled(jaccard(prompt, description), lo, hi)


def jaccard_rationale(prompt: str, description: str) -> str:
    """A short, deterministic explanation naming shared and missing content words."""
    p, d = set(content_words(prompt)), set(content_words(description))
    shared, missing = sorted(p & d), sorted(p - d)
    return (
        f"The description shares {len(shared)} of {len(p | d)} distinct content words with the prompt"
        f" ({', '.join(shared[:12]) or 'none'}); missing from it: {', '.join(missing[:8]) or 'nothing'}."
    )


# --------------------------------------------------------------------------- JSON schemas

_RATIONALE_HINTS = ("reason", "rational", "explan", "justif", "analysis", "comment")


def _resolve(node: Any, root: dict[str, Any]) -> dict[str, Any]:
    """Follow local `$ref`s (`#/$defs/X`, `#/definitions/X`)."""
    seen = 0
    while isinstance(node, dict) and isinstance(node.get("$ref"), str) and seen < 32:
        target: Any = root
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part, {}) if isinstance(target, dict) else {}
        node, seen = target, seen + 1
    return node if isinstance(node, dict) else {}


def _numeric(node: dict[str, Any], root: dict[str, Any]) -> dict[str, Any] | None:
    node = _resolve(node, root)
    for option in node.get("anyOf", node.get("oneOf", [])):
        found = _numeric(option, root)
        if found is not None:
            return found
    kind = node.get("type")
    kinds = kind if isinstance(kind, list) else [kind]
    return node if {"integer", "number"} & set(kinds) else None


def score_field(schema: dict[str, Any] | None, data: dict[str, Any] | None = None) -> str | None:
    """The numeric field that holds the score: 'score' itself, else the first numeric '*score*'."""
    if schema is not None:
        props = _resolve(schema, schema).get("properties", {})
        numeric = [k for k, v in props.items() if _numeric(v, schema) is not None]
    else:
        numeric = [
            k
            for k, v in (data or {}).items()
            if isinstance(v, int | float) and not isinstance(v, bool)
        ]
    if "score" in numeric:
        return "score"
    return next((k for k in numeric if "score" in k.lower()), None)


def score_range(schema: dict[str, Any] | None, name: str | None = None) -> tuple[float, float]:
    """(minimum, maximum) of the score field; 0 and 100 where the schema gives none."""
    if schema is None:
        return 0.0, 100.0
    name = name or score_field(schema)
    props = _resolve(schema, schema).get("properties", {})
    node = _numeric(props.get(name, {}), schema) if name else None
    return _bounds(node or {})


def _bounds(node: dict[str, Any]) -> tuple[float, float]:
    lo = node.get("minimum", node.get("exclusiveMinimum", 0))
    hi = node.get("maximum", node.get("exclusiveMaximum", 100))
    return float(lo), float(hi)


def fill_schema(
    node: Any, root: dict[str, Any], context: dict[str, Any], name: str | None = None
) -> Any:
    """A value matching `node`: the score in '*score*' numbers, the rationale in 'reason'-like
    strings, and for everything else the default, the first enum value, or the type's minimum."""
    node = _resolve(node, root)
    lowered = (name or "").lower()
    if "const" in node:
        return node["const"]
    if node.get("enum"):
        return node["enum"][0]
    for key in ("anyOf", "oneOf", "allOf"):
        options = [o for o in node.get(key, []) if _resolve(o, root).get("type") != "null"]
        if options:
            return fill_schema(options[0], root, context, name)
    kind = node.get("type")
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), None)
    if kind == "object" or "properties" in node:
        return {
            key: fill_schema(sub, root, context, key)
            for key, sub in node.get("properties", {}).items()
        }
    if kind == "array":
        return [
            fill_schema(node.get("items", {}), root, context, name)
            for _ in range(int(node.get("minItems", 0)))
        ]
    if kind in ("integer", "number"):
        if "score" in lowered:
            lo, hi = _bounds(node)
            return scaled(float(context["jaccard"]), lo, hi)
        return node.get("default", node.get("minimum", 0))
    if kind == "boolean":
        return node.get("default", float(context["jaccard"]) >= 0.5)
    if kind == "string" or kind is None:
        if any(hint in lowered for hint in _RATIONALE_HINTS):
            return str(context["rationale"])
        default = node.get("default")
        return default if isinstance(default, str) else "x" * int(node.get("minLength", 0))
    return None


# --------------------------------------------------------------------------- embeddings


def hashed_embedding(text: str, dim: int) -> list[float]:
    """L2-normalised signed bag of hashed content words (all words if it has none)."""
    features = content_words(text) or _WORD.findall(text.lower()) or [text.strip()]
    vector = [0.0] * dim
    for feature in features:
        value = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "big")
        vector[value % dim] += 1.0 if (value >> 63) & 1 == 0 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:  # features cancelled out: fall back to one hashed coordinate of the whole text
        vector[int(hashlib.sha256(text.encode()).hexdigest(), 16) % dim] = 1.0
        return vector
    return [x / norm for x in vector]


# --------------------------------------------------------------------------- descriptions

_SUBJECTS = [
    "an elderly fisherman mending a net",
    "a red fox curled on a stone",
    "a lighthouse on a cliff",
    "a girl in a yellow raincoat",
    "a vintage bicycle against a wall",
    "a steaming cup of tea",
    "a dragon perched on a tower",
    "a robot tending a garden",
    "a sailboat on calm water",
    "a cat asleep on a windowsill",
    "an astronaut floating in a corridor",
    "a market stall of fruit",
]
_SETTINGS = [
    "a misty harbour at dawn",
    "a snowy mountain village",
    "a narrow cobbled street",
    "a sunlit meadow full of wildflowers",
    "a cluttered workshop",
    "a quiet library",
    "a neon-lit city at night",
    "a dense pine forest",
    "a desert under a pale sky",
    "a rooftop garden",
]
_LIGHT = [
    "soft golden light",
    "cool blue moonlight",
    "harsh midday sun",
    "warm lamplight",
    "diffuse overcast light",
    "dramatic backlighting",
    "flickering candlelight",
    "pastel twilight",
]
_STYLES = [
    "a painterly oil style",
    "a crisp photographic look",
    "a watercolour wash",
    "a flat vector style",
    "a cinematic film still",
    "a detailed pencil sketch",
    "a dreamy impressionist manner",
    "a bold comic style",
]
_DETAILS = [
    "scattered autumn leaves",
    "a faded wooden sign",
    "drifting smoke",
    "small birds overhead",
    "reflections in a puddle",
    "a coiled rope",
    "flower pots on a ledge",
    "a worn stone path",
    "distant hills",
    "hanging paper lanterns",
    "a rusted iron gate",
    "patches of moss",
]
_MOODS = [
    "calm and nostalgic",
    "tense and expectant",
    "playful",
    "melancholy",
    "serene",
    "mysterious",
]
_TEMPLATES = [
    "The image shows {subject} set in {setting}.",
    "The scene is lit by {light}, which gives the colours a {mood} quality.",
    "It is rendered in {style}, with careful attention to texture and edges.",
    "In the foreground there is {detail}, while the background holds {detail2}.",
    "The composition places the main subject slightly off centre, leaving room for {detail}.",
    "Near the edges of the frame one can make out {detail} and {detail2}.",
    "The palette combines muted earth tones with accents that echo {light}.",
    "Overall the atmosphere feels {mood}, as if the moment had been paused just before something happens.",
    "Behind the subject, {setting} stretches away, softened by a shallow depth of field.",
    "Small touches such as {detail} add a sense of place and lived-in history.",
]


def describe_from_hash(sha256: str, words: int = 250) -> str:
    """A single-paragraph description of at least `words` words, fixed by the image hash."""
    rng = random.Random(int(sha256[:32], 16) if re.fullmatch(r"[0-9a-f]{32,}", sha256) else sha256)
    subject, setting = rng.choice(_SUBJECTS), rng.choice(_SETTINGS)
    sentences: list[str] = []
    count = 0
    while count < words:
        template = (
            _TEMPLATES[len(sentences) % len(_TEMPLATES)]
            if len(sentences) < 2
            else rng.choice(_TEMPLATES)
        )
        detail, detail2 = rng.sample(_DETAILS, 2)
        sentence = template.format(
            subject=subject,
            setting=setting,
            light=rng.choice(_LIGHT),
            style=rng.choice(_STYLES),
            detail=detail,
            detail2=detail2,
            mood=rng.choice(_MOODS),
        )
        sentences.append(sentence)
        count += len(sentence.split())
    return " ".join(sentences)
