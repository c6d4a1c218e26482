"""Dominators and minimum sets of node sets, on node indices of a CompactDAG.

The routines the partition checker, the greedy partition and the capacity
models share: the smallest dominator of a set (a minimum vertex cut between
the inputs and the set, by max-flow), the minimum set (members without a
successor in the set), and an input-to-set path that avoids a given node set
(the witness that a claimed dominator fails). Everything here works on the
integer form; :func:`~spartition.partition.certificate.min_dominator` and
:func:`~spartition.partition.certificate.minimum_set` are the node-id views.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, maximum_flow

from spartition.core.dag import CompactDAG

__all__ = ["ancestors", "min_vertex_cut", "minimum_set_indices", "path_avoiding"]


def ancestors(pred_lists, members) -> list[int]:
    """The members and all their ancestors, ascending (a topological order).

    Parameters
    ----------
    pred_lists : list of list of int
        Predecessors of every node (:meth:`CompactDAG.pred_lists`).
    members : iterable of int
        Node indices.

    Returns
    -------
    list of int

    Examples
    --------
    >>> ancestors([[], [0], [1], []], [2])
    [0, 1, 2]
    """
    seen = set(members)
    stack = list(members)
    while stack:
        v = stack.pop()
        for u in pred_lists[v]:
            if u not in seen:
                seen.add(u)
                stack.append(u)
    return sorted(seen)


def min_vertex_cut(cdag: CompactDAG, members, pred_lists=None) -> list[int]:
    """A minimum set of nodes meeting every input-to-``members`` path: a smallest dominator.

    Parameters
    ----------
    cdag : CompactDAG
    members : iterable of int
        The node set (indices).
    pred_lists : list of list of int, optional
        ``cdag.pred_lists()``, passed by callers that already have it.

    Returns
    -------
    list of int
        The cut, ascending; an input among the members is in it (a path of
        length 0).

    Notes
    -----
    Node splitting and Dinic's max-flow on the ancestors of the set only; see
    :func:`~spartition.partition.certificate.min_dominator`.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> min_vertex_cut(compact(chain(4)), [2, 3])
    [0]
    """
    members = sorted(set(int(v) for v in members))
    if not members:
        return []
    if pred_lists is None:
        pred_lists = cdag.pred_lists()
    anc = ancestors(pred_lists, members)
    m = len(anc)
    local = {v: k for k, v in enumerate(anc)}
    src, snk = 2 * m, 2 * m + 1
    big = m + 1
    rows, cols, caps = [], [], []
    member_set = set(members)
    is_input = cdag.is_input
    for k, v in enumerate(anc):
        rows.append(2 * k)  # v_in -> v_out, the node itself: capacity 1
        cols.append(2 * k + 1)
        caps.append(1)
        for u in pred_lists[v]:
            rows.append(2 * local[u] + 1)
            cols.append(2 * k)
            caps.append(big)
        if is_input[v]:
            rows.append(src)
            cols.append(2 * k)
            caps.append(big)
        if v in member_set:
            rows.append(2 * k + 1)
            cols.append(snk)
            caps.append(big)
    size = 2 * m + 2
    cap = csr_matrix(
        (np.asarray(caps, dtype=np.int32), (np.asarray(rows), np.asarray(cols))), shape=(size, size)
    )
    flow = maximum_flow(cap, src, snk, method="dinic")
    residual = cap - flow.flow
    residual.data[residual.data < 0] = 0
    residual.eliminate_zeros()
    reach = np.zeros(size, dtype=bool)
    reach[breadth_first_order(residual, src, directed=True, return_predecessors=False)] = True
    cut = [anc[k] for k in range(m) if reach[2 * k] and not reach[2 * k + 1]]
    if len(cut) != flow.flow_value:  # pragma: no cover - max-flow/min-cut duality
        raise AssertionError("vertex cut does not match the max-flow value")
    return cut


def minimum_set_indices(succ_lists, members) -> list[int]:
    """The members with no successor among the members (the minimum set, P3), in the given order.

    Parameters
    ----------
    succ_lists : list of list of int
        Successors of every node (:meth:`CompactDAG.succ_lists`).
    members : list of int

    Returns
    -------
    list of int

    Examples
    --------
    >>> minimum_set_indices([[1], [2], []], [0, 2])
    [0, 2]
    """
    member_set = set(members)
    return [v for v in members if not any(w in member_set for w in succ_lists[v])]


def path_avoiding(cdag: CompactDAG, pred_lists, members, avoid):
    """A shortest input-to-``members`` path that avoids the nodes ``avoid``, or None.

    Parameters
    ----------
    cdag : CompactDAG
    pred_lists : list of list of int
    members : list of int
        The class.
    avoid : set of int
        A claimed dominator.

    Returns
    -------
    list of int or None
        The path from an input to a member (None: ``avoid`` dominates).

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> c = compact(chain(3))
    >>> path_avoiding(c, c.pred_lists(), [2], {1}), path_avoiding(c, c.pred_lists(), [2], set())
    (None, [0, 1, 2])
    """
    if not members:
        return None
    anc = ancestors(pred_lists, members)
    parent = {}
    queue = deque()
    for v in anc:
        if cdag.is_input[v] and v not in avoid:
            parent[v] = -1
            queue.append(v)
    member_set = set(members)
    anc_set = set(anc)
    succ = cdag.succ_lists()
    while queue:
        v = queue.popleft()
        if v in member_set:
            path = [v]
            while parent[path[-1]] >= 0:
                path.append(parent[path[-1]])
            return path[::-1]
        for w in succ[v]:
            if w in anc_set and w not in avoid and w not in parent:
                parent[w] = v
                queue.append(w)
    return None
