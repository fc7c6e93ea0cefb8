"""The run file ``chronorag eval`` writes, and the crash-safe writer behind it.

Format (``chronorag-run/1``): JSON Lines, UTF-8.

- One line per question, in question-file order (``"record": "question"``): the question,
  gold answers, ranked predictions, per-question metrics, latency, retrieved evidence,
  context tokens, LLM tokens, fallback counts, the tool-call trace when the method made
  tool calls, the judge's verdict when ``--judge`` ran, and ``"error"`` (``null``, or the
  exception that question raised).
- One last line (``"record": "run"``): the run's configuration, package versions, start
  and end time and the aggregated metrics. A run that was killed has no such line (its
  partial file, see below, still holds every question finished before the kill).

The writer (:class:`chronorag.graphs.output.OutputFile`, shared by every command that
writes a file) never touches the destination until the run is over: rows go to a hidden
``.NAME.PID.RANDOM.partial`` file next to it (created exclusively, never through a
symlink), flushed after every question; at the end the file is fsynced and moved over the
destination with one atomic rename. So the destination always holds either the previous
complete file or the new complete file.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError, DataFormatError
from chronorag.graphs.output import OutputFile, default_output_path
from chronorag.graphs.output import check_output_path as _check_output_path
from chronorag.graphs.persist import iter_jsonl

__all__ = [
    "RUN_FORMAT",
    "RunFileWriter",
    "check_output_path",
    "default_run_path",
    "load_run",
    "package_versions",
]

RUN_FORMAT = "chronorag-run/1"

_PACKAGES = ("chronorag", "numpy", "llama-index-core", "langchain-core", "langgraph", "openai", "ragas",
             "sentence-transformers", "faiss-cpu")


def package_versions() -> dict[str, str | None]:
    """Python, platform and the installed versions of the packages a result depends on."""
    from importlib import metadata

    out: dict[str, str | None] = {"python": platform.python_version(), "platform": platform.platform()}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def check_output_path(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Validate a run file path before any work (:func:`chronorag.graphs.output.check_output_path`)."""
    return _check_output_path(out, inputs=inputs)


def default_run_path(dataset: str, method: str) -> Path:
    """A new, unique run file in the temp directory (created empty, never through a symlink)."""
    return default_output_path(f"{dataset}-{method}")


class RunFileWriter(OutputFile):
    """Write JSONL rows to a partial file and move it over ``path`` on :meth:`commit`
    (:class:`chronorag.graphs.output.OutputFile`, the writer of every output file)."""


def load_run(path: str | os.PathLike[str]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """Read a run file: ``(run record or None, question records)``.

    Files from older versions (no ``record`` key, no run line) are read as question records.

    Raises
    ------
    DataFormatError
        A line that is not a JSON object, naming ``file:line``.
    """
    p = Path(path)
    if p.is_dir():
        raise ConfigError(f"{p} is a directory; give the run file (.jsonl) that `chronorag eval --out` wrote")
    run: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    for lineno, r in iter_jsonl(p):
        if not isinstance(r, dict):
            raise DataFormatError(f"{p}:{lineno}: expected a JSON object, got {type(r).__name__}")
        if r.get("record") == "run":
            run = r
            r.setdefault("_line", lineno)
            continue
        if not isinstance(r.get("question"), str):
            raise DataFormatError(f"{p}:{lineno}: question record has no 'question' string")
        r.setdefault("_line", lineno)
        rows.append(r)
    if not rows:
        raise DataFormatError(f"{p} holds no question records")
    return run, rows

