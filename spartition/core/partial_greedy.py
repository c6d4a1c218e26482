"""Schedules of the partial-computation game for any DAG: a greedy one, and any oneshot schedule translated.

Both are checked by :func:`spartition.core.game.replay` like every other
schedule (docs/definitions.md section 2.1).
"""

from __future__ import annotations

import heapq

from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.core.partial import require_partial_memory
from spartition.errors import InvalidSchedule, ParameterError
from spartition.settings import PARTIAL

__all__ = ["algorithm_partial_schedule", "oneshot_to_partial", "partial_greedy_schedule"]

_NEVER = 1 << 62


def _edge_order(c) -> list:
    """The edges ``(u, v)`` by target in topological order, then source: every source is complete when read."""
    return [(u, v) for v in range(c.n) for u in c.preds(v).tolist()]


def partial_greedy_schedule(dag, M: int) -> Schedule:
    """A valid partial-game schedule for every M >= 2: edges in topological order, furthest-next-use eviction.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory; at least 2 if the DAG has an edge.

    Returns
    -------
    Schedule
        Variant ``"partial"``.

    Raises
    ------
    InfeasibleMemory
        If M < 2 and the DAG has an edge.

    Notes
    -----
    The edges are marked in the order of their targets in the topological
    order of :func:`spartition.core.dag.compact`, so each source is complete
    when it is read. Before a partial compute the source is loaded if it is
    not red, and the target too if it has a partial value (saved when it was
    evicted); a target not started takes a fresh pebble. When fast memory is
    full, the red node other than the edge's ends whose next use (as a
    source or as a target) is furthest away is evicted, saved first if it is
    dark. A node read for the last time is deleted at once; an output is
    saved and deleted as soon as it is complete.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> replay(fft(1), partial_greedy_schedule(fft(1), 2)).io, replay(fft(1), partial_greedy_schedule(fft(1), 3)).io
    (6, 4)

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    c = as_compact(dag)
    require_partial_memory(c, M)
    order = _edge_order(c)
    uses = [[] for _ in range(c.n)]
    for k, (u, v) in enumerate(order):
        uses[u].append(k)
        uses[v].append(k)
    game = _Greedy(c, M, uses)
    for u, v in order:
        game.play(u, v)
    return Schedule(M, PARTIAL, tuple(game.moves), meta={"method": "greedy"})


class _Greedy:
    """The greedy's state: red and blue nodes, each node's next use, and the moves so far (by name)."""

    def __init__(self, c, M, uses):
        self.c, self.M, self.uses = c, M, uses
        self.names = c.names
        self.ptr = [0] * c.n
        self.red, self.blue = set(), {v for v in range(c.n) if c.is_input[v]}
        self.started = [False] * c.n
        self.is_output = c.is_output.tolist()
        self.heap = []  # (-next use, node); stale entries are skipped
        self.moves = []

    def next_use(self, x) -> int:
        p = self.ptr[x]
        return self.uses[x][p] if p < len(self.uses[x]) else _NEVER

    def evict_one(self, keep) -> None:
        skipped = []
        while True:
            neg, x = heapq.heappop(self.heap)
            if x not in self.red or -neg != self.next_use(x):
                continue
            if x in keep:
                skipped.append((neg, x))
                continue
            break
        for item in skipped:
            heapq.heappush(self.heap, item)
        if x not in self.blue:  # dark and still needed (dead nodes are deleted at once)
            self.moves.append(("save", self.names[x]))
            self.blue.add(x)
        self.moves.append(("delete", self.names[x]))
        self.red.discard(x)

    def play(self, u, v) -> None:
        names = self.names
        need = [x for x in (u, v) if x not in self.red]
        while len(self.red) + len(need) > self.M:
            self.evict_one((u, v))
        for x in need:
            if x == u or self.started[v]:
                self.moves.append(("load", names[x]))
            self.red.add(x)
        self.moves.append(("partial", names[u], names[v]))
        self.started[v] = True
        self.blue.discard(v)
        for x in (u, v):
            self.ptr[x] += 1
        self._after(u, v)

    def _after(self, u, v) -> None:
        names = self.names
        if self.next_use(u) == _NEVER:  # every out-edge of u is marked
            self.moves.append(("delete", names[u]))
            self.red.discard(u)
        else:
            heapq.heappush(self.heap, (-self.next_use(u), u))
        if self.next_use(v) == _NEVER:  # a complete output
            self.moves += [("save", names[v]), ("delete", names[v])]
            self.blue.add(v)
            self.red.discard(v)
        else:
            heapq.heappush(self.heap, (-self.next_use(v), v))


def oneshot_to_partial(dag, schedule: Schedule) -> Schedule:
    """The partial-game schedule that plays a valid oneshot schedule move for move, at the same M and I/O.

    ``compute v`` becomes the partial computes of v's in-edges (in
    predecessor order), ``store v`` becomes ``save v``; loads and deletes
    stay. So the partial optimum is at most the oneshot optimum on every DAG.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    schedule : Schedule
        A schedule of the standard game that computes each node at most
        once (checked by replay as ``oneshot``).

    Returns
    -------
    Schedule
        Variant ``"partial"``, same M, same loads and stores.

    Raises
    ------
    IllegalMove
        If ``schedule`` is not a valid oneshot schedule.

    Notes
    -----
    Each move is legal in the partial game: a computed node's predecessors
    are red and complete (computed, or inputs); it is computed once, so no
    in-edge of it was marked before and it starts afresh; it is dark until
    stored, and a oneshot schedule never deletes an unstored node with an
    uncomputed successor (that successor could never be computed) nor an
    unstored output. Red pebbles are the same node for node, so M holds.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.exact.brute import brute_force
    >>> best = brute_force(fft(1), 3, "oneshot").schedule
    >>> replay(fft(1), oneshot_to_partial(fft(1), best)).io
    4

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    if schedule.variant == PARTIAL:
        raise InvalidSchedule("the schedule is of the partial game already")
    c = as_compact(dag)
    replay(c, Schedule(schedule.M, "oneshot", schedule.moves))
    moves = []
    for move, node in schedule.moves:
        if move == "compute":
            v = c.index[node]
            moves += [("partial", c.names[u], node) for u in c.preds(v).tolist()]
        else:
            moves.append(("save" if move == "store" else move, node))
    return Schedule(schedule.M, PARTIAL, tuple(moves), meta={**schedule.meta, "converted_from": schedule.variant})


def algorithm_partial_schedule(algorithm, dag, M: int, **options) -> Schedule:
    """A registered algorithm's schedule in the partial game: its oneshot schedule, translated and replayed.

    Parameters
    ----------
    algorithm : Algorithm
        A registered record (:func:`spartition.core.registry.algorithm`).
    dag : networkx.DiGraph
        A DAG of a family the algorithm applies to.
    M : int
    **options
        The generator's tile options.

    Returns
    -------
    Schedule
        Variant ``"partial"``, same M, the I/O of the oneshot schedule
        (:func:`oneshot_to_partial`); ``meta`` names the algorithm.

    Raises
    ------
    ParameterError
        If the algorithm makes no oneshot schedules (its ``variants``).
    IllegalMove
        If the generator's schedule computes a node twice: the partial game
        marks each edge once, so a schedule that recomputes has no
        translation (e.g. an approximate-attention tiling with several
        column blocks regenerates U1/U2 entries).

    Examples
    --------
    >>> from spartition.core.registry import algorithm, build
    >>> G = build("attention-forward", n=4, d=2)
    >>> s = algorithm_partial_schedule(algorithm("flash-forward"), G, 24)
    >>> s.variant, replay(G, s).io
    ('partial', 64)

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    if "oneshot" not in algorithm.variants:
        raise ParameterError(f"algorithm {algorithm.name} makes schedules of the games {', '.join(algorithm.variants)} "
                             "only; the partial game plays an algorithm's oneshot schedule, translated edge by edge")
    schedule = algorithm.generate(dag, M, variant="oneshot", **options)
    out = oneshot_to_partial(dag, schedule)
    replay(dag, out)
    return Schedule(out.M, PARTIAL, out.moves, {**out.meta, "algorithm": algorithm.name})
