"""The LangGraph graph and its nodes: describer, judge, evaluator; run state."""
