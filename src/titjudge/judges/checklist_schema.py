"""The checklist judge's structures and arithmetic (LongT2IBench-style element graph).

A prompt decomposes into elements: entities, their attributes, relations between
entities, setting, composition, lighting, style and details (mood included). Attributes
and relations name the entities they hang on. Each element is then judged against the
description as present / absent / contradicted, and the score is the weighted share of
satisfied elements: an element is satisfied when judged present and, for an attribute
or relation, every entity it names is present too (a red coat on a missing girl is not
shown, whatever the description says about red coats).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

ElementType = Literal[
    "entity", "attribute", "relation", "setting", "composition", "lighting", "style", "detail"
]
Presence = Literal["present", "absent", "contradicted"]


class ChecklistElement(BaseModel):
    model_config = ConfigDict(extra="ignore")

    id: str = Field(
        "",
        description="Element id: e1, e2, e3, ... in prompt order (the judge renumbers "
        "elements itself, so any unique id will do).",
    )
    type: ElementType = Field(
        description="entity (a subject or object), attribute (a property of one entity: colour, texture, "
        "size, pose...), relation (position or interaction between entities), setting (environment), "
        "composition (framing, viewpoint), lighting (light and colour mood), style (art style, medium), "
        "detail (small details and mood)."
    )
    text: str = Field(
        min_length=1, description="The element as a short phrase, e.g. 'violet sea urchin'."
    )
    entities: list[str] = Field(
        default_factory=list,
        description="For attributes and relations: ids of the entity elements they describe; else empty.",
    )


class PromptChecklist(BaseModel):
    """A prompt split into checkable elements (made once per prompt, cached)."""

    model_config = ConfigDict(extra="ignore")

    elements: list[ChecklistElement] = Field(
        min_length=1,
        max_length=200,
        description="Every checkable element of the prompt, in prompt order.",
    )

    @classmethod
    def stand_in(cls, text: str) -> PromptChecklist:
        """What an estimate or `explain` takes for a decomposition not yet made: one element
        holding `text` (a stand-in of the answer's length), so each image's verdict call is
        built and counted (`models.calls.estimate_probe`)."""
        return cls(elements=[ChecklistElement(id="e1", type="detail", text=text)])

    @model_validator(mode="before")
    @classmethod
    def _numbered(cls, data: Any) -> Any:
        """The elements renumbered e1, e2, ... in the order given, whatever ids the model
        wrote (`E1`, `1`, `girl`, none at all), with every entity reference rewritten to
        match (see `renumber`)."""
        if isinstance(data, dict) and isinstance(data.get("elements"), list):
            return {**data, "elements": renumber(data["elements"])}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> PromptChecklist:
        entities = {e.id for e in self.elements if e.type == "entity"}
        for element in self.elements:
            unknown = [ref for ref in element.entities if ref not in entities]
            if unknown:
                raise ValueError(
                    f"element {element.id} names {', '.join(unknown)}, which are not entity elements"
                )
            if element.type in ("attribute", "relation") and not element.entities:
                raise ValueError(
                    f"{element.type} {element.id} must name the entity ids it describes"
                )
        return self


def renumber(elements: list[Any]) -> list[Any]:
    """`elements` (raw dicts, as the model wrote them) with ids e1, e2, ... in order and each
    entry of `entities` rewritten to the new id of the element it names: by the model's own id
    (exactly, else ignoring case and spaces), else by an entity element's text. A reference
    to an id the model gave twice cannot be told apart and is a ValueError; one that names
    nothing is left as written, and the consistency check then names it."""
    given: dict[str, list[str]] = {}
    texts: dict[str, list[str]] = {}
    rows = [dict(e) if isinstance(e, dict) else e for e in elements]
    for n, row in enumerate(rows, start=1):
        if not isinstance(row, dict):
            continue
        new = f"e{n}"
        raw = row.get("id")
        if isinstance(raw, (str, int)) and not isinstance(raw, bool) and str(raw).strip():
            given.setdefault(str(raw).strip(), []).append(new)
        if row.get("type") == "entity" and isinstance(row.get("text"), str):
            texts.setdefault(_loose(row["text"]), []).append(new)
        row["id"] = new
    loose: dict[str, list[str]] = {}
    for key, found in given.items():
        loose.setdefault(_loose(key), []).extend(found)
    for row in rows:
        refs = row.get("entities") if isinstance(row, dict) else None
        if not isinstance(refs, list):
            continue
        row["entities"] = [_resolve(ref, given, loose, texts, row["id"]) for ref in refs]
    return rows


def _loose(text: str) -> str:
    return "".join(str(text).split()).casefold()


def _resolve(
    ref: Any,
    given: dict[str, list[str]],
    loose: dict[str, list[str]],
    texts: dict[str, list[str]],
    owner: str,
) -> Any:
    if not isinstance(ref, (str, int)) or isinstance(ref, bool):
        return ref
    key = str(ref).strip()
    for table, probe in ((given, key), (loose, _loose(key)), (texts, _loose(key))):
        found = table.get(probe)
        if found is None:
            continue
        if len(set(found)) > 1:
            raise ValueError(
                f"element ids must be unique: element {owner} names {key!r}, which "
                f"{len(found)} elements ({', '.join(found)}) carry"
            )
        return found[0]
    return key


class ElementVerdict(BaseModel):
    model_config = ConfigDict(extra="ignore")

    reason: str = Field(
        min_length=1, description="One short clause of evidence from the description."
    )
    verdict: Presence = Field(
        description="present: the description shows it as asked; absent: not mentioned; contradicted: the "
        "description states something incompatible (other colour, count, position, style...)."
    )


def element_key(checklist: PromptChecklist) -> tuple[tuple[str, str, str], ...]:
    return tuple((e.id, e.type, e.text) for e in checklist.elements)


@lru_cache(maxsize=4096)
def verdicts_schema(elements: tuple[tuple[str, str, str], ...]) -> type[BaseModel]:
    """One required field per element id, so the call layer's validation (and its re-ask) rejects a
    reply that skips an element."""
    fields: dict[str, Any] = {
        eid: (ElementVerdict, Field(description=f"{kind}: {text}")) for eid, kind, text in elements
    }
    return create_model("ChecklistVerdicts", __config__=ConfigDict(extra="ignore"), **fields)


def render_elements(checklist: PromptChecklist) -> str:
    """The element list as the judge template shows it: 'e2 [attribute of e1] violet sea urchin'."""
    lines = []
    for e in checklist.elements:
        of = f" of {', '.join(e.entities)}" if e.entities else ""
        lines.append(f"{e.id} [{e.type}{of}] {e.text}")
    return "\n".join(lines)


@dataclass
class ChecklistScore:
    score: float
    rows: list[dict[str, Any]]
    counts: dict[str, int]

    def lines(self) -> list[str]:
        """Readable element list with verdicts (the audit page shows it)."""
        out = []
        for row in self.rows:
            mark = "ok" if row["satisfied"] else "MISSED"
            why = " (its entity is missing)" if row["missed_by_entity"] else ""
            out.append(
                f"{mark} {row['id']} [{row['type']}] {row['text']}: {row['verdict']}{why} - {row['reason']}"
            )
        return out


def score_checklist(
    checklist: PromptChecklist, verdicts: BaseModel, weights: dict[str, float]
) -> ChecklistScore:
    """Weighted share of satisfied elements; ValueError when no element carries weight."""
    found: dict[str, ElementVerdict] = {e.id: getattr(verdicts, e.id) for e in checklist.elements}
    present_entities = {
        e.id for e in checklist.elements if e.type == "entity" and found[e.id].verdict == "present"
    }
    rows: list[dict[str, Any]] = []
    total = got = 0.0
    counts = {"present": 0, "absent": 0, "contradicted": 0, "missed_by_entity": 0, "satisfied": 0}
    for element in checklist.elements:
        verdict = found[element.id]
        entity_missing = any(ref not in present_entities for ref in element.entities)
        satisfied = verdict.verdict == "present" and not entity_missing
        weight = float(weights.get(element.type, 0.0))
        total += weight
        got += weight * satisfied
        counts[verdict.verdict] += 1
        counts["missed_by_entity"] += verdict.verdict == "present" and entity_missing
        counts["satisfied"] += satisfied
        rows.append(
            {
                "id": element.id,
                "type": element.type,
                "text": element.text,
                "entities": element.entities,
                "verdict": verdict.verdict,
                "reason": verdict.reason,
                "weight": weight,
                "satisfied": satisfied,
                "missed_by_entity": verdict.verdict == "present" and entity_missing,
            }
        )
    if total <= 0.0:
        raise ValueError("no element of this prompt carries weight (all its element types weigh 0)")
    return ChecklistScore(score=got / total, rows=rows, counts=counts)
