"""One LLM layer for any OpenAI-compatible endpoint (vLLM in production, llama.cpp on a laptop).

- :mod:`.config`: :class:`LLMConfig` (``CHRONORAG_*`` environment) and the clients it builds;
- :mod:`.ledger`: the per-query token/latency ledger and the fallback log;
- :mod:`.chat`: :class:`ChatLLM` and :func:`resolve_llm` over any LLM object.
"""

from chronorag.integrations.llm.chat import (
    ChatLLM,
    LLMLike,
    raise_if_echo,
    repeats_prompt,
    resolve_llm,
)
from chronorag.integrations.llm.config import (
    LLMConfig,
    chat,
    clean_reply,
    is_context_overflow,
    strip_reasoning,
)
from chronorag.integrations.llm.ledger import (
    CallRecord,
    FallbackLog,
    TokenLedger,
    fallbacks,
    query_scope,
    record_fallback,
)

__all__ = [
    "CallRecord",
    "ChatLLM",
    "LLMLike",
    "FallbackLog",
    "LLMConfig",
    "TokenLedger",
    "chat",
    "clean_reply",
    "fallbacks",
    "is_context_overflow",
    "query_scope",
    "record_fallback",
    "raise_if_echo",
    "repeats_prompt",
    "resolve_llm",
    "strip_reasoning",
]
