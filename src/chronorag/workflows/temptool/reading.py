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
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from chronorag.workflows.temptool.alignment import relation_tokens

__all__ = ["plan_relation", "read_retrieved", "reader_constraints", "reader_plan", "relation_family"]


@functools.lru_cache(maxsize=8)
def _relation_df(relations: tuple[str, ...]) -> Counter[str]:
    return Counter(t for r in relations for t in set(relation_tokens(r)))


#: a relation read from the other side: "Host a visit" is "Make a visit" with its roles swapped
_RECEIVING = ("host", "receiv", "accept", "suffer", "undergo")


def _converse_pair(a: str, b: str) -> bool:
    """``a`` and ``b`` name one action from its two sides ("Make a visit" / "Host a visit"): one
    starts with a receiving verb and the other does not, so a role read in one does not hold in
    the other."""
    def receiving(r: str) -> bool:
        return r.strip().lower().startswith(_RECEIVING)
    return receiving(a) != receiving(b)


#: verbs that name no act of their own: a question asking with them reads every retrieved event
_GENERIC = frozenset(relation_tokens("happen happened happening occur occurred do did done interact interacted "
                                     "between among with and to of in at for from by about against over into"))


def relation_family(events: Sequence[Any], relations: Sequence[str], *, phrase: str | None,
                    linked: str | None) -> tuple[list[Any], list[str]]:
    """The events whose relation the question's relation phrase can mean, and the words used.

    An event is kept when its relation is ``linked`` (the relation the phrase was linked to),
    or shares the rarest word (in the KG's relation vocabulary) of ``phrase`` or of ``linked``:
    "cooperate" keeps every "... cooperation" relation, "sign a deal" linked to "Sign formal
    agreement" keeps no negotiation event; a relation read from the other side ("Host a visit" for
    "Make a visit") is not kept. With nothing linked, an event must share a word of the phrase;
    a phrase none of whose words is in the vocabulary ("lash out at") keeps no event, and only a
    question without relation words keeps every event.

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
    # "took place" names no act (and "take" is a relation word: "take hostage")
    phrase = re.sub(r"\b(?:take|takes|taking|took|taken)\s+place\b", " ", phrase or "", flags=re.I)
    df = _relation_df(tuple(relations))
    words: set[str] = set()
    for text in (phrase or "", linked or ""):
        toks = [t for t in set(relation_tokens(text)) if df.get(t, 0) > 0]
        if toks:
            low = min(df[t] for t in toks)
            words |= {t for t in toks if df[t] == low}
    if linked is not None:
        name = linked.lower()
        kept = [e for e in events if str(e.relation).lower() == name or (
            words & set(relation_tokens(str(e.relation))) and not _converse_pair(linked, str(e.relation)))]
        return kept, sorted(words)
    if not words:
        # a phrase with words, none of them in a KG relation name ("lash out at", "thank"), can mean
        # none of the retrieved events; a question with no relation words, or only a verb that
        # names no act ("What happened between X and Y?"), reads them all
        return ([], []) if set(relation_tokens(phrase)) - _GENERIC else (list(events), [])
    kept = [e for e in events if words & set(relation_tokens(str(e.relation)))]
    return kept, sorted(words)


def reader_plan(reasoner: Any, question: str) -> tuple[Any, str]:
    """The reasoner's plan of ``question`` (``ToolPlan``) and ``""``, or ``(None, why)``."""
    q = reasoner.parse(question)
    problem = reasoner._time_problem(q)
    if problem is not None:
        return None, problem
    plan, why = reasoner.plan_or_reason(q)
    return (plan, "") if plan is not None else (None, why)


def plan_relation(reasoner: Any, plan: Any) -> str | None:
    """The KG relation the plan's relation phrase links to, or ``None`` below the tools' no-match
    score (then :func:`relation_family` filters by the phrase's words alone)."""
    al = reasoner.tools.align_relation(plan.relation)
    return str(al.name) if al.score >= (reasoner.tools.min_score or 0.0) else None


def reader_constraints(reasoner: Any, question: str, *,
                       plan: Any = None) -> tuple[dict[str, Any] | None, str]:
    """``(kwargs for read_events, "")`` or ``(None, why)``; ``plan`` from :func:`reader_plan`
    when the caller already has it."""
    if plan is None:
        plan, why = reader_plan(reasoner, question)
        if plan is None:
            return None, why
    q = plan.question
    window = None
    if (plan.begin_time, plan.end_time) != ("-inf", "inf"):
        window = (plan.begin_time, plan.end_time, plan.type)
    return {"target": "time" if q.target == "time" else "entity", "operator": q.operator, "window": window,
            "exclude": list(plan.exclude), "known": plan.known,
            "known_role": plan.known_role if plan.target == "entity" else None,
            "ordinal": q.ordinal, "anchor": plan.anchor, "granularity": q.granularity}, ""


def read_retrieved(reasoner: Any, events: Sequence[Any], question: str, *,
                   relation: tuple[str | None, str | None] | None = None) -> tuple[list[str], bool, str]:
    """The no-LLM constrained reading of retrieved events: ``(answers, abstained, reason)``.

    The question's time window, entity role and exclusions (:func:`reader_constraints`) are
    applied to the retrieved events of a relation the question can mean
    (:func:`relation_family`: "who did Merkel meet?" is not answered from "Merkel rejected
    Canada"), by :func:`~chronorag.retrievers.reader.read_events`; what a reader of a few events
    cannot apply (counting, first/last, ...) is refused, saying why. ``relation`` is the
    ``(phrase, linked relation)`` when the caller has it (a reasoner's
    :meth:`~chronorag.workflows.temptool.reasoner.ReasonerResult.relation`); by default the plan's
    phrase and :func:`plan_relation`.
    """
    from chronorag.retrievers.reader import read_events

    plan, why = reader_plan(reasoner, question)
    if plan is None:
        return [], True, why
    kw, _ = reader_constraints(reasoner, question, plan=plan)
    assert kw is not None  # a plan always gives the reader's constraints
    phrase, linked = relation if relation is not None else (plan.relation, plan_relation(reasoner, plan))
    same, words = relation_family(events, reasoner.tools.store.relations, phrase=phrase, linked=linked)
    if not same:
        if not linked and not words:
            return [], True, (f"the question's relation {phrase!r} matches no relation of the KG, so none of the "
                              f"{len(events)} retrieved events can answer it; rephrase with one of the KG's relations")
        kind = ((f"{linked!r}" if linked else "the question's relation")
                + (f" or a relation with the word(s) {', '.join(words)}" if words else ""))
        return [], True, f"none of the {len(events)} retrieved events is of {kind}"
    read = read_events(same, question, **kw)
    scope = (f"read over the {len(events)} retrieved events" if len(same) == len(events) else
             f"read over the {len(same)} of {len(events)} retrieved events of {linked or phrase!r}")
    if not read.abstained:  # every answer is a matching event's, but the list counts only these events
        scope += ": the KG may hold more answers, and the ranking counts only these events"
    return list(read.answers), read.abstained, f"{read.reason}; {scope}" if read.reason else scope
