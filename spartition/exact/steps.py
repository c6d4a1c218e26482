"""Exact optimal I/O of the recompute game by A* over normal-form *steps*, with a max-flow heuristic.

The brute force of :mod:`spartition.exact.brute` searches every move; this
search makes one *step* per compute and keeps the optimum, by the normal form
below. It is exact (no cap, no time horizon) and is the recompute truth the
tests use on DAGs of about 20 nodes, and the recompute search of
:func:`spartition.exact.solve.solve_io` on small DAGs.

Normal form
-----------
Take any schedule. (1) *Reduce* it (:mod:`spartition.exact.formulations.caps`):
remove every compute whose copy is never used, with its delete; the I/O is
unchanged and afterwards every computed copy of ``v`` is used (a successor
computed, or ``v`` stored, while it is red). (2) Remove every loaded copy that
is never used, with its load and delete (it can only be used by a successor's
compute: a loaded node is blue, so it is not stored): this saves a load.
(3) Move each store right after the compute that began its copy (a stored copy
began with a compute: a load needs the node blue, a store needs it not); the
blue set only grows earlier, and no load of the node falls between, since it
is red there. (4) Move each load later, to right before the first compute
that uses its copy, and each delete earlier, to right after the last use of
its copy (copies still alive at the end are deleted there): red sets only
shrink, nothing that needed the node red moves out of its copy, and a node
that is not red may be loaded or computed again later exactly as before.
Each rule removes moves or moves them in one direction, and none breaks the
others, so applying them until nothing changes ends, with the same or lower
I/O. In the result, between two computes come first the store of the first
(if any), then the deletes of copies whose last use it was, then the loads
for the second; every red node is on its way to a use. So a schedule is a
sequence of steps, each:

    load the predecessors of w that are not red, compute w, store w or not,
    drop any of w's predecessors and w itself (a drop ends a copy),

with ``|R | preds(w)| + 1 <= M`` at the compute, ``R`` the red set between
steps, where a node is kept only if it has a later use. Outputs: an output is
computed once in a reduced schedule (its only use is its single store), so
its step stores and drops it. A node from which no output still to be stored
can be reached is *dead*: never kept, and its blue bit is dropped from the
state (nothing can use it again). Isolated nodes are never touched.

Heuristic
---------
``h(R, B)`` = (outputs not blue) + the minimum weight of a vertex cut between
the inputs and those outputs, a node weighing 0 if red, 1 if blue (a load),
2 if neither (a non-output must be stored, then loaded, to be read without
recomputing it), and the outputs themselves uncuttable. Admissible: each
remaining output needs its store; follow any path from an input to an
unfinished output ``o`` backwards from ``o``'s compute: the copy of each
predecessor used there came from a compute (then recurse into that compute,
which is earlier) or from a load or the state's red set; since an input is
never computed, some node of the path is red now or loaded later, so the red
and loaded nodes form such a cut, and each loaded node costs at least its
weight (its store, counted once, and its loads, counted once per node). The
search reopens states whose cost improves, so an admissible, not necessarily
consistent, heuristic keeps the first goal taken from the queue optimal. The
flow is evaluated lazily: a state enters the queue with the cheap count of
outputs, and is pushed back with the flow bound when it is first taken.

An ``upper`` schedule (of cost ``U``) lets the search drop every state whose
bound reaches ``U``; if nothing cheaper is found, ``upper`` is optimal.

References
----------
J.-W. Hong and H. T. Kung, "I/O complexity: the red-blue pebble game", STOC 1981.
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass

from spartition.core.bounds import require_memory
from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.errors import SpartitionError

__all__ = ["STEP_SEARCH_ASSUMPTIONS", "StepResult", "step_search"]

#: What a step-search optimum rests on, as results list it (each item proven in the module docstring).
STEP_SEARCH_ASSUMPTIONS = (
    "recompute, no cap: exhaustive A* over normal-form steps (reduced schedule, store right after compute, "
    "lazy loads, eager deletes)",
    "heuristic: outputs left to store + min vertex cut inputs -> outputs (red 0, blue 1, other 2), admissible",
)

_INF = 1 << 30


@dataclass(frozen=True)
class StepResult:
    """The outcome of :func:`step_search`: exact unless ``complete`` is False.

    Attributes
    ----------
    io : int
        Best I/O found (the optimum when ``complete``).
    lower_bound : int
        Proven lower bound (``io`` when ``complete``).
    schedule : Schedule
        A valid schedule of cost ``io`` (checked by replay).
    complete : bool
        The search finished: ``io`` is optimal.
    states, expanded : int
        States stored, and states expanded.
    wall_s : float
    """

    io: int
    lower_bound: int
    schedule: Schedule
    complete: bool
    states: int
    expanded: int
    wall_s: float


class _Dag:
    """Bitmask tables of a compact DAG for the search."""

    def __init__(self, c):
        n = c.n
        self.n = n
        self.names = c.names
        self.preds = c.pred_lists()
        self.succs = c.succ_lists()
        self.pred_mask = [sum(1 << u for u in self.preds[v]) for v in range(n)]
        self.inputs = sum(1 << v for v in range(n) if c.is_input[v])
        self.outputs = sum(1 << v for v in range(n) if c.is_output[v] and not c.is_input[v])
        reach = [0] * n  # outputs reachable from v, v included
        for v in reversed(range(n)):
            reach[v] = (1 << v) & self.outputs
            for w in self.succs[v]:
                reach[v] |= reach[w]
        self.reach = reach
        self.computable = [v for v in range(n) if not c.is_input[v] and c.preds(v).size]
        self.is_output = [bool(self.outputs >> v & 1) for v in range(n)]

    def live(self, U: int) -> int:
        """Nodes from which an output of ``U`` can be reached."""
        return sum(1 << v for v in range(self.n) if self.reach[v] & U)


def _cut_bound(d: _Dag, R: int, B: int, U: int) -> int:
    """Minimum weighted vertex cut between the inputs and the outputs of ``U`` (the heuristic above)."""
    n = d.n
    if not U:
        return 0
    live = d.live(U)
    # node-split flow network: v_in = 2v, v_out = 2v + 1, source 2n, sink 2n + 1
    cap = {}
    adj = [[] for _ in range(2 * n + 2)]

    def edge(a, b, k):
        if (a, b) not in cap:
            adj[a].append(b)
            adj[b].append(a)
            cap[b, a] = 0
        cap[a, b] = k

    src, snk = 2 * n, 2 * n + 1
    for v in range(n):
        if not live >> v & 1 or R >> v & 1:
            continue  # a red node cuts every path through it for free
        if U >> v & 1:
            k = _INF
            edge(2 * v + 1, snk, _INF)
        elif B >> v & 1 or d.inputs >> v & 1:
            k = 1
        else:
            k = 2
        edge(2 * v, 2 * v + 1, k)
        if d.inputs >> v & 1:
            edge(src, 2 * v, _INF)
        for w in d.succs[v]:
            if live >> w & 1 and not R >> w & 1:
                edge(2 * v + 1, 2 * w, _INF)
    flow = 0
    while True:
        parent = {src: src}
        queue = [src]
        for a in queue:
            for b in adj[a]:
                if b not in parent and cap[a, b] > 0:
                    parent[b] = a
                    queue.append(b)
            if snk in parent:
                break
        if snk not in parent:
            return flow
        push, b = _INF, snk
        while b != src:
            a = parent[b]
            push = min(push, cap[a, b])
            b = a
        b = snk
        while b != src:
            a = parent[b]
            cap[a, b] -= push
            cap[b, a] += push
            b = a
        flow += push
        if flow >= _INF:
            raise SpartitionError("an unfinished output cannot be reached from the inputs (bug)")


def _successors(d: _Dag, M: int, R: int, B: int, U: int):
    """Every normal-form step from state (R, B): ``(cost, R', B', U', step)``."""
    for w in d.computable:
        bw = 1 << w
        if R & bw or not d.reach[w] & U:
            continue
        pm = d.pred_mask[w]
        if pm & ~(R | B):
            continue  # a predecessor neither red nor blue: compute it first
        loads = pm & ~R
        if (R | pm).bit_count() + 1 > M:
            continue
        nl = loads.bit_count()
        preds = d.preds[w]
        if d.is_output[w]:
            options = [(1, False)]  # store, drop
        elif B & bw:
            options = [(0, True)]  # a blue node is recomputed only to be kept for a use
        else:
            options = [(1, False), (0, True), (1, True)]
        for store, keep in options:
            B2 = B | bw if store else B
            U2 = U & ~bw if store else U
            live = d.live(U2) if U2 != U else None
            base = R | pm
            if keep:
                base |= bw
            # preds of w that stay red: any subset of the live ones
            choice = [u for u in preds if live is None or live >> u & 1]
            fixed_drop = 0 if live is None else sum(1 << u for u in preds if not live >> u & 1)
            if live is not None:
                base &= live  # nodes dead now are dropped
                B2 &= live | d.inputs
            base &= ~fixed_drop
            for mask in range(1 << len(choice)):
                R2 = base
                for k, u in enumerate(choice):
                    if not mask >> k & 1:
                        R2 &= ~(1 << u)
                yield nl + store, R2, B2, U2, (w, loads, store, R2)


def step_search(dag, M: int, *, upper: Schedule | None = None, max_states: int | None = 5_000_000,
                time_limit: float | None = None) -> StepResult:
    """The minimum recompute I/O of ``dag`` with ``M`` red pebbles, by A* over normal-form steps.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
    upper : Schedule, optional
        A valid recompute (or oneshot) schedule: states whose bound reaches
        its I/O are dropped, and it is returned if nothing cheaper exists.
    max_states : int or None
        Stop after this many stored states.
    time_limit : float, optional
        Stop after this many seconds.

    Returns
    -------
    StepResult
        ``complete`` False when a limit stopped the search; then ``io`` is
        ``upper``'s and ``lower_bound`` the least bound left in the queue.

    Raises
    ------
    SpartitionError
        A limit stopped the search and no ``upper`` was given.

    Examples
    --------
    >>> from spartition.families.classic import fft, matmul
    >>> step_search(fft(1), 3).io, step_search(matmul(1, 1, 1), 3).io
    (4, 3)
    """
    c = as_compact(dag)
    require_memory(c, M)
    t0 = time.perf_counter()
    d = _Dag(c)
    U_io = None
    if upper is not None:
        U_io = replay(c, upper).io
    start = (0, d.inputs, d.outputs)
    key0 = (0, 0, d.outputs)
    dist = {key0: 0}
    parent = {key0: None}
    hval = {}
    queue = [(d.outputs.bit_count(), 0, key0, start)]
    expanded = 0
    while queue:
        f, g, key, (R, B, U) = heapq.heappop(queue)
        if dist[key] < g:
            continue
        if U_io is not None and f >= U_io:
            break
        if not U:
            return _finish(c, d, M, parent, key, g, g, True, len(dist), expanded, t0)
        if key not in hval:
            hval[key] = U.bit_count() + _cut_bound(d, R, B, U)
            if g + hval[key] > f:
                heapq.heappush(queue, (g + hval[key], g, key, (R, B, U)))
                continue
        if (max_states is not None and len(dist) > max_states) or (
                time_limit is not None and time.perf_counter() - t0 > time_limit):
            if upper is None:
                raise SpartitionError(f"step search stopped after {len(dist)} states (limit)")
            return StepResult(U_io, f, upper, False, len(dist), expanded, time.perf_counter() - t0)
        expanded += 1
        for cost, R2, B2, U2, step in _successors(d, M, R, B, U):
            g2 = g + cost
            k2 = (R2, B2 & ~d.inputs, U2)
            if k2 in dist and dist[k2] <= g2:
                continue
            h2 = hval.get(k2, U2.bit_count())
            if U_io is not None and g2 + h2 >= U_io:
                continue
            dist[k2] = g2
            parent[k2] = (key, step)
            heapq.heappush(queue, (g2 + h2, g2, k2, (R2, B2, U2)))
    if upper is None:
        raise SpartitionError("no schedule reaches the goal (unreachable: M was checked)")
    return StepResult(U_io, U_io, upper, True, len(dist), expanded, time.perf_counter() - t0)


def _finish(c, d: _Dag, M, parent, key, io, lb, complete, states, expanded, t0) -> StepResult:
    """Rebuild the schedule along the parent pointers and replay it."""
    steps = []
    while parent[key] is not None:
        key, step = parent[key]
        steps.append(step)
    steps.reverse()
    names = d.names
    moves = []
    red = 0
    for w, loads, store, R2 in steps:
        for u in range(d.n):
            if loads >> u & 1:
                moves.append(("load", names[u]))
        moves.append(("compute", names[w]))
        if store:
            moves.append(("store", names[w]))
        after = red | loads | (1 << w)
        for u in range(d.n):
            if after >> u & 1 and not R2 >> u & 1:
                moves.append(("delete", names[u]))
        red = R2
    schedule = Schedule(M, "recompute", tuple(moves), meta={"method": "step-search"})
    res = replay(c, schedule)
    if res.io != io:
        raise SpartitionError(f"step search schedule costs {res.io}, not {io} (bug)")
    return StepResult(io, lb, schedule, complete, states, expanded, time.perf_counter() - t0)
