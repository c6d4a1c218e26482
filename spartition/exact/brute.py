"""Exact optimal I/O of tiny DAGs by shortest path over pebble-game states.

The truth that the CP-SAT solvers are tested against: kept simple enough to
be checked by reading.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

import numpy as np

from spartition.core.bounds import require_memory
from spartition.core.dag import as_compact
from spartition.errors import SpartitionError
from spartition.core.game import Schedule
from spartition.exact.partial_brute import partial_search
from spartition.settings import DEFAULT_VARIANT, PARTIAL, check_variant
from spartition.status import Status

__all__ = ["BruteResult", "brute_force"]


@dataclass(frozen=True)
class BruteResult:
    """The exact optimum found by state search, with an optimal schedule."""

    io: int
    schedule: Schedule
    M: int
    variant: str
    states: int
    wall_s: float

    def to_dict(self) -> dict:
        """Stable JSON form (``method``, ``status``, ``io`` first; no schedule)."""
        return {
            "method": "brute-force",
            "status": Status.OPTIMAL,
            "io": self.io,
            "M": self.M,
            "variant": self.variant,
            "states": self.states,
            "wall_s": round(self.wall_s, 4),
        }


def brute_force(dag, M: int, variant: str = DEFAULT_VARIANT, max_states: int | None = 5_000_000,
                time_limit: float | None = None) -> BruteResult:
    """The minimum I/O over all schedules, by A* search over game states.

    A state is (R, B, C): red set, blue set and, for ``oneshot``, the set of
    nodes computed so far, each a bitmask. Loads and stores cost 1, computes
    and deletes 0 (docs/definitions.md section 2). The search is Dijkstra's algorithm
    guided by a consistent lower bound ``h`` on the remaining cost, so the
    first goal state taken from the queue is optimal.

    ``h`` counts the outputs not yet blue (each needs a store) and, in
    ``oneshot``, the nodes not red that some uncomputed node still reads and
    that cannot be computed again (inputs, and computed nodes), each needing a
    load. A move of cost 0 never lowers ``h`` (a compute needs its
    predecessors red already; a delete only raises ``h``) and a load or store
    lowers it by at most 1, so ``h`` is consistent. A oneshot state where such
    a node is in neither fast nor slow memory can never finish and is dropped.

    Three reductions, each safe by a short argument; nothing else is pruned.
    They are argued for the game the search plays, in which dead pebbles
    (first item) vanish for free at any time.

    * Dead pebbles: in ``oneshot``, a node all of whose successors are
      computed and which is not an output still to store can never be read
      again; in ``recompute``, a node from which no output still to store can
      be reached is never read again either. Such a node's red pebble is
      deleted at once (a free move that enables nothing) and its blue bit is
      dropped, except for outputs (the goal reads it) and inputs.
    * Deletes only when fast memory is full. Take an optimal schedule and
      keep its deletes made below full memory *pending* instead (the red set
      is then the original's plus the pending nodes P). Before a load or
      compute of ``x`` that finds memory full, carry out one pending delete:
      P is not empty, since the original had room for ``x``, and this delete
      is made at full memory. If ``x`` is itself pending it is red already
      and the move is dropped, which costs nothing or saves a load; in
      ``oneshot`` a pending node is never computed again (a red node was
      computed, or loaded, hence computed before or an input). Nothing else
      needs a pebble absent, and pending nodes left at the end are deleted
      at full memory or never. So some optimal schedule deletes only at full
      memory.
    * In ``recompute``, a non-input whose predecessors are all red is never
      loaded: computing it gives the same state for free.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
    variant : {"oneshot", "recompute", "partial"}
        ``"partial"``: the partial-computation game, searched by
        :func:`spartition.exact.partial_brute.partial_search` (its own states
        and reductions).
    max_states : int or None
        Give up (raise :class:`SpartitionError`) after this many states.
    time_limit : float or None
        Give up (raise :class:`SpartitionError`) after this many seconds.

    Returns
    -------
    BruteResult

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, matmul
    >>> brute_force(fft(1), 3).io, brute_force(matmul(1, 1, 1), 3, "recompute").io
    (4, 3)
    """
    if variant == PARTIAL:
        found = partial_search(dag, M, max_states=max_states, time_limit=time_limit)
        return BruteResult(found.io, found.schedule, M, PARTIAL, found.states, found.wall_s)
    check_variant(variant)
    c = as_compact(dag)
    require_memory(c, M)
    start_time = time.perf_counter()
    n = c.n
    oneshot = variant == "oneshot"
    deadline = None if time_limit is None else start_time + time_limit
    bit, pred_mask, succ_mask, inputs_mask, goal_mask, reach = _masks(c, deadline)

    def canonical(R, B, C):
        """Drop dead pebbles; return None for a state that can never finish."""
        if not oneshot:
            # a node from which no output still to store can be reached is never read again
            live = sum(bit[v] for v in range(n) if reach[v] & ~B)
            return R & live, B & (live | inputs_mask | goal_mask), C
        if oneshot:
            for v in range(n):
                b = bit[v]
                if succ_mask[v] & ~C == 0:
                    if (R | B) & b and (not goal_mask & b or B & b):
                        R &= ~b
                        if not goal_mask & b:
                            B &= ~b
                    elif goal_mask & b and C & b and not (R | B) & b:
                        return None  # output computed and lost
                elif (inputs_mask | C) & b and not (R | B) & b:
                    return None  # still needed, cannot be recomputed, and lost
        return R, B, C

    def h(R, B, C):
        rest = (goal_mask & ~B).bit_count()
        if oneshot:
            for v in range(n):
                if succ_mask[v] & ~C and (inputs_mask | C) & bit[v] and not R & bit[v]:
                    rest += 1
        return rest

    def key(R, B, C):
        return R | (B << n) | (C << (2 * n))

    start = canonical(0, inputs_mask, 0)
    dist = {key(*start): 0}
    parent = {key(*start): None}
    queue = [(h(*start), 0, key(*start), start)]
    while queue:
        _, d, k, (R, B, C) = heapq.heappop(queue)
        if dist[k] < d:
            continue
        if B & goal_mask == goal_mask:
            return _result(c, parent, k, d, M, variant, len(dist), start_time)
        if max_states is not None and len(dist) > max_states:
            raise SpartitionError(f"brute force gave up after {max_states} states (DAG too large)")
        if time_limit is not None and time.perf_counter() - start_time > time_limit:
            raise SpartitionError(f"brute force gave up after {time_limit:g} s (time limit) and {len(dist):,} states "
                                  "(DAG too large)")
        red_count = R.bit_count()
        nexts = []
        for v in range(n):
            b = bit[v]
            if R & b:
                if red_count == M:
                    nexts.append((0, "delete", v, (R & ~b, B, C)))
                if not B & b and not inputs_mask & b:
                    nexts.append((1, "store", v, (R, B | b, C)))
            elif red_count < M:
                computable = not inputs_mask & b and pred_mask[v] & R == pred_mask[v]
                if B & b and (oneshot or not computable):
                    nexts.append((1, "load", v, (R | b, B, C)))
                if computable and not (oneshot and C & b):
                    nexts.append((0, "compute", v, (R | b, B, C | b if oneshot else C)))
        for cost, move, v, state in nexts:
            state = canonical(*state)
            if state is None:
                continue
            nk = key(*state)
            nd = d + cost
            if nk not in dist or nd < dist[nk]:
                dist[nk] = nd
                parent[nk] = (k, move, v, state)
                heapq.heappush(queue, (nd + h(*state), nd, nk, state))
    raise SpartitionError("no schedule reaches the goal (unreachable: M was checked)")


def _masks(c, deadline: float | None = None):
    """Bitmask tables: one bit per node, predecessor and successor masks, inputs, the outputs to
    store, and the outputs reachable from each node (itself included).

    The masks of all nodes are built from bytes, not by summing ``1 << v``
    (quadratic: 15 s at 10^5 nodes); the reach table, quadratic in words
    whatever one does, stops at ``deadline`` (a ``perf_counter`` time).
    """
    n = c.n
    bit = [1 << v for v in range(n)]
    pred_mask = [sum(bit[u] for u in c.preds(v).tolist()) for v in range(n)]
    succ_mask = [sum(bit[w] for w in c.succs(v).tolist()) for v in range(n)]
    inputs_mask = _mask(c.is_input)
    goal_mask = _mask(c.is_output) & ~inputs_mask
    reach = [0] * n
    for v in reversed(range(n)):  # compact nodes are numbered in topological order
        if deadline is not None and v % 1024 == 0 and time.perf_counter() > deadline:
            raise SpartitionError(f"brute force gave up while preparing its tables ({n:,} nodes): the time limit "
                                  "passed before the first state (DAG too large)")
        reach[v] = bit[v] & goal_mask
        for w in c.succs(v).tolist():
            reach[v] |= reach[w]
    return bit, pred_mask, succ_mask, inputs_mask, goal_mask, reach


def _result(c, parent, k, io, M, variant, states, start_time):
    """Rebuild the schedule along parent pointers, adding the implicit deletes."""
    steps = []
    while parent[k] is not None:
        prev, move, v, state = parent[k]
        steps.append((prev, move, v))
        k = prev
    steps.reverse()
    n = c.n
    full = (1 << n) - 1
    moves = []
    red = 0
    for prev, move, v in steps:
        R_prev = prev & full
        # canonical() drops dead pebbles without a move; the replayed schedule must delete them
        for u in range(n):
            if (red >> u) & 1 and not (R_prev >> u) & 1:
                moves.append(("delete", c.names[u]))
        red = R_prev
        moves.append((move, c.names[v]))
        if move in ("load", "compute"):
            red |= 1 << v
        elif move == "delete":
            red &= ~(1 << v)
    return BruteResult(
        io=io,
        schedule=Schedule(M, variant, tuple(moves), meta={"method": "brute-force"}),
        M=M,
        variant=variant,
        states=states,
        wall_s=time.perf_counter() - start_time,
    )


def _mask(flags) -> int:
    """The integer with bit ``v`` set where ``flags[v]`` (a numpy bool array)."""
    return int.from_bytes(np.packbits(np.asarray(flags, dtype=bool), bitorder="little").tobytes(), "little")
