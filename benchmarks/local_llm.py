"""Every method's LLM path through a small local model (the ``local-llm`` extra): plumbing figures.

For each model: start the local llama.cpp server, run ``chronorag demo --llm-url`` (two questions
per method with references), then KG-iRAG on ``--kg-irag-n`` questions generated from the bundled
week of NYC weather records; stop the server. Per method it reports the completion rate (questions
that finished without an error), fallbacks per question by kind, p50 latency, tokens per question
and the reference-match rate. A 135M/270M model measures the plumbing, not the method.

With ``--eval-n N`` (or ``method=N,...``) it also runs each method on the first N dev questions of its benchmark
through the same server (``run_eval``, the runner behind ``chronorag eval``): STAR-RAG and the
TempTool agent on MultiTQ dev over ``--multitq-index``, T-GRAG on Time-LongQA dev over
``--tgrag-index``, ToPG Local on 2Wiki dev over ``--topg-index``; KG-iRAG on ``--kg-irag-n``
generated questions. Accuracy is Hits@1 (MultiTQ), exact match and token F1 (free-text
answers) or exact answers (KG-iRAG).

    python benchmarks/local_llm.py --models smollm2,gemma3-270m --kg-irag-n 50 --eval-n 50 \\
        --multitq-index ICEWS0515_DIR --tgrag-index AUDI_DIR --topg-index 2WIKI_DIR \\
        --out benchmarks/results/local_llm.json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _summary(name: str, r: dict) -> dict:
    q = max(int(r.get("questions", 0)), 1)
    lat = r.get("question_latency_s") or [r.get("latency_s", 0.0)]
    return {
        "method": name, "questions": r.get("questions", 0), "completed": r.get("questions", 0) if r["ok"] else 0,
        "completion_rate": 1.0 if r["ok"] else 0.0, "error": r.get("error"),
        "fallbacks_per_question": {k: round(v / q, 2) for k, v in sorted(r.get("fallbacks", {}).items())},
        "p50_latency_s": round(statistics.median(lat), 2),
        "tokens_per_question": round((r.get("prompt_tokens", 0) + r.get("completion_tokens", 0)) / q, 1),
        "llm_calls_per_question": round(r.get("llm_calls", 0) / q, 1),
        "reference_match": (round(r["reference_match"] / q, 2) if "reference_match" in r else None),
    }


def _fallbacks_per_question(before: int, n: int) -> dict[str, float]:
    """The fallbacks recorded since ``fallbacks.records[before]``, by kind, per question."""
    from collections import Counter

    from chronorag.integrations.llm import fallbacks

    counts = Counter(kind for _q, kind, _d in fallbacks.records[before:])
    return {kind: round(v / n, 2) for kind, v in sorted(counts.items())}


def _kg_irag(cfg, n: int, partial: Path | None = None) -> dict:
    """KG-iRAG's LLM path on ``n`` generated questions. With ``partial``, each question's row is
    appended to that file as it completes (a run stopped early keeps what it answered)."""
    from chronorag.cli.demo import demo_data_dir
    from chronorag.errors import ChronoRAGError
    from chronorag.integrations.llm import fallbacks, query_scope
    from chronorag.workflows.kg_irag.graph import build_graph
    from chronorag.workflows.kg_irag.questions import generate_questions
    from chronorag.workflows.kg_irag.sources import load_source_kg

    d = demo_data_dir() / "kg_irag"
    kg, rows = load_source_kg(d / "nyc_weather_spec.json", records=next(d.glob("*.csv")))
    qs = generate_questions(rows, kg.spec, n=n, seed=0)
    g = build_graph(kg=kg, llm=cfg, use_llm=True, t_max=3)
    before = len(fallbacks.records)
    lat, ok, correct, errors = [], 0, 0, []
    if partial is not None:
        partial.parent.mkdir(parents=True, exist_ok=True)
    for i, q in enumerate(qs):
        t0 = time.perf_counter()
        out, err = {}, None
        try:
            with query_scope(f"bench-kg-{i}"):
                out = g.invoke({"question": q["question"]})
            ok += 1
            correct += out.get("answer") == q["answer"]
        except ChronoRAGError as exc:
            err = str(exc)[:200]
            errors.append(err)
        lat.append(time.perf_counter() - t0)
        if partial is not None:
            with partial.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"i": i, "question": q["question"], "gold": q["answer"],
                                     "answer": out.get("answer"), "abstained": out.get("abstained"),
                                     "reason": str(out.get("reason", ""))[:300], "error": err,
                                     "latency_s": round(lat[-1], 2),
                                     "fallbacks": fallbacks.counts(f"bench-kg-{i}")}, ensure_ascii=False) + "\n")
    s = cfg.ledger.summary()
    return {"method": f"kg-irag ({n} generated questions)", "questions": n, "completed": ok,
            "completion_rate": round(ok / n, 2), "error": errors[0] if errors else None,
            "fallbacks_per_question": _fallbacks_per_question(before, n),
            "p50_latency_s": round(statistics.median(lat), 2),
            "tokens_per_question": round((s["prompt_tokens"] + s["completion_tokens"]) / n, 1),
            "llm_calls_per_question": round(s["calls"] / n, 1), "reference_match": round(correct / n, 2)}


_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
_DEV = {  # method -> (index option, dev questions)
    "star-rag": ("multitq_index", _DATA / "multitq" / "test_gold_dev.jsonl"),
    "temptool": ("multitq_index", _DATA / "multitq" / "test_gold_dev.jsonl"),
    "t-grag": ("tgrag_index", _DATA / "time-longqa" / "qa_dev.jsonl"),
    "topg": ("topg_index", _DATA / "2wiki" / "questions_dev.jsonl"),
}
_REGISTERED = {"star-rag": "star-rag", "temptool": "tools", "t-grag": "t-grag", "topg": "topg-local"}


def _dev_eval(name: str, index_dir: str, questions: Path, n: int, url: str, deadline: float,
              skip: int = 0) -> dict:
    """``name``'s LLM path on dev questions ``skip+1`` to ``skip+n`` through the server at ``url``."""
    from chronorag.evaluation import load_questions, make_method, run_eval
    from chronorag.evaluation.runfile import load_run
    from chronorag.integrations.llm import fallbacks

    qs = load_questions(questions, limit=skip + n)[skip:]
    if not qs:
        raise SystemExit(f"{name}: no dev questions after skipping {skip}")
    for q in qs:  # 2Wiki's evidence is triples, not texts: not scored here
        if q.get("evidence") and not all(isinstance(e, str) for e in q["evidence"]):
            q.pop("evidence")
    opts = {"deadline_s": deadline} if name == "temptool" else {}
    method = make_method(_REGISTERED[name], index_dir, llm_url=url, **opts)
    before = len(fallbacks.records)
    out = Path(tempfile.mkdtemp(prefix="bench-llm-")) / f"{name}.jsonl"
    m = run_eval(method, qs, out_path=out, progress=False)
    rows = load_run(out)[1]
    toks = [r["tokens"] for r in rows if isinstance(r.get("tokens"), dict)]
    calls = sum(int(t.get("calls", 0)) for t in toks)
    total = sum(int(t.get("total_tokens", 0)) for t in toks)
    k = m["n"]
    span = f"dev questions {skip + 1}-{skip + k}" if skip else f"{k} dev questions"
    return {"method": f"{name} ({span})", "questions": k, "completed": k - m["errors"],
            "completion_rate": round((k - m["errors"]) / k, 2),
            "error": next((r["error"][:200] for r in rows if r.get("error")), None),
            "fallbacks_per_question": _fallbacks_per_question(before, k),
            "p50_latency_s": round(m["latency_ms_p50"] / 1000, 2),
            "tokens_per_question": round(total / k, 1), "llm_calls_per_question": round(calls / k, 1),
            "abstained": m["abstained"], "hits@1": m["hits@1"], "em": m["em"], "f1": m["f1"],
            "run_file": str(out)}


def _eval_n(text: str) -> dict[str, int]:
    """``--eval-n``: ``"50"`` (every method) or ``"star-rag=20,topg=5"``."""
    try:
        if text.strip().isdigit():
            return dict.fromkeys(_DEV, int(text))
        pairs = dict(p.split("=", 1) for p in text.split(","))
        out = {k.strip(): int(v) for k, v in pairs.items()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected N or method=N,..., got {text!r}") from None
    bad = sorted(set(out) - set(_DEV))
    if any(v < 0 for v in out.values()):
        raise argparse.ArgumentTypeError(f"counts must be >= 0, got {text!r}")
    if bad:
        raise argparse.ArgumentTypeError(f"unknown method(s) {bad}; known: {sorted(_DEV)}")
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="smollm2,gemma3-270m")
    ap.add_argument("--kg-irag-n", type=int, default=20)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--llm-timeout", type=float, default=600.0,
                    help="seconds per LLM call (generous: a loaded 2-core machine is slow)")
    ap.add_argument("--deadline", type=float, default=900.0, help="TempTool: seconds per question")
    ap.add_argument("--methods", default=None, help="demo methods (default: all five)")
    ap.add_argument("--out", default=None)
    ap.add_argument("--eval-n", type=_eval_n, default={},
                    help="dev questions per method: N for every method, or e.g. star-rag=20,topg=5 (default: none)")
    ap.add_argument("--eval-skip", type=_eval_n, default={},
                    help="skip the first K dev questions (N or method=K,...), to continue a run cut short")
    ap.add_argument("--multitq-index", default=None, help="ICEWS05-15 index (STAR-RAG, TempTool)")
    ap.add_argument("--tgrag-index", default=None, help="T-GRAG index of the Audi reports")
    ap.add_argument("--topg-index", default=None, help="ToPG index of the 2Wiki corpus")
    ap.add_argument("--skip-demo", action="store_true", help="only the dev-question runs")
    a = ap.parse_args()
    if a.eval_n:
        missing = [f"--{opt.replace('_', '-')}" for name, (opt, _q) in _DEV.items()
                   if a.eval_n.get(name) and not getattr(a, opt)]
        if missing:
            ap.error(f"--eval-n needs {', '.join(sorted(set(missing)))}")
    from chronorag.cli import main as cli
    from chronorag.integrations.local_llm import LocalLLMServer

    results = {"machine": f"{os.cpu_count()} cores, loadavg {os.getloadavg()[0]:.1f} at start", "models": {}}
    for model in a.models.split(","):
        load0 = os.getloadavg()[0]
        with LocalLLMServer(model=model, threads=a.threads) as srv:
            os.environ.update(CHRONORAG_API_KEY=srv.api_key, CHRONORAG_MODEL=model,
                              CHRONORAG_STRUCTURED_OUTPUT="json_object", CHRONORAG_MAX_TOKENS="256",
                              CHRONORAG_TIMEOUT=str(a.llm_timeout))
            buf = io.StringIO()
            t0 = time.perf_counter()
            code, rows = None, []
            if not a.skip_demo:
                with contextlib.redirect_stdout(buf):
                    code = cli(["-q", "demo", "--out", tempfile.mkdtemp(prefix="bench-demo-"), "--encoder", "static",
                                "--llm-url", srv.base_url, "--max-tokens", "256",
                                "--llm-timeout", str(a.llm_timeout), "--deadline", str(a.deadline)]
                               + (["--methods", a.methods] if a.methods else []))
                demo = json.loads(buf.getvalue().strip().splitlines()[-1])["methods"]
                rows = [_summary(k, v) for k, v in demo.items()]
            if a.eval_n:
                for name, (opt, questions) in _DEV.items():
                    if not a.eval_n.get(name) or (a.methods and name not in a.methods.split(",")):
                        continue
                    t1 = time.perf_counter()
                    rows.append(_dev_eval(name, getattr(a, opt), questions, a.eval_n[name], srv.base_url,
                                          a.deadline, a.eval_skip.get(name, 0)))
                    rows[-1]["wall_s"] = round(time.perf_counter() - t1, 1)
                    print(json.dumps({model: rows[-1]}), file=sys.stderr, flush=True)
            if a.kg_irag_n:
                part = Path(f"{a.out}.{model}.kg_irag.partial.jsonl") if a.out else None
                rows.append(_kg_irag(srv.config(max_tokens=256, timeout=a.llm_timeout), a.kg_irag_n, part))
            results["models"][model] = {"server_startup_s": round(srv.startup_s or 0, 1), "demo_exit_code": code,
                                        "wall_s": round(time.perf_counter() - t0, 1), "methods": rows,
                                        "loadavg_1min_start_end": [round(load0, 1), round(os.getloadavg()[0], 1)],
                                        "demo_output": buf.getvalue().splitlines()[:-1]}
        print(json.dumps({model: rows}, indent=1), flush=True)
        results["loadavg_end"] = round(os.getloadavg()[0], 1)
        if a.out:  # after each model, so a run cut short keeps the models it finished
            Path(a.out).parent.mkdir(parents=True, exist_ok=True)
            Path(a.out).write_text(json.dumps(results, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
