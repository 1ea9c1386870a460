"""The items of one run, image by image: what a run without human pairs has to show, and
what every run's judges said about each image (the audit's item view, in the workbench).

- `item_rows` / `items_view`: one row per image of the run (items.jsonl's order): its
  prompt, length, T2I model and each variant's status and score; filtered (text in the
  prompt, description or rationales; T2I model; any variant failed or from its fallback)
  and paged here;
- `item_view`: one image in full: the prompt, the image, its description, and each
  variant's score, rationale, error, details and the model that answered.

Read from the run's items.jsonl through its audit (`report.audit.load`), as every view.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from titjudge.errors import DataError
from titjudge.workbench.catalog import Catalog, RunRef

#: rows per page of the items view
ITEM_PAGE_SIZE = 50
STATUSES = ("all", "failed", "fallback")


def _finite(value: float | None) -> float | None:
    return value if value is not None and math.isfinite(value) else None


def item_rows(run: RunRef) -> list[dict[str, Any]]:
    """One row per image of the run, built once and kept with the run."""
    if run.item_rows is not None:
        return run.item_rows
    audit = run.audit
    rows = []
    for item_id, item in audit.items.items():
        prompt = audit.prompts.get(item.prompt_id, "")
        results: list[dict[str, Any] | None] = []
        texts = [prompt.lower()]
        for name in audit.variants:
            line = item.results.get(name)
            if line is None:
                results.append(None)
                continue
            results.append({"status": line.status, "score": _finite(line.score)})
            texts += [(t or "").lower() for t in (line.rationale, line.description, line.error)]
        rows.append(
            {
                "item_id": item_id,
                "prompt_id": item.prompt_id,
                "prompt": prompt,
                "words": len(prompt.split()),
                "t2i_model": item.t2i_model,
                "results": results,
                "text": "\n".join(t for t in texts if t),
            }
        )
    run.item_rows = rows
    return rows


@dataclass(frozen=True)
class ItemFilter:
    """The items view's filters (the bundle's script applies the same)."""

    query: str | None = None
    t2i_model: str | None = None
    status: str = "all"

    def check(self) -> None:
        if self.status not in STATUSES:
            raise DataError(f"unknown status {self.status!r}; statuses: {', '.join(STATUSES)}")

    def keeps(self, row: dict[str, Any]) -> bool:
        if self.t2i_model is not None and row["t2i_model"] != self.t2i_model:
            return False
        if self.query and self.query.lower() not in row["text"]:
            return False
        if self.status != "all":
            return any(r is not None and r["status"] == self.status for r in row["results"])
        return True


def items_view(catalog: Catalog, run_id: str, found: ItemFilter, page: int = 1) -> dict[str, Any]:
    """One page of the run's images that pass the filter, with the total."""
    found.check()
    run = catalog.readable(run_id)
    rows = [row for row in item_rows(run) if found.keeps(row)]
    pages = max(1, math.ceil(len(rows) / ITEM_PAGE_SIZE))
    page = min(max(1, page), pages)
    shown = rows[(page - 1) * ITEM_PAGE_SIZE : page * ITEM_PAGE_SIZE]
    return {
        "run": {"id": run.id, "label": run.label},
        "variants": run.audit.variants,
        "total": len(rows),
        "page": page,
        "pages": pages,
        "rows": [{k: v for k, v in row.items() if k != "text"} for row in shown],
        "models": sorted({row["t2i_model"] for row in item_rows(run)}),
    }


def item_view(catalog: Catalog, run_id: str, item_id: str) -> dict[str, Any]:
    """One image of the run in full."""
    run = catalog.readable(run_id)
    audit = run.audit
    item = audit.items.get(item_id)
    if item is None:
        raise DataError(f"no item {item_id!r} in run {run.id}")
    variants = []
    description = None
    for name in audit.variants:
        line = item.results.get(name)
        summary = audit.summaries.get(name)
        if line is not None and line.description and description is None:
            description = line.description
        variants.append(
            {
                "name": name,
                "kind": summary.provenance.kind if summary and summary.provenance else None,
                "status": line.status if line else None,
                "score": _finite(line.score) if line else None,
                "rationale": line.rationale if line else None,
                "error": line.error if line else None,
                "details": line.details if line else None,
                "answered_by": line.answered_by if line else [],
            }
        )
    return {
        "run": {"id": run.id, "label": run.label},
        "item_id": item_id,
        "prompt_id": item.prompt_id,
        "prompt": audit.prompts.get(item.prompt_id, ""),
        "t2i_model": item.t2i_model,
        "url": f"/image/{run.id}/{item_id}",
        "description": description,
        "variants": variants,
    }


__all__ = ["ITEM_PAGE_SIZE", "ItemFilter", "item_rows", "item_view", "items_view"]
