"""STAR-RAG retriever: time-aware anchors -> seeded PPR on the rule graph -> candidates -> time-aware re-rank.

Per query (Alg. 1, Sec. 3.3, with the time handling described below):

1. **Question time.** :func:`time_intent` reads the question with
   :func:`chronorag.graphs.question.parse_question`: an explicit time window ("in
   April 2005", "before 22 October 2008", "between ... and ..."), an ordinal
   ("first"/"last"), and an anchor event ("before Ethiopia", "the same month as X").
   The anchor event is looked up: the KG entity whose name is nearest the anchor
   phrase (by embedding), among its triples the one nearest the main clause plus the
   anchor phrase, and that triple's first event (as the TempTool reasoner reads
   MultiTQ). Its date bounds the window ("before" / "after" / the same day, month or
   year).
2. **Anchors** (``similarity_top_k`` = K1). The query's cosine to every distinct triple;
   the events of the top ``anchor_pool`` triples are scored

   ``cosine + w_window * in_window + w_order * order + w_ref * related``

   where ``order`` in [0, 1] is, for an anchor-event question, ``exp(-|t - t_anchor| /
   30 days)`` (the rule graph's pairing window), otherwise the time rank for "first" /
   "last" (within the event's triple when a time is asked, across candidates when an
   entity is), and ``related`` marks triples sharing two of (subject, relation, object)
   with the anchor event's triple (the event-Hamming <= 2 relation the rule graph's edges
   come from). Of the anchor event's own triple only the anchor event is kept. Events
   are picked greedily so they **cover the question**: at most ``max_per_triple`` events
   of one triple, never two of one triple in the same month.
3. **Seeded PPR** (App. C personalization over the rule nodes of the anchors and the
   anchor event, or uniform), on the undirected rule graph or, with ``directed=True``,
   following the chain edges forward for "after" questions and backward for "before" ones.
4. **Candidates**: the triples supporting the top-``k2`` rule nodes plus the anchors',
   capped to the ``rerank_pool`` best by ``cosine + w_ref * related``.
5. **Re-rank**: the same score and the same covering selection as step 2 over the
   candidates' events; the top K1 are returned.

``time_mode`` picks the time signal: ``"cue"`` (the parser, above), ``"dated"`` (the
paper's variant: cosine to each event's *dated* sentence, App. H's pass over all events;
vectors from :meth:`EventIndex.event_vectors`), or ``"none"`` (triple cosine only,
most recent event first: the behaviour before time-aware scoring).

Ablations share every step but the rule graph: ``use_rule_graph=False`` returns the
re-ranked anchors ("no-rule"); ``personalization="uniform"`` replaces App. C's vector.
``dense_pool=N`` (with ``use_rule_graph=False``) re-ranks the top ``N`` triples by
cosine instead: a control with as many candidates as the rule graph supplies.
"""

from __future__ import annotations

import os
import re
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

import numpy as np
from llama_index.core.indices.property_graph import CustomPGRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle

from chronorag.errors import ArgumentTypeError, ConfigError
from chronorag.graphs.event_index import EventIndex
from chronorag.graphs.time import Granularity, parse_time, temporal_mask
from chronorag.retrievers.base import (
    TemporalPGRetrieverMixin,
    TemporalRetriever,
    TimeFilter,
    as_time_filter,
)
from chronorag.retrievers.dense import event_node
from chronorag.retrievers.star_rag.rule_graph import RuleGraph

__all__ = ["StarRAGPGRetriever", "StarRAGRetriever", "derived_index_dir"]

from chronorag.retrievers.star_rag.time_scoring import (
    _DAY,
    _MONTH,
    _NEG,
    _POS,
    PERSONALIZATIONS,
    TIME_MODES,
    TimeIntent,
    _rank_within,
    time_intent,
)


# ------------------------------------------------------------------ retriever
class StarRAGRetriever(TemporalRetriever):
    """LlamaIndex retriever implementing STAR-RAG over an :class:`EventIndex` and a :class:`RuleGraph`.

    Parameters
    ----------
    index : EventIndex
        Events, triple vectors and the query encoder.
    rule_graph : RuleGraph, optional
        Defaults to the one saved in the index directory (``chronorag star-rag build``).
    similarity_top_k : int
        Events returned and anchors kept, the paper's ``K1`` (10). ``k1`` is an alias.
    k2 : int
        Rule nodes kept after PPR (20).
    alpha, tol : float
        PPR restart probability (0.2) and tolerance (1e-5).
    theta, beta, tau : float
        Personalization parameters (0.6, 0.7, ``1/|U_seed|``).
    personalization : {"star", "uniform"}
        App. C vector or the uniform ablation.
    use_rule_graph : bool
        ``False``: the no-rule ablation (re-ranked anchors, or ``dense_pool``).
    directed : bool
        Walk the chain edges forward ("after") or backward ("before") by the question's cue.
    time_mode : {"cue", "dated", "none"}
        Time signal in the anchor search and the re-rank (module docstring).
    w_window, w_order, w_ref : float
        Weights of the in-window indicator (0.15), of the order/closeness score (0.1) and,
        for a question naming an anchor event, of sharing two of (subject, relation,
        object) with that event (0.1): the event-Hamming <= 2 relation the rule graph's
        edges are built from.
    max_per_triple : int
        Events of one triple among the anchors and the results (2).
    anchor_pool, rerank_pool : int
        Triples scored per event for the anchors (``4 * k1``) and in the re-rank (200).
    dense_pool : int
        No-rule control: re-rank the top ``dense_pool`` triples by cosine (0 = anchors only).
    ppr_weight : float
        Weight of normalised PPR mass added to the re-rank score (0 = the paper).
    time_filter : TimeFilter, dict or MetadataFilters, optional
        Default TempTool-style filter (``begin_time``, ``end_time``, ``type``); a call can
        pass its own: ``retrieve(q, time_filter=...)`` (see
        :class:`~chronorag.retrievers.base.TemporalRetriever`); ``aretrieve`` runs in a
        worker thread.

    Notes
    -----
    ``NodeWithScore.score`` is the re-rank score: cosine similarity plus the time bonus
    (at most ``w_window + w_order``; 0 without a time cue). The plain cosine is in the
    node's ``cosine`` metadata. All metadata is hidden from the LLM and the embedder.
    """

    def __init__(
        self,
        index: EventIndex,
        rule_graph: RuleGraph | None = None,
        *,
        similarity_top_k: int | None = None,
        k1: int | None = None,
        k2: int = 20,
        alpha: float = 0.2,
        tol: float = 1e-5,
        theta: float = 0.6,
        beta: float = 0.7,
        tau: float | None = None,
        personalization: str = "star",
        use_rule_graph: bool = True,
        directed: bool = False,
        time_mode: str = "cue",
        w_window: float = 0.15,
        w_order: float = 0.1,
        w_ref: float = 0.1,
        max_per_triple: int = 2,
        anchor_pool: int | None = None,
        rerank_pool: int = 200,
        dense_pool: int = 0,
        ppr_weight: float = 0.0,
        time_filter: Any = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(index, EventIndex):
            raise ArgumentTypeError(f"index must be an EventIndex, got {type(index).__name__}")
        if similarity_top_k is not None and k1 is not None and similarity_top_k != k1:
            raise ConfigError(f"similarity_top_k={similarity_top_k} and k1={k1} disagree; pass one")
        top = similarity_top_k if similarity_top_k is not None else (k1 if k1 is not None else 10)
        if top < 1 or k2 < 1:
            raise ConfigError(f"similarity_top_k (k1) and k2 must be >= 1, got k1={top}, k2={k2}")
        if personalization not in PERSONALIZATIONS:
            raise ConfigError(f"personalization must be one of {PERSONALIZATIONS}, got {personalization!r}")
        if time_mode not in TIME_MODES:
            raise ConfigError(f"time_mode must be one of {TIME_MODES}, got {time_mode!r}")
        if not 0 < alpha <= 1 or tol <= 0:
            raise ConfigError(f"need 0 < alpha <= 1 and tol > 0, got alpha={alpha}, tol={tol}")
        for name, v in (("ppr_weight", ppr_weight), ("w_window", w_window), ("w_order", w_order), ("w_ref", w_ref),
                        ("dense_pool", dense_pool)):
            if v < 0:
                raise ConfigError(f"{name} must be >= 0, got {v}")
        if max_per_triple < 1 or rerank_pool < 1 or (anchor_pool is not None and anchor_pool < 1):
            raise ConfigError("max_per_triple, rerank_pool and anchor_pool must be >= 1")
        if rule_graph is None and use_rule_graph:
            if index.path is None:
                raise ConfigError("pass rule_graph= (the index has no directory to load one from)")
            # from the version the index was loaded from (isolated from a concurrent rebuild)
            rule_graph = RuleGraph.load(getattr(index, "_files", None) or index.path)
        if rule_graph is not None and len(rule_graph.event_ptr) - 1 != len(index.store):
            raise ConfigError(f"the rule graph covers {len(rule_graph.event_ptr) - 1} events but the index holds "
                             f"{len(index.store)}; rebuild it with `chronorag star-rag build {index.path}`")
        self._index = index
        self.rule_graph = rule_graph
        self.similarity_top_k = top
        self.k2 = k2
        self.alpha, self.tol, self.theta, self.beta, self.tau = alpha, tol, theta, beta, tau
        self.personalization = personalization
        self.use_rule_graph = use_rule_graph
        self.directed = directed
        self.time_mode = time_mode
        self.w_window, self.w_order, self.w_ref = w_window, w_order, w_ref
        self.max_per_triple = max_per_triple
        self.anchor_pool = anchor_pool
        self.rerank_pool = rerank_pool
        self.dense_pool = dense_pool
        self.ppr_weight = ppr_weight
        self._node_triples: tuple[np.ndarray, np.ndarray] | None = None
        self._ent_triples: tuple[np.ndarray, np.ndarray] | None = None
        super().__init__(time_filter=time_filter, **kwargs)

    @property
    def k1(self) -> int:
        """The paper's ``K1`` (same as ``similarity_top_k``)."""
        return self.similarity_top_k

    @k1.setter
    def k1(self, value: int) -> None:
        if value < 1:
            raise ConfigError(f"k1 must be >= 1, got {value}")
        self.similarity_top_k = int(value)

    # ----------------------------------------------------------------- helpers
    def _event_table(self) -> tuple[np.ndarray, np.ndarray]:
        idx = self._index
        idx.events_of_triples(np.zeros(0, np.int64))  # builds the CSR once
        return idx._events_of_triple  # type: ignore[return-value]

    def _expand(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """All events of triple ``rows``: ``(event ids, position of their triple in rows)``."""
        order, bounds = self._event_table()
        rows = np.asarray(rows, dtype=np.int64)
        lo, hi = bounds[rows], bounds[rows + 1]
        n = hi - lo
        if n.sum() == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        pos = np.repeat(np.arange(len(rows)), n)
        off = np.arange(n.sum()) - np.repeat(np.cumsum(n) - n, n)
        return order[lo[pos] + off], pos

    def _entity_triples(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR entity -> triples it is the subject or object of (built once)."""
        if self._ent_triples is None:
            idx = self._index
            first = idx.triples
            ent = np.concatenate([idx.store.subject[first], idx.store.object[first]]).astype(np.int64)
            rows = np.concatenate([np.arange(len(first)), np.arange(len(first))])
            order = np.lexsort((rows, ent))
            ptr = np.searchsorted(ent[order], np.arange(len(idx.store.entities) + 1))
            self._ent_triples = (ptr, rows[order])
        return self._ent_triples

    def _relation_stems(self) -> tuple[list[set[str]], dict[str, int]]:
        """Per relation, the stems of its name's words; and in how many names each stem occurs."""
        got = self.__dict__.get("_rel_stems")
        if got is None:
            per = [_stems(r) for r in self._index.store.relations]
            df: dict[str, int] = {}
            for st in per:
                for w in st:
                    df[w] = df.get(w, 0) + 1
            got = self.__dict__["_rel_stems"] = (per, df)
        return got

    def _reference_time(self, avec: np.ndarray, rvec: np.ndarray, main: str = "") -> tuple[int, int] | None:
        """The anchor event: ``(first minute, triple row)``.

        The anchor entity is the KG entity whose name is nearest the anchor phrase; the
        anchor event's triple is, among that entity's triples, the nearest to the
        reference query (main clause + anchor phrase); its first event gives the time.
        A triple whose relation name shares a distinctive word with the main clause
        ("criticize" and "Criticize or denounce", a stem found in at most 3 relation
        names) is preferred (+0.25 to its cosine): "After France, who did X criticize
        first?" is anchored on X criticizing France, not on X rejecting France.
        """
        idx = self._index
        ent = int(np.argmax(idx.name_vectors("entity") @ avec))
        ptr, rows = self._entity_triples()
        mine = rows[ptr[ent]: ptr[ent + 1]]
        if len(mine) == 0:
            return None
        score = idx.vectors.vectors[mine] @ rvec
        words = _stems(main)
        if words:
            per, df = self._relation_stems()
            rel = idx.store.relation[idx.triples[mine]]
            score = score + 0.25 * np.array([any(df[w] <= 3 for w in per[int(r)] & words) for r in rel])
        best = int(mine[np.argmax(score)])
        evs = idx.events_of_triples(np.asarray([best]))[0]
        return int(idx.store.t_lo[evs].min()), best

    def _window(self, ti: TimeIntent, t_ref: int | None) -> tuple[int, int] | None:
        if ti.constraint in ("in", "between") or (ti.constraint in ("before", "after") and ti.anchor is None):
            if ti.lo is None and ti.hi is None:
                return None
            return (_NEG if ti.lo is None else ti.lo, _POS if ti.hi is None else ti.hi)
        if t_ref is None:
            return None
        if ti.constraint == "before":
            return _NEG, t_ref
        if ti.constraint == "after":
            return t_ref + _DAY, _POS
        if ti.constraint == "same":
            from chronorag.graphs.time import minutes_to_iso

            g = Granularity.DAY if ti.same_granularity is None else ti.same_granularity  # YEAR is 0
            tp = parse_time(minutes_to_iso(t_ref, g))
            return tp.lo, tp.hi
        return None

    def _related(self, rows: np.ndarray, ref_row: int | None) -> np.ndarray:
        """1.0 for triples sharing two of (subject, relation, object) with the reference triple (not itself)."""
        if ref_row is None or self.time_mode != "cue":
            return np.zeros(len(rows))
        st, first = self._index.store, self._index.triples
        a, b = first[rows], first[ref_row]
        same = ((st.subject[a] == st.subject[b]).astype(np.int8) + (st.relation[a] == st.relation[b])
                + (st.object[a] == st.object[b]))
        return ((same >= 2) & (rows != ref_row)).astype(np.float64)

    def _score(self, ev: np.ndarray, base: np.ndarray, ti: TimeIntent,
               window: tuple[int, int] | None, t_ref: int | None = None,
               group: np.ndarray | None = None) -> np.ndarray:
        """``base + w_window * in_window + w_order * order`` (time part only in ``"cue"`` mode).

        ``order`` is, for an anchor-event question, ``exp(-|t - t_ref| / tau)`` with
        ``tau`` the rule graph's pairing window (the events close in time to the anchor);
        otherwise the event's time rank among the in-window candidates (earliest = 1 for
        "first", latest = 1 for "last"): among the events of its own triple when the
        question asks for a time ("when did X last ..."), among all candidates when it asks
        for an entity ("who first ...").
        """
        if self.time_mode != "cue":
            return base
        t = self._index.store.t_lo[ev]
        score = base.astype(np.float64).copy()
        inside = np.ones(len(ev), dtype=bool)
        if window is not None:
            inside = (t >= window[0]) & (t < window[1])
            score += self.w_window * inside
        order = ti.order
        if t_ref is not None and ti.constraint in ("before", "after", "same"):
            tau = self._tau_days * _DAY
            score += self.w_order * np.where(inside, np.exp(-np.abs(t - t_ref) / tau), 0.0)
            if ti.ordinal and ti.constraint == "same" and inside.any():
                order = ti.ordinal
            else:
                order = None
        if order is not None and inside.any():
            if ti.target == "time" and group is not None:
                r = _rank_within(group, t, inside)
            else:
                ts = np.unique(t[inside])
                r = np.clip(np.searchsorted(ts, t) / max(len(ts) - 1, 1), 0.0, 1.0)
            score += self.w_order * np.where(inside, 1.0 - r if order == "first" else r, 0.0)
        return score

    @property
    def _tau_days(self) -> float:
        rg = self.rule_graph
        return float(rg.config.window_days) if rg is not None else 30.0

    def _select(self, ev: np.ndarray, tri: np.ndarray, score: np.ndarray, k: int) -> np.ndarray:
        """Greedy covering pick: best score first, <= max_per_triple per triple, one per (triple, month)."""
        t = self._index.store.t_lo[ev]
        order = np.lexsort((ev, -t, -score))
        per: dict[int, int] = {}
        months: set[tuple[int, int]] = set()
        out: list[int] = []
        for i in order.tolist():
            tr = int(tri[i])
            mk = (tr, int(t[i] // _MONTH))
            if per.get(tr, 0) >= self.max_per_triple or mk in months:
                continue
            per[tr] = per.get(tr, 0) + 1
            months.add(mk)
            out.append(i)
            if len(out) >= k:
                break
        return np.array(out, dtype=np.int64)

    def _filter_mask(self, ev: np.ndarray, tf: TimeFilter | None) -> np.ndarray:
        if tf is None or tf.is_open:
            return np.ones(len(ev), dtype=bool)
        st = self._index.store
        return temporal_mask(st.t_lo[ev], st.t_hi[ev], tf.begin_time, tf.end_time, tf.type)

    def _cap(self, rows: np.ndarray, sims: np.ndarray, ref_row: int | None, n: int) -> np.ndarray:
        """The ``n`` best triples by ``cosine + w_ref * related`` (the re-rank's candidate cap)."""
        if len(rows) <= n:
            return rows
        prior = sims[rows] + self.w_ref * self._related(rows, ref_row)
        return np.sort(rows[np.argpartition(-prior, n - 1)[:n]])

    def _rank_rows(self, rows: np.ndarray, sims: np.ndarray, qv: np.ndarray, ti: TimeIntent,
                   window: tuple[int, int] | None, tf: TimeFilter | None, k: int, *,
                   bonus: np.ndarray | None = None, ecos: np.ndarray | None = None,
                   ref: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Score every event of triple ``rows`` and pick ``k``: (events, scores, cosines)."""
        ref_row = None if ref is None else ref[1]
        t_ref = None if ref is None else ref[0]
        related = self._related(rows, ref_row)
        if related.any():
            bonus = self.w_ref * related + (0.0 if bonus is None else bonus)
        ev, pos = self._expand(rows)
        keep = self._filter_mask(ev, tf)
        if ref_row is not None:  # of the anchor event's triple keep the anchor event only
            st = self._index.store
            in_ref = rows[pos] == ref_row
            keep &= ~in_ref | (st.t_lo[ev] == t_ref)
        ev, pos = ev[keep], pos[keep]
        if self.time_mode == "dated":
            cos = ecos[ev] if ecos is not None else self._index.event_vectors()[ev] @ qv
        else:
            cos = sims[rows][pos]
        score = self._score(ev, cos, ti, window, t_ref, group=pos)
        if bonus is not None:
            score = score + bonus[pos]
        pick = self._select(ev, self._index.triple_of_event[ev], score, k)
        return ev[pick], score[pick], np.asarray(cos)[pick]

    # ------------------------------------------------------------------- steps
    def retrieve_event_ids(self, query: str, *, time_filter: Any = None
                           ) -> tuple[np.ndarray, dict[str, Any]]:
        """Ranked event ids and per-event details (``score``, ``cosine``, ``ppr``, anchors, seeds).

        With a time filter, anchors are drawn from the best triples over all time first; when
        fewer than ``similarity_top_k`` events come out (a short window), again from the best
        triples with an event in the window, as ``VectorIndexRetriever`` with filters gives.
        """
        if not isinstance(query, str) or not query.strip():
            raise ConfigError(f"query must be a non-empty string, got {query!r}")
        tf = as_time_filter(time_filter) or self.time_filter
        ids, info = self._retrieve_ids(query, tf, in_window=False)
        if tf is not None and not tf.is_open and len(ids) < self.similarity_top_k:
            ids, info = self._retrieve_ids(query, tf, in_window=True)
        return ids, info

    def _retrieve_ids(self, query: str, tf: TimeFilter | None, *, in_window: bool
                      ) -> tuple[np.ndarray, dict[str, Any]]:
        idx = self._index
        k1 = self.similarity_top_k
        ti = time_intent(query) if self.time_mode == "cue" else TimeIntent()
        texts = [query] + ([ti.anchor, ti.reference_query or ti.anchor] if ti.anchor else [])
        vecs = idx.encoder.encode(texts)
        qv = vecs[0]
        sims = idx.vectors.vectors @ qv  # exact cosine to every triple (one pass, as in App. H)
        n_pool = min(self.anchor_pool or 4 * k1, len(sims))
        pool_sims = sims
        in_time = None
        if in_window and tf is not None and not tf.is_open:
            # anchors among the triples with an event in the filter's window: a pool drawn over all
            # time and filtered after left nothing for a short window
            in_time, ok_rows = idx.triples_in_time(**tf.as_kwargs())
            pool_sims = np.full_like(sims, -np.inf)
            pool_sims[ok_rows] = sims[ok_rows]
            n_pool = max(1, min(n_pool, len(ok_rows)))
        if self.time_mode == "dated":
            # the paper's pass: cosine to every dated event, anchors from the best events' triples
            ecos = idx.event_vectors() @ qv
            if in_time is not None:
                keep = np.zeros(len(ecos), dtype=bool)
                keep[in_time] = True
                ecos = np.where(keep, ecos, -np.inf)
            top_ev = np.argpartition(-ecos, min(n_pool * 4, len(ecos) - 1))[: n_pool * 4]
            rows = np.unique(idx.triple_of_event[top_ev])
        else:
            rows = np.argpartition(-pool_sims, n_pool - 1)[:n_pool]
            if in_time is not None:
                rows = rows[np.isfinite(pool_sims[rows])]
        rows = rows[np.lexsort((rows, -sims[rows]))]
        if self.time_mode != "dated":
            ecos = None
        ref = self._reference_time(vecs[1], vecs[2], ti.main) if ti.anchor else None
        t_ref = None if ref is None else ref[0]
        window = self._window(ti, t_ref)
        anchors, a_score, a_cos = self._rank_rows(rows, sims, qv, ti, window, tf, k1, ecos=ecos, ref=ref)
        info: dict[str, Any] = {"anchors": anchors.tolist(), "seeds": [], "top_rules": [], "ppr": {},
                                "intent": ti, "window": window, "reference_time": t_ref,
                                "reference_triple": None if ref is None else ref[1]}
        rg = self.rule_graph
        if not self.use_rule_graph or rg is None or len(anchors) == 0:
            if self.dense_pool:
                n = min(self.dense_pool, len(sims))
                drows = np.argpartition(-pool_sims, n - 1)[:n]
                if in_time is not None:
                    drows = drows[np.isfinite(pool_sims[drows])]
                if ref is not None:
                    drows = np.union1d(drows, [ref[1]])
                anchors, a_score, a_cos = self._rank_rows(drows, sims, qv, ti, window, tf, k1, ecos=ecos, ref=ref)
            info.update(score=dict(zip(anchors.tolist(), a_score.tolist())),
                        cosine=dict(zip(anchors.tolist(), a_cos.tolist())))
            return anchors, info
        seed_events = anchors
        if ref is not None:  # the anchor event named by the question seeds the walk too (rank 1)
            ref_evs = idx.events_of_triples(np.asarray([ref[1]]))[0]
            ref_ev = int(ref_evs[np.argmin(idx.store.t_lo[ref_evs])])
            seed_events = np.concatenate([[ref_ev], anchors[anchors != ref_ev]])
        seeds, gamma = rg.personalization(seed_events.tolist(), theta=self.theta, beta=self.beta, tau=self.tau,
                                          uniform=self.personalization == "uniform")
        if len(seeds) == 0:  # App. G: anchors outside the rule graph pass straight through
            info.update(score=dict(zip(anchors.tolist(), a_score.tolist())),
                        cosine=dict(zip(anchors.tolist(), a_cos.tolist())), passed_through=anchors.tolist())
            return anchors, info
        direction = ti.direction if self.directed else "both"
        pi = rg.ppr(seeds, gamma, alpha=self.alpha, tol=self.tol, direction=direction)
        nz = np.flatnonzero(pi)
        top = nz[np.lexsort((nz, -pi[nz]))][: self.k2]
        ptr, node_triples = self._triple_tables()
        mask = np.zeros(len(sims), dtype=bool)
        for u in top.tolist():
            mask[node_triples[ptr[u]: ptr[u + 1]]] = True
        a_tri = idx.triple_of_event[anchors]
        mask[a_tri] = True
        cand = np.flatnonzero(mask)
        n_cand = len(cand)
        # the re-rank scores the events of the best candidate triples (and the anchors')
        cand = np.union1d(self._cap(cand, pool_sims, None if ref is None else ref[1], self.rerank_pool), a_tri)
        node_rank = np.zeros(rg.n_nodes)
        node_rank[top] = pi[top]
        t_ppr = rg.max_over_event_nodes(idx.triples[cand], node_rank)
        bonus = None
        if self.ppr_weight and t_ppr.max() > 0:
            bonus = self.ppr_weight * t_ppr / t_ppr.max()
        ids, score, cos = self._rank_rows(cand, sims, qv, ti, window, tf, k1, bonus=bonus, ecos=ecos, ref=ref)
        tri_ppr = dict(zip(cand.tolist(), t_ppr.tolist()))
        keys = ids.tolist()
        info.update(seeds=seeds.tolist(), top_rules=top.tolist(), direction=direction,
                    score=dict(zip(keys, score.tolist())), cosine=dict(zip(keys, cos.tolist())),
                    ppr={e: tri_ppr.get(int(idx.triple_of_event[e]), 0.0) for e in keys},
                    n_candidate_triples=int(n_cand))
        return ids, info

    def _triple_tables(self) -> tuple[np.ndarray, np.ndarray]:
        """CSR rule node -> distinct triples it supports (built once per retriever)."""
        if self._node_triples is None:
            rg, idx = self.rule_graph, self._index
            assert rg is not None, "only called with a rule graph"
            counts = rg.support_ptr[1:] - rg.support_ptr[:-1]
            node_of = np.repeat(np.arange(rg.n_nodes, dtype=np.int64), counts)
            tri = idx.triple_of_event[rg.support_idx]
            key = np.unique(node_of * len(idx.triples) + tri)
            nodes, triples = np.divmod(key, len(idx.triples))
            ptr = np.zeros(rg.n_nodes + 1, dtype=np.int64)
            np.add.at(ptr, nodes + 1, 1)
            self._node_triples = (np.cumsum(ptr), triples)
        return self._node_triples

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        ids, info = self.retrieve_event_ids(query_bundle.query_str, time_filter=self.time_filter_for(query_bundle))
        rg = self.rule_graph
        out = []
        for e in ids.tolist():
            nodes = rg.nodes_of_events([e])[0].tolist() if rg is not None else []
            out.append(event_node(self._index, e, info["score"].get(e, 0.0), cosine=info["cosine"].get(e, 0.0),
                                  ppr=info["ppr"].get(e, 0.0), rule_nodes=nodes))
        return out


#: derived (index, rule graph) pairs of this process, by (store fingerprint, encoder); see StarRAGPGRetriever
_DERIVED: OrderedDict[tuple[str, str], tuple[EventIndex, RuleGraph]] = OrderedDict()
_DERIVED_MAX = 4
_DERIVED_LOCK = threading.Lock()


def derived_index_dir(fingerprint: str, encoder_key: str) -> Path:
    """Where :class:`StarRAGPGRetriever` keeps the index it derives from a graph store:
    ``$CHRONORAG_HOME/pg-derived/<store fingerprint>-<encoder>`` (``~/.cache/chronorag`` by default)."""
    home = Path(os.environ.get("CHRONORAG_HOME", Path.home() / ".cache" / "chronorag"))
    return home / "pg-derived" / f"{fingerprint}-{re.sub(r'[^A-Za-z0-9._-]+', '_', encoder_key)}"


def _encoder_key(encoder: Any) -> str:
    if isinstance(encoder, str):
        return encoder
    return str(getattr(encoder, "model_id", None) or type(encoder).__name__)


def _load_derived(directory: Path, fingerprint: str) -> tuple[EventIndex, RuleGraph] | None:
    """A previously derived index and rule graph in ``directory`` for this store, else ``None``."""
    from chronorag.errors import ChronoRAGError

    if not (directory / "index.json").exists():
        return None
    try:
        index = EventIndex.load(directory)
        rg = RuleGraph.load(directory)
    except (ChronoRAGError, OSError, ValueError):
        return None  # stale or partial: rebuilt by the caller
    if index.store.fingerprint() != fingerprint or rg.store_fingerprint not in (None, fingerprint):
        return None
    return index, rg


class StarRAGPGRetriever(TemporalPGRetrieverMixin, CustomPGRetriever):
    """STAR-RAG as a sub-retriever of a LlamaIndex ``PropertyGraphIndex``, over the graph it is attached to.

    Contract: the events come from the attached ``graph_store``.

    - Without ``index_dir`` the events are read back from the graph store
      (:func:`~chronorag.integrations.property_graph.store_from_property_graph`),
      embedded with ``encoder`` and given a rule graph. The derived index is **cached by
      the store's fingerprint** (and the encoder): in this process (the next
      construction over the same events reuses it) and on disk, in ``work_dir`` or, by
      default, :func:`derived_index_dir` under ``$CHRONORAG_HOME``; a later process
      loads it instead of re-embedding. Nothing is written to temporary directories.
      ``cache=False`` rebuilds (into ``work_dir`` or the cache directory). An empty
      graph store raises ``ValueError``.
    - With ``index_dir`` (a prebuilt index with a rule graph, for graphs too large to
      read back per process) the index is used as a cache of the same events: with
      ``check_store=True`` (default) the graph store must hold as many chronorag events as
      the index, else ``ValueError``; ``check_store=False`` skips the read-back for large
      database-backed stores (the caller vouches the two match).

    Other keyword arguments (``similarity_top_k``, ``time_filter``/``filters``, ...) go to
    :class:`StarRAGRetriever`. As on every chronorag retriever, ``retrieve(q,
    time_filter=...)`` filters one query; nodes carry scores, and their metadata is hidden
    from the LLM. Each query emits one retrieval event (the wrapped retriever's
    ``_retrieve`` runs, not its ``retrieve``).
    """

    def init(self, index_dir: str | os.PathLike[str] | None = None, encoder: Any = "minilm",
             work_dir: str | os.PathLike[str] | None = None, check_store: bool = True, cache: bool = True,
             **kwargs: Any) -> None:
        from chronorag.integrations.property_graph import store_from_property_graph

        self.derived_from_cache = False
        if index_dir is not None:
            index = EventIndex.load(index_dir)
            if check_store:
                n = len(store_from_property_graph(self.graph_store))
                if n != len(index.store):
                    raise ConfigError(
                        f"the attached graph store holds {n} chronorag events but {index_dir} indexes "
                        f"{len(index.store)}; export the same events (export_to_property_graph), build "
                        "without index_dir, or pass check_store=False if the store cannot be read back")
            rg = (RuleGraph.load(getattr(index, "_files", None) or index_dir)
                  if kwargs.get("use_rule_graph", True) else None)
        else:
            store = store_from_property_graph(self.graph_store)
            if len(store) == 0:
                raise ConfigError("the attached property graph holds no chronorag events; export them first "
                                 "(chronorag.integrations.property_graph.export_to_property_graph)")
            index, rg = self._derive(store, encoder, work_dir, cache)
        self._star = self._temporal = StarRAGRetriever(index, rg, **kwargs)

    def _derive(self, store: Any, encoder: Any, work_dir: Any, cache: bool) -> tuple[EventIndex, RuleGraph]:
        from chronorag.graphs.event_index import build_event_index
        from chronorag.retrievers.star_rag.rule_graph import build_rule_graph

        fp, ek = store.fingerprint(), _encoder_key(encoder)
        out = Path(work_dir) if work_dir is not None else derived_index_dir(fp, ek)
        key = (fp, ek)
        with _DERIVED_LOCK:
            if cache:
                hit = _DERIVED.get(key)
                if hit is None:
                    hit = _load_derived(out, fp)
                if hit is not None:
                    self.derived_from_cache = True
                    _DERIVED[key] = hit
                    _DERIVED.move_to_end(key)
                    return hit
            out.parent.mkdir(parents=True, exist_ok=True)
            index = build_event_index(store, out, encoder=encoder, progress=False)
            rg = build_rule_graph(store)
            rg.save(out)
            _DERIVED[key] = (index, rg)
            while len(_DERIVED) > _DERIVED_MAX:
                _DERIVED.popitem(last=False)
            return index, rg


def _stems(text: str) -> set[str]:
    """Crude stems (the first five letters) of the words of four letters or more in ``text``."""
    return {w[:5] for w in re.findall(r"[a-z]{4,}", text.lower())}
