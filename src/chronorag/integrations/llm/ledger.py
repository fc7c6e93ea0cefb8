"""The token ledger and the fallback log: what every LLM call cost, and every time a pipeline fell back."""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

import httpx

from chronorag.errors import ConfigError

__all__ = ["CallRecord", "FallbackLog", "TokenLedger", "fallbacks", "query_scope", "record_fallback"]

_current_query: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "chronorag_query", default=None
)


@dataclass(frozen=True)
class CallRecord:
    """One LLM call as seen on the wire."""

    query_id: str | None
    path: str
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    status: int
    #: False when the server sent no ``usage`` (a stream without a usage chunk, an error)
    metered: bool = True


class TokenLedger:
    """Thread-safe record of LLM calls, aggregated per query.

    Examples
    --------
    >>> ledger = TokenLedger()
    >>> with ledger.query("q1"):
    ...     pass  # LLM calls made here are tagged "q1"
    >>> ledger.summary("q1")["calls"]
    0
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[CallRecord] = []

    @contextlib.contextmanager
    def query(self, query_id: str) -> Iterator[None]:
        """Tag the LLM calls made inside the block with ``query_id`` (see :func:`query_scope`)."""
        with query_scope(query_id):
            yield

    def add(self, record: CallRecord) -> None:
        """Append a record."""
        with self._lock:
            self.records.append(record)

    def summary(self, query_id: str | None = None) -> dict[str, Any]:
        """Totals over all calls, or over one query's calls.

        Returns
        -------
        dict
            ``calls``, ``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``latency_s``
            ``unmetered_calls`` (successful calls whose reply carried no ``usage``, such as a
            stream without a usage chunk: their tokens are not in the totals) and
            ``failed_calls`` (calls the server answered with an HTTP error: no tokens spent).
        """
        with self._lock:
            recs = [r for r in self.records if query_id is None or r.query_id == query_id]
        return self._totals(recs)

    def summary_since(self, start: int) -> dict[str, Any]:
        """:meth:`summary` over the records added after the first ``start`` ones (one evaluated
        question's calls, whatever query id they carry).

        Parameters
        ----------
        start : int
            ``len(ledger.records)`` taken before the calls to count.
        """
        if isinstance(start, bool) or not isinstance(start, int) or start < 0:
            raise ConfigError(f"start must be a record count >= 0, got {start!r}")
        with self._lock:
            recs = self.records[start:]
        return self._totals(recs)

    @staticmethod
    def _totals(recs: list[CallRecord]) -> dict[str, Any]:
        p = sum(r.prompt_tokens for r in recs)
        c = sum(r.completion_tokens for r in recs)
        return {
            "calls": len(recs),
            "prompt_tokens": p,
            "completion_tokens": c,
            "total_tokens": p + c,
            "latency_s": round(sum(r.latency_s for r in recs), 6),
            "unmetered_calls": sum(1 for r in recs if not r.metered and r.status < 400),
            "failed_calls": sum(1 for r in recs if r.status >= 400),
        }

    def per_query(self) -> dict[str, dict[str, Any]]:
        """``summary`` for every query id seen."""
        with self._lock:
            qids = sorted({r.query_id for r in self.records if r.query_id is not None})
        return {q: self.summary(q) for q in qids}

    def to_jsonl(self) -> str:
        """All records, one JSON object per line."""
        with self._lock:
            return "".join(json.dumps(asdict(r)) + "\n" for r in self.records)


def _on_request(request: httpx.Request) -> None:
    request.extensions["chronorag_t0"] = time.perf_counter()
    request.extensions["chronorag_qid"] = _current_query.get()


def _make_response_hook(ledger: TokenLedger) -> Any:
    def _on_response(response: httpx.Response) -> None:
        req = response.request
        path = req.url.path
        if not path.endswith(("/chat/completions", "/completions")):
            return
        ctype = response.headers.get("content-type", "")
        usage: dict[str, Any] = {}
        model = None
        if "application/json" in ctype:
            response.read()
            try:
                body = response.json()
                usage = body.get("usage") or {}
                model = body.get("model")
            except (json.JSONDecodeError, AttributeError):
                pass
        t0 = req.extensions.get("chronorag_t0", time.perf_counter())
        ledger.add(CallRecord(
            query_id=req.extensions.get("chronorag_qid"),
            path=path,
            model=model,
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
            latency_s=time.perf_counter() - t0,
            status=response.status_code,
            metered=bool(usage),
        ))

    return _on_response



class FallbackLog:
    """Thread-safe count of every fallback a pipeline took, per query.

    A fallback is any place where chronorag could not use the LLM's reply as asked
    (unparseable JSON, an empty reply after stripping reasoning, a failed call) and used
    a documented substitute instead. Nothing falls back silently: each substitute is
    recorded here under a short ``kind`` (e.g. ``"reranker.lexical"``) and evaluation
    reports the counts per question and in total.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.records: list[tuple[str | None, str, str]] = []

    def add(self, kind: str, detail: str = "") -> None:
        """Record one fallback of ``kind`` for the current query (see :meth:`TokenLedger.query`)."""
        if not isinstance(kind, str) or not kind:
            raise ConfigError(f"kind must be a non-empty string, got {kind!r}")
        with self._lock:
            self.records.append((_current_query.get(), kind, detail[:500]))

    def counts(self, query_id: str | None = None) -> dict[str, int]:
        """``{kind: count}`` over all records, or over one query's."""
        out: dict[str, int] = {}
        with self._lock:
            for q, k, _ in self.records:
                if query_id is None or q == query_id:
                    out[k] = out.get(k, 0) + 1
        return out

    def last_detail(self, kind: str, query_id: str | None = None) -> str | None:
        """The detail of the latest ``kind`` fallback (of one query, when given), or ``None``."""
        with self._lock:
            return next((d for q, k, d in reversed(self.records)
                         if k == kind and (query_id is None or q == query_id)), None)

    def clear(self) -> None:
        """Forget every record."""
        with self._lock:
            self.records.clear()


#: the process-wide fallback log; eval reads it per question
fallbacks = FallbackLog()


def record_fallback(kind: str, detail: str = "") -> None:
    """Record one fallback in :data:`fallbacks` (tagged with the current query id)."""
    fallbacks.add(kind, detail)


@contextlib.contextmanager
def query_scope(query_id: str) -> Iterator[None]:
    """Tag LLM calls and fallbacks made inside the block with ``query_id``."""
    if not isinstance(query_id, str) or not query_id:
        raise ConfigError(f"query_id must be a non-empty string, got {query_id!r}")
    token = _current_query.set(query_id)
    try:
        yield
    finally:
        _current_query.reset(token)
