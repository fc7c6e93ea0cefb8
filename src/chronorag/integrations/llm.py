"""One configuration for any OpenAI-compatible LLM endpoint (vLLM in production).

:class:`LLMConfig` reads ``CHRONORAG_BASE_URL``, ``CHRONORAG_MODEL``,
``CHRONORAG_API_KEY``, ``CHRONORAG_TEMPERATURE``, ``CHRONORAG_TIMEOUT``,
``CHRONORAG_MAX_RETRIES`` and ``CHRONORAG_MAX_TOKENS`` from the environment (or takes
them as arguments) and builds:

- a LangChain ``ChatOpenAI`` (:meth:`LLMConfig.langchain_chat`),
- a LlamaIndex ``OpenAILike`` (:meth:`LLMConfig.llama_index_llm`),
- a plain ``openai.OpenAI`` client (:meth:`LLMConfig.openai_client`).

All three share one ``httpx`` client whose hooks feed a :class:`TokenLedger`: every
chat/completion call's prompt and completion tokens (as the server reports them in
``usage``) and latency, tagged with the query being answered. Pipelines wrap each
question in ``with ledger.query(qid):`` and read ``ledger.summary(qid)``.

No endpoint configured (``base_url`` unset) means every pipeline runs its
documented no-LLM mode; :meth:`LLMConfig.require` raises :class:`~chronorag.errors.LLMError`
for code that cannot.
"""

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
from pydantic import Field, PrivateAttr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from chronorag.errors import LLMError

__all__ = ["CallRecord", "LLMConfig", "TokenLedger", "chat"]

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
        """Tag the LLM calls made inside the block with ``query_id``."""
        if not isinstance(query_id, str) or not query_id:
            raise ValueError(f"query_id must be a non-empty string, got {query_id!r}")
        token = _current_query.set(query_id)
        try:
            yield
        finally:
            _current_query.reset(token)

    def add(self, record: CallRecord) -> None:
        """Append a record."""
        with self._lock:
            self.records.append(record)

    def summary(self, query_id: str | None = None) -> dict[str, Any]:
        """Totals over all calls, or over one query's calls.

        Returns
        -------
        dict
            ``calls``, ``prompt_tokens``, ``completion_tokens``, ``total_tokens``, ``latency_s``.
        """
        with self._lock:
            recs = [r for r in self.records if query_id is None or r.query_id == query_id]
        p = sum(r.prompt_tokens for r in recs)
        c = sum(r.completion_tokens for r in recs)
        return {
            "calls": len(recs),
            "prompt_tokens": p,
            "completion_tokens": c,
            "total_tokens": p + c,
            "latency_s": round(sum(r.latency_s for r in recs), 6),
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
        ))

    return _on_response


class LLMConfig(BaseSettings):
    """Settings of an OpenAI-compatible chat endpoint (env prefix ``CHRONORAG_``).

    Parameters
    ----------
    base_url : str, optional
        e.g. ``"http://localhost:8000/v1"``; unset means no-LLM mode.
    model : str
        The served model name (the vLLM recipe serves it as ``"chronorag"``).
    api_key : str
        Bearer token (vLLM accepts anything unless started with ``--api-key``).
    temperature : float
        Sampling temperature (0 = greedy, reproducible).
    timeout : float
        Seconds per request.
    max_retries : int
        Retries on connection errors and 5xx.
    max_tokens : int, optional
        Completion cap per call.
    """

    model_config = SettingsConfigDict(env_prefix="CHRONORAG_", extra="ignore")

    base_url: str | None = None
    model: str = "chronorag"
    api_key: str = "EMPTY"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)
    max_tokens: int | None = Field(None, gt=0)

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        if v in (None, ""):
            return None
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL, got {v!r}")
        return v.rstrip("/")

    @property
    def is_configured(self) -> bool:
        """True when an endpoint URL is set."""
        return self.base_url is not None

    def require(self) -> str:
        """The base URL, or :class:`LLMError` explaining how to set one."""
        if self.base_url is None:
            raise LLMError(
                "no LLM endpoint configured: pass --llm-url or set CHRONORAG_BASE_URL "
                "(e.g. http://localhost:8000/v1 for vLLM)"
            )
        return self.base_url

    # one ledger and one pair of httpx clients per config object
    _clients: dict[str, Any] = PrivateAttr(default_factory=dict)

    def _state(self) -> dict[str, Any]:
        if "ledger" not in self._clients:
            self._clients["ledger"] = TokenLedger()
        return self._clients

    @property
    def ledger(self) -> TokenLedger:
        """The token ledger fed by every client this config builds."""
        return self._state()["ledger"]

    def http_client(self) -> httpx.Client:
        """The shared sync ``httpx.Client`` with the accounting hooks."""
        st = self._state()
        if "http" not in st:
            st["http"] = httpx.Client(
                timeout=self.timeout,
                event_hooks={"request": [_on_request], "response": [_make_response_hook(self.ledger)]},
            )
        return st["http"]

    def async_http_client(self) -> httpx.AsyncClient:
        """The shared ``httpx.AsyncClient`` with the accounting hooks."""
        st = self._state()
        if "ahttp" not in st:
            hook = _make_response_hook(self.ledger)

            async def _areq(request: httpx.Request) -> None:
                _on_request(request)

            async def _aresp(response: httpx.Response) -> None:
                if "application/json" in response.headers.get("content-type", ""):
                    await response.aread()
                hook(response)

            st["ahttp"] = httpx.AsyncClient(
                timeout=self.timeout, event_hooks={"request": [_areq], "response": [_aresp]}
            )
        return st["ahttp"]

    def openai_client(self) -> Any:
        """A plain ``openai.OpenAI`` client for this endpoint."""
        from openai import OpenAI

        return OpenAI(base_url=self.require(), api_key=self.api_key, timeout=self.timeout,
                      max_retries=self.max_retries, http_client=self.http_client())

    def langchain_chat(self, **overrides: Any) -> Any:
        """A LangChain ``ChatOpenAI`` for this endpoint (tool calling supported)."""
        from langchain_openai import ChatOpenAI

        kwargs: dict[str, Any] = dict(
            base_url=self.require(), model=self.model, api_key=self.api_key,
            temperature=self.temperature, timeout=self.timeout, max_retries=self.max_retries,
            http_client=self.http_client(), http_async_client=self.async_http_client(),
        )
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        kwargs.update(overrides)
        return ChatOpenAI(**kwargs)

    def llama_index_llm(self, **overrides: Any) -> Any:
        """A LlamaIndex ``OpenAILike`` chat LLM for this endpoint."""
        from llama_index.llms.openai_like import OpenAILike

        kwargs: dict[str, Any] = dict(
            api_base=self.require(), model=self.model, api_key=self.api_key,
            temperature=self.temperature, timeout=self.timeout, max_retries=self.max_retries,
            is_chat_model=True, is_function_calling_model=True, context_window=32768,
            http_client=self.http_client(), async_http_client=self.async_http_client(),
        )
        if self.max_tokens is not None:
            kwargs["max_tokens"] = self.max_tokens
        kwargs.update(overrides)
        return OpenAILike(**kwargs)


def chat(config: LLMConfig, messages: list[dict[str, Any]], **kwargs: Any) -> str:
    """Send chat messages to the endpoint and return the reply text.

    Parameters
    ----------
    config : LLMConfig
        A configured endpoint.
    messages : list of dict
        OpenAI-style ``{"role": ..., "content": ...}`` messages.
    **kwargs
        Extra request fields (``max_tokens``, ``stop`` ...).

    Raises
    ------
    LLMError
        When no endpoint is configured, the call fails, or the reply has no text.
    """
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"message #{i} is not a {{'role', 'content'}} dict: {m!r}")
    client = config.openai_client()
    params: dict[str, Any] = {"temperature": config.temperature}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    params.update(kwargs)
    try:
        resp = client.chat.completions.create(model=config.model, messages=messages, **params)
    except Exception as exc:  # the openai client raises many types; keep the cause
        raise LLMError(f"LLM call to {config.base_url} failed: {exc}") from exc
    text = resp.choices[0].message.content if resp.choices else None
    if text is None:
        raise LLMError(f"LLM at {config.base_url} returned no text: {resp!r}")
    return text
