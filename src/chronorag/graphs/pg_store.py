"""PostgreSQL + pgvector as the system of record for an event index.

``chronorag ingest KG --out DIR --store postgresql://...`` writes the events, the
vocabularies and the triple and name vectors into PostgreSQL; ``DIR`` keeps only a
small manifest (``postgres.json``: the URL *without* its password, and the schema).
:meth:`EventIndex.load <chronorag.graphs.event_index.EventIndex.load>` sees the manifest
and returns a :class:`PgEventIndex`, so every command, retriever and tool runs on it
unchanged through the store interface of :class:`~chronorag.graphs.store.TemporalEventStore`.

Layout (schema ``chronorag_<hash of DIR>``)
-------------------------------------------
``versions(version, complete, meta)`` and ``live(version, previous)``; per version ``v``:

``events_v``     one row per event (id, subject, relation, object, t_lo, t_hi, g_start,
                 g_end, triple, text, attrs), written in start-time order; BRIN on
                 ``t_lo``, btree on ``(subject, relation, t_lo)``, ``(relation, object, t_lo)``,
                 ``(object, relation, t_lo)`` and ``(triple)``, primary key ``id``; vacuumed
                 after the load, so entity -> relations is an index-only scan
``triples_v``    one row per distinct triple (row, first_event, embedding ``vector(d)``),
                 HNSW (inner product)
``triples_half_v``  the same vectors in half precision (row, embedding ``halfvec(d)``):
                 half the bytes for the exact search to scan (see :class:`PgVectorIndex`)
``entities_v``, ``relations_v``   names and their vectors (HNSW on entities)

Guarantees (those of the directory writer, :mod:`chronorag.graphs.persist`)
-----------------------------------------------------------------------------
A writer holds an advisory lock on the schema (a second writer fails at once), writes
a complete new version, and switches ``live`` in one transaction; a crash leaves the
previous version serving, and the next writer drops the unfinished tables. A reader
reads the live version number once at load and keeps reading it while one new
version is committed (the previous version is kept until the next write).

Pushed into SQL: name lookups (``find``), time windows (``time_range``, ``filter_time``,
``query``), the events of triples, and vector search (pgvector: exact by default up to
500,000 vectors, through the half-precision copy, HNSW with iterative scan above or with
``CHRONORAG_PG_SEARCH=hnsw``; see :class:`PgVectorIndex`). Rows fetched
are cached per store (bounded), so a tool that reads columns of the ids a query just
returned does not go back to the server. The vocabularies (names only) are held in
memory, as are the name vectors the aligner compares against.

The password never lands in ``DIR``: pass it in the URL for ``ingest`` (or not at
all) and give it to later runs through ``PGPASSWORD`` or ``~/.pgpass``.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np

from chronorag.errors import (
    ArgumentTypeError,
    ConfigError,
    IndexBusyError,
    IndexFormatError,
    OutOfRangeError,
    StoreConnectionError,
    missing_extra,
)
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.store import Event, TemporalEventStore, _Vocab
from chronorag.graphs.time import (
    POS_INF,
    Granularity,
    TimeInterval,
    TimePoint,
    minutes_to_iso,
    parse_time,
    temporal_mask,
)

if TYPE_CHECKING:
    from chronorag.graphs.vectors import VectorIndex

__all__ = ["MANIFEST", "PgEventStore", "PgVectorIndex", "connect", "redact_url", "schema_for",
           "write_pg_version"]

MANIFEST = "postgres.json"
PG_FORMAT_VERSION = 1
_COLS = ("subject", "relation", "object", "t_lo", "t_hi", "g_start", "g_end", "triple", "text", "attrs")
_DTYPES = {"subject": np.int32, "relation": np.int32, "object": np.int32, "t_lo": np.int64,
           "t_hi": np.int64, "g_start": np.int8, "g_end": np.int8, "triple": np.int64}
_CACHE_ROWS = 200_000


# ------------------------------------------------------------------ connections
def redact_url(url: str) -> str:
    """``url`` without its password (in the authority or a ``password=`` parameter)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparsable URL>"
    netloc = parts.netloc
    if "@" in netloc:
        auth, host = netloc.rsplit("@", 1)
        netloc = f"{auth.split(':', 1)[0]}@{host}"
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if k.lower() != "password"], safe="/")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _secret(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    pw = parts.password
    for k, v in parse_qsl(parts.query):
        if k.lower() == "password":
            pw = v
    return pw or None


def connect(url: str) -> Any:
    """Open an autocommit connection with pgvector registered.

    Raises
    ------
    StoreConnectionError
        When the server is unreachable, refuses the credentials, or lacks pgvector
        (and the user cannot create it); the message names the URL without password.
    """
    try:
        import psycopg
    except ImportError as exc:
        raise missing_extra("psycopg", "postgres") from exc
    if not isinstance(url, str) or not url.startswith(("postgresql://", "postgres://")):
        raise StoreConnectionError(f"--store must be a postgresql:// URL, got {redact_url(str(url))!r}")
    shown = redact_url(url)
    try:
        conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
    except psycopg.Error as exc:
        msg = " ".join(str(exc).split())
        pw = _secret(url)
        if pw:
            msg = msg.replace(pw, "***")
        hint = ("check the password (give it through PGPASSWORD or ~/.pgpass, never in the index)"
                if "password" in msg.lower() or "authentication" in msg.lower()
                else "check that the server runs and the host, port and database are right")
        raise StoreConnectionError(f"cannot connect to PostgreSQL at {shown}: {msg}; {hint}") from None
    try:
        if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
            try:
                conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
            except psycopg.Error as exc:
                raise StoreConnectionError(
                    f"the pgvector extension is missing in the database at {shown} and could not be "
                    f"created ({' '.join(str(exc).split())}); install pgvector on the server and run "
                    "CREATE EXTENSION vector as a superuser") from None
        from pgvector.psycopg import register_vector

        register_vector(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def schema_for(out_dir: str | os.PathLike[str]) -> str:
    """The schema an index directory's data lives in (``chronorag_<hash of its path>``)."""
    h = hashlib.blake2b(str(Path(out_dir).resolve()).encode("utf-8"), digest_size=6).hexdigest()
    return f"chronorag_{h}"


def _ident(*parts: str) -> Any:
    from psycopg import sql

    return sql.SQL(".").join(sql.Identifier(p) for p in parts)


# ---------------------------------------------------------------------- writing
def _ensure_admin(conn: Any, schema: str) -> None:
    from psycopg import sql

    conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
    conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (version int PRIMARY KEY, created timestamptz "
                         "NOT NULL DEFAULT now(), complete bool NOT NULL DEFAULT false, meta jsonb NOT NULL)")
                 .format(_ident(schema, "versions")))
    conn.execute(sql.SQL("CREATE TABLE IF NOT EXISTS {} (one bool PRIMARY KEY DEFAULT true CHECK (one), "
                         "version int NOT NULL, previous int)").format(_ident(schema, "live")))


def _drop_version(conn: Any, schema: str, v: int) -> None:
    from psycopg import sql

    for t in ("events", "triples", "triples_half", "entities", "relations"):
        conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(_ident(schema, f"{t}_{v}")))
    conn.execute(sql.SQL("DELETE FROM {} WHERE version = %s").format(_ident(schema, "versions")), (v,))


def live_version(conn: Any, schema: str) -> tuple[int, int | None] | None:
    """``(live, previous)`` version numbers of a schema, or None when it holds no index."""
    from psycopg import sql

    if conn.execute("SELECT to_regclass(%s)", (f"{schema}.live",)).fetchone()[0] is None:
        return None
    row = conn.execute(sql.SQL("SELECT version, previous FROM {}").format(_ident(schema, "live"))).fetchone()
    return None if row is None else (int(row[0]), None if row[1] is None else int(row[1]))


def recover(conn: Any, schema: str) -> None:
    """Drop versions a killed writer left unfinished (never the live or previous one)."""
    from psycopg import sql

    lv = live_version(conn, schema)
    keep = set() if lv is None else {v for v in lv if v is not None}
    rows = conn.execute(sql.SQL("SELECT version FROM {} WHERE NOT complete").format(
        _ident(schema, "versions"))).fetchall()
    for (v,) in rows:
        if v not in keep:
            _drop_version(conn, schema, int(v))


def write_pg_version(
    conn: Any, schema: str, store: TemporalEventStore, *, first: np.ndarray, inverse: np.ndarray,
    vectors: np.ndarray, entity_vectors: np.ndarray, relation_vectors: np.ndarray, meta: dict[str, Any],
    crash_before_switch: bool = False,
) -> int:
    """Write a complete new version of an index into ``schema`` and make it live atomically.

    Parameters
    ----------
    conn : psycopg.Connection
        From :func:`connect`.
    schema : str
        The index's schema (:func:`schema_for`).
    store : TemporalEventStore
        The events (in memory).
    first, inverse : numpy.ndarray
        :meth:`~chronorag.graphs.store.TemporalEventStore.triple_ids` of ``store``.
    vectors, entity_vectors, relation_vectors : numpy.ndarray
        One unit vector per triple, entity and relation.
    meta : dict
        ``index.json``-style metadata, kept with the version.
    crash_before_switch : bool
        For tests: stop just before the switch, as a killed writer would.

    Returns
    -------
    int
        The new live version.

    Raises
    ------
    IndexBusyError
        When another writer holds the schema's lock.
    """
    from psycopg import sql

    _ensure_admin(conn, schema)
    lock = int.from_bytes(hashlib.blake2b(schema.encode(), digest_size=8).digest(), "big", signed=True)
    if not conn.execute("SELECT pg_try_advisory_lock(%s)", (lock,)).fetchone()[0]:
        raise IndexBusyError(f"another chronorag ingest is writing schema {schema}; wait for it to finish")
    try:
        versions = _ident(schema, "versions")
        # numbers are never reused: an unfinished version's number stays burnt
        v = int(conn.execute(sql.SQL("SELECT coalesce(max(version), 0) + 1 FROM {}").format(versions)).fetchone()[0])
        recover(conn, schema)
        conn.execute(sql.SQL("INSERT INTO {} (version, meta) VALUES (%s, %s)").format(versions),
                     (v, json.dumps(meta)))
        d = int(vectors.shape[1])
        ev, tr = _ident(schema, f"events_{v}"), _ident(schema, f"triples_{v}")
        en, rl = _ident(schema, f"entities_{v}"), _ident(schema, f"relations_{v}")
        conn.execute(sql.SQL("SET maintenance_work_mem = '512MB'"))
        conn.execute(sql.SQL("CREATE TABLE {} (id bigint NOT NULL, subject int NOT NULL, relation int NOT NULL, "
                             "object int NOT NULL, t_lo bigint NOT NULL, t_hi bigint NOT NULL, g_start smallint "
                             "NOT NULL, g_end smallint NOT NULL, triple int NOT NULL, text text, attrs text)")
                     .format(ev))
        texts, attrs = store._texts, store._attrs
        order = np.lexsort((np.arange(len(store)), store.t_lo))  # physical order = time (BRIN)
        cols = [np.asarray(store.subject)[order], np.asarray(store.relation)[order],
                np.asarray(store.object)[order], np.asarray(store.t_lo)[order], np.asarray(store.t_hi)[order],
                np.asarray(store.g_start)[order], np.asarray(store.g_end)[order], np.asarray(inverse)[order]]
        with conn.cursor() as cur:
            with cur.copy(sql.SQL("COPY {} FROM STDIN").format(ev)) as cp:
                for j, i in enumerate(order.tolist()):
                    cp.write_row((i, *(int(c[j]) for c in cols),
                                  None if texts is None else texts[i], None if attrs is None else attrs[i]))
            for tbl, names, vecs in ((en, store.entities, entity_vectors), (rl, store.relations, relation_vectors)):
                conn.execute(sql.SQL("CREATE TABLE {} (id int PRIMARY KEY, name text NOT NULL, "
                                     "embedding vector({}) NOT NULL)").format(tbl, sql.Literal(d)))
                with cur.copy(sql.SQL("COPY {} (id, name, embedding) FROM STDIN WITH (FORMAT BINARY)")
                              .format(tbl)) as cp:
                    cp.set_types(["int4", "text", "vector"])
                    for i, (n, x) in enumerate(zip(names, np.asarray(vecs, dtype=np.float32))):
                        cp.write_row((i, n, x))
            conn.execute(sql.SQL("CREATE TABLE {} (row int PRIMARY KEY, first_event bigint NOT NULL, "
                                 "embedding vector({}) NOT NULL)").format(tr, sql.Literal(d)))
            with cur.copy(sql.SQL("COPY {} (row, first_event, embedding) FROM STDIN WITH (FORMAT BINARY)")
                          .format(tr)) as cp:
                cp.set_types(["int4", "int8", "vector"])
                for i, (f, x) in enumerate(zip(np.asarray(first).tolist(), np.asarray(vectors, dtype=np.float32))):
                    cp.write_row((i, f, x))
        # the exact search's first pass scans this copy (half the bytes; see PgVectorIndex)
        th = _ident(schema, f"triples_half_{v}")
        conn.execute(sql.SQL("CREATE TABLE {} AS SELECT row, embedding::halfvec({}) AS embedding FROM {} "
                             "ORDER BY row").format(th, sql.Literal(d), tr))
        norms = np.linalg.norm(np.asarray(vectors, dtype=np.float64), axis=1)
        conn.execute(sql.SQL("UPDATE {} SET meta = meta || %s WHERE version = %s").format(versions),
                     (json.dumps({"half_vectors": True,
                                  "max_vector_norm": float(norms.max()) if len(norms) else 0.0}), v))
        for stmt in (
            "ANALYZE {th}",
            "ALTER TABLE {ev} ADD PRIMARY KEY (id)",
            "CREATE INDEX ON {ev} USING brin (t_lo)",
            "CREATE INDEX ON {ev} (subject, relation, t_lo)",
            "CREATE INDEX ON {ev} (relation, object, t_lo)",
            "CREATE INDEX ON {ev} (object, relation, t_lo)",
            "CREATE INDEX ON {ev} (triple)",
            "CREATE INDEX ON {tr} USING hnsw (embedding vector_ip_ops)",
            "CREATE INDEX ON {en} USING hnsw (embedding vector_ip_ops)",
            # VACUUM sets the visibility map: "which relations does entity X take part in"
            # is then an index-only scan of the (subject|object, relation, t_lo) btrees
            "VACUUM (ANALYZE) {ev}", "ANALYZE {tr}", "ANALYZE {en}", "ANALYZE {rl}",
        ):
            conn.execute(sql.SQL(stmt).format(ev=ev, tr=tr, th=th, en=en, rl=rl))
        if crash_before_switch:
            return v
        with conn.transaction():  # the switch: one transaction
            prev = live_version(conn, schema)
            conn.execute(sql.SQL("UPDATE {} SET complete = true WHERE version = %s").format(versions), (v,))
            conn.execute(sql.SQL("INSERT INTO {} (one, version, previous) VALUES (true, %s, %s) ON CONFLICT (one) "
                                 "DO UPDATE SET version = excluded.version, previous = excluded.previous")
                         .format(_ident(schema, "live")), (v, None if prev is None else prev[0]))
        # keep the live and the previous version (a reader may still be on it); drop older ones
        keep = {v} | ({prev[0]} if prev is not None else set())
        for (old,) in conn.execute(sql.SQL("SELECT version FROM {}").format(versions)).fetchall():
            if old not in keep:
                _drop_version(conn, schema, int(old))
        return v
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (lock,))


# ---------------------------------------------------------------------- reading
def _time_predicate(begin_time: str | TimePoint, end_time: str | TimePoint, type: str) -> tuple[str, tuple]:
    """SQL over ``t_lo``/``t_hi`` with exactly :func:`~chronorag.graphs.time.temporal_mask`'s meaning."""
    temporal_mask(np.zeros(0, np.int64), np.zeros(0, np.int64), begin_time, end_time, type)  # validates
    from chronorag.graphs.time import _norm_type

    kind = _norm_type(type)
    b, e = parse_time(begin_time), parse_time(end_time)
    if kind in ("in/on", "between"):
        return "t_lo < %s AND t_hi > %s", (e.hi, b.lo)
    if kind == "before":
        return "t_hi <= %s AND t_lo >= %s", (e.lo, b.lo)
    return "t_lo >= %s AND t_hi <= %s", (b.hi, e.hi)


class _PgColumn:
    """One column of a :class:`PgEventStore`, indexable like the NumPy column it stands for.

    ``col[i]`` and ``col[ids]`` read the rows (one query for the missing ones, then the
    store's row cache); anything else (``astype``, arithmetic, ``np.bincount(col)``)
    materialises the whole column once (one query), e.g. to build a rule graph.

    Once ``col[ids]`` requests have asked for a quarter as many ids as the column has
    rows, the column is read whole once and served from memory from then on (8 bytes
    per event at most): by then the reads cost about as much as that one read (the
    rent-or-buy rule; an id read through the row cache costs about 4x a value of a
    whole-column read, measured on ICEWS05-15). A tools process gets there only after
    many questions; STAR-RAG's re-rank, which scores thousands of events per question,
    within a few.
    """

    __array_priority__ = 100

    def __init__(self, store: PgEventStore, name: str) -> None:
        self._store, self._name = store, name
        self._pos = _COLS.index(name)
        self._dtype = _DTYPES[name]
        self._full: np.ndarray | None = None
        self._served = 0  # ids asked for through col[ids] so far

    def __len__(self) -> int:
        return len(self._store)

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(self._dtype)

    @property
    def shape(self) -> tuple[int]:
        return (len(self._store),)

    def __getitem__(self, key: Any) -> Any:
        if self._full is not None:
            return self._full[key]
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool):
            return self._dtype(self._store._row(int(key))[self._pos])
        if isinstance(key, slice):
            key = np.arange(len(self))[key]
        ids = np.asarray(key)
        if ids.dtype == bool:
            ids = np.flatnonzero(ids)
        ids = ids.astype(np.int64, copy=False)
        self._served += ids.size
        if 4 * self._served >= len(self._store):  # rent or buy: read the whole column once
            return np.asarray(self)[self._store._check_ids(ids).reshape(ids.shape)]
        rows = self._store._rows_of(ids)
        return np.fromiter((r[self._pos] for r in rows), dtype=self._dtype, count=len(rows)).reshape(ids.shape)

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._full is None:
            self._full = self._store._full_column(self._name).astype(self._dtype)
        return self._full if dtype is None else self._full.astype(dtype)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(np.asarray(self), name)

    def __iter__(self) -> Any:
        return iter(np.asarray(self))


def _binop(op: str) -> Any:
    def f(self: _PgColumn, other: Any) -> Any:
        return getattr(np.asarray(self), op)(np.asarray(other) if isinstance(other, _PgColumn) else other)
    f.__name__ = op
    return f


for _op in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__floordiv__", "__mod__",
            "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__neg__"):
    setattr(_PgColumn, _op, _binop(_op) if _op != "__neg__" else (lambda self: -np.asarray(self)))
_PgColumn.__hash__ = None  # type: ignore[assignment]


class PgEventStore(TemporalEventStore):
    """The event store of an index kept in PostgreSQL (same interface as the in-memory store).

    Parameters
    ----------
    url : str
        ``postgresql://`` URL (a password comes from ``PGPASSWORD``/``~/.pgpass``).
    schema : str
        The index's schema.
    version : int, optional
        A version to read; the live one by default.
    """

    def __init__(self, url: str, schema: str, *, version: int | None = None) -> None:  # noqa: D107
        self.url, self.schema = url, schema
        self._conn = connect(url)
        self._lock = threading.RLock()
        lv = live_version(self._conn, schema)
        if lv is None:
            self._conn.close()
            raise IndexFormatError(f"schema {schema} at {redact_url(url)} holds no chronorag index; "
                                   "ingest one with `chronorag ingest KG --out DIR --store URL`")
        self.version = lv[0] if version is None else int(version)
        from psycopg import sql

        row = self._conn.execute(sql.SQL("SELECT meta, complete FROM {} WHERE version = %s").format(
            _ident(schema, "versions")), (self.version,)).fetchone()
        if row is None or not row[1]:
            raise IndexFormatError(f"version {self.version} of {schema} is not a complete index")
        self.meta: dict[str, Any] = row[0]
        self._t = {t: _ident(schema, f"{t}_{self.version}")
                   for t in ("events", "triples", "triples_half", "entities", "relations")}
        ents = [r[0] for r in self._q("SELECT name FROM {entities} ORDER BY id")]
        rels = [r[0] for r in self._q("SELECT name FROM {relations} ORDER BY id")]
        self._ent, self._rel = _Vocab(ents), _Vocab(rels)
        self._n = int(self.meta["n_events"])
        self._has_texts = bool(self.meta.get("has_texts"))
        self._cache: dict[int, tuple] = {}
        for c in ("subject", "relation", "object", "t_lo", "t_hi", "g_start", "g_end"):
            setattr(self, c, _PgColumn(self, c))
        self.triple_of_event = _PgColumn(self, "triple")
        self._texts = self._attrs = None
        self._fingerprint = self.meta["store_fingerprint"]
        self.load_report = None

    # ------------------------------------------------------------------ plumbing
    def _q(self, query: str, params: Any = None, *, binary: bool = False) -> list[tuple]:
        """Run ``query`` (``{events}``, ``{triples}``, ... name this version's tables); all rows.

        ``binary`` asks for results in PostgreSQL's binary format (vectors then load
        without parsing text: about 10x faster for whole vector tables).
        """
        from psycopg import sql

        with self._lock:
            cur = self._conn.cursor(binary=True) if binary else self._conn
            return cur.execute(sql.SQL(query).format(**self._t), params).fetchall()

    def _cache_rows(self, rows: list[tuple]) -> None:
        if len(self._cache) + len(rows) > _CACHE_ROWS:
            self._cache.clear()
        for r in rows:
            self._cache[int(r[0])] = r[1:]

    def _fetch(self, ids: np.ndarray) -> None:
        miss = [i for i in dict.fromkeys(ids.tolist()) if i not in self._cache]
        if miss:
            rows = self._q("SELECT id, " + ", ".join(_COLS) + " FROM {events} WHERE id = ANY(%s)", (miss,))
            self._cache_rows(rows)

    def _rows_of(self, ids: np.ndarray) -> list[tuple]:
        ids = self._check_ids(ids)
        self._fetch(ids)
        try:
            return [self._cache[i] for i in ids.tolist()]
        except KeyError:  # evicted between fetch and read (a very large request): read directly
            rows = self._q("SELECT id, " + ", ".join(_COLS) + " FROM {events} WHERE id = ANY(%s)", (ids.tolist(),))
            by = {int(r[0]): r[1:] for r in rows}
            return [by[i] for i in ids.tolist()]

    def _row(self, i: int) -> tuple:
        r = self._cache.get(i)
        if r is None:
            if not 0 <= i < len(self):
                raise OutOfRangeError(f"event id {i} out of range 0..{len(self) - 1}")
            self._fetch(np.array([i]))
            r = self._cache[i]
        return r

    def _ids(self, where: str, params: tuple, order: str = "id") -> np.ndarray:
        rows = self._q("SELECT id, " + ", ".join(_COLS) + " FROM {events} WHERE " + where
                       + " ORDER BY " + order, params)
        self._cache_rows(rows)
        return np.array([r[0] for r in rows], dtype=np.int64)

    def _full_column(self, name: str) -> np.ndarray:
        rows = self._q(f"SELECT {name} FROM {{events}} ORDER BY id")
        return np.array([r[0] for r in rows])

    def close(self) -> None:
        """Close the connection."""
        self._conn.close()

    # ------------------------------------------------------------------ interface
    def __len__(self) -> int:
        return self._n

    def __repr__(self) -> str:
        return (f"PgEventStore({len(self)} events, {len(self.entities)} entities, {len(self.relations)} "
                f"relations, {redact_url(self.url)} schema {self.schema} version {self.version})")

    @property
    def has_texts(self) -> bool:
        """True when some event carries source text."""
        return self._has_texts

    def time_text(self, i: int) -> str:
        """As :meth:`TemporalEventStore.time_text`, from one cached row instead of four column reads."""
        r = self._row(int(i))
        s = minutes_to_iso(int(r[3]), Granularity(int(r[5])))
        e = "inf" if int(r[4]) >= POS_INF else minutes_to_iso(int(r[4]) - 1, Granularity(int(r[6])))
        return s if s == e else f"{s}/{e}"

    def event(self, i: int) -> Event:
        """The event with id ``i``."""
        if isinstance(i, bool) or not isinstance(i, (int, np.integer)):
            raise ArgumentTypeError(f"event id must be an int, got {type(i).__name__}")
        r = self._row(int(i))
        return Event(id=int(i), subject=self._ent.names[r[0]], relation=self._rel.names[r[1]],
                     object=self._ent.names[r[2]], start=self.start_text(int(i)), end=self.end_text(int(i)),
                     text=r[8], attrs=None if r[9] is None else json.loads(r[9]))

    def events(self, ids: Any) -> list[Event]:
        """The events with the given ids, in that order (one query for the missing rows)."""
        arr = self._check_ids(list(ids))
        self._fetch(arr)
        return [self.event(int(i)) for i in arr]

    def find(self, *, subject: str | None = None, relation: str | None = None,
             object: str | None = None) -> np.ndarray:
        """Ids of events matching the given names, in id order (one indexed SQL query)."""
        conds, params = [], []
        for col, name, look in (("subject", subject, self.entity_id), ("relation", relation, self.relation_id),
                                ("object", object, self.entity_id)):
            if name is not None:
                conds.append(f"{col} = %s")
                params.append(look(name))
        if not conds:
            return np.arange(len(self), dtype=np.int64)
        return self._ids(" AND ".join(conds), tuple(params))

    def relations_of(self, *, subject: str | None = None, object: str | None = None) -> np.ndarray:
        """Sorted distinct relation ids of the events with this subject and/or object.

        One ``SELECT DISTINCT`` answered from the ``(subject, relation, t_lo)`` or
        ``(object, relation, t_lo)`` btree: the events themselves never leave the server.
        """
        if subject is None and object is None:
            raise ConfigError("relations_of needs subject, object or both")
        conds, params = [], []
        for col, name in (("subject", subject), ("object", object)):
            if name is not None:
                conds.append(f"{col} = %s")
                params.append(self.entity_id(name))
        rows = self._q("SELECT DISTINCT relation FROM {events} WHERE " + " AND ".join(conds)
                       + " ORDER BY relation", tuple(params))
        return np.array([r[0] for r in rows], dtype=np.int64)

    def time_range(self, begin_time: str | TimePoint, end_time: str | TimePoint) -> np.ndarray:
        """Ids of events overlapping the window, by start time (SQL over the BRIN index)."""
        w = TimeInterval(parse_time(begin_time), parse_time(end_time))
        return self._ids("t_lo < %s AND t_hi > %s", (w.hi, w.lo), order="t_lo, id")

    def filter_time(self, ids: np.ndarray, *, begin_time: str | TimePoint = "-inf",
                    end_time: str | TimePoint = "inf", type: str = "in/on") -> np.ndarray:
        """Keep the events of ``ids`` that pass a TempTool filter (evaluated in SQL), in their order."""
        ids = self._check_ids(ids)
        pred, params = _time_predicate(begin_time, end_time, type)
        if not len(ids):
            return ids
        keep = self._ids(f"id = ANY(%s) AND {pred}", (ids.tolist(), *params))
        return ids[np.isin(ids, keep)]

    def query(self, *, subject: str | None = None, relation: str | None = None, object: str | None = None,
              begin_time: str | TimePoint = "-inf", end_time: str | TimePoint = "inf",
              type: str = "in/on") -> np.ndarray:
        """Names and a temporal filter in one SQL query; ids sorted by (start, id)."""
        conds, params = [], []
        for col, name, look in (("subject", subject, self.entity_id), ("relation", relation, self.relation_id),
                                ("object", object, self.entity_id)):
            if name is not None:
                conds.append(f"{col} = %s")
                params.append(look(name))
        pred, tparams = _time_predicate(begin_time, end_time, type)
        conds.append(pred)
        return self._ids(" AND ".join(conds), (*params, *tparams), order="t_lo, id")

    def sort_by_time(self, ids: np.ndarray) -> np.ndarray:
        """``ids`` sorted by start time, then id."""
        ids = self._check_ids(ids)
        return ids[np.lexsort((ids, self.t_lo[ids]))]

    def triple_ids(self) -> tuple[np.ndarray, np.ndarray]:
        """``(first, inverse)`` as stored at ingest."""
        first = np.array([r[0] for r in self._q("SELECT first_event FROM {triples} ORDER BY row")], np.int64)
        return first, self._full_column("triple").astype(np.int64)

    def to_memory(self) -> TemporalEventStore:
        """The whole store read into an in-memory :class:`TemporalEventStore` (one query)."""
        rows = self._q("SELECT " + ", ".join(_COLS) + " FROM {events} ORDER BY id")
        cols: dict[str, Any] = {c: np.array([r[k] for r in rows], dtype=_DTYPES[c])
                                for k, c in enumerate(_COLS[:7])}
        texts = [r[8] for r in rows] if self._has_texts else None
        attrs = [r[9] for r in rows] if any(r[9] is not None for r in rows) else None
        return TemporalEventStore(entities=list(self.entities), relations=list(self.relations), **cols,
                                  texts=texts, attrs=attrs)

    def concat(self, other: TemporalEventStore) -> TemporalEventStore:
        """In-memory store with ``other``'s events appended (see :meth:`TemporalEventStore.concat`)."""
        return self.to_memory().concat(other)

    def subset(self, ids: np.ndarray) -> TemporalEventStore:
        """In-memory store of the events ``ids``."""
        return self.to_memory().subset(ids)

    def write(self, directory: str | os.PathLike[str]) -> None:
        """Export the store's files into a directory (reads the whole store)."""
        self.to_memory().write(directory)

    def fingerprint(self) -> str:
        """The in-memory store's fingerprint, recorded at ingest."""
        return self._fingerprint


class PgVectorIndex:
    """The :class:`~chronorag.graphs.vectors.VectorIndex` search API over a pgvector table.

    ``search`` (or ``CHRONORAG_PG_SEARCH``):

    ``"exact"``
        The in-memory index's answer: the top ``k`` by inner product, ties broken by row,
        as FAISS's flat index orders them. With a half-precision copy of the vectors
        (written by every ingest since it was added) it is two passes: scan the half copy
        for the best ``k + max(k, 64)`` rows, score those in single precision, and keep
        them only if no other row can reach the ``k``-th score: a row's half-precision
        score differs from its single-precision one by at most ``delta`` (a bound from
        the rounding of both vectors to half precision and of the sums, times the
        largest vector norm), so when the last candidate's half score plus ``delta`` is
        still below the ``k``-th score, the list is provably the exact one. Otherwise a
        second pass scores, in single precision, every row whose half score comes within
        ``delta`` of the ``k``-th score (ties among identical vectors end here). Half the
        bytes of a full scan, the same rows. Older indexes scan the single-precision table.
    ``"hnsw"``
        The HNSW index (``hnsw.ef_search`` = ``ef_search``, iterative scan on, so a
        filtered query still fills ``k``): fast at any size, approximate (recall@40
        0.97 at ``ef_search`` 200 on ICEWS05-15, BENCHMARKS.md).
    ``"auto"`` (default)
        ``"exact"`` up to ``exact_max_rows`` vectors (a full scan stays in tens of
        milliseconds), ``"hnsw"`` above.

    A ``subset`` search is always exact (single precision over the subset's rows).
    ``counts`` records how each exact search ended (``half_pass``, ``second_pass``,
    ``full_scan``).
    """

    kind = "pgvector"
    on_gpu = False

    def __init__(self, store: PgEventStore, table: str = "triples", *, search: str | None = None,
                 ef_search: int = 200, exact_max_rows: int = 500_000) -> None:
        self._store, self._table = store, table
        mode = search or os.environ.get("CHRONORAG_PG_SEARCH") or "auto"
        if mode not in ("auto", "hnsw", "exact"):
            raise ConfigError(f"search must be 'auto', 'hnsw' or 'exact', got {mode!r} "
                             "(argument or CHRONORAG_PG_SEARCH)")
        for name, val in (("ef_search", ef_search), ("exact_max_rows", exact_max_rows)):
            if not isinstance(val, (int, np.integer)) or isinstance(val, bool) or val < 1:
                raise ConfigError(f"{name} must be a positive integer, got {val!r}")
        self._dim = int(store.meta["dim"])
        self._n = int(store.meta["n_triples"])
        self.search_mode = mode if mode != "auto" else ("exact" if self._n <= exact_max_rows else "hnsw")
        self.ef_search = int(ef_search)
        self._half = (table == "triples" and bool(store.meta.get("half_vectors")))
        self._max_norm = float(store.meta.get("max_vector_norm", 0.0))
        self._vectors: np.ndarray | None = None
        self.params = {"ef_search": self.ef_search, "search": self.search_mode}
        self.counts = {"half_pass": 0, "second_pass": 0, "full_scan": 0}

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return self._dim

    def __len__(self) -> int:
        return self._n

    @property
    def vectors(self) -> _PgVectors:
        """The vectors, indexable by row like the matrix (rows read on demand)."""
        return _PgVectors(self)

    def search(self, queries: np.ndarray, k: int = 10, *,
               subset: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` rows by inner product, computed by PostgreSQL (see the class docstring)."""
        from psycopg import sql

        if not isinstance(k, (int, np.integer)) or k < 1:
            raise ConfigError(f"k must be a positive integer, got {k!r}")
        q = np.asarray(queries, dtype=np.float32)
        q = q[None, :] if q.ndim == 1 else q
        if q.ndim != 2 or q.shape[1] != self.dim:
            raise IndexFormatError(f"queries must have shape (n, {self.dim}), got {np.shape(queries)}: query "
                                   "with the encoder the index was built with")
        scores = np.full((len(q), k), -np.inf, np.float32)
        ids = np.full((len(q), k), -1, np.int64)
        tbl = self._store._t[self._table]
        where, params = sql.SQL(""), cast("tuple[Any, ...]", ())
        if subset is not None:
            sub = np.unique(np.asarray(subset, dtype=np.int64))
            if sub.size == 0:
                return scores, ids
            where, params = sql.SQL("WHERE row = ANY(%s)"), (sub.tolist(),)
        exact = self.search_mode == "exact" or subset is not None
        stmt = (sql.SQL("SELECT row, (embedding <#> %s) FROM {} {} ORDER BY 2, row LIMIT %s").format(tbl, where)
                if exact else  # HNSW is used only when ORDER BY names the distance expression
                sql.SQL("SELECT row, (embedding <#> %s) FROM {} ORDER BY embedding <#> %s LIMIT %s").format(tbl))
        from pgvector import Vector

        with self._store._lock, self._store._conn.transaction():
            c = self._store._conn
            if exact:
                c.execute("SET LOCAL enable_indexscan = off")
            else:
                c.execute(sql.SQL("SET LOCAL hnsw.ef_search = {}").format(sql.Literal(int(max(self.ef_search, k)))))
                c.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            for j, vec in enumerate(q):
                v = Vector(vec)
                if exact and subset is None and self._half and self._n > 2 * k:
                    rows = self._two_pass(c, vec, int(k))
                elif exact:
                    rows = c.execute(stmt, (v, *params, int(k))).fetchall()
                    if subset is None:
                        self.counts["full_scan"] += 1
                else:  # relaxed order: sort the returned rows exactly
                    rows = sorted(c.execute(stmt, (v, v, int(k))).fetchall(), key=lambda r: (r[1], r[0]))
                for m, (row, d) in enumerate(rows[:k]):
                    ids[j, m], scores[j, m] = int(row), -float(d)
        return scores, ids


    def _delta(self, q: np.ndarray) -> float:
        """Largest gap between a row's half- and single-precision scores for query ``q``.

        Rounding a float to half precision moves it by at most 2^-11 of itself plus
        2^-25 (subnormals); both vectors are rounded, so the product moves by at most
        (2^-10 + 2^-22)|q||v| + 2^-25 sqrt(d)(|q| + 2|v|); each of the two float32
        sums adds at most gamma_d |q||v| with gamma_d = d 2^-24 / (1 - d 2^-24). |v| is
        bounded by the largest vector norm recorded at ingest. Doubled for margin.
        """
        d = self._dim
        qn, vn = float(np.linalg.norm(q.astype(np.float64))), self._max_norm
        gamma = d * 2.0 ** -24 / (1 - d * 2.0 ** -24)
        return 2.0 * (qn * vn * (2.0 ** -10 + 2.0 ** -22 + 2.01 * gamma) + 2.0 ** -25 * d ** 0.5 * (qn + 2 * vn))

    def _two_pass(self, c: Any, vec: np.ndarray, k: int) -> list[tuple]:
        """Exact top ``k`` (distance, row) through the half-precision copy (class docstring)."""
        from pgvector import HalfVector, Vector
        from psycopg import sql

        tbl, half = self._store._t[self._table], self._store._t["triples_half"]
        v, h = Vector(vec), HalfVector(vec)
        k2 = k + max(k, 64)
        cand = c.execute(sql.SQL("SELECT row, (embedding <#> %s) FROM {} ORDER BY 2, row LIMIT %s").format(half),
                         (h, k2)).fetchall()
        rescore = sql.SQL("SELECT row, (embedding <#> %s) FROM {} WHERE row = ANY(%s)").format(tbl)
        rows = sorted(c.execute(rescore, (v, [int(r) for r, _ in cand])).fetchall(), key=lambda r: (r[1], r[0]))
        if len(cand) < k2:  # the whole table was a candidate
            self.counts["half_pass"] += 1
            return rows[:k]
        s_k, last_half, delta = -float(rows[k - 1][1]), -float(cand[-1][1]), self._delta(vec)
        if last_half + delta < s_k:  # no row outside the candidates can reach the k-th score
            self.counts["half_pass"] += 1
            return rows[:k]
        # every row whose half score is within delta of the k-th score, scored in single precision
        self.counts["second_pass"] += 1
        reach = sql.SQL("SELECT t.row, (t.embedding <#> %s) FROM {} t WHERE t.row IN "
                        "(SELECT row FROM {} WHERE (embedding <#> %s) <= %s) ORDER BY 2, 1 LIMIT %s").format(tbl, half)
        return [tuple(r) for r in c.execute(reach, (v, h, -(s_k - delta), k)).fetchall()]


class _PgVectors:
    """``vectors[rows]`` of a :class:`PgVectorIndex`: rows read on demand; ``np.asarray`` reads all."""

    def __init__(self, index: PgVectorIndex) -> None:
        self._ix = index

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self._ix), self._ix.dim)

    def __len__(self) -> int:
        return len(self._ix)

    def __getitem__(self, key: Any) -> np.ndarray:
        st, tbl = self._ix._store, "{" + self._ix._table + "}"
        if self._ix._vectors is not None:  # read whole already (np.asarray): no round trip
            return self._ix._vectors[key]
        if isinstance(key, (int, np.integer)):
            return np.asarray(st._q(f"SELECT embedding FROM {tbl} WHERE row = %s", (int(key),),
                                    binary=True)[0][0].to_numpy(), dtype=np.float32)
        rows = np.asarray(key)
        rows = np.flatnonzero(rows) if rows.dtype == bool else rows.astype(np.int64)
        got = {int(r): e.to_numpy() for r, e in st._q(f"SELECT row, embedding FROM {tbl} WHERE row = ANY(%s)",
                                                      (rows.tolist(),), binary=True)}
        out = np.zeros((len(rows), self._ix.dim), np.float32)
        for j, r in enumerate(rows.tolist()):
            out[j] = got[r]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._ix._vectors is None:
            self._ix._vectors = _vector_matrix(self._ix._store, "SELECT embedding FROM {" + self._ix._table
                                               + "} ORDER BY row", self._ix.dim)
        return self._ix._vectors if dtype is None else self._ix._vectors.astype(dtype)


# --------------------------------------------------------------------- the index
class PgEventIndex(EventIndex):
    """An :class:`~chronorag.graphs.event_index.EventIndex` whose store and vectors live in PostgreSQL."""

    store: PgEventStore  # always one here (the dataclass fields are EventIndex's; this only narrows the type)

    def events_of_triples(self, rows: np.ndarray) -> list[np.ndarray]:
        """For each triple row, the ids of its events (one SQL query)."""
        return pg_events_of_triples(self.store, rows)

    @property  # type: ignore[override]
    def _events_of_triple(self) -> tuple[np.ndarray, np.ndarray]:
        """The whole events-by-triple table (STAR-RAG reads it), read from PostgreSQL once."""
        got = self.__dict__.get("_eot")
        if got is None:
            rows = self.store._q("SELECT id, triple FROM {events} ORDER BY triple, id")
            order = np.array([r[0] for r in rows], dtype=np.int64)
            tri = np.array([r[1] for r in rows], dtype=np.int64)
            bounds = np.searchsorted(tri, np.arange(len(self.triples) + 1)).astype(np.int64)
            got = self.__dict__["_eot"] = (order, bounds)
        return got

    @_events_of_triple.setter
    def _events_of_triple(self, value: Any) -> None:
        if value is not None:
            self.__dict__["_eot"] = value

    def name_vectors(self, kind: str) -> np.ndarray:
        """Entity or relation vectors, read from PostgreSQL once."""
        if kind not in ("entity", "relation"):
            raise ConfigError(f"kind must be 'entity' or 'relation', got {kind!r}")
        if kind not in self._name_vectors:
            self._name_vectors[kind] = pg_name_vectors(self.store, kind)
        return self._name_vectors[kind]

    def event_vectors(self, *, save: bool = True, batch_size: int = 50_000) -> np.ndarray:
        """Not kept in PostgreSQL: the dated-text variant needs an in-memory index."""
        raise IndexFormatError("per-event dated vectors (STAR-RAG's dated-text variant) are not stored in "
                               "PostgreSQL; use an in-memory index for that variant")


def load_pg_index(directory: Path, shown: Path) -> PgEventIndex:
    """Open the index a manifest directory points at (used by ``EventIndex.load``)."""
    from chronorag.graphs.persist import read_json

    man = read_json(directory / MANIFEST)
    if man.get("format") != PG_FORMAT_VERSION or man.get("backend") != "postgres":
        raise IndexFormatError(f"{shown / MANIFEST} is not a chronorag PostgreSQL manifest (format "
                               f"{man.get('format')!r}); re-ingest with --store")
    store = PgEventStore(man["url"], man["schema"])
    vecs = PgVectorIndex(store)
    return PgEventIndex(store=store, triples=cast(np.ndarray, _TripleFirst(store)),
                        triple_of_event=cast(np.ndarray, store.triple_of_event),
                        vectors=cast("VectorIndex", vecs), meta=dict(store.meta), path=shown)


class _TripleFirst:
    """``index.triples`` (first event of each triple) read from the triples table."""

    def __init__(self, store: PgEventStore) -> None:
        self._store = store
        self._full: np.ndarray | None = None
        self._served = 0  # rows asked for so far; read whole once they reach len(self) / 4, as _PgColumn

    def __len__(self) -> int:
        return int(self._store.meta["n_triples"])

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        if self._full is None:
            self._full = np.array([r[0] for r in self._store._q("SELECT first_event FROM {triples} ORDER BY row")],
                                  dtype=np.int64)
        return self._full if dtype is None else self._full.astype(dtype)

    def __getitem__(self, key: Any) -> Any:
        if self._full is not None:
            return self._full[key]
        if isinstance(key, (int, np.integer)):
            return int(self._store._q("SELECT first_event FROM {triples} WHERE row = %s", (int(key),))[0][0])
        rows = np.asarray(key, dtype=np.int64)
        self._served += rows.size
        if 4 * self._served >= len(self):
            return np.asarray(self)[rows]
        got = dict(self._store._q("SELECT row, first_event FROM {triples} WHERE row = ANY(%s)", (rows.tolist(),)))
        return np.array([got[int(r)] for r in rows], dtype=np.int64).reshape(rows.shape)

    def max(self) -> int:
        return int(np.asarray(self).max())


def pg_events_of_triples(store: PgEventStore, rows: np.ndarray) -> list[np.ndarray]:
    """For each triple row, its event ids in id order (one SQL query; rows cached)."""
    rows = np.asarray(rows, dtype=np.int64)
    if not len(rows):
        return []
    found = store._ids("triple = ANY(%s)", (rows.tolist(),), order="triple, id")
    tri = store.triple_of_event[found] if len(found) else np.zeros(0, np.int64)
    return [found[tri == r] for r in rows.tolist()]


def pg_name_vectors(store: PgEventStore, kind: str) -> np.ndarray:
    """All entity or relation vectors (read once by the name aligner)."""
    return _vector_matrix(store, "SELECT embedding FROM {" + ("entities" if kind == "entity" else "relations")
                          + "} ORDER BY id", int(store.meta["dim"]))


def _vector_matrix(store: PgEventStore, query: str, dim: int) -> np.ndarray:
    """The vectors a query returns as one float32 matrix (binary transfer, no text parsing)."""
    rows = store._q(query, binary=True)
    out = np.empty((len(rows), dim), np.float32)
    for j, r in enumerate(rows):
        out[j] = r[0].to_numpy()
    return out


def build_pg_index(
    store: TemporalEventStore,
    out_dir: str | os.PathLike[str],
    url: str,
    *,
    encoder: Any = "minilm",
    encoder_kwargs: dict[str, Any] | None = None,
    cache: Any = None,
    progress: bool = True,
    _crash_before_switch: bool = False,
) -> PgEventIndex:
    """Embed a store's triples and names, write them into PostgreSQL, and write the manifest.

    Parameters
    ----------
    store : TemporalEventStore
        The events.
    out_dir : path-like
        Directory for the manifest (written atomically, after the database switch).
    url : str
        ``postgresql://`` URL; a password in it is used for this run and never saved.
    encoder, encoder_kwargs, cache, progress
        As for :func:`~chronorag.graphs.event_index.build_event_index`.

    Returns
    -------
    PgEventIndex
        The new index, opened on its live version (without the URL's password).
    """
    from chronorag.graphs.encoders import CachedEncoder, EmbeddingCache, as_encoder, make_encoder
    from chronorag.graphs.event_index import INDEX_FORMAT_VERSION, default_cache_path, triple_texts
    from chronorag.graphs.persist import check_output_dir, write_index, write_json

    if len(store) == 0:
        raise ConfigError("cannot index an empty event store")
    check_output_dir(out_dir)
    conn = connect(url)  # fail on a bad URL before the slow part
    timings: dict[str, float] = {}
    kind = encoder if isinstance(encoder, str) else getattr(encoder, "kind", None)
    t0 = time.perf_counter()
    enc = (make_encoder(encoder, progress=progress, **(encoder_kwargs or {}))
           if isinstance(encoder, str) else as_encoder(encoder))
    timings["encoder_load_s"] = time.perf_counter() - t0
    cache_obj = cache if isinstance(cache, EmbeddingCache) else EmbeddingCache(cache or default_cache_path())
    t0 = time.perf_counter()
    first, inverse = store.triple_ids()
    cenc = CachedEncoder(enc, cache_obj, progress=progress)
    vecs = cenc.encode(triple_texts(store, first))
    n_emb = cenc.n_computed
    ent_vecs, rel_vecs = cenc.encode(store.entities), cenc.encode(store.relations)
    timings["embed_s"] = time.perf_counter() - t0
    schema = schema_for(out_dir)
    meta = {"format": INDEX_FORMAT_VERSION, "backend": "postgres", "encoder": kind,
            "encoder_kwargs": encoder_kwargs or {}, "model_id": enc.model_id, "dim": int(vecs.shape[1]),
            "n_events": len(store), "n_triples": len(first), "n_embedded": int(n_emb),
            "index_kind": "pgvector-hnsw", "store_fingerprint": store.fingerprint(),
            "has_texts": store.has_texts}
    t0 = time.perf_counter()
    try:
        v = write_pg_version(conn, schema, store, first=first, inverse=inverse, vectors=vecs,
                             entity_vectors=ent_vecs, relation_vectors=rel_vecs,
                             meta={**meta, "timings": timings}, crash_before_switch=_crash_before_switch)
    finally:
        conn.close()
    timings["postgres_write_s"] = time.perf_counter() - t0
    if _crash_before_switch:
        return v  # type: ignore[return-value]
    manifest = {"format": PG_FORMAT_VERSION, "backend": "postgres", "url": redact_url(url), "schema": schema}
    with write_index(out_dir) as tmp:
        write_json(tmp / MANIFEST, manifest)
        write_json(tmp / "index.json", {**meta, "timings": timings, "postgres": {**manifest, "version": v}})
    idx = load_pg_index(Path(out_dir), Path(out_dir)) if _secret(url) is None else _open_with(url, schema, out_dir)
    idx.meta["timings"] = timings
    idx._encoder = enc
    return idx


def _open_with(url: str, schema: str, out_dir: Any) -> PgEventIndex:
    """Open the index with the ingest's own URL (its password is not in the manifest)."""
    store = PgEventStore(url, schema)
    return PgEventIndex(store=store, triples=cast(np.ndarray, _TripleFirst(store)),
                        triple_of_event=cast(np.ndarray, store.triple_of_event),
                        vectors=cast("VectorIndex", PgVectorIndex(store)), meta=dict(store.meta),
                        path=Path(out_dir))


def holds_memory_index(directory: str | os.PathLike[str]) -> bool:
    """True when ``directory`` holds an in-memory (numpy + FAISS) event index."""
    from chronorag.graphs.persist import is_index_dir, snapshot

    p = Path(directory)
    if not p.exists() or not is_index_dir(p):
        return False
    d = snapshot(p)
    return (d / "index.json").exists() and not (d / MANIFEST).exists()


def holds_pg_manifest(directory: str | os.PathLike[str]) -> bool:
    """True when ``directory`` holds a PostgreSQL manifest."""
    from chronorag.graphs.persist import is_index_dir, snapshot

    p = Path(directory)
    return p.exists() and is_index_dir(p) and (snapshot(p) / MANIFEST).exists()
