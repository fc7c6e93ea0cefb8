"""T-GRAG (paper 003): a time-sliced KG, temporal query decomposition, a three-layer retriever.

- :mod:`.timeslice`: period slices of the KG (entities never merge across periods);
- :mod:`.index`: building and loading a T-GRAG index (extraction, storage, incremental periods);
- :mod:`.decomposition`: one sub-question per period, by rules or an LLM;
- :mod:`.retriever`: :class:`TGragRetriever` (R_time, R_node, R_knowledge, source texts),
  the property-graph sub-retriever and the vanilla chunk baseline;
- :mod:`.answer`: generation (Eq. 8) with or without an LLM.
"""

from chronorag.retrievers.tgrag.answer import SUBANSWER_PROMPT, SYNTHESIS_PROMPT, answer_tgrag
from chronorag.retrievers.tgrag.decomposition import (
    DECOMPOSE_PROMPT,
    SubQuestion,
    decompose_rule_based,
    decompose_with_llm,
    parse_decomposition,
)
from chronorag.retrievers.tgrag.index import TGragIndex, build_tgrag_index
from chronorag.retrievers.tgrag.retriever import (
    EXCLUDED_LLM_METADATA,
    TGragPGRetriever,
    TGragRetriever,
    VanillaChunkRetriever,
    count_tokens,
    periods_from_filter,
)

__all__ = [
    "DECOMPOSE_PROMPT",
    "EXCLUDED_LLM_METADATA",
    "SUBANSWER_PROMPT",
    "SYNTHESIS_PROMPT",
    "SubQuestion",
    "TGragIndex",
    "TGragPGRetriever",
    "TGragRetriever",
    "VanillaChunkRetriever",
    "answer_tgrag",
    "build_tgrag_index",
    "count_tokens",
    "decompose_rule_based",
    "decompose_with_llm",
    "parse_decomposition",
    "periods_from_filter",
]
