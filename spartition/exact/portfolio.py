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
one (``used_supplied`` False). The portfolio's fourth engine, the oneshot
step search (:mod:`spartition.exact.step_run`), takes RC2's core where RC2
stalls at the trivial bound; its bound is one of the true oneshot game
directly, and it reads no supplied bound either.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from spartition.core.bounds import trivial_lower_bound
from spartition.core.game import Schedule, replay
from spartition.errors import IllegalMove, SpartitionError
from spartition.cpsat import Interrupt
from spartition.exact.formulations import Formulation, ModelSpec
from spartition.exact.maxsat import MaxSATRun
from spartition.exact.result import SearchOutcome
from spartition.exact.step_run import ONESHOT_STEP_ASSUMPTIONS, StepSearchRun
from spartition.status import Status

__all__ = ["STEP_HANDOVER_SHARE", "cubes_search", "maxsat_search", "portfolio_search"]

#: The share of the time limit RC2 runs before the portfolio judges it: if its bound has not passed
#: the trivial bound by then, the oneshot step search takes its core for the rest (docs/exact_frontier.md).
STEP_HANDOVER_SHARE = 0.25


def maxsat_search(record: Formulation, spec: ModelSpec, time_limit: float, start: float,
                  method: str = "rc2") -> SearchOutcome:
    """The order model solved by one MaxSAT engine alone (:mod:`spartition.exact.maxsat`), within the time left.

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
    method : {"rc2", "linear"}
        RC2's core-guided search from below, or the linear search from
        above (:func:`spartition.exact.maxsat.linear_solve`, starting below
        ``spec.upper``).

    Returns
    -------
    SearchOutcome
        ``schedule`` (replayed) and ``io``, or None; ``model_bound``, the
        bound the engine proved; ``solver_status``, the run's status; ``closed``
        (its optimum), ``interrupted`` (Ctrl-C), ``cap``, ``assumptions``,
        ``parameters`` (the run's stats under ``maxsat``), ``source`` and
        ``bound_by`` (``maxsat`` or ``maxsat-linear``); ``used_supplied`` False.

    Raises
    ------
    SpartitionError
        If the child process ended without an answer, or on an encoding bug.
    """
    interrupt = Interrupt()
    run = MaxSATRun(spec.cdag, spec.M, spec.pairs, cpu_limit=time_limit + 30, method=method,
                    upper=spec.upper if method == "linear" else None)
    name = "maxsat" if method == "rc2" else "maxsat-linear"

    def met() -> bool:
        run.poll()
        return spec.upper is not None and run.lower_bound is not None and run.lower_bound >= spec.upper

    end = Status.STOPPED
    try:
        end = _wait_interruptibly([run], time_limit, start, interrupt, met)
    finally:
        run.stop(end)
    ms = _engine_outcome(spec, run)
    return SearchOutcome(ms["schedule"], ms["io"], name, model_bound=ms["bound"],
                         closed=ms["status"] == Status.OPTIMAL, cap=record.cap(spec),
                         assumptions=record.assumptions[spec.variant], solver_status=ms["status"],
                         parameters={"options": None, "maxsat": ms["stats"]}, interrupted=bool(interrupt),
                         used_supplied=False, bound_by=name)


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
                     workers: int, time_limit: float, start: float, linear: bool | None = None,
                     upper_schedule: Schedule | None = None) -> SearchOutcome:
    """RC2, the linear search and CP-SAT side by side on the order model, one worker each where there are enough.

    RC2 (a process) proves bounds from below; the linear search (a second
    process, :func:`spartition.exact.maxsat.linear_solve`) asks a SAT solver
    for ever cheaper schedules and proves the last one optimal; CP-SAT's
    branch and bound (this process) runs on the workers left. Who runs on
    how many workers:

    * ``workers >= 3``: RC2, the linear search, CP-SAT on ``workers - 2``;
    * ``workers == 2``: RC2 and the linear search; no CP-SAT
      (docs/exact_frontier.md measures why: on the frontier targets the
      linear search finds better schedules than CP-SAT's one worker and
      proves optima both leave open; what is lost is CP-SAT's core bound
      where memory is loose, 1-2 I/Os there);
    * ``workers == 1`` (only when ``portfolio`` is asked for by name): RC2
      and a one-worker CP-SAT share the core, as they did before the linear
      search was added.

    ``linear`` overrides the choice (True: the linear search runs, CP-SAT on
    the workers left if any; False: RC2 and CP-SAT on ``workers - 1``, at
    least one).

    The step search takes over RC2's core where RC2 stalls. After
    :data:`STEP_HANDOVER_SHARE` of the time, if RC2's bound has not passed
    the trivial bound (loose memory: its cores then only rediscover the
    forced loads and stores), RC2 is stopped (its bound stays proven) and
    the oneshot step search (:class:`spartition.exact.step_run.StepSearchRun`,
    exhaustive A* from below the best replayed schedule) runs on that core
    to the deadline: it proves the optimum, or reports the least bound left
    in its queue, a bound of the true oneshot game. Where the best schedule
    is close to the trivial bound it closes rows RC2 leaves open (matmul
    3x3x3 at M = 12 to 14), where memory is tight its bound is far below
    RC2's, hence the handover only on a stall.

    Every engine is stopped once one has the optimum or RC2's bound meets
    the best schedule known (the hint's, the linear search's, or CP-SAT's
    incumbent as it goes); the rest at the deadline or on Ctrl-C. The best
    replayed schedule and the best proven bound win: all engines state the
    same model, so any one's bound is a bound of the order model, exact for
    oneshot. ``bound_by`` names the engine behind the bound.

    Parameters
    ----------
    spec : ModelSpec
    ceiling : int or None
        The I/O of the best hint schedule, if any (the linear search starts there).
    cp_search : callable
        ``cp_search(workers, poll)``: CP-SAT's search of the order model on
        ``workers`` workers (:func:`spartition.exact.solve.solve_io` gives a
        single worker ``interleave_search``, so that its LNS finds schedules
        while RC2 proves bounds), stopping once ``poll(incumbent)`` is true
        (``incumbent``: the objective of CP-SAT's best solution so far, or
        None), returning the :class:`SearchOutcome` (as :func:`maxsat_search` does).
    workers : int
    time_limit, start : float
        As for :func:`maxsat_search`.
    linear : bool, optional
        Whether the linear search runs (default: ``workers >= 2``).
    upper_schedule : Schedule, optional
        The best hint's replayed schedule (oneshot, at ``spec.M``; its I/O is
        ``ceiling``): the step search's ceiling. Without it there is no handover.

    Returns
    -------
    SearchOutcome
        The best schedule and bound of the engines, every engine's status in
        ``solver_status``, RC2's stats under ``parameters["maxsat"]``, the
        linear search's under ``parameters["maxsat_linear"]`` and the step
        search's (when it ran) under ``parameters["step_search"]``, whose
        assumptions are then added to ``assumptions``.
    """
    linear = workers >= 2 if linear is None else linear
    runs = {"maxsat": MaxSATRun(spec.cdag, spec.M, spec.pairs, cpu_limit=time_limit + 30)}
    if linear:
        runs["maxsat-linear"] = MaxSATRun(spec.cdag, spec.M, spec.pairs, cpu_limit=time_limit + 30,
                                          method="linear", upper=ceiling)
    cp_workers = workers - len(runs) if linear else max(workers - 1, 1)

    trivial = trivial_lower_bound(spec.cdag)
    handover_at = start + STEP_HANDOVER_SHARE * float(time_limit)

    def hand_over() -> None:
        """Give RC2's core to the step search if RC2 has stalled at the trivial bound (see above)."""
        rc2 = runs["maxsat"]
        if upper_schedule is None or "step-search" in runs or rc2.done or time.perf_counter() < handover_at:
            return
        if rc2.lower_bound is not None and rc2.lower_bound > trivial:
            return
        best, best_io = upper_schedule, ceiling  # the caller's replayed I/O of upper_schedule
        for run in runs.values():  # the cheapest schedule so far (the linear search replays each model it sends)
            if run.schedule is not None and run.io is not None and run.io < best_io:
                best, best_io = run.schedule, run.io
        rc2.stop(Status.STOPPED)
        now = time.perf_counter()
        step = StepSearchRun(spec.cdag, spec.M, best, max(start + float(time_limit) - now - 0.5, 0.1))
        step.stats.update(started_at_s=round(now - start, 3), ceiling=best_io)
        runs["step-search"] = step

    def settled(incumbent=None) -> bool:
        """An engine has the optimum, or RC2's bound meets the best schedule known."""
        for run in runs.values():
            run.poll()
        hand_over()
        if any(run.status == Status.OPTIMAL for run in runs.values()):
            return True
        known = [x for x in (ceiling, incumbent, *(run.io for run in runs.values())) if x is not None]
        bound = max((run.lower_bound for run in runs.values() if run.lower_bound is not None), default=None)
        return bool(known) and bound is not None and bound >= min(known)

    cp, interrupt, end = None, Interrupt(), Status.STOPPED
    try:
        if cp_workers >= 1:
            cp = cp_search(cp_workers, settled)
            interrupt.seen = cp.interrupted
        if not interrupt and not (cp is not None and cp.settles()):
            end = _wait_interruptibly(runs.values(), time_limit, start, interrupt,
                                      lambda: settled(cp.io if cp else None))
    finally:
        for run in runs.values():
            run.stop(Status.INTERRUPTED if interrupt else end)
    found = {name: _engine_outcome(spec, run, alone=False, name=name) for name, run in runs.items()}
    steps = ONESHOT_STEP_ASSUMPTIONS if "step-search" in runs else ()
    out = cp if cp is not None else SearchOutcome(None, None, "", parameters={"options": None})
    statuses = ([f"cp-sat {cp.solver_status}"] if cp is not None else []) + \
        [f"{name} {ms['status']}" for name, ms in found.items()]
    out = replace(out, parameters={**out.parameters, **{name.replace("-", "_"): ms["stats"]
                                                        for name, ms in found.items()}},
                  solver_status="; ".join(statuses), interrupted=bool(interrupt),
                  assumptions=tuple(out.assumptions) + steps)
    for name, ms in found.items():
        if ms["io"] is not None and (out.io is None or ms["io"] < out.io):
            out = replace(out, schedule=ms["schedule"], io=ms["io"], source=name)
    for name, ms in found.items():
        bound = ms["bound"]
        if bound is not None and (out.model_bound is None or bound > out.model_bound
                                  or (bound == out.model_bound and ms["status"] == Status.OPTIMAL
                                      and not (cp is not None and cp.settles()))):
            # neither MaxSAT engine read the supplied bound: its proof stands without it
            out = replace(out, model_bound=bound, bound_by=name, used_supplied=False)
    if cp is None and out.bound_by is None:
        out = replace(out, used_supplied=False)
    io = out.io if out.io is not None else ceiling
    closed = (cp is not None and cp.settles()) or any(ms["status"] == Status.OPTIMAL for ms in found.values())
    return replace(out, closed=closed or out.settles(io))


def _engine_outcome(spec: ModelSpec, run: MaxSATRun | StepSearchRun, alone: bool = True, name: str = "MaxSAT") -> dict:
    """An engine run's schedule, replayed, and its proven bound; raises on an encoding bug.

    A run that ended without an answer raises when it was the only engine;
    beside others it only loses its bounds (recorded in the stats).
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
            raise IllegalMove(exc.step, exc.move, exc.node, f"the {name} schedule fails replay: {exc.rule}") from exc
        # a model's schedule costs at most the model (exactly, at an optimum) and never below a proven bound
        if res.io > out.io or (out.lower_bound is not None and res.io < out.lower_bound):
            raise SpartitionError(f"the {name} schedule replays at {res.io}: the engine says {out.io}, "
                                  f"bound {out.lower_bound} (a bug)")
        found.update(schedule=out.schedule, io=res.io)
    return found


def _wait_interruptibly(runs, time_limit: float, start: float, interrupt: Interrupt, enough) -> str:
    """Poll ``runs`` until ``start + time_limit``, until all have ended, or until ``enough()`` is true;
    Ctrl-C (main thread) stops the wait and sets ``interrupt``.

    Returns the status a run still going is to be stopped with: ``INTERRUPTED``,
    ``BOUND_MET`` (``enough``), ``TIME_LIMIT`` or ``STOPPED`` (every run had ended).
    """
    import signal
    import threading

    # ``runs`` may be a live view (the portfolio's dict values): a run added while waiting is waited for
    deadline = start + float(time_limit)
    main = threading.current_thread() is threading.main_thread()
    if main:
        def on_sigint(signum, frame):
            interrupt.seen = True

        previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        while True:
            if interrupt:
                return Status.INTERRUPTED
            if enough():
                return Status.BOUND_MET
            if all(run.done for run in runs):
                return Status.STOPPED
            if time.perf_counter() >= deadline:
                return Status.TIME_LIMIT
            time.sleep(0.05)
    finally:
        if main:
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
