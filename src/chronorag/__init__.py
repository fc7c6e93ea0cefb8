"""chronorag: temporal GraphRAG components for LlamaIndex, LangChain and LangGraph.

The curated public API lives here; everything is imported lazily on first use, so
``import chronorag`` stays fast and an optional extra is only needed by what uses it.

>>> from chronorag import DenseEventRetriever, TimeFilter, read_events  # doctest: +SKIP
"""

from __future__ import annotations

import os as _os
import signal as _signal
import sys as _sys

if _os.path.basename(_sys.argv[0] if _sys.argv else "") == "chronorag" \
        and _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    # the console script: a Ctrl-C while the modules import exits 130 at once (cli.main
    # takes over from there); set before anything heavy is imported
    _signal.signal(_signal.SIGINT, lambda *_: (_os.write(2, b"chronorag: interrupted\n"), _os._exit(130)))

import importlib  # noqa: E402
from typing import TYPE_CHECKING, Any

from chronorag import _compat

__version__ = "0.1.0"

_compat.install()  # old import paths keep working for one release, with a DeprecationWarning

# public name -> module that defines it ("module:attr" where the public name is an alias)
_EXPORTS: dict[str, str] = {
    # time model and event store
    "TimeFilter": "chronorag.retrievers.base",
    "parse_time": "chronorag.graphs.time",
    "TemporalEventStore": "chronorag.graphs.store",
    "EventStoreBuilder": "chronorag.graphs.store",
    "read_events": "chronorag.graphs.io",
    # indexes and retrievers
    "EventIndex": "chronorag.graphs.event_index",
    "build_event_index": "chronorag.graphs.event_index",
    "DenseEventRetriever": "chronorag.retrievers.dense",
    "StarRAGRetriever": "chronorag.retrievers.star_rag",
    "StarRAGPGRetriever": "chronorag.retrievers.star_rag",
    "RuleGraph": "chronorag.retrievers.star_rag.rule_graph",
    "build_rule_graph": "chronorag.retrievers.star_rag.rule_graph",
    "TGragRetriever": "chronorag.retrievers.tgrag",
    "TGragPGRetriever": "chronorag.retrievers.tgrag",
    "build_tgrag_index": "chronorag.retrievers.tgrag.index",
    # tools and framework adapters
    "TemporalKGTools": "chronorag.workflows.temptool.tools",
    "make_langchain_tools": "chronorag.workflows.temptool.tools",
    "make_llama_index_tools": "chronorag.workflows.temptool.llama_index_tools",
    "LangChainRetriever": "chronorag.integrations.langchain_adapters",
    "as_langchain_retriever": "chronorag.integrations.langchain_adapters",
    "export_to_property_graph": "chronorag.integrations.property_graph",
    "store_from_property_graph": "chronorag.integrations.property_graph",
    # LLMs
    "LLMConfig": "chronorag.integrations.llm",
    "resolve_llm": "chronorag.integrations.llm",
    "ScriptedOpenAIServer": "chronorag.integrations.testing",
    # ToPG
    "PropositionGraph": "chronorag.workflows.topg.proposition_graph",
    "ToPGRetriever": "chronorag.workflows.topg.retriever",
    "build_topg_index": "chronorag.workflows.topg",
    "load_topg_index": "chronorag.workflows.topg",
    "read_corpus": "chronorag.workflows.topg",
    "ToPGSettings": "chronorag.workflows.topg",
    "ToPGContext": "chronorag.workflows.topg",
    "build_topg_graph": "chronorag.workflows.topg.graph:build_graph",
    "export_topg_to_property_graph": "chronorag.workflows.topg.property_graph",
    # KG-iRAG
    "RecordKG": "chronorag.workflows.kg_irag.record_kg",
    "RecordSpec": "chronorag.workflows.kg_irag.record_kg",
    "EventRule": "chronorag.workflows.kg_irag.record_kg",
    "build_record_kg": "chronorag.workflows.kg_irag.record_kg",
    "read_records_csv": "chronorag.workflows.kg_irag.record_kg",
    "load_source_kg": "chronorag.workflows.kg_irag.sources",
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
    "TemporalContextRecall": "chronorag.evaluation.ragas",
    "TemporalContextPrecision": "chronorag.evaluation.ragas",
    "ragas_scores": "chronorag.evaluation.ragas",
    "nodes_to_ragas_dataset": "chronorag.evaluation.ragas",
    # errors
    "ChronoRAGError": "chronorag.errors",
    "ConfigError": "chronorag.errors",
    "DataFormatError": "chronorag.errors",
    "IndexFormatError": "chronorag.errors",
    "LLMError": "chronorag.errors",
    "LLMEchoError": "chronorag.errors",
    "UnknownNameError": "chronorag.errors",
    "MissingExtraError": "chronorag.errors",
    "TimeParseError": "chronorag.errors",
    "IndexBusyError": "chronorag.errors",
    "OutputExistsError": "chronorag.errors",
    "ArgumentTypeError": "chronorag.errors",
    "MissingFileError": "chronorag.errors",
    "OutOfRangeError": "chronorag.errors",
    "UsageError": "chronorag.errors",
}

__all__ = [
    "AgentContext",
    "ArgumentTypeError",
    "ChronoRAGError",
    "ConfigError",
    "DataFormatError",
    "DenseEventRetriever",
    "EventIndex",
    "EventRule",
    "EventStoreBuilder",
    "IndexBusyError",
    "IndexFormatError",
    "KGIRAGContext",
    "LLMConfig",
    "LLMEchoError",
    "LLMError",
    "LLMReranker",
    "LangChainRetriever",
    "MajorityJudge",
    "MissingExtraError",
    "MissingFileError",
    "OutOfRangeError",
    "OutputExistsError",
    "Prediction",
    "PropositionGraph",
    "RecordKG",
    "RecordSpec",
    "RuleGraph",
    "ScriptedOpenAIServer",
    "StarRAGPGRetriever",
    "StarRAGRetriever",
    "TGragPGRetriever",
    "TGragRetriever",
    "TemporalContextPrecision",
    "TemporalContextRecall",
    "TemporalEventStore",
    "TemporalKGTools",
    "TemporalReasoner",
    "TimeFilter",
    "TimeParseError",
    "ToPGContext",
    "ToPGRetriever",
    "ToPGSettings",
    "UnknownNameError",
    "UsageError",
    "VanillaChunkRetriever",
    "answer_tgrag",
    "as_langchain_retriever",
    "build_dense_qa_graph",
    "build_event_index",
    "build_kg_irag_graph",
    "build_record_kg",
    "build_report",
    "build_rule_graph",
    "build_temptool_graph",
    "build_tgrag_index",
    "build_topg_graph",
    "build_topg_index",
    "evidence_recall",
    "export_to_property_graph",
    "export_topg_to_property_graph",
    "load_questions",
    "load_source_kg",
    "load_topg_index",
    "make_langchain_tools",
    "make_llama_index_tools",
    "nodes_to_ragas_dataset",
    "parse_time",
    "ragas_scores",
    "read_corpus",
    "read_events",
    "read_records_csv",
    "register_method",
    "resolve_llm",
    "run_eval",
    "store_from_property_graph",
    "__version__",
]


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


if TYPE_CHECKING:  # static type checkers see the real symbols (explicit re-exports for mypy --strict)
    from chronorag.errors import (
        ArgumentTypeError as ArgumentTypeError,
    )
    from chronorag.errors import (
        ChronoRAGError as ChronoRAGError,
    )
    from chronorag.errors import (
        ConfigError as ConfigError,
    )
    from chronorag.errors import (
        DataFormatError as DataFormatError,
    )
    from chronorag.errors import (
        IndexBusyError as IndexBusyError,
    )
    from chronorag.errors import (
        IndexFormatError as IndexFormatError,
    )
    from chronorag.errors import (
        LLMEchoError as LLMEchoError,
    )
    from chronorag.errors import (
        LLMError as LLMError,
    )
    from chronorag.errors import (
        MissingExtraError as MissingExtraError,
    )
    from chronorag.errors import (
        MissingFileError as MissingFileError,
    )
    from chronorag.errors import (
        OutOfRangeError as OutOfRangeError,
    )
    from chronorag.errors import (
        OutputExistsError as OutputExistsError,
    )
    from chronorag.errors import (
        TimeParseError as TimeParseError,
    )
    from chronorag.errors import (
        UnknownNameError as UnknownNameError,
    )
    from chronorag.errors import (
        UsageError as UsageError,
    )
    from chronorag.evaluation import (
        Prediction as Prediction,
    )
    from chronorag.evaluation import (
        load_questions as load_questions,
    )
    from chronorag.evaluation import (
        register_method as register_method,
    )
    from chronorag.evaluation import (
        run_eval as run_eval,
    )
    from chronorag.evaluation.judge import (
        MajorityJudge as MajorityJudge,
    )
    from chronorag.evaluation.ragas import (
        TemporalContextPrecision as TemporalContextPrecision,
    )
    from chronorag.evaluation.ragas import (
        TemporalContextRecall as TemporalContextRecall,
    )
    from chronorag.evaluation.ragas import (
        nodes_to_ragas_dataset as nodes_to_ragas_dataset,
    )
    from chronorag.evaluation.ragas import (
        ragas_scores as ragas_scores,
    )
    from chronorag.evaluation.report import (
        build_report as build_report,
    )
    from chronorag.graphs.event_index import (
        EventIndex as EventIndex,
    )
    from chronorag.graphs.event_index import (
        build_event_index as build_event_index,
    )
    from chronorag.graphs.io import (
        read_events as read_events,
    )
    from chronorag.graphs.store import (
        EventStoreBuilder as EventStoreBuilder,
    )
    from chronorag.graphs.store import (
        TemporalEventStore as TemporalEventStore,
    )
    from chronorag.graphs.time import (
        parse_time as parse_time,
    )
    from chronorag.integrations.langchain_adapters import (
        LangChainRetriever as LangChainRetriever,
    )
    from chronorag.integrations.langchain_adapters import (
        as_langchain_retriever as as_langchain_retriever,
    )
    from chronorag.integrations.llm import (
        LLMConfig as LLMConfig,
    )
    from chronorag.integrations.llm import (
        resolve_llm as resolve_llm,
    )
    from chronorag.integrations.property_graph import (
        export_to_property_graph as export_to_property_graph,
    )
    from chronorag.integrations.property_graph import (
        store_from_property_graph as store_from_property_graph,
    )
    from chronorag.integrations.testing import (
        ScriptedOpenAIServer as ScriptedOpenAIServer,
    )
    from chronorag.metrics import (
        evidence_recall as evidence_recall,
    )
    from chronorag.retrievers.base import (
        TimeFilter as TimeFilter,
    )
    from chronorag.retrievers.dense import (
        DenseEventRetriever as DenseEventRetriever,
    )
    from chronorag.retrievers.star_rag import (
        StarRAGPGRetriever as StarRAGPGRetriever,
    )
    from chronorag.retrievers.star_rag import (
        StarRAGRetriever as StarRAGRetriever,
    )
    from chronorag.retrievers.star_rag.rule_graph import (
        RuleGraph as RuleGraph,
    )
    from chronorag.retrievers.star_rag.rule_graph import (
        build_rule_graph as build_rule_graph,
    )
    from chronorag.retrievers.tgrag import (
        TGragPGRetriever as TGragPGRetriever,
    )
    from chronorag.retrievers.tgrag import (
        TGragRetriever as TGragRetriever,
    )
    from chronorag.retrievers.tgrag import (
        VanillaChunkRetriever as VanillaChunkRetriever,
    )
    from chronorag.retrievers.tgrag import (
        answer_tgrag as answer_tgrag,
    )
    from chronorag.retrievers.tgrag.index import (
        build_tgrag_index as build_tgrag_index,
    )
    from chronorag.workflows.dense_qa.graph import (
        build_graph as build_dense_qa_graph,
    )
    from chronorag.workflows.kg_irag.graph import (
        build_graph as build_kg_irag_graph,
    )
    from chronorag.workflows.kg_irag.record_kg import (
        EventRule as EventRule,
    )
    from chronorag.workflows.kg_irag.record_kg import (
        RecordKG as RecordKG,
    )
    from chronorag.workflows.kg_irag.record_kg import (
        RecordSpec as RecordSpec,
    )
    from chronorag.workflows.kg_irag.record_kg import (
        build_record_kg as build_record_kg,
    )
    from chronorag.workflows.kg_irag.record_kg import (
        read_records_csv as read_records_csv,
    )
    from chronorag.workflows.kg_irag.sources import (
        load_source_kg as load_source_kg,
    )
    from chronorag.workflows.kg_irag.state import (
        KGIRAGContext as KGIRAGContext,
    )
    from chronorag.workflows.temptool.alignment import (
        LLMReranker as LLMReranker,
    )
    from chronorag.workflows.temptool.graph import (
        build_graph as build_temptool_graph,
    )
    from chronorag.workflows.temptool.llama_index_tools import (
        make_llama_index_tools as make_llama_index_tools,
    )
    from chronorag.workflows.temptool.reasoner import (
        TemporalReasoner as TemporalReasoner,
    )
    from chronorag.workflows.temptool.state import (
        AgentContext as AgentContext,
    )
    from chronorag.workflows.temptool.tools import (
        TemporalKGTools as TemporalKGTools,
    )
    from chronorag.workflows.temptool.tools import (
        make_langchain_tools as make_langchain_tools,
    )
    from chronorag.workflows.topg import (
        ToPGContext as ToPGContext,
    )
    from chronorag.workflows.topg import (
        ToPGSettings as ToPGSettings,
    )
    from chronorag.workflows.topg import (
        build_topg_index as build_topg_index,
    )
    from chronorag.workflows.topg import (
        load_topg_index as load_topg_index,
    )
    from chronorag.workflows.topg import (
        read_corpus as read_corpus,
    )
    from chronorag.workflows.topg.graph import (
        build_graph as build_topg_graph,
    )
    from chronorag.workflows.topg.property_graph import (
        export_topg_to_property_graph as export_topg_to_property_graph,
    )
    from chronorag.workflows.topg.proposition_graph import (
        PropositionGraph as PropositionGraph,
    )
    from chronorag.workflows.topg.retriever import (
        ToPGRetriever as ToPGRetriever,
    )
