"""KG-iRAG benchmarks on real records: KG build time, agreement with the reference labeller, baselines.

Usage (repo root, .venv active)::

    nice -n 5 python benchmarks/bench_kg_irag.py --n 600 --seed 0

For each source (nyc-weather, nyc-flights, seattle-weather):

- ``load_s``: reading the data package and, for flights, aggregating 336,776 flights per
  origin and hour (pandas); ``gamma_s``: the mapper Gamma (records -> RecordKG);
  ``triples_s``: generating every triple once (they are produced on demand otherwise);
- ``generate_s``: writing ``--n`` questions with gold answers from the reference labeller;
- for each method (``kg-irag``, ``single-pass``, ``limited``, ``no-check``), no LLM: the
  metrics of :mod:`chronorag.evaluation.methods.kg_irag_eval` overall and by type.
  ``accuracy`` of ``kg-irag`` is its agreement with the independent reference labeller.

Prints a markdown table per source and, last, one JSON object with everything.

``--scripted-llm N`` instead runs N questions per source through the LLM path (LLM1/LLM2
prompts, JSON replies, stop rule, synthesis) against a ScriptedOpenAIServer whose replies
are computed correctly from each prompt: it measures the loop's calls and prompt sizes
per question, not an LLM's quality.
"""

from __future__ import annotations

import argparse
import json
import time

from chronorag.cli import set_offline_env

set_offline_env()

METHODS = ("kg-irag", "single-pass", "limited", "no-check")
COLS = ("accuracy", "em", "f1", "hit_rate", "hallucination_rate", "hallucination_rate_ab", "iterations_mean", "evidence_facts_mean",
        "evidence_tokens_mean", "latency_ms_p50")


def bench_source(name: str, n: int, seed: int) -> dict:
    from chronorag.evaluation.methods.kg_irag_eval import evaluate
    from chronorag.workflows.kg_irag.questions import generate_questions
    from chronorag.workflows.kg_irag.record_kg import build_record_kg
    from chronorag.workflows.kg_irag.sources import load_records

    t0 = time.perf_counter()
    spec, rows = load_records(name)
    t1 = time.perf_counter()
    kg = build_record_kg(rows, spec)
    t2 = time.perf_counter()
    n_triples = sum(1 for _ in kg.iter_triples())
    t3 = time.perf_counter()
    qs = generate_questions(rows, spec, n=n, seed=seed)
    t4 = time.perf_counter()
    res = {"source": name, "records": len(kg), "triples": n_triples, "load_report": kg.report.as_dict(),
           "load_s": round(t1 - t0, 3), "gamma_s": round(t2 - t1, 3), "build_s": round(t2 - t0, 3),
           "triples_s": round(t3 - t2, 3), "generate_s": round(t4 - t3, 3), "questions": len(qs),
           "by_type": {t: sum(q["type"] == t for q in qs) for t in ("q1", "q2", "q3")},
           "answers": {a: sum(q["answer"] == a for q in qs) for a in ("yes", "no", "no need", "no answer")},
           "methods": {}}
    for m in METHODS:
        res["methods"][m] = evaluate(qs, kg=kg, method=m)
    full, single = res["methods"]["kg-irag"], res["methods"]["single-pass"]
    res["agreement_with_reference"] = full["accuracy"]
    res["evidence_ratio_facts"] = round(full["evidence_facts_mean"] / single["evidence_facts_mean"], 4)
    res["evidence_ratio_tokens"] = round(full["evidence_tokens_mean"] / single["evidence_tokens_mean"], 4)
    return res


def oracle_reply(kg):
    """A scripted OpenAI-protocol 'LLM' that answers each agent's prompt correctly (plumbing/token cost only)."""
    import re

    from chronorag.graphs.time import minutes_to_iso, parse_time
    from chronorag.workflows.kg_irag import engine
    from chronorag.workflows.kg_irag.planner import Plan, parse_question

    fact_re = re.compile(r"\((\S+), occursAt, \[(\S+), (\S+)\)\) \(\S+, atLocation, (\S+)\)[^\n]*?( => .*)?$", re.M)

    def facts_of(text):
        return [{"id": m.group(1), "lo": parse_time(m.group(2)).lo, "hi": parse_time(m.group(3)).lo,
                 "place": m.group(4), "events": [m.group(5)[4:].strip()] if m.group(5) else [], "text": m.group(0)}
                for m in fact_re.finditer(text)]

    def plan_of(text):
        d = json.loads(re.search(r"Plan: (\{.*\})", text).group(1))
        d.pop("anchor_iso", None)
        return Plan(**d)

    def reply(req):
        system, user = req["messages"][0]["content"], req["messages"][-1]["content"]
        if "planner of a retrieval loop" in system:
            p = parse_question(user, kg)
            return json.dumps({**p.to_dict(), "anchor": minutes_to_iso(p.anchor)})
        if "steer a retrieval" in system:
            n = user.count("already fetched")
            return json.dumps({"gains": [0.9] + [0.1] * (n - 1)})
        plan = plan_of(user) if "Plan:" in user else None
        if "verify answers" in system or "budget is spent" in system:
            cov = re.search(r"Covered: \[(\S+), (\S+)\)", user)
            cov = (parse_time(cov.group(1)).lo, parse_time(cov.group(2)).lo) if cov else None
            v = engine.verify(plan, facts_of(user), cov)
            return json.dumps({"answer": v["answer"] or v["guess"], "confidence": 1.0 if v["certified"] else 0.3,
                               "consistent": True, "reason": "oracle"})
        ans = re.search(r"Verified answer: (.*)", user).group(1).strip()
        ids = re.findall(r"\((\S+), occursAt", user)
        return json.dumps({"answer": ans, "rationale": f"Decided by {ids[0] if ids else 'no facts'}."})

    return reply


def bench_scripted_llm(name: str, n: int, seed: int) -> dict:
    from chronorag.evaluation.methods.kg_irag_eval import evaluate
    from chronorag.integrations.llm import LLMConfig
    from chronorag.integrations.testing import ScriptedOpenAIServer
    from chronorag.workflows.kg_irag.questions import generate_questions
    from chronorag.workflows.kg_irag.sources import load_source_kg

    kg, rows = load_source_kg(name)
    qs = generate_questions(rows, kg.spec, n=n, seed=seed)
    with ScriptedOpenAIServer([oracle_reply(kg)] * (40 * n)) as srv:
        m = evaluate(qs, kg=kg, method="kg-irag", llm=LLMConfig(base_url=srv.base_url))
    keep = ("n", "accuracy", "iterations_mean", "llm_calls_mean", "llm_tokens_mean", "llm_errors", "latency_ms_p50")
    return {"source": name, **{k: m[k] for k in keep},
            "by_type": {t: {k: r[k] for k in keep} for t, r in m["by_type"].items()}}


def table(res: dict) -> str:
    lines = [f"### {res['source']}: {res['records']:,} records, {res['triples']:,} triples, "
             f"{res['questions']} questions {res['by_type']}",
             "", "| method | type | " + " | ".join(COLS) + " |", "|---|---|" + "---|" * len(COLS)]
    for m, r in res["methods"].items():
        for g, row in [("all", r)] + list(r["by_type"].items()):
            lines.append(f"| {m} | {g} | " + " | ".join(str(row[c]) for c in COLS) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=600)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sources", nargs="+", default=["nyc-weather", "nyc-flights", "seattle-weather"])
    ap.add_argument("--out", default=None, help="also write the JSON here")
    ap.add_argument("--scripted-llm", type=int, default=0, metavar="N",
                    help="instead: run N questions per source through the LLM path against an oracle "
                         "ScriptedOpenAIServer (token counts are the server's whitespace words)")
    args = ap.parse_args()
    if args.scripted_llm:
        res = {s: bench_scripted_llm(s, args.scripted_llm, args.seed) for s in args.sources}
        print(json.dumps(res))
        return
    out = {"n": args.n, "seed": args.seed, "sources": {}}
    for s in args.sources:
        r = bench_source(s, args.n, args.seed)
        out["sources"][s] = r
        print(table(r), flush=True)
        print(f"\nbuild {r['build_s']} s (load {r['load_s']} s + Gamma {r['gamma_s']} s); agreement "
              f"{r['agreement_with_reference']}; evidence kg-irag/single-pass facts {r['evidence_ratio_facts']}, "
              f"tokens {r['evidence_ratio_tokens']}\n", flush=True)
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(out, fh, indent=1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
