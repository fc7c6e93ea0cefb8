"""The ToPG methods (``topg-naive``, ``topg-local``, ``topg-global``), the ``dense-passages`` baseline, and
``topg-local-noseed`` (Local without the no-LLM entity-linked seeding)."""

from __future__ import annotations

import functools
import os
from typing import Any

from chronorag.evaluation.runner import Method, register_method


def _topg_factory(index_dir: str | os.PathLike[str], *, method: str, **kw: Any) -> Method:
    """ToPG (Naive/Local/Global) or the dense-passage baseline over a ToPG index (evaluation/passages.py)."""
    from chronorag.evaluation.methods.passages import topg_method

    return topg_method(index_dir, method=method, **kw)


for _name in ("topg-naive", "topg-local", "topg-global", "dense-passages"):
    register_method(_name, functools.partial(_topg_factory, method=_name))
# ablation: ToPG Local without the no-LLM entity-linked seeding (SuggestNaive seeds only)
register_method("topg-local-noseed", functools.partial(_topg_factory, method="topg-local", link_per_entity=0))
