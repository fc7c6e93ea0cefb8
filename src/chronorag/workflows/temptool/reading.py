"""The question reading the no-LLM readers share (dense QA graph, dense and STAR-RAG methods): one parse, one linking.

:func:`reader_constraints` runs the TempTool reasoner's question understanding
(:meth:`~chronorag.workflows.temptool.reasoner.TemporalReasoner.plan_or_reason`: parse,
calendar windows, operators, entity linking with its margin rule) without calling any
tool, and returns the keyword arguments of
:func:`~chronorag.retrievers.reader.read_events`, or the reason the question cannot be
read faithfully.

:func:`relation_family` keeps the retrieved events whose relation the question can mean: a
reader that ignores the relation answers "who did Kerry sign a deal with?" from his
negotiation events.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chronorag.workflows.temptool.alignment import relation_tokens

__all__ = ["reader_constraints", "relation_family"]


@functools.lru_cache(maxsize=8)
def _relation_df(relations: tuple[str, ...]) -> Counter[str]:
    return Counter(t for r in relations for t in set(relation_tokens(r)))


def relation_family(events: Sequence[Any], relations: Sequence[str], *, phrase: str | None,
                    linked: str | None) -> tuple[list[Any], list[str]]:
    """The events whose relation the question's relation phrase can mean, and the words used.

    An event is kept when its relation is ``linked`` (the relation the phrase was linked to),
    or shares the rarest word (in the KG's relation vocabulary) of ``phrase`` or of ``linked``:
    "cooperate" keeps every "... cooperation" relation, "sign a deal" linked to "Sign formal
    agreement" keeps no negotiation event. With nothing linked and no phrase word in the
    vocabulary, every event is kept; with nothing linked and no event sharing a word, too
    (nothing is known about the relation then, so nothing is filtered).

    Parameters
    ----------
    events : sequence of Event
        Retrieved events (``relation`` attribute).
    relations : sequence of str
        The KG's relation names.
    phrase : str or None
        The question's relation phrase ("signed a deal with").
    linked : str or None
        The relation name the phrase was linked to, if any.
    """
    df = _relation_df(tuple(relations))
    words: set[str] = set()
    for text in (phrase or "", linked or ""):
        toks = [t for t in set(relation_tokens(text)) if df.get(t, 0) > 0]
        if toks:
            low = min(df[t] for t in toks)
            words |= {t for t in toks if df[t] == low}
    if linked is not None:
        name = linked.lower()
        kept = [e for e in events if str(e.relation).lower() == name or words & set(relation_tokens(str(e.relation)))]
        return kept, sorted(words)
    if not words:
        return list(events), []
    kept = [e for e in events if words & set(relation_tokens(str(e.relation)))]
    return (kept, sorted(words)) if kept else (list(events), [])


def reader_constraints(reasoner: Any, question: str) -> tuple[dict[str, Any] | None, str]:
    """``(kwargs for read_events, "")`` or ``(None, why)``."""
    q = reasoner.parse(question)
    problem = reasoner._time_problem(q)
    if problem is not None:
        return None, problem
    plan, why = reasoner.plan_or_reason(q)
    if plan is None:
        return None, why
    window = None
    if (plan.begin_time, plan.end_time) != ("-inf", "inf"):
        window = (plan.begin_time, plan.end_time, plan.type)
    return {"target": "time" if q.target == "time" else "entity", "operator": q.operator, "window": window,
            "exclude": list(plan.exclude), "known": plan.known,
            "known_role": plan.known_role if plan.target == "entity" else None,
            "ordinal": q.ordinal, "anchor": plan.anchor, "granularity": q.granularity}, ""
