"""Prompts of the KG-iRAG agents (LLM1 planner, LLM2 verifier), with their JSON schemas."""

from __future__ import annotations

__all__ = ["FALLBACK_SCHEMA", "FALLBACK_SYSTEM", "INIT_SCHEMA", "INIT_SYSTEM", "JUDGE_SCHEMA", "JUDGE_SYSTEM",
           "SYNTH_SCHEMA", "SYNTH_SYSTEM", "UPDATE_SCHEMA", "UPDATE_SYSTEM"]

INIT_SYSTEM = """You are the planner of a retrieval loop over time-stamped sensor records.
Read the user's question and fill in a retrieval plan.
Known places: {places}. Known abnormal events: {events}. Each record covers {cadence} minutes.
Question types: "q1" asks whether a planned window [start, start + duration) meets the event;
"q2" asks for the latest start before the planned one (within the horizon) whose window is free
of the event; "q3" asks for the earliest later start (within the horizon) that is free of it.
"polarity" is "detect" when a yes answer means the event happens, "avoid" when yes means it does not.
Reply with one JSON object and nothing else:
{{"type": "q1|q2|q3", "place": "...", "event": "...", "anchor": "YYYY-MM-DDTHH:MM",
  "duration": <minutes>, "horizon": <minutes, 0 for q1>, "polarity": "avoid|detect"}}"""

INIT_SCHEMA = {
    "type": "object",
    "properties": {
        "type": {"type": "string", "enum": ["q1", "q2", "q3"]},
        "place": {"type": "string"}, "event": {"type": "string"}, "anchor": {"type": "string"},
        "duration": {"type": "integer"}, "horizon": {"type": "integer"},
        "polarity": {"type": "string", "enum": ["avoid", "detect"]},
    },
    "required": ["type", "place", "event", "anchor", "duration", "horizon", "polarity"],
}

UPDATE_SYSTEM = """You steer a retrieval loop over time-stamped records. The question is not settled yet.
You see the plan, the time already covered, the nearest start still undecided, and candidate windows
to fetch next (with the share of each that was already fetched). For every candidate estimate, between
0 and 1, how much fetching it would help settle the question. Reply with JSON only:
{"gains": [<one number per candidate, in order>]}"""

UPDATE_SCHEMA = {"type": "object", "properties": {"gains": {"type": "array", "items": {"type": "number"}}},
                 "required": ["gains"]}

JUDGE_SYSTEM = """You verify answers about time windows from retrieved facts. Each fact gives a record's
interval [start, end), its place and value, and "=> <event>" when the event occurred in it. Time without
any record counts as free of the event. Answer only from the facts.
q1 answers are "yes" or "no"; q2/q3 answers are a start time (YYYY-MM-DDTHH:MM, or YYYY-MM-DD for daily
records), "no need" (the planned window is already free) or "no answer" (no free window in the horizon).
Say how confident you are that the facts are enough (0 to 1) and whether the intervals you rely on are
consistent with the question (the answer window before the plan for q2, after it for q3).
Reply with JSON only: {"answer": "...", "confidence": <0..1>, "consistent": true|false, "reason": "..."}"""

JUDGE_SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "confidence": {"type": "number"},
                   "consistent": {"type": "boolean"}, "reason": {"type": "string"}},
    "required": ["answer", "confidence", "consistent"],
}

FALLBACK_SYSTEM = """The retrieval budget is spent. From the facts below, give the best answer the
evidence supports for the question (same answer forms as before) and say briefly why.
Reply with JSON only: {"answer": "...", "reason": "..."}"""

FALLBACK_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "reason": {"type": "string"}},
                   "required": ["answer"]}

SYNTH_SYSTEM = """Write the final reply. You get the question, the verified answer and the retrieved
facts weighted by closeness to the decisive time (heaviest first). Keep the answer, and write a short
rationale (one or two sentences) that cites the fact ids it relies on.
Reply with JSON only: {"answer": "...", "rationale": "..."}"""

SYNTH_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}, "rationale": {"type": "string"}},
                "required": ["answer", "rationale"]}
