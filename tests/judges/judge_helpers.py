"""Loopback-server responders for the judge modes, and run-config helpers.

Every responder is deterministic, so a test can recompute what a judge must have said:
content-word Jaccard overlap (`server_text.jaccard`) stands in for judgement, as it does
for the server's built-in judge.
"""

from __future__ import annotations

import json
import math
import re
import threading
from pathlib import Path
from typing import Any

import builders
from doubles.server import (
    AutoResponder,
    ChatRequest,
    DescribeResponder,
    JudgeResponder,
    Reply,
    TokenLogprob,
)
from doubles.server_text import content_words, jaccard

PAIR = re.compile(
    r"^PROMPT:\n(.*?)\n\nFIRST DESCRIPTION:\n(.*?)\n\nSECOND DESCRIPTION:\n(.*?)\n\nReply",
    re.S | re.M,
)
DECOMPOSE = re.compile(r"^PROMPT:\n(.*?)\n\nReply with only", re.S | re.M)
CHECK = re.compile(r"^ELEMENTS:\n(.*?)\n\nDESCRIPTION:\n(.*?)\n\nReply", re.S | re.M)
ELEMENT_LINE = re.compile(r"^(e\d+) \[(\w+)(?: of ([e\d, ]+))?\] (.*)$")
YES_TEXT = re.compile(r"^TEXT:\n(.*?)\n\nAnswer with", re.S | re.M)
CATEGORY_TYPE = {
    "subject": "entity",
    "colour": "attribute",
    "texture": "attribute",
    "relation": "relation",
    "environment": "setting",
    "composition": "composition",
    "lighting": "lighting",
    "style": "style",
    "mood": "detail",
    "detail": "detail",
}


def stored_descriptions(data: Path) -> dict[str, str]:
    rows = [
        json.loads(line)
        for line in (data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["image_sha256"]: row["description"] for row in rows}


def description_by_item(data: Path) -> dict[str, str]:
    rows = [
        json.loads(line)
        for line in (data / "descriptions.jsonl").read_text().splitlines()
        if line.strip()
    ]
    return {row["item_id"]: row["description"] for row in rows}


def manifest(data: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (data / "manifest.jsonl").read_text().splitlines()
        if line.strip()
    ]


def pair_choice(prompt: str, first: str, second: str) -> str:
    """What the fair pairwise responder answers: the description with the higher Jaccard."""
    one, two = jaccard(prompt, first), jaccard(prompt, second)
    return "first" if one > two else "second" if two > one else "tie"


def synthetic_checklists(data: Path) -> dict[str, list[dict[str, Any]]]:
    """prompt text -> element list, from the generator's own graded elements (elements.jsonl)."""
    prompts = {row["item_id"]: row["prompt"] for row in manifest(data)}
    found: dict[str, list[dict[str, Any]]] = {}
    for line in (data / "elements.jsonl").read_text().splitlines():
        row = json.loads(line)
        prompt = prompts[row["item_id"]]
        if prompt in found:
            continue
        elements: list[dict[str, Any]] = []
        subjects: dict[str, str] = {}
        for graded in row["elements"]:
            eid = f"e{len(elements) + 1}"
            kind = CATEGORY_TYPE[graded["category"]]
            text = graded["element"].replace("left_of", "left of")
            if kind == "entity":
                subjects[text] = eid
            refs: list[str] = []
            if kind == "attribute":
                refs = [next(i for name, i in subjects.items() if text.endswith(name))]
            elif kind == "relation":
                refs = [i for name, i in subjects.items() if name in text]
            elements.append({"id": eid, "type": kind, "text": text, "entities": refs})
        found[prompt] = elements
    return found


def element_verdict(kind: str, text: str, entity_texts: list[str], description: str) -> str:
    """present: every content word of the element is in the description; an attribute whose
    entity is there without its modifiers: contradicted; else absent."""
    words = set(content_words(description))
    if set(content_words(text)) <= words:
        return "present"
    if (
        kind == "attribute"
        and entity_texts
        and all(set(content_words(e)) <= words for e in entity_texts)
    ):
        return "contradicted"
    return "absent"


class ModesResponder:
    """Describes images, and answers pairwise, checklist, yes/no and score requests.

    `favour_first` makes the pairwise judge always pick the first position. Every request
    is logged as (kind, detail) so tests can count calls and check order swapping.
    """

    def __init__(self, data: Path, favour_first: bool = False):
        self.describe = DescribeResponder(stored_descriptions(data))
        self.auto = AutoResponder(JudgeResponder(describer=self.describe), self.describe)
        self.checklists = synthetic_checklists(data)
        self.favour_first = favour_first
        self.log: list[tuple[str, Any]] = []
        self._lock = threading.Lock()

    def count(self, kind: str) -> int:
        return sum(1 for seen, _ in self.log if seen == kind)

    def _note(self, kind: str, detail: Any = None) -> None:
        with self._lock:
            self.log.append((kind, detail))

    def __call__(self, request: ChatRequest) -> Reply:
        text = request.text
        if request.images and (found := YES_TEXT.search(text)):
            self._note("yes")
            return yes_reply(found.group(1), self.describe.description_for(request.images[0]))
        if request.images and "PROMPT:" not in text:
            self._note("describe")
            return self.describe(request)
        if found := PAIR.search(text):
            prompt, first, second = found.groups()
            self._note("pair", (first, second))
            winner = "first" if self.favour_first else pair_choice(prompt, first, second)
            return Reply(
                data={"rationale": f"{winner} covers more of the prompt", "winner": winner}
            )
        if found := CHECK.search(text):
            self._note("check")
            return Reply(data=check_reply(found.group(1), found.group(2)))
        if "Split the PROMPT into elements" in text and (found := DECOMPOSE.search(text)):
            self._note("decompose", found.group(1))
            return Reply(data={"elements": self.checklists[found.group(1)]})
        self._note("judge")
        return self.auto(request)


def check_reply(elements: str, description: str) -> dict[str, Any]:
    rows = [ELEMENT_LINE.match(line).groups() for line in elements.splitlines()]  # type: ignore[union-attr]
    texts = {eid: text for eid, _, _, text in rows}
    reply = {}
    for eid, kind, refs, text in rows:
        entity_texts = [texts[r.strip()] for r in (refs or "").split(",") if r.strip()]
        reply[eid] = {
            "reason": f"checked {text!r}",
            "verdict": element_verdict(kind, text, entity_texts, description),
        }
    return reply


def yes_probabilities(prompt: str, description: str) -> tuple[float, float]:
    """(P(Yes), P(No)) the yes responder puts on its first token; 0.2 goes to 'The'."""
    unit = jaccard(prompt, description)
    return 0.1 + 0.6 * unit, 0.7 - 0.6 * unit


def yes_reply(prompt: str, description: str) -> Reply:
    p_yes, p_no = yes_probabilities(prompt, description)
    token = "Yes" if p_yes >= p_no else "No"
    top = (("Yes", math.log(p_yes)), ("No", math.log(p_no)), ("The", math.log(0.2)))
    return Reply(content=token, logprobs=(TokenLogprob(token, dict(top)[token], top=top),))


def run_config(
    data: Path, url: str, tmp: Path, judges: list[dict[str, Any]], name: str = "modes"
) -> dict[str, Any]:
    """Describer and judges through litellm against the loopback server, two attempts a call:
    `builders.run_config`, each `litellm:` judge given the loopback's options."""
    return builders.run_config(
        data, tmp, url=url, name=name, judges=judges, max_attempts=2, api_judges=True
    )


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
