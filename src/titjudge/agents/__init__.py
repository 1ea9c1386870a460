"""The LangGraph graph and its agents: the item graph's describe, judge and fallback nodes
(`nodes`, over the steps in `item`), the cached pass, the pairwise and evaluator nodes
(`finish`), and the driver (`graph.drive`) that run, batch, estimate and explain all go
through. What a run does around the graph is in `titjudge.run`."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
