"""Questions with a condition the no-LLM plan cannot hold: refused, or answered as another question?

Each question of the free-wording and held-out sets worded "Who did X <verb> ...?" is rewritten
with one condition that the question parser does not represent (a negation, a count condition,
"least", a season, a weekday, a per-period reading, an order other than first or last, a time
given by an event). The plan would have to drop that condition to answer, so every rewritten
question must be refused: its gold is ``null`` and any answer scores as confidently wrong
(``free_wording.py``'s scoring). The rewrites are this file's own templates; they measure
whether a dropped condition is reported, not whether it could be answered.

Usage (repo root, .venv active; the question files from ``free_wording.sh`` and
``free_wording_heldout.sh``)::

    python benchmarks/unreadable_conditions.py build --questions /tmp/fw/icews14.jsonl /tmp/fwh/q/icews14.jsonl \
        --out /tmp/uc/icews14.jsonl
    PYTHONPATH=SRC python benchmarks/free_wording.py run --method tools --questions /tmp/uc/icews14.jsonl \
        --index ICEWS14_INDEX --out R.jsonl
    python benchmarks/free_wording.py score R1.jsonl R2.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path


def _verbs() -> list[str]:
    """The verb phrases the two question sets ask with, longest first."""
    import free_wording
    import free_wording_heldout

    found = {v[0] for table in (free_wording.ICEWS_VERBS, free_wording.BUSINESS_VERBS,
                                free_wording_heldout.ICEWS_VERBS, free_wording_heldout.CIVIC_VERBS)
             for vs in table.values() for v in vs}
    return sorted(found, key=len, reverse=True)


# category -> the question with one condition added: (subject, verb phrase, the rest after it, time part)
_REWRITES = {
    "negation": lambda s, v, tail, t: f"Who did {s} not {v}{tail} {t}",
    "never": lambda s, v, tail, t: f"Who did {s} never {v}{tail} {t}",
    "count_condition": lambda s, v, tail, t: f"Who did {s} {v}{tail} at least twice {t}",
    "least": lambda s, v, tail, t: f"Who did {s} {v}{tail} the least {t}",
    "season": lambda s, v, tail, t: f"Who did {s} {v}{tail} in winter 2014",
    "weekday": lambda s, v, tail, t: f"Who did {s} {v}{tail} on a weekend {t}",
    "per_period": lambda s, v, tail, t: f"Who did {s} {v}{tail} every month {t}",
    "order": lambda s, v, tail, t: f"Who did {s} {v}{tail} second {t}",
    "event_time": lambda s, v, tail, t: f"Who did {s} {v}{tail} during the summit {t}",
}
# "Who did Ethiopia sign an agreement with in Q3 2014?" -> ("Ethiopia sign an agreement with", "in Q3 2014")
_FORM = re.compile(r"^Who did (.+?)(?:\s+((?:in|since|between|first|most)\b.*))?\?$")


def build(questions: list[str], out: str) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    verbs = _verbs()
    rows, seen = [], set()
    for path in questions:
        for line in open(path):
            q = json.loads(line)
            m = _FORM.match(q["question"])
            if not m or q.get("answers") is None or m.group(1) in seen:
                continue
            body, time_part = m.group(1), re.sub(r"^(?:first|most recently)\b\s*", "", m.group(2) or "")
            verb = next((v for v in verbs if re.search(rf"\s{re.escape(v)}(?:\s|$)", body)), None)
            if verb is None:
                continue
            seen.add(body)
            i = body.index(f" {verb}")
            subject, tail = body[:i], body[i + 1 + len(verb):]
            for cat, fn in _REWRITES.items():
                text = " ".join(fn(subject, verb, tail, time_part).split()) + "?"
                rows.append({"id": f"{q['id']}-{cat}", "kg": q.get("kg", ""), "category": cat, "question": text,
                             "answers": None})
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as fh:
        for r in rows:
            fh.write(json.dumps(r) + "\n")
    print(json.dumps({"out": out, "questions": len(rows), "stems": len(seen)}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build")
    b.add_argument("--questions", nargs="+", required=True)
    b.add_argument("--out", required=True)
    a = ap.parse_args()
    build(a.questions, a.out)


if __name__ == "__main__":
    main()
