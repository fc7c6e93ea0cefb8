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

__all__ = [
    "CallRecord", "ChatLLM", "FallbackLog", "LLMConfig", "TokenLedger", "chat", "fallbacks",
    "query_scope", "record_fallback", "resolve_llm", "strip_reasoning",
]

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
    try:
        text = resp.choices[0].message.content if resp.choices else None
    except (AttributeError, IndexError, TypeError) as exc:  # a non-OpenAI-shaped reply
        raise LLMError(f"LLM at {config.base_url} returned a malformed reply: {resp!r:.300}") from exc
    if text is None:
        raise LLMError(f"LLM at {config.base_url} returned no text: {resp!r}")
    return text


# ---------------------------------------------------------------------------
# One adapter for every LLM object a user may hand chronorag
# ---------------------------------------------------------------------------

_THINK_RE = None


def strip_reasoning(text: str) -> str:
    """Remove reasoning blocks (``<think>...</think>``, ``<thinking>...</thinking>``).

    Reasoning models served without a reasoning parser put their chain of thought in
    the reply text. A block left open (the budget ran out mid-thought) is removed to the
    end; a stray closing tag (the server stripped the opening one) drops what precedes it.

    Examples
    --------
    >>> strip_reasoning("<think>\\nhmm\\n</think>\\n\\n1. Romania")
    '1. Romania'
    """
    import re

    global _THINK_RE
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if _THINK_RE is None:
        _THINK_RE = re.compile(r"<(think|thinking|reasoning)>.*?(</\1>|\Z)", re.S | re.I)
    out = _THINK_RE.sub("", text)
    m = re.search(r"</(think|thinking|reasoning)>", out, re.I)
    if m:
        out = out[m.end():]
    return out.strip()


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
            raise ValueError(f"kind must be a non-empty string, got {kind!r}")
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
        raise ValueError(f"query_id must be a non-empty string, got {query_id!r}")
    token = _current_query.set(query_id)
    try:
        yield
    finally:
        _current_query.reset(token)


def _json_from_text(text: str) -> Any:
    """Parse the first JSON object or array in ``text`` (code fences allowed)."""
    import re

    s = text.strip()
    m = re.search(r"```(?:json)?\s*(.*?)```", s, re.S)
    if m:
        s = m.group(1).strip()
    try:
        return json.loads(s)
    except (json.JSONDecodeError, RecursionError):
        pass
    dec = json.JSONDecoder()
    for i, ch in enumerate(s):
        if ch in "{[":
            try:
                return dec.raw_decode(s[i:])[0]
            except (json.JSONDecodeError, RecursionError):
                continue
    raise ValueError(f"no JSON value in reply: {text[:200]!r}")


class ChatLLM:
    """A uniform chat interface over the LLM objects chronorag accepts.

    Build it with :func:`resolve_llm`. Every reply is returned with reasoning blocks
    stripped; :meth:`complete_json` asks for structured output (a JSON schema sent as
    ``response_format``, which vLLM's OpenAI server enforces), parses it, retries once
    on a malformed reply and then raises :class:`~chronorag.errors.LLMError`, so the
    caller records its fallback.

    Parameters
    ----------
    backend : LLMConfig, LlamaIndex ``LLM`` or LangChain ``BaseChatModel``
        The object to call.
    """

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        if isinstance(backend, LLMConfig):
            backend.require()
            self.kind = "config"
        elif _is_langchain_chat(backend):
            self.kind = "langchain"
        elif _is_llama_index_llm(backend):
            self.kind = "llama_index"
        else:
            raise LLMError(_unknown_llm_message(backend))
        self.ledger = backend.ledger if isinstance(backend, LLMConfig) else TokenLedger()

    def __repr__(self) -> str:
        return f"ChatLLM(kind={self.kind!r}, backend={type(self.backend).__name__})"

    @property
    def name(self) -> str:
        """A short description for logs and eval reports."""
        b = self.backend
        model = getattr(b, "model", None) or getattr(b, "model_name", None) or type(b).__name__
        return f"{self.kind}:{model}"

    def langchain(self) -> Any:
        """A LangChain chat model for this LLM (for tool binding and token streaming)."""
        if self.kind == "config":
            return self.backend.langchain_chat()
        if self.kind == "langchain":
            return self.backend
        from langchain_core.language_models.chat_models import BaseChatModel
        from langchain_core.messages import AIMessage
        from langchain_core.outputs import ChatGeneration, ChatResult

        outer = self

        class _LlamaIndexChat(BaseChatModel):
            @property
            def _llm_type(self) -> str:
                return "chronorag-llama-index"

            def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                          **kwargs: Any) -> ChatResult:
                msgs = [{"role": _lc_role(m), "content": str(m.content)} for m in messages]
                text = outer.complete(msgs, stop=stop, strip=False)
                return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

        return _LlamaIndexChat()

    def complete(self, messages: list[dict[str, Any]], *, max_tokens: int | None = None,
                 stop: list[str] | None = None, response_format: dict[str, Any] | None = None,
                 strip: bool = True) -> str:
        """Send chat messages, return the reply text with reasoning stripped.

        Parameters
        ----------
        messages : list of dict
            ``{"role", "content"}`` messages.
        max_tokens : int, optional
            Completion cap for this call.
        stop : list of str, optional
            Stop sequences.
        response_format : dict, optional
            An OpenAI ``response_format`` (``{"type": "json_schema", ...}``); passed to
            OpenAI-compatible backends, ignored (the prompt still asks for JSON) by others.
        strip : bool
            Remove ``<think>`` blocks (default).

        Raises
        ------
        LLMError
            The call failed or returned no text.
        """
        _check_messages(messages)
        extra: dict[str, Any] = {}
        if max_tokens is not None:
            extra["max_tokens"] = int(max_tokens)
        if stop:
            extra["stop"] = list(stop)
        if self.kind == "config":
            if response_format is not None:
                extra["response_format"] = response_format
            text = chat(self.backend, messages, **extra)
        elif self.kind == "langchain":
            from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

            conv = {"system": SystemMessage, "user": HumanMessage, "assistant": AIMessage}
            lc_msgs = [conv.get(m["role"], HumanMessage)(content=str(m.get("content") or ""))
                       for m in messages]
            model = self.backend
            if response_format is not None and _is_openai_langchain(model):
                extra["response_format"] = response_format
            try:
                reply = model.invoke(lc_msgs, **extra) if extra else model.invoke(lc_msgs)
            except Exception as exc:
                raise LLMError(f"LLM call through {type(model).__name__} failed: {exc}") from exc
            usage = getattr(reply, "usage_metadata", None) or {}
            self._account(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0))
            text = reply.content if isinstance(reply.content, str) else _join_parts(reply.content)
        else:
            from llama_index.core.llms import ChatMessage

            li_msgs = [ChatMessage(role=m["role"], content=str(m.get("content") or "")) for m in messages]
            kw: dict[str, Any] = {}
            if max_tokens is not None:
                kw["max_tokens"] = int(max_tokens)
            if response_format is not None and type(self.backend).__name__ in ("OpenAILike", "OpenAI"):
                kw["response_format"] = response_format
            try:
                resp = self.backend.chat(li_msgs, **kw)
            except TypeError:  # backends that take no per-call options
                resp = self.backend.chat(li_msgs)
            except Exception as exc:
                raise LLMError(f"LLM call through {type(self.backend).__name__} failed: {exc}") from exc
            raw = getattr(resp, "raw", None)
            usage = (raw.get("usage") if isinstance(raw, dict) else getattr(raw, "usage", None)) or {}
            if not isinstance(usage, dict):
                usage = {k: getattr(usage, k, 0) for k in ("prompt_tokens", "completion_tokens")}
            self._account(int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
            text = resp.message.content
        if text is None:
            raise LLMError(f"{self.name} returned no text")
        return strip_reasoning(text) if strip else text

    def complete_json(self, messages: list[dict[str, Any]], *, schema: dict[str, Any],
                      name: str = "reply", max_tokens: int | None = None,
                      retries: int = 1) -> Any:
        """Ask for a JSON reply matching ``schema``; parse it, retrying on a bad reply.

        Returns
        -------
        Any
            The parsed JSON value.

        Raises
        ------
        LLMError
            Still no parseable JSON after ``retries`` retries (the caller records its fallback).
        """
        if not isinstance(schema, dict):
            raise TypeError(f"schema must be a JSON-schema dict, got {type(schema).__name__}")
        fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        last = ""
        msgs = list(messages)
        for attempt in range(retries + 1):
            text = self.complete(msgs, max_tokens=max_tokens, response_format=fmt)
            try:
                return _json_from_text(text)
            except ValueError:
                last = text
                if attempt < retries:
                    msgs = [*messages, {"role": "assistant", "content": text[:2000]},
                            {"role": "user", "content": "That reply was not valid JSON. "
                             "Reply again with only the JSON value."}]
        raise LLMError(f"{self.name} gave no valid JSON after {retries + 1} tries: {last[:200]!r}")

    def _account(self, prompt: int, completion: int) -> None:
        self.ledger.add(CallRecord(query_id=_current_query.get(), path="adapter", model=self.name,
                                   prompt_tokens=prompt, completion_tokens=completion,
                                   latency_s=0.0, status=200))


def _join_parts(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _lc_role(message: Any) -> str:
    t = getattr(message, "type", "human")
    return {"human": "user", "ai": "assistant", "system": "system"}.get(t, "user")


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise ValueError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise ValueError(f"message #{i} is not a {{'role', 'content'}} dict: {m!r}")


def _is_langchain_chat(obj: Any) -> bool:
    try:
        from langchain_core.language_models import BaseLanguageModel
    except ImportError:  # pragma: no cover - langchain-core is a dependency
        return False
    return isinstance(obj, BaseLanguageModel)


def _is_openai_langchain(obj: Any) -> bool:
    return type(obj).__name__ in ("ChatOpenAI", "AzureChatOpenAI")


def _is_llama_index_llm(obj: Any) -> bool:
    try:
        from llama_index.core.base.llms.base import BaseLLM
    except ImportError:  # pragma: no cover - llama-index-core is a dependency
        return False
    return isinstance(obj, BaseLLM)


def _unknown_llm_message(obj: Any) -> str:
    return (f"llm must be a LlamaIndex LLM, a LangChain chat model, chronorag's LLMConfig "
            f"or None, got {type(obj).__module__}.{type(obj).__name__}; wrap an endpoint URL "
            f"as LLMConfig(base_url=...)")


def _settings_llm() -> Any:
    """LlamaIndex's ``Settings.llm`` when the user set one (never the lazy OpenAI default)."""
    try:
        from llama_index.core import Settings
    except ImportError:  # pragma: no cover
        return None
    return getattr(Settings, "_llm", None)


def resolve_llm(llm: Any = None, *, required: bool = False, use_env: bool = True) -> ChatLLM | None:
    """Turn whatever LLM the user passed into a :class:`ChatLLM`, or ``None`` for no-LLM mode.

    Accepted: a :class:`ChatLLM`; chronorag's :class:`LLMConfig` (configured); a LlamaIndex
    ``LLM`` (``OpenAILike``, ``Ollama``, ...); a LangChain chat model (``ChatOpenAI``, ...).
    With ``llm=None`` it looks, in order, at LlamaIndex ``Settings.llm`` (when the user set
    one) and at the ``CHRONORAG_*`` environment (when ``use_env`` and ``CHRONORAG_BASE_URL``
    is set); when neither is there the result is ``None`` and the caller runs its documented
    no-LLM mode.

    Parameters
    ----------
    llm : object, optional
        The LLM object.
    required : bool
        Raise instead of returning ``None``.
    use_env : bool
        Fall back to :class:`LLMConfig` from the environment.

    Raises
    ------
    LLMError
        An object of any other type (never a silent switch to no-LLM mode), or no LLM
        while ``required``.

    Notes
    -----
    ``LLMConfig(base_url=None)`` is the explicit way to ask for no-LLM mode: it returns
    ``None`` without looking at ``Settings.llm`` or the environment.
    """
    if isinstance(llm, ChatLLM):
        return llm
    if llm is None:
        found = _settings_llm()
        if found is not None and type(found).__name__ != "MockLLM":
            return ChatLLM(found)
        if use_env:
            cfg = LLMConfig()
            if cfg.is_configured:
                return ChatLLM(cfg)
        if required:
            LLMConfig().require()
        return None
    if isinstance(llm, LLMConfig) and not llm.is_configured:
        # an explicit config without an endpoint is the documented way to ask for no-LLM mode
        if required:
            llm.require()
        return None
    if isinstance(llm, str):
        raise LLMError(f"llm must be an LLM object, got the string {llm!r}; for an endpoint URL "
                       f"pass LLMConfig(base_url={llm!r})")
    return ChatLLM(llm)
