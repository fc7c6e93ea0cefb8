"""Atomic writes of index directories.

An index directory is written into a fresh sibling temporary directory and swapped
into place only once everything in it has been written, so a failed or interrupted
ingest leaves any previous index at that path untouched.
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["atomic_dir", "read_json", "write_json"]


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary directory that replaces ``path`` when the block succeeds.

    Parameters
    ----------
    path : path-like
        The index directory to (re)write.

    Yields
    ------
    pathlib.Path
        An empty directory on the same file system as ``path``; write everything there.

    Notes
    -----
    On success the old directory (if any) is renamed aside, the new one renamed into
    place, and the old one removed. On an exception the temporary directory is
    removed and ``path`` is left exactly as it was.
    """
    target = Path(path)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"index path exists and is not a directory: {target}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        yield tmp
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    old = None
    if target.exists():
        old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
        os.rmdir(old)
        os.replace(target, old)
    os.replace(tmp, target)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as UTF-8 JSON (non-ASCII kept as is, so names stay byte-exact)."""
    Path(path).write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a UTF-8 JSON file."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line of a JSONL(.gz) file.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    DataFormatError
        On a line that is not JSON, naming ``file:line``.
    """
    from chronorag.errors import DataFormatError

    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"no such file: {p}")
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    with opener(p, "rt", encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataFormatError(f"{p}:{lineno}: invalid JSON ({exc.msg})") from None
