"""chronorag: temporal GraphRAG components for LlamaIndex, LangChain and LangGraph.

The curated public API lives here; everything is imported lazily on first use, so
``import chronorag`` stays fast and an optional extra is only needed by what uses it.

>>> from chronorag import DenseEventRetriever, TimeFilter, read_events  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it ("module:attr" where the public name is an alias)
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
    # ToPG
    "PropositionGraph": "chronorag.graphs.proposition_graph",
    "ToPGRetriever": "chronorag.retrievers.topg",
    "build_topg_index": "chronorag.workflows.topg",
    "load_topg_index": "chronorag.workflows.topg",
    "read_corpus": "chronorag.workflows.topg",
    "ToPGSettings": "chronorag.workflows.topg",
    "ToPGContext": "chronorag.workflows.topg",
    "build_topg_graph": "chronorag.workflows.topg.graph:build_graph",
    "export_topg_to_property_graph": "chronorag.integrations.topg_property_graph",
    # KG-iRAG
    "RecordKG": "chronorag.graphs.record_kg",
    "RecordSpec": "chronorag.graphs.record_kg",
    "EventRule": "chronorag.graphs.record_kg",
    "build_record_kg": "chronorag.graphs.record_kg",
    "read_records_csv": "chronorag.graphs.record_kg",
    "load_source_kg": "chronorag.integrations.records",
    "KGIRAGContext": "chronorag.workflows.kg_irag.state",
    "build_kg_irag_graph": "chronorag.workflows.kg_irag.graph:build_graph",
    # TempTool-R1 and T-GRAG helpers
    "AgentContext": "chronorag.workflows.temptool.state",
    "TemporalReasoner": "chronorag.workflows.temptool.reasoner",
    "LLMReranker": "chronorag.workflows.temptool.alignment",
    "VanillaChunkRetriever": "chronorag.retrievers.tgrag",
    "answer_tgrag": "chronorag.retrievers.tgrag",
    "evidence_recall": "chronorag.metrics",
    # other graphs
    "build_dense_qa_graph": "chronorag.workflows.dense_qa.graph:build_graph",
    "build_temptool_graph": "chronorag.workflows.temptool.graph:build_graph",
    # evaluation
    "run_eval": "chronorag.evaluation",
    "load_questions": "chronorag.evaluation",
    "register_method": "chronorag.evaluation",
    "Prediction": "chronorag.evaluation",
    "build_report": "chronorag.evaluation.report",
    "MajorityJudge": "chronorag.evaluation.judge",
    "TemporalContextRecall": "chronorag.integrations.ragas_eval",
    "TemporalContextPrecision": "chronorag.integrations.ragas_eval",
    "ragas_scores": "chronorag.integrations.ragas_eval",
    "nodes_to_ragas_dataset": "chronorag.integrations.ragas_eval",
    # errors
    "ChronoRAGError": "chronorag.errors",
    "DataFormatError": "chronorag.errors",
    "IndexFormatError": "chronorag.errors",
    "LLMError": "chronorag.errors",
    "UnknownNameError": "chronorag.errors",
    "MissingExtraError": "chronorag.errors",
    "TimeParseError": "chronorag.errors",
    "IndexBusyError": "chronorag.errors",
    "OutputExistsError": "chronorag.errors",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'chronorag' has no attribute {name!r}")
    mod, _, attr = mod.partition(":")
    value = getattr(importlib.import_module(mod), attr or name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # static type checkers see the real symbols
    from chronorag.errors import (  # noqa: F401
        ChronoRAGError,
        DataFormatError,
        IndexBusyError,
        IndexFormatError,
        LLMError,
        MissingExtraError,
        OutputExistsError,
        TimeParseError,
        UnknownNameError,
    )
    from chronorag.evaluation import Prediction, load_questions, register_method, run_eval  # noqa: F401
    from chronorag.evaluation.judge import MajorityJudge  # noqa: F401
    from chronorag.evaluation.report import build_report  # noqa: F401
    from chronorag.graphs.io import read_events  # noqa: F401
    from chronorag.graphs.proposition_graph import PropositionGraph  # noqa: F401
    from chronorag.graphs.record_kg import (  # noqa: F401
        EventRule,
        RecordKG,
        RecordSpec,
        build_record_kg,
        read_records_csv,
    )
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
    from chronorag.integrations.ragas_eval import (  # noqa: F401
        TemporalContextPrecision,
        TemporalContextRecall,
        nodes_to_ragas_dataset,
        ragas_scores,
    )
    from chronorag.integrations.records import load_source_kg  # noqa: F401
    from chronorag.integrations.temporal_tools import TemporalKGTools, make_langchain_tools  # noqa: F401
    from chronorag.integrations.testing import ScriptedOpenAIServer  # noqa: F401
    from chronorag.integrations.topg_property_graph import export_topg_to_property_graph  # noqa: F401
    from chronorag.metrics import evidence_recall  # noqa: F401
    from chronorag.retrievers.base import TimeFilter  # noqa: F401
    from chronorag.retrievers.dense import DenseEventRetriever  # noqa: F401
    from chronorag.retrievers.event_index import EventIndex, build_event_index  # noqa: F401
    from chronorag.retrievers.star_rag import StarRAGPGRetriever, StarRAGRetriever  # noqa: F401
    from chronorag.retrievers.tgrag import (  # noqa: F401  # noqa: F401
        TGragPGRetriever,
        TGragRetriever,
        VanillaChunkRetriever,
        answer_tgrag,
    )
    from chronorag.retrievers.tgrag_index import build_tgrag_index  # noqa: F401
    from chronorag.retrievers.topg import ToPGRetriever  # noqa: F401
    from chronorag.workflows.dense_qa.graph import build_graph as build_dense_qa_graph  # noqa: F401
    from chronorag.workflows.kg_irag.graph import build_graph as build_kg_irag_graph  # noqa: F401
    from chronorag.workflows.kg_irag.state import KGIRAGContext  # noqa: F401
    from chronorag.workflows.temptool.alignment import LLMReranker  # noqa: F401
    from chronorag.workflows.temptool.graph import build_graph as build_temptool_graph  # noqa: F401
    from chronorag.workflows.temptool.reasoner import TemporalReasoner  # noqa: F401
    from chronorag.workflows.temptool.state import AgentContext  # noqa: F401
    from chronorag.workflows.topg import (  # noqa: F401
        ToPGContext,
        ToPGSettings,
        build_topg_index,
        load_topg_index,
        read_corpus,
    )
    from chronorag.workflows.topg.graph import build_graph as build_topg_graph  # noqa: F401
