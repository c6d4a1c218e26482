"""Improve any replayed schedule: keep its compute order, re-choose every load, store and eviction.

A schedule's I/O is decided by two things: the order of its computes, and
what it keeps in fast memory between them. :func:`improve_schedule` keeps
the first and redoes the second: it replays the compute order with an
eviction rule that looks ahead (the furthest next use, Belady 1966, weighted
by whether the evicted value must first be stored), for several weights,
and keeps the cheapest result that the checker
(:func:`spartition.core.game.replay`) accepts, or the input when nothing is
cheaper. Loads and stores that the input makes without need (a value
stored and reloaded while it could have stayed, a store of a value never
read again) disappear on the way.

With write-backs the offline eviction problem is no longer solved by
Belady's rule (local register allocation with store costs is NP-hard), so
nothing here is called optimal: the result is a valid schedule that is never
more expensive than the input. :mod:`spartition.exact.windows` re-optimises
windows of it exactly.

References
----------
Belady, "A study of replacement algorithms for a virtual-storage computer"
(IBM Systems Journal, 1966); Farach-Colton & Liberatore, "On local register
allocation" (Journal of Algorithms, 2000).
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay, require_standard
from spartition.core.greedy import read_steps
from spartition.errors import InvalidSchedule
from spartition.settings import DEFAULT_VARIANT

__all__ = ["ImproveResult", "WEIGHTS", "evict_by_lookahead", "improve_schedule"]

#: How much further a value to be stored must be needed than a clean one to be evicted first
#: (1: plain furthest next use; inf: clean values always first).
WEIGHTS = (1.0, 1.5, 2.0, 3.0, 5.0, math.inf)

#: The CP-SAT windows' fixed cost (their set-up, the splice and the final replay), in eviction passes:
#: measured on fft k = 13 (114,688 nodes), about 2 passes; the margin keeps --time-limit.
WINDOW_SETUP_PASSES = 3

_NEVER = 1 << 62


@dataclass(frozen=True)
class ImproveResult:
    """What :func:`improve_schedule` did.

    Attributes
    ----------
    schedule : Schedule
        The cheapest valid schedule found (the input when nothing was cheaper).
    before, after : int
        Replayed I/O of the input and of ``schedule`` (``after <= before``).
    method : str
        ``"input"`` or the pass that produced ``schedule``, e.g.
        ``"lookahead-eviction(weight=2.0)"``.
    tried : tuple
        ``(pass, replayed I/O or None if the pass did not apply)`` for every pass run.
    time_limited : bool
        Whether the time limit stopped the passes before all had run.
    wall_s : float
    interrupted : bool
        Whether Ctrl-C stopped the passes (``schedule`` is the best before it).
    """

    schedule: Schedule
    before: int
    after: int
    method: str
    tried: tuple
    time_limited: bool
    wall_s: float
    interrupted: bool = False

    def to_dict(self) -> dict:
        return {
            "before": self.before,
            "after": self.after,
            "method": self.method,
            "tried": [{"pass": p, "io": io} for p, io in self.tried],
            "time_limited": self.time_limited,
            "interrupted": self.interrupted,
            "wall_s": round(self.wall_s, 3),
        }


def _compute_order(cdag, schedule):
    """The computed nodes in schedule order, or None if some node is computed twice."""
    index = cdag.index
    order = [index[v] for m, v in schedule.moves if m == "compute"]
    return order if len(set(order)) == len(order) else None


def evict_by_lookahead(dag, order, M: int, variant: str = DEFAULT_VARIANT, weight: float = 1.0) -> Schedule:
    """A schedule that computes ``order`` and evicts by weighted furthest next use.

    Before each compute, the missing predecessors are loaded; when fast memory
    is full, a red value other than the predecessors is evicted: among the
    values already in slow memory (clean) and those that would have to be
    stored first (dirty), the one with the furthest next use in each group,
    the dirty one only if its next use is more than ``weight`` times as far
    as the clean one's. A value is deleted right after its last use; an
    output is stored right after it is computed.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    order : list of int
        Compact indices of the non-input nodes to compute, each once, in a
        topological order (e.g. the computes of a valid schedule).
    M : int
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    weight : float
        ``1``: Belady's rule (clean first on ties); ``math.inf``: every clean
        value before any dirty one.

    Returns
    -------
    Schedule

    Raises
    ------
    InvalidSchedule
        If a compute needs more than ``M - 1`` predecessors, or a predecessor
        is neither an input nor computed earlier in ``order``.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import as_compact
    >>> c = as_compact(chain(3))
    >>> s = evict_by_lookahead(c, [c.index["c1"], c.index["c2"]], 2)
    >>> s.moves
    (('load', 'c0'), ('compute', 'c1'), ('delete', 'c0'), ('compute', 'c2'), ('delete', 'c1'), ('store', 'c2'), ('delete', 'c2'))
    """
    c = as_compact(dag)
    names, preds = c.names, c.pred_lists()
    is_output = c.is_output.tolist()
    uses = read_steps(preds, order, c.n)
    ptr = [0] * c.n

    def next_use(u):
        p = ptr[u]
        return uses[u][p] if p < len(uses[u]) else _NEVER

    moves = []
    red = set()
    blue = set(int(v) for v in range(c.n) if c.is_input[v])
    heaps = ([], [])  # clean, dirty: (-next use, node); stale entries skipped on pop

    def push(u):
        heapq.heappush(heaps[u not in blue], (-next_use(u), u))

    def top(h, pinned, aside):
        while h:
            neg, u = h[0]
            if u not in red or -neg != next_use(u) or (h is heaps[0]) != (u in blue):
                heapq.heappop(h)
                continue
            if u in pinned:
                aside.append(heapq.heappop(h))
                continue
            return -neg, u
        return None

    for k, v in enumerate(order):
        pv = preds[v]
        if len(set(pv)) + 1 > M:
            raise InvalidSchedule(f"compute {names[v]!r} needs {len(set(pv)) + 1} red pebbles, more than M = {M}")
        pinned = set(pv)
        missing = [u for u in dict.fromkeys(pv) if u not in red]
        for u in missing:
            if u not in blue:
                raise InvalidSchedule(f"predecessor {names[u]!r} of {names[v]!r} is neither an input nor computed before it")
        aside = []
        while len(red) + len(missing) + 1 > M:
            clean, dirty = top(heaps[0], pinned, aside), top(heaps[1], pinned, aside)
            if dirty is None or (clean is not None and clean[0] - k >= (dirty[0] - k) / weight):
                u = clean[1]
                heapq.heappop(heaps[0])
            else:
                u = dirty[1]
                heapq.heappop(heaps[1])
                moves.append(("store", names[u]))
                blue.add(u)
            moves.append(("delete", names[u]))
            red.discard(u)
        for item in aside:
            heapq.heappush(heaps[item[1] not in blue], item)
        for u in missing:
            moves.append(("load", names[u]))
            red.add(u)
        moves.append(("compute", names[v]))
        red.add(v)
        for u in dict.fromkeys(pv):
            ptr[u] += pv.count(u)
            if next_use(u) == _NEVER:
                moves.append(("delete", names[u]))
                red.discard(u)
            else:
                push(u)
        if is_output[v] and v not in blue:  # a recomputed output (one with uses) is blue already
            moves.append(("store", names[v]))
            blue.add(v)
        if next_use(v) == _NEVER:
            moves.append(("delete", names[v]))
            red.discard(v)
        else:
            push(v)
    return Schedule(M, variant, tuple(moves), meta={"method": f"lookahead-eviction(weight={weight})"})


def improve_schedule(dag, schedule: Schedule, time_limit: float | None = None, weights=WEIGHTS,
                     M: int | None = None, window: int = 0) -> ImproveResult:
    """The cheapest valid schedule with the input's compute order, or the input itself.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    schedule : Schedule
        A valid schedule (it is replayed first; an invalid one raises).
    M : int, optional
        The memory of the result (default the schedule's). With another M
        the compute order is re-pebbled there (a retarget): ``before`` is
        still the input's I/O at its own M, and the input itself is a
        candidate only if ``M`` is larger (a schedule valid at ``M`` is
        valid with more memory); ``after <= before`` then holds only for
        ``M >= schedule.M``.
    window : int
        If positive, a last pass re-optimises windows of this many computes
        of the best schedule by CP-SAT (:func:`spartition.exact.windows.improve_windows`)
        in the time left (30 s without a time limit).
    time_limit : float, optional
        Seconds; the passes stop when it is exceeded, and the result says so
        (``time_limited``). One eviction pass runs even past it when the
        input is no answer (another, smaller ``M``) or the limit is positive;
        the CP-SAT windows start only if the time left exceeds what their
        set-up costs (measured as three eviction passes), which on a DAG of
        10^5 nodes is seconds.
    weights : iterable of float
        The eviction weights tried (:func:`evict_by_lookahead`).

    Returns
    -------
    ImproveResult
        ``after <= before``; ``schedule`` replays at ``after``.

    Raises
    ------
    IllegalMove
        If the input schedule is invalid.

    Notes
    -----
    A schedule that computes some node twice (recomputation) keeps its
    order-dependent values only with the recomputations, which these passes
    do not model: it is returned unchanged (``tried`` says why). Ctrl-C
    stops the passes: the best schedule so far is returned, ``interrupted``
    set.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> wasteful = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("store", "c1"),
    ...     ("delete", "c1"), ("load", "c1"), ("delete", "c0"), ("compute", "c2"), ("store", "c2")])
    >>> r = improve_schedule(chain(3), wasteful)
    >>> r.before, r.after
    (4, 2)
    """
    require_standard(schedule, "improve")
    start = time.perf_counter()
    c = as_compact(dag)
    before = replay(c, schedule).io
    target = schedule.M if M is None else M
    best = (before, Schedule(target, schedule.variant, schedule.moves, meta=schedule.meta), "input")
    if target < schedule.M:
        best = (math.inf, None, "none")
    tried = []
    order = _compute_order(c, schedule)
    limited = interrupted = False
    pass_s = 0.0  # the slowest eviction pass: the windows' set-up walks the schedule as often
    # a caller whose time is already spent (the command read a big DAG) gets the input back, if it answers
    first_runs = time_limit is None or time_limit > 0 or best[1] is None
    if order is None:
        tried.append(("lookahead-eviction (skipped: the schedule recomputes a node)", None))
    else:
        try:
            for k, w in enumerate(weights):
                if (k or not first_runs) and time_limit is not None and time.perf_counter() - start > time_limit:
                    limited = True
                    break
                t = time.perf_counter()
                candidate = evict_by_lookahead(c, order, target, schedule.variant, w)
                io = replay(c, candidate).io
                pass_s = max(pass_s, time.perf_counter() - t)
                name = candidate.meta["method"]
                tried.append((name, io))
                if io < best[0]:
                    best = (io, candidate, name)
        except KeyboardInterrupt:
            if best[1] is None:  # nothing to answer with
                raise
            interrupted = True
    if window > 0 and best[1] is not None and order is not None and not interrupted:
        from spartition.exact.windows import improve_windows

        left = 30.0 if time_limit is None else time_limit - (time.perf_counter() - start)
        w = None
        if left > WINDOW_SETUP_PASSES * pass_s:
            try:
                w = improve_windows(c, best[1], k=window, time_limit=left - WINDOW_SETUP_PASSES * pass_s)
            except KeyboardInterrupt:  # in the windows' set-up, outside their searches: the passes' best stands
                tried.append((f"cp-sat windows (k={window}; stopped by Ctrl-C in their set-up)", None))
                interrupted = True
        else:
            tried.append((f"cp-sat windows (k={window}; skipped: {max(left, 0):.1f} s left, their set-up takes "
                          f"about {WINDOW_SETUP_PASSES * pass_s:.1f} s)", None))
            limited = True
        if w is not None:
            tried.append((f"cp-sat windows (k={window}, {w.windows} solved, {w.optimal} optimal, "
                          f"{w.covered:.0%} of the computes)", w.after))
            limited = limited or w.time_limited
            interrupted = w.interrupted
            if w.after < best[0]:
                best = (w.after, w.schedule, f"{best[2]} + cp-sat windows(k={window})")
    io, sched, method = best
    if sched is None:
        raise InvalidSchedule(f"no pass applies to this schedule at M = {target} (it recomputes a node)")
    if method != "input":
        sched = Schedule(sched.M, sched.variant, sched.moves,
                         meta={**schedule.meta, "improved_by": method, "io_before": before})
    return ImproveResult(sched, before, io, method, tuple(tried), limited, time.perf_counter() - start, interrupted)
