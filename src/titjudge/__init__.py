"""titjudge: judge how well text-to-image outputs follow long prompts.

Heavy dependencies (litellm, torch, transformers) load only when a backend that
needs them is built, so importing this package stays cheap.
"""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
