"""A run around the graph: its context (hub, describer, judges), the preflight, the run end to
end (`runner`: data in, run dir out), one image scored (`score`), what a run would spend
(`estimate`) and send (`explain`), and running it from synchronous code (`loop`). The graph,
its nodes and the driver are in `titjudge.agents`."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
