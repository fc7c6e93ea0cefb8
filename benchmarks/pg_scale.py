"""ICEWS05-15 on PostgreSQL + pgvector vs in memory: ingest time, MultiTQ dev Hits@1 and
latency for tools / dense / STAR-RAG, and per-worker memory. Starts its own embedded server.

    python benchmarks/pg_scale.py MEM_INDEX_DIR PG_INDEX_DIR KG.tsv.gz DEV.jsonl [--skip-ingest]
        [--methods tools,dense,star-rag] [--skip-rss]

Each step reports its wall seconds, this process's CPU seconds and the server's CPU
seconds (on a shared machine the CPU times are the steadier figures).
Dense on Postgres searches as ``CHRONORAG_PG_SEARCH`` says: ``auto`` (default: exact on this
index, through the half-precision copy), ``exact`` or ``hnsw``.

MEM_INDEX_DIR is an in-memory index of the same KG built with ``--encoder static``
(its embedding cache, $CHRONORAG_HOME, then serves the Postgres ingest too).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

from chronorag.cli import main as cli
from chronorag.integrations.embedded_pg import EmbeddedPostgres


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def run(args: list[str]) -> dict:
    """One CLI call in this process; adds its wall and CPU seconds (this process only, not the server)."""
    buf = io.StringIO()
    t0, c0 = time.perf_counter(), _cpu()
    with contextlib.redirect_stdout(buf):
        rc = cli(args)
    assert rc == 0, (args, rc)
    out = json.loads(buf.getvalue().strip().splitlines()[-1])
    if isinstance(out, dict):
        out["_wall_s"], out["_client_cpu_s"] = round(time.perf_counter() - t0, 1), round(_cpu() - c0, 1)
    return out


def server_cpu_s(data_dir: Path) -> float:
    """CPU seconds used so far by the PostgreSQL server's processes (postmaster and backends)."""
    pid = int((data_dir / "postmaster.pid").read_text().split()[0])
    tck = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            st = (p / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(p.name) == pid:  # the postmaster, and the backends that have exited (cutime, cstime)
            total += sum(int(x) for x in st[11:15]) / tck
        elif int(st[1]) == pid:  # a running backend or auxiliary process
            total += (int(st[11]) + int(st[12])) / tck
    return total


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("mem"), ap.add_argument("pg"), ap.add_argument("kg"), ap.add_argument("dev")
    ap.add_argument("--server", default="/tmp/pgbench/server")
    ap.add_argument("--methods", default="tools,dense,star-rag")
    ap.add_argument("--skip-ingest", action="store_true", help="reuse PG_INDEX_DIR (same --server)")
    ap.add_argument("--skip-rss", action="store_true")
    a = ap.parse_args()
    Path(a.server).mkdir(parents=True, exist_ok=True)
    out: dict = {}
    with EmbeddedPostgres(a.server) as pg:
        t0, s0 = time.perf_counter(), server_cpu_s(pg.data_dir)
        out["ingest"] = {} if a.skip_ingest else run(["-q", "ingest", a.kg, "--out", a.pg, "--store", pg.url, "--encoder", "static",
                             "--replace"])
        out["ingest"]["wall_s"] = round(time.perf_counter() - t0, 1)
        out["ingest"]["server_cpu_s"] = round(server_cpu_s(pg.data_dir) - s0, 1)
        print("ingest", out["ingest"], file=sys.stderr, flush=True)
        mode = os.environ.get("CHRONORAG_PG_SEARCH") or "auto"
        for m in filter(None, a.methods.split(",")):
            if m == "star-rag":  # the rule graph (an ingest with --replace drops the Postgres index's)
                for d in (a.mem, a.pg):
                    if not (Path(d) / "rule_graph.json").exists():
                        out[f"star-rag-build/{'postgres' if d == a.pg else 'memory'}"] = run(
                            ["-q", "star-rag", "build", d])
            for name, d in (("memory", a.mem), ("postgres", a.pg)):
                s0 = server_cpu_s(pg.data_dir)
                r = run(["-q", "eval", "multitq", d, a.dev, "--method", m, "--out", f"/tmp/pgbench/{m}-{name}.json"])
                name = f"{name}-{mode}" if name == "postgres" else name
                out[f"{m}/{name}"] = {k: r.get(k) for k in ("n", "hits@1", "hits@10", "latency_ms_p50",
                                                          "latency_ms_p95", "errors", "_wall_s", "_client_cpu_s")}
                out[f"{m}/{name}"]["server_cpu_s"] = round(server_cpu_s(pg.data_dir) - s0, 1)
                print(m, name, out[f"{m}/{name}"], file=sys.stderr, flush=True)
        for mode, d in ((("mmap", a.mem), ("mmap", a.pg)) if not a.skip_rss else ()):
            r = subprocess.run([sys.executable, str(Path(__file__).with_name("rss_workers.py")), d, "--workers", "4",
                                "--mode", mode], capture_output=True, text=True)
            out[f"rss/{'postgres' if d == a.pg else 'memory-mmap'}"] = (json.loads(r.stdout.strip().splitlines()[-1])
                                                                       if r.returncode == 0 else r.stderr[-500:])
        with __import__("psycopg").connect(pg.url) as c:
            out["sizes"] = {r[0]: r[1] for r in c.execute(
                "SELECT relname, pg_size_pretty(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                "ON n.oid = c.relnamespace WHERE n.nspname LIKE 'chronorag_%' AND c.relkind IN ('r', 'i') "
                "ORDER BY pg_total_relation_size(c.oid) DESC LIMIT 14").fetchall()}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
