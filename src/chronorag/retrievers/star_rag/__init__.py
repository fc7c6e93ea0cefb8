"""STAR-RAG (paper 000): an MDL-selected rule graph over a temporal KG and seeded PPR.

- :mod:`.rule_graph`: Apriori entity labels, rule nodes, MDL-selected temporal edges, PPR;
- :mod:`.time_scoring`: the question's time window, ordinal and anchor event;
- :mod:`.retriever`: :class:`StarRAGRetriever` and the property-graph sub-retriever;
- :mod:`.answer`: the LLM reader (ranked answers over retrieved events).
"""

from chronorag.retrievers.star_rag.answer import (
    ANSWER_PROMPT,
    answer_with_llm,
    build_answer_messages,
    format_events,
    ground_answers,
    parse_ranked_answers,
    screen_answers,
)
from chronorag.retrievers.star_rag.retriever import StarRAGPGRetriever, StarRAGRetriever
from chronorag.retrievers.star_rag.rule_graph import RuleGraph, build_rule_graph
from chronorag.retrievers.star_rag.time_scoring import (
    PERSONALIZATIONS,
    TIME_MODES,
    TimeIntent,
    time_intent,
)

__all__ = [
    "ANSWER_PROMPT",
    "PERSONALIZATIONS",
    "TIME_MODES",
    "RuleGraph",
    "StarRAGPGRetriever",
    "StarRAGRetriever",
    "TimeIntent",
    "answer_with_llm",
    "build_answer_messages",
    "build_rule_graph",
    "format_events",
    "ground_answers",
    "screen_answers",
    "parse_ranked_answers",
    "time_intent",
]
