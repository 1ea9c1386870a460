"""The routing tables titjudge keeps so that a provider typo is refused without importing
litellm (`models.litellm.provider_names`) are litellm's own: at the release they were read from
(requirements.lock's) they equal what the imported litellm holds, and under any release the
tables read from its files do (so a newer litellm's provider is never refused by the shipped
tables). Sources: `litellm.provider_list`, `JSONProviderRegistry`,
`litellm.openai_compatible_endpoints`, the bundled price map's names and its
`fallback_generalizations` rules (litellm/litellm_core_utils/get_llm_provider_logic.py reads
each of them in `_get_llm_provider`)."""

from __future__ import annotations

import importlib.metadata
import json
import re
from pathlib import Path
from typing import Any

import pytest

from titjudge.models.litellm.provider_names import (
    LITELLM_RELEASE,
    SHIPPED,
    RoutingTables,
    read_tables,
    routing_tables,
)


def litellm_tables() -> RoutingTables:
    """The same tables, from the imported litellm's own objects."""
    # after `import titjudge` (above), which makes litellm read its bundled price map
    import litellm
    from litellm.litellm_core_utils import get_llm_provider_logic
    from litellm.llms.openai_like.json_loader import JSONProviderRegistry

    JSONProviderRegistry.load()
    providers = {str(getattr(p, "value", p)) for p in litellm.provider_list}
    providers |= set(JSONProviderRegistry.list_providers())
    root = Path(litellm.__file__).parent
    prices: dict[str, Any] = json.loads(
        (root / "model_prices_and_context_window_backup.json").read_text()
    )
    rules = prices["fallback_generalizations"]["rules"]
    logic = Path(get_llm_provider_logic.__file__).read_text()
    return RoutingTables(
        providers=frozenset(providers),
        priced_prefixes=frozenset({n.split("/", 1)[0] for n in prices if "/" in n} - providers),
        endpoints=tuple(litellm.openai_compatible_endpoints),
        routing=tuple(
            (r["pattern"], r["model_info"]["litellm_provider"])
            for r in rules
            if list(r["model_info"]) == ["litellm_provider"]
        ),
        starts=tuple(
            s
            for s in re.findall(r'model\.startswith\("([^"]+)"\)', logic)
            if s.rstrip("/") not in providers
        ),
    )


def test_the_tables_read_from_litellms_files_are_litellms() -> None:
    read = read_tables()
    assert read is not None
    assert read == litellm_tables()
    assert len(read.providers) > 100 and "openai" in read.providers
    assert len(read.endpoints) > 20 and "api.groq.com/openai/v1" in read.endpoints


def test_the_shipped_tables_are_litellms_at_the_locked_release() -> None:
    installed = importlib.metadata.version("litellm")
    lock = (Path(__file__).resolve().parents[2] / "requirements.lock").read_text()
    assert f"litellm=={LITELLM_RELEASE}\n" in lock  # the release the tables were read from
    if installed != LITELLM_RELEASE:
        # another release (the drift job's lowest or newest): its own files are read
        assert routing_tables() == read_tables()
        pytest.skip(f"litellm {installed} installed; the shipped tables are {LITELLM_RELEASE}'s")
    found = litellm_tables()
    for field in ("providers", "priced_prefixes", "endpoints", "routing", "starts"):
        shipped, live = getattr(SHIPPED, field), getattr(found, field)
        assert shipped == live, (
            f"provider_names.{field.upper()} differs from litellm {installed}: "
            f"missing {sorted(set(live) - set(shipped))}, extra {sorted(set(shipped) - set(live))}"
        )
    assert routing_tables() is SHIPPED
