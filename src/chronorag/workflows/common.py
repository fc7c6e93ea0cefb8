"""What every chronorag LangGraph graph shares: its run context and its "which question" rule.

Run context
-----------
Each graph has one ``@graph_context`` dataclass (``kw_only``) whose fields carry a
``description`` (LangGraph Studio shows them as a form) and real defaults. The arguments
given to ``build_graph`` become the graph's defaults, and a run's context overrides them
**field by field** (:func:`resolve_context`): only the fields the run names change. The
context may be the graph's own dataclass, a mapping, or any object, such as a parent
graph's context: keys the graph does not know are ignored, so a graph works as a
sub-graph under a parent with its own ``context_schema`` (it takes ``index_dir`` from it).

The question of a run
---------------------
:func:`run_question` gives one rule to every graph: the question is a human message
added since the last run's mark, else the ``question`` input. The start node returns the
update :func:`run_question` computes, which *consumes* the input (``question`` is cleared
and the message mark moves past it) as the run's first step, so a run that fails later
never leaves its question behind for the next run on the thread.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from chronorag.errors import ArgumentTypeError, ConfigError

__all__ = ["check", "describe", "graph_context", "index_dir_of", "resolve_context", "run_question"]

T = TypeVar("T")

_GIVEN = "_chronorag_given"


def describe(default: Any, description: str) -> Any:
    """A dataclass field with a default and a description (shown in LangGraph Studio)."""
    return dataclasses.field(default=default, metadata={"description": description})


def graph_context(cls: type[T]) -> type[T]:
    """Class decorator for a graph's context dataclass.

    The constructor ignores keys the class does not define (a parent graph's context
    carries its own) and remembers which fields were given, so that
    :func:`resolve_context` overrides only those. LangGraph builds the context from a
    ``context={...}`` dict with ``cls(**context)``, so this also holds for dicts.
    """
    if not dataclasses.is_dataclass(cls):
        raise ArgumentTypeError(f"graph_context needs a dataclass, got {cls!r}")
    names = frozenset(f.name for f in dataclasses.fields(cls))
    init: Callable[..., None] = cls.__init__  # type: ignore[misc]

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if args:
            raise ArgumentTypeError(f"{cls.__name__} takes keyword arguments only")
        init(self, **{k: v for k, v in kwargs.items() if k in names})
        object.__setattr__(self, _GIVEN, frozenset(k for k in kwargs if k in names))

    setattr(cls, "__init__", __init__)  # noqa: B010  (mypy forbids assigning to a method)
    return cls


def _given_fields(context: Any, names: list[str]) -> dict[str, Any]:
    if context is None:
        return {}
    if isinstance(context, Mapping):
        return {k: context[k] for k in names if k in context}
    if isinstance(context, (str, bytes, int, float, bool, list, tuple, set, frozenset)):
        raise ConfigError(f"context must be a mapping or the graph's context dataclass (or a parent graph's), "
                          f"got {type(context).__name__} {context!r}: pass e.g. context={{{names[0]!r}: ...}}"
                          if names else f"context must be a mapping, got {type(context).__name__} {context!r}")
    given = getattr(context, _GIVEN, None)
    if given is not None:  # one of our contexts: exactly the fields it was given
        return {k: getattr(context, k) for k in names if k in given}
    # any other object (a parent graph's context): the attributes it sets to a value
    out = {}
    for k in names:
        v = getattr(context, k, None)
        if v is not None and v != "":
            out[k] = v
    return out


def resolve_context(defaults: T, context: Any) -> T:
    """The run's settings: ``defaults`` (a context dataclass) overridden by ``context`` field by field.

    Parameters
    ----------
    defaults : context dataclass
        The build-time settings (``build_graph``'s arguments over the class defaults).
    context : object or mapping or None
        The run's context (``Runtime.context``): the graph's dataclass (its given fields
        override), a mapping (its known keys override), or any object such as a parent
        graph's context (its known attributes that are set override). Other keys are ignored.

    Raises
    ------
    ConfigError
        A field of the result has a bad value (the context class validates itself).
    """
    if not dataclasses.is_dataclass(defaults) or isinstance(defaults, type):
        raise ArgumentTypeError(f"defaults must be a context dataclass instance, got {defaults!r}")
    names = [f.name for f in dataclasses.fields(defaults)]
    changes = _given_fields(context, names)
    if not changes:
        return defaults
    try:
        return dataclasses.replace(defaults, **changes)  # type: ignore[type-var]
    except TypeError as exc:  # pragma: no cover - replace() with known names only
        raise ConfigError(f"bad run context for {type(defaults).__name__}: {exc}") from exc


def check(cond: bool, name: str, value: Any, expected: str) -> None:
    """Raise :class:`ConfigError` naming the setting, its value and what is accepted."""
    if not cond:
        raise ConfigError(f"{name} must be {expected}, got {value!r}")


def _is_human(m: Any) -> bool:
    return getattr(m, "type", None) == "human" or (isinstance(m, dict) and m.get("role") in ("user", "human"))


def _content(m: Any) -> Any:
    return m.content if hasattr(m, "content") else m.get("content")


def run_question(state: Mapping[str, Any], *, method: str, echo: bool = False) -> tuple[str, dict[str, Any]]:
    """The question of this run, and the state update that consumes it.

    The question is the latest human message added since the last run's mark
    (``seen_messages``), else the ``question`` input. The update clears ``question``
    and moves the mark past every message present, so the next run on the thread never
    sees this run's input again, whether this run succeeds or fails.

    Parameters
    ----------
    state : mapping
        The graph state at the start of the run.
    method : str
        The graph's name, for the error message.
    echo : bool
        Add the question as a ``HumanMessage`` when it came as ``question`` (graphs
        whose ``messages`` are a chat transcript).

    Raises
    ------
    ConfigError
        Neither a new human message nor a non-empty ``question``; the message names the
        keys the graph accepts and what it got.
    """
    msgs = list(state.get("messages") or [])
    seen = int(state.get("seen_messages") or 0)
    seen = seen if 0 <= seen <= len(msgs) else 0
    update: dict[str, Any] = {"question": None, "seen_messages": len(msgs)}
    for m in reversed(msgs[seen:]):
        c = _content(m)
        if _is_human(m) and isinstance(c, str) and c.strip():
            return c.strip(), update
    q = state.get("question")
    if isinstance(q, str) and q.strip():
        if echo:
            from langchain_core.messages import HumanMessage

            update["messages"] = [HumanMessage(q.strip())]
            update["seen_messages"] = len(msgs) + 1
        return q.strip(), update
    got = sorted(k for k, v in state.items() if v not in (None, "", [], {}))
    raise ConfigError(f"{method} input needs a non-empty 'question' string or 'messages' with a new human "
                      f"message; got keys {got}")


def index_dir_of(index_dir: str | None, *, method: str) -> str:
    """The run's index directory: the context's (or ``build_graph``'s), else ``$CHRONORAG_INDEX_DIR``.

    The environment is read here, when a node runs, never at import.

    Raises
    ------
    ConfigError
        None of the three is set.
    """
    import os

    d = index_dir or os.environ.get("CHRONORAG_INDEX_DIR")
    if not d:
        raise ConfigError(f"no index directory for {method}: set index_dir in the run context "
                          "(context={'index_dir': ...}), pass index_dir to build_graph, or set CHRONORAG_INDEX_DIR")
    return str(d)
