"""Lower bounds of the partial-computation game from ordered edge partitions (an S-partition for marked edges).

The partial game (docs/definitions.md section 2.1) marks edges, not nodes,
so the S-partition of Hong and Kung is stated here on edges, in the spirit
of the edge partitions of Papp, Sobczyk and Yzelman (SPAA 2025, section on
S-partitions in PRBP). The version implemented, and its proof, are the
tool's own (it follows the classical segment argument); see
:func:`partial_edge_partition_bound`.

Definition. An ordered partition ``E_1, ..., E_h`` of the edges is an
*S-edge partition* when for every class ``C = E_i``, with ``P`` the edges of
the earlier classes,

* (complete sources) every source u of an edge of C has all its in-edges in
  ``P`` or ``C``;
* (dominator) the set ``D(P, C)`` of the nodes that are

  - a source of an edge of C without an in-edge in C, or
  - a target of an edge of C with an in-edge in P,

  has at most S nodes.

``P(S)`` is the least h over S-edge partitions.
"""

from __future__ import annotations

from collections import deque

from spartition.core.dag import as_compact
from spartition.core.partial import require_partial_memory
from spartition.errors import SpartitionError

__all__ = ["MAX_PARTIAL_PARTITION_EDGES", "min_edge_partition", "partial_edge_partition_bound"]

#: The exhaustive search visits 3^|E| (prefix, class) pairs: 13 edges is about 1.6 million.
MAX_PARTIAL_PARTITION_EDGES = 13


def min_edge_partition(dag, S: int) -> int:
    """``P(S)``: the least number of classes of an S-edge partition of ``dag`` (module docstring).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        At most :data:`MAX_PARTIAL_PARTITION_EDGES` edges.
    S : int
        The dominator size allowed per class.

    Returns
    -------
    int
        0 for a DAG without edges. A single edge out of an input needs S >= 1.

    Raises
    ------
    SpartitionError
        If the DAG has too many edges, or no S-edge partition exists (S too
        small for some single edge: its source, and its target if that has
        an earlier in-edge, need a place in D).

    Notes
    -----
    Breadth-first search over the sets of edges already classed (at most
    2^|E|), each extended by every admissible class of the edges left: 3^|E|
    pairs in all.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain, fft
    >>> min_edge_partition(chain(4), 1), min_edge_partition(fft(1), 2)
    (1, 1)
    """
    c = as_compact(dag)
    edges = [(u, v) for v in range(c.n) for u in c.preds(v).tolist()]
    m = len(edges)
    if m > MAX_PARTIAL_PARTITION_EDGES:
        raise SpartitionError(f"the edge partition search is for at most {MAX_PARTIAL_PARTITION_EDGES} edges; "
                              f"the DAG has {m}")
    if m == 0:
        return 0
    into = [0] * c.n  # mask of each node's in-edges
    for e, (_, v) in enumerate(edges):
        into[v] |= 1 << e
    full = (1 << m) - 1
    dist = {0: 0}
    queue = deque([0])
    while queue:
        done = queue.popleft()
        left = full & ~done
        sub = left
        while sub:
            nxt = done | sub
            if nxt not in dist and _admissible(edges, into, done, sub, S):
                if nxt == full:
                    return dist[done] + 1
                dist[nxt] = dist[done] + 1
                queue.append(nxt)
            sub = (sub - 1) & left
    raise SpartitionError(f"no {S}-edge partition exists (an edge needs more than {S} dominator nodes)")


def _admissible(edges, into, done: int, cls: int, S: int) -> bool:
    """Whether ``cls`` (an edge mask) may follow the classes ``done``: complete sources, dominator <= S."""
    D = set()
    e, rest = 0, cls
    while rest:
        if rest & 1:
            u, v = edges[e]
            if into[u] & ~(done | cls):  # u read before it is complete
                return False
            if not into[u] & cls:
                D.add(u)
            if into[v] & done:
                D.add(v)
            if len(D) > S:
                return False
        rest >>= 1
        e += 1
    return True


def partial_edge_partition_bound(dag, M: int) -> int:
    """A lower bound on the partial game's optimum: ``max over k >= 1 of k (P(M + k) - 1)`` (:func:`min_edge_partition`).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        At most :data:`MAX_PARTIAL_PARTITION_EDGES` edges.
    M : int
        Fast memory, at least 2 on a DAG with an edge.

    Returns
    -------
    int
        The bound (0 when no k gives more); combine it with the trivial
        bound (:func:`spartition.exact.partial_solve.partial_trivial_bound`).

    Notes
    -----
    Proof, for each k >= 1. Take a schedule of the partial game with I/O Q
    and cut it after every k-th load or save: ``h = floor(Q / k) + 1``
    segments, each but the last holding exactly k loads and saves, so
    ``Q >= k (h - 1)``. Let ``E_i`` be the edges marked in segment i (each
    exactly once: the game is one-shot), and ``D_i`` the nodes red at the
    start of segment i together with those loaded in it:
    ``|D_i| <= M + k``. The nonempty ``E_i`` in order form an ordered
    partition of the edges, and it is an (M + k)-edge partition:

    * a partial compute of (u, v) needs u complete, so u's in-edges are
      marked in this segment or before;
    * a source u of an edge of ``E_i`` is red when the edge is marked. If no
      in-edge of u is marked in segment i, u got no partial compute in it,
      so its red pebble was there at the start or came from a load:
      ``u in D_i``;
    * a target v of an edge of ``E_i`` with an in-edge marked before segment
      i holds a partial value, and a partial compute needs v red then (it
      may start afresh only while none of its in-edges is marked). Within
      segment i a red pebble comes to v only by a load or by a partial
      compute into v, which itself needs v red, so at its first partial
      compute in the segment v was red at the start or loaded: ``v in D_i``.

    Dropping the empty segments keeps both rules (the edges before a class
    are unchanged), so ``P(M + k) <= h <= Q / k + 1``, i.e.
    ``Q >= k (P(M + k) - 1)``. k = M is the classical ``S = 2M``.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, pyramid
    >>> partial_edge_partition_bound(fft(1), 2), partial_edge_partition_bound(pyramid(3), 2)
    (0, 2)

    References
    ----------
    J.-W. Hong, H. T. Kung, "I/O complexity: the red-blue pebble game", STOC
    1981 (the segment argument); A. Papp, A. Sobczyk, A. N. Yzelman, "The
    impact of partial computations on the red-blue pebble game", SPAA 2025,
    arXiv:2506.10854 (S-partitions adapted to partial computations).
    """
    c = as_compact(dag)
    require_partial_memory(c, M)
    if len(c.pred_idx) == 0:
        return 0
    best, k = 0, 1
    while True:  # M + k >= 3 nodes dominate any single edge, so every P(M + k) exists
        classes = min_edge_partition(c, M + k)
        best = max(best, k * (classes - 1))
        if classes <= 1:
            return best
        k += 1
