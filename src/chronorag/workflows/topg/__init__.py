"""ToPG: proposition-graph retrieval with Suggestion-Selection cycles (Naive, Local, Global)."""

from chronorag.workflows.topg.graph import (
           MODES,
           build_graph,
           graph,
           graph_global,
           graph_local,
           graph_naive,
           run_topg,
)
from chronorag.workflows.topg.index import (
           TopgIndex,
           add_documents,
           build_topg_index,
           load_topg_index,
           read_corpus,
)
from chronorag.workflows.topg.search import ToPGSettings
from chronorag.workflows.topg.state import ToPGContext

__all__ = ["MODES", "ToPGContext", "ToPGSettings", "TopgIndex", "add_documents", "build_graph",
           "build_topg_index", "graph", "graph_global", "graph_local", "graph_naive", "load_topg_index",
           "read_corpus", "run_topg"]
