"""One chat interface over any LLM object: LlamaIndex ``LLM``, LangChain chat model, ``LLMConfig``.

:func:`resolve_llm` accepts any of them (or ``Settings.llm``, or the ``CHRONORAG_*`` environment) and
returns a :class:`ChatLLM`; an unknown object is an error, never a silent switch to no-LLM mode.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any, Literal, TypeAlias, Union, overload

from chronorag.errors import ArgumentTypeError, ConfigError, LLMEchoError, LLMError
from chronorag.integrations.llm.config import LLMConfig, _json_from_text, chat, clean_reply
from chronorag.integrations.llm.ledger import (
    CallRecord,
    TokenLedger,
    _current_query,
)

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel
    from llama_index.core.llms import LLM

__all__ = ["ChatLLM", "LLMLike", "raise_if_echo", "repeats_prompt", "repeats_template", "resolve_llm"]






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
                 strip: bool = True, template: str | tuple[str, ...] | None = None) -> str:
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
            Remove ``<think>`` blocks and decode HTML entities (default; see
            :func:`~chronorag.integrations.llm.config.clean_reply`).
        template : str or tuple of str, optional
            The ``str.format`` template the last user message was made from (or the method's
            templates): a reply that repeats one of their literal lines (see
            :func:`repeats_template`) is refused like a reply that repeats the prompt.

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
        raise_if_echo(text, messages, name=self.name, template=template)
        return clean_reply(text) if strip else text

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
            raise ArgumentTypeError(f"schema must be a JSON-schema dict, got {type(schema).__name__}")
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


#: only a last user turn of at least this many characters (whitespace collapsed) is checked:
#: a templated prompt; restating a short question before answering it is fine
ECHO_MIN_PROMPT = 200
#: a reply "repeats the prompt" when it opens with this many characters of it: the opening
#: instructions, which no answer repeats (a base model's copy drifts from the prompt soon after)
ECHO_CHARS = 80


def repeats_prompt(text: str, messages: list[dict[str, Any]]) -> bool:
    """True when ``text`` opens by copying the first :data:`ECHO_CHARS` characters of the last
    user message (one of at least :data:`ECHO_MIN_PROMPT`): what a base model, which continues
    text rather than answering, replies to a chat prompt it cannot read as a turn.

    Parameters
    ----------
    text : str
        The model's reply.
    messages : list of dict
        The messages sent.
    """
    last = next((m.get("content") for m in reversed(messages)
                 if isinstance(m, dict) and m.get("role") == "user"), None)
    if not isinstance(last, str) or not isinstance(text, str):
        return False
    prompt = " ".join(last.split())
    if len(prompt) < ECHO_MIN_PROMPT:
        return False
    return " ".join(text.split())[:ECHO_CHARS] == prompt[:ECHO_CHARS]


def raise_if_echo(text: str, messages: list[dict[str, Any]], *, name: str,
                  template: str | tuple[str, ...] | None = None) -> None:
    """Raise :class:`~chronorag.errors.LLMEchoError` (counted as ``llm.echo``) when ``text``
    repeats the prompt (:func:`repeats_prompt`) or one of ``template``'s own lines
    (:func:`repeats_template`); ``name`` names the LLM in the message."""
    copied = "the prompt" if repeats_prompt(text, messages) else None
    if copied is None and template is not None:
        frag = next((f for t in ((template,) if isinstance(template, str) else template)
                     if (f := repeats_template(text, t))), None)
        copied = f"the prompt's own wording ({frag[:60]!r})" if frag else None
    if copied is not None:
        from chronorag.integrations.llm.ledger import record_fallback

        record_fallback("llm.echo", f"the reply repeats {copied}: {text[:120]!r}")
        raise LLMEchoError(f"{name} repeated {copied} instead of answering. A base (pretrained, "
                           f"not instruction-tuned) model does this: serve an instruction-tuned (chat) model")


#: literal lines of a prompt template this long or longer are its "own wording"
TEMPLATE_LINE_CHARS = 24


def repeats_template(text: str, template: str) -> str | None:
    """The first literal line of ``template`` (text outside its ``{fields}``, whitespace
    collapsed, at least :data:`TEMPLATE_LINE_CHARS` characters) that ``text`` contains, or
    ``None``. An answer never restates the prompt's instructions ("Answer briefly; say ...");
    a base model that writes the next prompt-like document does.

    Parameters
    ----------
    text : str
        The model's reply.
    template : str
        The ``str.format`` template of the prompt.
    """
    if not isinstance(text, str) or not isinstance(template, str):
        return None
    reply = " ".join(text.split())
    return next((frag for frag in _template_lines(template) if frag in reply), None)


@functools.lru_cache(maxsize=256)
def _template_lines(template: str) -> tuple[str, ...]:
    """The literal lines of ``template`` long enough to count as an echo (parsed once per template)."""
    import string

    lines = (" ".join(line.split()) for literal, *_ in string.Formatter().parse(template)
             for line in literal.split("\n"))
    return tuple(frag for frag in lines if len(frag) >= TEMPLATE_LINE_CHARS)


def _join_parts(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    return str(content)


def _lc_role(message: Any) -> str:
    t = getattr(message, "type", "human")
    return {"human": "user", "ai": "assistant", "system": "system"}.get(t, "user")


def _check_messages(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise ConfigError("messages must be a non-empty list of {'role', 'content'} dicts")
    for i, m in enumerate(messages):
        if not isinstance(m, dict) or "role" not in m:
            raise ConfigError(f"message #{i} is not a {{'role', 'content'}} dict: {m!r}")


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
    core = sys.modules.get("llama_index.core")
    if core is None:  # not imported, so nobody set Settings.llm: skip the seconds-long import
        return None
    return getattr(core.Settings, "_llm", None)


@overload
def resolve_llm(llm: Any = ..., *, required: Literal[True], use_env: bool = ...) -> ChatLLM: ...


@overload
def resolve_llm(llm: Any = ..., *, required: bool = ..., use_env: bool = ...) -> ChatLLM | None: ...


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


#: What an ``llm=`` argument accepts: a LlamaIndex ``LLM``, a LangChain chat model, an
#: :class:`LLMConfig`, a :class:`ChatLLM`, or ``None`` (``Settings.llm`` or the
#: ``CHRONORAG_*`` environment, read when needed). Anything else is an :class:`LLMError`.
LLMLike: TypeAlias = Union["LLM", "BaseChatModel", LLMConfig, ChatLLM, None]
