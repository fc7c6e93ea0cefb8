"""KG-iRAG: time-anchored iterative retrieval over a temporal KG of records (LangGraph).

See :mod:`chronorag.workflows.kg_irag.graph` for the loop, :mod:`.questions` for Q1/Q2/Q3
generation, :mod:`.reference` for the independent gold labeller and :mod:`.evaluate`
for the metrics.
"""

from chronorag.workflows.kg_irag.state import METHODS, KGIRAGContext

__all__ = ["METHODS", "KGIRAGContext"]
