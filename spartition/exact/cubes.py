"""Cube-and-conquer for the MaxSAT engine: split the order model on a few order literals, solve each cube.

When RC2 stalls on the whole order model, the model is split on ``k``
order literals "``a`` is computed before ``b``" (:func:`split_pairs`) into
``2^k`` cubes, each the order CNF with ``k`` unit clauses
(:func:`spartition.exact.maxsat.add_cube`), and each cube is solved by RC2
in its own process, ``workers`` at a time (:func:`cube_search`).

Why the answer is proven
------------------------
Every model of the order CNF sets each split literal one way, so it lies in
exactly one cube: the cubes partition the models. Hence the model's optimum
is the least of the cubes' optima, and **the least of the cubes' proven
bounds is a proven bound of the whole model** (each cube's bound holds for
the models in it, :mod:`spartition.exact.maxsat`), whatever state each cube
ended in. A cube with no proven bound (not started, or stopped before its
first core) leaves the whole model with none from this engine; a cube with
no model (RC2 says the cube's clauses are unsatisfiable, or ancestry orders
the pair the other way) holds no schedule and bounds nothing. The split
adds no reduction to those of the order model (the normal form and chain
dominance, :mod:`spartition.exact.formulations.order`), so the model's
optimum is still the true oneshot optimum, and every cube's optimum decodes
to a schedule that is replayed before it is used.

A cube whose bound reaches the best schedule found (in any cube, or the
hint) is stopped: it cannot hold a cheaper one, and its bound stays.

References
----------
M. J. H. Heule, O. Kullmann, S. Wieringa and A. Biere, "Cube and conquer:
guiding CDCL SAT solvers by lookaheads", HVC 2011.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from itertools import product

from spartition.core.dag import CompactDAG
from spartition.core.game import replay
from spartition.cpsat import Interrupt
from spartition.errors import SpartitionError
from spartition.exact.formulations.order import order_ancestors
from spartition.settings import DEFAULT_CUBE_DEPTH
from spartition.status import Status

__all__ = ["CubeOutcome", "cube_search", "cubes_of", "split_pairs"]



def split_pairs(c: CompactDAG, k: int) -> tuple:
    """``k`` pairs of computed nodes that ancestry leaves unordered, to split the order model on.

    The nodes with the most ancestors and descendants come first (their
    order decides the most of the schedule: which of two big subtrees runs
    first); each node is used in at most one pair, so the cubes are
    balanced where the DAG is. Deterministic: ties are broken by index.

    Parameters
    ----------
    c : CompactDAG
    k : int
        At most this many pairs (fewer when the DAG has fewer unordered ones).

    Returns
    -------
    tuple of (int, int)

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> from spartition.core.dag import compact
    >>> pairs = split_pairs(compact(matmul(2, 2, 2)), 2)
    >>> len(pairs), len({v for p in pairs for v in p})
    (2, 4)
    """
    anc = order_ancestors(c)
    computed = [v for v in range(c.n) if not c.is_input[v]]
    desc = {v: sum(1 for w in computed if anc[w] >> v & 1) for v in computed}
    rank = sorted(computed, key=lambda v: (-(bin(anc[v]).count("1") + desc[v]), v))
    used, pairs = set(), []
    for i, a in enumerate(rank):
        if len(pairs) >= k:
            break
        if a in used:
            continue
        for b in rank[i + 1:]:
            if b not in used and not (anc[a] >> b & 1) and not (anc[b] >> a & 1):
                pairs.append((min(a, b), max(a, b)))
                used |= {a, b}
                break
    return tuple(pairs)


def cubes_of(pairs) -> list:
    """Every orientation of ``pairs``: the ``2^k`` cubes, each a tuple of ``(before, after)`` pairs.

    Examples
    --------
    >>> cubes_of([(1, 2), (3, 4)])
    [((1, 2), (3, 4)), ((1, 2), (4, 3)), ((2, 1), (3, 4)), ((2, 1), (4, 3))]
    """
    return [tuple((a, b) if keep else (b, a) for (a, b), keep in zip(pairs, signs))
            for signs in product((True, False), repeat=len(pairs))]


@dataclass(frozen=True)
class CubeOutcome:
    """One cube's end: its status, proven bound (``inf``: no schedule in it) and replayed schedule."""

    cube: tuple
    status: str
    bound: float | None
    io: int | None
    seconds: float

    def to_dict(self) -> dict:
        return {"cube": [list(p) for p in self.cube], "status": self.status,
                "bound": None if self.bound is None or math.isinf(self.bound) else self.bound,
                "io": self.io, "seconds": round(self.seconds, 3)}


def cube_search(c: CompactDAG, M: int, time_limit: float, start: float, *, workers: int = 1,
                depth: int = DEFAULT_CUBE_DEPTH, symmetry_pairs=(), upper: int | None = None) -> dict:
    """Solve the order model of ``c`` at ``M`` cube by cube with RC2, ``workers`` cubes at a time.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    time_limit, start : float
        Seconds for the whole search and its start (``time.perf_counter``);
        a cube started with ``r`` seconds left and ``q`` cubes still to run
        gets ``r * workers / q`` of them.
    workers : int
        Cubes solved at once (one process each).
    depth : int
        Order literals split on (``2^depth`` cubes; fewer where the DAG
        orders most pairs itself).
    symmetry_pairs : iterable of (int, int)
        The order model's Puget precedences.
    upper : int, optional
        The I/O of a schedule known elsewhere: a cube whose bound reaches it is stopped.

    Returns
    -------
    dict
        ``schedule`` (replayed) and ``io`` of the cheapest cube optimum, or
        None; ``bound`` (the least cube bound, module docstring; None when
        some cube has none); ``closed`` (every cube settled: optimal, empty,
        or its bound at the best I/O known); ``cubes`` (one
        :class:`CubeOutcome` per cube); ``interrupted`` (Ctrl-C).

    Raises
    ------
    SpartitionError
        If every cube is empty (the order model has no model at a feasible
        ``M``: an encoding bug), a cube's process fails, or a cube's optimum
        does not replay at its value.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> out = cube_search(compact(fft(2)), 3, 60.0, time.perf_counter(), depth=2)
    >>> out["io"], out["bound"], out["closed"], len(out["cubes"])
    (14, 14, True, 4)
    """
    cubes = cubes_of(split_pairs(c, depth))
    pending, running, done = list(cubes), {}, {}
    best = {"schedule": None, "io": None}
    interrupt = Interrupt()
    with _sigint_recorded(interrupt):
        while pending or running:
            known = [x for x in (best["io"], upper) if x is not None]
            enough = min(known) if known else None
            left = time_limit - (time.perf_counter() - start)
            while pending and len(running) < workers and left > 0 and not interrupt:
                share = left * workers / (len(pending) + len(running))
                cube = pending.pop(0)
                running[cube] = (_start_run(c, M, symmetry_pairs, cube, share), time.perf_counter() + share)
            for cube, (run, until) in list(running.items()):
                run.poll()
                if not run.done:
                    if interrupt:
                        run.stop(Status.INTERRUPTED)
                    elif enough is not None and run.lower_bound is not None and run.lower_bound >= enough:
                        run.stop(Status.BOUND_MET)
                    elif time.perf_counter() >= until:
                        run.stop(Status.TIME_LIMIT)
                if run.done:
                    del running[cube]
                    done[cube] = _finish_cube(c, cube, run, best)
            if left <= 0 or interrupt:
                for cube, (run, _) in list(running.items()):
                    run.stop(Status.INTERRUPTED if interrupt else Status.TIME_LIMIT)
                    done[cube] = _finish_cube(c, cube, run, best)
                running.clear()
                break
            time.sleep(0.05)
    outcomes = [done.get(cube) or CubeOutcome(cube, "NOT_RUN", None, None, 0.0) for cube in cubes]
    if all(o.status == Status.INFEASIBLE for o in outcomes):
        raise SpartitionError("every cube of the order CNF is empty at a feasible M (encoding bug)")
    bounds = [o.bound for o in outcomes]
    bound = None if any(b is None for b in bounds) else min(bounds)
    io = best["io"]
    closed = bound is not None and io is not None and bound >= io
    if bound is not None and io is not None:
        bound = min(bound, io)  # the cube that found io has bound io; an empty cube's inf never stands alone
    return {"schedule": best["schedule"], "io": io, "bound": None if bound is None else int(bound),
            "closed": closed, "cubes": outcomes, "interrupted": bool(interrupt)}


def _start_run(c, M, symmetry_pairs, cube, seconds):
    from spartition.exact.maxsat import MaxSATRun

    return MaxSATRun(c, M, symmetry_pairs, cpu_limit=seconds + 30, cube=cube)


def _finish_cube(c: CompactDAG, cube, run, best: dict) -> CubeOutcome:
    """The cube's outcome; its optimum is replayed and kept in ``best`` when it is the cheapest so far."""
    out = run.outcome()
    seconds = out.stats.get("wall_s", 0.0)
    if out.status == Status.FAILED:
        raise SpartitionError(f"the MaxSAT process of cube {cube} ended without an answer "
                              f"(exit code {out.stats.get('exitcode')})")
    if out.status == Status.INFEASIBLE:
        return CubeOutcome(cube, out.status, math.inf, None, seconds)
    io = None
    if out.status == Status.OPTIMAL:
        io = replay(c, out.schedule).io
        if io != out.lower_bound:  # the model is exact: a cube's optimum is its replayed cost
            raise SpartitionError(f"cube {cube}: decoded optimum costs {io}, RC2 says {out.lower_bound} (encoding bug)")
        if best["io"] is None or io < best["io"]:
            best.update(schedule=out.schedule, io=io)
    return CubeOutcome(cube, out.status, out.lower_bound, io, seconds)


class _sigint_recorded:
    """Within the block, Ctrl-C (main thread) sets ``interrupt`` instead of raising."""

    def __init__(self, interrupt: Interrupt):
        self.interrupt, self.previous = interrupt, None

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            def on_sigint(signum, frame):
                self.interrupt.seen = True
            self.previous = (signal.signal(signal.SIGINT, on_sigint),)
        return self

    def __exit__(self, *exc):
        import signal

        if self.previous is not None:
            previous = self.previous[0]
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
        return False
