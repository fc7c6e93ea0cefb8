"""RAGAS on chronorag predictions (extra ``eval``).

:func:`ragas_scores` turns the predictions JSONL that ``chronorag eval`` writes into a
RAGAS ``EvaluationDataset`` (question, retrieved contexts, first predicted answer,
gold answer, and gold evidence passages when the question file has them) and runs
RAGAS metrics. The default metrics need no LLM (string similarity of the answer,
context recall and precision against the gold evidence), so they run offline; pass
``metrics=`` to use any other RAGAS metric, with an LLM wrapped for RAGAS.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from chronorag.errors import DataFormatError, missing_extra
from chronorag.graphs.persist import iter_jsonl

__all__ = ["ragas_scores", "to_ragas_dataset", "load_predictions"]


def load_predictions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """Read a predictions JSONL written by ``chronorag eval``."""
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such predictions file: {p}")
    rows = []
    for lineno, r in iter_jsonl(p):
        if not isinstance(r, dict) or "question" not in r:
            raise DataFormatError(f"{p}:{lineno}: not a prediction record")
        rows.append(r)
    if not rows:
        raise DataFormatError(f"{p} holds no predictions")
    return rows


def to_ragas_dataset(records: Iterable[dict[str, Any]]) -> Any:
    """A RAGAS ``EvaluationDataset`` from prediction records."""
    try:
        from ragas import EvaluationDataset
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    samples = []
    for r in records:
        pred = r.get("predicted") or []
        gold = r.get("answers") or []
        s = {"user_input": r["question"], "retrieved_contexts": [str(x) for x in r.get("evidence", [])],
             "response": str(pred[0]) if pred else "", "reference": " | ".join(str(g) for g in gold)}
        if r.get("gold_evidence"):
            s["reference_contexts"] = [str(x) for x in r["gold_evidence"]]
        samples.append(s)
    return EvaluationDataset.from_list(samples)


def ragas_scores(records: Sequence[dict[str, Any]] | str | os.PathLike[str], *,
                 metrics: Sequence[Any] | None = None) -> dict[str, float]:
    """Mean RAGAS scores over the predictions (offline, LLM-free metrics by default).

    Parameters
    ----------
    records : sequence of dict or path
        Prediction records, or the JSONL file ``chronorag eval`` wrote.
    metrics : sequence of RAGAS metrics, optional
        Defaults to ``NonLLMStringSimilarity`` and, when gold evidence is present,
        ``NonLLMContextRecall`` and ``NonLLMContextPrecisionWithReference``.
    """
    rows = load_predictions(records) if isinstance(records, (str, os.PathLike)) else list(records)
    if not rows:
        raise ValueError("no prediction records")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            from ragas import evaluate
            from ragas.metrics import (
                NonLLMContextPrecisionWithReference,
                NonLLMContextRecall,
                NonLLMStringSimilarity,
            )
    except ImportError as exc:
        raise missing_extra("ragas", "eval") from exc
    if metrics is None:
        try:
            metrics = [NonLLMStringSimilarity()]
        except ImportError as exc:  # rapidfuzz backs the string metrics
            raise missing_extra("rapidfuzz", "eval") from exc
        if all(r.get("gold_evidence") for r in rows):
            metrics += [NonLLMContextRecall(), NonLLMContextPrecisionWithReference()]
    result = evaluate(to_ragas_dataset(rows), metrics=list(metrics), show_progress=False)
    df = result.to_pandas()
    return {m.name: round(float(df[m.name].mean()), 4) for m in metrics}
