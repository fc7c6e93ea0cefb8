"""Side-by-side HTML reports of evaluation runs (``chronorag report``).

:func:`build_report` reads one or more run files written by ``chronorag eval`` (on the
same questions, typically one per method) and writes into a directory:

- ``index.html``: one self-contained page (figures embedded, no network access needed)
  with the runs' configuration, metrics by question type, latency and context-token
  figures, where the runs disagree, and a per-question table: each method's answer, the
  gold answer, hit or miss, and the retrieved evidence with dates highlighted;
- ``metrics_by_qtype.png``, ``latency.png``, ``context_tokens.png``: the figures
  (matplotlib), also usable on their own.

Questions are matched across runs by ``quid`` (or ``id``), else by question text.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError, DataFormatError, OutputExistsError
from chronorag.evaluation.runfile import load_run
from chronorag.graphs.output import prepare_output_dir, write_bytes

__all__ = ["Run", "build_report", "highlight_dates", "load_runs"]

_DATE = re.compile(
    r"\b(?:\d{4}-\d{2}(?:-\d{2})?"
    r"|\d{1,2}\s+(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{4}"
    r"|(?:January|February|March|April|May|June|July|August|September|October|November|December)(?:\s+\d{1,2},)?\s+\d{4}"
    r"|(?:1[89]|20)\d{2})\b")

_COLORS = ["#4C72B0", "#DD8452", "#55A868", "#C44E52", "#8172B3", "#937860", "#DA8BC3", "#8C8C8C"]


def highlight_dates(text: str) -> str:
    """HTML-escape ``text`` and wrap every date in ``<mark>``."""
    out, last = [], 0
    for m in _DATE.finditer(text):
        out.append(html.escape(text[last:m.start()]))
        out.append(f"<mark>{html.escape(m.group(0))}</mark>")
        last = m.end()
    out.append(html.escape(text[last:]))
    return "".join(out)


@dataclass
class Run:
    """One loaded run file."""

    name: str
    path: Path
    meta: dict[str, Any]
    rows: list[dict[str, Any]]

    def key(self, r: dict[str, Any]) -> str:
        q = r.get("quid", r.get("id"))
        return f"id:{q}" if q is not None else f"q:{r['question']}"

    @property
    def by_key(self) -> dict[str, dict[str, Any]]:
        return {self.key(r): r for r in self.rows}


_NUM = (int, float)
#: question-record fields the report reads: (accepted types, description); bool is excluded from numbers
_ROW_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "qtype": ((str, int, type(None)), "a string or null"),
    "error": ((str, type(None)), "a string or null"),
    "hits@1": (_NUM, "a number"), "f1": (_NUM, "a number"), "evidence_recall@5": (_NUM, "a number"),
    "latency_ms": (_NUM, "a number"), "context_tokens": (_NUM, "a number"),
    "answers": ((list,), "a list of strings"), "predicted": ((list,), "a list of strings"),
    "evidence": ((list,), "a list of strings"), "judge": ((dict, type(None)), "an object or null"),
    "tokens": ((dict, type(None)), "an object or null"), "fallbacks": ((dict,), "an object of counts"),
}


def _bad(path: Any, line: Any, msg: str) -> DataFormatError:
    return DataFormatError(f"{path}:{line}: {msg}; the file is not a run file written by `chronorag eval --out`"
                           " (or was edited); regenerate it")


def _check_row(path: Any, r: dict[str, Any]) -> None:
    """Type-check the fields of one question record the report reads (``file:line`` on error)."""
    line = r.get("_line", "?")
    q = r.get("quid", r.get("id"))
    if q is not None and not isinstance(q, (str, int)):
        raise _bad(path, line, f"'quid' must be a string or an integer, got {type(q).__name__}")
    for k, (types, what) in _ROW_FIELDS.items():
        if k not in r:
            continue
        v = r[k]
        if not isinstance(v, types) or (types is _NUM and isinstance(v, bool)):
            raise _bad(path, line, f"field {k!r} must be {what}, got {type(v).__name__} {str(v)[:60]!r}")
        if types is _NUM and v != v:  # NaN
            raise _bad(path, line, f"field {k!r} is NaN")
        if isinstance(v, list) and not all(isinstance(x, str) for x in v):
            raise _bad(path, line, f"field {k!r} must be {what}")
    if isinstance(r.get("judge"), dict) and not isinstance(r["judge"].get("correct"), (bool, type(None))):
        raise _bad(path, line, "field 'judge.correct' must be true, false or null")
    if isinstance(r.get("tokens"), dict) and not isinstance(r["tokens"].get("total_tokens", 0), int):
        raise _bad(path, line, "field 'tokens.total_tokens' must be an integer")
    if isinstance(r.get("fallbacks"), dict) and not all(
            isinstance(v, int) and not isinstance(v, bool) for v in r["fallbacks"].values()):
        raise _bad(path, line, "field 'fallbacks' must map names to integer counts")


def _check_meta(path: Any, meta: dict[str, Any]) -> None:
    line = meta.get("_line", "?")
    for k in ("config", "versions"):
        if k in meta and not isinstance(meta[k], (dict, type(None))):
            raise _bad(path, line, f"run record field {k!r} must be an object, got {type(meta[k]).__name__}")


def load_runs(paths: Sequence[str | os.PathLike[str]]) -> list[Run]:
    """Load run files, type-checking every field the report reads (errors name ``file:line``);
    each run is named by its method (made unique with the file name)."""
    if not paths:
        raise ConfigError("give at least one run file")
    runs: list[Run] = []
    for p in paths:
        meta, rows = load_run(p)
        meta = meta or {}
        _check_meta(p, meta)
        for r in rows:
            _check_row(p, r)
        cfg = meta.get("config") or {}
        name = str(cfg.get("method") or Path(p).stem)
        if name in {r.name for r in runs}:
            name = f"{name} ({Path(p).stem})"
        runs.append(Run(name=name, path=Path(p), meta=meta, rows=rows))
    return runs


def _hit(r: dict[str, Any] | None) -> bool | None:
    """Hit or miss of one record: the judge's verdict when judged, else hits@1."""
    if r is None:
        return None
    if r.get("error"):
        return False
    j = r.get("judge")
    if isinstance(j, dict) and j.get("correct") is not None:
        return bool(j["correct"])
    return bool(r.get("hits@1", 0.0))


def _mean(xs: Sequence[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _metric_table(run: Run) -> dict[str, dict[str, Any]]:
    """Per qtype (and overall): n, errors, hits@1, f1, abstained, confidently wrong, evidence recall and judge accuracy."""
    groups: dict[str, list[dict[str, Any]]] = {"overall": run.rows}
    for r in run.rows:
        if r.get("qtype") is not None:
            groups.setdefault(str(r["qtype"]), []).append(r)
    out = {}
    for g, rs in groups.items():
        m: dict[str, Any] = {"n": len(rs), "errors": sum(1 for r in rs if r.get("error")),
                             "hits@1": _mean([float(r.get("hits@1", 0.0)) for r in rs]),
                             "f1": _mean([float(r.get("f1", 0.0)) for r in rs]),
                             # older run files lack the flags: no answer counts as abstained, a wrong top answer as wrong
                             "abstained": sum(1 for r in rs if r.get("abstained", not r.get("predicted"))),
                             "wrong_confident": sum(1 for r in rs if r.get(
                                 "wrong_confident", bool(r.get("predicted")) and not r.get("hits@1")))}
        ev = [r["evidence_recall@5"] for r in rs if "evidence_recall@5" in r]
        if ev:
            m["evidence_recall@5"] = _mean(ev)
        judged = [r["judge"].get("correct") for r in rs if isinstance(r.get("judge"), dict)]
        if judged:
            ok = [j for j in judged if j is not None]
            m["judge_acc"] = _mean([float(j) for j in ok])
            m["judge_failures"] = len(judged) - len(ok)
        out[g] = m
    return out


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)  # layout already tight (tight_layout)
    return buf.getvalue()


def _figures(runs: list[Run], tables: list[dict[str, dict[str, Any]]]) -> dict[str, bytes]:
    try:  # the object-oriented API: no pyplot, no global backend switch (safe in notebooks and threads)
        from matplotlib.figure import Figure
    except ImportError as exc:
        from chronorag.errors import missing_extra

        raise missing_extra("matplotlib", "eval") from exc
    import numpy as np

    figs: dict[str, bytes] = {}
    metrics = ["hits@1", "f1"] + [m for m in ("evidence_recall@5", "judge_acc")
                            if any(m in t["overall"] for t in tables)]
    groups = ["overall"] + sorted({g for t in tables for g in t if g != "overall"})
    fig = Figure(figsize=(max(6.0, 1.1 * len(groups) * max(1, len(runs)) / 2 + 3), 3.2 * len(metrics)))
    axes = fig.subplots(len(metrics), 1, squeeze=False)
    width = 0.8 / len(runs)
    x = np.arange(len(groups))
    for ax, metric in zip(axes[:, 0], metrics):
        for i, (run, t) in enumerate(zip(runs, tables)):
            vals = [t.get(g, {}).get(metric) for g in groups]
            ax.bar(x + (i - (len(runs) - 1) / 2) * width, [v if v is not None else 0 for v in vals], width,
                   label=run.name, color=_COLORS[i % len(_COLORS)])
        ax.set_xticks(x, [f"{g}\n(n={tables[0].get(g, {}).get('n', '-')})" for g in groups], fontsize=8)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(metric)
        ax.grid(axis="y", alpha=0.3)
    axes[0, 0].legend(fontsize=8, ncol=min(4, len(runs)))
    axes[0, 0].set_title("Metrics by question type")
    fig.tight_layout()
    figs["metrics_by_qtype.png"] = _png(fig)

    fig = Figure(figsize=(max(5.0, 1.4 * len(runs) + 2), 3.6))
    ax = fig.subplots()
    lat = [[max(float(r.get("latency_ms", 0.0)), 1e-3) for r in run.rows] for run in runs]
    ax.boxplot(lat, showfliers=True, flierprops={"markersize": 2})
    ax.set_xticks(range(1, len(runs) + 1), [run.name for run in runs], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel("latency per question (ms, log)")
    ax.set_title("Latency distribution")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    figs["latency.png"] = _png(fig)

    fig = Figure(figsize=(7.0, 3.6))
    ax = fig.subplots()
    for i, run in enumerate(runs):
        toks = sorted(int(r.get("context_tokens", 0)) for r in run.rows)
        ax.plot(np.arange(len(toks) + 1) / len(toks), toks + toks[-1:],
                label=f"{run.name} (median {statistics.median(toks):.0f})",
                color=_COLORS[i % len(_COLORS)], drawstyle="steps-post")
    ax.set_xlabel("share of questions (sorted by context tokens)")
    ax.set_xlim(0, 1)
    ax.set_ylabel("context tokens per question")
    ax.set_title("Context tokens per question (sorted)")
    ax.legend(fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    figs["context_tokens.png"] = _png(fig)
    return figs


_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:24px;color:#222;max-width:1600px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd}
table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ddd;padding:4px 6px;vertical-align:top}
th{background:#f4f4f4;position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.hit{color:#1a7f37;font-weight:600}.miss{color:#c62828;font-weight:600}.err{color:#8a4b00}
tr.disagree td:first-child{border-left:4px solid #f0a500}mark{background:#fff1a8;padding:0 1px}
details summary{cursor:pointer;color:#555}ul.ev{margin:2px 0;padding-left:16px}ul.ev li{white-space:pre-wrap}img{max-width:100%}
.small{color:#666;font-size:12px}
"""

_JS = """
function filt(){const d=document.getElementById('onlydis').checked;const m=document.getElementById('onlymiss').value;
for(const tr of document.querySelectorAll('#perq tbody tr')){let show=true;if(d&&!tr.classList.contains('disagree'))show=false;
if(m&&!tr.dataset.miss.split(' ').includes(m))show=false;tr.style.display=show?'':'none';}}
"""


def _fmt(v: Any) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.3f}"
    return html.escape(str(v))


def _cell(r: dict[str, Any] | None, max_evidence: int) -> str:
    if r is None:
        return '<td class="small">not in this run</td>'
    if r.get("error"):
        return f'<td><span class="err">error</span> <span class="small">{html.escape(str(r["error"])[:300])}</span></td>'
    pred = r.get("predicted") or []
    ans = html.escape(pred[0]) if pred else '<span class="small">(no answer)</span>'
    mark = '<span class="hit">hit</span>' if _hit(r) else '<span class="miss">miss</span>'
    mark += f' <span class="small">F1 {float(r.get("f1", 0.0)):.2f}</span>'
    judge = ""
    if isinstance(r.get("judge"), dict):
        c = r["judge"].get("correct")
        judge = f' <span class="small">judge: {"correct" if c else "incorrect" if c is False else "failed"}</span>'
    ev = r.get("evidence") or []
    evh = ""
    if ev:
        items = "".join(f"<li>{highlight_dates(e[:600])}</li>" for e in ev[:max_evidence])
        evh = f"<details><summary>evidence ({len(ev)})</summary><ul class=ev>{items}</ul></details>"
    return f"<td>{mark}{judge} {ans}{evh}</td>"


def build_report(run_paths: Sequence[str | os.PathLike[str]], out_dir: str | os.PathLike[str], *,
                 title: str | None = None, max_evidence: int = 3) -> Path:
    """Write ``index.html`` and the figures for the runs into ``out_dir``; return the page's path.

    Parameters
    ----------
    run_paths : sequence of path
        Run files from ``chronorag eval`` (one per method, same question file).
    out_dir : path
        Created if missing, or a directory an earlier report wrote (it holds the marker
        file ``.chronorag-output``); any other non-empty directory is refused before
        anything is written. Only ``index.html`` and the three PNGs are written, each
        replaced atomically through :func:`chronorag.graphs.output.write_bytes` (nothing
        is left behind on failure); nothing else in the directory is touched.
    title : str, optional
        Page title (default: the dataset names).
    max_evidence : int
        Evidence passages shown per answer.
    """
    if max_evidence < 0:
        raise ConfigError(f"max_evidence must be >= 0, got {max_evidence}")
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise OutputExistsError(f"--out {out} is a file; give a directory for the report")
    runs = load_runs(run_paths)
    tables = [_metric_table(r) for r in runs]
    figs = _figures(runs, tables)
    prepare_output_dir(out, kind="report", inputs=run_paths)  # refuses a directory it did not write
    for name, data in figs.items():
        write_bytes(out / name, data)

    keys: list[str] = []
    seen: set[str] = set()
    for run in runs:
        for r in run.rows:
            k = run.key(r)
            if k not in seen:
                seen.add(k)
                keys.append(k)
    maps = [run.by_key for run in runs]
    datasets = sorted({str((r.meta.get("config") or {}).get("dataset")) for r in runs if r.meta.get("config")})
    page_title = title or f"chronorag report: {', '.join(datasets) or 'runs'}"

    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(page_title)}</title>"
             f"<style>{_CSS}</style><script>{_JS}</script></head><body>",
             f"<h1>{html.escape(page_title)}</h1>",
             f"<p class=small>{len(runs)} runs, {len(keys)} questions. Generated {time.strftime('%Y-%m-%d %H:%M:%S')}.</p>"]

    # runs and their configuration
    parts.append("<h2>Runs</h2><table><tr><th>method</th><th>run file</th><th>dataset</th><th>n</th><th>errors</th>"
                 "<th>hits@1</th><th>F1</th><th>abstained</th><th>confidently wrong</th><th>evidence recall@5</th><th>judge acc</th><th>latency p50 (ms)</th>"
                 "<th>context tokens (mean)</th><th>LLM tokens</th><th>fallbacks</th><th>config</th></tr>")
    for run, t in zip(runs, tables):
        cfg = run.meta.get("config") or {}
        lat = sorted(float(r.get("latency_ms", 0.0)) for r in run.rows)
        ctx = _mean([float(r.get("context_tokens", 0)) for r in run.rows])
        llm = sum(int((r.get("tokens") or {}).get("total_tokens", 0)) for r in run.rows)
        fb = sum(sum((r.get("fallbacks") or {}).values()) for r in run.rows)
        ver = run.meta.get("versions") or {}
        conf = html.escape(json.dumps({k: v for k, v in cfg.items() if k not in ("command",)}, ensure_ascii=False))
        vers = html.escape(", ".join(f"{k} {v}" for k, v in ver.items() if v and k != "platform"))
        o = t["overall"]
        parts.append(
            f"<tr><td><b>{html.escape(run.name)}</b></td><td class=small>{html.escape(str(run.path))}</td>"
            f"<td>{_fmt(cfg.get('dataset'))}</td><td class=num>{o['n']}</td><td class=num>{o['errors']}</td>"
            f"<td class=num>{_fmt(o['hits@1'])}</td><td class=num>{_fmt(o['f1'])}</td>"
            f"<td class=num>{o['abstained']}</td><td class=num>{o['wrong_confident']}</td>"
            f"<td class=num>{_fmt(o.get('evidence_recall@5'))}</td>"
            f"<td class=num>{_fmt(o.get('judge_acc'))}{' (' + str(o['judge_failures']) + ' failed)' if o.get('judge_failures') else ''}</td>"
            f"<td class=num>{_fmt(statistics.median(lat))}</td><td class=num>{_fmt(ctx)}</td>"
            f"<td class=num>{llm or '-'}</td><td class=num>{fb}</td>"
            f"<td class=small><details><summary>config</summary>{conf}<br>{vers}"
            f"<br>{html.escape(str(cfg.get('command', '')))}</details></td></tr>")
    parts.append("</table>")
    if not all(r.meta for r in runs):
        parts.append("<p class=small>A run without its summary line was interrupted; its metrics cover the "
                     "questions it finished.</p>")

    # metrics by type
    groups = ["overall"] + sorted({g for t in tables for g in t if g != "overall"})
    parts.append("<h2>Metrics by question type (hits@1; F1 in parentheses)</h2><table><tr><th>type</th><th>n</th>"
                 + "".join(f"<th>{html.escape(r.name)}</th>" for r in runs) + "</tr>")
    for g in groups:
        n = next((t[g]["n"] for t in tables if g in t), 0)
        vals = [t.get(g, {}).get("hits@1") for t in tables]
        f1s = [t.get(g, {}).get("f1") for t in tables]
        best = max((v for v in vals if v is not None), default=None)
        cells = "".join(f"<td class=num>{'<b>' if v == best and len(runs) > 1 else ''}{_fmt(v)}"
                        f"{'</b>' if v == best and len(runs) > 1 else ''} ({_fmt(f)})</td>"
                        for v, f in zip(vals, f1s))
        parts.append(f"<tr><td>{html.escape(g)}</td><td class=num>{n}</td>{cells}</tr>")
    parts.append("</table>")
    for name, alt in (("metrics_by_qtype.png", "metrics by question type"), ("latency.png", "latency"),
                      ("context_tokens.png", "context tokens per question")):
        b64 = base64.b64encode(figs[name]).decode()
        parts.append(f"<h2>{html.escape(alt.capitalize())}</h2><img alt='{alt}' src='data:image/png;base64,{b64}'>")

    # disagreements
    disagree: set[str] = set()
    if len(runs) > 1:
        parts.append("<h2>Where the runs disagree</h2><p class=small>Cell (row A, column B): questions A answers "
                     "right and B gets wrong (by the judge's verdict where judged, else hits@1).</p><table><tr><th>A \\ B</th>"
                     + "".join(f"<th>{html.escape(r.name)}</th>" for r in runs) + "</tr>")
        for k in keys:
            hits = [_hit(m.get(k)) for m in maps]
            if len({h for h in hits if h is not None}) > 1:
                disagree.add(k)
        for i, a in enumerate(runs):
            row = []
            for j in range(len(runs)):
                c = sum(1 for k in keys if _hit(maps[i].get(k)) and _hit(maps[j].get(k)) is False) if i != j else None
                row.append(f"<td class=num>{'' if c is None else c}</td>")
            parts.append(f"<tr><th>{html.escape(a.name)}</th>{''.join(row)}</tr>")
        parts.append(f"</table><p>{len(disagree)} of {len(keys)} questions get a hit from some runs and a miss "
                     f"from others.</p>")

    # per-question table
    parts.append("<h2>Per question</h2><p><label><input type=checkbox id=onlydis onchange=filt()> only "
                 "disagreements</label> &nbsp; <label>missed by <select id=onlymiss onchange=filt()>"
                 "<option value=''>any or none</option>"
                 + "".join(f"<option value='m{i}'>{html.escape(r.name)}</option>" for i, r in enumerate(runs))
                 + "</select></label></p>")
    parts.append("<table id=perq><thead><tr><th>#</th><th>question</th><th>type</th><th>gold</th>"
                 + "".join(f"<th>{html.escape(r.name)}</th>" for r in runs) + "</tr></thead><tbody>")
    for n, k in enumerate(keys, 1):
        recs = [m.get(k) for m in maps]
        first = next(r for r in recs if r is not None)
        miss = " ".join(f"m{i}" for i, r in enumerate(recs) if _hit(r) is False)
        cls = " class=disagree" if k in disagree else ""
        gold = html.escape(" | ".join(first.get("answers") or []))
        parts.append(f"<tr{cls} data-miss='{miss}'><td class=num>{n}</td><td>{highlight_dates(first['question'])}</td>"
                     f"<td>{_fmt(first.get('qtype'))}</td><td>{gold}</td>"
                     + "".join(_cell(r, max_evidence) for r in recs) + "</tr>")
    parts.append("</tbody></table></body></html>")
    page = out / "index.html"
    write_bytes(page, "\n".join(parts).encode("utf-8"))
    return page
