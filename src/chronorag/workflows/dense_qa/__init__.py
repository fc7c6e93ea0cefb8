"""Dense event QA: retrieve events, then answer with the LLM or the no-LLM reader."""

from chronorag.workflows.dense_qa.graph import build_graph, graph

__all__ = ["build_graph", "graph"]
