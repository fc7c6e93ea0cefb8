"""Hierarchical Leiden communities and Global mode's greedy budgeted selection (Alg. 3).

Communities are found with ``leidenalg`` on an ``igraph`` graph of all nodes
(propositions, entities, passages): modularity Leiden on the whole graph, then again
inside every community larger than ``max_size``, down to ``max_levels`` levels (the same
scheme as graspologic's ``hierarchical_leiden``). Communities of every level are kept;
Global mode filters them by size (10..150) and picks them greedily.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from chronorag.errors import ConfigError, missing_extra
from chronorag.workflows.topg.proposition_graph import PropositionGraph

__all__ = ["hierarchical_leiden", "select_communities"]


def _libs():  # type: ignore[no-untyped-def]
    try:
        import igraph as ig
        import leidenalg
    except ImportError as exc:
        raise missing_extra("leidenalg", "graph") from exc
    return ig, leidenalg


def hierarchical_leiden(graph: PropositionGraph, *, max_size: int = 150, max_levels: int = 3,
                        seed: int = 0) -> list[np.ndarray]:
    """Communities (arrays of node ids in :meth:`PropositionGraph.node_edges` numbering).

    Raises
    ------
    MissingExtraError
        ``leidenalg``/``igraph`` are not installed (``pip install 'chronorag[graph]'``).
    """
    ig, leidenalg = _libs()
    n, edges = graph.node_edges()
    if n == 0:
        return []
    g = ig.Graph(n=n, edges=edges.tolist(), directed=False)
    out: list[np.ndarray] = []

    def split(vertices: np.ndarray, level: int) -> None:
        sub = g.induced_subgraph(vertices.tolist()) if vertices.size < n else g
        if sub.ecount() == 0:
            return
        part = leidenalg.find_partition(sub, leidenalg.ModularityVertexPartition, seed=seed)
        members = np.asarray(part.membership)
        if members.max() == 0 and level > 0:
            return  # no further split
        for c in range(members.max() + 1):
            nodes = vertices[members == c]
            if nodes.size < 2:
                continue
            out.append(np.sort(nodes).astype(np.int64))
            if nodes.size > max_size and level + 1 < max_levels:
                split(nodes, level + 1)

    split(np.arange(n, dtype=np.int64), 0)
    return out


def select_communities(anchors: Iterable[int], communities: Sequence[np.ndarray], *, budget: int = 8000,
                       min_size: int = 10, max_size: int = 150) -> list[int]:
    """Greedy budgeted selection (Alg. 3): indexes of the chosen communities, in order.

    Each round takes the community (size in ``min_size..max_size``) with the most
    not-yet-covered anchors per node, until every anchor is covered, the node budget is
    spent or no community covers a new anchor.
    """
    s = {int(a) for a in anchors}
    if budget < 1:
        raise ConfigError(f"budget must be >= 1, got {budget}")
    cand = [i for i, c in enumerate(communities) if min_size <= c.size <= max_size]
    hits = {i: s.intersection(communities[i].tolist()) for i in cand}
    hits = {i: h for i, h in hits.items() if h}
    covered: set[int] = set()
    chosen: list[int] = []
    used = 0
    while covered != s and used < budget and hits:
        best, best_score = -1, 0.0
        for i, h in hits.items():
            sc = len(h - covered) / communities[i].size
            if sc > best_score:
                best, best_score = i, sc
        if best < 0:
            break
        chosen.append(best)
        covered |= hits.pop(best)
        used += int(communities[best].size)
    return chosen
