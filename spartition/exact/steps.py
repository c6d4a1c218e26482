"""Exact optimal I/O by A* over normal-form *steps*, with a max-flow heuristic (recompute) or a load count (oneshot).

The brute force of :mod:`spartition.exact.brute` searches every move; this
search makes one *step* per compute and keeps the optimum, by the normal form
below. It is exact (no cap, no time horizon). For recompute it is the search
of :func:`spartition.exact.solve.solve_io` on small DAGs; for oneshot
(:class:`_OneshotSpace`) it is an exact solver independent of the CP-SAT
models, which the tests set against them.

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

import numpy as np
from ortools.graph.python import max_flow

from spartition.core.bounds import require_memory
from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.core.symmetry import symmetry_precedences
from spartition.errors import SpartitionError

__all__ = ["STEP_SEARCH_ASSUMPTIONS", "StepResult", "step_search"]

#: What a recompute step-search optimum rests on, as solve_io's results list it (each item proven in
#: the module docstring; solve_io runs the search for recompute only).
STEP_SEARCH_ASSUMPTIONS = (
    "recompute, no cap: exhaustive A* over normal-form steps (reduced schedule, store right after compute, "
    "lazy loads, eager deletes)",
    "heuristic: outputs left to store + min vertex cut inputs -> outputs (red 0, blue 1, other 2), admissible",
)

_INF = 1 << 30
#: Groups up to this order are enumerated, and a state is stored as the least image over the group.
_FULL_GROUP = 64


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
        self.edges = [(v, w) for v in range(n) for w in self.succs[v]]
        self._live = {}
        self.nbytes = (n + 7) // 8
        self._network = None

    @property
    def network(self) -> "_CutNetwork":
        """The heuristic's flow network, built on first use (the recompute heuristic only)."""
        if self._network is None:
            self._network = _CutNetwork(self)
        return self._network

    def live(self, U: int) -> int:
        """Nodes from which an output of ``U`` can be reached."""
        live = self._live.get(U)
        if live is None:
            live = self._live[U] = sum(1 << v for v in range(self.n) if self.reach[v] & U)
        return live

    def bits(self, mask: int) -> np.ndarray:
        """``mask`` as a bool array of length ``n``."""
        raw = np.frombuffer(mask.to_bytes(self.nbytes, "little"), dtype=np.uint8)
        return np.unpackbits(raw, bitorder="little")[: self.n].astype(bool)


class _Symmetry:
    """Automorphisms of the DAG acting on state bitmasks, to store one state per orbit.

    An automorphism maps normal-form steps to normal-form steps of the same
    cost and the heuristic to itself, so a state and its image have the same
    cost to go; storing any image in place of a state is sound. With a group
    of at most :data:`_FULL_GROUP` elements the image is the least over the
    whole group (one state per orbit); with a larger group, the generators
    and their inverses are applied while they lower the key (some image, not
    always the least: sound, a smaller reduction).
    """

    def __init__(self, c, generators):
        n = c.n
        self.n = n
        gens = [tuple(int(g[v]) for v in range(n)) for g in generators]
        gens += [tuple(sorted(range(n), key=lambda v: g[v])) for g in gens]  # inverses
        group = {tuple(range(n))}
        frontier = list(group)
        while frontier and len(group) <= _FULL_GROUP:
            nxt = []
            for h in frontier:
                for g in gens:
                    gh = tuple(g[h[v]] for v in range(n))
                    if gh not in group:
                        group.add(gh)
                        nxt.append(gh)
            frontier = nxt
        self.full = not frontier
        perms = sorted(group) if self.full else gens
        self.perms = [p for p in perms if p != tuple(range(n))]
        self.tables = [self._tables(p) for p in self.perms]

    def _tables(self, perm):
        chunks = []
        for base in range(0, self.n, 8):
            table = []
            for byte in range(256):
                m = 0
                for k in range(8):
                    if byte >> k & 1 and base + k < self.n:
                        m |= 1 << perm[base + k]
                table.append(m)
            chunks.append(table)
        return chunks

    @staticmethod
    def apply(tables, mask: int) -> int:
        out = 0
        for table in tables:
            out |= table[mask & 255]
            mask >>= 8
        return out

    def _lower_image(self, tables, key, bound):
        """The image of ``key`` under ``tables`` if it is below ``bound``, else None.

        Keys compare by their first mask first, so an image whose first mask
        is larger is rejected before the other masks are mapped (most are).
        """
        first = self.apply(tables, key[0])
        if first > bound[0]:
            return None
        img = (first, *(self.apply(tables, m) for m in key[1:]))
        return img if img < bound else None

    def canonical(self, key):
        """``(image, perm)``: an image of the state key ``(R, B, U)`` and the permutation giving it (or None)."""
        best, best_perm = key, None
        if self.full:
            for perm, tables in zip(self.perms, self.tables):
                img = self._lower_image(tables, key, best)
                if img is not None:
                    best, best_perm = img, perm
            return best, best_perm
        improved = True
        while improved:
            improved = False
            for perm, tables in zip(self.perms, self.tables):
                img = self._lower_image(tables, best, best)
                if img is not None:
                    best, improved = img, True
                    best_perm = perm if best_perm is None else tuple(perm[best_perm[v]] for v in range(self.n))
        return best, best_perm


class _CutNetwork:
    """The node-split flow network of the heuristic, built once; a state only sets its capacities.

    Node ``2 v`` is the entry of ``v``, ``2 v + 1`` its exit, ``2 n`` the
    source and ``2 n + 1`` the sink. Arcs, in this order: entry -> exit of
    each node (the node's weight), exit -> entry along each DAG edge
    (unbounded), source -> entry of each input, exit -> sink of each output.
    """

    def __init__(self, d: _Dag):
        n = d.n
        self.source, self.sink = 2 * n, 2 * n + 1
        self.input_nodes = np.array([v for v in range(n) if d.inputs >> v & 1], dtype=np.int64)
        self.output_nodes = np.array([v for v in range(n) if d.outputs >> v & 1], dtype=np.int64)
        tails = [2 * v for v in range(n)] + [2 * v + 1 for v, _ in d.edges]
        heads = [2 * v + 1 for v in range(n)] + [2 * w for _, w in d.edges]
        tails += [self.source] * len(self.input_nodes) + [2 * int(v) + 1 for v in self.output_nodes]
        heads += [2 * int(v) for v in self.input_nodes] + [self.sink] * len(self.output_nodes)
        self.flow = max_flow.SimpleMaxFlow()
        caps = np.zeros(len(tails), dtype=np.int64)
        caps[n:n + len(d.edges)] = _INF
        self.flow.add_arcs_with_capacity(np.array(tails, dtype=np.int64), np.array(heads, dtype=np.int64), caps)
        first = n + len(d.edges)
        self.varying = np.concatenate([np.arange(n), np.arange(first, len(tails))]).astype(np.int64)

    def min_cut(self, live: np.ndarray, blue: np.ndarray, unfinished: np.ndarray) -> int:
        """The minimum cut for node weights: 0 unless live, then unbounded if unfinished, 1 if blue, else 2."""
        weight = np.where(live, np.where(unfinished, _INF, np.where(blue, 1, 2)), 0)
        caps = np.concatenate([weight, np.where(weight[self.input_nodes] > 0, _INF, 0),
                               np.where(unfinished[self.output_nodes], _INF, 0)])
        self.flow.set_arcs_capacity(self.varying, caps.astype(np.int64))
        if self.flow.solve(self.source, self.sink) != self.flow.OPTIMAL:
            raise SpartitionError("the heuristic's max-flow did not solve (bug)")
        return int(self.flow.optimal_flow())


def _cut_bound(d: _Dag, R: int, B: int, U: int) -> int:
    """Minimum weighted vertex cut between the inputs and the outputs of ``U`` (the heuristic above).

    Solved by OR-Tools' max-flow on the network :class:`_CutNetwork` built
    once per DAG (tests/exact/test_steps.py compares it with networkx's minimum cut).
    """
    if not U:
        return 0
    flow = d.network.min_cut(d.bits(d.live(U) & ~R), d.bits(B | d.inputs), d.bits(U))
    if flow >= _INF:
        raise SpartitionError("an unfinished output cannot be reached from the inputs (bug)")
    return flow


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
        if B & bw:
            options = [(0, True)]  # a blue node is recomputed only to be kept for a use
        elif d.is_output[w]:
            # store, drop; an output with uses (marked ``output: true``) may also stay red for them
            options = [(1, False), (1, True)] if d.succs[w] else [(1, False)]
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


class _RecomputeSpace:
    """Recompute states ``(R, B \\ inputs, U)``: red set, blue non-inputs, outputs still to store."""

    variant = "recompute"

    def __init__(self, d: _Dag):
        self.d = d
        self.start = (0, 0, d.outputs)

    @staticmethod
    def is_goal(key) -> bool:
        return not key[2]

    @staticmethod
    def cheap(key) -> int:
        return key[2].bit_count()

    def bound(self, key) -> int:
        R, B, U = key
        return U.bit_count() + _cut_bound(self.d, R, B | self.d.inputs, U)

    def steps(self, M: int, key):
        R, B, U = key
        inputs = self.d.inputs
        for cost, R2, B2, U2, step in _successors(self.d, M, R, B | inputs, U):
            yield cost, (R2, B2 & ~inputs, U2), step


class _OneshotSpace:
    """Oneshot states ``(R, B, C)``: red set, blue non-inputs still read, computed set.

    The normal form of the module docstring holds for oneshot too (its rules
    remove or move moves, never add a compute), with one more constraint: a
    node is computed at most once, so a computed node that an uncomputed node
    still reads (a *live* node) must stay red or be blue. A step that would
    drop such a node with neither is not generated.

    Heuristic: outputs not computed (each needs its store) plus live nodes
    that are not red (each needs at least one load: it cannot be computed
    again). Admissible, and consistent: a step lowers it by at most its
    loads plus its store.
    """

    variant = "oneshot"

    def __init__(self, d: _Dag):
        self.d = d
        self.start = (0, 0, 0)
        # every successor keeps a node live: each node reaches an output, since every sink is one
        self.reads = [sum(1 << w for w in d.succs[v]) for v in range(d.n)]
        self.relevant = d.computable

    def is_goal(self, key) -> bool:
        return not self.d.outputs & ~key[2]

    def live(self, C: int) -> int:
        avail = C | self.d.inputs
        return sum(1 << v for v in range(self.d.n) if avail >> v & 1 and self.reads[v] & ~C)

    def cheap(self, key) -> int:
        R, _B, C = key
        return (self.d.outputs & ~C).bit_count() + (self.live(C) & ~R).bit_count()

    bound = cheap

    def steps(self, M: int, key):
        d = self.d
        R, B, C = key
        live = self.live(C)
        for w in self.relevant:
            bw = 1 << w
            if C & bw:
                continue
            pm = d.pred_mask[w]
            if pm & ~(C | d.inputs) or (R | pm).bit_count() + 1 > M:
                continue
            loads = pm & ~R
            C2 = C | bw
            dead = sum(1 << u for u in d.preds[w] if not self.reads[u] & ~C2)
            live2 = (live | (bw if self.reads[w] & ~C2 else 0)) & ~dead
            if d.is_output[w]:
                options = [(1, False), (1, True)] if d.succs[w] else [(1, False)]
            else:
                options = [(1, False), (0, True), (1, True)]
            for store, keep in options:
                B2 = (B | bw if store else B) & live2
                base = (R | pm | (bw if keep else 0)) & live2
                choice = [u for u in d.preds[w] if live2 >> u & 1 and (B2 | d.inputs) >> u & 1]
                for mask in range(1 << len(choice)):
                    R2 = base
                    for k, u in enumerate(choice):
                        if not mask >> k & 1:
                            R2 &= ~(1 << u)
                    yield loads.bit_count() + store, (R2, B2, C2), (w, loads, store, R2)


#: The state spaces, by game variant.
SPACES = {"recompute": _RecomputeSpace, "oneshot": _OneshotSpace}


def step_search(dag, M: int, *, variant: str = "recompute", upper: Schedule | None = None,
                max_states: int | None = 5_000_000, time_limit: float | None = None,
                symmetry: bool = True) -> StepResult:
    """The minimum I/O of ``dag`` with ``M`` red pebbles, by A* over normal-form steps.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
    variant : {"recompute", "oneshot"}
        The game (:data:`SPACES`); the recompute search needs no cap.
    upper : Schedule, optional
        A valid schedule of ``variant`` (a oneshot one for either):
        states whose bound reaches its I/O are dropped, and it is returned
        if nothing cheaper exists.
    max_states : int or None
        Stop after this many stored states.
    time_limit : float, optional
        Stop after this many seconds.
    symmetry : bool
        Store one state per orbit of the DAG's automorphisms (:class:`_Symmetry`).

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
    >>> from spartition.families.classic.dag import fft, matmul
    >>> step_search(fft(1), 3).io, step_search(matmul(1, 1, 1), 3).io
    (4, 3)
    >>> step_search(fft(2), 3, variant="oneshot").io
    14
    """
    c = as_compact(dag)
    require_memory(c, M)
    t0 = time.perf_counter()
    d = _Dag(c)
    space = SPACES[variant](d)
    sym = None
    if symmetry:
        gens = symmetry_precedences(c, time_budget=2.0).generators
        sym = _Symmetry(c, gens) if gens else None
    U_io = None
    if upper is not None:
        # replayed at this M: a schedule for a larger M would give a ceiling below the optimum
        if (upper.M, upper.variant) != (M, variant):
            upper = Schedule(M, variant, upper.moves, meta=upper.meta)
        U_io = replay(c, upper).io
    key0 = space.start
    dist = {key0: 0}
    parent = {key0: None}
    hval = {}
    queue = [(space.cheap(key0), 0, key0)]
    expanded = 0
    while queue:
        f, g, key = heapq.heappop(queue)
        if dist[key] < g:
            continue
        if U_io is not None and f >= U_io:
            break
        if space.is_goal(key):
            return _finish(c, d, M, variant, parent, key, g, len(dist), expanded, t0)
        if key not in hval:
            hval[key] = space.bound(key)
            if g + hval[key] > f:
                heapq.heappush(queue, (g + hval[key], g, key))
                continue
        if (max_states is not None and len(dist) > max_states) or (
                time_limit is not None and time.perf_counter() - t0 > time_limit):
            if upper is None:
                why = "state limit" if max_states is not None and len(dist) > max_states else "time limit"
                raise SpartitionError(f"step search stopped after {len(dist):,} states ({why}; DAG too large)")
            return StepResult(U_io, f, upper, False, len(dist), expanded, time.perf_counter() - t0)
        expanded += 1
        for cost, k2, step in space.steps(M, key):
            g2 = g + cost
            perm = None
            if sym is not None:
                k2, perm = sym.canonical(k2)
            if k2 in dist and dist[k2] <= g2:
                continue
            h2 = hval.get(k2)
            if h2 is None:
                h2 = space.cheap(k2)
            if U_io is not None and g2 + h2 >= U_io:
                continue
            dist[k2] = g2
            parent[k2] = (key, step, perm)
            heapq.heappush(queue, (g2 + h2, g2, k2))
    if upper is None:
        raise SpartitionError("no schedule reaches the goal (unreachable: M was checked)")
    return StepResult(U_io, U_io, upper, True, len(dist), expanded, time.perf_counter() - t0)


def _finish(c, d: _Dag, M, variant, parent, key, io, states, expanded, t0) -> StepResult:
    """Rebuild the schedule along the parent pointers and replay it."""
    steps = []
    while parent[key] is not None:
        key, step, perm = parent[key]
        steps.append((step, perm))
    steps.reverse()
    names = d.names
    moves = []
    red = 0
    h = list(range(d.n))  # the map from the real state to the stored one

    def back(mask):
        return sum(1 << u for u in range(d.n) if mask >> h[u] & 1)

    for (w, loads, store, R2), perm in steps:
        w, loads, R2 = h.index(w), back(loads), back(R2)
        if perm is not None:
            h = [perm[h[u]] for u in range(d.n)]
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
    schedule = Schedule(M, variant, tuple(moves), meta={"method": "step-search"})
    res = replay(c, schedule)
    if res.io != io:
        raise SpartitionError(f"step search schedule costs {res.io}, not {io} (bug)")
    return StepResult(io, io, schedule, True, states, expanded, time.perf_counter() - t0)
