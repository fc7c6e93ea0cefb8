"""LangChain adapters: any chronorag (LlamaIndex) retriever as a LangChain ``BaseRetriever``.

:class:`LangChainRetriever` wraps a retriever (``DenseEventRetriever``,
``StarRAGRetriever``, ``TGragRetriever``, ...) so it drops into LangChain chains, agents
(``create_retriever_tool``) and LangGraph nodes. Each LlamaIndex ``NodeWithScore``
becomes a ``Document`` whose ``page_content`` is the node text and whose metadata holds
the node's metadata plus ``score`` and ``node_id``. Async calls stay async.
"""

from __future__ import annotations

import inspect
from typing import Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever as LCBaseRetriever
from pydantic import ConfigDict, Field

from chronorag.errors import ArgumentTypeError

__all__ = ["LangChainRetriever", "as_langchain_retriever", "nodes_to_documents"]


def nodes_to_documents(nodes: list[Any]) -> list[Document]:
    """LlamaIndex ``NodeWithScore`` list -> LangChain ``Document`` list (score in metadata)."""
    docs = []
    for n in nodes:
        node = getattr(n, "node", n)
        meta = dict(getattr(node, "metadata", {}) or {})
        meta["score"] = getattr(n, "score", None)
        meta["node_id"] = getattr(node, "node_id", None)
        docs.append(Document(page_content=node.get_content(), metadata=meta))
    return docs


class LangChainRetriever(LCBaseRetriever):
    """A LangChain retriever over a chronorag / LlamaIndex retriever.

    Parameters
    ----------
    retriever : llama_index.core.base.base_retriever.BaseRetriever
        The retriever to wrap.
    time_filter : TimeFilter or dict, optional
        Passed to chronorag retrievers on every call (see
        :class:`~chronorag.retrievers.base.TimeFilter`).

    Examples
    --------
    >>> lc = LangChainRetriever(retriever=DenseEventRetriever(index))  # doctest: +SKIP
    >>> lc.invoke("Who did the ECB criticize in 2012?")  # doctest: +SKIP
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)
    retriever: Any = Field(description="a LlamaIndex BaseRetriever")
    time_filter: Any = None

    def model_post_init(self, __context: Any) -> None:
        if not callable(getattr(self.retriever, "retrieve", None)):
            raise ArgumentTypeError(f"retriever must be a LlamaIndex retriever, got {type(self.retriever).__name__}")

    def _kwargs(self) -> dict[str, Any]:
        if self.time_filter is not None:
            # the protocol: a retriever whose retrieve() takes time_filter= (every chronorag retriever)
            if "time_filter" not in inspect.signature(self.retriever.retrieve).parameters:
                raise ArgumentTypeError(f"time_filter needs a retriever whose retrieve() takes time_filter= "
                                f"(a chronorag retriever), got {type(self.retriever).__name__}")
            return {"time_filter": self.time_filter}
        return {}

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return nodes_to_documents(self.retriever.retrieve(query, **self._kwargs()))

    async def _aget_relevant_documents(self, query: str, *,
                                       run_manager: AsyncCallbackManagerForRetrieverRun) -> list[Document]:
        return nodes_to_documents(await self.retriever.aretrieve(query, **self._kwargs()))


def as_langchain_retriever(retriever: Any, *, time_filter: Any = None) -> LangChainRetriever:
    """Wrap a LlamaIndex retriever as a LangChain ``BaseRetriever``."""
    return LangChainRetriever(retriever=retriever, time_filter=time_filter)
