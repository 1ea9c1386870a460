"""The LangGraph graph and its nodes: describer, judge, evaluator; run state."""

from titjudge.submodules import lazy_submodules

__getattr__ = lazy_submodules(__name__)
