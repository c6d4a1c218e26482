"""The MaxSAT engine of :func:`spartition.exact.solve.solve_io`, alone or side by side with CP-SAT.

:func:`maxsat_search` solves the order model with RC2 alone
(:class:`spartition.exact.maxsat.MaxSATRun`, a child process);
:func:`portfolio_search` runs the same run beside CP-SAT's branch and bound,
which the caller passes in as a function, so this module knows nothing of
how CP-SAT is set up. Both return the fields of a search as ``solve_io``
reads them; RC2's schedule is replayed here before it is returned, and an
RC2 optimum whose replayed cost differs from RC2's value is an error (the
clauses are exact, so the two agree).

Both engines state the same model, so either one's bound is a bound of the
order model, exact for oneshot (:mod:`spartition.exact.formulations.order`);
RC2 never reads a supplied lower bound, so a bound it proves stands without
one (``used_supplied`` False).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from spartition.core.game import replay
from spartition.errors import IllegalMove, SpartitionError
from spartition.cpsat import Interrupt
from spartition.exact.formulations import Formulation, ModelSpec
from spartition.exact.maxsat import MaxSATRun
from spartition.exact.result import SearchOutcome
from spartition.status import Status

__all__ = ["cubes_search", "maxsat_search", "portfolio_search"]


def maxsat_search(record: Formulation, spec: ModelSpec, time_limit: float, start: float) -> SearchOutcome:
    """The order model solved by RC2 alone (:mod:`spartition.exact.maxsat`), within the time left.

    Parameters
    ----------
    record : Formulation
        The order model's record (its cap and assumptions are reported).
    spec : ModelSpec
        The DAG, ``M`` and the symmetry precedences; ``spec.upper`` (the
        best schedule's I/O) stops the run once its bound reaches it.
    time_limit, start : float
        The call's time limit in seconds and its start (``time.perf_counter``):
        the run ends at ``start + time_limit``.

    Returns
    -------
    SearchOutcome
        ``schedule`` (replayed) and ``io``, or None; ``model_bound``, the
        bound RC2 proved; ``solver_status``, the run's status; ``closed``
        (RC2's optimum), ``interrupted`` (Ctrl-C), ``cap``, ``assumptions``,
        ``parameters`` (the run's stats under ``maxsat``), ``source`` and
        ``bound_by`` (``maxsat``); ``used_supplied`` False.

    Raises
    ------
    SpartitionError
        If the child process ended without an answer, or on an encoding bug.
    """
    interrupt = Interrupt()
    run = MaxSATRun(spec.cdag, spec.M, spec.pairs, cpu_limit=time_limit + 30)
    try:
        _wait_interruptibly(run, time_limit, start, interrupt, spec.upper)
    finally:
        run.stop()
    ms = _maxsat_outcome(spec, run)
    return SearchOutcome(ms["schedule"], ms["io"], "maxsat", model_bound=ms["bound"],
                         closed=ms["status"] == Status.OPTIMAL, cap=record.cap(spec),
                         assumptions=record.assumptions[spec.variant], solver_status=ms["status"],
                         parameters={"options": None, "maxsat": ms["stats"]}, interrupted=bool(interrupt),
                         used_supplied=False, bound_by="maxsat")


def cubes_search(record: Formulation, spec: ModelSpec, time_limit: float, start: float, workers: int,
                 depth: int) -> SearchOutcome:
    """The order model split into ``2^depth`` cubes, each solved by RC2 (:func:`spartition.exact.cubes.cube_search`).

    Parameters
    ----------
    record : Formulation
    spec : ModelSpec
        ``spec.upper`` stops a cube whose bound reaches it.
    time_limit, start : float
        As for :func:`maxsat_search`.
    workers : int
        Cubes solved at once.
    depth : int
        Order literals split on.

    Returns
    -------
    SearchOutcome
        ``model_bound`` the least cube bound (proven whatever each cube's
        state, :mod:`spartition.exact.cubes`), ``closed`` when it meets the
        best cube optimum, each cube's end under ``parameters["cubes"]``;
        ``bound_by`` ``maxsat-cubes``, ``used_supplied`` False.
    """
    from spartition.exact.cubes import cube_search

    found = cube_search(spec.cdag, spec.M, time_limit, start, workers=workers, depth=depth,
                        symmetry_pairs=spec.pairs, upper=spec.upper)
    ends = [o.to_dict() for o in found["cubes"]]
    statuses = sorted({o.status for o in found["cubes"]})
    return SearchOutcome(found["schedule"], found["io"], "maxsat-cubes", model_bound=found["bound"],
                         closed=found["closed"], cap=record.cap(spec), assumptions=record.assumptions[spec.variant],
                         solver_status=f"maxsat cubes: {', '.join(statuses)}",
                         parameters={"options": None, "cubes": {"depth": depth, "ends": ends}},
                         interrupted=found["interrupted"], used_supplied=False, bound_by="maxsat-cubes")


def portfolio_search(spec: ModelSpec, ceiling: int | None,
                     cp_search: Callable[[int, Callable[[], bool]], SearchOutcome],
                     workers: int, time_limit: float, start: float) -> SearchOutcome:
    """CP-SAT (``workers - 1`` workers) and RC2 (a process) side by side on the order model.

    RC2 starts first (it builds its clauses while CP-SAT builds its model).
    CP-SAT is stopped as soon as RC2 has the optimum or RC2's bound meets
    the best schedule known (the hint's, or CP-SAT's incumbent as it goes); RC2 is stopped when CP-SAT closes, at the deadline, or on
    Ctrl-C. The best replayed schedule and the best proven bound win; both
    engines state the same model, so either bound is a bound of the order
    model, exact for oneshot. ``bound_by`` names the engine behind the bound.

    Parameters
    ----------
    spec : ModelSpec
    ceiling : int or None
        The I/O of the best hint schedule, if any.
    cp_search : callable
        ``cp_search(workers, poll)``: CP-SAT's search of the order model on
        ``workers`` workers (:func:`spartition.exact.solve.solve_io` gives a
        single worker ``interleave_search``, so that its LNS finds schedules
        while RC2 proves bounds), stopping once ``poll(incumbent)`` is true
        (``incumbent``: the objective of CP-SAT's best solution so far, or
        None), returning the :class:`SearchOutcome` (as :func:`maxsat_search` does).
    workers : int
        The call's workers: CP-SAT gets ``workers - 1`` (at least one).
    time_limit, start : float
        As for :func:`maxsat_search`.

    Returns
    -------
    SearchOutcome
        CP-SAT's with RC2's schedule or bound where they are better,
        both statuses in ``solver_status`` and RC2's stats under
        ``parameters["maxsat"]``.
    """
    run = MaxSATRun(spec.cdag, spec.M, spec.pairs, cpu_limit=time_limit + 30)

    def settled(incumbent=None) -> bool:
        """RC2 has the optimum, or its bound meets the best schedule known: the hint's or CP-SAT's ``incumbent``."""
        run.poll()
        if run.done:
            return run.status == Status.OPTIMAL
        known = [x for x in (ceiling, incumbent) if x is not None]
        return bool(known) and run.lower_bound is not None and run.lower_bound >= min(known)

    cp = None
    try:
        cp = cp_search(max(workers - 1, 1), settled)
        if not cp.settles() and not cp.interrupted and not settled():
            known = [x for x in (cp.io, ceiling) if x is not None]
            interrupt = Interrupt()
            _wait_interruptibly(run, time_limit, start, interrupt, min(known) if known else None)
            cp = replace(cp, interrupted=bool(interrupt))
    finally:
        run.stop(Status.INTERRUPTED if cp is not None and cp.interrupted else Status.STOPPED)
    ms = _maxsat_outcome(spec, run, alone=False)
    out = replace(cp, parameters={**cp.parameters, "maxsat": ms["stats"]},
                  solver_status=f"cp-sat {cp.solver_status}; maxsat {ms['status']}")
    if ms["io"] is not None and (out.io is None or ms["io"] < out.io):
        out = replace(out, schedule=ms["schedule"], io=ms["io"], source="maxsat")
    cp_bound = cp.model_bound
    if ms["bound"] is not None and (cp_bound is None or ms["bound"] > cp_bound
                                    or (ms["bound"] == cp_bound and ms["status"] == Status.OPTIMAL
                                        and not cp.settles())):
        # RC2 never read the supplied bound: its proof stands without it
        out = replace(out, model_bound=ms["bound"], bound_by="maxsat", used_supplied=False)
    io = out.io if out.io is not None else ceiling
    return replace(out, closed=cp.settles() or ms["status"] == Status.OPTIMAL or out.settles(io))


def _maxsat_outcome(spec: ModelSpec, run: MaxSATRun, alone: bool = True) -> dict:
    """The MaxSAT run's schedule, replayed, and its proven bound; raises on an encoding bug.

    A run that ended without an answer raises when it was the only engine;
    beside CP-SAT it only loses its bounds (recorded in the stats).
    """
    out = run.outcome()
    found = {"schedule": None, "io": None, "bound": out.lower_bound, "status": out.status,
             "stats": {"status": out.status, "lower_bound": out.lower_bound, **out.stats}}
    if out.status == Status.FAILED and alone:
        raise SpartitionError(f"the MaxSAT process ended without an answer (exit code {out.stats.get('exitcode')})")
    if out.status == Status.INFEASIBLE:
        raise SpartitionError("the order CNF has no model at a feasible M (encoding bug)")
    if out.schedule is not None:
        try:
            res = replay(spec.cdag, out.schedule)
        except IllegalMove as exc:
            raise IllegalMove(exc.step, exc.move, exc.node, f"decoded MaxSAT model fails replay: {exc.rule}") from exc
        if res.io != out.lower_bound:  # the model is exact: its optimum is the replayed cost
            raise SpartitionError(f"decoded MaxSAT optimum costs {res.io}, RC2 says {out.lower_bound} (encoding bug)")
        found.update(schedule=out.schedule, io=res.io)
    return found


def _wait_interruptibly(run: MaxSATRun, time_limit: float, start: float, interrupt: Interrupt,
                        enough=None) -> None:
    """Wait for ``run`` until ``start + time_limit`` or its bound reaches ``enough`` (the best schedule's I/O);
    Ctrl-C (main thread) stops it and sets ``interrupt``."""
    import signal
    import threading

    left = float(time_limit) - (time.perf_counter() - start)
    if threading.current_thread() is not threading.main_thread():
        run.wait(max(left, 0.0), enough=enough)
        return

    def on_sigint(signum, frame):
        interrupt.seen = True

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        run.wait(max(left, 0.0), interrupt, enough)
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
