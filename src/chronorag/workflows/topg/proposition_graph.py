"""ToPG's heterogeneous knowledge graph and its suggestion operators (pure numpy/scipy).

The graph holds three node types (ToPG Sec. 2.1): passages, propositions (atomic
statements) and entities. Every proposition is linked to the passage it comes from and
to the entities it mentions; both edge types are undirected and stored as sparse
incidence matrices:

- ``pe``: propositions x entities (binary CSR),
- ``prop_passage``: the passage id of every proposition (the propositions x passages
  incidence is built from it on demand).

On top of it this module implements the Suggestion operators of the paper:

- :meth:`PropositionGraph.suggest_naive`: top-k cosine over propositions,
- :meth:`PropositionGraph.gextract`: random walk with restart around seeds, keeping the
  ``l`` most visited propositions (the subgraph ``G*``),
- :func:`query_aware_transition`: ``M = lambda T_s + (1 - lambda) T_n`` (Eqs. 4-7),
- :func:`personalized_pagerank`: power iteration with restart on the seeds,
- :meth:`PropositionGraph.suggest_local` (Eq. 8) and :meth:`PropositionGraph.suggest_global`
  (Eq. 10), and :func:`rocchio` (Eq. 11).

Persistence goes through :func:`chronorag.graphs.persist.atomic_dir`, so a failed write
leaves an existing index untouched. Extraction (spaCy or an LLM) and entity
reconciliation with FAISS live in :mod:`chronorag.workflows.topg.extraction`; this module
only receives extracted records and vectors.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from chronorag.errors import ConfigError, IndexFormatError
from chronorag.graphs.persist import atomic_dir, write_json

__all__ = [
    "DEFAULTS",
    "PropositionGraph",
    "PropositionRecord",
    "numpy_matcher",
    "personalized_pagerank",
    "query_aware_transition",
    "rocchio",
    "structural_transition",
]

FORMAT = 1

#: paper defaults (ToPG Sec. 2, App. A/B, Table 5)
DEFAULTS: dict[str, Any] = {
    "k": 20,
    "lam": 0.5,
    "damping": 0.85,
    "theta": 0.4,
    "tau": 0.1,
    "subgraph_size": 500,
    "synonym_threshold": 0.9,
    "rocchio": (1.0, 0.7, 0.15),
    "breadth": 10,
    "budget": 8000,
    "community_min": 10,
    "community_max": 150,
}

#: ``matcher(queries, base, k) -> (sims, ids)``: top-k inner products of unit vectors
Matcher = Callable[[np.ndarray, np.ndarray, int], tuple[np.ndarray, np.ndarray]]


@dataclass
class PropositionRecord:
    """One extracted proposition: its text, the passage it comes from and its entities.

    ``passage`` indexes the passage list passed together with the record (local to
    one :meth:`PropositionGraph.add_documents` call).
    """

    text: str
    passage: int
    entities: list[str] = field(default_factory=list)


def numpy_matcher(queries: np.ndarray, base: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact top-``k`` inner products by blocked numpy matrix products (no FAISS needed)."""
    n = base.shape[0]
    kk = min(k, n)
    sims = np.full((len(queries), k), -np.inf, np.float32)
    ids = np.full((len(queries), k), -1, np.int64)
    if n == 0 or len(queries) == 0:
        return sims, ids
    for s in range(0, len(queries), 2048):
        block = queries[s:s + 2048] @ base.T
        part = np.argpartition(-block, kk - 1, axis=1)[:, :kk]
        psc = np.take_along_axis(block, part, axis=1)
        order = np.argsort(-psc, axis=1, kind="stable")
        top = np.take_along_axis(part, order, axis=1)
        ids[s:s + len(block), :kk] = top
        sims[s:s + len(block), :kk] = np.take_along_axis(block, top, axis=1)
    return sims, ids


def _norm_key(name: str) -> str:
    return " ".join(name.casefold().split())


def _digits(name: str) -> str:
    return "".join(re.findall(r"\d+", name))


def _row_normalise(m: sp.csr_matrix) -> sp.csr_matrix:
    deg = np.asarray(m.sum(axis=1)).ravel()
    inv = np.divide(1.0, deg, out=np.zeros_like(deg, dtype=np.float64), where=deg > 0)
    return sp.csr_matrix(sp.diags(inv) @ m)


def structural_transition(incidence: sp.csr_matrix) -> sp.csr_matrix:
    """``T_s`` of Eq. 5 from a propositions x (entities + passages) incidence matrix.

    Proposition -> entity/passage -> proposition, each step degree-normalised; self
    transitions are removed and every row renormalised (rows with no other
    proposition in reach stay empty).
    """
    b = sp.csr_matrix(incidence, dtype=np.float64)
    t = _row_normalise(b) @ _row_normalise(sp.csr_matrix(b.T))
    t = sp.csr_matrix(t)
    t.setdiag(0.0)
    t.eliminate_zeros()
    return _row_normalise(t)


def query_aware_transition(t_s: sp.csr_matrix, cos: np.ndarray, *, lam: float = 0.5,
                           tau: float = 0.1, theta: float = 0.4) -> sp.csr_matrix:
    """``M = lam * T_s + (1 - lam) * T_n`` (Eqs. 4, 6, 7).

    Parameters
    ----------
    t_s : scipy.sparse.csr_matrix
        Structural transition (:func:`structural_transition`), ``n x n``.
    cos : numpy.ndarray
        Cosine of the query with each of the ``n`` propositions.
    lam : float
        Weight of the structural part (1 = pure graph, 0 = pure semantic).
    tau, theta : float
        Temperature and cosine threshold of Eq. 6.

    Notes
    -----
    ``T_n(i, j)`` is proportional to ``exp(c_j / tau)`` over the structural neighbours
    ``j`` of ``i`` whose cosine is at least ``theta`` (Eq. 7). A row where no neighbour
    passes the threshold has no semantic part; that row of ``M`` is its ``T_s`` row (a
    row with no neighbour at all is empty, and the walk restarts, see
    :func:`personalized_pagerank`).
    """
    if not 0.0 <= lam <= 1.0:
        raise ConfigError(f"lam must be in [0, 1], got {lam}")
    if tau <= 0:
        raise ConfigError(f"tau must be > 0, got {tau}")
    c = np.asarray(cos, dtype=np.float64).ravel()
    if c.shape[0] != t_s.shape[0]:
        raise ConfigError(f"cos has {c.shape[0]} values for a {t_s.shape[0]}-node transition")
    # exp((c - max) / tau): the shift cancels in the row normalisation of Eq. 7
    ct = np.where(c >= theta, np.exp((c - (c.max() if c.size else 0.0)) / tau), 0.0)
    mask = t_s.copy()
    mask.data = np.ones_like(mask.data)
    t_n = _row_normalise(sp.csr_matrix(mask @ sp.diags(ct)))
    if lam == 1.0:
        return t_s
    empty = (np.asarray(t_n.sum(axis=1)).ravel() <= 0).astype(np.float64)
    # a row with no neighbour above theta keeps its structural transitions (weight 1)
    m = lam * t_s + (1.0 - lam) * t_n + (1.0 - lam) * (sp.diags(empty) @ t_s)
    return sp.csr_matrix(m)


def personalized_pagerank(m: sp.csr_matrix, seeds: np.ndarray, *, damping: float = 0.85,
                          weights: np.ndarray | None = None, tol: float = 1e-6,
                          max_iter: int = 100) -> np.ndarray:
    """Stationary distribution of a walk on ``m`` that restarts on ``seeds``.

    ``pi = (1 - damping) * p + damping * (pi M + dangling mass * p)`` where ``p`` is the
    (weighted) seed distribution; mass on rows of ``m`` with no out-edges goes back to
    the seeds.
    """
    if not 0.0 < damping < 1.0:
        raise ConfigError(f"damping must be in (0, 1), got {damping}")
    n = m.shape[0]
    seeds = np.asarray(seeds, dtype=np.int64)
    p = np.zeros(n)
    if seeds.size == 0:
        raise ConfigError("personalized_pagerank needs at least one seed")
    w = np.ones(seeds.size) if weights is None else np.asarray(weights, dtype=np.float64)
    np.add.at(p, seeds, w)
    p /= p.sum()
    out_deg = np.asarray(m.sum(axis=1)).ravel()
    dangling = out_deg <= 0
    mt = sp.csr_matrix(m.T)
    pi = p.copy()
    for _ in range(max_iter):
        nxt = damping * (mt @ pi + pi[dangling].sum() * p) + (1.0 - damping) * p
        if np.abs(nxt - pi).sum() < tol:
            pi = nxt
            break
        pi = nxt
    return pi


def rocchio(q_orig: np.ndarray, q_pos: np.ndarray, q_neg: np.ndarray | None, *,
            alpha: float = 1.0, beta: float = 0.7, gamma: float = 0.15) -> np.ndarray:
    """Relevance-feedback query ``alpha q_o + beta q_+ - gamma q_-`` (Eqs. 9, 11), unit length."""
    q = alpha * np.asarray(q_orig, np.float64) + beta * np.asarray(q_pos, np.float64)
    if q_neg is not None:
        q = q - gamma * np.asarray(q_neg, np.float64)
    nrm = np.linalg.norm(q)
    return (q / nrm if nrm > 0 else q).astype(np.float32)


class PropositionGraph:
    """Passages, propositions and entities with sparse incidence (ToPG Sec. 2.1).

    Build it empty and call :meth:`add_documents`, or :meth:`load` an index directory.

    Attributes
    ----------
    passages : list of dict
        ``{"title", "text"}`` per passage.
    propositions : list of str
    prop_passage : numpy.ndarray
        Passage id of each proposition.
    entities : list of str
    pe : scipy.sparse.csr_matrix
        Propositions x entities incidence.
    prop_vectors, entity_vectors : numpy.ndarray
        Unit vectors (float32) of propositions and entities.
    """

    def __init__(self, dim: int) -> None:
        if dim < 1:
            raise ConfigError(f"dim must be >= 1, got {dim}")
        self.dim = int(dim)
        self.passages: list[dict[str, str]] = []
        self.propositions: list[str] = []
        self.prop_passage = np.zeros(0, np.int64)
        self.entities: list[str] = []
        self.pe = sp.csr_matrix((0, 0), dtype=np.float32)
        self.prop_vectors = np.zeros((0, dim), np.float32)
        self.entity_vectors = np.zeros((0, dim), np.float32)
        self.passage_vectors: np.ndarray | None = np.zeros((0, dim), np.float32)
        self.meta: dict[str, Any] = {}
        self.communities: list[np.ndarray] | None = None
        self._entity_key: dict[str, int] = {}
        self._cache: dict[str, Any] = {}

    # ------------------------------------------------------------------ sizes
    @property
    def n_props(self) -> int:
        """Number of propositions."""
        return len(self.propositions)

    @property
    def n_edges(self) -> int:
        """Proposition-entity plus proposition-passage edges."""
        return int(self.pe.nnz) + self.n_props

    def stats(self) -> dict[str, int]:
        """Node and edge counts (paper Table 2 style)."""
        return {"passages": len(self.passages), "propositions": self.n_props,
                "entities": len(self.entities), "edges": self.n_edges}

    def entity_index(self, name: str) -> int | None:
        """Id of an entity by (case- and space-insensitive) name, or ``None``."""
        return self._entity_key.get(_norm_key(name))

    # ------------------------------------------------------------------ building
    def add_documents(
        self,
        passages: Sequence[dict[str, str]],
        records: Sequence[PropositionRecord],
        *,
        prop_vectors: np.ndarray,
        entity_vectors: Callable[[list[str]], np.ndarray],
        matcher: Matcher = numpy_matcher,
        synonym_threshold: float = 0.9,
        passage_vectors: np.ndarray | None = None,
    ) -> dict[str, int]:
        """Append passages and their propositions without touching existing nodes.

        Parameters
        ----------
        passages : sequence of dict
            New passages (``title``, ``text``).
        records : sequence of PropositionRecord
            Their propositions; ``record.passage`` indexes ``passages``.
        prop_vectors : numpy.ndarray
            ``(len(records), dim)`` unit vectors of the proposition texts.
        entity_vectors : callable
            ``names -> (len(names), dim)`` unit vectors, called once with the entity
            names not already in the graph.
        matcher : callable
            Top-k inner-product search (FAISS in
            :func:`chronorag.workflows.topg.extraction.faiss_matcher`).
        synonym_threshold : float
            New entities whose cosine to an earlier entity is at least this are merged
            into it (App. A, default 0.9). Names with different digits (years, ids) are
            never merged.
        passage_vectors : numpy.ndarray, optional
            ``(len(passages), dim)`` unit vectors of the passages (for the dense-passage
            baseline); when missing here or earlier the graph keeps none.

        Returns
        -------
        dict
            Counts: ``passages``, ``propositions``, ``entities`` (new nodes),
            ``merged`` (names reconciled with an existing entity).
        """
        pv = np.asarray(prop_vectors, dtype=np.float32)
        if pv.ndim != 2 or pv.shape != (len(records), self.dim):
            raise ConfigError(f"prop_vectors must have shape ({len(records)}, {self.dim}), got {pv.shape}")
        for i, p in enumerate(passages):
            if not isinstance(p, dict) or not isinstance(p.get("text"), str):
                raise ConfigError(f"passage #{i} must be a dict with a 'text' string, got {p!r:.100}")
        for i, r in enumerate(records):
            if not 0 <= r.passage < len(passages):
                raise ConfigError(f"record #{i} points to passage {r.passage}, outside 0..{len(passages) - 1}")
        base_passage = len(self.passages)
        n_before = self.n_props
        # entity names, exact (normalised) matches first
        new_names: list[str] = []
        new_keys: dict[str, int] = {}
        for r in records:
            for e in r.entities:
                k = _norm_key(e)
                if k and k not in self._entity_key and k not in new_keys:
                    new_keys[k] = len(new_names)
                    new_names.append(" ".join(e.split()))
        merged = 0
        canon = np.arange(len(new_names)) + len(self.entities)  # final id of each new name
        if new_names:
            ev = np.asarray(entity_vectors(new_names), dtype=np.float32)
            if ev.shape != (len(new_names), self.dim):
                raise ConfigError(f"entity_vectors returned shape {ev.shape}, expected ({len(new_names)}, {self.dim})")
            base = np.vstack([self.entity_vectors, ev]) if len(self.entities) else ev
            sims, ids = matcher(ev, base, 5)
            keep: list[int] = []
            n_old = len(self.entities)
            digits = [_digits(x) for x in new_names]
            for i in range(len(new_names)):
                target = -1
                for s, j in zip(sims[i], ids[i]):
                    if j < 0 or s < synonym_threshold:
                        break
                    if j < n_old:
                        if _digits(self.entities[j]) == digits[i]:
                            target = int(j)
                            break
                    elif j - n_old < i and digits[j - n_old] == digits[i]:
                        target = int(canon[j - n_old])
                        break
                if target >= 0:
                    canon[i] = target
                    merged += 1
                else:
                    canon[i] = n_old + len(keep)
                    keep.append(i)
            for i, name in enumerate(new_names):
                self._entity_key[_norm_key(name)] = int(canon[i])
            self.entities.extend(new_names[i] for i in keep)
            self.entity_vectors = np.vstack([self.entity_vectors, ev[keep]]).astype(np.float32)
        rows, cols = [], []
        for i, r in enumerate(records):
            ids_ = {self._entity_key[_norm_key(e)] for e in r.entities if _norm_key(e)}
            for j in sorted(ids_):
                rows.append(n_before + i)
                cols.append(j)
        if passage_vectors is not None and self.passage_vectors is not None:
            pav = np.asarray(passage_vectors, np.float32)
            if pav.shape != (len(passages), self.dim):
                raise ConfigError(f"passage_vectors must have shape ({len(passages)}, {self.dim}), got {pav.shape}")
            self.passage_vectors = np.vstack([self.passage_vectors, pav])
        else:
            self.passage_vectors = None
        self.passages.extend({"title": str(p.get("title") or ""), "text": p["text"]} for p in passages)
        self.propositions.extend(r.text for r in records)
        self.prop_passage = np.concatenate([self.prop_passage,
                                            np.array([base_passage + r.passage for r in records], np.int64)])
        self.prop_vectors = np.vstack([self.prop_vectors, pv]).astype(np.float32)
        n, m = self.n_props, len(self.entities)
        cur = sp.csr_matrix(self.pe, dtype=np.float32)
        cur = sp.csr_matrix((cur.data, cur.indices, cur.indptr), shape=(n_before, m))
        add = sp.csr_matrix((np.ones(len(rows), np.float32), (np.asarray(rows, np.int64) - n_before, cols)),
                            shape=(n - n_before, m))
        self.pe = sp.vstack([cur, add]).tocsr()
        self.pe.sum_duplicates()
        self.pe.data[:] = 1.0
        self._cache.clear()
        self.communities = None
        return {"passages": len(passages), "propositions": len(records),
                "entities": len(new_names) - merged, "merged": merged}

    # ------------------------------------------------------------------ matrices
    def incidence(self) -> sp.csr_matrix:
        """Propositions x (entities + passages) incidence (the ``A`` of Eq. 5)."""
        if "inc" not in self._cache:
            n = self.n_props
            pp = sp.csr_matrix((np.ones(n, np.float32), (np.arange(n), self.prop_passage)),
                               shape=(n, len(self.passages)))
            self._cache["inc"] = sp.hstack([self.pe, pp]).tocsr()
        return self._cache["inc"]

    def _walk_ops(self) -> tuple[sp.csr_matrix, sp.csr_matrix]:
        if "walk" not in self._cache:
            b = self.incidence().astype(np.float64)
            self._cache["walk"] = (_row_normalise(b), _row_normalise(sp.csr_matrix(b.T)))
        return self._cache["walk"]

    def cosine(self, query: np.ndarray, ids: np.ndarray | None = None) -> np.ndarray:
        """Cosine of a unit query vector with all (or the given) propositions."""
        q = self._check_query(query)
        x = self.prop_vectors if ids is None else self.prop_vectors[ids]
        return x @ q

    def _check_query(self, query: np.ndarray) -> np.ndarray:
        q = np.asarray(query, dtype=np.float32).ravel()
        if q.shape[0] != self.dim:
            raise ConfigError(f"query vector has dimension {q.shape[0]}, the graph's is {self.dim}")
        return q

    def _check_seeds(self, seeds: Sequence[int] | np.ndarray) -> np.ndarray:
        s = np.unique(np.asarray(list(seeds), dtype=np.int64))
        if s.size == 0:
            raise ConfigError("at least one seed proposition is needed")
        if s[0] < 0 or s[-1] >= self.n_props:
            raise ConfigError(f"seed ids must be in 0..{self.n_props - 1}, got {s.tolist()[:5]}")
        return s

    # ------------------------------------------------------------------ suggestion
    def suggest_naive(self, query: np.ndarray, k: int = 20, *,
                      exclude: Sequence[int] = ()) -> tuple[np.ndarray, np.ndarray]:
        """SuggestNaive: the ``k`` propositions most cosine-similar to the query.

        Returns
        -------
        ids, scores : numpy.ndarray
        """
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        if self.n_props == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        c = self.cosine(query).astype(np.float64)
        ex = np.asarray(list(exclude), dtype=np.int64)
        if ex.size:
            c[ex] = -np.inf
        kk = min(k, self.n_props - ex.size) if ex.size < self.n_props else 0
        if kk <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        part = np.argpartition(-c, kk - 1)[:kk]
        order = part[np.argsort(-c[part], kind="stable")]
        return order.astype(np.int64), c[order]

    def search_passages(self, query: np.ndarray, k: int = 5) -> tuple[np.ndarray, np.ndarray]:
        """Dense passage retrieval (the baseline): top-``k`` passages by cosine."""
        if self.passage_vectors is None:
            raise IndexFormatError("this index stores no passage vectors; rebuild it to use dense passages")
        q = self._check_query(query)
        c = self.passage_vectors @ q
        kk = min(k, c.size)
        part = np.argpartition(-c, kk - 1)[:kk]
        order = part[np.argsort(-c[part], kind="stable")]
        return order.astype(np.int64), c[order].astype(np.float64)

    def gextract(self, seeds: Sequence[int] | np.ndarray, size: int = 500, *, restart: float = 0.15,
                 steps: int = 15) -> np.ndarray:
        """GExtract: the ``size`` propositions most visited by a random walk with restart.

        The walk alternates proposition -> entity/passage -> proposition (degree
        normalised, so a hub entity spreads its mass thinly) and restarts on the seeds
        with probability ``restart``. Seeds are always part of the result.

        Returns
        -------
        numpy.ndarray
            Sorted proposition ids of the subgraph ``G*``.
        """
        s = self._check_seeds(seeds)
        if size < 1:
            raise ConfigError(f"size must be >= 1, got {size}")
        if self.n_props <= size:
            return np.arange(self.n_props, dtype=np.int64)
        a_pe, a_ep = self._walk_ops()
        p = np.zeros(self.n_props)
        p[s] = 1.0 / s.size
        x = p.copy()
        visits = np.zeros(self.n_props)
        for _ in range(steps):
            x = (1.0 - restart) * (a_ep.T @ (a_pe.T @ x)) + restart * p
            visits += x
        visits[s] = np.inf
        nz = int(np.count_nonzero(visits))
        kk = min(size, nz)
        top = np.argpartition(-visits, kk - 1)[:kk]
        return np.sort(top.astype(np.int64))

    def _sub_ts(self, sub: np.ndarray) -> sp.csr_matrix:
        return structural_transition(self.incidence()[sub])

    def suggest_local(self, query: np.ndarray, seeds: Sequence[int], k: int = 20, *,
                      exclude: Sequence[int] = (), lam: float = 0.5, damping: float = 0.85,
                      tau: float = 0.1, theta: float = 0.4, subgraph_size: int = 500
                      ) -> tuple[np.ndarray, np.ndarray]:
        """SuggestLocal (Eq. 8): GExtract, query-aware transition, PPR from the seeds.

        Returns the top-``k`` propositions by PPR mass that are neither seeds nor in
        ``exclude`` (with mass > 0), and their PPR scores.
        """
        s = self._check_seeds(seeds)
        q = self._check_query(query)
        sub = self.gextract(s, subgraph_size)
        t_s = self._sub_ts(sub)
        m = query_aware_transition(t_s, self.prop_vectors[sub] @ q, lam=lam, tau=tau, theta=theta)
        local = np.searchsorted(sub, s)
        pi = personalized_pagerank(m, local, damping=damping)
        return self._top_new(sub, pi, k, set(s.tolist()) | set(int(e) for e in exclude))

    def suggest_global(self, queries: np.ndarray, seeds: Sequence[int], k: int = 20, *,
                       exclude: Sequence[int] = (), lam: float = 0.5, damping: float = 0.85,
                       tau: float = 0.1, theta: float = 0.4, subgraph_size: int = 500
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """SuggestGlobal (Eq. 10): one query-aware walk per seed, each with its own query.

        Parameters
        ----------
        queries : numpy.ndarray
            ``(len(seeds), dim)``: the (Rocchio-refined) query of each seed, in the
            order of ``seeds``.

        Returns
        -------
        ids, scores, walker : numpy.ndarray
            New propositions, their summed PPR mass, and for each the position (in
            ``seeds``) of the walker that gave it the most mass (``k*`` of Eq. 11).
        """
        seeds_l = [int(x) for x in seeds]
        s = self._check_seeds(seeds_l)
        qs = np.asarray(queries, dtype=np.float32)
        if qs.ndim != 2 or qs.shape != (len(seeds_l), self.dim):
            raise ConfigError(f"queries must have shape ({len(seeds_l)}, {self.dim}), got {qs.shape}")
        sub = self.gextract(s, subgraph_size)
        t_s = self._sub_ts(sub)
        pis = np.zeros((len(seeds_l), sub.size))
        cos = self.prop_vectors[sub] @ qs.T
        for i, u in enumerate(seeds_l):
            m = query_aware_transition(t_s, cos[:, i], lam=lam, tau=tau, theta=theta)
            pis[i] = personalized_pagerank(m, np.searchsorted(sub, [u]), damping=damping)
        ids, scores = self._top_new(sub, pis.sum(axis=0), k, set(seeds_l) | set(int(e) for e in exclude))
        pos = np.searchsorted(sub, ids)
        walker = pis[:, pos].argmax(axis=0) if ids.size else np.zeros(0, np.int64)
        return ids, scores, walker

    @staticmethod
    def _top_new(sub: np.ndarray, pi: np.ndarray, k: int, skip: set[int]) -> tuple[np.ndarray, np.ndarray]:
        order = np.argsort(-pi, kind="stable")
        ids, scores = [], []
        for j in order:
            if pi[j] <= 0:
                break
            g = int(sub[j])
            if g in skip:
                continue
            ids.append(g)
            scores.append(float(pi[j]))
            if len(ids) >= k:
                break
        return np.asarray(ids, np.int64), np.asarray(scores)

    # ------------------------------------------------------------------ communities
    def node_edges(self) -> tuple[int, np.ndarray]:
        """The heterogeneous graph as an edge list over one node numbering.

        Node ids: propositions ``0..P-1``, entities ``P..P+E-1``, passages after.
        Returns ``(n_nodes, edges)`` with ``edges`` of shape ``(n_edges, 2)``.
        """
        inc = sp.coo_matrix(self.incidence())
        edges = np.stack([inc.row.astype(np.int64), inc.col.astype(np.int64) + self.n_props], axis=1)
        return self.n_props + len(self.entities) + len(self.passages), edges

    def node_label(self, node: int) -> tuple[str, str]:
        """``(kind, text)`` of a node in :meth:`node_edges` numbering."""
        p, e = self.n_props, len(self.entities)
        if node < p:
            return "proposition", self.propositions[node]
        if node < p + e:
            return "entity", self.entities[node - p]
        pas = self.passages[node - p - e]
        return "passage", (f"{pas['title']}: " if pas["title"] else "") + pas["text"]

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike[str], *, meta: dict[str, Any] | None = None) -> Path:
        """Write the graph atomically into ``directory`` (replacing what was there)."""
        with atomic_dir(directory) as tmp:
            write_json(tmp / "passages.json", self.passages)
            write_json(tmp / "propositions.json", self.propositions)
            write_json(tmp / "entities.json", self.entities)
            np.save(tmp / "prop_passage.npy", self.prop_passage)
            np.save(tmp / "prop_vectors.npy", self.prop_vectors)
            np.save(tmp / "entity_vectors.npy", self.entity_vectors)
            sp.save_npz(tmp / "pe.npz", sp.csr_matrix(self.pe))
            if self.passage_vectors is not None:
                np.save(tmp / "passage_vectors.npy", self.passage_vectors)
            if self.communities is not None:
                sizes = np.array([c.size for c in self.communities], np.int64)
                flat = np.concatenate(self.communities) if self.communities else np.zeros(0, np.int64)
                np.savez(tmp / "communities.npz", sizes=sizes, nodes=flat)
            self.meta = {**self.meta, **(meta or {}), "format": FORMAT, "dim": self.dim, **self.stats()}
            write_json(tmp / "topg.json", self.meta)
            write_json(tmp / "entity_keys.json", self._entity_key)
        return Path(directory)

    @classmethod
    def load(cls, directory: str | os.PathLike[str] | Any) -> PropositionGraph:
        """Load a graph written by :meth:`save` (no rebuilding).

        Every file is read from one version of the index and checked against its
        build-time fingerprint (:class:`~chronorag.graphs.index_files.IndexFiles`); a
        damaged or foreign file raises :class:`IndexFormatError` naming it.
        """
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles.open(directory)
        d = files.shown
        if not files.has("topg.json"):
            raise IndexFormatError(f"{d} is not a ToPG index (no topg.json); build one with "
                                   f"`chronorag topg index CORPUS --out {d}`")
        meta = files.json("topg.json")
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise IndexFormatError(f"{d}: ToPG index format {fmt!r}, expected {FORMAT}; rebuild it: "
                                   f"`chronorag topg index CORPUS --out {d}`")
        with files.parsing("topg.json"):
            g = cls(int(meta["dim"]))
        g.meta = meta
        g.passages = files.json("passages.json")
        g.propositions = files.json("propositions.json")
        g.entities = files.json("entities.json")
        for name, value, kind in (("passages.json", g.passages, dict), ("propositions.json", g.propositions, str),
                                  ("entities.json", g.entities, str)):
            if not isinstance(value, list) or not all(isinstance(x, kind) for x in value):
                raise files.damaged(name, f"expected a JSON list of {kind.__name__}")
        if not all(isinstance(p.get("text"), str) and isinstance(p.get("title", ""), str) for p in g.passages):
            raise files.damaged("passages.json", "a passage without a text string")
        g.prop_passage = files.npy("prop_passage.npy", ndim=1)
        g.prop_vectors = files.npy("prop_vectors.npy", ndim=2)
        g.entity_vectors = files.npy("entity_vectors.npy", ndim=2)
        g.pe = files.sparse_npz("pe.npz").astype(np.float32)
        g.passage_vectors = files.npy("passage_vectors.npy", ndim=2) if files.has("passage_vectors.npy") else None
        keys = files.json("entity_keys.json")
        with files.parsing("entity_keys.json"):
            g._entity_key = {str(k): int(v) for k, v in keys.items()}
        if files.has("communities.npz"):
            z = files.npz("communities.npz", keys=("sizes", "nodes"))
            with files.parsing("communities.npz"):
                sizes = z["sizes"].astype(np.int64)
                if sizes.ndim != 1 or z["nodes"].ndim != 1 or int(sizes.sum()) != len(z["nodes"]) \
                        or (sizes.size and int(sizes.min()) < 0):
                    raise ConfigError("community sizes do not add up to the node list")
                g.communities = np.split(z["nodes"], np.cumsum(sizes)[:-1]) if sizes.size else []
        n_p, n_e = len(g.propositions), len(g.entities)
        checks = (
            ("pe.npz", g.pe.shape == (n_p, n_e)),
            ("prop_passage.npy", len(g.prop_passage) == n_p and (not n_p or (
                int(g.prop_passage.min()) >= 0 and int(g.prop_passage.max()) < len(g.passages)))),
            ("prop_vectors.npy", g.prop_vectors.shape == (n_p, g.dim)),
            ("entity_vectors.npy", g.entity_vectors.shape == (n_e, g.dim)),
            ("passage_vectors.npy", g.passage_vectors is None or g.passage_vectors.shape == (len(g.passages), g.dim)),
            ("entity_keys.json", all(0 <= v < n_e for v in g._entity_key.values())),
        )
        for name, ok in checks:
            if not ok:
                raise files.damaged(name, "its shape does not match the index's node lists "
                                          f"({n_p} propositions, {n_e} entities, {len(g.passages)} passages, "
                                          f"dimension {g.dim})")
        return g
