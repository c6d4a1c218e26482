"""Re-optimise windows of a schedule exactly: CP-SAT over the loads, stores and evictions of k computes.

The compute order is kept. A window is ``k`` consecutive computes; the red
and blue sets at its left edge are those the schedule has there, the red set
at its right edge is fixed, and every value that the rest of the schedule
loads (or an output it does not store) must be blue when the window ends.
Inside, CP-SAT chooses when each value is loaded, stored and evicted, with
at most ``M`` red pebbles, minimising the window's loads plus stores. A
cheaper window is spliced in (stores that the rest of the schedule makes of
a value already blue are dropped) and the whole schedule replayed before it
is kept. A window proven ``OPTIMAL`` is optimal for its compute order and
edges only, not for the DAG.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ortools.sat.python import cp_model

from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.cpsat import Interrupt, new_solver, solve_interruptibly, status_name
from spartition.status import Status

__all__ = ["WindowResult", "improve_windows"]


@dataclass(frozen=True)
class WindowResult:
    """What :func:`improve_windows` did.

    Attributes
    ----------
    schedule : Schedule
        The input with every improved window spliced in (replayed valid).
    before, after : int
        Replayed I/O of the input and of ``schedule``.
    windows : int
        Windows solved.
    improved : int
        Windows spliced in.
    optimal : int
        Windows CP-SAT proved optimal (for their compute order and edges).
    covered : float
        Fraction of the computes the solved windows covered (below 1 when
        the time limit stopped the pass).
    time_limited : bool
        The time limit stopped the pass or cut a window's search short.
    interrupted : bool
        Ctrl-C stopped the pass (the windows solved before it are kept).
    """

    schedule: Schedule
    before: int
    after: int
    windows: int
    improved: int
    optimal: int
    covered: float
    time_limited: bool = False
    interrupted: bool = False


def _segments(moves):
    """The moves cut after every compute: segment t ends with the t-th compute (the last holds the tail)."""
    segs, cur = [], []
    for m in moves:
        cur.append(m)
        if m[0] == "compute":
            segs.append(cur)
            cur = []
    segs.append(cur)
    return segs


def _apply(red, blue, moves):
    for m, v in moves:
        if m in ("load", "compute"):
            red.add(v)
        elif m == "delete":
            red.discard(v)
        else:
            blue.add(v)


def _model(preds, computes, red0, blue0, red_end, needed, M):
    """The window's CP-SAT model and its variables: x[u, t] red before compute t, ld, st per slot."""
    k = len(computes)
    U = sorted(set(red0) | set(computes) | {u for c in computes for u in preds[c]} | set(red_end))
    m = cp_model.CpModel()
    x, ld, st = {}, {}, {}
    for t in range(k + 1):
        for u in U:
            x[u, t] = m.new_bool_var(f"x_{u}_{t}")
            ld[u, t] = m.new_bool_var(f"ld_{u}_{t}")
            st[u, t] = m.new_bool_var(f"st_{u}_{t}")
    for t in range(k + 1):
        prev = {u: (int(u in red0) if t == 0 else (x[u, t - 1] if u != computes[t - 1] else 1)) for u in U}
        for u in U:
            p = prev[u]
            m.add(x[u, t] <= p + ld[u, t])  # red before the compute: kept or loaded
            m.add(ld[u, t] + p <= 1)  # no load of a red value
            m.add(st[u, t] <= p)  # a store is of a value red before the slot
            blue = int(u in blue0) + sum(st[u, s] for s in range(t + 1))
            m.add(blue <= 1)  # a value is stored at most once, never if already blue
            m.add(ld[u, t] <= blue)
        if t < k:
            c = computes[t]
            for u in preds[c]:
                m.add(x[u, t] == 1)
            m.add(x[c, t] == 0)
            m.add(sum(x[u, t] for u in U) + 1 <= M)
        else:
            for u in U:
                m.add(x[u, t] == int(u in red_end))
    for u in needed:
        if u in U and u not in blue0:
            m.add(sum(st[u, t] for t in range(k + 1)) == 1)
    m.minimize(sum(ld.values()) + sum(st.values()))
    return m, U, x, ld, st


def _decode(solver, computes, red0, U, x, ld, st):
    moves = []
    k = len(computes)
    for t in range(k + 1):
        prev = {u: (u in red0 if t == 0 else (solver.value(x[u, t - 1]) or u == computes[t - 1])) for u in U}
        moves += [("store", u) for u in U if solver.value(st[u, t])]
        moves += [("delete", u) for u in U if prev[u] and not solver.value(x[u, t])]
        moves += [("load", u) for u in U if solver.value(ld[u, t])]
        if t < k:
            moves.append(("compute", computes[t]))
    return moves


def improve_windows(dag, schedule: Schedule, k: int = 16, time_limit: float = 60.0, window_time: float = 2.0) -> WindowResult:
    """Re-optimise windows of ``k`` computes of a one-shot schedule by CP-SAT (module docstring).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    schedule : Schedule
        A valid schedule that computes each node once.
    k : int
        Computes per window (windows do not overlap).
    time_limit : float
        Seconds for the whole pass; windows stop being solved after it, and
        the last one gets only what is left of it.
    window_time : float
        Deterministic-time limit of one window's solve (one worker, seed 0:
        the same input gives the same result unless the time limit cuts it).

    Returns
    -------
    WindowResult

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> wasteful = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("store", "c1"),
    ...     ("delete", "c1"), ("load", "c1"), ("delete", "c0"), ("compute", "c2"), ("store", "c2")])
    >>> r = improve_windows(chain(3), wasteful, k=2)
    >>> r.before, r.after, r.optimal
    (4, 2, 1)
    """
    start = time.perf_counter()
    c = as_compact(dag)
    before = replay(c, schedule).io
    names = c.names
    preds = {names[v]: [names[u] for u in ps] for v, ps in enumerate(c.pred_lists())}
    outputs = {names[v] for v in range(c.n) if c.is_output[v]}
    segs = _segments(schedule.moves)
    # the last segment that loads / stores each value: what the rest of the schedule needs, in O(1)
    last_load, last_store = {}, {}
    for t, seg in enumerate(segs):
        for mv, v in seg:
            if mv == "load":
                last_load[v] = t
            elif mv == "store":
                last_store[v] = t
    red, blue = set(), {names[v] for v in range(c.n) if c.is_input[v]}
    out = []
    n_seg = len(segs) - 1
    solved = improved = optimal = 0
    p = 0
    cut = False
    interrupt = Interrupt()
    while p < n_seg and time.perf_counter() - start <= time_limit and not interrupt:
        try:
            q = min(p + k, n_seg)
            # a store of a value an earlier (new) window already stored is dropped
            window = [mv for s in segs[p:q] for mv in s if not (mv[0] == "store" and mv[1] in blue)]
            computes = [v for mv, v in window if mv == "compute"]
            red_end, blue_end = set(red), set(blue)
            _apply(red_end, blue_end, window)
            candidates = red | red_end | set(computes) | {u for v in computes for u in preds[v]}
            needed = {u for u in candidates
                      if last_load.get(u, -1) >= q or (u in outputs and last_store.get(u, -1) < q)}
            model, U, x, ld, st = _model(preds, computes, red, blue, red_end, needed, schedule.M)
            left = time_limit - (time.perf_counter() - start)
            cut = cut or left < window_time
            solver = new_solver(max(min(window_time, left), 0.01), 1, 0, deterministic_time=window_time)
            # CP-SAT's own SIGINT handler ended one window and the loop went on: Ctrl-C was lost
            status = status_name(solve_interruptibly(solver, model, interrupt))
            chosen = window
            if status in (Status.OPTIMAL, Status.FEASIBLE) and \
                    round(solver.objective_value) < sum(1 for mv, _ in window if mv in ("load", "store")):
                chosen = _decode(solver, computes, red, U, x, ld, st)
        except KeyboardInterrupt:  # in a model's build (most of a window's time), not its search: the windows done stand
            interrupt.seen = True
            break
        solved += 1
        optimal += status == Status.OPTIMAL
        improved += chosen is not window
        _apply(red, blue, chosen)
        out += chosen
        p = q
    covered = p / max(n_seg, 1)
    for mv in (mv for s in segs[p:] for mv in s):
        if not (mv[0] == "store" and mv[1] in blue):
            out.append(mv)
            _apply(red, blue, [mv])
    candidate = Schedule(schedule.M, schedule.variant, tuple(out),
                         meta={**schedule.meta, "improved_by": "cp-sat windows"})
    after = replay(c, candidate).io
    if after >= before:
        candidate, after = schedule, before
    return WindowResult(candidate, before, after, solved, improved, optimal, covered, cut or covered < 1,
                        bool(interrupt))
