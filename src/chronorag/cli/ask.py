"""``chronorag ask``: answer a question over an index with one method."""

from __future__ import annotations

import argparse
import json
from typing import Any

from chronorag.cli._common import (
    _deadline_opt,
    _short,
)


def _answer(index_dir: str, question: str, method: str, llm_url: str | None,
            **options: Any) -> dict[str, Any]:
    from chronorag.evaluation import make_method

    m = make_method(method, index_dir, llm_url=llm_url, **options)
    pred = m({"question": question, "answers": ["?"]})
    return {"question": question, "method": method, "answers": pred.answers[:10],
            "evidence": pred.evidence[:10], "info": pred.info}


def _cmd_ask(args: argparse.Namespace) -> int:
    if not args.question.strip():
        raise ValueError("the question is empty")
    res = _answer(args.index_dir, args.question, args.method, args.llm_url, **_deadline_opt(args))
    if args.json:
        print(json.dumps(res, ensure_ascii=False))
        return 0
    mode = "" if args.llm_url else " (no-LLM mode)"
    print(f"Q: {res['question']}\nmethod: {res['method']}{mode}")
    print("answers:", "; ".join(res["answers"][:5]) or "(none)")
    if res["info"].get("mode"):
        print("mode:", res["info"]["mode"])
    if res["info"].get("note") and not res["answers"]:
        print("why:", res["info"]["note"])
    print("evidence:")
    for e in res["evidence"]:
        print("  -", _short(e))
    return 0
