"""Model backends behind one interface, chosen by a model spec string.

The map, from the bottom up (nothing imports upward, no circle between files; the
import-linter contracts in pyproject.toml hold it):
- `core/`: the backend interface, model options, lazy (unbuilt) backends (model spec
  strings are parsed in `titjudge.records.spec`);
- `calls/`: the call layer every call goes through: cache, limits, pacing, retries, keys,
  results, structured replies, provenance;
- `litellm/`: talking to providers through litellm; `local/`: transformers and embedding
  checkpoints in this process; `ray/`: local models in Ray actors;
- `factories` (which module builds each backend), `registry` (lazy building and Ray placement),
  `preflight` (what a config needs before any call) and `hub` (one place that builds backends
  and clients from a config).
"""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
