"""A generic upper bound: topological order with furthest-next-use eviction."""

from __future__ import annotations

import heapq

from spartition.core.algorithm import Algorithm
from spartition.core.bounds import require_memory
from spartition.core.dag import as_compact
from spartition.core.game import Schedule
from spartition.core.partial_greedy import partial_greedy_schedule
from spartition.settings import DEFAULT_VARIANT, PARTIAL, check_variant

__all__ = ["GREEDY", "greedy_schedule", "read_steps"]

_NEVER = 1 << 62


def read_steps(preds, order, n: int) -> list:
    """For each node, the positions in ``order`` (a compute order) at which it is read, ascending.

    Examples
    --------
    >>> read_steps([[], [0], [0, 1]], [1, 2], 3)
    [[0, 1], [1], []]
    """
    uses = [[] for _ in range(n)]
    for k, v in enumerate(order):
        for u in preds[v]:
            uses[u].append(k)
    return uses


def greedy_schedule(dag, M: int, variant: str = DEFAULT_VARIANT) -> Schedule:
    """A valid schedule for every feasible M: compute in topological order, evict Belady-style.

    Each non-input node is computed once, in the topological order of
    :func:`spartition.core.dag.compact`. Before a compute, missing predecessors
    are loaded; when fast memory is full, the red node (other than the
    predecessors) whose next use is furthest away is evicted, and stored
    first only if it is needed later and not yet blue. Outputs are stored
    right after they are computed; a node with no further use is deleted.
    The schedule computes each node once, so it is valid in both variants.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory size; at least :func:`~spartition.core.bounds.min_feasible_memory`.
    variant : {"oneshot", "recompute", "partial"}
        Written into the schedule; ``"partial"`` plays the partial game
        instead (:func:`spartition.core.partial_greedy.partial_greedy_schedule`).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If M is below the smallest feasible M.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> from spartition.core.game import replay
    >>> replay(matmul(1, 1, 1), greedy_schedule(matmul(1, 1, 1), 3)).io
    3
    """
    if variant == PARTIAL:
        return partial_greedy_schedule(dag, M)
    c = as_compact(dag)
    check_variant(variant)
    require_memory(c, M)
    names = c.names
    preds = c.pred_lists()
    is_input = c.is_input.tolist()
    is_output = c.is_output.tolist()
    order = [v for v in range(c.n) if not is_input[v]]
    uses = read_steps(preds, order, c.n)
    ptr = [0] * c.n

    def next_use(u):
        p = ptr[u]
        return uses[u][p] if p < len(uses[u]) else _NEVER

    moves = []
    red = set()
    blue = {v for v in range(c.n) if is_input[v]}
    heap = []  # (-next use, node); stale entries are skipped

    for k, v in enumerate(order):
        pv = preds[v]
        pinned = set(pv)
        missing = [u for u in pv if u not in red]
        skipped = []
        while len(red) + len(missing) + 1 > M:
            neg, u = heapq.heappop(heap)
            if u not in red or -neg != next_use(u):
                continue
            if u in pinned:
                skipped.append((neg, u))
                continue
            if u not in blue:
                moves.append(("store", names[u]))
                blue.add(u)
            moves.append(("delete", names[u]))
            red.discard(u)
        for item in skipped:
            heapq.heappush(heap, item)
        for u in missing:
            moves.append(("load", names[u]))
            red.add(u)
        moves.append(("compute", names[v]))
        red.add(v)
        for u in pv:
            ptr[u] += 1
            nu = next_use(u)
            if nu == _NEVER:
                moves.append(("delete", names[u]))
                red.discard(u)
            else:
                heapq.heappush(heap, (-nu, u))
        if is_output[v]:
            moves.append(("store", names[v]))
            blue.add(v)
        if next_use(v) == _NEVER:  # a sink, or an output marked beyond the sinks with no use left
            moves.append(("delete", names[v]))
            red.discard(v)
        else:
            heapq.heappush(heap, (-next_use(v), v))
    return Schedule(M, variant, tuple(moves), meta={"method": "greedy"})


#: The generic upper bound, registered for every family by the engine's kernel (:mod:`spartition.core.generic`).
GREEDY = Algorithm(
    name="greedy",
    families=("*",),
    generate=greedy_schedule,
    io_formula=None,
    min_memory=None,
    source="docs/definitions.md section 5: topological order with furthest-next-use eviction",
)
