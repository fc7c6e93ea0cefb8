"""Held-out free-wording questions: a second, independently written set (not the templates of
``free_wording.py``), over ICEWS14 and over a small "civic" KG with its own relation names.

Written before reading ``free_wording.py``'s templates, to measure whether the question
understanding generalises. Every gold answer comes from the event store (never typed by
hand); a question is kept only when its gold does not depend on a reading choice (ties at the
top of a "most often", events on the same first day with different answers, a count that
differs between events and days, a relative window whose edge day changes the answer).

Each question has a ``split``: ``dev`` (may be looked at while fixing) or ``test`` (only
scored, never read while fixing), assigned by a fixed hash of the question text.

Usage (repo root, .venv active)::

    python benchmarks/free_wording_heldout.py civic-kg --out OUT/civic.tsv
    chronorag -q ingest OUT/civic.tsv --out OUT/civic [--encoder static]
    chronorag -q star-rag build OUT/civic
    python benchmarks/free_wording_heldout.py build --icews ICEWS14_INDEX --civic OUT/civic --out OUT
    python benchmarks/free_wording_heldout.py run --method tools --questions OUT/icews14.jsonl \
        --index ICEWS14_INDEX --out OUT/runs/tools-icews14.jsonl
    python benchmarks/free_wording_heldout.py score OUT/runs/tools.jsonl [--split test]
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import random
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

# the runner, the outcome rule and the table are the first set's (only the questions are new)
from free_wording import outcome, print_table, run

# ----------------------------------------------------------------------------- the civic KG
COMPANIES = ["Norvale Systems", "Quillon Labs", "Brightwater Foods", "Tessaro Motors", "Helix Freight",
             "Amberline Media", "Corvid Analytics", "Pinecrest Bank"]
PEOPLE = ["Marta Okonkwo", "Julian Reyes", "Priya Raman", "Tomas Lindqvist", "Wei-Lin Chen", "Aisha Bello",
          "Henrik Dahl", "Sofia Marchetti", "Dmitri Volkov", "Grace Mwangi"]
PLACES = ["Port Elsby", "Lakeshore City", "Marrow Bay", "Northfield"]
CHARITIES = ["Riverside Hospital", "Coastal Wildlife Trust", "Northfield University", "Harbour Food Bank"]
# relation: (subject kinds, object kinds, events)
CIVIC_RELATIONS = {
    "acquired": (COMPANIES, COMPANIES, 40),
    "collaborated_with": (COMPANIES, COMPANIES + CHARITIES, 70),
    "filed_lawsuit_against": (COMPANIES, COMPANIES, 40),
    "appointed": (COMPANIES, PEOPLE, 45),
    "telephoned": (PEOPLE, PEOPLE, 90),
    "publicly_criticized": (PEOPLE, PEOPLE + COMPANIES, 90),
    "hosted": (PLACES, PEOPLE, 60),
    "toured": (PEOPLE, PLACES, 70),
    "donated_to": (PEOPLE, CHARITIES, 45),
}


def civic_kg(out: Path, seed: int = 11) -> int:
    """Write the civic KG (TSV: subject, relation, object, day; 2021-2023) and return its size."""
    rng = random.Random(seed)
    lo = dt.date(2021, 1, 1).toordinal()
    hi = dt.date(2023, 12, 31).toordinal()
    rows = set()
    for rel, (subs, objs, n) in CIVIC_RELATIONS.items():
        while sum(1 for r in rows if r[1] == rel) < n:
            s = rng.choice(subs)
            o = rng.choice([x for x in objs if x != s])
            day = dt.date.fromordinal(rng.randint(lo, hi)).isoformat()
            rows.add((s, rel, o, day))
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w") as fh:
        for r in sorted(rows, key=lambda r: (r[3], r[0], r[1], r[2])):
            fh.write("\t".join(r) + "\n")
    return len(rows)


# ----------------------------------------------------------------------------- verbs users type
# (base, past, participle, particle after the object) -> the KG relation; participle None: no passive
Verb = tuple[str, str, "str | None", str]
ICEWS_VERBS: dict[str, list[Verb]] = {
    "Make a visit": [("visit", "visited", "visited", ""), ("travel to", "travelled to", None, ""),
                     ("go to", "went to", None, ""), ("pay a visit to", "paid a visit to", None, "")],
    "Host a visit": [("host", "hosted", "hosted", ""), ("welcome", "welcomed", "welcomed", ""),
                     ("receive", "received", "received", "")],
    "Criticize or denounce": [("criticise", "criticised", "criticised", ""), ("slam", "slammed", "slammed", ""),
                              ("condemn", "condemned", "condemned", ""), ("blast", "blasted", "blasted", "")],
    "Praise or endorse": [("praise", "praised", "praised", ""), ("commend", "commended", "commended", ""),
                          ("laud", "lauded", "lauded", "")],
    "Accuse": [("accuse", "accused", "accused", ""), ("blame", "blamed", "blamed", "")],
    "Discuss by telephone": [("phone", "phoned", "phoned", ""), ("call", "called", "called", ""),
                             ("talk on the phone with", "talked on the phone with", None, "")],
    "Sign formal agreement": [("sign a deal with", "signed a deal with", None, ""),
                              ("sign an agreement with", "signed an agreement with", None, ""),
                              ("ink a deal with", "inked a deal with", None, "")],
    "Engage in negotiation": [("negotiate with", "negotiated with", None, ""),
                              ("hold talks with", "held talks with", None, "")],
    "Arrest, detain, or charge with legal action": [("arrest", "arrested", "arrested", ""),
                                                    ("detain", "detained", "detained", "")],
    "Use conventional military force": [("attack", "attacked", "attacked", ""), ("strike", "struck", "struck", "")],
    "Abduct, hijack, or take hostage": [("kidnap", "kidnapped", "kidnapped", ""),
                                        ("abduct", "abducted", "abducted", "")],
    "Threaten": [("threaten", "threatened", "threatened", ""), ("warn", "warned", "warned", "")],
    "Make an appeal or request": [("appeal to", "appealed to", None, ""), ("urge", "urged", "urged", "")],
    "Consult": [("consult", "consulted", "consulted", ""), ("consult with", "consulted with", None, "")],
}
CIVIC_VERBS: dict[str, list[Verb]] = {
    "acquired": [("take over", "took over", "taken over", ""), ("buy", "bought", "bought", ""),
                 ("purchase", "purchased", "purchased", "")],
    "collaborated_with": [("team up with", "teamed up with", None, ""), ("partner with", "partnered with", None, ""),
                          ("join forces with", "joined forces with", None, ""), ("work with", "worked with", None, "")],
    "filed_lawsuit_against": [("sue", "sued", "sued", ""), ("take", "took", "taken", " to court")],
    "appointed": [("hire", "hired", "hired", ""), ("name", "named", "named", " as CEO"),
                  ("appoint", "appointed", "appointed", "")],
    "telephoned": [("phone", "phoned", "phoned", ""), ("call", "called", "called", ""), ("ring", "rang", "rung", "")],
    "publicly_criticized": [("slam", "slammed", "slammed", ""), ("criticise", "criticised", "criticised", ""),
                            ("attack", "attacked", "attacked", "")],
    "hosted": [("host", "hosted", "hosted", ""), ("welcome", "welcomed", "welcomed", "")],
    "toured": [("visit", "visited", "visited", ""), ("travel to", "travelled to", None, ""),
               ("go to", "went to", None, "")],
    "donated_to": [("donate to", "donated to", None, ""), ("give money to", "gave money to", None, ""),
                   ("fund", "funded", "funded", "")],
}
ICEWS_NOT_IN_KG = ["Emmanuel Macron", "Jacinda Ardern", "Olaf Scholz", "Giorgia Meloni", "Rishi Sunak"]
CIVIC_NOT_IN_KG = ["Orbis Telecom", "Lena Hartmann", "Kestrel Airlines", "Rafael Ortiz"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


# ----------------------------------------------------------------------------- gold from the store
class Store:
    """All events of an index as (subject, relation, object, day) rows, from its event store."""

    def __init__(self, index_dir: str) -> None:
        from chronorag.graphs.event_index import EventIndex

        s = EventIndex.load(index_dir).store
        self.rows = [(s.entities[s.subject[i]], s.relations[s.relation[i]], s.entities[s.object[i]],
                      s.time_text(int(i)).split("/")[0]) for i in range(len(s))]
        days = [r[3] for r in self.rows]
        self.lo, self.hi = min(days), max(days)
        self.entities = set(s.entities)

    def q(self, *, s: str | None = None, r: str, o: str | None = None, lo: str = "0000", hi: str = "9999"
          ) -> list[tuple[str, str, str, str]]:
        """Rows matching names, with the day in ``[lo, hi]`` (prefix compare: "2014-03" covers March)."""
        return sorted((x for x in self.rows if x[1] == r and (s is None or x[0] == s) and (o is None or x[2] == o)
                       and lo <= x[3][: len(lo)] and x[3][: len(hi)] <= hi), key=lambda x: x[3])


def _hash_split(text: str) -> str:
    return "test" if int(hashlib.sha1(text.encode()).hexdigest(), 16) % 2 else "dev"


def _typo(name: str, rng: random.Random) -> str:
    """One letter dropped or doubled inside the longest word (kept >= 5 letters)."""
    words = name.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    if len(w) < 5:
        return name
    j = rng.randint(2, len(w) - 2)
    words[i] = w[:j] + w[j + 1:] if rng.random() < 0.5 else w[:j] + w[j] + w[j:]
    return " ".join(words)


def _polite(q: str, rng: random.Random) -> str:
    style = rng.randint(0, 5)
    low = q[0].lower() + q[1:]
    if style == 0:
        return "Could you please tell me " + low.rstrip("?") + "?"
    if style == 1:
        return "hey, " + low
    if style == 2:
        return "I'd like to know: " + low
    if style == 3:
        return q.rstrip("?") + ", please?"
    if style == 4:
        return "Quick question - " + low
    return q


def _month_name(ym: str) -> str:
    y, m = ym.split("-")[:2]
    return f"{MONTHS[int(m) - 1]} {y}"


class Gen:
    """Question generator for one KG."""

    def __init__(self, st: Store, verbs: dict[str, list[Verb]], *, kg: str, seed: int,
                 subjects: dict[str, list[str]], missing: list[str]) -> None:
        self.st, self.verbs, self.kg = st, verbs, kg
        self.rng = random.Random(seed)
        self.subjects = subjects  # relation -> natural subject names (as users type them)
        self.missing = missing
        self.year = st.hi[:4]
        self.out: list[dict[str, Any]] = []
        self.seen: set[str] = set()

    def add(self, cat: str, question: str, answers: list[str] | None, **meta: Any) -> None:
        if question in self.seen:
            return
        self.seen.add(question)
        self.out.append({"id": f"{self.kg}-{len(self.out):03d}", "kg": self.kg, "category": cat,
                         "question": question, "answers": answers, "split": _hash_split(question), **meta})

    def verb(self, rel: str, *, passive: bool = False) -> Verb:
        vs = [v for v in self.verbs[rel] if not passive or v[2] is not None]
        return self.rng.choice(vs or self.verbs[rel])

    def pick(self, rel: str, *, min_rows: int = 3, lo: str = "0000", hi: str = "9999") -> str | None:
        cands = [e for e in self.subjects[rel] if len(self.st.q(s=e, r=rel, lo=lo, hi=hi)) >= min_rows]
        return self.rng.choice(cands) if cands else None

    # ---- helpers over rows
    @staticmethod
    def first_answer(rows: list[tuple[str, str, str, str]], side: int, last: bool = False) -> list[str] | None:
        if not rows:
            return None
        day = rows[-1][3] if last else rows[0][3]
        ans = sorted({r[side] for r in rows if r[3] == day})
        return ans if len(ans) == 1 else None  # same-day ties: drop the question

    def months_with(self, rel: str, e: str, *, side: int = 0) -> list[str]:
        rows = self.st.q(s=e, r=rel) if side == 0 else self.st.q(o=e, r=rel)
        return sorted({r[3][:7] for r in rows})

    def rels(self) -> list[str]:
        return list(self.verbs)

    def subjects_all(self) -> list[str]:
        return sorted({e for v in self.subjects.values() for e in v})


def generate(g: Gen, n: int) -> None:
    """Add up to ``n`` questions to ``g``, the categories in turn."""
    rels = g.rels()
    years = sorted({r[3][:4] for r in g.st.rows})
    cycle = ["select", "select", "when", "first_last", "first_last", "calendar", "calendar",
             "relative", "count", "count_distinct", "most_often", "yes_no", "yes_no", "exclusion",
             "passive", "before_after", "lowercase", "typo", "contraction", "not_in_kg",
             "out_of_range", "ambiguous_date"]
    slot, tries = 0, 0
    while len(g.out) < n and slot < 10 * n:
        cat = cycle[slot % len(cycle)]
        tries += 1
        before = len(g.out)
        _one(g, cat, rels, years)
        if len(g.out) > before or tries >= 300:
            slot, tries = slot + 1, 0


def _one(g: Gen, cat: str, rels: list[str], years: list[str]) -> None:  # noqa: C901 - one block per category
    """Try to add one question of category ``cat`` (returns without one when the draw does not fit)."""
    st, rng = g.st, g.rng
    rel = rng.choice(rels)
    v = g.verb(rel)
    base, past, part, tail = v
    yr = rng.choice(years)
    if cat == "select":
        e = g.pick(rel, min_rows=2, lo=yr, hi=yr)
        if not e:
            return
        months = sorted({r[3][:7] for r in st.q(s=e, r=rel, lo=yr, hi=yr)})
        ym = rng.choice(months)
        gold = sorted({r[2] for r in st.q(s=e, r=rel, lo=ym, hi=ym)})
        if len(gold) != 1:
            return
        forms = [f"Who did {e} {base}{tail} in {_month_name(ym)}?",
                 f"In {_month_name(ym)}, whom did {e} {base}{tail}?",
                 f"{e} {past} who{tail} in {_month_name(ym)}?",
                 f"who did {e} {base}{tail} during {_month_name(ym)}",
                 f"Which one did {e} {base}{tail} in {_month_name(ym)}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base)
    elif cat == "when":
        e = g.pick(rel, min_rows=2)
        if not e:
            return
        o = rng.choice(sorted({r[2] for r in st.q(s=e, r=rel)}))
        rows = st.q(s=e, r=rel, o=o)
        last = rng.random() < 0.4
        day = rows[-1][3] if last else rows[0][3]
        w = "last" if last else "first"
        forms = [f"When did {e} {w} {base} {o}{tail}?", f"On what date did {e} {w} {base} {o}{tail}?",
                 f"What was the {'latest' if last else 'earliest'} date {e} {past} {o}{tail}?",
                 f"when was the {w} time {e} {past} {o}{tail}"]
        if len(rows) == 1:
            forms.append(f"When did {e} {base} {o}{tail}?")
        g.add(cat, _polite(rng.choice(forms), rng), [day], relation=rel, verb=base)
    elif cat == "first_last":
        e = g.pick(rel, min_rows=3, lo=yr, hi=yr)
        if not e:
            return
        last = rng.random() < 0.5
        gold = g.first_answer(st.q(s=e, r=rel, lo=yr, hi=yr), 2, last)
        if not gold:
            return
        w = rng.choice(["last", "most recently"] if last else ["first", "earliest"])
        if w == "most recently":
            forms = [f"Who did {e} most recently {base}{tail} in {yr}?"]
        elif w == "earliest":
            forms = [f"Who was the earliest that {e} {past}{tail} in {yr}?"]
        else:
            forms = [f"Who did {e} {base}{tail} {w} in {yr}?", f"In {yr}, who did {e} {w} {base}{tail}?",
                     f"Who was the {w} one {e} {past}{tail} in {yr}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base)
    elif cat == "calendar":
        kind = rng.choice(["half", "quarter", "range", "between_dates", "since"])
        if kind == "half":
            h = rng.choice([1, 2])
            lo, hi = (f"{yr}-01", f"{yr}-06") if h == 1 else (f"{yr}-07", f"{yr}-12")
            phrase = f"in the {'first' if h == 1 else 'second'} half of {yr}"
        elif kind == "quarter":
            k = rng.randint(1, 4)
            lo, hi = f"{yr}-{3 * k - 2:02d}", f"{yr}-{3 * k:02d}"
            phrase = rng.choice([f"in Q{k} {yr}", f"in the {['first', 'second', 'third', 'fourth'][k - 1]} quarter of {yr}"])
        elif kind == "range":
            a = rng.randint(1, 10)
            b = a + rng.randint(1, 2)
            lo, hi = f"{yr}-{a:02d}", f"{yr}-{b:02d}"
            phrase = rng.choice([f"between {MONTHS[a - 1]} and {MONTHS[b - 1]} {yr}",
                                 f"from {MONTHS[a - 1]} to {MONTHS[b - 1]} {yr}"])
        elif kind == "between_dates":
            a = dt.date(int(yr), rng.randint(1, 9), rng.randint(1, 28))
            b = a + dt.timedelta(days=rng.randint(20, 80))
            lo, hi = a.isoformat(), b.isoformat()
            phrase = f"between {lo} and {hi}"
        else:
            m = rng.randint(6, 11)
            lo, hi = f"{years[-1]}-{m:02d}", "9999"
            phrase = f"since {MONTHS[m - 1]} {years[-1]}"
        e = g.pick(rel, min_rows=2, lo=lo, hi=hi)
        if not e:
            return
        last = rng.random() < 0.5
        rows = st.q(s=e, r=rel, lo=lo, hi=hi)
        gold = g.first_answer(rows, 2, last)
        if not gold or len(rows) < 2:
            return
        w = "last" if last else "first"
        forms = [f"Who did {e} {w} {base}{tail} {phrase}?", f"{phrase[0].upper() + phrase[1:]}, who did {e} {base}{tail} {w}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base, window=[lo, hi])
    elif cat == "relative":
        ref = dt.date.fromisoformat(st.hi)
        kind = rng.choice(["last_month", "this_year", "months_ago", "past_n", "last_year"])
        if kind == "last_month":
            d = (ref.replace(day=1) - dt.timedelta(days=1))
            lo = hi = d.isoformat()[:7]
            phrase = "last month"
        elif kind == "this_year":
            lo = hi = str(ref.year)
            phrase = "this year"
        elif kind == "months_ago":
            k = rng.choice([2, 3])
            m, y = ref.month - k, ref.year
            if m <= 0:
                m, y = m + 12, y - 1
            lo = hi = f"{y}-{m:02d}"
            phrase = f"{['', '', 'two', 'three'][k]} months ago"
        elif kind == "past_n":
            k = rng.choice([3, 6])
            # skip when the edge day would matter: use whole months [ref-k+1 .. ref] and check the edge
            m, y = ref.month - k, ref.year
            if m <= 0:
                m, y = m + 12, y - 1
            edge = dt.date(y, m, min(ref.day, 28)).isoformat()
            lo, hi = edge, ref.isoformat()
            phrase = f"in the past {['', '', '', 'three', '', '', 'six'][k]} months"
        else:
            lo = hi = str(ref.year - 1)
            phrase = "last year"
        e = g.pick(rel, min_rows=1, lo=lo, hi=hi) if lo[:4] in years else rng.choice(g.subjects[rel])
        if not e:
            return
        last = rng.random() < 0.5
        rows = st.q(s=e, r=rel, lo=lo, hi=hi)
        if kind == "past_n":  # the window's first day is read as inclusive or not: same answer needed
            rows2 = [r for r in rows if r[3] > lo]
            if g.first_answer(rows2, 2, last) != g.first_answer(rows, 2, last):
                return
        gold = g.first_answer(rows, 2, last) if rows else None
        if lo[:4] not in years:
            gold = None  # outside the KG: unknown
        elif not gold:
            return
        w = "last" if last else "first"
        forms = [f"Who did {e} {w} {base}{tail} {phrase}?", f"Who was the {w} one {e} {past}{tail} {phrase}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base, window=[lo, hi])
    elif cat in ("count", "count_distinct"):
        e = g.pick(rel, min_rows=2, lo=yr, hi=yr)
        if not e:
            return
        rows = st.q(s=e, r=rel, lo=yr, hi=yr)
        if cat == "count":
            o = rng.choice(sorted({r[2] for r in rows}))
            sub = [r for r in rows if r[2] == o]
            if len(sub) != len({r[3] for r in sub}):
                return  # events and days disagree
            forms = [f"How many times did {e} {base} {o}{tail} in {yr}?",
                     f"how often did {e} {base} {o}{tail} in {yr}",
                     f"In {yr}, how many times did {e} {base} {o}{tail}?"]
            g.add(cat, _polite(rng.choice(forms), rng), [str(len(sub))], relation=rel, verb=base)
        else:
            k = len({r[2] for r in rows})
            noun = rng.choice(["different parties", "distinct actors", "different ones"]) if g.kg == "icews14" \
                else rng.choice(["different parties", "distinct ones"])
            forms = [f"How many {noun} did {e} {base}{tail} in {yr}?"]
            g.add(cat, _polite(rng.choice(forms), rng), [str(k)], relation=rel, verb=base)
    elif cat == "most_often":
        e = g.pick(rel, min_rows=4, lo=yr, hi=yr)
        if not e:
            return
        c = Counter(r[2] for r in st.q(s=e, r=rel, lo=yr, hi=yr)).most_common(2)
        if len(c) < 2 or c[0][1] == c[1][1]:
            return
        forms = [f"Who did {e} {base}{tail} most often in {yr}?",
                 f"In {yr}, who did {e} {base}{tail} the most?",
                 f"Who did {e} {base}{tail} most frequently in {yr}?"]
        g.add(cat, _polite(rng.choice(forms), rng), [c[0][0]], relation=rel, verb=base)
    elif cat == "yes_no":
        e = g.pick(rel, min_rows=2, lo=yr, hi=yr)
        if not e:
            return
        objs_year = sorted({r[2] for r in st.q(s=e, r=rel, lo=yr, hi=yr)})
        if rng.random() < 0.5:
            o, gold = rng.choice(objs_year), "yes"
        else:
            # a partner e has with this relation in another year, but not in yr
            others = sorted({r[2] for r in st.q(s=e, r=rel)} - set(objs_year))
            if not others:
                return
            o, gold = rng.choice(others), "no"
        forms = [f"Did {e} {base} {o}{tail} in {yr}?", f"did {e} {base} {o}{tail} at all in {yr}?",
                 f"Is it true that {e} {past} {o}{tail} in {yr}?"]
        g.add(cat, _polite(rng.choice(forms), rng), [gold], relation=rel, verb=base)
    elif cat == "exclusion":
        e = g.pick(rel, min_rows=3, lo=yr, hi=yr)
        if not e:
            return
        rows = st.q(s=e, r=rel, lo=yr, hi=yr)
        if len({r[2] for r in rows}) < 2:
            return
        x = rows[0][2]
        rest = [r for r in rows if r[2] != x]
        gold = g.first_answer(rest, 2)
        if not gold or len({r[2] for r in rows if r[3] == rows[0][3]}) != 1:
            return
        forms = [f"Apart from {x}, who did {e} first {base}{tail} in {yr}?",
                 f"Who did {e} {base}{tail} first in {yr}, other than {x}?",
                 f"Excluding {x}, who was the first one {e} {past}{tail} in {yr}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base)
    elif cat == "passive":
        v = g.verb(rel, passive=True)
        if v[2] is None:
            return
        base, past, part, tail = v
        objs = sorted({r[2] for r in st.q(r=rel, lo=yr, hi=yr)} & set(g.subjects_all()))
        cands = [o for o in objs if len(st.q(r=rel, o=o, lo=yr, hi=yr)) >= 2]
        if not cands:
            return
        o = rng.choice(cands)
        last = rng.random() < 0.4
        gold = g.first_answer(st.q(r=rel, o=o, lo=yr, hi=yr), 0, last)
        if not gold:
            return
        w = "last" if last else "first"
        forms = [f"By whom was {o} {part}{tail} {w} in {yr}?", f"Who was {o} {w} {part}{tail} by in {yr}?",
                 f"In {yr}, {o} was {w} {part}{tail} by whom?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base)
    elif cat == "before_after":
        # an anchor event that happened exactly once: "after X <verb2> Y"
        e = g.pick(rel, min_rows=4, lo=yr, hi=yr)
        if not e:
            return
        rows = st.q(s=e, r=rel, lo=yr, hi=yr)
        pairs = Counter((r[2]) for r in st.q(s=e, r=rel))
        singles = [r for r in rows[1:-1] if pairs[r[2]] == 1]
        if not singles:
            return
        anc = rng.choice(singles)
        after = rng.random() < 0.5
        if after:
            rest = [r for r in rows if r[3] > anc[3]]
            gold = g.first_answer(rest, 2)
        else:
            rest = [r for r in rows if r[3] < anc[3]]
            gold = g.first_answer(rest, 2, last=True)
        if not gold:
            return
        if after:
            forms = [f"Who did {e} {base}{tail} first after {anc[2]}?",
                     f"After {anc[2]}, who was the first one {e} {past}{tail}?"]
        else:
            forms = [f"Who did {e} {base}{tail} last before {anc[2]}?",
                     f"Right before {anc[2]}, who did {e} last {base}{tail}?"]
        g.add(cat, _polite(rng.choice(forms), rng), gold, relation=rel, verb=base, anchor=anc[3])
    elif cat in ("lowercase", "typo", "contraction"):
        e = g.pick(rel, min_rows=3, lo=yr, hi=yr)
        if not e:
            return
        last = rng.random() < 0.5
        gold = g.first_answer(st.q(s=e, r=rel, lo=yr, hi=yr), 2, last)
        if not gold:
            return
        w = "last" if last else "first"
        if cat == "lowercase":
            qs = f"who did {e} {w} {base}{tail} in {yr}".lower() + rng.choice(["?", ""])
        elif cat == "typo":
            te = _typo(e, rng)
            if te == e:
                return
            qs = f"Who did {te} {w} {base}{tail} in {yr}?"
        else:
            qs = rng.choice([f"Who's the {w} one {e} {past}{tail} in {yr}?",
                             f"What's the name of the {w} one {e} {past}{tail} in {yr}?",
                             f"who'd {e} {base}{tail} {w} in {yr}?"])
        g.add(cat, _polite(qs, rng), gold, relation=rel, verb=base)
    elif cat == "not_in_kg":
        e = rng.choice(g.missing)
        if e in st.entities:
            return
        forms = [f"Who did {e} {base}{tail} first in {yr}?", f"When did {e} last {base} {rng.choice(g.subjects[rel])}{tail}?",
                 f"How many times did {e} {base}{tail} in {yr}?"]
        g.add(cat, rng.choice(forms), None, relation=rel, verb=base)
    elif cat == "out_of_range":
        e = rng.choice(g.subjects[rel])
        bad = rng.choice([str(int(years[0]) - 3), str(int(years[-1]) + 2), f"March {int(years[-1]) + 1}"])
        forms = [f"Who did {e} {base}{tail} in {bad}?", f"Who did {e} first {base}{tail} in {bad}?"]
        g.add(cat, rng.choice(forms), None, relation=rel, verb=base)
    elif cat == "ambiguous_date":
        e = g.pick(rel, min_rows=1, lo=yr, hi=yr)
        if not e:
            return
        a, b = rng.randint(1, 12), rng.randint(1, 12)
        if a == b:
            return
        forms = [f"Who did {e} {base}{tail} on {a:02d}/{b:02d}/{yr}?", f"who did {e} {base}{tail} on {a}/{b}/{yr}"]
        g.add(cat, rng.choice(forms), None, relation=rel, verb=base)


def icews_subjects(st: Store) -> dict[str, list[str]]:
    """Per relation: the 25 most active subjects whose names a user would type (no parentheses)."""
    out = {}
    for rel in ICEWS_VERBS:
        c = Counter(r[0] for r in st.rows if r[1] == rel and "(" not in r[0] and not r[0].isupper())
        out[rel] = [e for e, _ in c.most_common(25)]
    return out


def build(icews: str, civic: str, out: Path, seed: int = 2026) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for kg, idx, verbs, n in (("icews14", icews, ICEWS_VERBS, 154), ("civic", civic, CIVIC_VERBS, 88)):
        st = Store(idx)
        subjects = icews_subjects(st) if kg == "icews14" else {
            rel: sorted({r[0] for r in st.rows if r[1] == rel}) for rel in verbs}
        g = Gen(st, verbs, kg=kg, seed=seed, subjects=subjects,
                missing=ICEWS_NOT_IN_KG if kg == "icews14" else CIVIC_NOT_IN_KG)
        generate(g, n)
        with open(out / f"{kg}.jsonl", "w") as fh:
            for q in g.out:
                fh.write(json.dumps(q) + "\n")
        print(json.dumps({"kg": kg, "questions": len(g.out), "split": Counter(q["split"] for q in g.out),
                          "by_category": Counter(q["category"] for q in g.out)}))


# ----------------------------------------------------------------------------- run and score
def score(paths: list[str], split: str | None = None, by: str = "category") -> None:
    table: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for p in paths:
        label = Path(p).stem
        for line in open(p):
            r = json.loads(line)
            if split and r["split"] != split:
                continue
            o = outcome(r)
            for cat in (r[by], "ALL"):
                table[(label, cat)][o] += 1
    print_table(table, by)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("civic-kg")
    b.add_argument("--out", required=True)
    b = sub.add_parser("build")
    b.add_argument("--icews", required=True)
    b.add_argument("--civic", required=True)
    b.add_argument("--out", required=True)
    b = sub.add_parser("run")
    b.add_argument("--method", required=True)
    b.add_argument("--questions", required=True)
    b.add_argument("--index", required=True)
    b.add_argument("--out", required=True)
    b = sub.add_parser("score")
    b.add_argument("runs", nargs="+")
    b.add_argument("--split", choices=["dev", "test"])
    b.add_argument("--by", default="category")
    a = ap.parse_args()
    if a.cmd == "civic-kg":
        print(json.dumps({"events": civic_kg(Path(a.out)), "out": a.out}))
    elif a.cmd == "build":
        build(a.icews, a.civic, Path(a.out))
    elif a.cmd == "run":
        run(a.method, a.questions, a.index, a.out)
    else:
        score(a.runs, a.split, a.by)


if __name__ == "__main__":
    main()
