"""litellm itself, imported on first use and set up once (`litellm_module`): its price map
read from the package (`LITELLM_LOCAL_MODEL_COST_MAP`, else the import fetches it online:
~2.4 s of retries offline), its debug banners, telemetry and loggers quiet. A model sent
direct (`models.litellm.wire`) never imports it: ~2-3 s of CPU a run does not spend.
"""

from __future__ import annotations

import logging
import os
from typing import Any

#: set before anything imports litellm (this module is imported first where litellm is)
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")


def litellm_module() -> Any:
    """The litellm package, set up as titjudge runs it (imported on the first call; later
    calls find it in `sys.modules`)."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    if not getattr(litellm, "_titjudge_set_up", False):
        litellm.suppress_debug_info = True
        litellm.telemetry = False
        for name in ("LiteLLM", "LiteLLM Router", "LiteLLM Proxy", "litellm"):
            logging.getLogger(name).setLevel(logging.ERROR)
        litellm._titjudge_set_up = True
    return litellm


__all__ = ["litellm_module"]
