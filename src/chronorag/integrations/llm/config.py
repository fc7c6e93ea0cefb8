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

import json
from typing import Any, Literal

import httpx
from pydantic import Field, PrivateAttr, ValidationError, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from chronorag.errors import ConfigError, LLMError
from chronorag.graphs.text import strip_reasoning
from chronorag.integrations.llm.ledger import (
    TokenLedger,
    _make_response_hook,
    _on_request,
)

__all__ = ["LLMConfig", "chat", "clean_reply", "strip_reasoning"]

def _with_string_content(request: httpx.Request) -> httpx.Request:
    """``request`` with each assistant message's ``content: null`` sent as ``""``.

    OpenAI allows a null ``content`` beside ``tool_calls`` and LangChain sends it, but
    llama-cpp-python's server (0.3.x) rejects the whole request (an HTTP 500 listing
    validation errors), so every agent turn after a tool call failed there. ``""`` means the
    same to every OpenAI-compatible server, vLLM included.
    """
    if request.method != "POST" or not request.url.path.endswith("/chat/completions"):
        return request
    try:
        body = json.loads(request.read())
    except (ValueError, httpx.RequestNotRead, UnicodeDecodeError):
        return request
    msgs = body.get("messages") if isinstance(body, dict) else None
    fixed = False
    for m in msgs if isinstance(msgs, list) else []:
        if isinstance(m, dict) and m.get("role") == "assistant" and m.get("content", "") is None:
            m["content"] = ""
            fixed = True
    if not fixed:
        return request
    headers = [(k, v) for k, v in request.headers.raw if k.lower() != b"content-length"]
    return httpx.Request(request.method, request.url, headers=headers, extensions=request.extensions,
                         content=json.dumps(body, ensure_ascii=False).encode("utf-8"))


class _NullContentTransport(httpx.BaseTransport):
    def __init__(self, inner: httpx.BaseTransport) -> None:
        self.inner = inner

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        return self.inner.handle_request(_with_string_content(request))

    def close(self) -> None:
        self.inner.close()


class _AsyncNullContentTransport(httpx.AsyncBaseTransport):
    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self.inner.handle_async_request(_with_string_content(request))

    async def aclose(self) -> None:
        await self.inner.aclose()


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
    structured_output : {"auto", "json_schema", "json_object"}
        How JSON-schema output is requested: OpenAI's ``{"type": "json_schema", ...}``
        (vLLM, OpenAI), llama-cpp-python's ``{"type": "json_object", "schema": ...}``, or
        ``"auto"``: the first, switching to the second for good when the server rejects it.
    """

    model_config = SettingsConfigDict(env_prefix="CHRONORAG_", extra="ignore")

    base_url: str | None = None
    model: str = "chronorag"
    api_key: str = "EMPTY"
    temperature: float = Field(0.0, ge=0.0, le=2.0)
    timeout: float = Field(60.0, gt=0)
    max_retries: int = Field(2, ge=0)
    max_tokens: int | None = Field(None, gt=0)
    structured_output: Literal["auto", "json_schema", "json_object"] = "auto"

    def __init__(self, **data: Any) -> None:
        """As pydantic's, but a bad value is a :class:`~chronorag.errors.ConfigError` naming the
        field and the value (pydantic's report is four lines with a link)."""
        try:
            super().__init__(**data)
        except ValidationError as exc:
            parts = [f"{'.'.join(map(str, e['loc'])) or 'value'}: {str(e['msg']).removeprefix('Value error, ')}"
                     + ("" if "got " in str(e["msg"]) else f" (got {e.get('input')!r})") for e in exc.errors()]
            raise ConfigError("LLMConfig: " + "; ".join(parts)) from None

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, v: str | None) -> str | None:
        if v in (None, ""):
            return None
        if not v.startswith(("http://", "https://")):
            raise ConfigError(f"base_url must be an http(s) URL, got {v!r}")
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
                timeout=self.timeout, transport=_NullContentTransport(httpx.HTTPTransport()),
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
                timeout=self.timeout, transport=_AsyncNullContentTransport(httpx.AsyncHTTPTransport()),
                event_hooks={"request": [_areq], "response": [_aresp]}
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
        kwargs.update(overrides)
        cap = kwargs.pop("max_tokens", self.max_tokens)
        if cap is not None:
            # sent as "max_tokens", as chronorag's other calls send it: ChatOpenAI sends the cap only
            # as "max_completion_tokens", which llama-cpp-python's server and llamafile ignore, so a
            # reply ran on to the end of the context window (seen with Gemma 3 270M, session 32)
            kwargs["extra_body"] = {**(kwargs.get("extra_body") or {}), "max_tokens": int(cap)}
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
        raise ConfigError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise ConfigError(f"message #{i} is not a {{'role', 'content'}} dict: {m!r}")
    client = config.openai_client()
    params: dict[str, Any] = {"temperature": config.temperature}
    if config.max_tokens is not None:
        params["max_tokens"] = config.max_tokens
    params.update(kwargs)
    fmt = params.pop("response_format", None)
    if fmt is not None:
        params["response_format"] = _response_format(config, fmt)
    try:
        try:
            resp = client.chat.completions.create(model=config.model, messages=messages, **params)
        except Exception as exc:
            if fmt is None or not _rejects_json_schema(config, params, exc):
                raise
            config._state()["structured_output"] = "json_object"  # remembered for this config
            params["response_format"] = _response_format(config, fmt)
            resp = client.chat.completions.create(model=config.model, messages=messages, **params)
    except Exception as exc:  # the openai client raises many types; keep the cause
        raise LLMError(f"LLM call to {config.base_url} failed: {exc}") from exc
    try:
        text = resp.choices[0].message.content if resp.choices else None
        finish = resp.choices[0].finish_reason if resp.choices else None
    except (AttributeError, IndexError, TypeError) as exc:  # a non-OpenAI-shaped reply
        raise LLMError(f"LLM at {config.base_url} returned a malformed reply: {resp!r:.300}") from exc
    if text is None:
        raise LLMError(f"LLM at {config.base_url} returned no text: {resp!r:.300}")
    if finish == "length":
        from chronorag.integrations.llm.ledger import record_fallback

        cap = params.get("max_tokens")
        record_fallback("llm.truncated", f"reply cut at max_tokens={cap}: {text[-120:]!r}")
    return text


def _response_format(config: LLMConfig, fmt: dict[str, Any]) -> dict[str, Any]:
    """``fmt`` (OpenAI's json_schema form) in the dialect this endpoint speaks."""
    mode = config._state().get("structured_output", config.structured_output)
    if mode != "json_object" or fmt.get("type") != "json_schema":
        return fmt
    schema = (fmt.get("json_schema") or {}).get("schema")
    return {"type": "json_object", "schema": schema} if schema is not None else {"type": "json_object"}


def _rejects_json_schema(config: LLMConfig, params: dict[str, Any], exc: Exception) -> bool:
    """True when ``exc`` is the server refusing OpenAI's json_schema response_format (auto mode)."""
    if config._state().get("structured_output", config.structured_output) != "auto":
        return False
    if (params.get("response_format") or {}).get("type") != "json_schema":
        return False
    status = getattr(exc, "status_code", None)
    text = str(exc).lower()
    if status in (400, 422):
        return "response_format" in text or "json_object" in text or "json_schema" in text
    # llama-cpp-python's server (0.3.x) turns its own 422 validation error into a 500 whose
    # message still names the field: accept a 500 only when it says so
    return status == 500 and "response_format" in text and "json_object" in text


#: how OpenAI, vLLM and llama.cpp servers word a prompt longer than the model's window
_OVERFLOW_WORDING = ("context length", "context_length_exceeded", "context size", "context window",
                     "exceeds the available context")


def is_context_overflow(exc: BaseException) -> bool:
    """True when ``exc`` (any error from an LLM call) says the prompt exceeded the model's
    context window, in OpenAI's, vLLM's or llama.cpp's wording.

    Examples
    --------
    >>> is_context_overflow(RuntimeError("This model's maximum context length is 4096 tokens."))
    True
    >>> is_context_overflow(RuntimeError("connection refused"))
    False
    """
    text = str(exc).lower()
    return any(w in text for w in _OVERFLOW_WORDING)


# ---------------------------------------------------------------------------
# One adapter for every LLM object a user may hand chronorag
# ---------------------------------------------------------------------------

_ENTITY_RE = None


def clean_reply(text: str) -> str:
    """:func:`strip_reasoning`, then HTML entities decoded (``&#39;`` -> ``'``).

    Some servers' chat templates HTML-escape the prompt (llama-cpp-python's
    ``chatml-function-calling`` does), and small models copy the entities into the reply.

    Examples
    --------
    >>> clean_reply("<think>x</think> Obama&#39;s visit")
    "Obama's visit"
    """
    import html
    import re

    global _ENTITY_RE
    out = strip_reasoning(text)
    if _ENTITY_RE is None:
        _ENTITY_RE = re.compile(r"&(?:#\d{1,6}|#x[0-9a-fA-F]{1,6}|amp|lt|gt|quot|apos);")
    return html.unescape(out) if _ENTITY_RE.search(out) else out


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
    raise ConfigError(f"no JSON value in reply: {text[:200]!r}")
