"""Schedules that really recompute: values deleted without a store and computed again from their predecessors.

A generator for the standard game (Hong & Kung's, with recomputation) on any
DAG, to test lower bounds where they can fail: a count proven for the oneshot
game need not hold on these schedules, a count proven for the standard game
must. It is :func:`~spartition.core.greedy.greedy_schedule` with two
changes: the compute order may be a seeded random topological order, and an
evicted value whose predecessors are all in slow memory may be deleted
unstored (by a seeded coin) and rebuilt when it is needed again.

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981).
"""

from __future__ import annotations

import heapq
import random

from spartition.core.bounds import require_memory
from spartition.core.dag import as_compact
from spartition.core.game import Schedule
from spartition.core.greedy import read_steps

__all__ = ["recomputing_schedule"]

_NEVER = 1 << 62


def recomputing_schedule(dag, M: int, seed: int | None = 0, drop: float = 1.0, shuffle: bool = True) -> Schedule:
    """A valid recompute schedule that deletes values unstored and computes them again.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory; at least :func:`~spartition.core.bounds.min_feasible_memory`.
    seed : int or None
        Seeds the compute order (when ``shuffle``) and the coin of ``drop``.
    drop : float
        The probability that an evicted *rebuildable* value is deleted
        unstored instead of stored (1: always, 0: never, which gives a oneshot
        schedule).
    shuffle : bool
        Compute in a seeded random topological order (else the DAG's own).

    Returns
    -------
    Schedule
        Variant ``recompute``.

    Raises
    ------
    InfeasibleMemory
        If M is below the smallest feasible M.

    Notes
    -----
    Nodes are computed in a topological order; before each compute the
    missing predecessors are rebuilt (if deleted unstored) or loaded, and
    when fast memory is full the red node, other than those the current step
    needs, with the furthest next use is evicted (Belady), as in
    :func:`~spartition.core.greedy.greedy_schedule`. A value ``u`` needed
    later and not blue is *rebuildable* if every predecessor of ``u`` is blue
    (an input, or stored: blue is permanent, so it stays loadable) and
    ``indeg(u) + indeg(v) <= M`` for every successor ``v``. Then the
    rebuild of ``u`` for ``v`` fits: it holds at most ``indeg(v) - 1`` of
    ``v``'s other predecessors, ``indeg(u)`` of ``u``'s and ``u``. A value
    that is not rebuildable is stored before it is deleted. So the schedule
    is valid for every feasible M.

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> from spartition.core.game import replay
    >>> G = build("matmul", a=2, b=4, c=2)
    >>> s = recomputing_schedule(G, 4, seed=1)
    >>> r = replay(G, s)
    >>> r.variant, r.computes > G.number_of_nodes() - 16
    ('recompute', True)
    """
    c = as_compact(dag)
    require_memory(c, M)
    rng = random.Random(seed)
    names, preds = c.names, c.pred_lists()
    is_input, is_output = c.is_input.tolist(), c.is_output.tolist()
    succs = [[] for _ in range(c.n)]
    for v, ps in enumerate(preds):
        for u in ps:
            succs[u].append(v)
    order = _topological_order(c.n, preds, succs, is_input, rng if shuffle else None)
    uses = read_steps(preds, order, c.n)
    ptr = [0] * c.n
    fits = [all(len(preds[u]) + len(preds[v]) <= M for v in succs[u]) for u in range(c.n)]

    def next_use(u):
        p = ptr[u]
        return uses[u][p] if p < len(uses[u]) else _NEVER

    moves, red, heap = [], set(), []
    blue = {v for v in range(c.n) if is_input[v]}

    def make_room(need: int, pinned) -> None:
        skipped = []
        while len(red) + need > M:
            neg, u = heapq.heappop(heap)
            if u not in red or -neg != next_use(u):
                continue
            if u in pinned:
                skipped.append((neg, u))
                continue
            if u not in blue and next_use(u) != _NEVER:
                rebuildable = fits[u] and not is_input[u] and all(p in blue for p in preds[u])
                if not (rebuildable and rng.random() < drop):
                    moves.append(("store", names[u]))
                    blue.add(u)
            moves.append(("delete", names[u]))
            red.discard(u)
        for item in skipped:
            heapq.heappush(heap, item)

    for k, v in enumerate(order):
        pv = preds[v]
        pinned = set(pv)
        for u in pv:
            if u in red or u in blue:
                continue
            # u was deleted unstored: rebuild it from its (blue) predecessors
            make_room(sum(1 for p in preds[u] if p not in red) + 1, pinned | set(preds[u]))
            for p in preds[u]:
                if p not in red:
                    moves.append(("load", names[p]))
                    red.add(p)
            moves.append(("compute", names[u]))
            red.add(u)
            for p in preds[u]:
                if p not in pinned and next_use(p) == _NEVER:
                    moves.append(("delete", names[p]))
                    red.discard(p)
                else:
                    heapq.heappush(heap, (-next_use(p), p))
        missing = [u for u in pv if u not in red]
        make_room(len(missing) + 1, pinned)
        for u in missing:
            moves.append(("load", names[u]))
            red.add(u)
        moves.append(("compute", names[v]))
        red.add(v)
        for u in pv:
            ptr[u] += 1
            if next_use(u) == _NEVER:
                moves.append(("delete", names[u]))
                red.discard(u)
            else:
                heapq.heappush(heap, (-next_use(u), u))
        if is_output[v] and v not in blue:  # a recomputed output (one with uses) is blue already
            moves.append(("store", names[v]))
            blue.add(v)
        if next_use(v) == _NEVER:
            moves.append(("delete", names[v]))
            red.discard(v)
        else:
            heapq.heappush(heap, (-next_use(v), v))
    meta = {"method": "recomputing-greedy", "seed": seed, "drop": drop, "shuffle": shuffle}
    return Schedule(M, "recompute", tuple(moves), meta=meta)


def _topological_order(n, preds, succs, is_input, rng) -> list:
    """The non-input nodes in a topological order: index order, or Kahn's with seeded random choices."""
    if rng is None:
        return [v for v in range(n) if not is_input[v]]
    indeg = [len(p) for p in preds]
    ready = [v for v in range(n) if indeg[v] == 0]
    order = []
    while ready:
        v = ready.pop(rng.randrange(len(ready)))
        if not is_input[v]:
            order.append(v)
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
    return order
