"""Exact optimal I/O of tiny DAGs in the partial-computation game, by A* search over game states.

The truth the partial game is tested against (docs/definitions.md section
2.1); :func:`spartition.exact.brute.brute_force` with ``variant="partial"``
runs it.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

from spartition.core.dag import as_compact
from spartition.core.game import Schedule
from spartition.core.partial import edge_index, require_partial_memory
from spartition.errors import SpartitionError
from spartition.settings import PARTIAL

__all__ = ["PartialSearch", "partial_search"]


@dataclass(frozen=True)
class PartialSearch:
    """The optimum of the partial game found by state search, with an optimal schedule."""

    io: int
    schedule: Schedule
    states: int
    wall_s: float


class _Tables:
    """Bitmasks of a compact DAG: one bit per node in ``R`` and ``B``, one per edge in ``E``."""

    def __init__(self, c):
        self.n = c.n
        edges = sorted(edge_index(c).items(), key=lambda item: item[1])
        self.src = [u for (u, _), _ in edges]
        self.dst = [v for (_, v), _ in edges]
        self.m = len(edges)
        self.in_e = [0] * c.n
        self.out_e = [0] * c.n
        for e, (u, v) in enumerate(zip(self.src, self.dst)):
            self.in_e[v] |= 1 << e
            self.out_e[u] |= 1 << e
        is_input, is_output = c.is_input.tolist(), c.is_output.tolist()
        # outputs to save: sinks that are not inputs (isolated nodes cost nothing)
        self.goal = [is_output[v] and not is_input[v] for v in range(c.n)]
        self.start_blue = sum(1 << v for v in range(c.n) if is_input[v] and not is_output[v])
        self.all_edges = (1 << self.m) - 1

    def needs_load(self, v, R, B, E) -> int:
        """1 if ``v`` is not red but its value must be red again (it is blue then): a load it cannot avoid."""
        if R >> v & 1:
            return 0
        marked_in = E & self.in_e[v]
        if marked_in == self.in_e[v]:
            return 1 if self.out_e[v] & ~E else 0
        return 1 if marked_in else 0

    def contribution(self, v, R, B, E) -> int:
        """``v``'s share of the heuristic: a load it still needs, and its save if it is an output not yet blue."""
        return self.needs_load(v, R, B, E) + (1 if self.goal[v] and not B >> v & 1 else 0)


def _successors(t: _Tables, R: int, B: int, E: int, M: int):
    """Yield ``(cost, moves, R, B, E, touched)`` for each move of the reduced game (see :func:`partial_search`)."""
    red_count = R.bit_count()
    full = red_count >= M
    for e in range(t.m):
        if E >> e & 1:
            continue
        u, v = t.src[e], t.dst[e]
        if not R >> u & 1 or E & t.in_e[u] != t.in_e[u]:
            continue
        if not R >> v & 1 and (full or E & t.in_e[v]):
            continue
        yield _partial(t, e, u, v, R, B, E)
    if full:
        for v in range(t.n):
            if R >> v & 1:
                if B >> v & 1:
                    yield 0, (("delete", v),), R & ~(1 << v), B, E, (v,)
                else:
                    yield 1, (("save", v), ("delete", v)), R & ~(1 << v), B | 1 << v, E, (v,)
    else:
        loadable = B & ~R
        while loadable:
            b = loadable & -loadable
            loadable ^= b
            v = b.bit_length() - 1
            if not (t.goal[v] and E & t.in_e[v] == t.in_e[v]):  # a complete output is finished
                yield 1, (("load", v),), R | b, B, E, (v,)


def _partial(t: _Tables, e, u, v, R, B, E):
    """Partial compute of edge e = (u, v), then the free moves it makes safe: dead pebbles dropped, a finished
    output saved at once."""
    bu, bv = 1 << u, 1 << v
    R, B, E = R | bv, B & ~bv, E | 1 << e
    moves = [("partial", u, v)]
    cost = 0
    if t.out_e[u] & ~E == 0:  # u is never read again
        R, B = R & ~bu, B & ~bu
        moves.append(("delete", u))
    if t.goal[v] and E & t.in_e[v] == t.in_e[v]:
        R, B = R & ~bv, B | bv
        moves += [("save", v), ("delete", v)]
        cost = 1
    return cost, tuple(moves), R, B, E, (u, v)


def partial_search(dag, M: int, max_states: int | None = 5_000_000, time_limit: float | None = None) -> PartialSearch:
    """The minimum I/O of the partial game, by A* search over states ``(R, B, E)``.

    ``R`` and ``B`` are the red and blue nodes, ``E`` the marked edges, each
    a bitmask; a red node is light when it is blue too and dark otherwise.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        At least 2 if the DAG has an edge.
    max_states, time_limit : int, float or None
        Give up (raise :class:`SpartitionError`) after this many states or seconds.

    Returns
    -------
    PartialSearch
        The optimum, an optimal schedule (variant ``"partial"``), the states
        visited and the time taken.

    Raises
    ------
    InfeasibleMemory
        If M < 2 and the DAG has an edge.

    Notes
    -----
    The search plays a reduced game whose optimum equals the game's, each
    reduction safe by a short argument:

    * *Dead pebbles drop at once.* A node all of whose out-edges are
      marked is complete and never read again: its red pebble is deleted
      (legal, light or dark) and its blue copy forgotten.
    * *An output is saved as soon as it is complete*, then deleted: it
      changes no more, so exactly one save is due after completion anyway.
    * *A save comes right before a delete of the same node.* A save only
      matters to a later load of the node; a save with no delete before the
      next partial compute into the node is wiped out by it. Postponed to
      just before the next delete the save costs the same, and the node
      being dark meanwhile forbids nothing the schedule does (it deletes
      the node only after the save).
    * *Deletes only when fast memory is full.* Keep a delete made below full
      memory pending instead; before a load or a partial compute needing a
      new pebble that finds memory full, carry out one pending delete (one
      exists, since the original had room). A pending node is light
      (saved just before) or dead; its next use in the original is a load
      (a node that was ever red has a marked in-edge or is an input, so it
      cannot start afresh), which is dropped. So some optimal schedule
      deletes (and saves, but outputs) only at full memory.

    The heuristic counts, per node, a load it cannot avoid (not red and a
    complete node with an unmarked out-edge, or an incomplete node with a
    marked in-edge) and a save (an output not yet blue). A free move never
    lowers it (a partial compute needs its source red and leaves its target
    red; a delete only raises it); a move of cost 1 lowers it by at most 1.
    It is consistent, so the first goal state popped is optimal.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain, fft
    >>> partial_search(chain(4), 2).io, partial_search(fft(1), 2).io, partial_search(fft(1), 3).io
    (2, 5, 4)

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    c = as_compact(dag)
    require_partial_memory(c, M)
    start_time = time.perf_counter()
    t = _Tables(c)
    n2 = 2 * t.n
    start = (0, t.start_blue, 0)
    h0 = sum(t.contribution(v, *start) for v in range(t.n))
    start_key = start[1] << t.n
    dist, parent = {start_key: 0}, {start_key: None}
    # ties of d + h go to the smaller h: more of the cost is paid, the goal is nearer
    queue = [(h0, h0, 0, start_key, start)]
    while queue:
        _, h, d, key, (R, B, E) = heapq.heappop(queue)
        if dist[key] < d:
            continue
        if E == t.all_edges:
            return PartialSearch(d, _schedule(c, parent, key, M), len(dist), time.perf_counter() - start_time)
        _check_budget(len(dist), max_states, start_time, time_limit)
        for cost, moves, R2, B2, E2, touched in _successors(t, R, B, E, M):
            nkey = R2 | B2 << t.n | E2 << n2
            nd = d + cost
            if nkey in dist and dist[nkey] <= nd:
                continue
            dist[nkey] = nd
            parent[nkey] = (key, moves)
            h2 = h + sum(t.contribution(v, R2, B2, E2) - t.contribution(v, R, B, E) for v in set(touched))
            heapq.heappush(queue, (nd + h2, h2, nd, nkey, (R2, B2, E2)))
    raise SpartitionError("no schedule reaches the goal (unreachable: M was checked)")


def _check_budget(states, max_states, start_time, time_limit) -> None:
    if max_states is not None and states > max_states:
        raise SpartitionError(f"brute force gave up after {max_states} states (DAG too large)")
    if time_limit is not None and time.perf_counter() - start_time > time_limit:
        raise SpartitionError(f"brute force gave up after {time_limit:g} s (time limit) and {states:,} states "
                              "(DAG too large)")


def _schedule(c, parent, key, M) -> Schedule:
    """The moves along the parent pointers, by node name."""
    chunks = []
    while parent[key] is not None:
        key, moves = parent[key]
        chunks.append(moves)
    names = c.names
    moves = [(m[0], *(names[x] for x in m[1:])) for chunk in reversed(chunks) for m in chunk]
    return Schedule(M, PARTIAL, tuple(moves), meta={"method": "brute-force"})
