"""STAR-RAG's time signal: the question's time window, ordinal and anchor event, and time ranks."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from chronorag.graphs.question import parse_question
from chronorag.graphs.time import Granularity

__all__ = ["PERSONALIZATIONS", "TIME_MODES", "TimeIntent", "time_intent"]


PERSONALIZATIONS = ("star", "uniform")
TIME_MODES = ("cue", "dated", "none")
_DAY = 1440
_MONTH = 31 * _DAY
_NEG, _POS = np.iinfo(np.int64).min // 4, np.iinfo(np.int64).max // 4
_FILTER_KEYS = ("time", "start", "date")

# ------------------------------------------------------------------ question time
@dataclass
class TimeIntent:
    """What a question says about time (see :func:`time_intent`).

    Attributes
    ----------
    constraint : {"none", "in", "before", "after", "between", "same"}
        The temporal condition.
    lo, hi : int or None
        Explicit window in minutes ``[lo, hi)`` (``None``: open or needs the anchor).
    ordinal : {"first", "last"} or None
        Ordinal cue.
    anchor : str or None
        Anchor-event phrase ("before <anchor>", "same month as <anchor>").
    same_granularity : Granularity or None
        For ``"same"``: day, month or year.
    main : str
        The question's main clause (times and the anchor clause removed).
    target : {"entity", "time"}
        What is asked for.
    """

    constraint: str = "none"
    lo: int | None = None
    hi: int | None = None
    ordinal: str | None = None
    anchor: str | None = None
    same_granularity: Granularity | None = None
    main: str = ""
    target: str = "entity"

    @property
    def reference_query(self) -> str | None:
        """Text describing the anchor event: the main clause with the anchor phrase in it."""
        return f"{self.main} {self.anchor}".strip() if self.anchor else None

    @property
    def order(self) -> str | None:
        """Which end of the window the question wants: ``"first"``, ``"last"`` or ``None``."""
        if self.ordinal:
            return self.ordinal
        if self.constraint == "after" and self.anchor:
            return "first"
        if self.constraint == "before" and self.anchor:
            return "last"
        return None

    @property
    def direction(self) -> str:
        """Walk for a directed rule graph: ``"forward"`` (after), ``"backward"`` (before), else ``"both"``."""
        return {"after": "forward", "before": "backward"}.get(self.constraint, "both")

    @property
    def has_time(self) -> bool:
        """True when the question carries any time signal."""
        return self.constraint != "none" or self.ordinal is not None


def time_intent(question: str) -> TimeIntent:
    """Read a question's time window, ordinal and anchor event with the question parser."""
    q = parse_question(question)
    ti = TimeIntent(constraint=q.constraint, ordinal=q.ordinal, anchor=q.anchor,
                    same_granularity=q.same_granularity, main=q.main, target=q.target)
    if q.times:
        t0 = q.times[0].point
        if q.constraint == "in":
            ti.lo, ti.hi = t0.lo, t0.hi
        elif q.constraint == "between" and len(q.times) >= 2:
            ti.lo, ti.hi = t0.lo, q.times[1].point.hi
        elif q.constraint == "before" and q.anchor is None:
            ti.hi = t0.lo
        elif q.constraint == "after" and q.anchor is None:
            ti.lo = t0.hi
    return ti


def _rank_within(group: np.ndarray, t: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """Each event's time rank in [0, 1] among the in-window events of its group (0 = earliest)."""
    r = np.zeros(len(t))
    idx = np.flatnonzero(inside)
    if len(idx) == 0:
        return r
    order = idx[np.lexsort((t[idx], group[idx]))]
    g = group[order]
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    sizes = np.diff(np.r_[starts, len(order)])
    pos = np.arange(len(order)) - np.repeat(starts, sizes)
    r[order] = pos / np.maximum(np.repeat(sizes, sizes) - 1, 1)
    return r
