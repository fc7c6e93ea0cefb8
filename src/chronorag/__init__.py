"""chronorag: temporal GraphRAG components for LlamaIndex, LangChain and LangGraph.

The curated public API lives here; everything is imported lazily on first use, so
``import chronorag`` stays fast and an optional extra is only needed by what uses it.

>>> from chronorag import DenseEventRetriever, TimeFilter, read_events  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    # time model and event store
    "TimeFilter": "chronorag.retrievers.base",
    "parse_time": "chronorag.graphs.time",
    "TemporalEventStore": "chronorag.graphs.store",
    "EventStoreBuilder": "chronorag.graphs.store",
    "read_events": "chronorag.graphs.io",
    # indexes and retrievers
    "EventIndex": "chronorag.retrievers.event_index",
    "build_event_index": "chronorag.retrievers.event_index",
    "DenseEventRetriever": "chronorag.retrievers.dense",
    "StarRAGRetriever": "chronorag.retrievers.star_rag",
    "StarRAGPGRetriever": "chronorag.retrievers.star_rag",
    "RuleGraph": "chronorag.graphs.rule_graph",
    "build_rule_graph": "chronorag.graphs.rule_graph",
    "TGragRetriever": "chronorag.retrievers.tgrag",
    "TGragPGRetriever": "chronorag.retrievers.tgrag",
    "build_tgrag_index": "chronorag.retrievers.tgrag_index",
    # tools and framework adapters
    "TemporalKGTools": "chronorag.integrations.temporal_tools",
    "make_langchain_tools": "chronorag.integrations.temporal_tools",
    "make_llama_index_tools": "chronorag.integrations.llama_index_tools",
    "LangChainRetriever": "chronorag.integrations.langchain_adapters",
    "as_langchain_retriever": "chronorag.integrations.langchain_adapters",
    "export_to_property_graph": "chronorag.integrations.property_graph",
    "store_from_property_graph": "chronorag.integrations.property_graph",
    # LLMs
    "LLMConfig": "chronorag.integrations.llm",
    "resolve_llm": "chronorag.integrations.llm",
    "ScriptedOpenAIServer": "chronorag.integrations.testing",
    # errors
    "ChronoRAGError": "chronorag.errors",
    "DataFormatError": "chronorag.errors",
    "IndexFormatError": "chronorag.errors",
    "LLMError": "chronorag.errors",
    "UnknownNameError": "chronorag.errors",
    "MissingExtraError": "chronorag.errors",
    "TimeParseError": "chronorag.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'chronorag' has no attribute {name!r}")
    value = getattr(importlib.import_module(mod), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static type checkers see the real symbols
    from chronorag.errors import (  # noqa: F401
        ChronoRAGError,
        DataFormatError,
        IndexFormatError,
        LLMError,
        MissingExtraError,
        TimeParseError,
        UnknownNameError,
    )
    from chronorag.graphs.io import read_events  # noqa: F401
    from chronorag.graphs.rule_graph import RuleGraph, build_rule_graph  # noqa: F401
    from chronorag.graphs.store import EventStoreBuilder, TemporalEventStore  # noqa: F401
    from chronorag.graphs.time import parse_time  # noqa: F401
    from chronorag.integrations.langchain_adapters import LangChainRetriever, as_langchain_retriever  # noqa: F401
    from chronorag.integrations.llama_index_tools import make_llama_index_tools  # noqa: F401
    from chronorag.integrations.llm import LLMConfig, resolve_llm  # noqa: F401
    from chronorag.integrations.property_graph import (  # noqa: F401
        export_to_property_graph,
        store_from_property_graph,
    )
    from chronorag.integrations.temporal_tools import TemporalKGTools, make_langchain_tools  # noqa: F401
    from chronorag.integrations.testing import ScriptedOpenAIServer  # noqa: F401
    from chronorag.retrievers.base import TimeFilter  # noqa: F401
    from chronorag.retrievers.dense import DenseEventRetriever  # noqa: F401
    from chronorag.retrievers.event_index import EventIndex, build_event_index  # noqa: F401
    from chronorag.retrievers.star_rag import StarRAGPGRetriever, StarRAGRetriever  # noqa: F401
    from chronorag.retrievers.tgrag import TGragPGRetriever, TGragRetriever  # noqa: F401
    from chronorag.retrievers.tgrag_index import build_tgrag_index  # noqa: F401
