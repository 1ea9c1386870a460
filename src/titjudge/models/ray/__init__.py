"""`hf:` and `embed:` models run in Ray actors (`run.execution.backend: ray`): the process's
connection to Ray (`session`), the actor that holds one loaded backend (`actors`) and the
backend that spreads calls over a pool of them (`backend`). Ray is imported only here, when
such a model is first built."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
