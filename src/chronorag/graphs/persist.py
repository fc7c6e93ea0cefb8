"""Index directories: crash-safe versioned writes, a writer lock, and safe readers.

Every chronorag index writer (``chronorag ingest``, ``demo --out``, ``tgrag index``,
:meth:`TemporalEventStore.save <chronorag.graphs.store.TemporalEventStore.save>`,
:meth:`RuleGraph.save <chronorag.retrievers.star_rag.rule_graph.RuleGraph.save>`, and any new index
kind) writes through :func:`write_index`; nothing writes into an index directory in
place. Readers may open files as ``INDEX_DIR / "name"`` as before, or call
:func:`snapshot` once and read every file from the directory it returns, which sees
one version even while a writer replaces the index.

Layout
------
::

    INDEX_DIR/
        .chronorag/                  administrative directory: marks a chronorag index
            lock                     fcntl lock held by the one writer
            v-<time>-<pid>/          one complete version of the index's files
                .complete.json       written last: the version's file list
            current -> v-...         symbolic link naming the live version
        index.json -> .chronorag/current/index.json
        events.npz -> .chronorag/current/events.npz
        ...                          one symbolic link per file of the live version

Guarantees
----------
Atomic replacement
    A new version is written and flushed to disk (``fsync``) in its own ``v-*``
    directory; the switch is one ``rename`` of the ``current`` link. A crash or kill
    at any moment leaves either the old or the new version live, never a mix; the
    next writer removes unfinished versions (:func:`recover`).
One writer
    A writer holds an exclusive ``fcntl`` lock on ``.chronorag/lock`` for its whole
    run; a second writer fails at once with :class:`~chronorag.errors.IndexBusyError`.
    The lock dies with its process, so a killed writer never leaves a stale lock.
Readers
    Readers take no lock. A reader that called :func:`snapshot` keeps reading its
    version while one new version is committed (the previous version is kept until
    the next write).
Never someone else's files
    :func:`write_index` refuses a non-empty directory that is not a chronorag index
    (:class:`~chronorag.errors.OutputExistsError` names what it found). It only ever
    deletes what it wrote: its ``v-*`` versions and its own links. Other files in an
    index directory are left alone. The directory itself is never renamed or
    replaced, so ``--out .`` works, and a symbolic link given as the directory is
    followed (the index is written inside its target; the link is kept).
Old indexes
    Indexes written before this layout (plain files in the directory) are read as
    they are and converted on their next write, file by file, each file pointing at
    identical content at every moment.

Writing a new index kind
------------------------
::

    from chronorag.graphs.persist import write_index

    with write_index(out_dir) as tmp:      # replace the whole index
        np.save(tmp / "my_vectors.npy", vecs)
        write_json(tmp / "my_index.json", {"format": 1, ...})

    with write_index(out_dir, update=True) as tmp:   # add or replace some files;
        rg.write(tmp)                                # the others are carried over

Hold :func:`index_lock` around a long job (read the inputs, embed, write) so that a
concurrent writer is refused at the start rather than after minutes of work; the lock
is re-entrant within a process, so :func:`write_index` inside it does not block.
"""

from __future__ import annotations

import contextlib
import errno
import gzip
import json
import os
import shutil
import threading
import time
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from chronorag.errors import MissingFileError

__all__ = [
    "ADMIN_DIR",
    "atomic_dir",
    "check_output_dir",
    "index_lock",
    "is_index_dir",
    "iter_jsonl",
    "load_npy",
    "load_npz",
    "read_json",
    "recover",
    "snapshot",
    "write_index",
    "write_json",
]

ADMIN_DIR = ".chronorag"
_CURRENT = "current"
_LOCK = "lock"
_COMPLETE = ".complete.json"
_VERSION_PREFIX = "v-"
#: Files that mark a directory written by chronorag before the versioned layout.
LEGACY_MARKERS = ("index.json", "store.json", "tgrag.json", "rule_graph.json", "vector_index.json",
                  "topg.json")
#: Every file name chronorag wrote into an index directory before the versioned layout.
LEGACY_FILES = frozenset({
    "index.json", "store.json", "events.npz", "vocab.json", "texts.jsonl", "attrs.jsonl",
    "triples.npy", "triple_of_event.npy", "vectors.npy", "vector_index.json", "hnsw.faiss",
    "entity_vectors.npy", "relation_vectors.npy", "rule_graph.npz", "rule_graph.json",
    "tskg.json", "tgrag_vectors.npz", "property_graph.json", "tgrag.json",
    "topg.json", "passages.json", "propositions.json", "entities.json", "entity_keys.json",
    "prop_passage.npy", "prop_vectors.npy", "passage_vectors.npy", "pe.npz", "communities.npz",
    # memory-mapped copies (TemporalEventStore.write, VectorIndex.save, build_event_index)
    *(f"ev_{c}.npy" for c in ("subject", "relation", "object", "t_lo", "t_hi", "g_start", "g_end")),
    *(f"sidx_{c}.npy" for c in ("s", "o", "r", "sr", "ro", "t")),
    "flat.faiss", "events_by_triple.npy", "triple_bounds.npy",
})


def _errors() -> Any:
    from chronorag import errors

    return errors


# ---------------------------------------------------------------------------- paths
def _target(path: str | os.PathLike[str]) -> Path:
    """The directory an index lives in: absolute, with a symbolic link followed."""
    p = Path(os.path.abspath(os.fspath(path)))
    if p.is_symlink():
        real = Path(os.path.realpath(p))
        if not real.exists():
            raise _errors().OutputExistsError(
                f"{p} is a symbolic link to {real}, which does not exist; create {real} "
                f"(mkdir -p {real}) or pass another directory")
        return real
    return p


#: For each marker file of the older layout, keys its JSON object always has.
_MARKER_KEYS = {"store.json": {"format", "n_events"}, "index.json": {"format", "n_triples"},
                "tgrag.json": {"format", "periods"}, "rule_graph.json": {"format", "labels"},
                "vector_index.json": {"kind", "hnsw_m"}, "topg.json": {"format", "dim"}}
#: ... and the files chronorag always wrote next to it: a user's own ``store.json`` with
#: the right keys but none of these is not an index (its files would be adopted and pruned).
_MARKER_COMPANIONS = {"store.json": ("events.npz", "vocab.json"),
                      "index.json": ("store.json", "events.npz", "triples.npy", "vectors.npy"),
                      "tgrag.json": ("tskg.json", "tgrag_vectors.npz"),
                      "rule_graph.json": ("rule_graph.npz",),
                      "vector_index.json": ("vectors.npy",),
                      "topg.json": ("passages.json", "propositions.json", "prop_vectors.npy")}


def _is_legacy_index(p: Path) -> bool:
    """A directory chronorag wrote before the versioned layout (checked by content, so a
    user's own ``index.json`` does not make a directory an index)."""
    for name, keys in _MARKER_KEYS.items():
        f = p / name
        try:
            if not f.is_file() or f.stat().st_size > 64 << 20:
                continue
            if not all((p / c).is_file() for c in _MARKER_COMPANIONS[name]):
                continue
            obj = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(obj, dict) and keys <= obj.keys() and isinstance(obj.get("format", 1), int):
            return True
    return False


def is_index_dir(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` is a chronorag index directory (this layout or an older one)."""
    p = Path(path)
    if (p / ADMIN_DIR).is_dir():
        return True
    return _is_legacy_index(p)


def check_output_dir(path: str | os.PathLike[str]) -> Path:
    """Check that an index may be written at ``path``, before any work is done.

    Returns
    -------
    pathlib.Path
        The directory that will hold the index (a symbolic link resolved).

    Raises
    ------
    OutputExistsError
        When ``path`` is a file, a dangling link, or a non-empty directory that is
        not a chronorag index; the message lists what was found and how to proceed.
    """
    p = _target(path)
    if p.exists() and not p.is_dir():
        raise _errors().OutputExistsError(
            f"{p} exists and is not a directory; pass a directory for the index (e.g. {p}.index)")
    if not p.exists() or is_index_dir(p):
        return p
    entries = sorted(e.name for e in p.iterdir())
    if entries:
        shown = ", ".join(entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise _errors().OutputExistsError(
            f"{p} is not empty and is not a chronorag index (it holds {shown}); chronorag will "
            f"not replace it. Pass a new or empty directory (e.g. {p / 'index'}), or remove "
            "the directory yourself if you mean to discard it.")
    return p


def _current(admin: Path) -> Path | None:
    cur = admin / _CURRENT
    if cur.is_symlink():
        v = admin / os.readlink(cur)
        if (v / _COMPLETE).is_file():
            return v
    return None


def snapshot(path: str | os.PathLike[str]) -> Path:
    """The directory holding one consistent version of the index at ``path``.

    For a versioned index this is the live ``.chronorag/v-*`` directory (kept on disk
    while one newer version is committed); for an older-layout directory, ``path``
    itself. Read every file of one load from the returned directory.
    """
    p = Path(path)
    admin = p / ADMIN_DIR
    if admin.is_dir():
        v = _current(admin)
        if v is not None:
            return Path(os.path.realpath(v))
    return p


# ---------------------------------------------------------------------------- lock
_held: dict[tuple[str, int], list[Any]] = {}  # (realpath, thread) -> [file object, depth]
_held_lock = threading.Lock()


@contextlib.contextmanager
def index_lock(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Hold the writer lock of the index directory ``path`` (created when missing).

    Re-entrant within one process. On leaving, a directory that this lock created
    and that received no committed version is removed again, so a failed first
    ingest leaves nothing behind.

    Yields
    ------
    pathlib.Path
        The index directory (a symbolic link resolved).

    Raises
    ------
    OutputExistsError
        See :func:`check_output_dir`.
    IndexBusyError
        When another process holds the lock.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        raise _errors().ChronoRAGError(
            "writing an index needs fcntl file locks (Linux, macOS); this platform has none") from None

    p = check_output_dir(path)
    key = (str(p), threading.get_ident())  # re-entrant per thread; other threads are refused
    with _held_lock:
        if key in _held:
            _held[key][1] += 1
            reentered = True
        else:
            reentered = False
    if reentered:
        try:
            yield p
        finally:
            with _held_lock:
                _held[key][1] -= 1
        return
    created_dir = not p.exists()
    admin = p / ADMIN_DIR
    created_admin = not admin.exists()
    p.mkdir(parents=True, exist_ok=True)
    _check_admin(admin)
    admin.mkdir(exist_ok=True)
    lock_path = admin / _LOCK
    while True:
        fh = _open_lock(lock_path)
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip()
            fh.close()
            raise _errors().IndexBusyError(
                f"{p} is in use: another chronorag process ({holder or 'unknown pid'}) is "
                "writing this index. Wait for it to finish, or write to another directory."
            ) from None
        try:  # the lock file may have been removed by the previous holder's cleanup
            same = os.fstat(fh.fileno()).st_ino == os.stat(lock_path).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        fh.close()
        admin.mkdir(exist_ok=True)
    fh.seek(0)
    fh.truncate()
    fh.write(f"pid {os.getpid()} since {time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    fh.flush()
    with _held_lock:
        _held[key] = [fh, 1]
    try:
        recover(p, _locked=True)
        yield p
    finally:
        with _held_lock:
            del _held[key]
        try:
            if _current(admin) is None and (created_admin or not any(
                    e.name != _LOCK for e in admin.iterdir())):
                # nothing was ever committed here: leave the directory as we found it
                shutil.rmtree(admin, ignore_errors=True)
                if created_dir:
                    with contextlib.suppress(OSError):
                        p.rmdir()
        finally:
            fh.close()


_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def _check_admin(admin: Path) -> None:
    """Refuse an administrative directory that is a symbolic link (someone else's files)."""
    if admin.is_symlink() or (admin.exists() and not admin.is_dir()):
        raise _errors().OutputExistsError(
            f"{admin} is a symbolic link or not a directory; chronorag keeps its index versions "
            "there and will not write through it. Remove it, or write the index elsewhere")


def _open_lock(lock_path: Path) -> Any:
    """Open (create) the lock file without following a symbolic link, as a regular file."""
    import stat

    try:
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0), 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise _errors().OutputExistsError(
                f"{lock_path} is a symbolic link; chronorag will not open its lock file through "
                "it (that would write to the link's target). Remove the link and run again") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise _errors().OutputExistsError(
            f"{lock_path} is not a regular file; remove it and run again")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "r+", encoding="utf-8")


def recover(path: str | os.PathLike[str], *, _locked: bool = False) -> None:
    """Finish or undo what an interrupted writer left in the index directory ``path``.

    Removes unfinished versions and temporary links, restores the per-file links
    of the live version, and drops versions older than the previous one. Runs under
    the writer lock (taken here unless already held); :func:`write_index` calls it.
    """
    if not _locked:
        with index_lock(path):
            return
    p = _target(path)
    admin = p / ADMIN_DIR
    if not admin.is_dir():
        return
    for name in (_CURRENT, "previous"):
        e = admin / name
        if e.is_dir() and not e.is_symlink():
            # a copy that followed links (cp -rL, shutil.copytree) turned them into
            # directories; the top-level files are real copies, read as an older layout
            shutil.rmtree(e)
    live = _current(admin)
    for e in admin.iterdir():
        if e.name.startswith(_CURRENT + ".tmp-"):
            with contextlib.suppress(OSError):
                e.unlink()
        elif e.name.startswith(_VERSION_PREFIX) and e.is_dir() and not (e / _COMPLETE).is_file():
            shutil.rmtree(e, ignore_errors=True)  # never committed
        elif e.name.startswith(".tmp-"):
            shutil.rmtree(e, ignore_errors=True)
    for d in (p, admin):
        for e in d.iterdir():
            if e.name.startswith(".chronorag-link-"):
                with contextlib.suppress(OSError):
                    e.unlink()
    if live is not None:
        _sync_links(p, live, replace_real=False)
        _prune(admin, keep={live.name, *(_previous(admin, live))})


def _previous(admin: Path, live: Path) -> list[str]:
    prev = admin / "previous"
    if prev.is_symlink():
        return [os.readlink(prev)]
    return []


def _prune(admin: Path, keep: set[str]) -> None:
    for e in admin.iterdir():
        if e.name.startswith(_VERSION_PREFIX) and e.name not in keep:
            shutil.rmtree(e, ignore_errors=True)


def _same(a: Path, b: Path) -> bool:
    """True when ``a`` and ``b`` are the same file (a hard link made when adopting)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _is_our_link(entry: Path) -> bool:
    return entry.is_symlink() and os.readlink(entry).startswith(f"{ADMIN_DIR}/{_CURRENT}/")


def _link_name(name: str) -> str:
    return f"{ADMIN_DIR}/{_CURRENT}/{name}"


def _replace_with_link(entry: Path, target: str) -> None:
    tmp = entry.parent / f".chronorag-link-{os.getpid()}-{entry.name}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(target, tmp)
    os.replace(tmp, entry)


def _sync_links(p: Path, live: Path, *, replace_real: bool) -> None:
    """One link per file of the live version; our links to vanished files removed.

    A real file in the way is replaced only with ``replace_real`` (when adopting an
    older-layout index, whose files the version holds as hard links); otherwise it is
    someone else's and is left alone.
    """
    names = {e.name for e in live.iterdir() if e.name != _COMPLETE}
    for name in names:
        e = p / name
        if e.is_symlink():
            target = os.readlink(e)
            if target != _link_name(name) and target.startswith(f"{ADMIN_DIR}/"):
                _replace_with_link(e, _link_name(name))  # ours, from an older scheme
            # a link the user made elsewhere is theirs: never replaced
        elif not e.exists() or (e.is_file() and name in LEGACY_FILES
                                and (replace_real or _same(e, live / name))):
            _replace_with_link(e, _link_name(name))
    for e in p.iterdir():
        if e.name not in names and _is_our_link(e):
            with contextlib.suppress(OSError):
                e.unlink()


# ---------------------------------------------------------------------------- write
def _fsync_tree(d: Path) -> dict[str, dict[str, int]]:
    """fsync every file under ``d``; return each file's fingerprint (size and XXH3-64).

    XXH3 hashes at several GB/s (CRC-32 about 1), which matters because every load checks
    the files it reads against these fingerprints; indexes written with CRC-32 fingerprints
    are still checked with CRC-32 (:mod:`chronorag.graphs.index_files`).
    """
    import xxhash

    prints: dict[str, dict[str, int]] = {}
    for root, _dirs, files in os.walk(d):
        for f in files:
            fp = os.path.join(root, f)
            h, size = xxhash.xxh3_64(), 0
            with open(fp, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 22), b""):
                    h.update(block)
                    size += len(block)
                os.fsync(fh.fileno())
            prints[os.path.relpath(fp, d)] = {"size": size, "xxh3_64": h.intdigest()}
        _fsync_dir(Path(root))
    return dict(sorted(prints.items()))


def _fsync_dir(d: Path) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(d, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _link_or_copy(src: Path, dst: Path) -> None:
    if src.is_dir():
        shutil.copytree(src, dst, copy_function=_link_or_copy_file)
    else:
        _link_or_copy_file(src, dst)


def _link_or_copy_file(src: str | Path, dst: str | Path) -> None:
    try:
        os.link(src, dst)
    except OSError as exc:
        if exc.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
            raise
        shutil.copy2(src, dst)


def _adopt_legacy(p: Path, admin: Path) -> None:
    """Turn an older-layout index (plain files) into a first version, without copying."""
    if not _is_legacy_index(p):
        return
    files = [e for e in p.iterdir() if e.name in LEGACY_FILES and e.is_file() and not e.is_symlink()]
    if not files:
        return
    v = admin / f"{_VERSION_PREFIX}{time.time_ns():x}-{os.getpid()}-legacy"
    v.mkdir()
    for e in files:
        _link_or_copy_file(e, v / e.name)
    _commit(p, admin, v, adopting=True)


def _commit(p: Path, admin: Path, v: Path, *, adopting: bool = False) -> None:
    prints = _fsync_tree(v)
    with open(v / _COMPLETE, "w", encoding="utf-8") as fh:
        # the fingerprints let every reader tell a damaged or swapped file (index_files.py)
        json.dump({"files": list(prints), "fingerprints": prints, "pid": os.getpid(),
                   "time": time.time()}, fh)
        fh.flush()
        os.fsync(fh.fileno())
    _fsync_dir(v)
    old = _current(admin)
    # links for new names first: they dangle until the switch, then all resolve at once
    for e in v.iterdir():
        if e.name == _COMPLETE:
            continue
        link = p / e.name
        if not link.is_symlink() and not link.exists():
            _replace_with_link(link, _link_name(e.name))
    tmp = admin / f"{_CURRENT}.tmp-{os.getpid()}"
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    os.symlink(v.name, tmp)
    os.replace(tmp, admin / _CURRENT)  # the commit point
    _fsync_dir(admin)
    if old is not None and old.name != v.name:
        _replace_with_link(admin / "previous", old.name)
    _sync_links(p, v, replace_real=adopting)
    _fsync_dir(p)
    _prune(admin, keep={v.name, *(_previous(admin, v))})


def _check_foreign(p: Path, v: Path, live: Path | None) -> None:
    """Refuse to put a link over a file of the same name that chronorag did not write."""
    for e in v.iterdir():
        if e.name == _COMPLETE:
            continue
        t = p / e.name
        if t.is_symlink() and not os.readlink(t).startswith(f"{ADMIN_DIR}/"):
            raise _errors().OutputExistsError(
                f"{t} is a symbolic link chronorag did not make (to {os.readlink(t)}), but the index "
                "needs that name; remove the link and run again")
        if t.exists() and not t.is_symlink() and not (live is not None and _same(t, live / e.name)):
            raise _errors().OutputExistsError(
                f"{t} is not a file chronorag wrote, but the index needs that name; move it "
                "out of the index directory and run again")


@contextlib.contextmanager
def write_index(path: str | os.PathLike[str], *, update: bool = False) -> Iterator[Path]:
    """Write a new version of the index directory ``path``; it goes live only on success.

    Parameters
    ----------
    path : path-like
        The index directory: missing, empty, or a chronorag index. A symbolic link is
        followed; the link itself is never replaced.
    update : bool
        ``False`` (default): the new version holds only what the block writes (a full
        rebuild). ``True``: files of the live version that the block does not write
        are carried over (hard links, no copy), for adding e.g. a rule graph.

    Yields
    ------
    pathlib.Path
        An empty directory on the same file system; write every file there (never
        into ``path`` directly).

    Raises
    ------
    OutputExistsError
        For a path that is not a directory, or a non-empty non-index directory.
    IndexBusyError
        When another process is writing the same index.

    Notes
    -----
    On an exception (or ``KeyboardInterrupt``) the new version is removed and the
    index is exactly as it was. See the module docstring for the guarantees.
    """
    with index_lock(path) as p:
        admin = p / ADMIN_DIR
        if _current(admin) is None:
            _adopt_legacy(p, admin)
        v = admin / f"{_VERSION_PREFIX}{time.time_ns():x}-{os.getpid()}"
        v.mkdir()
        try:
            yield v
            if update:
                live = _current(admin)
                if live is not None:
                    for e in live.iterdir():
                        if e.name != _COMPLETE and not (v / e.name).exists():
                            _link_or_copy(e, v / e.name)
            _check_foreign(p, v, _current(admin))
            _commit(p, admin, v)
        except OSError as exc:
            shutil.rmtree(v, ignore_errors=True)
            if exc.filename is None:  # e.g. a full disk inside numpy or faiss: name the index
                raise type(exc)(exc.errno or errno.EIO, exc.strerror or str(exc), str(p)) from exc
            raise
        except BaseException:
            shutil.rmtree(v, ignore_errors=True)
            raise


#: The former name of :func:`write_index` (a full replacement).
atomic_dir = write_index


# ---------------------------------------------------------------------------- files
def write_json(path: str | os.PathLike[str], obj: Any) -> None:
    """Write ``obj`` as UTF-8 JSON (non-ASCII kept as is, so names stay byte-exact)."""
    Path(path).write_text(json.dumps(obj, ensure_ascii=False, indent=1), encoding="utf-8")


def _damaged(path: Path, exc: BaseException) -> Exception:
    return _errors().IndexFormatError(
        f"{path} is damaged or truncated ({type(exc).__name__}: {exc}); rebuild the index "
        "that holds it (e.g. `chronorag ingest KG --out DIR` or `chronorag star-rag build DIR`)")


def read_json(path: str | os.PathLike[str]) -> Any:
    """Read a UTF-8 JSON file (a leading byte-order mark is accepted).

    Raises
    ------
    IndexFormatError
        When the file is not valid JSON (e.g. truncated), naming it.
    """
    p = Path(path)
    try:
        return json.loads(p.read_text(encoding="utf-8-sig"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _damaged(p, exc) from None


def load_npz(path: str | os.PathLike[str], keys: Any = None) -> dict[str, Any]:
    """All arrays (or ``keys``) of an ``.npz`` file, read eagerly.

    Raises
    ------
    IndexFormatError
        When the file is truncated, not a zip archive, or lacks a key; names the file.
    """
    import zipfile

    import numpy as np

    p = Path(path)
    try:
        with np.load(p, allow_pickle=False) as z:
            return {k: z[k] for k in (z.files if keys is None else keys)}
    except (zipfile.BadZipFile, EOFError, KeyError, ValueError, zlib.error, OSError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise
        raise _damaged(p, exc) from None


def load_npy(path: str | os.PathLike[str], *, mmap: bool = False) -> Any:
    """One ``.npy`` array; a truncated or foreign file raises :class:`IndexFormatError`.

    With ``mmap`` the array is memory-mapped read-only (shared through the page cache
    by every process reading the file; a writer never modifies a version in place).
    """
    import numpy as np

    p = Path(path)
    try:
        a = np.load(p, allow_pickle=False, mmap_mode="r" if mmap else None)
        return np.asarray(a) if mmap else a  # a plain read-only ndarray view of the mapping
    except (EOFError, ValueError, OSError) as exc:
        if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError)):
            raise
        raise _damaged(p, exc) from None


def gzip_error_message(path: str | os.PathLike[str], exc: BaseException) -> str:
    """The message for a damaged ``.gz`` input (truncated, bad CRC, not gzip)."""
    return (f"{path}: damaged gzip file ({type(exc).__name__}: {exc}); check it with "
            f"`gzip -t {path}` and download or compress it again")


def iter_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, parsed value)`` for each non-blank line of a JSONL(.gz) file.

    A leading UTF-8 byte-order mark is ignored.

    Raises
    ------
    FileNotFoundError
        When the file does not exist.
    DataFormatError
        On a line that is not JSON, naming ``file:line``, or a damaged ``.gz`` file.
    """
    from chronorag.errors import DataFormatError

    p = Path(path)
    if p.is_dir():
        raise IsADirectoryError(errno.EISDIR, "is a directory, expected a JSONL file", str(p))
    if not p.is_file():
        raise MissingFileError(f"no such file: {p}")
    opener: Any = gzip.open if p.name.endswith(".gz") else open
    lineno = 0
    try:
        with opener(p, "rt", encoding="utf-8-sig") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise DataFormatError(f"{p}:{lineno}: invalid JSON ({exc.msg})") from None
                except RecursionError:
                    raise DataFormatError(f"{p}:{lineno}: JSON nested too deeply") from None
                yield lineno, value
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DataFormatError(gzip_error_message(p, exc)) from None
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{p}: not UTF-8 text near line {lineno + 1}: {exc}") from None
