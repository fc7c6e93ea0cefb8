"""Evaluation: one generic runner (:mod:`.runner`), run files, report, judge, RAGAS, and
one adapter per method in :mod:`.methods`.
"""

from chronorag.evaluation import methods as _methods  # noqa: F401  (registers the built-in methods)
from chronorag.evaluation.runner import (
    METHODS,
    Method,
    Prediction,
    count_tokens,
    format_table,
    load_questions,
    make_method,
    register_method,
    run_eval,
)

__all__ = [
    "METHODS",
    "Method",
    "Prediction",
    "count_tokens",
    "format_table",
    "load_questions",
    "make_method",
    "register_method",
    "run_eval",
]
