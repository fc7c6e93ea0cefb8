"""KG-iRAG as a LangGraph state machine (Alg. 1/2): init -> retrieve -> judge -> (update -> retrieve)* -> synthesize.

Nodes
-----
``init`` (LLM1_Init)
    Reads the question (``{"question": ...}`` or the last human message), resets every
    per-run field, and plans: the LLM's JSON plan validated against the KG, or the
    rule-based parser (no-LLM mode, or after a malformed LLM reply, which is recorded).
``retrieve`` (Psi, Eq. 2)
    New facts in the next window; the spatial radius grows (up to the context's
    ``radius_km``, ``hop_cap`` neighbours) only when the place has no record there.
``judge`` (LLM2_Judge + Eq. 3)
    Contradiction filter, then a candidate answer with confidence and consistency (LLM,
    or the symbolic verifier), and the stop rule ``conf >= theta and AllenConsistent``.
``update`` (LLM1_Update, Eq. 4)
    Candidate next windows scored ``gain - lambda * overlap`` (gains from the LLM, or
    the rule-based share of undecided starts covered); the window doubles only after
    a step that did not settle the question.
``fallback`` (LLM2_Fallback)
    When the budget (``t_max``) is spent: the LLM's best answer from the evidence, or
    the verifier's best guess; ``stopped_by`` says so.
``synthesize`` (Eq. 5)
    Temporal-decay weights around the decisive time, a rationale citing the heaviest
    facts (LLM-written when an LLM is set), and an ``AIMessage`` with the answer.

Methods (context ``method``): ``kg-irag``; ``single-pass`` (one maximal window
``[t - L, t + L + duration)``, one judgement); ``limited`` (two steps, no window
growth); ``no-check`` (``fixed_steps`` steps, no stop rule, answer from all evidence).

Every LLM reply is JSON (``ChatLLM.complete_json``: retried once); a reply still
malformed is recorded in ``llm_errors`` and in the fallback log
(``kg_irag.init|judge|update|fallback|synthesize``) and its documented substitute is used.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache, partial
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.types import Checkpointer

from chronorag.errors import ChronoRAGError, ConfigError, LLMError
from chronorag.graphs.time import minutes_to_iso
from chronorag.integrations.llm import LLMConfig, LLMLike, record_fallback, resolve_llm
from chronorag.workflows.common import resolve_context, run_question
from chronorag.workflows.kg_irag import engine
from chronorag.workflows.kg_irag.planner import Plan, parse_question, plan_from_dict
from chronorag.workflows.kg_irag.prompts import (
    FALLBACK_SCHEMA,
    FALLBACK_SYSTEM,
    INIT_SCHEMA,
    INIT_SYSTEM,
    JUDGE_SCHEMA,
    JUDGE_SYSTEM,
    SYNTH_SCHEMA,
    SYNTH_SYSTEM,
    UPDATE_SCHEMA,
    UPDATE_SYSTEM,
)
from chronorag.workflows.kg_irag.record_kg import RecordKG
from chronorag.workflows.kg_irag.state import (
    KGIRAGContext,
    KGIRAGInput,
    KGIRAGOutput,
    KGIRAGState,
)

__all__ = [
    "ask_json", "build_graph", "start", "fallback", "graph", "init", "judge", "load_kg", "retrieve", "route_init",
    "route_judge", "synthesize", "update",
]



@lru_cache(maxsize=4)
def load_kg(source: str, records: str | None = None) -> RecordKG:
    """The KG of a built-in source or a spec JSON + CSV (cached per process)."""
    from chronorag.workflows.kg_irag.sources import load_source_kg

    return load_source_kg(source, records=records)[0]


def _plan(state: KGIRAGState) -> Plan:
    d = dict(state["plan"])
    d.pop("anchor_iso", None)
    return Plan(**d)


def _facts_block(facts: list[dict[str, Any]]) -> str:
    return "\n".join(f["text"] for f in facts) or "(no facts)"


@dataclass(frozen=True)
class _Build:
    """What ``build_graph`` fixes: the default context, a given KG and the LLM object."""

    defaults: KGIRAGContext
    kg: RecordKG | None
    llm: Any
    source_given: bool
    resolved: dict[Any, Any] = field(default_factory=dict)


def _settings(build: _Build, runtime: Runtime[KGIRAGContext]) -> dict[str, Any]:
    """The run's settings: build defaults overridden field by field by the run context."""
    c = resolve_context(build.defaults, runtime.context)
    s = asdict(c)
    if not build.source_given and c.source == build.defaults.source and build.kg is None:
        # the module-level graph (langgraph.json): the environment is read here, per run
        s["source"] = os.environ.get("CHRONORAG_KG_SOURCE", c.source)
    return s


def _kg(build: _Build, s: dict[str, Any]) -> RecordKG:
    if build.kg is not None and s["source"] in (build.defaults.source, build.kg.spec.source):
        return build.kg
    return load_kg(str(s["source"]), s["records"])


def _llm(build: _Build, s: dict[str, Any]) -> Any:
    """The run's LLM (resolved once per graph and setting; Settings.llm and the environment on first use)."""
    key = (s["use_llm"], s["llm_url"])
    if key not in build.resolved:
        build.resolved[key] = _resolve(build, s)
    return build.resolved[key]


def _resolve(build: _Build, s: dict[str, Any]) -> Any:
    if s["use_llm"] is False:
        return None
    if s["llm_url"]:
        return resolve_llm(LLMConfig(base_url=s["llm_url"]))
    if build.llm is not None:
        return resolve_llm(build.llm)  # None for LLMConfig(base_url=None): an explicit no-LLM choice
    found = resolve_llm(None)
    if s["use_llm"] and found is None:
        raise LLMError("use_llm=True but no LLM is configured: pass llm=, set llm_url or CHRONORAG_BASE_URL")
    return found


def ask_json(model: Any, system: str, user: str, schema: dict[str, Any], name: str,
             errors: list[str]) -> Any | None:
    """One JSON-schema call (retried once); a failure is recorded and ``None`` returned."""
    try:
        return model.complete_json([{"role": "system", "content": system}, {"role": "user", "content": user}],
                                   schema=schema, name=name, retries=1)
    except LLMError as exc:
        record_fallback(f"kg_irag.{name}", str(exc))
        errors.append(f"{name}: {exc}"[:300])
        return None


# ------------------------------------------------------------------ nodes
def start(state: KGIRAGState) -> dict[str, Any]:
    """Take this run's question, consuming the input first, so a run that fails later leaves none behind."""
    q, consumed = run_question(state, method="KG-iRAG", echo=True)
    return {**consumed, "current": q}


def init(state: KGIRAGState, runtime: Runtime[KGIRAGContext], *, build: _Build) -> dict[str, Any]:
    """LLM1_Init: reset the run's fields and plan the question."""
    s = _settings(build, runtime)
    q = state["current"]
    g = _kg(build, s)
    model = _llm(build, s)
    errors: list[str] = []
    reset: dict[str, Any] = {
        "settings": s, "facts": [], "coverage": [], "windows": [], "trace": [],
        "iteration": 0, "radius_km": 0.0, "verdict": {}, "judged": {}, "stop": False, "first_certified": -1,
        "contradictions": [], "answer": "", "rationale": "", "evidence": [], "evidence_ids": [], "cited": [],
        "stopped_by": "", "error": "", "iterations": 0,
        "mode": f"llm ({model.name})" if model is not None else "no-llm (rule-based planner, symbolic verifier)",
    }
    plan: Plan | None = None
    if model is not None:
        sp = g.spec
        system = INIT_SYSTEM.format(
            places=", ".join(f"{p} ({sp.place_names.get(p, p)})" for p in g.places),
            events=", ".join(r.name for r in sp.rules), cadence=g.cadence_minutes)
        reply = ask_json(model, system, q, INIT_SCHEMA, "init", errors)
        if reply is not None:
            try:
                plan = plan_from_dict(reply, g)
            except (ChronoRAGError, ValueError, TypeError) as exc:
                record_fallback("kg_irag.init", f"invalid plan {reply!r}: {exc}")
                errors.append(f"init: invalid plan: {exc}"[:300])
    if plan is None:
        try:
            plan = parse_question(q, g)
        except ChronoRAGError as exc:
            return {**reset, "llm_errors": errors, "error": str(exc), "answer": "no answer",
                    "stopped_by": "unparsed", "plan": {},
                    "messages": [AIMessage(f"I could not plan this question: {exc}")]}
    if s["method"] == "single-pass":
        hz = plan.horizon or 12 * plan.step
        win = [plan.anchor - hz, plan.anchor + plan.duration + hz]
    else:
        win = [plan.anchor, plan.anchor + plan.duration]
    return {**reset, "plan": plan.to_dict(), "next_window": win, "llm_errors": errors}

def route_init(state: KGIRAGState) -> Literal["retrieve", "__end__"]:
    return "__end__" if state.get("error") else "retrieve"

def retrieve(state: KGIRAGState, *, build: _Build) -> dict[str, Any]:
    s = state["settings"]
    g = _kg(build, s)
    plan = _plan(state)
    lo, hi = state["next_window"]
    seen = {f["id"] for f in state["facts"]}
    radius = float(state.get("radius_km") or 0.0)
    new = engine.psi(g, plan, lo, hi, radius_km=radius, hop_cap=s["hop_cap"], seen=seen)
    if hi > lo and not any(f["place"] == plan.place for f in new) and radius < s["radius_km"]:
        radius = float(s["radius_km"])  # data gap at the place: widen the spatial radius once
        new = engine.psi(g, plan, lo, hi, radius_km=radius, hop_cap=s["hop_cap"], seen=seen)
    cov = state.get("coverage") or [lo, hi]
    if hi > lo and lo <= cov[1] and hi >= cov[0]:  # coverage stays one contiguous span
        cov = [min(cov[0], lo), max(cov[1], hi)]
    # p(t): what this step looks for (the relation moves from DURING the plan to BEFORE/AFTER it)
    rel = "during" if state["iteration"] == 0 or plan.type == "q1" else ("before" if plan.type == "q2" else "after")
    pattern = f"{plan.event} at {plan.place} (r={radius:g} km) {rel} the planned trip"
    trace = list(state["trace"]) + [{"iteration": state["iteration"], "pattern": pattern, "window": [lo, hi],
                                     "window_iso": [minutes_to_iso(lo), minutes_to_iso(hi)],
                                     "new_facts": len(new), "radius_km": radius}]
    return {"facts": list(state["facts"]) + new, "coverage": cov, "radius_km": radius,
            "windows": list(state["windows"]) + [[lo, hi]], "trace": trace}

def judge(state: KGIRAGState, *, build: _Build) -> dict[str, Any]:
    s = state["settings"]
    plan = _plan(state)
    facts, bad = engine.contradiction_filter(state["facts"])
    cov = (int(state["coverage"][0]), int(state["coverage"][1]))
    verdict = engine.verify(plan, facts, cov)
    first = state["first_certified"]
    if verdict["certified"] and first < 0:
        first = state["iteration"]
    model = _llm(build, s)
    errors = list(state.get("llm_errors") or [])
    if model is not None:
        user = (f"Question: {state['current']}\nPlan: {json.dumps(plan.to_dict())}\n"
                f"Covered: [{minutes_to_iso(cov[0])}, {minutes_to_iso(cov[1])})\nFacts:\n{_facts_block(facts)}")
        reply = ask_json(model, JUDGE_SYSTEM, user, JUDGE_SCHEMA, "judge", errors)
        if reply is not None and isinstance(reply, dict):
            try:
                conf = float(reply.get("confidence", 0.0))
            except (TypeError, ValueError):
                conf = 0.0
            judged: dict[str, Any] = {"answer": str(reply.get("answer", "")), "confidence": conf,
                      "consistent": bool(reply.get("consistent", False)), "by": "llm"}
        else:
            judged = {"answer": verdict["answer"] or verdict["guess"],
                      "confidence": 1.0 if verdict["certified"] else 0.0, "consistent": True,
                      "by": "symbolic (LLM reply malformed)"}
    else:
        judged = {"answer": verdict["answer"] or verdict["guess"],
                  "confidence": 1.0 if verdict["certified"] else 0.0, "consistent": True, "by": "symbolic"}
    ok, why = engine.allen_consistent(plan, str(judged["answer"]), facts, cov)
    judged["allen_consistent"], judged["allen_reason"] = ok, why
    stop = float(judged["confidence"]) >= float(s["theta"]) and bool(judged["consistent"]) and ok
    if s["method"] == "no-check":
        stop = False
    trace = list(state["trace"])
    trace[-1] = {**trace[-1], "judged": dict(judged), "stop": stop}
    return {"verdict": verdict, "judged": judged, "stop": stop, "first_certified": first,
            "contradictions": bad, "llm_errors": errors, "trace": trace}

def _budget(s: dict[str, Any]) -> int:
    return {"kg-irag": int(s["t_max"]), "single-pass": 1, "limited": 2,
            "no-check": int(s["fixed_steps"])}[s["method"]]

def route_judge(state: KGIRAGState) -> Literal["synthesize", "update", "fallback"]:
    if state["stop"]:
        return "synthesize"
    if state["iteration"] + 1 >= _budget(state["settings"]):
        return "fallback"
    return "update"

def update(state: KGIRAGState, *, build: _Build) -> dict[str, Any]:
    s = state["settings"]
    plan = _plan(state)
    it = state["iteration"]
    grow = s["method"] != "limited"
    cov0 = (int(state["coverage"][0]), int(state["coverage"][1]))
    cands = engine.candidate_windows(plan, cov0, state["verdict"].get("open"), it,
                                     lam=float(s["lam"]), grow=grow)
    errors = list(state.get("llm_errors") or [])
    model = _llm(build, s)
    how = "rule"
    if cands and model is not None:
        listing = "\n".join(f"{i}. [{minutes_to_iso(c['lo'])}, {minutes_to_iso(c['hi'])}) "
                            f"already fetched: {c['overlap']:.0%}" for i, c in enumerate(cands))
        cov = state["coverage"]
        open_ = state["verdict"].get("open")
        user = (f"Question: {state['current']}\nPlan: {json.dumps(plan.to_dict())}\n"
                f"Covered: [{minutes_to_iso(cov[0])}, {minutes_to_iso(cov[1])})\n"
                f"Nearest undecided start: {minutes_to_iso(open_) if open_ is not None else 'none'}\n"
                f"Candidates:\n{listing}")
        reply = ask_json(model, UPDATE_SYSTEM, user, UPDATE_SCHEMA, "update", errors)
        gains = reply.get("gains") if isinstance(reply, dict) else None
        if isinstance(gains, list) and len(gains) == len(cands) and all(
                isinstance(x, (int, float)) for x in gains):
            for c, gval in zip(cands, gains):
                c["gain"] = float(gval)
                c["score"] = round(float(gval) - float(s["lam"]) * c["overlap"], 4)
            cands.sort(key=lambda c: (-c["score"], c["hi"] - c["lo"], c["lo"]))
            how = "llm"
        elif reply is not None:
            record_fallback("kg_irag.update", f"gains do not match {len(cands)} candidates: {reply!r}")
            errors.append(f"update: gains do not match the {len(cands)} candidates")
    if cands:
        nxt = [cands[0]["lo"], cands[0]["hi"]]
    else:
        cov = state["coverage"]
        nxt = [cov[1], cov[1]]  # nothing left in the search region
    trace = list(state["trace"])
    trace[-1] = {**trace[-1], "update": {"by": how, "candidates": cands[:6], "chosen": nxt}}
    return {"next_window": nxt, "iteration": it + 1, "llm_errors": errors, "trace": trace}

def fallback(state: KGIRAGState, *, build: _Build) -> dict[str, Any]:
    s = state["settings"]
    plan = _plan(state)
    verdict = state["verdict"]
    errors = list(state.get("llm_errors") or [])
    answer = verdict["answer"] or verdict["guess"]
    model = _llm(build, s)
    if model is not None and s["method"] != "no-check":
        facts, _ = engine.contradiction_filter(state["facts"])
        user = f"Question: {state['current']}\nPlan: {json.dumps(plan.to_dict())}\nFacts:\n{_facts_block(facts)}"
        reply = ask_json(model, FALLBACK_SYSTEM, user, FALLBACK_SCHEMA, "fallback", errors)
        if isinstance(reply, dict) and engine.normalize_answer(reply.get("answer"), plan) is not None:
            answer = engine.normalize_answer(reply.get("answer"), plan)
        elif reply is not None:
            record_fallback("kg_irag.fallback", f"unreadable answer {reply!r}")
            errors.append("fallback: unreadable answer")
    elif model is not None and s["method"] == "no-check":
        ja = engine.normalize_answer(state["judged"].get("answer"), plan)
        answer = ja or answer
    by = {"kg-irag": "t-max", "single-pass": "single-pass", "limited": "budget",
          "no-check": "fixed-steps"}[s["method"]]
    return {"judged": {**state["judged"], "answer": answer}, "stopped_by": by, "llm_errors": errors}

def synthesize(state: KGIRAGState, *, build: _Build) -> dict[str, Any]:
    s = state["settings"]
    plan = _plan(state)
    facts, _ = engine.contradiction_filter(state["facts"])
    answer = engine.normalize_answer(state["judged"].get("answer"), plan) or "no answer"
    decisive = state["verdict"].get("decisive", plan.anchor)
    if answer not in ("yes", "no", "no need", "no answer"):
        from chronorag.graphs.time import parse_time

        decisive = parse_time(answer).lo
    weighted, rationale = engine.synthesize(plan, answer, facts, decisive, gamma=float(s["gamma"]))
    errors = list(state.get("llm_errors") or [])
    model = _llm(build, s)
    if model is not None:
        top = "\n".join(f"{w['weight']:.3f} {w['text']}" for w in weighted[:12])
        user = f"Question: {state['current']}\nVerified answer: {answer}\nWeighted facts:\n{top}"
        reply = ask_json(model, SYNTH_SYSTEM, user, SYNTH_SCHEMA, "synthesize", errors)
        if isinstance(reply, dict):
            said = engine.normalize_answer(reply.get("answer"), plan)
            if said is not None and said != answer:
                record_fallback("kg_irag.synthesize", f"synthesis changed the answer {answer!r} -> {said!r}")
                errors.append(f"synthesize: kept the verified answer {answer!r}, not {said!r}")
            text = str(reply.get("rationale") or "")
            if text and any(w["id"] in text for w in weighted[:12]):
                rationale = text
    stopped = state.get("stopped_by") or ("single-pass" if s["method"] == "single-pass" else
                                           "stop-rule" if state["stop"] else "fixed-steps")
    return {"answer": answer, "rationale": rationale, "cited": weighted[:5],
            "evidence": [f["text"] for f in facts], "evidence_ids": [f["id"] for f in facts],
            "iterations": state["iteration"] + 1, "stopped_by": stopped, "llm_errors": errors,
            "messages": [AIMessage(f"{answer}\n\n{rationale}")]}


def build_graph(*, kg: RecordKG | None = None, llm: LLMLike = None, checkpointer: Checkpointer = None,
                **settings: Any) -> CompiledStateGraph[Any, Any, Any, Any]:
    """Compile the KG-iRAG graph.

    Parameters
    ----------
    kg : RecordKG, optional
        The KG to answer over; default: built from the context's ``source`` on first use.
    llm : object, optional
        Anything :func:`~chronorag.integrations.llm.resolve_llm` accepts (LlamaIndex LLM,
        LangChain chat model, ``LLMConfig``); ``None``: ``Settings.llm`` or the
        ``CHRONORAG_*`` environment, else the documented no-LLM mode.
    checkpointer : optional
        A LangGraph checkpointer (``InMemorySaver``...); each run on a thread resets its state.
    **settings
        Defaults for the :class:`~chronorag.workflows.kg_irag.state.KGIRAGContext`
        fields (``method``, ``t_max``, ``theta``, ``gamma``, ``lam``, ``radius_km``, ...);
        a run's context overrides them field by field.

    Raises
    ------
    ConfigError
        For an unknown setting or a bad value.
    LLMError
        For an LLM object of an unknown type.
    """
    unknown = set(settings) - {f.name for f in fields(KGIRAGContext)}
    if unknown:
        raise ConfigError(f"unknown KG-iRAG settings {sorted(unknown)}; known: "
                          f"{sorted(f.name for f in fields(KGIRAGContext))}")
    defaults = KGIRAGContext(**settings)
    if llm is not None:
        resolve_llm(llm)  # an unknown object fails here, never silently later
    b = _Build(defaults=defaults, kg=kg, llm=llm, source_given="source" in settings)

    g = StateGraph(KGIRAGState, context_schema=KGIRAGContext, input_schema=KGIRAGInput,
                   output_schema=KGIRAGOutput)
    g.add_node("init", partial(init, build=b))
    g.add_node("retrieve", partial(retrieve, build=b))
    g.add_node("judge", partial(judge, build=b))
    g.add_node("update", partial(update, build=b))
    g.add_node("fallback", partial(fallback, build=b))
    g.add_node("synthesize", partial(synthesize, build=b))
    g.add_node("start", start)
    g.add_edge(START, "start")
    g.add_edge("start", "init")
    g.add_conditional_edges("init", route_init, {"retrieve": "retrieve", "__end__": END})
    g.add_edge("retrieve", "judge")
    g.add_conditional_edges("judge", route_judge, {"synthesize": "synthesize", "update": "update",
                                                   "fallback": "fallback"})
    g.add_edge("update", "retrieve")
    g.add_edge("fallback", "synthesize")
    g.add_edge("synthesize", END)
    return g.compile(checkpointer=checkpointer)


graph = build_graph()
