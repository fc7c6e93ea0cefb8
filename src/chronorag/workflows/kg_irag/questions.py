"""Question generation for KG-iRAG (Alg. 3): Q1 detection/avoidability, Q2 latest-before, Q3 earliest-after.

Anchors are sampled from the records' start times (away from the ends of the data by
the horizon): half uniformly, half (``event_anchor_share``) from the hours or days when
the question's event occurs, shifted back by up to the trip length, so that Q2/Q3
(which need a blocked plan) are frequent enough to measure. Every anchor yields a Q1; Q2 and Q3 follow when the planned
window meets the event (as in the paper), and for a share of clean anchors too so
that ``"no need"`` answers are exercised. Each question is written with one of several
templates (and time and place spellings), and carries its minimal evidence set SD
(Eqs. 7-8) and its gold answer from :class:`ReferenceLabeller` (raw records only).

Answers: Q1 ``"yes"``/``"no"`` (for *avoid* phrasings yes = no event; for *detect*
phrasings yes = the event occurs); Q2/Q3 a start time (``YYYY-MM-DDTHH:MM``, or
``YYYY-MM-DD`` for daily data), ``"no need"`` or ``"no answer"``.
"""

from __future__ import annotations

import datetime as dt
import os
import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError
from chronorag.workflows.kg_irag.record_kg import RecordSpec
from chronorag.workflows.kg_irag.reference import ReferenceLabeller, format_answer_time

__all__ = ["DEFAULT_SETTINGS", "Q1_AVOID", "Q1_DETECT", "Q2_TEMPLATES", "Q3_TEMPLATES",
           "generate_questions", "write_questions"]

# Trip durations (in records) and horizon L (in records) per cadence; per-source overrides below.
DEFAULT_SETTINGS: dict[str, dict[str, Any]] = {
    "hourly": {"durations": (1, 2, 3), "horizon": 12, "event_weights": None, "extra_q23_share": 0.1,
               "event_anchor_share": 0.5},
    "daily": {"durations": (1, 2), "horizon": 10, "event_weights": None, "extra_q23_share": 0.1,
              "event_anchor_share": 0.5},
    "nyc-weather": {"event_weights": {"rain": 0.6, "low visibility": 0.2, "strong wind": 0.2}},
    "nyc-flights": {"durations": (1, 2), "horizon": 9, "event_weights": {"heavy delay": 0.8, "cancellations": 0.2}},
    "seattle-weather": {"event_weights": {"rain": 0.6, "strong wind": 0.25, "snow": 0.15}},
}

Q1_AVOID = (
    "I plan to be at {place} from {start} for {dur}. Can I avoid {event} during that time?",
    "Will my {dur} stay at {place} starting {start} be free of {event}?",
    "Can I spend {dur} at {place} starting {start} without running into {event}?",
)
Q1_DETECT = (
    "Will there be {event} at {place} at any point during the {dur} from {start}?",
    "Is any {event} recorded at {place} between {start} and {end}?",
)
Q2_TEMPLATES = (
    "I planned to be at {place} from {start} for {dur}. If I cannot avoid {event} then, what is the "
    "latest earlier start, no more than {horizon} before, that avoids it? Answer 'no need' if the plan "
    "already avoids it and 'no answer' if no such time exists.",
    "Suppose {event} spoils my {dur} trip at {place} starting {start}. What is the latest time before "
    "then, within {horizon}, that I could leave early and stay clear of {event}? Say 'no need' if the "
    "original plan is clear and 'no answer' if nothing works.",
    "Looking back at most {horizon} from {start}, what is the latest time I could begin a {dur} visit to "
    "{place} with no {event}? Reply 'no need' if {start} itself is clear, 'no answer' if there is none.",
)
Q3_TEMPLATES = (
    "I planned to be at {place} from {start} for {dur}. If I cannot avoid {event} then, what is the "
    "earliest later start, no more than {horizon} after, that avoids it? Answer 'no need' if the plan "
    "already avoids it and 'no answer' if no such time exists.",
    "If {event} hits my {dur} trip at {place} starting {start}, what is the soonest I can postpone it to, "
    "within the next {horizon}, to avoid {event}? Say 'no need' if the original plan is clear and "
    "'no answer' if nothing works.",
    "Looking ahead at most {horizon} from {start}, what is the earliest time I could begin a {dur} visit "
    "to {place} with no {event}? Reply 'no need' if {start} itself is clear, 'no answer' if there is none.",
)

_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
           "October", "November", "December")


def _settings(spec: RecordSpec, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    base = dict(DEFAULT_SETTINGS["daily" if spec.duration_minutes >= 1440 else "hourly"])
    base.update(DEFAULT_SETTINGS.get(spec.source, {}))
    base.update(overrides or {})
    return base


def _render_time(t: dt.datetime, daily: bool, style: int) -> str:
    if daily:
        return t.strftime("%Y-%m-%d") if style == 0 else f"{_MONTHS[t.month - 1]} {t.day}, {t.year}"
    if style == 0:
        return t.strftime("%Y-%m-%d %H:%M")
    return f"{_MONTHS[t.month - 1]} {t.day}, {t.year} at {t.strftime('%H:%M')}"


def _render_span(n: int, daily: bool) -> str:
    unit = "day" if daily else "hour"
    return f"{n} {unit}" + ("s" if n != 1 else "")


def generate_questions(kg_rows: Sequence[Mapping[str, Any]], spec: RecordSpec, *, n: int, seed: int = 0,
                       settings: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """Generate ``n`` questions with gold answers and minimal evidence sets.

    Parameters
    ----------
    kg_rows : sequence of mapping
        The raw records (what :func:`chronorag.workflows.kg_irag.sources.load_records` returns).
    spec : RecordSpec
        The source's spec.
    n : int
        Number of questions (Q1, Q2 and Q3 together).
    seed : int
        Random seed; the output is a pure function of (records, spec, n, seed, settings).
    settings : mapping, optional
        Overrides of :data:`DEFAULT_SETTINGS` (``durations``, ``horizon`` in records,
        ``event_weights``, ``extra_q23_share``).

    Returns
    -------
    list of dict
        Rows with ``id, type, question, answer, answers, place, event, polarity, anchor,
        duration, horizon`` (minutes), ``evidence`` (fact ids of SD) and ``source``.
    """
    if n < 1:
        raise ConfigError(f"n must be >= 1, got {n}")
    cfg = _settings(spec, settings)
    daily = spec.duration_minutes >= 1440
    step = dt.timedelta(minutes=spec.duration_minutes)
    ref = ReferenceLabeller(kg_rows, spec)
    rng = random.Random(seed)
    places = sorted({p for p, _ in ref.cells})
    by_place = {p: sorted(t for q, t in ref.cells if q == p) for p in places}
    event_times = {(p, r.name): sorted(t for (q, t), evs in ref.cells.items() if q == p and r.name in evs)
                   for p in places for r in spec.rules}
    hz = int(cfg["horizon"])
    durations = tuple(int(d) for d in cfg["durations"])
    weights = cfg.get("event_weights") or {r.name: 1.0 for r in spec.rules}
    events = [e for e in weights if any(r.name == e for r in spec.rules)]
    if not events:
        raise ConfigError(f"no event of {list(weights)} in source {spec.source!r}")
    w = [float(weights[e]) for e in events]
    out: list[dict[str, Any]] = []
    k = 0
    while len(out) < n:
        place = rng.choice(places)
        times = by_place[place]
        lo, hi = times[0] + hz * step, times[-1] - (hz + max(durations)) * step
        if hi <= lo:
            raise ConfigError(f"source {spec.source!r} covers too little time for a horizon of {hz} records")
        event = rng.choices(events, w)[0]
        nd = rng.choice(durations)
        if rng.random() < float(cfg["event_anchor_share"]):
            hits = event_times[(place, event)]
            if not hits:
                continue
            t = rng.choice(hits) - rng.randrange(nd) * step
        else:
            t = rng.choice(times)
        if not lo <= t <= hi:
            continue
        dur = nd * step
        horizon = hz * step
        exists, ev1 = ref.label("q1", place, event, t, dur)
        fields = {
            "place": rng.choice([place, spec.place_names.get(place, place)]),
            "event": event,
            "start": _render_time(t, daily, rng.randrange(2)),
            "dur": _render_span(nd, daily),
            "horizon": _render_span(hz, daily),
        }
        # daily records: "between D1 and D2" names the last day (hourly: the end of the window)
        last = t + dur - (dt.timedelta(minutes=spec.duration_minutes) if daily else dt.timedelta(0))
        fields["end"] = _render_time(last, daily, 0 if fields["start"][0].isdigit() else 1)
        base = {"place": place, "event": event, "anchor": format_answer_time(t, 1 if not daily else 1440),
                "duration": int(dur.total_seconds() // 60), "horizon": int(horizon.total_seconds() // 60),
                "source": spec.source}
        detect = rng.random() < 0.35
        tmpl = rng.choice(Q1_DETECT if detect else Q1_AVOID)
        ans = ("yes" if exists else "no") if detect else ("no" if exists else "yes")
        out.append({"id": f"{spec.source}-{seed}-{k}-q1", "type": "q1", "question": tmpl.format(**fields),
                    "answer": ans, "answers": [ans], "polarity": "detect" if detect else "avoid",
                    **base, "evidence": ev1})
        if exists or rng.random() < float(cfg["extra_q23_share"]):
            for qt, templates in (("q2", Q2_TEMPLATES), ("q3", Q3_TEMPLATES)):
                if len(out) >= n:
                    break
                a, ev = ref.label(qt, place, event, t, dur, horizon)
                ans = a if isinstance(a, str) else format_answer_time(a, spec.duration_minutes)
                out.append({"id": f"{spec.source}-{seed}-{k}-{qt}", "type": qt,
                            "question": rng.choice(templates).format(**fields), "answer": ans,
                            "answers": [ans], "polarity": "avoid", **base, "evidence": ev})
        k += 1
    return out[:n]


def write_questions(rows: Sequence[Mapping[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write questions as JSONL (one object per line), through the one output writer
    (:func:`chronorag.graphs.output.write_jsonl`: a partial file moved into place)."""
    from chronorag.graphs.output import write_jsonl

    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_jsonl(rows, p)
    return p
