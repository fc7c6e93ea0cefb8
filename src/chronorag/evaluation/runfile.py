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

The writer never touches the destination until the run is over: rows go to a hidden
``.NAME.PID.RANDOM.partial`` file next to it (created exclusively, never through a
symlink), flushed after every question; at the end the file is fsynced and moved over the
destination with one atomic rename. So the destination always holds either the previous
complete file or the new complete file.
"""

from __future__ import annotations

import json
import os
import platform
import secrets
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any, TextIO

from chronorag.errors import DataFormatError
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


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def check_output_path(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Validate an output path: not a directory, not one of the inputs, parent exists.

    Raises
    ------
    ValueError
        ``out`` is a directory, or the same file as (or a file inside) one of ``inputs``.
    FileNotFoundError
        Its directory does not exist.
    """
    p = Path(out)
    if p.is_dir():
        raise ValueError(f"--out {p} is a directory; give a file path such as {p / 'run.jsonl'}")
    if not p.parent.is_dir():
        raise FileNotFoundError(f"the directory of --out {p} does not exist; create {p.parent} first")
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise ValueError(f"cannot write to the directory of --out {p} (permission denied); choose another path")
    for src in inputs:
        s = Path(src)
        if _same_file(p, s):
            raise ValueError(f"--out {p} is the input file {s}; writing there would destroy it. "
                             f"Choose another output path")
        if s.is_dir() and p.resolve().parent == s.resolve():
            raise ValueError(f"--out {p} is inside the index directory {s}; write results elsewhere")
    return p


def default_run_path(dataset: str, method: str) -> Path:
    """A new, unique run file in the temp directory (created empty, never through a symlink)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in f"{dataset}-{method}")
    fd, name = tempfile.mkstemp(prefix=f"chronorag-{safe}-{stamp}-", suffix=".jsonl")
    os.close(fd)
    return Path(name)


class RunFileWriter:
    """Write JSONL rows to a partial file and move it over ``path`` on :meth:`commit`.

    Parameters
    ----------
    path : path
        The destination; left untouched until :meth:`commit`.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.partial = self.path.parent / f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        fd = os.open(self.partial, flags, 0o644)
        self._fh: TextIO | None = os.fdopen(fd, "w", encoding="utf-8")
        self.rows = 0

    def write(self, row: dict[str, Any]) -> None:
        """Append one row and flush it to the OS (it survives a crash of this process)."""
        if self._fh is None:
            raise ValueError("run file already closed")
        self._fh.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()
        self.rows += 1

    def commit(self) -> Path:
        """fsync, then atomically replace the destination with the partial file."""
        if self._fh is None:
            raise ValueError("run file already closed")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        self._fh = None
        os.replace(self.partial, self.path)
        try:  # make the rename itself durable
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        except OSError:  # pragma: no cover - some filesystems refuse fsync on a directory
            pass
        return self.path

    def abort(self) -> Path | None:
        """Close without touching the destination; keep the partial file if it has rows.

        Returns
        -------
        Path or None
            The kept partial file (holding every finished question), or None.
        """
        if self._fh is not None:
            self._fh.close()
            self._fh = None
        if self.rows == 0:
            self.partial.unlink(missing_ok=True)
            return None
        return self.partial


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
        raise ValueError(f"{p} is a directory; give the run file (.jsonl) that `chronorag eval --out` wrote")
    run: dict[str, Any] | None = None
    rows: list[dict[str, Any]] = []
    for lineno, r in iter_jsonl(p):
        if not isinstance(r, dict):
            raise DataFormatError(f"{p}:{lineno}: expected a JSON object, got {type(r).__name__}")
        if r.get("record") == "run":
            run = r
            continue
        if not isinstance(r.get("question"), str):
            raise DataFormatError(f"{p}:{lineno}: question record has no 'question' string")
        r.setdefault("_line", lineno)
        rows.append(r)
    if not rows:
        raise DataFormatError(f"{p} holds no question records")
    return run, rows

