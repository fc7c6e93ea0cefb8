"""The one loader of index files: one version, every file fingerprint-checked, clean errors.

Every index kind (the event index of ``chronorag ingest``, the STAR-RAG rule graph, the
T-GRAG and ToPG indexes) reads its files through :class:`IndexFiles`::

    with IndexFiles(index_dir) as files:
        meta = files.json("index.json")
        vectors = files.npy("vectors.npy")

Guarantees
----------
One version
    Opening resolves the live version (:func:`~chronorag.graphs.persist.snapshot`) and
    opens every file of it at once; every later read goes through those open files,
    never through the top-level links. A writer that commits (and prunes) new versions
    meanwhile changes nothing the reader sees, even for files read long after
    :meth:`IndexFiles.open` (e.g. :meth:`EventIndex.name_vectors
    <chronorag.graphs.event_index.EventIndex.name_vectors>`). When a version vanishes
    between resolving and opening (two commits in that instant), opening starts over.
Fingerprints
    :func:`~chronorag.graphs.persist.write_index` records each file's size and XXH3-64 hash (CRC-32 before) in
    the version's ``.complete.json``. Every read (``hnsw.faiss`` included) checks the
    bytes it read against them, so a truncated, emptied, overwritten or copied-in file
    is refused before it is parsed. Indexes written before fingerprints existed are
    read without this check, through the same parsers.
Clean errors
    A missing, damaged or foreign file raises
    :class:`~chronorag.errors.IndexFormatError` naming the file (as the user knows it,
    ``INDEX_DIR/name``) and the command that rebuilds it; the CLI prints that one line and
    exits 2. ``.npy``/``.npz`` files are read with ``allow_pickle`` off (an object array is
    refused, never unpickled).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chronorag.errors import ConfigError, IndexFormatError

if TYPE_CHECKING:
    import mmap
from chronorag.graphs.persist import ADMIN_DIR, snapshot

__all__ = ["IndexFiles", "rebuild_command"]

_COMPLETE = ".complete.json"
#: errors a parser raises on bytes that are not what it expects
_PARSE_ERRORS: tuple[type[BaseException], ...] = (
    ValueError, EOFError, KeyError, TypeError, IndexError, AttributeError, UnicodeDecodeError,
    RecursionError, RuntimeError, zlib.error, OverflowError, MemoryError)


def rebuild_command(index_dir: str | os.PathLike[str], name: str, files: set[str] | frozenset[str] = frozenset()
                    ) -> str:
    """The command that rebuilds the index (kind) a file ``name`` belongs to."""
    d = str(index_dir)
    if name.startswith("rule_graph"):
        return f"chronorag star-rag build {d}"
    if "topg.json" in files or name in ("topg.json", "passages.json", "propositions.json", "pe.npz",
                                        "entity_keys.json", "prop_vectors.npy", "prop_passage.npy",
                                        "communities.npz", "passage_vectors.npy"):
        return f"chronorag topg index CORPUS --out {d}"
    if "tgrag.json" in files or name in ("tgrag.json", "tskg.json", "tgrag_vectors.npz", "property_graph.json"):
        return f"chronorag tgrag index DOCS --out {d}"
    return f"chronorag ingest KG --out {d}"


def _pread_all(fd: int) -> bytearray:
    """The whole file behind ``fd`` (positional reads: the handle can be shared)."""
    size = os.fstat(fd).st_size
    data = bytearray(size)
    view, got = memoryview(data), 0
    try:
        while got < size:
            if hasattr(os, "preadv"):
                n = os.preadv(fd, [view[got:]], got)
            else:  # pragma: no cover - platforms without preadv
                chunk = os.pread(fd, size - got, got)
                view[got:got + len(chunk)] = chunk
                n = len(chunk)
            if n == 0:
                break
            got += n
    finally:
        view.release()
    if got < size:
        del data[got:]
    return data


class IndexFiles:
    """One version of an index directory, opened for reading (see the module docstring).

    Parameters
    ----------
    path : path-like
        The index directory (as the user named it; messages show it).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.shown = Path(path)
        self._handles: dict[str, Any] = {}
        self._prints: dict[str, dict[str, int]] | None = None
        self._names: set[str] | None = None
        self.dir = self.shown
        self._open()

    # ------------------------------------------------------------------ opening
    @classmethod
    def open(cls, source: str | os.PathLike[str] | IndexFiles) -> IndexFiles:
        """``source`` itself when it is already an :class:`IndexFiles`, else open it."""
        return source if isinstance(source, IndexFiles) else cls(source)

    def _open(self) -> None:
        if not self.shown.exists():
            raise IndexFormatError(f"no such index directory: {self.shown}; build one (e.g. `chronorag ingest "
                                   f"KG --out {self.shown}`) or check the path")
        if not self.shown.is_dir():
            raise IndexFormatError(f"{self.shown} is not a directory; give an index directory")
        if not (self.shown / ADMIN_DIR).is_dir():
            return  # an older-layout index: plain files, read by name on demand
        for _attempt in range(50):
            d = snapshot(self.shown)
            if d == self.shown:  # no committed version (yet)
                return
            name = _COMPLETE
            try:
                manifest = self._read_manifest(d)
                handles = {}
                try:
                    for name in manifest.get("files", []):
                        handles[name] = open(d / name, "rb")  # noqa: SIM115 - kept open for later reads
                except BaseException:
                    for h in handles.values():
                        h.close()
                    raise
            except FileNotFoundError:
                if snapshot(self.shown) == d and (d / _COMPLETE).is_file():  # still live: really missing
                    raise self.damaged(name, "listed in the version but missing from it") from None
                continue  # the version was pruned by two commits in between: take the new one
            self.dir = d
            self._handles = handles
            self._names = set(handles)
            prints = manifest.get("fingerprints")
            self._prints = prints if isinstance(prints, dict) else None
            return
        raise IndexFormatError(f"{self.shown}: the index kept changing while it was being opened "
                               "(another process rebuilds it continuously); try again")

    def _read_manifest(self, d: Path) -> dict[str, Any]:
        with open(d / _COMPLETE, "rb") as fh:
            raw = fh.read()
        try:
            m = json.loads(raw.decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise self.damaged(_COMPLETE, f"{type(exc).__name__}: {exc}") from None
        if not isinstance(m, dict) or not isinstance(m.get("files"), list) or not all(
                isinstance(n, str) and ".." not in Path(n).parts and not os.path.isabs(n) for n in m["files"]):
            raise self.damaged(_COMPLETE, "not a chronorag version manifest")
        return m

    def close(self) -> None:
        """Close the open files (reads after this fail)."""
        for h in self._handles.values():
            h.close()
        self._handles = {}

    def __enter__(self) -> IndexFiles:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - best effort
        with contextlib.suppress(Exception):
            self.close()

    # ------------------------------------------------------------------ naming
    @property
    def versioned(self) -> bool:
        """True when reading a committed version (isolated from writers)."""
        return self._names is not None

    def names(self) -> set[str]:
        """The files of this version (for an older-layout index: the directory's files)."""
        if self._names is not None:
            return set(self._names)
        return {e.name for e in self.shown.iterdir() if e.is_file()}

    def has(self, name: str) -> bool:
        """True when the version holds the file ``name``."""
        if self._names is not None:
            return name in self._names
        return (self.shown / name).exists()

    def shown_path(self, name: str) -> Path:
        """The file as the user knows it (``INDEX_DIR/name``)."""
        return self.shown / name

    def rebuild(self, name: str) -> str:
        """The command that rebuilds the index holding ``name``."""
        return rebuild_command(self.shown, name, frozenset(self.names()))

    def damaged(self, name: str, why: str) -> IndexFormatError:
        """The error for a damaged or foreign file ``name``."""
        return IndexFormatError(
            f"{self.shown_path(name)} is damaged or truncated, or comes from another index ({why}); rebuild "
            f"the index: `{self.rebuild(name)}`")

    def missing(self, name: str, what: str = "") -> IndexFormatError:
        """The error for a file the index should hold but does not."""
        return IndexFormatError(
            f"{self.shown} has no {name}{' (' + what + ')' if what else ''}; it is not a complete index "
            f"of this kind; build it with `{self.rebuild(name)}`")

    @contextlib.contextmanager
    def parsing(self, name: str) -> Iterator[None]:
        """Turn an error while interpreting ``name``'s content into a clean :class:`IndexFormatError`."""
        try:
            yield
        except IndexFormatError:
            raise
        except _PARSE_ERRORS as exc:
            raise self.damaged(name, f"{type(exc).__name__}: {exc}"[:300]) from None

    # ------------------------------------------------------------------ reading
    def read_bytes(self, name: str) -> bytearray:
        """The file's bytes, checked against the fingerprint recorded at build time."""
        if not self.has(name):
            raise self.missing(name)
        if self._names is not None:
            fh = self._handles.get(name)
            if fh is None:
                raise IndexFormatError(f"{self.shown}: the index files were closed; load the index again")
            data = _pread_all(fh.fileno())
        else:
            try:
                with open(self.shown / name, "rb") as fh:
                    data = bytearray(fh.read())
            except IsADirectoryError:
                raise IndexFormatError(f"{self.shown_path(name)} is a directory, expected a file; rebuild the "
                                       f"index: `{self.rebuild(name)}`") from None
        self._verify(name, data)
        return data

    def _verify(self, name: str, data: bytes | bytearray | mmap.mmap) -> None:
        if self._prints is None:
            return
        want = self._prints.get(name)
        if not isinstance(want, dict):
            return
        if len(data) != want.get("size"):
            raise self.damaged(name, f"{len(data)} bytes, it had {want.get('size')} when the index was built: "
                                     "truncated, emptied or replaced since")
        if "xxh3_64" in want:
            import xxhash

            same = xxhash.xxh3_64_intdigest(data) == want["xxh3_64"]
        else:  # written before XXH3 fingerprints
            same = zlib.crc32(data) == want.get("crc32")
        if not same:
            raise self.damaged(name, "its content differs from the fingerprint recorded when the index was "
                                     "built: overwritten or copied from another index")

    def json(self, name: str) -> Any:
        """A UTF-8 JSON file (a leading byte-order mark is accepted)."""
        data = self.read_bytes(name)
        with self.parsing(name):
            return json.loads(bytes(data).decode("utf-8-sig"))

    def jsonl(self, name: str) -> list[Any]:
        """A JSON Lines file: one value per line."""
        data = self.read_bytes(name)
        with self.parsing(name):
            return [json.loads(line) for line in bytes(data).decode("utf-8").splitlines() if line.strip()]

    def npy(self, name: str, *, ndim: int | None = None) -> Any:
        """A ``.npy`` array (no pickles), optionally required to have ``ndim`` dimensions."""
        import numpy as np

        data = self.read_bytes(name)
        with self.parsing(name):
            shape, fortran, dtype, offset = _npy_header(bytes(memoryview(data)[: 1 << 20]))
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            if offset + count * dtype.itemsize != len(data):
                raise ConfigError(f"{len(data) - offset} data bytes for an array of shape {shape} "
                                 f"({count * dtype.itemsize} bytes): truncated or padded")
            arr = np.frombuffer(data, dtype=dtype, count=count, offset=offset)
            arr = arr.reshape(shape, order="F" if fortran else "C")
        if ndim is not None and arr.ndim != ndim:
            raise self.damaged(name, f"a {arr.ndim}-d array of shape {arr.shape}, expected {ndim}-d")
        return arr

    def _mapped(self, name: str) -> Any:
        """The file memory-mapped read-only (shared through the page cache), fingerprint-checked."""
        import mmap

        if not self.has(name):
            raise self.missing(name)
        own = None
        if self._names is not None:
            fh = self._handles.get(name)
            if fh is None:
                raise IndexFormatError(f"{self.shown}: the index files were closed; load the index again")
            fd = fh.fileno()
        else:
            fd = own = os.open(self.shown / name, os.O_RDONLY)
        try:
            size = os.fstat(fd).st_size
            mm = mmap.mmap(fd, size, access=mmap.ACCESS_READ) if size else b""
        finally:
            if own is not None:
                os.close(own)
        self._verify(name, mm)  # reads the pages into the shared cache
        return mm

    def check(self, name: str) -> None:
        """Check a file this load does not read (e.g. ``events.npz`` when the mapped columns are
        used) against its fingerprint, so damage anywhere in the index is found at load."""
        mm = self._mapped(name)
        if hasattr(mm, "close"):
            mm.close()

    def npy_mapped(self, name: str, *, ndim: int | None = None) -> Any:
        """Like :meth:`npy`, but the array is a read-only view of the memory-mapped file: every
        process reading the same index shares one copy in the page cache."""
        import numpy as np

        mm = self._mapped(name)
        with self.parsing(name):
            shape, fortran, dtype, offset = _npy_header(bytes(mm[: 1 << 16]))
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            if offset + count * dtype.itemsize != len(mm):
                raise ConfigError(f"{len(mm) - offset} data bytes for an array of shape {shape}: truncated or padded")
            arr = np.frombuffer(mm, dtype=dtype, count=count, offset=offset).reshape(
                shape, order="F" if fortran else "C")
        if ndim is not None and arr.ndim != ndim:
            raise self.damaged(name, f"a {arr.ndim}-d array of shape {arr.shape}, expected {ndim}-d")
        return arr

    def faiss_mapped(self, name: str) -> Any:
        """A flat FAISS index file memory-mapped by FAISS (``IO_FLAG_MMAP_IFC``), fingerprint-checked."""
        from chronorag.graphs.vectors import _faiss

        self._mapped(name)
        faiss = _faiss()
        fh = self._handles.get(name) if self._names is not None else None
        path = f"/proc/self/fd/{fh.fileno()}" if fh is not None and os.path.exists("/proc/self/fd") \
            else str(self.shown / name)
        with self.parsing(name):
            return faiss.read_index(path, faiss.IO_FLAG_MMAP_IFC)

    def npz(self, name: str, keys: Any = None) -> dict[str, Any]:
        """All arrays (or ``keys``) of an ``.npz`` archive, read eagerly (no pickles)."""
        import zipfile

        import numpy as np

        data = self.read_bytes(name)
        with self.parsing(name):
            try:
                with np.load(io.BytesIO(data), allow_pickle=False) as z:
                    if not hasattr(z, "files"):
                        raise ConfigError("a single array, expected an .npz archive")
                    missing = [k for k in (keys or ()) if k not in z.files]
                    if missing:
                        raise ConfigError(f"no array {missing[0]!r} in the archive")
                    return {k: z[k] for k in (z.files if keys is None else keys)}
            except (zipfile.BadZipFile, OSError) as exc:
                raise ConfigError(f"not an .npz archive ({exc})") from None

    def sparse_npz(self, name: str) -> Any:
        """A SciPy sparse matrix saved with ``scipy.sparse.save_npz`` (as CSR)."""
        import scipy.sparse as sp

        arrays = self.npz(name)
        with self.parsing(name):
            fmt = arrays["format"].item()
            fmt = fmt.decode() if isinstance(fmt, bytes) else str(fmt)
            shape = tuple(int(x) for x in arrays["shape"])
            if fmt in ("csr", "csc"):
                cls = sp.csr_matrix if fmt == "csr" else sp.csc_matrix
                m = cls((arrays["data"], arrays["indices"], arrays["indptr"]), shape=shape)
            elif fmt == "coo":
                m = sp.coo_matrix((arrays["data"], (arrays["row"], arrays["col"])), shape=shape)
            else:
                raise ConfigError(f"sparse format {fmt!r}")
            m.check_format() if hasattr(m, "check_format") else None
            return m.tocsr()

    def faiss(self, name: str) -> Any:
        """A FAISS index file (``faiss.write_index``), checked like every other file."""
        import numpy as np

        from chronorag.graphs.vectors import _faiss

        data = self.read_bytes(name)
        faiss = _faiss()
        with self.parsing(name):
            if not data:
                raise ConfigError("empty file")
            return faiss.deserialize_index(np.frombuffer(data, dtype=np.uint8))


def _npy_header(head_bytes: bytes) -> tuple[Any, bool, Any, int]:
    """``(shape, fortran_order, dtype, data offset)`` of a ``.npy`` file from its first bytes;
    an object array (pickles) is refused."""
    from numpy.lib import format as npf

    head = io.BytesIO(head_bytes)
    version = npf.read_magic(head)
    if version == (1, 0):
        shape, fortran, dtype = npf.read_array_header_1_0(head)
    else:
        shape, fortran, dtype = npf.read_array_header_2_0(head)
    if dtype.hasobject:
        raise ConfigError("an object array (pickled Python objects); chronorag never unpickles")
    return shape, fortran, dtype, head.tell()
