"""The one writer of every output file chronorag writes outside an index.

Run files of ``chronorag eval`` (every dataset), ``kg-irag eval`` and ``kg-irag generate``,
``sft`` records, the pages and figures of ``report``: each goes through
:class:`OutputFile` after :func:`check_output_path`. (Index directories have their own
writer, :func:`chronorag.graphs.persist.write_index`.)

Guarantees
----------
Nothing is destroyed
    :func:`check_output_path` runs before any work. It resolves symbolic links, then
    refuses an output that is one of the command's inputs, that lies inside an index
    directory (or its ``.chronorag`` administrative directory), that is a directory, or
    whose directory is missing or not writable.
The destination is replaced once, atomically
    Rows go to a hidden ``.NAME.PID.RANDOM.partial`` file next to the destination,
    created exclusively and never through a symbolic link (``O_EXCL | O_NOFOLLOW``),
    flushed after every record. :meth:`OutputFile.commit` fsyncs it and renames it over
    the destination (the rename replaces a link there, never its target). A crash or kill
    leaves the previous destination untouched; a run interrupted after some records keeps
    them in the partial file (named in the error); a failed write of a single blob
    (:func:`write_bytes`) leaves nothing behind.
Default paths are unique
    :func:`default_output_path` creates a new file with :func:`tempfile.mkstemp` (exclusive,
    never following a link planted in the temp directory).
Errors name the file
    A full disk or a permission error while writing raises :class:`OSError` carrying the
    destination's name, so the CLI prints one line naming it.
Output directories
    :func:`prepare_output_dir` (``report --out DIR``) creates ``DIR`` or accepts it when it
    is empty or holds the marker file chronorag wrote there before; any other non-empty
    directory is refused (:class:`~chronorag.errors.OutputExistsError`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import tempfile
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from chronorag.errors import ConfigError, MissingFileError, OutputExistsError
from chronorag.graphs.persist import ADMIN_DIR, is_index_dir

__all__ = [
    "OutputFile",
    "check_output_path",
    "default_output_path",
    "prepare_output_dir",
    "write_bytes",
    "write_jsonl",
]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _same_file(a: Path, b: Path) -> bool:
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return Path(os.path.realpath(a)) == Path(os.path.realpath(b))


def _inside_index(p: Path) -> Path | None:
    """The index directory that ``p`` (already resolved) lies in, if any."""
    for a in (p, *p.parents):
        if a.name == ADMIN_DIR:
            return a.parent
        with contextlib.suppress(OSError):
            if a.is_dir() and is_index_dir(a):
                return a
    return None


def check_output_path(out: str | os.PathLike[str], *, inputs: Iterable[str | os.PathLike[str] | None] = (),
                      option: str = "--out") -> Path:
    """Validate an output file path before any work is done.

    Parameters
    ----------
    out : path-like
        The destination file.
    inputs : iterable of path-like
        Files and directories the command reads; ``out`` may not be (or lie inside) one.
    option : str
        How the user gave the path, for messages.

    Returns
    -------
    pathlib.Path
        ``out`` as given (it is replaced by :meth:`OutputFile.commit`, a link there included).

    Raises
    ------
    ValueError
        ``out`` is a directory, an input, inside an input directory or inside an index,
        or its directory is not writable.
    FileNotFoundError
        Its directory does not exist.
    """
    p = Path(out)
    if not str(out).strip():
        raise ConfigError(f"{option} is empty; give a file path")
    if p.is_dir():
        raise ConfigError(f"{option} {p} is a directory; give a file path such as {p / 'run.jsonl'}")
    if not p.parent.is_dir():
        raise MissingFileError(f"the directory of {option} {p} does not exist; create {p.parent} first")
    if not os.access(p.parent, os.W_OK | os.X_OK):
        raise ConfigError(f"cannot write to the directory of {option} {p} (permission denied); choose another path")
    real = Path(os.path.realpath(p))
    real_parent = Path(os.path.realpath(p.parent))
    for src in inputs:
        if src is None:
            continue
        s = Path(src)
        if _same_file(p, s) or real == Path(os.path.realpath(s)):
            raise ConfigError(f"{option} {p} is the input file {s}; writing there would destroy it. "
                             "Choose another output path")
        rs = Path(os.path.realpath(s))
        if s.is_dir() and (real_parent == rs or rs in real_parent.parents):
            raise ConfigError(f"{option} {p} is inside the index directory {s} (an input of this command); "
                             "write results elsewhere")
    for where in (real_parent / p.name, real):
        idx = _inside_index(where.parent)
        if idx is not None:
            via = " (through a symbolic link)" if where == real and real != real_parent / p.name else ""
            raise ConfigError(f"{option} {p} is inside the chronorag index {idx}{via}; chronorag never "
                             "writes other files into an index. Write it elsewhere")
    return p


def default_output_path(kind: str, *, suffix: str = ".jsonl") -> Path:
    """A new, unique, empty file in the temp directory (``mkstemp``: never through a link)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in kind)[:80]
    fd, name = tempfile.mkstemp(prefix=f"chronorag-{safe}-{stamp}-", suffix=suffix)
    os.close(fd)
    return Path(name)


def _named(exc: OSError, path: Path) -> OSError:
    """``exc`` with the destination's name (the CLI's message names the file)."""
    if exc.filename is not None and str(exc.filename) == str(path):
        return exc
    new = type(exc)(exc.errno or errno.EIO, exc.strerror or str(exc), str(path))
    return new


class OutputFile:
    """Write a file through a partial file and move it over ``path`` on :meth:`commit`.

    Parameters
    ----------
    path : path-like
        The destination (checked with :func:`check_output_path` by the caller); left
        untouched until :meth:`commit`.
    binary : bool
        Write bytes (:meth:`write_bytes`) instead of text.
    keep_partial : bool
        On :meth:`abort`, keep a partial file that holds records (default); ``False``
        removes it (a half-written figure is worth nothing).

    Use as a context manager: committed on success, aborted on an exception.
    """

    def __init__(self, path: str | os.PathLike[str], *, binary: bool = False, keep_partial: bool = True) -> None:
        self.path = Path(path)
        self.partial = self.path.parent / f".{self.path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial"
        self.keep_partial = keep_partial
        self.rows = 0
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
        try:
            fd = os.open(self.partial, flags, 0o644)
        except OSError as exc:
            raise _named(exc, self.path) from None
        self._fh: Any = os.fdopen(fd, "wb" if binary else "w", encoding=None if binary else "utf-8")

    def _io(self, fn: Any, *args: Any) -> Any:
        if self._fh is None:
            raise ConfigError(f"{self.path}: output already closed")
        try:
            return fn(*args)
        except OSError as exc:
            raise _named(exc, self.path) from None

    def write_row(self, row: Any) -> None:
        """Append one JSON line and flush it to the OS (it survives a crash of this process)."""
        line = json.dumps(row, ensure_ascii=False, default=str) + "\n"
        self._io(self._fh.write, line)
        self._io(self._fh.flush)
        self.rows += 1

    #: the name :class:`~chronorag.evaluation.runfile.RunFileWriter` callers use
    write = write_row

    def write_text(self, text: str) -> None:
        """Append text."""
        self._io(self._fh.write, text)

    def write_bytes(self, data: bytes) -> None:
        """Append bytes (``binary=True``)."""
        self._io(self._fh.write, data)

    def commit(self) -> Path:
        """fsync, then atomically replace the destination with the partial file."""
        if self._fh is None:
            raise ConfigError(f"{self.path}: output already closed")
        fh = self._fh
        try:
            fh.flush()
            os.fsync(fh.fileno())
            fh.close()
            self._fh = None
            os.replace(self.partial, self.path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                fh.close()
            self._fh = None
            with contextlib.suppress(OSError):
                self.partial.unlink()
            raise _named(exc, self.path) from None
        with contextlib.suppress(OSError):  # make the rename itself durable
            dfd = os.open(self.path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
        return self.path

    def abort(self) -> Path | None:
        """Close without touching the destination.

        Returns
        -------
        Path or None
            The kept partial file (holding every finished record), or None when it was
            removed (no records, or ``keep_partial=False``).
        """
        if self._fh is not None:
            with contextlib.suppress(OSError):
                self._fh.close()
            self._fh = None
        if self.rows == 0 or not self.keep_partial:
            with contextlib.suppress(OSError):
                self.partial.unlink()
            return None
        return self.partial

    def abort_noting(self, exc: BaseException, *, command: str, what: str = "questions") -> None:
        """:meth:`abort` on ``exc``, adding a note to it that names the kept partial file (if any)."""
        kept = self.abort()
        if kept is not None and hasattr(exc, "add_note"):
            exc.add_note(f"{command}: the finished {what} are kept in {kept}")

    def __enter__(self) -> OutputFile:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.commit()
            return
        kept = self.abort()
        if kept is not None and exc is not None and hasattr(exc, "add_note"):
            exc.add_note(f"chronorag: the finished records are kept in {kept}; {self.path} was not changed")


def write_jsonl(rows: Iterable[Any], path: str | os.PathLike[str]) -> int:
    """Write ``rows`` as JSON Lines to ``path`` through :class:`OutputFile`; return how many."""
    with OutputFile(path) as out:
        for r in rows:
            out.write_row(r)
        return out.rows


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Replace ``path`` with ``data`` atomically (nothing left behind on failure)."""
    with OutputFile(path, binary=True, keep_partial=False) as out:
        out.write_bytes(data)
    return Path(path)


#: marks a directory that ``report`` (or another directory-writing command) wrote
OUTPUT_MARKER = ".chronorag-output"


def prepare_output_dir(out: str | os.PathLike[str], *, kind: str = "report",
                       inputs: Iterable[str | os.PathLike[str]] = ()) -> Path:
    """Create or accept an output directory (see the module docstring).

    Raises
    ------
    OutputExistsError
        ``out`` is a file, lies inside an index, or is a non-empty directory that
        chronorag did not write.
    """
    p = Path(out)
    if p.exists() and not p.is_dir():
        raise OutputExistsError(f"--out {p} is a file; give a directory for the {kind}")
    real = Path(os.path.realpath(p))
    idx = _inside_index(real) if real.exists() else _inside_index(real.parent)
    if idx is not None:
        raise OutputExistsError(f"--out {p} is inside the chronorag index {idx}; write the {kind} elsewhere")
    for src in inputs:
        if Path(os.path.realpath(src)) == real:
            raise OutputExistsError(f"--out {p} is the input {src}; write the {kind} elsewhere")
    marker = p / OUTPUT_MARKER
    if p.is_dir():
        entries = sorted(e.name for e in p.iterdir())
        if entries and not (marker.is_file() and not marker.is_symlink()):
            shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
            raise OutputExistsError(
                f"--out {p} is not empty and chronorag did not write it (it holds {shown}); chronorag "
                f"will not replace files there. Pass a new or empty directory (e.g. {p / kind}), or "
                "remove the directory yourself if you mean to discard it")
    try:
        p.mkdir(parents=True, exist_ok=True)
        if not marker.exists():
            fd = os.open(marker, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(f"written by chronorag {kind}; files here may be replaced by the next run\n")
    except OSError as exc:
        raise _named(exc, marker if p.is_dir() else p) from None
    return p


@contextlib.contextmanager
def output_file(path: str | os.PathLike[str], **kw: Any) -> Iterator[OutputFile]:
    """``with output_file(path) as out:`` -- the context-manager spelling of :class:`OutputFile`."""
    with OutputFile(path, **kw) as out:
        yield out
