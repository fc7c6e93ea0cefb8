"""Free-wording question set: questions typed the way users type them, gold answers from store queries.

Usage (repo root, .venv active)::

    # 1. the business KG (relations acquired, appointed_ceo, sued, ...) and its index
    python benchmarks/free_wording.py business-kg --out /tmp/fw/business.tsv
    chronorag -q ingest /tmp/fw/business.tsv --out /tmp/fw/business --encoder static
    # 2. the questions (gold answers from the indexes' stores)
    python benchmarks/free_wording.py build --icews INDEX14 --business /tmp/fw/business --out /tmp/fw
    # 3. answers of one method (run with the tree under test on PYTHONPATH)
    python benchmarks/free_wording.py run --method tools --questions /tmp/fw/icews14.jsonl --index INDEX14 --out R.jsonl
    # 4. correct / abstained / confidently wrong by category
    python benchmarks/free_wording.py score R1.jsonl R2.jsonl ...

The wording templates below are this file's own; they are not MultiTQ dev questions
reworded, and the verbs used to ask for a relation are chosen by hand per relation
(they are the *questions'* vocabulary and are never given to the system). A question
whose gold is ``null`` must be abstained on (an entity not in the KG, a date outside the
KG's range, an ambiguous numeric date, a day without a year that the KG's range does not
make unique). Scoring: *correct* = the top answer is a gold answer (or an abstention when
the gold is null); *abstained* = no answer although a gold answer exists; *wrong* = an
answer that is not gold (or any answer to an unanswerable question).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")

# how a person might ask for each relation: (verb infinitive, past tense, past participle)
ICEWS_VERBS = {
    "Make a visit": [("visit", "visited", "visited"), ("travel to", "travelled to", "travelled to"),
                     ("pay a visit to", "paid a visit to", "paid a visit")],
    "Host a visit": [("host", "hosted", "hosted"), ("receive", "received", "received")],
    "Criticize or denounce": [("criticize", "criticized", "criticized"), ("condemn", "condemned", "condemned"),
                              ("denounce", "denounced", "denounced"), ("slam", "slammed", "slammed")],
    "Praise or endorse": [("praise", "praised", "praised"), ("commend", "commended", "commended"),
                          ("endorse", "endorsed", "endorsed")],
    "Sign formal agreement": [("sign an agreement with", "signed an agreement with", "signed an agreement"),
                              ("sign a deal with", "signed a deal with", "signed a deal")],
    "Accuse": [("accuse", "accused", "accused"), ("blame", "blamed", "blamed")],
    "Discuss by telephone": [("phone", "phoned", "phoned"), ("call", "called", "called"),
                             ("talk on the phone with", "talked on the phone with", "talked on the phone")],
    "Threaten": [("threaten", "threatened", "threatened")],
    "Engage in negotiation": [("negotiate with", "negotiated with", "negotiated")],
    "Consult": [("consult", "consulted", "consulted"), ("hold consultations with", "held consultations with", "consulted")],
}
BUSINESS_VERBS = {
    "acquired": [("acquire", "acquired", "acquired"), ("buy", "bought", "bought"), ("take over", "took over", "taken over")],
    "appointed_ceo": [("appoint as CEO", "appointed as CEO", "appointed CEO"),
                      ("name as chief executive", "named as chief executive", "named chief executive")],
    "sued": [("sue", "sued", "sued"), ("take to court", "took to court", "taken to court")],
    "invested_in": [("invest in", "invested in", "invested in"), ("fund", "funded", "funded")],
    "partnered_with": [("partner with", "partnered with", "partnered with"), ("team up with", "teamed up with", "teamed up")],
    "fined": [("fine", "fined", "fined"), ("penalize", "penalized", "penalized")],
}
NOT_IN_KG = ["Emmanuel Macron", "Jacinda Ardern", "Olaf Scholz", "Rishi Sunak", "Giorgia Meloni",
             "Volodymyr Zelenskyy", "Kamala Harris", "Liz Truss"]

COMPANIES = ["Acme Robotics", "Borealis Foods", "Cobalt Systems", "Dunmore Bank", "Evergreen Energy", "Falcon Air",
             "Granite Telecom", "Harbor Logistics", "Ionic Labs", "Juniper Health", "Kestrel Motors", "Lumen Media",
             "Meridian Insurance", "Nimbus Cloud", "Orchid Pharma", "Pioneer Steel", "Quartz Analytics",
             "Redwood Capital", "Sapphire Retail", "Tidewater Shipping", "Umbra Security", "Vantage Games",
             "Willow Textiles", "Xenon Semiconductors"]
PEOPLE = ["Alice Moreau", "Bruno Castellanos", "Chiara Lindqvist", "Dmitri Okafor", "Elena Varga", "Farid Haddad",
          "Grace Nakamura", "Hugo Brennan", "Ingrid Solberg", "Jamal Osei", "Keiko Tanabe", "Lars Petersen"]
REGULATORS = ["Competition Authority", "Securities Commission", "Data Protection Office", "Energy Regulator"]


# ------------------------------------------------------------------ business KG
def business_kg(out: Path, seed: int = 7) -> int:
    """Write a small KG with non-CAMEO relation names (TSV: head, relation, tail, date)."""
    rng = random.Random(seed)
    lo, hi = dt.date(2018, 1, 1).toordinal(), dt.date(2020, 12, 31).toordinal()
    rows = set()

    def day() -> str:
        return dt.date.fromordinal(rng.randint(lo, hi)).isoformat()

    for _ in range(70):
        a, b = rng.sample(COMPANIES, 2)
        rows.add((a, "acquired", b, day()))
    for c in COMPANIES:
        for _ in range(rng.randint(1, 3)):
            rows.add((c, "appointed_ceo", rng.choice(PEOPLE), day()))
    for _ in range(90):
        a, b = rng.sample(COMPANIES + PEOPLE, 2)
        rows.add((a, "sued", b if b in COMPANIES else rng.choice(COMPANIES), day()))
    for _ in range(80):
        a, b = rng.sample(COMPANIES, 2)
        rows.add((a, "invested_in", b, day()))
        a, b = rng.sample(COMPANIES, 2)
        rows.add((a, "partnered_with", b, day()))
    for _ in range(40):
        rows.add((rng.choice(REGULATORS), "fined", rng.choice(COMPANIES), day()))
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w") as fh:
        for r in sorted(rows, key=lambda r: (r[3], r)):
            fh.write("\t".join(r) + "\n")
    return len(rows)


# ------------------------------------------------------------------ gold from the store
class Gold:
    def __init__(self, index_dir: str) -> None:
        from chronorag.graphs.event_index import EventIndex

        self.store = EventIndex.load(index_dir).store
        s = self.store
        self.lo = dt.date.fromordinal(int(s.t_lo.min()) // 1440 + 1)
        self.hi = dt.date.fromordinal((int(s.t_hi.max()) - 1) // 1440 + 1)

    def rows(self, *, head: str | None = None, rel: str, tail: str | None = None, begin: str = "-inf",
             end: str = "inf", kind: str = "in/on") -> list[tuple[str, str, str]]:
        s = self.store
        ids = s.query(subject=head, relation=rel, object=tail, begin_time=begin, end_time=end, type=kind)
        return [(s.entities[s.subject[i]], s.entities[s.object[i]], s.time_text(int(i)).split("/")[0]) for i in ids]


def _answers(rows: list[tuple[str, str, str]], side: int, order: str = "any", exclude: set[str] = frozenset()) -> list[str]:
    """Gold answers: every acceptable top answer (ties included)."""
    stats: dict[str, list[Any]] = {}
    for r in rows:
        n = r[side]
        if n in exclude:
            continue
        st = stats.setdefault(n, [0, r[2], r[2]])
        st[0] += 1
        st[1], st[2] = min(st[1], r[2]), max(st[2], r[2])
    if not stats:
        return []
    if order == "first":
        best = min(v[1] for v in stats.values())
        return sorted(n for n, v in stats.items() if v[1] == best)
    if order == "last":
        best = max(v[2] for v in stats.values())
        return sorted(n for n, v in stats.items() if v[2] == best)
    if order == "most":
        best = max(v[0] for v in stats.values())
        return sorted(n for n, v in stats.items() if v[0] == best)
    return sorted(stats)


def _typo(name: str, rng: random.Random) -> str:
    words = name.split()
    i = max(range(len(words)), key=lambda k: len(words[k]))
    w = words[i]
    j = rng.randint(1, len(w) - 2)
    w = w[:j] + w[j + 1:] if rng.random() < 0.5 else w[:j] + w[j] + w[j:]  # drop or double a letter
    words[i] = w
    return " ".join(words)


def build(gold: Gold, verbs: dict[str, list[tuple[str, str, str]]], *, kg: str, seed: int, n_per: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    s = gold.store
    years = list(range(gold.lo.year, gold.hi.year + 1))
    out: list[dict[str, Any]] = []
    # candidate (head, rel) and (rel, tail) with enough events
    by_head: dict[tuple[str, str], list] = defaultdict(list)
    by_tail: dict[tuple[str, str], list] = defaultdict(list)
    for rel in verbs:
        ids = s.find(relation=rel)
        for i in ids:
            h, t = s.entities[s.subject[i]], s.entities[s.object[i]]
            ti = s.time_text(int(i)).split("/")[0]
            by_head[(h, rel)].append((h, t, ti))
            by_tail[(t, rel)].append((h, t, ti))

    def good(d: dict, k: int) -> list:
        keys = [key for key, v in d.items() if len({r[1] if d is by_head else r[0] for r in v}) >= k
                and len(key[0]) > 3 and "(" not in key[0]]
        keys.sort()
        rng.shuffle(keys)
        return keys

    heads, tails = good(by_head, 3), good(by_tail, 3)

    def add(cat: str, q: str, answers: list[str] | None, **extra: Any) -> None:
        out.append({"id": f"{kg}-{len(out)}", "kg": kg, "category": cat, "question": q,
                    "answers": answers if answers else None, **extra})

    def verb(rel: str) -> tuple[str, str, str]:
        return rng.choice(verbs[rel])

    def month_of(rows: list) -> tuple[int, int]:
        y, m = rows[rng.randrange(len(rows))][2][:7].split("-")
        return int(y), int(m)

    hk = iter(heads * 3)
    tk = iter(tails * 3)
    for _ in range(n_per):
        # plain select in a month
        h, rel = next(hk)
        y, m = month_of(by_head[(h, rel)])
        a = _answers(gold.rows(head=h, rel=rel, begin=f"{y}-{m:02d}", end=f"{y}-{m:02d}"), 1)
        v = verb(rel)
        add("select", rng.choice([f"Who did {h} {v[0]} in {MONTHS[m - 1]} {y}?",
                                  f"In {MONTHS[m - 1]} {y}, who was {v[2]} by {h}?" if " " not in v[2] else
                                  f"Name someone {h} {v[1]} in {MONTHS[m - 1]} {y}."]), a)
        # first / last
        h, rel = next(hk)
        v = verb(rel)
        rows = gold.rows(head=h, rel=rel)
        add("first_last", f"Who did {h} {v[0]} first?", _answers(rows, 1, "first"))
        t, rel = next(tk)
        v = verb(rel)
        add("first_last", f"Who {v[1]} {t} most recently?", _answers(gold.rows(rel=rel, tail=t), 0, "last"))
        # when
        h, rel = next(hk)
        rows = gold.rows(head=h, rel=rel)
        t = rows[rng.randrange(len(rows))][1]
        v = verb(rel)
        pair = gold.rows(head=h, rel=rel, tail=t)
        add("when", rng.choice([f"When did {h} first {v[0]} {t}?", f"On what date did {h} last {v[0]} {t}?"]),
            None)
        first = out[-1]["question"].startswith("When")
        out[-1]["answers"] = [min(r[2] for r in pair)] if first else [max(r[2] for r in pair)]
        # exclusion
        h, rel = next(hk)
        y, _ = month_of(by_head[(h, rel)])
        rows = gold.rows(head=h, rel=rel, begin=str(y), end=str(y))
        top = _answers(rows, 1, "most")
        x = top[0]
        v = verb(rel)
        add("exclusion", rng.choice([f"Apart from {x}, who did {h} {v[0]} most often in {y}?",
                                     f"Who, other than {x}, did {h} {v[0]} most often in {y}?"]),
            _answers(rows, 1, "most", exclude={x}))
        # count (events and distinct)
        h, rel = next(hk)
        rows = gold.rows(head=h, rel=rel)
        t = rng.choice(sorted({r[1] for r in rows}))
        y = int(rng.choice([r[2] for r in rows if r[1] == t])[:4])
        n = len(gold.rows(head=h, rel=rel, tail=t, begin=str(y), end=str(y)))
        v = verb(rel)
        add("count", rng.choice([f"How many times did {h} {v[0]} {t} in {y}?", f"How often did {h} {v[0]} {t} during {y}?"]),
            [str(n)])
        t2, rel2 = next(tk)
        v = verb(rel2)
        y = int(by_tail[(t2, rel2)][0][2][:4])
        k = len({r[0] for r in gold.rows(rel=rel2, tail=t2, begin=str(y), end=str(y))})
        add("count", f"How many different parties {v[1]} {t2} in {y}?", [str(k)])
        # most frequent
        t, rel = next(tk)
        v = verb(rel)
        add("most_frequent", rng.choice([f"Who {v[1]} {t} most often?", f"Which party {v[1]} {t} the most?"]),
            _answers(gold.rows(rel=rel, tail=t), 0, "most"))
        # existence yes / no
        h, rel = next(hk)
        rows = gold.rows(head=h, rel=rel)
        r0 = rows[rng.randrange(len(rows))]
        y, m = int(r0[2][:4]), int(r0[2][5:7])
        v = verb(rel)
        add("exists", f"Did {h} {v[0]} {r0[1]} in {MONTHS[m - 1]} {y}?", ["yes"])
        months_with = {r[2][:7] for r in gold.rows(head=h, rel=rel, tail=r0[1])}
        free = [(yy, mm) for yy in years for mm in range(1, 13) if f"{yy}-{mm:02d}" not in months_with]
        yy, mm = rng.choice(free)
        add("exists", f"Did {h} {v[0]} {r0[1]} at all in {MONTHS[mm - 1]} {yy}?", ["no"])
        # passive
        t, rel = next(tk)
        v = rng.choice([x for x in verbs[rel] if " " not in x[2]] or [verb(rel)])
        rows = gold.rows(rel=rel, tail=t)
        add("passive", rng.choice([f"By whom was {t} {v[2]} first?", f"{t} was {v[2]} by whom most recently?"]), None)
        out[-1]["answers"] = _answers(rows, 0, "first" if "first" in out[-1]["question"] else "last")
        # calendar windows
        h, rel = next(hk)
        rows = by_head[(h, rel)]
        y = int(rows[0][2][:4])
        v = verb(rel)
        half = rng.choice([1, 2])
        b, e = (f"{y}-01", f"{y}-06") if half == 1 else (f"{y}-07", f"{y}-12")
        add("calendar", f"Who did {h} {v[0]} in the {'first' if half == 1 else 'second'} half of {y}?",
            _answers(gold.rows(head=h, rel=rel, begin=b, end=e, kind="between"), 1))
        qn = rng.choice([1, 2, 3, 4])
        add("calendar", f"Who did {h} {v[0]} in Q{qn} {y}?",
            _answers(gold.rows(head=h, rel=rel, begin=f"{y}-{3 * qn - 2:02d}", end=f"{y}-{3 * qn:02d}", kind="between"), 1))
        a1 = rng.choice([1, 3, 5, 7])
        add("calendar", f"Between {MONTHS[a1 - 1]} and {MONTHS[a1 + 2]} {y}, who did {h} {v[0]}?",
            _answers(gold.rows(head=h, rel=rel, begin=f"{y}-{a1:02d}", end=f"{y}-{a1 + 2:02d}", kind="between"), 1))
        a1 = rng.choice(range(2, 12))
        add("calendar", f"Since {MONTHS[a1 - 1]} {y}, who did {h} {v[0]}?",
            _answers(gold.rows(head=h, rel=rel, begin=f"{y}-{a1:02d}", end="inf", kind="between"), 1))
        # relative dates (reference: the KG's last date)
        ref = gold.hi
        lm = (ref.replace(day=1) - dt.timedelta(days=1))
        add("relative", f"Who did {h} {v[0]} last month?",
            _answers(gold.rows(head=h, rel=rel, begin=f"{lm.year}-{lm.month:02d}", end=f"{lm.year}-{lm.month:02d}"), 1))
        add("relative", f"Who did {h} {v[0]} last year?", None if ref.year - 1 < gold.lo.year else
            _answers(gold.rows(head=h, rel=rel, begin=str(ref.year - 1), end=str(ref.year - 1)), 1))
        # day without a year, ambiguous and unambiguous numeric dates
        r0 = rows[rng.randrange(len(rows))]
        d = dt.date.fromisoformat(r0[2])
        unique = gold.lo.year == gold.hi.year
        add("yearless", f"Who did {h} {v[0]} on {d.day} {MONTHS[d.month - 1]}?",
            _answers(gold.rows(head=h, rel=rel, begin=d.isoformat(), end=d.isoformat()), 1) if unique else None)
        if d.day <= 12 and d.day != d.month:
            add("ambiguous_date", f"Who did {h} {v[0]} on {d.day:02d}/{d.month:02d}/{d.year}?", None)
        else:
            add("numeric_date", f"Who did {h} {v[0]} on {d.day:02d}/{d.month:02d}/{d.year}?",
                _answers(gold.rows(head=h, rel=rel, begin=d.isoformat(), end=d.isoformat()), 1))
        # lowercase and typos
        h, rel = next(hk)
        v = verb(rel)
        rows = gold.rows(head=h, rel=rel)
        add("lowercase", f"who did {h.lower()} {v[0]} last?", _answers(rows, 1, "last"))
        h, rel = next(hk)
        v = verb(rel)
        if len(h) >= 8:
            add("typo", f"Who did {_typo(h, rng)} {v[0]} first?", _answers(gold.rows(head=h, rel=rel), 1, "first"))
        # unanswerable: entity not in the KG, dates outside the KG
        name = rng.choice(NOT_IN_KG)
        add("not_in_kg", f"Who did {name} {v[0]} in {rng.choice(years)}?", None)
        add("out_of_range", f"Who did {h} {v[0]} in {gold.hi.year + rng.randint(3, 8)}?", None)
    return out


# ------------------------------------------------------------------ run and score
def run(method: str, questions: str, index: str, out: str, **opts: Any) -> None:
    from chronorag.evaluation import make_method

    m = make_method(method, index, **opts)
    rows = [json.loads(line) for line in open(questions)]
    with open(out, "w") as fh:
        for q in rows:
            t0 = time.perf_counter()
            try:
                p = m({"question": q["question"], "answers": q["answers"] or ["-"]})
                answers, abst, reason = list(p.answers), bool(getattr(p, "abstained", False)), getattr(p, "reason", "")
                err = None
            except Exception as exc:  # noqa: BLE001 - an error is an abstention with its message
                answers, abst, reason, err = [], True, "", f"{type(exc).__name__}: {exc}"
            fh.write(json.dumps({**q, "method": method, "predicted": answers[:5], "abstained": abst or not answers,
                                 "reason": reason or err or "", "latency_ms": round((time.perf_counter() - t0) * 1e3, 2)})
                     + "\n")


def outcome(r: dict[str, Any]) -> str:
    """``correct``, ``abstained`` or ``wrong`` (an answer to an unanswerable question is wrong)."""
    from chronorag.metrics import normalize_answer

    gold = r["answers"]
    if r["abstained"]:
        return "correct" if gold is None else "abstained"
    if gold is None:
        return "wrong"
    return "correct" if normalize_answer(r["predicted"][0]) in {normalize_answer(g) for g in gold} else "wrong"


def print_table(table: dict[tuple[str, str], Counter[str]], by: str = "category") -> None:
    """Markdown table of ok / abstained / wrong per ``by`` value and run label, totals on stderr."""
    cats = sorted({c for _, c in table}, key=lambda c: (c == "ALL", c))
    labels = list(dict.fromkeys(lab for lab, _ in table))
    print("| " + by + " | n | " + " | ".join(f"{lab} ok / abst / wrong" for lab in labels) + " |")
    print("|---|---|" + "---|" * len(labels))
    for c in cats:
        n = sum(table[(labels[0], c)].values())
        cells = []
        for lab in labels:
            t = table[(lab, c)]
            cells.append(f"{t['correct']} / {t['abstained']} / {t['wrong']}")
        print(f"| {c} | {n} | " + " | ".join(cells) + " |")
    for lab in labels:
        t = table[(lab, "ALL")]
        n = sum(t.values())
        print(f"{lab}: n={n} correct {t['correct'] / n:.1%} abstained {t['abstained'] / n:.1%} "
              f"confidently wrong {t['wrong'] / n:.1%}", file=sys.stderr)


def score(paths: list[str]) -> None:
    table: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    for p in paths:
        label = Path(p).stem
        for line in open(p):
            r = json.loads(line)
            o = outcome(r)
            for cat in (r["category"], "ALL"):
                table[(label, cat)][o] += 1
    print_table(table)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("business-kg")
    b.add_argument("--out", required=True)
    b = sub.add_parser("build")
    b.add_argument("--icews", required=True)
    b.add_argument("--business", required=True)
    b.add_argument("--out", required=True)
    b.add_argument("--seed", type=int, default=0)
    b = sub.add_parser("run")
    b.add_argument("--method", required=True)
    b.add_argument("--questions", required=True)
    b.add_argument("--index", required=True)
    b.add_argument("--out", required=True)
    b = sub.add_parser("score")
    b.add_argument("runs", nargs="+")
    a = ap.parse_args()
    if a.cmd == "business-kg":
        print(json.dumps({"events": business_kg(Path(a.out)), "out": a.out}))
    elif a.cmd == "build":
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        for name, idx, verbs, n in (("icews14", a.icews, ICEWS_VERBS, 6), ("business", a.business, BUSINESS_VERBS, 3)):
            qs = build(Gold(idx), verbs, kg=name, seed=a.seed, n_per=n)
            with open(out / f"{name}.jsonl", "w") as fh:
                for q in qs:
                    fh.write(json.dumps(q) + "\n")
            print(json.dumps({"kg": name, "questions": len(qs), "by_category": Counter(q["category"] for q in qs)}))
    elif a.cmd == "run":
        run(a.method, a.questions, a.index, a.out)
    else:
        score(a.runs)


if __name__ == "__main__":
    main()
