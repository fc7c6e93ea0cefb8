"""LLM-free readers: retrieved events -> ranked answer candidates.

:func:`rank_candidates` is the naive reader (every name and date of the retrieved
events); :func:`read_events` applies the question's reading (window, entity role,
exclusion, target) and abstains, with the reason, when the question asks for what a
reader of a few retrieved events cannot apply (counting, yes/no, first/last, anchors).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from chronorag.errors import ArgumentTypeError
from chronorag.metrics import normalize_answer

__all__ = ["ReaderResult", "rank_candidates", "read_events"]


def rank_candidates(
    events: Sequence[Any], question: str, *, with_time: bool = True
) -> list[str]:
    """Turn retrieved events into ranked answer candidates (a naive, LLM-free reader).

    For each event in rank order it proposes the object, the subject and the date;
    names already written in the question are skipped (the question's anchors are
    rarely its answer). Duplicates keep their best rank.

    Parameters
    ----------
    events : sequence of Event
        Retrieved events, best first (objects with ``subject``, ``object``, ``start``).
    question : str
        The question text.
    with_time : bool
        Also propose each event's date.
    """
    if not isinstance(question, str):
        raise ArgumentTypeError(f"question must be a str, got {type(question).__name__}")
    qn = f" {normalize_answer(question)} "
    seen: set[str] = set()
    out: list[str] = []
    for ev in events:
        cands = [ev.object, ev.subject] + ([ev.start] if with_time else [])
        for c in cands:
            n = normalize_answer(c)
            if not n or n in seen or f" {n} " in qn:
                continue
            seen.add(n)
            out.append(c)
    return out


@dataclass
class ReaderResult:
    """What :func:`read_events` returns: ranked answers, or an abstention with its reason."""

    answers: list[str]
    abstained: bool = False
    reason: str = ""


#: question operators the naive reader cannot apply to a handful of retrieved events
_UNREADABLE = {
    "count": "counting needs every matching event, not the retrieved ones; this reader cannot count",
    "most_frequent": "'most often' needs every matching event, not the retrieved ones; this reader cannot rank by frequency",
    "exists": "a yes/no question needs every matching event; this reader cannot say 'no' from retrieved events",
}


def read_events(
    events: Sequence[Any],
    question: str,
    *,
    target: str = "entity",
    operator: str = "select",
    window: tuple[str, str, str] | None = None,
    exclude: Sequence[str] = (),
    known: str | None = None,
    known_role: str | None = None,
    ordinal: str | None = None,
    anchor: str | None = None,
    granularity: Any = None,
) -> ReaderResult:
    """Read retrieved events under the question's constraints, or abstain saying which one it cannot apply.

    Applies what a reader of a few retrieved events can apply faithfully: the time
    window (events outside it are dropped), the known entity and its role (the answer
    is the other side of events that involve it), exclusions (names dropped), and the
    target (entities or dates). It abstains for counting, "most often", yes/no,
    first/last and anchor events ("before X"), which need every matching event of the
    KG, and when no retrieved event satisfies the constraints.

    Parameters
    ----------
    events : sequence of Event
        Retrieved events, best first (``subject``, ``object``, ``start``, ``end``).
    question : str
        The question text.
    target, operator, window, exclude, known, known_role, ordinal, anchor, granularity
        The question's reading (see :class:`chronorag.graphs.question.TemporalQuestion`);
        ``known`` is the linked KG name of the question's entity.
    """
    from chronorag.graphs.time import Granularity, minutes_to_iso, parse_time, temporal_mask

    if operator in _UNREADABLE:
        return ReaderResult([], True, _UNREADABLE[operator])
    if anchor is not None:
        return ReaderResult([], True, f"the anchor-event condition ({anchor!r}) is not supported by this reader")
    if ordinal is not None:
        return ReaderResult([], True, f"'{ordinal}' needs every matching event; this reader sees only the retrieved ones")
    evs = list(events)
    if window is not None and evs:
        import numpy as np

        lo = np.array([parse_time(e.start).lo for e in evs], dtype=np.int64)
        hi = np.array([parse_time(e.end or e.start).hi for e in evs], dtype=np.int64)
        keep = temporal_mask(lo, hi, *window)
        evs = [e for e, k in zip(evs, keep) if k]
    if known is not None:
        want = "subject" if known_role == "head" else "object" if known_role == "tail" else None
        evs = [e for e in evs if (e.subject == known or e.object == known) if want is None or getattr(e, want) == known]
    drop = {normalize_answer(x) for x in exclude} | ({normalize_answer(known)} if known else set())
    out: list[str] = []
    seen: set[str] = set()
    for e in evs:
        if target == "time":
            g = Granularity.DAY if granularity is None else granularity
            cands = [minutes_to_iso(parse_time(e.start).lo, min(g, parse_time(e.start).granularity))]
        elif known is not None:
            cands = [e.object if e.subject == known else e.subject]
        else:
            cands = [e.object, e.subject]
        for c in cands:
            n = normalize_answer(c)
            if not n or n in seen or n in drop:
                continue
            seen.add(n)
            out.append(c)
    if not out:
        cond = ", ".join(x for x in (f"window {window}" if window else "",
                                     f"{known} as {known_role}" if known else "",
                                     f"excluding {list(exclude)}" if exclude else "") if x)
        return ReaderResult([], True, "no retrieved event satisfies the question's constraints"
                            + (f" ({cond})" if cond else ""))
    return ReaderResult(out)
