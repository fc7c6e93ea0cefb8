"""No-LLM temporal reasoner: question -> tool program -> ranked answers.

1. :func:`chronorag.graphs.question.parse_question` gives the skeleton (target,
   ordinal, temporal constraint, anchor phrase, main clause).
2. :meth:`TemporalReasoner.plan` grounds it: entity mentions in the main clause are
   found against the KG vocabulary (longest spans whose normalised tokens equal an
   entity name's, e.g. "the Thai military" = "Military (Thailand)"; otherwise
   capitalised chunks aligned by the tools' aligner), the relation phrase is what is
   left of the clause once entities and question scaffolding are removed, and the
   known entity's role follows the wording (auxiliary-first "which country did X
   visit" and passive "... by X" make X the head; otherwise X is the tail).
3. :meth:`TemporalReasoner.execute` runs the plan with the same three tools the agent
   uses (``Get_time`` for anchor events and time questions, then
   ``Get_head_entity``/``Get_tail_entity`` with the temporal filter) and ranks the
   answers: first/after -> earliest first; last/before -> latest first; otherwise by
   number of supporting events. When the parsed direction finds nothing, the other
   direction is tried (and the trace says so).

Anchor events ("before X", "after X", "the same month as X") take the anchor's
*earliest* event with the known entity under the same relation.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from chronorag.graphs.question import TemporalQuestion, parse_question
from chronorag.graphs.time import Granularity, minutes_to_iso, parse_time
from chronorag.workflows.temptool.alignment import normalise_tokens
from chronorag.workflows.temptool.tools import TemporalKGTools, ToolResult

__all__ = ["TemporalReasoner", "ToolPlan", "ReasonerResult"]

_SCAFFOLD = re.compile(
    r"\b(?:who|whom|whose|which|what|when|where|did|does|do|would|will|could|might|was|were|is|are|"
    r"has|have|had|been|be|the|a|an|first|last|earliest|latest|most|recent|recently|time|times|"
    r"country|countries|person|people|one|entity|year|month|day|date|exact|specific|particular|in|"
    r"on|at|for|of|so|to|by|it|that|this|can|you|tell|me|please|initially|finally|ever)\b",
    re.I,
)
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9'\u00a0./&-]*")


@dataclass
class ToolPlan:
    """A grounded program over the three tools."""

    question: TemporalQuestion
    target: str
    relation: str
    known: str | None = None
    known_role: str = "tail"  # role of the known entity: "head" or "tail"
    other: str | None = None  # the second entity of a time question
    anchor: str | None = None
    begin_time: str = "-inf"
    end_time: str = "inf"
    type: str = "in/on"
    order: str = "count"  # answer ranking: "first", "last" or "count"

    def describe(self) -> str:
        """One line for traces."""
        return (f"target={self.target} rel={self.relation!r} known={self.known!r}({self.known_role}) "
                f"other={self.other!r} anchor={self.anchor!r} window=({self.begin_time}, {self.end_time}, {self.type})")


@dataclass
class ReasonerResult:
    """Ranked answers with the plan and the tool calls that produced them."""

    answers: list[str]
    plan: ToolPlan | None
    calls: list[dict[str, Any]] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    note: str = ""
    latency_ms: float = 0.0
    error: str | None = None


def _tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(0), m.start(), m.end()) for m in _WORD.finditer(text)]


class TemporalReasoner:
    """Answer temporal KG questions with the tools and no LLM.

    Parameters
    ----------
    tools : TemporalKGTools
        The tools (and their aligners) over an event index.
    max_span : int
        Longest entity mention considered, in words.
    """

    def __init__(self, tools: TemporalKGTools, *, max_span: int = 10) -> None:
        if not isinstance(tools, TemporalKGTools):
            raise TypeError(f"tools must be TemporalKGTools, got {type(tools).__name__}")
        if max_span < 1:
            raise ValueError(f"max_span must be >= 1, got {max_span}")
        self.tools = tools
        self.max_span = max_span
        self._exact = tools.entities._norm_index

    # ------------------------------------------------------------ entity spans
    def find_entities(self, text: str) -> list[tuple[int, int, str]]:
        """Entity mentions in ``text``: ``(start, end, entity name)``, left to right.

        Longest exact matches of normalised tokens first; remaining capitalised chunks
        are aligned with the embedding aligner.
        """
        toks = _tokens_with_spans(text)
        taken = [False] * len(toks)
        found: list[tuple[int, int, str]] = []
        spans = []
        for i in range(len(toks)):
            for j in range(min(len(toks), i + self.max_span), i, -1):
                words = [t[0] for t in toks[i:j]]
                if not any(w[:1].isupper() or w[:1].isdigit() for w in words):
                    continue
                key = tuple(sorted(normalise_tokens(" ".join(words))))
                if key and key in self._exact:
                    spans.append((j - i, i, j, key))
        for _, i, j, key in sorted(spans, key=lambda x: (-x[0], x[1])):
            if any(taken[i:j]):
                continue
            for k in range(i, j):
                taken[k] = True
            names = [self.tools.entities.names[x] for x in self._exact[key]]
            found.append((toks[i][1], toks[j - 1][2], sorted(names)[0]))
        # capitalised chunks not covered: align them
        k = 0
        while k < len(toks):
            w = toks[k][0]
            if taken[k] or not (w[:1].isupper() and w.lower() not in _QWORDS):
                k += 1
                continue
            j = k
            while j + 1 < len(toks) and not taken[j + 1] and (
                toks[j + 1][0][:1].isupper() or toks[j + 1][0].lower() in ("of", "the", "and", "for", "de", "al")
            ):
                j += 1
            while j > k and toks[j][0].lower() in ("of", "the", "and", "for"):
                j -= 1
            phrase = text[toks[k][1]: toks[j][2]]
            al = self.tools.align_entity(phrase)
            if al.score >= 1.0:
                found.append((toks[k][1], toks[j][2], al.name))
            for x in range(k, j + 1):
                taken[x] = True
            k = j + 1
        return sorted(found)

    def _anchor_entity(self, phrase: str) -> str:
        ents = self.find_entities(phrase)
        if ents:
            return max(ents, key=lambda e: e[1] - e[0])[2]
        return self.tools.align_entity(phrase).name

    # ------------------------------------------------------------------ plan
    def plan(self, question: str | TemporalQuestion) -> ToolPlan | None:
        """Ground a question into a :class:`ToolPlan`; ``None`` when it has no usable form."""
        q = question if isinstance(question, TemporalQuestion) else parse_question(question)
        main = q.main
        ents = self.find_entities(main)
        if not ents:
            return None
        rel_text = main
        for s, e, _ in sorted(ents, reverse=True):
            rel_text = rel_text[:s] + " " + rel_text[e:]
        rel_text = re.sub(r"\s+", " ", _SCAFFOLD.sub(" ", rel_text)).strip(" ,.?")
        if not rel_text:
            return None
        plan = ToolPlan(question=q, target=q.target, relation=rel_text)
        if q.target == "time":
            if len(ents) < 2:
                return None
            first, second = ents[0][2], ents[-1][2]
            if q.passive:
                first, second = second, first
            plan.known, plan.other, plan.known_role = first, second, "head"
        else:
            head_cue = q.subject_cue or q.passive
            if q.passive:
                by = [e for e in ents if re.search(r"\bby\s+(?:the\s+)?$", main[: e[0]], re.I)]
                known = by[0] if by else ents[-1]
            else:
                known = ents[0] if head_cue else ents[-1]
            plan.known, plan.known_role = known[2], "head" if head_cue else "tail"
        if q.ordinal == "first" or (q.constraint == "after" and not q.ordinal):
            plan.order = "first"
        elif q.ordinal == "last" or (q.constraint == "before" and not q.ordinal):
            plan.order = "last"
        if q.anchor:
            plan.anchor = self._anchor_entity(q.anchor)
        if q.constraint == "in":
            t = q.times[0].point
            plan.begin_time = plan.end_time = str(t)
        elif q.constraint == "between" and len(q.times) >= 2:
            plan.begin_time, plan.end_time, plan.type = str(q.times[0].point), str(q.times[1].point), "between"
        elif q.constraint in ("before", "after") and q.times and q.anchor is None:
            if q.constraint == "before":
                plan.end_time, plan.type = str(q.times[0].point), "before"
            else:
                plan.begin_time, plan.type = str(q.times[0].point), "after"
        return plan

    # --------------------------------------------------------------- execute
    def _call(self, calls: list[dict[str, Any]], plan: ToolPlan, name: str,
              **args: Any) -> Generator[dict[str, Any], ToolResult, ToolResult]:
        res = yield {"name": name, "arguments": args}
        if res.aligned.get("rel") and res.rows:
            # later calls reuse the relation this call resolved (as an agent reuses observations)
            plan.relation = res.aligned["rel"]
        calls.append({"name": name, "arguments": args, "n_rows": len(res.rows),
                      "aligned": res.aligned, "error": res.error})
        return res

    def _directional(self, calls: list[dict[str, Any]], plan: ToolPlan, role: str,
                     **window: str) -> Generator[dict[str, Any], ToolResult, tuple[ToolResult, str]]:
        if role == "tail":
            res = yield from self._call(calls, plan, "Get_head_entity", tail=plan.known, rel=plan.relation, **window)
            return res, "head"
        res = yield from self._call(calls, plan, "Get_tail_entity", head=plan.known, rel=plan.relation, **window)
        return res, "tail"

    def _anchor_time(self, calls: list[dict[str, Any]], plan: ToolPlan,
                     role: str) -> Generator[dict[str, Any], ToolResult, str | None]:
        if role == "tail":  # answers are heads, like the anchor
            res = yield from self._call(calls, plan, "Get_time", head=plan.anchor, rel=plan.relation, tail=plan.known)
        else:
            res = yield from self._call(calls, plan, "Get_time", head=plan.known, rel=plan.relation, tail=plan.anchor)
        if not res.rows:
            return None
        return min((r["time"].split("/")[0] for r in res.rows), key=lambda t: parse_time(t).lo)

    def steps(self, plan: ToolPlan) -> Generator[dict[str, Any], ToolResult, ReasonerResult]:
        """The plan as a step-by-step program.

        A generator: it yields each tool call (``{"name", "arguments"}``), must be sent
        that call's :class:`ToolResult`, and returns the :class:`ReasonerResult`. This
        is how the LangGraph agent runs the program one call at a time through its tool
        node; :meth:`execute` drives it with the tools directly.
        """
        calls: list[dict[str, Any]] = []
        q = plan.question
        if plan.target == "time":
            res = yield from self._call(calls, plan, "Get_time", head=plan.known, rel=plan.relation, tail=plan.other)
            note = ""
            if not res.rows:
                res = yield from self._call(calls, plan, "Get_time", head=plan.other, rel=plan.relation, tail=plan.known)
                note = "reversed direction"
            gran = Granularity.DAY if q.granularity is None else q.granularity
            times = sorted({r["time"].split("/")[0] for r in res.rows}, key=lambda t: parse_time(t).lo)
            if q.ordinal == "last":
                times = times[::-1]
            answers = []
            for t in times:
                tp = parse_time(t)
                a = minutes_to_iso(tp.lo, min(gran, tp.granularity))
                if a not in answers:
                    answers.append(a)
            return ReasonerResult(answers=answers, plan=plan, calls=calls, note=note,
                                  evidence=[res.observation])
        note = ""
        for attempt, role in enumerate((plan.known_role, "tail" if plan.known_role == "head" else "head")):
            window = {"begin_time": plan.begin_time, "end_time": plan.end_time, "type": plan.type}
            if plan.anchor is not None:
                t = yield from self._anchor_time(calls, plan, role)
                if t is None:
                    continue
                if q.constraint == "before":
                    window = {"begin_time": "-inf", "end_time": t, "type": "before"}
                elif q.constraint == "after":
                    window = {"begin_time": t, "end_time": "inf", "type": "after"}
                else:  # same day/month/year
                    tp = parse_time(t)
                    same = Granularity.DAY if q.same_granularity is None else q.same_granularity
                    g = min(same, tp.granularity)
                    tt = minutes_to_iso(tp.lo, g)
                    window = {"begin_time": tt, "end_time": tt, "type": "in/on"}
            res, answer_role = yield from self._directional(calls, plan, role, **window)
            answers = self._rank(res.rows, answer_role, plan.order, exclude={plan.known, plan.anchor})
            if answers:
                if attempt:
                    note = "reversed direction"
                return ReasonerResult(answers=answers, plan=plan, calls=calls, note=note,
                                      evidence=[res.observation])
        return ReasonerResult(answers=[], plan=plan, calls=calls, note="no events matched")

    def _drive(self, gen: Generator[dict[str, Any], ToolResult, ReasonerResult]) -> ReasonerResult:
        try:
            call = next(gen)
            while True:
                call = gen.send(self.tools.call(call["name"], call["arguments"]))
        except StopIteration as stop:
            return stop.value

    def execute(self, plan: ToolPlan) -> ReasonerResult:
        """Run a plan with the tools and rank the answers."""
        return self._drive(self.steps(plan))

    def _time_problem(self, q: TemporalQuestion) -> str | None:
        """Why the question's times cannot be answered from this graph (``None``: they can)."""
        if q.invalid_times:
            return (f"invalid date(s) in the question: {', '.join(repr(t) for t in q.invalid_times)}; "
                    f"write dates as YYYY, YYYY-MM or YYYY-MM-DD")
        s = self.tools.store
        if len(s) == 0 or not q.times:
            return None
        lo, hi = int(s.t_lo.min()), int(s.t_hi.max())
        span = f"{minutes_to_iso(lo, Granularity.DAY)} .. {minutes_to_iso(hi - 1, Granularity.DAY)}"
        for t in q.times:
            p = t.point
            outside = {"before": p.lo <= lo, "after": p.hi >= hi}.get(q.constraint, p.hi <= lo or p.lo >= hi)
            if outside:
                return (f"the question's time {t.text!r} ({q.constraint}) is outside the graph's time span "
                        f"{span}: no event can match")
        return None

    def program(self, question: str) -> Generator[dict[str, Any], ToolResult, ReasonerResult]:
        """Parse, check the question's dates, plan, then :meth:`steps` (a generator; see there).

        A question with an invalid date, or a time outside the graph's span, returns
        at once with no answers, ``error`` set and the reason in ``note``.
        """
        if not isinstance(question, str) or not question.strip():
            raise ValueError(f"question must be a non-empty string, got {question!r}")
        t0 = time.perf_counter()
        q = parse_question(question)
        problem = self._time_problem(q)
        if problem is not None:
            return ReasonerResult(answers=[], plan=None, note=problem, error=problem,
                                  latency_ms=(time.perf_counter() - t0) * 1000)
        plan = self.plan(q)
        if plan is None:
            return ReasonerResult(answers=[], plan=None, note="no program: question form not understood",
                                  latency_ms=(time.perf_counter() - t0) * 1000)
        res = yield from self.steps(plan)
        res.latency_ms = (time.perf_counter() - t0) * 1000
        return res

    def answer(self, question: str) -> ReasonerResult:
        """Parse, plan, execute; never raises on a question it cannot handle (empty answers,
        with the reason in ``note``; ``error`` is set for invalid or out-of-range dates)."""
        return self._drive(self.program(question))

    @staticmethod
    def _rank(rows: list[dict[str, str]], answer_role: str, order: str,
              exclude: set[str | None]) -> list[str]:
        stats: dict[str, list[int]] = {}
        for r in rows:
            name = r[answer_role]
            if name in exclude:
                continue
            lo = parse_time(r["time"].split("/")[0]).lo
            st = stats.setdefault(name, [lo, lo, 0])
            st[0], st[1], st[2] = min(st[0], lo), max(st[1], lo), st[2] + 1
        if order == "first":
            return sorted(stats, key=lambda n: (stats[n][0], -stats[n][2], n))
        if order == "last":
            return sorted(stats, key=lambda n: (-stats[n][1], -stats[n][2], n))
        return sorted(stats, key=lambda n: (-stats[n][2], stats[n][0], n))


_QWORDS = {"who", "whom", "which", "what", "when", "in", "on", "before", "after", "with", "to",
           "could", "can", "did", "was", "the", "at", "during", "from", "by"}
