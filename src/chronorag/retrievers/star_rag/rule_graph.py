"""STAR-RAG rule graph: entity labels, rule nodes, temporal edges selected by MDL, seeded PPR.

Build (:func:`build_rule_graph`)
--------------------------------
1. **Entity labels** (Alg. 2). Each entity's relation set (as subject or object) is a
   transaction; Apriori (mlxtend) mines frequent relation subsets of length
   <= ``max_len`` (3) at ``min_support``. Itemsets are sorted most specific first
   (longer, then more frequent, then lexicographic) and numbered (TypeIDs). An
   entity's labels are the first ``k_type`` itemsets contained in its relation set;
   with none, its own relation set becomes a new type.
2. **Rule nodes** ``<c_s, r, c_o>`` for every label pair of every event; an event
   maps to up to ``k_type**2`` nodes and is in each node's support.
3. **Candidate edges**: node pairs at Hamming distance <= 1 whose supports hold event
   pairs at event-Hamming <= 2 (the events share at least two of subject, relation,
   object) within ``window_days`` of each other (App. H: pairs are formed inside a
   local time window, at most ``max_pairs_per_event`` following events per group,
   never all pairs). Each such pair adds its span ``|t' - t|`` (days) to ``T_uv``.
4. **MDL selection** (Eqs. 3-7, App. B). Edges are examined in a fixed order
   (``|T_uv|`` descending, then node ids) and kept when they lower the total
   description length; passes repeat until a pass keeps nothing new. With the edge,
   its event pairs cost ``L_cov = log2(|supp u| |supp v| / |T_uv|)`` (Eq. 5) plus
   ``L_time`` (Eq. 6, exponential MLE over spans of ``|t'-t| + 1`` days, in bits),
   plus the model cost of App. B (node codes ``-log2 p_s - log2 p_r - log2 p_o`` for
   new nodes, edge codes ``-log2 p_V(u) - log2 p_V(v)`` from endpoint degrees).
   Without it, the same pairs are encoded with no model: ``|T_uv| * (log2(|supp u|
   |supp v|) + log2(window_days + 1))`` bits. The paper leaves this "without"
   cost implicit; with it, Eq. 7's ``delta L < 0`` selects edges that explain many,
   temporally concentrated event pairs. Every edge's delta is kept for inspection.

Query (:meth:`RuleGraph.personalization`, :meth:`RuleGraph.ppr`)
----------------------------------------------------------------
The personalization vector of App. C (``theta=0.6, beta=0.7, tau=1/|U_seed|``) over
the rule nodes supporting the anchors, diffused by personalized PageRank
(``alpha=0.2``, power iteration to ``1e-5``, scipy.sparse).
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from chronorag.errors import ConfigError, IndexFormatError, OutOfRangeError, missing_extra
from chronorag.graphs.store import TemporalEventStore

__all__ = ["DIRECTIONS", "RuleGraph", "RuleGraphConfig", "build_rule_graph", "entity_labels"]

DIRECTIONS = ("both", "forward", "backward")

_DAY = 1440
RULE_FORMAT_VERSION = 2  # 2: directed chain-edge counts (edge_fwd)
_R_BASE = 1 << 16  # node key = (a_s * _R_BASE + r) * _T_BASE + a_o
_T_BASE = 1 << 22


@dataclass(frozen=True)
class RuleGraphConfig:
    """Parameters of the rule-graph build (defaults from the paper where it gives them)."""

    min_support: float = 0.02
    max_len: int = 3
    k_type: int = 2
    window_days: int = 30
    max_pairs_per_event: int = 8

    def __post_init__(self) -> None:
        if not 0 < self.min_support <= 1:
            raise ConfigError(f"min_support must be in (0, 1], got {self.min_support}")
        for name in ("max_len", "k_type", "window_days", "max_pairs_per_event"):
            if int(getattr(self, name)) < 1:
                raise ConfigError(f"{name} must be >= 1, got {getattr(self, name)}")


def entity_labels(
    store: TemporalEventStore, *, min_support: float = 0.02, max_len: int = 3, k_type: int = 2
) -> tuple[list[list[int]], list[tuple[int, ...]]]:
    """Alg. 2: labels (TypeIDs) per entity and the relation itemset of each TypeID.

    Returns
    -------
    labels : list of list of int
        ``labels[e]`` are entity ``e``'s TypeIDs (at most ``k_type``).
    types : list of tuple of int
        ``types[t]`` is the sorted relation-id itemset of TypeID ``t``.
    """
    try:
        import pandas as pd
        from mlxtend.frequent_patterns import apriori
    except ImportError as exc:  # mlxtend is a core dependency; say so if it is broken
        raise missing_extra("mlxtend", "cpu") from exc
    n_ent, n_rel = len(store.entities), len(store.relations)
    onehot = np.zeros((n_ent, n_rel), dtype=bool)
    onehot[store.subject, store.relation] = True
    onehot[store.object, store.relation] = True
    df = pd.DataFrame(onehot, columns=list(range(n_rel)))
    freq = apriori(df, min_support=min_support, use_colnames=True, max_len=max_len)
    items = [tuple(sorted(int(x) for x in s)) for s in freq["itemsets"]]
    sup = freq["support"].to_numpy()
    order = sorted(range(len(items)), key=lambda i: (-len(items[i]), -sup[i], items[i]))
    types: list[tuple[int, ...]] = [items[i] for i in order]
    type_id = {t: i for i, t in enumerate(types)}
    # membership: which entities contain each itemset (vectorised per itemset)
    contains = np.zeros((n_ent, len(types)), dtype=bool) if types else np.zeros((n_ent, 0), bool)
    for t, its in enumerate(types):
        contains[:, t] = onehot[:, list(its)].all(axis=1)
    labels: list[list[int]] = []
    for e in range(n_ent):
        hits = np.flatnonzero(contains[e])[:k_type].tolist()
        if not hits:
            own = tuple(np.flatnonzero(onehot[e]).tolist())
            if own not in type_id:
                type_id[own] = len(types)
                types.append(own)
            hits = [type_id[own]]
        labels.append(hits)
    return labels, types


@dataclass
class RuleGraph:
    """A built rule graph (see the module docstring).

    Attributes
    ----------
    node_s, node_r, node_o : numpy.ndarray
        Components ``<c_s, r, c_o>`` of each candidate rule node.
    support_ptr, support_idx : numpy.ndarray
        CSR of node -> supporting event ids.
    event_ptr, event_nodes : numpy.ndarray
        CSR of event -> its rule nodes.
    edge_u, edge_v, edge_n, edge_sum, edge_delta : numpy.ndarray
        Candidate edges (``u < v``), ``|T_uv|``, sum of spans (days), and the MDL delta
        at the time each was examined (``nan`` if never examined).
    edge_fwd : numpy.ndarray
        Direction of each edge's event pairs (App. B's directed *chain* edges): how many
        of its ``|T_uv|`` pairs have the ``u`` event first (same-day pairs count 1/2);
        ``edge_n - edge_fwd`` pairs have the ``v`` event first.
    selected : numpy.ndarray
        Boolean mask over candidate edges kept by MDL.
    labels, types : list
        Entity TypeIDs and the relation itemset of each TypeID.
    """

    node_s: np.ndarray
    node_r: np.ndarray
    node_o: np.ndarray
    support_ptr: np.ndarray
    support_idx: np.ndarray
    event_ptr: np.ndarray
    event_nodes: np.ndarray
    edge_u: np.ndarray
    edge_v: np.ndarray
    edge_n: np.ndarray
    edge_sum: np.ndarray
    edge_fwd: np.ndarray
    edge_delta: np.ndarray
    selected: np.ndarray
    labels: list[list[int]]
    types: list[tuple[int, ...]]
    config: RuleGraphConfig = field(default_factory=RuleGraphConfig)
    stats: dict[str, Any] = field(default_factory=dict)
    store_fingerprint: str | None = None
    _transition: dict[str, Any] = field(default_factory=dict)  # caches, cleared by add_events

    # ------------------------------------------------------------- structure
    @property
    def n_nodes(self) -> int:
        """Number of candidate rule nodes."""
        return int(len(self.node_s))

    @property
    def in_graph(self) -> np.ndarray:
        """Boolean mask of nodes touched by a selected edge (the rule graph's nodes)."""
        m = self._transition.get("in_graph")
        if m is None:
            m = np.zeros(self.n_nodes, dtype=bool)
            m[self.edge_u[self.selected]] = True
            m[self.edge_v[self.selected]] = True
            self._transition["in_graph"] = m
        return m

    def support(self, node: int) -> np.ndarray:
        """Event ids supporting rule node ``node``."""
        if not 0 <= node < self.n_nodes:
            raise OutOfRangeError(f"rule node {node} out of range 0..{self.n_nodes - 1}")
        return self.support_idx[self.support_ptr[node]: self.support_ptr[node + 1]]

    def nodes_of_events(self, events: Sequence[int]) -> list[np.ndarray]:
        """For each event id, the rule nodes it maps to."""
        out = []
        for e in events:
            e = int(e)
            if not 0 <= e < len(self.event_ptr) - 1:
                raise OutOfRangeError(f"event id {e} out of range")
            out.append(self.event_nodes[self.event_ptr[e]: self.event_ptr[e + 1]])
        return out

    def max_over_event_nodes(self, events: np.ndarray, node_values: np.ndarray) -> np.ndarray:
        """For each event, the largest ``node_values`` over its rule nodes (0 for none), vectorised."""
        ev = np.asarray(events, dtype=np.int64)
        start, stop = self.event_ptr[ev], self.event_ptr[ev + 1]
        lens = stop - start
        out = np.zeros(len(ev))
        has = lens > 0
        if not has.any():
            return out
        s, ln = start[has], lens[has]
        flat = np.repeat(s - np.concatenate([[0], np.cumsum(ln)[:-1]]), ln) + np.arange(ln.sum())
        vals = node_values[self.event_nodes[flat]]
        out[has] = np.maximum.reduceat(vals, np.concatenate([[0], np.cumsum(ln)[:-1]]))
        return out

    def describe_node(self, node: int, store: TemporalEventStore) -> str:
        """``"<T3, Criticize or denounce, T17>"`` with support size."""
        return (f"<T{self.node_s[node]}, {store.relations[self.node_r[node]]}, T{self.node_o[node]}> "
                f"(support {self.support_ptr[node + 1] - self.support_ptr[node]})")

    def selected_edges(self) -> list[dict[str, Any]]:
        """The kept edges with their statistics and MDL delta, best (most negative) first."""
        idx = np.flatnonzero(self.selected)
        idx = idx[np.argsort(self.edge_delta[idx], kind="stable")]
        return [{"u": int(self.edge_u[i]), "v": int(self.edge_v[i]), "n_spans": int(self.edge_n[i]),
                 "mean_span_days": float(self.edge_sum[i] / self.edge_n[i]),
                 "delta_bits": float(self.edge_delta[i])} for i in idx]

    # ------------------------------------------------------------------- PPR
    def transition(self, direction: str = "both") -> sp.csr_matrix:
        """Row-normalised transition matrix over the selected edges.

        Parameters
        ----------
        direction : {"both", "forward", "backward"}
            ``"both"``: undirected, weight ``|T_uv|`` each way. ``"forward"``: a step
            ``u -> v`` is weighted by the event pairs where the ``u`` event came first
            (follow the chain edges forward in time: "what happened after");
            ``"backward"``: by the pairs where it came second ("what happened before").
            Same-day pairs count half each way.
        """
        if direction not in DIRECTIONS:
            raise ConfigError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
        if direction not in self._transition:
            s = self.selected
            u, v = self.edge_u[s], self.edge_v[s]
            n_uv = self.edge_n[s].astype(np.float64)
            f = self.edge_fwd[s].astype(np.float64)
            if direction == "both":
                w_uv, w_vu = n_uv, n_uv
            elif direction == "forward":
                w_uv, w_vu = f, n_uv - f
            else:
                w_uv, w_vu = n_uv - f, f
            n = self.n_nodes
            a = sp.coo_matrix((np.concatenate([w_uv, w_vu]), (np.concatenate([u, v]), np.concatenate([v, u]))),
                              shape=(n, n)).tocsr()
            a.eliminate_zeros()
            deg = np.asarray(a.sum(axis=1)).ravel()
            inv = np.divide(1.0, deg, out=np.zeros_like(deg), where=deg > 0)
            self._transition[direction] = (sp.diags(inv) @ a).tocsr()
        return self._transition[direction]

    def personalization(
        self, anchors: Sequence[int], *, theta: float = 0.6, beta: float = 0.7,
        tau: float | None = None, uniform: bool = False,
    ) -> tuple[np.ndarray, np.ndarray]:
        """App. C: the seeded personalization vector.

        Parameters
        ----------
        anchors : sequence of int
            Anchor event ids, best first.
        theta, beta, tau : float
            Mixture weight, rank discount, Dirichlet smoothing (default ``1/|U_seed|``).
        uniform : bool
            The paper's ablation: uniform mass over the seed nodes.

        Returns
        -------
        seeds : numpy.ndarray
            ``U_seed``: rule-graph nodes supporting at least one anchor.
        gamma : numpy.ndarray
            Their weights (sums to 1).
        """
        if not 0 <= theta <= 1 or not 0 < beta < 1:
            raise ConfigError(f"need 0 <= theta <= 1 and 0 < beta < 1, got theta={theta}, beta={beta}")
        graph_nodes = self.in_graph
        hits: dict[int, float] = {}
        for j, nodes in enumerate(self.nodes_of_events(anchors)):
            for u in nodes:
                if graph_nodes[u]:
                    hits[int(u)] = hits.get(int(u), 0.0) + beta**j
        if not hits:
            return np.zeros(0, np.int64), np.zeros(0)
        seeds = np.array(sorted(hits), dtype=np.int64)
        if uniform:
            return seeds, np.full(len(seeds), 1.0 / len(seeds))
        c = (self.support_ptr[seeds + 1] - self.support_ptr[seeds]).astype(np.float64)
        p = np.array([hits[int(u)] for u in seeds])
        s = (1 - theta) * c / c.sum() + theta * p / p.sum()
        t = 1.0 / len(seeds) if tau is None else tau
        if t <= 0:
            raise ConfigError(f"tau must be > 0, got {t}")
        g = s + t
        return seeds, g / g.sum()

    def ppr(self, seeds: np.ndarray, gamma: np.ndarray, *, alpha: float = 0.2, tol: float = 1e-5,
            max_iter: int = 200, direction: str = "both") -> np.ndarray:
        """Personalized PageRank ``pi = alpha*gamma + (1-alpha) * pi A`` by power iteration.

        Mass at nodes without (outgoing) edges returns to ``gamma`` (so ``pi`` sums to 1).
        ``direction`` picks the transition matrix (see :meth:`transition`).
        """
        if not 0 < alpha <= 1:
            raise ConfigError(f"alpha must be in (0, 1], got {alpha}")
        n = self.n_nodes
        seeds = np.asarray(seeds, dtype=np.int64)
        gamma = np.asarray(gamma, dtype=np.float64)
        if len(seeds) != len(gamma) or gamma.sum() <= 0:
            raise ConfigError("empty personalization vector (or seeds and gamma of different lengths)")
        # iterate on the nodes the walk can reach: the rule graph's nodes plus the seeds
        key = f"compact:{direction}"
        if key not in self._transition:
            nodes = np.flatnonzero(self.in_graph)
            at = self.transition(direction)[nodes][:, nodes].T.tocsr()
            self._transition[key] = (nodes, at)
        nodes, at = self._transition[key]
        extra = np.unique(seeds[~self.in_graph[seeds]])
        if len(extra):  # seeds outside the graph keep their mass (no edges); handled as dangling
            nodes = np.concatenate([nodes, extra])
            at = sp.block_diag([at, sp.csr_matrix((len(extra), len(extra)))]).tocsr()
        pos = np.searchsorted(nodes[: len(nodes) - len(extra)], seeds)
        if len(extra):
            where = {int(u): i for i, u in enumerate(nodes)}
            pos = np.array([where[int(u)] for u in seeds], dtype=np.int64)
        g = np.zeros(len(nodes))
        np.add.at(g, pos, gamma)
        g /= g.sum()
        pi = g.copy()
        for _ in range(max_iter):
            spread = at @ pi
            lost = pi.sum() - spread.sum()  # mass sitting on dangling nodes
            new = alpha * g + (1 - alpha) * (spread + lost * g)
            if np.abs(new - pi).sum() < tol:
                pi = new
                break
            pi = new
        out = np.zeros(n)
        out[nodes] = pi
        return out

    # ------------------------------------------------------ incremental update
    def add_events(self, store: TemporalEventStore, start: int) -> dict[str, Any]:
        """Fold the events ``start..len(store)-1`` of ``store`` into this rule graph in place.

        ``store`` is the grown store (e.g. ``old.concat(new)``): events before ``start``
        are the ones this graph was built on, with unchanged ids. Only what the new
        events touch is recomputed: labels of *new* entities (existing labels are
        kept), the new events' rule nodes and supports, event pairs involving a new
        event, the spans of the candidate edges they feed, and the MDL decision for
        those edges (edges already selected stay). Returns timing and count details.

        Differences from a rebuild: existing entities keep their labels and Apriori is
        not re-run; old-old event pairs are not re-formed.
        """
        n_old = len(self.event_ptr) - 1
        if start != n_old:
            raise ConfigError(f"start must equal the number of events already in the graph ({n_old}), got {start}")
        if len(store) < start:
            raise ConfigError(f"store has {len(store)} events, fewer than start={start}")
        t0 = time.perf_counter()
        new = np.arange(start, len(store), dtype=np.int64)
        if len(new) == 0:
            return {"new_events": 0}
        cfg = self.config
        # labels for entities first seen now (against the existing types)
        n_known = len(self.labels)
        n_ent = len(store.entities)
        if n_ent > n_known:
            fresh = np.arange(n_known, n_ent)
            rel = np.zeros((len(fresh), len(store.relations)), dtype=bool)
            for col in (store.subject, store.object):
                m = col[new] >= n_known
                rel[col[new][m] - n_known, store.relation[new][m]] = True
            type_id = {t: i for i, t in enumerate(self.types)}
            for k in range(len(fresh)):
                have = set(np.flatnonzero(rel[k]).tolist())
                hits = [i for i, t in enumerate(self.types) if len(t) <= cfg.max_len and set(t) <= have][: cfg.k_type]
                if not hits:
                    own = tuple(sorted(have))
                    if own not in type_id:
                        type_id[own] = len(self.types)
                        self.types.append(own)
                    hits = [type_id[own]]
                self.labels.append(hits)
        # rule nodes of the new events
        pos, keys = _event_nodes(store, self.labels, new)
        old_keys = (self.node_s * _R_BASE + self.node_r) * _T_BASE + self.node_o
        order = np.argsort(old_keys)
        at = np.searchsorted(old_keys[order], keys)
        found = (at < len(old_keys)) & (old_keys[order][np.minimum(at, len(old_keys) - 1)] == keys)
        node_ids = np.empty(len(keys), dtype=np.int64)
        node_ids[found] = order[at[found]]
        new_keys, inv = np.unique(keys[~found], return_inverse=True)
        n_nodes_old = self.n_nodes
        node_ids[~found] = n_nodes_old + inv
        ns, rest = np.divmod(new_keys, _R_BASE * _T_BASE)
        nr, no = np.divmod(rest, _T_BASE)
        self.node_s = np.concatenate([self.node_s, ns])
        self.node_r = np.concatenate([self.node_r, nr])
        self.node_o = np.concatenate([self.node_o, no])
        n_nodes = self.n_nodes
        # supports and event -> nodes
        counts = self.support_ptr[1:] - self.support_ptr[:-1]
        all_nodes = np.concatenate([np.repeat(np.arange(n_nodes_old), counts), node_ids])
        all_events = np.concatenate([self.support_idx, new[pos]])
        self.support_ptr, self.support_idx = _csr(all_nodes, all_events, n_nodes)
        ev_ptr_new, ev_nodes_new = _csr(pos, node_ids, len(new))
        self.event_ptr = np.concatenate([self.event_ptr, self.event_ptr[-1] + ev_ptr_new[1:]])
        self.event_nodes = np.concatenate([self.event_nodes, ev_nodes_new])
        # event pairs involving a new event, within the groups the new events touch
        i, j, d = _event_pairs(store, cfg, first_new=start)
        ek, en, es, ef = _edge_stats(self.event_nodes, self.event_ptr, i, j, d,
                                     (self.node_s, self.node_r, self.node_o), n_nodes)
        # merge into the candidate edges (re-key old edges by the new node count)
        old_k = self.edge_u * n_nodes + self.edge_v
        mk, mn, ms = _aggregate(np.concatenate([old_k, ek]), np.concatenate([self.edge_sum, es]),
                                np.concatenate([self.edge_n, en]).astype(np.float64))
        _, _, mf = _aggregate(np.concatenate([old_k, ek]), np.concatenate([self.edge_fwd, ef]))
        pos_old = np.searchsorted(mk, old_k)
        selected = np.zeros(len(mk), dtype=bool)
        selected[pos_old] = self.selected
        delta = np.full(len(mk), np.nan)
        delta[pos_old] = self.edge_delta
        examine = np.searchsorted(mk, np.unique(ek))
        self.edge_u, self.edge_v = np.divmod(mk, n_nodes)
        self.edge_n, self.edge_sum, self.edge_fwd = mn, ms, mf
        supp = self.support_ptr[1:] - self.support_ptr[:-1]
        node_of_pair = np.repeat(np.arange(n_nodes), supp)
        node_bits = _node_bits(self.node_s, self.node_r, self.node_o, node_of_pair, store, len(self.types))
        self.selected, self.edge_delta, _ = _mdl_select(
            self.edge_u, self.edge_v, self.edge_n, self.edge_sum, supp, node_bits, cfg.window_days,
            selected=selected, delta=delta, examine=examine)
        self._transition = {}
        self.store_fingerprint = store.fingerprint()
        info = {"new_events": int(len(new)), "new_rule_nodes": int(n_nodes - n_nodes_old),
                "new_event_pairs": int(len(i)), "edges_examined": int(len(examine)),
                "seconds": round(time.perf_counter() - t0, 3)}
        self.stats.update(events=len(store), rule_nodes=n_nodes, candidate_edges=int(len(mk)),
                          selected_edges=int(self.selected.sum()), graph_nodes=int(self.in_graph.sum()),
                          last_update=info)
        return info

    # ----------------------------------------------------------- persistence
    _ARRAYS = ("node_s", "node_r", "node_o", "support_ptr", "support_idx", "event_ptr", "event_nodes",
               "edge_u", "edge_v", "edge_n", "edge_sum", "edge_fwd", "edge_delta", "selected")

    def write(self, directory: str | os.PathLike[str]) -> None:
        """Write ``rule_graph.npz`` and ``rule_graph.json`` into an existing directory (not atomic)."""
        d = Path(directory)
        np.savez(d / "rule_graph.npz", **{k: getattr(self, k) for k in self._ARRAYS})
        meta = {"format": RULE_FORMAT_VERSION, "config": self.config.__dict__, "stats": self.stats,
                "labels": self.labels, "types": [list(t) for t in self.types],
                "store_fingerprint": self.store_fingerprint}
        (d / "rule_graph.json").write_text(json.dumps(meta), encoding="utf-8")

    def save(self, directory: str | os.PathLike[str]) -> None:
        """Add (or replace) the rule graph in the index directory ``directory``.

        Goes through :func:`chronorag.graphs.persist.write_index` with ``update=True``: the
        index's other files are kept, the switch is atomic, a failed save changes nothing.
        """
        from chronorag.graphs.persist import write_index

        with write_index(directory, update=True) as tmp:
            self.write(tmp)

    @classmethod
    def load(cls, directory: str | os.PathLike[str]) -> RuleGraph:
        """Load a rule graph written by :meth:`save` (no rebuild).

        Raises
        ------
        IndexFormatError
            When it is missing, damaged, of another format, or was built from another
            event store than the one in ``directory`` (fingerprint mismatch).
        """
        from chronorag.graphs.index_files import IndexFiles

        files = IndexFiles.open(directory)
        shown = files.shown
        if not files.has("rule_graph.json"):
            raise IndexFormatError(f"{shown} holds no rule graph (rule_graph.json); build it with `chronorag star-rag build {shown}`")
        meta = files.json("rule_graph.json")
        if not isinstance(meta, dict) or meta.get("format") != RULE_FORMAT_VERSION:
            fmt = meta.get("format") if isinstance(meta, dict) else None
            raise IndexFormatError(f"{shown}: rule graph format {fmt!r}, expected {RULE_FORMAT_VERSION}; "
                                   f"rebuild it with `chronorag star-rag build {shown}`")
        arrays = files.npz("rule_graph.npz", keys=cls._ARRAYS)
        fix = f"rebuild it with `chronorag star-rag build {shown}`"
        if files.has("store.json"):
            smeta = files.json("store.json")
            smeta = smeta if isinstance(smeta, dict) else {}
            have, want = meta.get("store_fingerprint"), smeta.get("fingerprint")
            if have is not None and want is not None and have != want:
                raise IndexFormatError(f"{shown}: the rule graph was built from another event store "
                                       f"(fingerprint {have}, this index's store is {want}); {fix}")
            if len(arrays["event_ptr"]) - 1 != smeta.get("n_events", len(arrays["event_ptr"]) - 1):
                raise IndexFormatError(f"{shown}: the rule graph covers {len(arrays['event_ptr']) - 1} "
                                       f"events, the index's store {smeta['n_events']}; {fix}")
        with files.parsing("rule_graph.json"):
            return cls(**arrays, labels=meta["labels"], types=[tuple(t) for t in meta["types"]],
                       config=RuleGraphConfig(**meta["config"]), stats=meta["stats"],
                       store_fingerprint=meta.get("store_fingerprint"))


# ---------------------------------------------------------------------------- build
def _event_nodes(store: TemporalEventStore, labels: list[list[int]], idx: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """For events ``idx``: (position in ``idx``, node key) pairs, key = (a_s*R + r)*T + a_o."""
    k = max(len(x) for x in labels)
    lab = np.full((len(labels), k), -1, dtype=np.int64)
    for e, ls in enumerate(labels):
        lab[e, : len(ls)] = ls
    n_rel = _R_BASE
    n_types = _T_BASE
    if len(store.relations) >= _R_BASE or len(labels) and lab.max() >= _T_BASE:
        raise ConfigError("too many relations or entity types for the rule-node key space")
    ls_, lo_ = lab[store.subject[idx]], lab[store.object[idx]]
    pos, keys = [], []
    for a in range(k):
        for b in range(k):
            ok = (ls_[:, a] >= 0) & (lo_[:, b] >= 0)
            p = np.flatnonzero(ok)
            pos.append(p)
            keys.append((ls_[p, a] * n_rel + store.relation[idx][p]) * n_types + lo_[p, b])
    return np.concatenate(pos), np.concatenate(keys)


def _event_pairs(store: TemporalEventStore, cfg: RuleGraphConfig, *, first_new: int | None = None
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Event pairs sharing >= 2 of (s, r, o), within the window, <= m successors per group.

    With ``first_new``, only the groups a new event (id >= ``first_new``) belongs to are
    paired and only pairs with a new event are kept: an incremental update's work grows
    with the update, not the store.
    """
    n_ent, n_rel = len(store.entities), len(store.relations)
    s, r, o = (store.subject.astype(np.int64), store.relation.astype(np.int64), store.object.astype(np.int64))
    t = store.t_lo // _DAY
    out_i, out_j, out_d = [], [], []
    for key in ((s * n_rel + r), (s * n_ent + o), (r * n_ent + o)):
        pool = (np.arange(len(store)) if first_new is None
                else np.flatnonzero(np.isin(key, np.unique(key[first_new:]))))
        order = pool[np.lexsort((t[pool], key[pool]))]
        ks, ts = key[order], t[order]
        for step in range(1, cfg.max_pairs_per_event + 1):
            a, b = order[:-step], order[step:]
            d = ts[step:] - ts[:-step]
            ok = (ks[:-step] == ks[step:]) & (d <= cfg.window_days)
            if not ok.any():  # later steps only span longer gaps
                break
            if first_new is not None:
                ok &= (a >= first_new) | (b >= first_new)
            out_i.append(a[ok])
            out_j.append(b[ok])
            out_d.append(d[ok])
    if not out_i:
        z = np.zeros(0, np.int64)
        return z, z, z
    i, j, d = np.concatenate(out_i), np.concatenate(out_j), np.concatenate(out_d)
    # a pair sharing all of (s, r, o) appears in all three groupings: keep it once
    pk = np.minimum(i, j) * len(store) + np.maximum(i, j)
    _, first = np.unique(pk, return_index=True)
    return i[first], j[first], d[first]


def _aggregate(keys: np.ndarray, spans: np.ndarray, counts: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Group by key: (distinct keys, number of spans, sum of spans)."""
    uk, inv = np.unique(keys, return_inverse=True)
    n = np.bincount(inv, weights=counts, minlength=len(uk)) if counts is not None else np.bincount(inv, minlength=len(uk))
    return uk, n.astype(np.int64), np.bincount(inv, weights=spans, minlength=len(uk))


def _edge_stats(node_of: np.ndarray, ptr: np.ndarray, i: np.ndarray, j: np.ndarray, d: np.ndarray,
                comp: tuple[np.ndarray, np.ndarray, np.ndarray], n_nodes: int, chunk: int = 500_000
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Expand event pairs to rule-node pairs (u < v, Hamming <= 1) and aggregate ``T_uv``.

    Returns edge keys ``u * n_nodes + v``, ``|T_uv|``, the sum of spans and the
    direction count (pairs whose earlier event is on ``u``; same-day pairs count 1/2),
    aggregated chunk by chunk so memory stays bounded by the number of distinct edges.
    The pairs come ordered in time: ``i`` is never later than ``j``.
    """
    cnt = ptr[1:] - ptr[:-1]
    k = int(cnt.max()) if len(cnt) else 0
    pad = np.full((len(cnt), max(k, 1)), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(cnt)), cnt)
    cols = np.arange(len(node_of)) - np.repeat(ptr[:-1], cnt)
    pad[rows, cols] = node_of
    cs, cr, co = comp
    parts_k, parts_n, parts_s, parts_f = [], [], [], []
    for c0 in range(0, len(i), chunk):
        ii, jj, dd = i[c0:c0 + chunk], j[c0:c0 + chunk], d[c0:c0 + chunk]
        ks, ds, fs = [], [], []
        for a in range(pad.shape[1]):
            for b in range(pad.shape[1]):
                u, v = pad[ii, a], pad[jj, b]
                ok = (u >= 0) & (v >= 0) & (u != v)
                u, v, dd2 = u[ok], v[ok], dd[ok]
                ham = (cs[u] != cs[v]).astype(np.int8) + (cr[u] != cr[v]) + (co[u] != co[v])
                ok = ham <= 1
                u, v, dd2 = u[ok], v[ok], dd2[ok]
                ks.append(np.minimum(u, v) * n_nodes + np.maximum(u, v))
                ds.append(dd2)
                fs.append(np.where(dd2 == 0, 0.5, (u < v).astype(np.float64)))
        keys = np.concatenate(ks)
        kk, inv = np.unique(keys, return_inverse=True)
        nn = np.bincount(inv, minlength=len(kk))
        ss = np.bincount(inv, weights=np.concatenate(ds).astype(np.float64), minlength=len(kk))
        ff = np.bincount(inv, weights=np.concatenate(fs), minlength=len(kk))
        parts_k.append(kk)
        parts_n.append(nn)
        parts_s.append(ss)
        parts_f.append(ff)
    if not parts_k:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0)
    uk, inv = np.unique(np.concatenate(parts_k), return_inverse=True)
    n = np.bincount(inv, weights=np.concatenate(parts_n).astype(np.float64), minlength=len(uk))
    ssum = np.bincount(inv, weights=np.concatenate(parts_s), minlength=len(uk))
    fwd = np.bincount(inv, weights=np.concatenate(parts_f), minlength=len(uk))
    return uk, n.astype(np.int64), ssum, fwd


def _mdl_select(edge_u: np.ndarray, edge_v: np.ndarray, n: np.ndarray, ssum: np.ndarray,
                supp: np.ndarray, node_bits: np.ndarray, window_days: int, *,
                selected: np.ndarray | None = None, delta: np.ndarray | None = None,
                examine: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Greedy MDL edge insertion (see the module docstring); returns (selected, delta, passes).

    ``selected``/``delta`` continue an earlier selection; ``examine`` limits the
    edges considered (an incremental update re-examines only edges whose spans changed).
    """
    m = len(edge_u)
    selected = np.zeros(m, dtype=bool) if selected is None else selected.copy()
    delta = np.full(m, np.nan) if delta is None else delta.copy()
    if m == 0:
        return selected, delta, 0
    nf = n.astype(np.float64)
    spans = ssum.astype(np.float64) + nf  # +1 day per span
    pair_bits = np.log2(supp[edge_u].astype(np.float64) * supp[edge_v])
    l_cov = pair_bits - np.log2(nf)
    l_time = (nf + nf * np.log(spans / nf)) / math.log(2)
    null = nf * (pair_bits + math.log2(window_days + 1))
    base = l_cov + l_time - null  # data part of delta L; model part added below
    order = np.lexsort((edge_v, edge_u, -n))
    if examine is not None:
        order = order[np.isin(order, examine)]
    deg: dict[int, int] = {}
    if selected.any():
        nodes, counts = np.unique(np.concatenate([edge_u[selected], edge_v[selected]]), return_counts=True)
        deg = dict(zip(nodes.tolist(), counts.tolist()))
    s1 = float(sum(c * math.log2(c) for c in deg.values()))  # sum over nodes of deg*log2(deg)
    n_edges = int(selected.sum())

    def edge_total(e: int, s: float) -> float:
        return 0.0 if e == 0 else 2 * e * math.log2(2 * e) - s

    def dlog(x: int) -> float:
        return x * math.log2(x) if x > 0 else 0.0

    passes = 0
    changed = True
    while changed and passes < 5:
        changed = False
        passes += 1
        for k in order:
            if selected[k]:
                continue
            u, v = int(edge_u[k]), int(edge_v[k])
            du, dv = deg.get(u, 0), deg.get(v, 0)
            new_nodes = (node_bits[u] if du == 0 else 0.0) + (node_bits[v] if dv == 0 else 0.0)
            s_new = s1 - dlog(du) - dlog(dv) + dlog(du + 1) + dlog(dv + 1)
            d_model = edge_total(n_edges + 1, s_new) - edge_total(n_edges, s1) + new_nodes
            dl = float(base[k] + d_model)
            delta[k] = dl
            if dl < 0:
                selected[k] = True
                deg[u], deg[v] = du + 1, dv + 1
                s1, n_edges = s_new, n_edges + 1
                changed = True
    return selected, delta, passes


def _node_bits(node_s: np.ndarray, node_r: np.ndarray, node_o: np.ndarray, node_of_pair: np.ndarray,
               store: TemporalEventStore, n_types: int) -> np.ndarray:
    """App. B node code lengths from empirical label and relation frequencies."""
    s_lab, o_lab = node_s[node_of_pair], node_o[node_of_pair]
    p_s = np.bincount(s_lab, minlength=n_types) / len(s_lab)
    p_o = np.bincount(o_lab, minlength=n_types) / len(o_lab)
    p_r = np.bincount(store.relation, minlength=len(store.relations)) / len(store)
    with np.errstate(divide="ignore"):
        return -np.log2(p_s[node_s]) - np.log2(p_r[node_r]) - np.log2(p_o[node_o])


def _csr(keys: np.ndarray, values: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((values, keys))
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.add.at(ptr, keys + 1, 1)
    return np.cumsum(ptr), values[order].astype(np.int64)


def build_rule_graph(store: TemporalEventStore, *, config: RuleGraphConfig | None = None,
                     progress: bool = False) -> RuleGraph:
    """Build a STAR-RAG rule graph over every event of ``store`` (see the module docstring).

    Parameters
    ----------
    store : TemporalEventStore
        The events.
    config : RuleGraphConfig, optional
        Build parameters.
    progress : bool
        Print stage timings as they finish.
    """
    cfg = config or RuleGraphConfig()
    if len(store) == 0:
        raise ConfigError("cannot build a rule graph over an empty store")
    timings: dict[str, float] = {}
    t0 = time.perf_counter()

    def mark(stage: str) -> None:
        nonlocal t0
        timings[stage] = round(time.perf_counter() - t0, 3)
        if progress:
            print(f"  rule graph: {stage} {timings[stage]:.2f} s", flush=True)
        t0 = time.perf_counter()

    labels, types = entity_labels(store, min_support=cfg.min_support, max_len=cfg.max_len, k_type=cfg.k_type)
    mark("labels")
    idx = np.arange(len(store), dtype=np.int64)
    n_types, n_rel = len(types), len(store.relations)
    pos, keys = _event_nodes(store, labels, idx)
    uniq, node_of_pair = np.unique(keys, return_inverse=True)
    node_s, rest = np.divmod(uniq, _R_BASE * _T_BASE)
    node_r, node_o = np.divmod(rest, _T_BASE)
    support_ptr, support_idx = _csr(node_of_pair, pos, len(uniq))
    event_ptr, event_nodes = _csr(pos, node_of_pair, len(store))
    mark("rule_nodes")
    i, j, d = _event_pairs(store, cfg)
    mark("event_pairs")
    ek_u, edge_n, edge_sum, edge_fwd = _edge_stats(event_nodes, event_ptr, i, j, d, (node_s, node_r, node_o), len(uniq))
    edge_u, edge_v = np.divmod(ek_u, len(uniq))
    mark("candidate_edges")
    supp = support_ptr[1:] - support_ptr[:-1]
    node_bits = _node_bits(node_s, node_r, node_o, node_of_pair, store, n_types)
    selected, delta, passes = _mdl_select(edge_u, edge_v, edge_n, edge_sum, supp, node_bits, cfg.window_days)
    mark("mdl")
    stats = {
        "events": len(store), "types": n_types, "rule_nodes": int(len(uniq)),
        "event_pairs": int(len(i)), "candidate_edges": int(len(edge_u)),
        "selected_edges": int(selected.sum()), "mdl_passes": passes,
        "model_constant_bits": float(math.log2(max(n_types, 1) ** 2 * n_rel) + math.log2(2 * max(len(edge_u), 1))),
        "timings_s": timings,
    }
    rg = RuleGraph(node_s=node_s, node_r=node_r, node_o=node_o, support_ptr=support_ptr,
                   support_idx=support_idx, event_ptr=event_ptr, event_nodes=event_nodes,
                   edge_u=edge_u, edge_v=edge_v, edge_n=edge_n, edge_sum=edge_sum, edge_fwd=edge_fwd,
                   edge_delta=delta, selected=selected, labels=labels, types=types, config=cfg,
                   stats=stats)
    rg.stats["graph_nodes"] = int(rg.in_graph.sum())
    rg.store_fingerprint = store.fingerprint()
    return rg
