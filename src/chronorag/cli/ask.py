"""``chronorag ask``: answer one question, or a JSONL file of questions, over an index with one method.

``--json`` prints one JSON object per question, in order: ``question``, ``method``,
``answers`` (best first; empty when the method abstains), ``abstained``, ``reason``,
``evidence_ids`` and ``evidence``. In a ``--questions`` file a line that is empty, not
JSON, without a ``question`` string, or with a question over
:data:`MAX_QUESTION_CHARS` characters gets an object with ``error`` naming
``file:line`` (and the same line on stderr); the other questions are still answered and
the command exits 2 at the end.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronorag.cli._common import (
    _deadline_opt,
    _short,
)
from chronorag.errors import ConfigError, MissingFileError

#: longest question accepted (characters)
MAX_QUESTION_CHARS = 2000


def _check_question(q: Any) -> str:
    if not isinstance(q, str) or not q.strip():
        raise ConfigError("the question is empty")
    if len(q) > MAX_QUESTION_CHARS:
        raise ConfigError(f"the question has {len(q)} characters; at most {MAX_QUESTION_CHARS} are accepted")
    return q


def _iter_questions(path: str) -> Iterator[tuple[int, str | None, str | None]]:
    """``(line, question, None)`` or ``(line, None, error)`` for every line of a JSONL file."""
    p = Path(path)
    if not p.is_file():
        raise MissingFileError(f"no such question file: {p}")
    with p.open(encoding="utf-8", errors="replace") as fh:
        for lineno, line in enumerate(fh, start=1):
            where = f"{p}:{lineno}"
            if not line.strip():
                yield lineno, None, f"{where}: empty line (each line must be a JSON object with a 'question')"
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                yield lineno, None, f"{where}: not JSON ({exc.msg} at column {exc.colno})"
                continue
            q = row.get("question") if isinstance(row, dict) else row if isinstance(row, str) else None
            try:
                yield lineno, _check_question(q), None
            except ValueError as exc:
                yield lineno, None, f"{where}: {exc}"


def _result(pred: Any, question: str, method: str) -> dict[str, Any]:
    info = pred.info or {}
    ids = info.get("event_ids") or info.get("evidence_ids") or info.get("chunk_ids") or []
    out = {"question": question, "method": method, "answers": list(pred.answers[:10]),
           "abstained": bool(pred.abstained or not pred.answers),
           "reason": pred.reason or ("" if pred.answers else "the method returned no answer and did not say why"),
           "evidence_ids": list(ids)[:50], "evidence": list(pred.evidence[:10]),
           "mode": info.get("mode")}
    # what a reason may point to: T-GRAG's per-period sentences ("the sentence per period is in sub_answers")
    out.update({k: info[k] for k in ("decomposition", "sub_answers") if k in info})
    return out


def _cmd_ask(args: argparse.Namespace) -> int:
    from chronorag.evaluation import make_method

    if (args.question is None) == (args.questions is None):
        raise ConfigError("give one question, or --questions FILE.jsonl (not both)")
    opts: dict[str, Any] = dict(_deadline_opt(args))
    if getattr(args, "reference", None):
        opts["reference"] = args.reference
    if args.question is not None:
        _check_question(args.question)
    m = make_method(args.method, args.index_dir, llm_url=args.llm_url, **opts)
    if args.question is not None:
        res = _result(m({"question": args.question, "answers": ["?"]}), args.question, args.method)
        if args.json:
            print(json.dumps(res, ensure_ascii=False))
            return 0
        _print(res, args)
        return 0
    failed = 0
    for lineno, q, err in _iter_questions(args.questions):
        if err is None:
            assert q is not None
            try:
                res = _result(m({"question": q, "answers": ["?"]}), q, args.method)
            except Exception as exc:  # noqa: BLE001 - one bad question must not stop the others
                err = f"{args.questions}:{lineno}: {type(exc).__name__}: {exc}"
        if err is not None:
            failed += 1
            print(f"chronorag ask: error: {err}", file=sys.stderr)
            res = {"question": q, "method": args.method, "line": lineno, "error": err, "answers": [],
                   "abstained": True, "reason": err, "evidence_ids": []}
        if args.json:
            print(json.dumps(res, ensure_ascii=False), flush=True)
        elif err is None:
            _print(res, args)
    return 2 if failed else 0


def _print(res: dict[str, Any], args: argparse.Namespace) -> None:
    mode = "" if args.llm_url else " (no-LLM mode)"
    print(f"Q: {res['question']}\nmethod: {res['method']}{mode}")
    if res.get("mode"):
        print("mode:", res["mode"])
    if res["abstained"]:
        print("answers: (none)")
    else:
        print("answers:", "; ".join(res["answers"][:5]))
    if res["reason"]:
        print("why:", res["reason"])
    if res.get("sub_answers"):  # T-GRAG: the sentence read for each period (a refusal points here)
        print("per period:")
        for sub in res["sub_answers"]:
            print(f"  [{sub.get('period') or 'all'}]", _short(str(sub.get("answer") or "(not found)")))
    print("evidence:")
    for e in res.get("evidence", []):
        print("  -", _short(e))
