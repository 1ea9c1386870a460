"""The interface every other part of `models` shares, and nothing else: the backend interface
and its request/reply types (`base`; model spec strings are `titjudge.records.spec`), a
model's typed options (`options`, `thinking`, `execution`: where local models run) and the
unbuilt backend that loads its library on the first cache miss (`lazy`). Imports no backend
library."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
