"""The symbolic parts of the KG-iRAG loop: Psi, the verifier, AllenConsistent, Eq. 4 and Eq. 5.

Facts travel through the LangGraph state as plain dicts ``{id, place, lo, hi, events,
text}`` (times in minutes), so a checkpointer can store them.

- :func:`psi` (Eq. 2): facts of the KG inside a temporal window ``W`` around the
  anchor, at places within a spatial radius ``r`` of the plan's place (``near`` by
  great-circle distance, at most ``hop_cap`` neighbours), matching the pattern (the
  plan's event column), minus the ones already seen (exact dedup by id). Order:
  exact anchor time, then inside the window, then nearest in time; ties by distance
  and place name.
- :func:`verify`: the symbolic verifier (LLM2 without an LLM). It certifies an answer
  only when the evidence decides it: a witness of the event for a blocked window, full
  coverage *by records* without the event for a clean one (a window that was searched
  but holds no record is unknown, never clean), and a witness for every nearer
  candidate start of a Q2/Q3 answer.
- :func:`allen_consistent` (the second factor of Eq. 3): checks a proposed answer
  (from the verifier or an LLM) against the interval relations it implies: the
  answer window is *before/meets/overlaps* the plan (Q2) or *after/met_by/overlapped_by*
  (Q3), lies inside the retrieved coverage, and overlaps no abnormal fact; every
  nearer candidate overlaps one.
- :func:`candidate_windows` (Eq. 4): next anchors N_tau scored by
  ``gain - lambda * overlap``; the window grows (doubles) only after a step that did
  not settle the question.
- :func:`contradiction_filter` and :func:`synthesize` (Eq. 5): drop pairs of facts
  at one place whose intervals overlap but disagree; weight facts by
  ``exp(-gamma * |t(h) - t*| / cadence)`` around the decisive time ``t*`` and cite the
  heaviest.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from chronorag.errors import ConfigError
from chronorag.graphs.time import Granularity, minutes_to_iso, parse_time
from chronorag.workflows.kg_irag.planner import Plan
from chronorag.workflows.kg_irag.record_kg import RecordKG
from chronorag.workflows.kg_irag.reference import NO_ANSWER, NO_NEED

__all__ = ["allen_consistent", "candidate_windows", "contradiction_filter", "format_time", "normalize_answer",
           "psi", "record_covered", "records_in", "search_region", "synthesize", "verify"]

_INTERSECT = {"overlaps", "overlapped_by", "starts", "started_by", "during", "contains", "finishes",
              "finished_by", "equals"}


def format_time(minute: int, plan: Plan) -> str:
    """Answer text of a start time: a date for daily records, else ``YYYY-MM-DDTHH:MM``."""
    return minutes_to_iso(minute, Granularity.DAY if plan.step >= 1440 else Granularity.MINUTE)


def normalize_answer(text: Any, plan: Plan) -> str | None:
    """Canonical form of an answer (``yes``, ``no``, ``no need``, ``no answer`` or a time); None if unreadable."""
    if text is None:
        return None
    s = " ".join(str(text).strip().strip(".").lower().split())
    if s in ("yes", "no", NO_NEED, NO_ANSWER):
        return s
    if s in ("none", "no such time", "no time"):
        return NO_ANSWER
    try:
        return format_time(parse_time(s.upper().replace(" ", "T") if len(s) > 10 else s).lo, plan)
    except (ValueError, TypeError):
        return None


def search_region(plan: Plan) -> tuple[int, int]:
    """Minutes a question can ever need: the anchor window, plus the horizon on the searched side."""
    t, dur, hz = plan.anchor, plan.duration, plan.horizon
    if plan.type == "q2":
        return t - hz, t + dur
    if plan.type == "q3":
        return t, t + hz + dur
    return t, t + dur


def psi(kg: RecordKG, plan: Plan, lo: int, hi: int, *, radius_km: float = 0.0, hop_cap: int = 1,
        seen: Iterable[str] = ()) -> list[dict[str, Any]]:
    """Eq. 2: new facts in ``[lo, hi)`` within ``radius_km`` of the plan's place (see module doc)."""
    if hi <= lo:
        return []
    seen = set(seen)
    places = kg.near(plan.place, radius_km)[: 1 + max(0, int(hop_cap))] if radius_km > 0 else [(plan.place, 0.0)]
    col = kg.spec.rule(plan.event).column
    bit = kg.rule_bit(plan.event)
    rows = []
    for p, dist in places:
        vals = kg.values[p][col]
        for i in kg.window(p, lo, hi):
            fid = kg.fact_id(p, i)
            if fid in seen:
                continue
            f_lo, f_hi = int(kg.start[p][i]), int(kg.end[p][i])
            hit = bool(int(kg.mask[p][i]) & bit)
            v = vals[i]
            missing = isinstance(v, float) and math.isnan(v)
            vtxt = "missing" if missing else (f"{v:g}" if isinstance(v, float) else str(v))
            text = (f"({fid}, occursAt, [{minutes_to_iso(f_lo)}, {minutes_to_iso(f_hi)})) "
                    f"({fid}, atLocation, {p}) ({fid}, hasValue, {col}={vtxt})"
                    + (f" => {plan.event}" if hit else ""))
            prio = 0 if f_lo == plan.anchor else 1 if (lo <= f_lo and f_hi <= hi) else 2
            rows.append(((prio, abs(f_lo - plan.anchor), dist, p), {
                "id": fid, "place": p, "lo": f_lo, "hi": f_hi, "events": [plan.event] if hit else [],
                "text": text, "missing": missing and not hit}))
    rows.sort(key=lambda r: r[0])
    return [r[1] for r in rows]


def _abnormal(facts: Sequence[dict[str, Any]], plan: Plan) -> list[dict[str, Any]]:
    return [f for f in facts if plan.event in f["events"]]


def _hits(abn: Sequence[dict[str, Any]], lo: int, hi: int) -> list[dict[str, Any]]:
    return [f for f in abn if f["lo"] < hi and f["hi"] > lo]


def _candidates(plan: Plan) -> list[int]:
    t, s, hz = plan.anchor, plan.step, plan.horizon
    out: list[int] = []
    k = 1
    while True:
        c = t - k * s if plan.type == "q2" else t + k * s
        if (plan.type == "q2" and c <= t - hz) or (plan.type == "q3" and c >= t + hz):
            return out
        out.append(c)
        k += 1


def record_covered(facts: Sequence[dict[str, Any]], lo: int, hi: int) -> bool:
    """True when retrieved records cover ``[lo, hi)`` without a gap.

    A window that was asked for but holds no record is *not* covered: a time or place
    without records is unknown, never "no event".
    """
    if hi <= lo:
        return True
    at = lo
    for f in sorted((f for f in facts if not f.get("missing")), key=lambda f: f["lo"]):
        if f["lo"] > at:
            break
        at = max(at, int(f["hi"]))
        if at >= hi:
            return True
    return at >= hi


def records_in(facts: Sequence[dict[str, Any]], lo: int, hi: int) -> int:
    """How many retrieved records overlap ``[lo, hi)``."""
    return sum(1 for f in facts if f["lo"] < hi and f["hi"] > lo)


def verify(plan: Plan, facts: Sequence[dict[str, Any]], coverage: tuple[int, int] | None) -> dict[str, Any]:
    """The symbolic verifier: the answer the evidence certifies, or the best guess and what is open.

    Returns
    -------
    dict
        ``answer`` (certified answer or None), ``certified`` (bool), ``guess`` (the
        answer if unseen time had no event), ``decisive`` (minute t*), ``open`` (the
        nearest candidate start not yet decided, or None), ``witnesses`` (fact ids).
    """
    cov = coverage or (0, 0)
    abn = _abnormal(facts, plan)
    t, dur = plan.anchor, plan.duration

    def covered(lo: int, hi: int) -> bool:
        return cov[0] <= lo and hi <= cov[1] and record_covered(facts, lo, hi)

    anchor_hits = _hits(abn, t, t + dur)
    if plan.type == "q1":
        event = bool(anchor_hits)
        yes = event if plan.polarity == "detect" else not event
        ans = "yes" if yes else "no"
        certified = event or covered(t, t + dur)
        return {"answer": ans if certified else None, "certified": certified, "guess": ans,
                "decisive": anchor_hits[0]["lo"] if anchor_hits else t, "open": None if certified else t,
                "witnesses": [anchor_hits[0]["id"]] if anchor_hits else []}
    if not anchor_hits:
        cert = covered(t, t + dur)
        return {"answer": NO_NEED if cert else None, "certified": cert, "guess": NO_NEED, "decisive": t,
                "open": None if cert else t, "witnesses": []}
    witnesses = [anchor_hits[-1]["id"]]
    for c in _candidates(plan):
        h = _hits(abn, c, c + dur)
        if h:
            witnesses.append(h[-1]["id"])
            continue
        ans = format_time(c, plan)
        if covered(c, c + dur):
            return {"answer": ans, "certified": True, "guess": ans, "decisive": c, "open": None,
                    "witnesses": witnesses}
        return {"answer": None, "certified": False, "guess": ans, "decisive": c, "open": c, "witnesses": witnesses}
    return {"answer": NO_ANSWER, "certified": True, "guess": NO_ANSWER, "decisive": t, "open": None,
            "witnesses": witnesses}


def allen_consistent(plan: Plan, answer: str | None, facts: Sequence[dict[str, Any]],
                     coverage: tuple[int, int] | None, kg: RecordKG | None = None) -> tuple[bool, str]:
    """AllenConsistent(R) for a proposed answer: do the retrieved intervals support it?

    Returns
    -------
    (bool, str)
        The verdict and a short reason.
    """
    rel = RecordKG.relation
    norm = normalize_answer(answer, plan)
    if norm is None:
        return False, f"unreadable answer {answer!r}"
    cov = coverage or (0, 0)
    abn = _abnormal(facts, plan)
    t, dur = plan.anchor, plan.duration
    trip = (t, t + dur)

    def clean_and_covered(lo: int, hi: int) -> bool:
        return cov[0] <= lo and hi <= cov[1] and record_covered(facts, lo, hi) and not any(rel((f["lo"], f["hi"]), (lo, hi)) in _INTERSECT for f in abn)

    def blocked(lo: int, hi: int) -> bool:
        return any(rel((f["lo"], f["hi"]), (lo, hi)) in _INTERSECT for f in abn)

    if plan.type == "q1":
        if norm not in ("yes", "no"):
            return False, f"a q1 answer is yes or no, got {norm!r}"
        event_claimed = (norm == "yes") == (plan.polarity == "detect")
        if event_claimed:
            return (True, "an abnormal fact overlaps the trip") if blocked(*trip) else \
                (False, "no retrieved abnormal fact overlaps the trip")
        return (True, "trip covered and clean") if clean_and_covered(*trip) else \
            (False, "trip not covered by clean evidence")
    if norm in ("yes", "no"):
        return False, f"a {plan.type} answer is a time, 'no need' or 'no answer', got {norm!r}"
    if norm == NO_NEED:
        return (True, "planned trip clean") if clean_and_covered(*trip) else (False, "planned trip is not shown clean")
    if not blocked(*trip):
        return False, "the planned trip is not shown blocked"
    cands = _candidates(plan)
    if norm == NO_ANSWER:
        missing = [c for c in cands if not blocked(c, c + dur)]
        return (True, "every candidate window is blocked") if not missing else \
            (False, f"candidate {format_time(missing[0], plan)} not shown blocked")
    c = parse_time(norm).lo
    if c not in cands:
        return False, f"{norm} is not a candidate start within the horizon"
    win = (c, c + dur)
    r = rel(win, trip)
    want = {"before", "meets", "overlaps", "finished_by", "contains"} if plan.type == "q2" else \
        {"after", "met_by", "overlapped_by", "started_by", "during", "finishes"}
    if r not in want:
        return False, f"answer window is {r} the trip, expected one of {sorted(want)}"
    if not clean_and_covered(*win):
        return False, "answer window not covered by clean evidence"
    nearer = cands[: cands.index(c)]
    open_ = [x for x in nearer if not blocked(x, x + dur)]
    if open_:
        return False, f"nearer candidate {format_time(open_[0], plan)} not shown blocked"
    return True, f"answer window {r} the trip, clean, nearer windows blocked"


def candidate_windows(plan: Plan, coverage: tuple[int, int], open_start: int | None, growth: int, *,
                      lam: float = 0.5, grow: bool = True) -> list[dict[str, Any]]:
    """Eq. 4 candidates N_tau for the next retrieval, scored ``gain - lam * overlap``, best first.

    ``gain`` is the share of still-undecided candidate starts whose window the new
    coverage would contain; ``overlap`` the share of the window already retrieved.
    Lengths are the base step times ``2**j`` for ``j <= growth`` (only ``j = 0`` when
    ``grow`` is false).
    """
    r_lo, r_hi = search_region(plan)
    lo, hi = coverage
    dur, step = plan.duration, plan.step
    if plan.type == "q2":
        need = open_start if open_start is not None else lo - step
        base = max(step, lo - need)
        starts: list[tuple[str, int | None]] = [("extend", None)]
    else:
        need = (open_start if open_start is not None else hi) + dur
        base = max(step, need - hi)
        starts = [("extend", None)]
    if open_start is not None:
        starts.append(("recentre", open_start))
    cands_all = _candidates(plan) if plan.type != "q1" else [plan.anchor]
    open_c = [c for c in cands_all if open_start is None or
              (c >= open_start if plan.type == "q3" else c <= open_start)] or cands_all
    out: list[dict[str, Any]] = []
    for j in range(growth + 1 if grow else 1):
        length = base * (2 ** j)
        for kind, s0 in starts:
            if kind == "extend":
                w = (max(r_lo, lo - length), lo) if plan.type == "q2" else (hi, min(r_hi, hi + length))
            else:
                assert s0 is not None
                w = (max(r_lo, s0), min(r_hi, s0 + max(length, dur)))
            if w[1] <= w[0]:
                continue
            ov = max(0, min(w[1], hi) - max(w[0], lo)) / (w[1] - w[0])
            nlo, nhi = min(lo, w[0]), max(hi, w[1])
            gain = sum(1 for c in open_c if nlo <= c and c + dur <= nhi) / max(1, len(open_c))
            out.append({"lo": int(w[0]), "hi": int(w[1]), "kind": kind, "gain": round(gain, 4),
                        "overlap": round(ov, 4), "score": round(gain - lam * ov, 4)})
    uniq = {(c["lo"], c["hi"]): c for c in out}
    return sorted(uniq.values(), key=lambda c: (-c["score"], c["hi"] - c["lo"], c["lo"]))


def contradiction_filter(facts: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Drop both facts of any pair at one place whose intervals overlap but disagree on the event."""
    bad: set[str] = set()
    by_place: dict[str, list[dict[str, Any]]] = {}
    for f in facts:
        by_place.setdefault(f["place"], []).append(f)
    for fs in by_place.values():
        fs = sorted(fs, key=lambda f: f["lo"])
        for i, a in enumerate(fs):
            for b in fs[i + 1:]:
                if b["lo"] >= a["hi"]:
                    break
                if sorted(a["events"]) != sorted(b["events"]):
                    bad.update((a["id"], b["id"]))
    return [f for f in facts if f["id"] not in bad], sorted(bad)


def synthesize(plan: Plan, answer: str, facts: Sequence[dict[str, Any]], decisive: int, *,
               gamma: float = 0.7, top: int = 5) -> tuple[list[dict[str, Any]], str]:
    """Eq. 5: weight facts by temporal decay around ``decisive`` and write a rationale citing the heaviest.

    Returns
    -------
    (list of dict, str)
        ``[{id, weight, text}]`` best first (weights sum to 1) and the rationale.
    """
    if not 0 < gamma:
        raise ConfigError(f"gamma must be > 0, got {gamma}")
    w = []
    for f in facts:
        m = 1.0 if f["place"] == plan.place else 0.5  # facts from nearby places count at half weight
        mid = (f["lo"] + f["hi"]) / 2
        w.append(m * math.exp(-gamma * abs(mid - (decisive + plan.step / 2)) / plan.step))
    tot = sum(w) or 1.0
    ranked = sorted(zip(facts, w), key=lambda x: (-x[1], x[0]["lo"]))
    weighted = [{"id": f["id"], "weight": round(x / tot, 4), "text": f["text"]} for f, x in ranked]
    cited = ranked[:top]
    parts = [f"{f['id']} ({', '.join(f['events']) or 'no ' + plan.event})" for f, _ in cited]
    rationale = (f"Answer {answer!r}: decisive time {format_time(decisive, plan)}; "
                 f"{len(facts)} facts retrieved; cited: " + "; ".join(parts) if parts else
                 f"Answer {answer!r}: no facts retrieved.")
    return weighted, rationale
