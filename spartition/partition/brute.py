"""Exact P(S) and class capacity of tiny DAGs by exhaustive enumeration: the truth the CP-SAT models are tested against.

Every quantity is computed from the definitions with bitmasks, without max-flow
and without a solver:

- the smallest dominator of every node set C is the smallest ``|D|`` over all
  ``2^n`` sets D whose input-reachable-avoiding-D nodes miss C;
- the minimum set of C is counted directly;
- P(S) is a shortest path over the lattice of predecessor-closed sets: a
  partition listed in a P4 order is a chain ``{} = D0 < D1 < ... < Dh = V`` of
  predecessor-closed sets, and a step from D to D' is allowed when the class
  ``D' - D`` satisfies P2 and P3.

Exponential: meant for DAGs of at most about 14 nodes.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from spartition.core.dag import CompactDAG, compact, strip_isolated
from spartition.partition.certificate import Partition
from spartition.partition.weights import node_weights
from spartition.status import Status

__all__ = ["BrutePartition", "brute_class_capacity", "brute_min_partition", "brute_tables"]

MAX_NODES = 16


def _cdag(dag) -> CompactDAG:
    if isinstance(dag, CompactDAG):
        if dag.isolated().any():
            raise ValueError("pass the networkx DAG: isolated nodes must be stripped first")
        return dag
    return compact(strip_isolated(dag))


@dataclass(frozen=True)
class BruteTables:
    """Per-mask tables over the ``2^n`` node sets of a DAG (bit v = node v in topological order)."""

    n: int
    min_dominator: np.ndarray  # smallest dominator size of each set
    min_set: np.ndarray  # size of the minimum set of each set
    down: np.ndarray  # is the set predecessor-closed
    convex: np.ndarray  # is the set convex


def brute_tables(cdag: CompactDAG) -> BruteTables:
    """Smallest dominator, minimum-set size, closedness and convexity of every node set.

    Parameters
    ----------
    cdag : CompactDAG
        At most 16 nodes.

    Returns
    -------
    BruteTables
        Arrays indexed by node-set bitmask (bit v = node v).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> t = brute_tables(compact(fft(1)))
    >>> int(t.min_dominator[0b1111]), int(t.min_set[0b1111]), int(t.min_dominator[0b1100])
    (2, 2, 2)
    """
    n = cdag.n
    if n > MAX_NODES:
        raise ValueError(f"brute force is for at most {MAX_NODES} nodes, got {n}")
    N = 1 << n
    masks = np.arange(N, dtype=np.int64)
    pmask = [sum(1 << int(u) for u in cdag.preds(v)) for v in range(n)]
    smask = [sum(1 << int(w) for w in cdag.succs(v)) for v in range(n)]
    bit = [(masks >> v) & 1 for v in range(n)]
    # reach[D]: nodes reachable from an input by a path avoiding D (vectorised over D)
    reach = np.zeros(N, dtype=np.int64)
    for v in range(n):
        if cdag.is_input[v]:
            hit = np.ones(N, dtype=bool)
        else:
            hit = (reach & pmask[v]) != 0
        reach |= np.where(hit & (bit[v] == 0), 1 << v, 0)
    popcount = np.zeros(N, dtype=np.int64)
    for v in range(n):
        popcount += bit[v]
    # best[C] = min |D| over D with reach(D) & C == 0: seed at C = complement of reach(D), then to subsets
    best = np.full(N, n + 1, dtype=np.int64)
    np.minimum.at(best, (N - 1) & ~reach, popcount)
    for i in range(n):
        view = best.reshape(-1, 2, 1 << i)
        np.minimum(view[:, 0, :], view[:, 1, :], out=view[:, 0, :])
    min_set = np.zeros(N, dtype=np.int64)
    for v in range(n):
        min_set += bit[v] * ((masks & smask[v]) == 0)
    down = np.ones(N, dtype=bool)
    for v in range(n):
        down &= (bit[v] == 0) | ((masks & pmask[v]) == pmask[v])
    above = np.zeros(N, dtype=np.int64)  # nodes with an ancestor-or-self in the set
    for v in range(n):
        above |= np.where((bit[v] == 1) | ((above & pmask[v]) != 0), 1 << v, 0)
    below = np.zeros(N, dtype=np.int64)  # nodes with a descendant-or-self in the set
    for v in range(n - 1, -1, -1):
        below |= np.where((bit[v] == 1) | ((below & smask[v]) != 0), 1 << v, 0)
    convex = (above & below & ~masks) == 0
    return BruteTables(n, best, min_set, down, convex)


@dataclass(frozen=True)
class BrutePartition:
    """P(S) and a minimum partition found by enumeration."""

    S: int
    P: int
    partition: Partition

    def to_dict(self) -> dict:
        return {"S": self.S, "P": self.P, "status": Status.OPTIMAL, "method": "brute-force",
                "classes": [list(c) for c in self.partition.classes]}


def brute_min_partition(dag, S: int) -> BrutePartition:
    """The minimum S-partition of a tiny DAG by breadth-first search over predecessor-closed sets.

    Isolated nodes are removed first (docs/definitions.md section 3).

    Parameters
    ----------
    dag : networkx.DiGraph
    S : int
        At least 1 for a non-empty DAG.

    Returns
    -------
    BrutePartition
        P(S) and one minimum partition, classes in topological order.

    Raises
    ------
    ValueError
        On more than 16 nodes, or S < 1 on a non-empty DAG.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, matmul
    >>> brute_min_partition(fft(1), 1).P, brute_min_partition(fft(1), 2).P
    (4, 1)
    >>> brute_min_partition(matmul(1, 1, 2), 2).P
    2
    """
    cdag = _cdag(dag)
    n = cdag.n
    if n == 0:
        return BrutePartition(S, 0, Partition(S, []))
    if S < 1:
        raise ValueError(f"S = {S}: no S-partition of a non-empty DAG exists for S < 1")
    t = brute_tables(cdag)
    valid = (t.min_dominator <= S) & (t.min_set <= S)
    full = (1 << n) - 1
    down, validl = t.down.tolist(), valid.tolist()
    parent = {0: None}
    queue = deque([0])
    while queue:
        D = queue.popleft()
        if D == full:
            break
        rest = full & ~D
        sub = rest
        while sub:
            nxt = D | sub
            if nxt not in parent and validl[sub] and down[nxt]:
                parent[nxt] = D
                queue.append(nxt)
            sub = (sub - 1) & rest
    chain = [full]
    while parent[chain[-1]] is not None:
        chain.append(parent[chain[-1]])
    chain.reverse()
    classes = []
    for a, b in zip(chain, chain[1:]):
        diff = b & ~a
        classes.append([cdag.names[v] for v in range(n) if diff >> v & 1])
    return BrutePartition(S, len(classes), Partition(S, classes, meta={"method": "brute-force"}))


def brute_class_capacity(dag, X: int, weight=None, convex: bool = False) -> int:
    """The maximum weight of one node set with P2 and P3 for X (convex if asked), by enumeration.

    Parameters
    ----------
    dag : networkx.DiGraph
        Isolated nodes are removed first; at most 16 nodes remain.
    X : int
    weight : None, str, dict or callable
        As in :func:`spartition.partition.weights.node_weights`.
    convex : bool
        Only convex sets.

    Returns
    -------
    int
        U(X), exactly.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> brute_class_capacity(fft(1), 1), brute_class_capacity(fft(1), 2)
    (1, 4)
    """
    G = strip_isolated(dag)
    cdag = compact(G)
    n = cdag.n
    if n == 0:
        return 0
    wmap = node_weights(G, weight)
    t = brute_tables(cdag)
    masks = np.arange(1 << n, dtype=np.int64)
    total = np.zeros(1 << n, dtype=np.int64)
    for v in range(n):
        total += ((masks >> v) & 1) * wmap[cdag.names[v]]
    ok = (t.min_dominator <= X) & (t.min_set <= X)
    if convex:
        ok &= t.convex
    return int(total[ok].max())
