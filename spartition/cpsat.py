"""What every CP-SAT call of spartition shares, the exact optima's and the partitions' alike: a solver
with its parameters set and recorded, status names, the version string, the proven bound of a
run, a solve that Ctrl-C stops cleanly, and the refusal of models too large to build. The
settings a solver takes (seed, workers, time limit) are checked by :mod:`spartition.settings`.

The one rule this module enforces: a bound is read from the solver only when
its status carries one. ``OPTIMAL`` and ``FEASIBLE`` prove
``best_objective_bound`` (at ``OPTIMAL`` it equals the objective value);
``UNKNOWN`` (stopped before any solution),
``INFEASIBLE`` and ``MODEL_INVALID`` prove nothing about the objective, even
though CP-SAT still reports a number (0 for a maximisation stopped at once).
A bound is also checked against the best solution the caller can exhibit: a
proven upper bound below a verified set, or a proven lower bound above a
replayed schedule, is a contradiction, never a result.

A status means what it says only under CP-SAT's default stopping rules: a gap
limit makes CP-SAT report ``OPTIMAL`` once the gap is met, and fixing the
variables to the hint solves another problem. Such parameters
(:data:`UNSOUND_PARAMETERS`) are refused by :func:`new_solver`, and the bound
is read from ``best_objective_bound`` even at ``OPTIMAL``, never from the
objective value.
"""

from __future__ import annotations

import math
import os
import signal
import threading

import ortools
from google.protobuf import json_format, text_format
from ortools.sat import sat_parameters_pb2
from ortools.sat.python import cp_model

from spartition.errors import SpartitionError
from spartition.status import Status

__all__ = [
    "ORTOOLS_VERSION",
    "SOLVER_VERSION",
    "STATUS_NAMES",
    "UNSOUND_PARAMETERS",
    "Interrupt",
    "ObjectiveWatch",
    "available_memory",
    "budget_refusal",
    "check_parameters",
    "new_solver",
    "parameters_dict",
    "recorded_solver",
    "proven_bound",
    "solve_interruptibly",
    "status_name",
]

#: The OR-Tools version, as results record it (``ortools_version``).
ORTOOLS_VERSION = ortools.__version__
#: The solver, as records name it (``solver_version``).
SOLVER_VERSION = f"ortools {ORTOOLS_VERSION}"

STATUS_NAMES = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.MODEL_INVALID: Status.MODEL_INVALID,
    cp_model.UNKNOWN: Status.UNKNOWN,
}

#: CP-SAT parameters that change what a status proves, and why; :func:`new_solver` refuses them.
UNSOUND_PARAMETERS = {
    "relative_gap_limit": "CP-SAT reports OPTIMAL once the relative gap is met, without proof",
    "absolute_gap_limit": "CP-SAT reports OPTIMAL once the absolute gap is met, without proof",
    "fix_variables_to_their_hinted_value": "it solves the model restricted to the hint, so OPTIMAL proves nothing",
    "stop_after_first_solution": "it stops the search at the first solution found",
    "stop_after_presolve": "it stops before the search",
    "stop_after_root_propagation": "it stops before the search",
}

def status_name(code) -> str:
    """CP-SAT's status code as its name.

    Parameters
    ----------
    code : int
        A status ``CpSolver.solve`` returned.

    Returns
    -------
    str
        ``OPTIMAL``, ``FEASIBLE``, ``INFEASIBLE``, ``MODEL_INVALID`` or ``UNKNOWN``.

    Examples
    --------
    >>> status_name(cp_model.OPTIMAL)
    'OPTIMAL'
    """
    return STATUS_NAMES[code]


def check_parameters(extra) -> None:
    """Reject CP-SAT parameters that are unknown or would make a status claim more than it proves.

    Parameters
    ----------
    extra : dict or None
        Parameter name -> value, as :func:`new_solver` takes them.

    Raises
    ------
    ValueError
        Naming the parameter: not a CP-SAT parameter, or one of
        :data:`UNSOUND_PARAMETERS` (with the reason).

    Examples
    --------
    >>> check_parameters({"linearization_level": 2})
    >>> check_parameters({"relative_gap_limit": 0.9})
    Traceback (most recent call last):
    ...
    ValueError: CP-SAT parameter relative_gap_limit is refused: CP-SAT reports OPTIMAL once the relative gap is met, without proof; a bound is proven only by a search that runs to its end (use a time limit to stop earlier)
    """
    if extra is None:
        return
    if not isinstance(extra, dict):
        raise ValueError(f"CP-SAT parameters must be a dict of name -> value, got {type(extra).__name__}")
    known = sat_parameters_pb2.SatParameters.DESCRIPTOR.fields_by_name
    for key in extra:
        if key in UNSOUND_PARAMETERS:
            raise ValueError(f"CP-SAT parameter {key} is refused: {UNSOUND_PARAMETERS[key]}; a bound is proven "
                             "only by a search that runs to its end (use a time limit to stop earlier)")
        if key not in known:
            raise ValueError(f"{key!r} is not a CP-SAT parameter (ortools {ORTOOLS_VERSION})")
    _set_parameters(cp_model.CpSolver().parameters, extra)  # a value of the wrong type raises here, before any work


def _set_parameters(p, extra: dict) -> None:
    for key, value in extra.items():
        try:
            if isinstance(value, (list, tuple)):
                repeated = getattr(p, key)
                repeated.clear()
                repeated.extend(list(value))
            else:
                setattr(p, key, value)
        except (TypeError, ValueError, AttributeError):
            raise ValueError(f"CP-SAT parameter {key} cannot take {value!r} ({type(value).__name__})") from None


def new_solver(time_limit, workers, seed, deterministic_time=None, log=False, extra=None) -> cp_model.CpSolver:
    """A CP-SAT solver with every limit set explicitly.

    Parameters
    ----------
    time_limit : float
        ``max_time_in_seconds``.
    workers : int
        ``num_workers``; with two or more, ``interleave_search`` is set
        exactly when ``deterministic_time`` is given (interleaved workers are
        what makes a multi-worker run reproducible).
    seed : int
        ``random_seed``.
    deterministic_time : float, optional
        ``max_deterministic_time``.
    log : bool
        ``log_search_progress``.
    extra : dict, optional
        Further parameters by name, set first (so the limits above win); a
        list or tuple value replaces a repeated field (e.g. ``subsolvers``).
        Checked by :func:`check_parameters`.

    Returns
    -------
    cp_model.CpSolver

    Examples
    --------
    >>> s = new_solver(2.0, 1, 7, extra={"linearization_level": 0})
    >>> s.parameters.random_seed, s.parameters.linearization_level
    (7, 0)
    """
    check_parameters(extra)
    solver = cp_model.CpSolver()
    p = solver.parameters
    _set_parameters(p, extra or {})
    p.max_time_in_seconds = float(time_limit)
    p.num_workers = int(workers)
    p.random_seed = int(seed)
    if deterministic_time is not None:
        p.max_deterministic_time = float(deterministic_time)
    if workers > 1:
        p.interleave_search = deterministic_time is not None
    p.log_search_progress = bool(log)
    return solver


def recorded_solver(time_limit, workers, seed, lp: bool = False) -> tuple[cp_model.CpSolver, dict]:
    """A CP-SAT solver with explicitly set parameters (:func:`new_solver`), and the record of them.

    The partition models (:func:`~spartition.partition.minimum.min_partition`,
    :func:`~spartition.partition.capacity.class_capacity`) store the record in their results.

    Parameters
    ----------
    time_limit : float
        Seconds of search.
    workers : int
        Search workers.
    seed : int
        Random seed.
    lp : bool
        Ask for the full LP relaxation (the capacity model), see Notes.

    Returns
    -------
    (cp_model.CpSolver, dict)
        The solver and the parameters set on it, as the results record them
        (``max_time_in_seconds``, ``num_workers``, ``random_seed``,
        ``log_search_progress`` and, with ``lp``, ``linearization_level``
        and ``subsolvers``).

    Notes
    -----
    ``lp=True`` sets ``linearization_level = 2`` and, with several workers,
    the ``max_lp`` and ``core`` subsolvers: measured on reduction trees and
    attention DAGs, the default multi-worker portfolio never solved an LP
    there and could not move the upper bound, while these prove optimality
    in well under a second.

    Examples
    --------
    >>> solver, params = recorded_solver(5, 2, 0, lp=True)
    >>> params["linearization_level"], params["subsolvers"], list(solver.parameters.subsolvers)
    (2, ['max_lp', 'core'], ['max_lp', 'core'])
    """
    params = {
        "max_time_in_seconds": float(time_limit),
        "num_workers": int(workers),
        "random_seed": int(seed),
        "log_search_progress": False,
    }
    if lp:
        params["linearization_level"] = 2
        if workers >= 2:
            params["subsolvers"] = ["max_lp", "core"]
    extra = {k: v for k, v in params.items() if k in ("linearization_level", "subsolvers")}
    return new_solver(time_limit, workers, seed, extra=extra), params


def parameters_dict(solver: cp_model.CpSolver) -> dict:
    """Every CP-SAT parameter of ``solver`` that differs from its default, by name.

    The rest are the defaults of :data:`ORTOOLS_VERSION`, so the record and
    the version together re-create the run.

    Parameters
    ----------
    solver : cp_model.CpSolver

    Returns
    -------
    dict
        Parameter name -> value, in protobuf JSON form.

    Examples
    --------
    >>> parameters_dict(new_solver(1.0, 1, 0))["num_workers"]
    1
    """
    msg = text_format.Parse(str(solver.parameters), sat_parameters_pb2.SatParameters())
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


def proven_bound(solver, code, sense: str, found=None):
    """The bound on the objective that the run proved, or None.

    Parameters
    ----------
    solver : cp_model.CpSolver
        The solver after ``solve``.
    code : int
        The status ``solve`` returned.
    sense : {"min", "max"}
        The direction of the objective: the bound is a lower bound for a
        minimisation (rounded up) and an upper bound for a maximisation
        (rounded down); objectives are integral.
    found : int, optional
        The value of the best solution the caller exhibits, checked
        independently (a replayed schedule, a verified set). A bound on the
        wrong side of it is a contradiction and raises.

    Returns
    -------
    int or None
        None when the status proves nothing (``UNKNOWN``, ``INFEASIBLE``,
        ``MODEL_INVALID``) or the bound is not finite.

    Raises
    ------
    SpartitionError
        The bound contradicts ``found`` (a model that is not sound).
    """
    if sense not in ("min", "max"):
        raise ValueError(f"sense must be 'min' or 'max', got {sense!r}")
    if code not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None
    # even at OPTIMAL: the bound is what the search proved, the objective only what it found
    raw = solver.best_objective_bound
    if not math.isfinite(raw):
        return None
    bound = int(math.ceil(raw - 1e-6)) if sense == "min" else int(math.floor(raw + 1e-6))
    if found is not None and (bound > found if sense == "min" else bound < found):
        side = "lower" if sense == "min" else "upper"
        raise SpartitionError(
            f"CP-SAT's proven {side} bound {bound} contradicts a checked solution of value {found} "
            f"(status {status_name(code)}): the model is not sound; the bound is not used"
        )
    return bound


class Interrupt:
    """Records whether a Ctrl-C stopped the search (``bool(interrupt)``)."""

    def __init__(self):
        self.seen = False

    def __bool__(self):
        return self.seen


class ObjectiveWatch(cp_model.CpSolverSolutionCallback):
    """A solution callback that keeps the objective of the search's latest (best) solution in ``best``.

    Read by another thread while the search runs, so that a second engine
    can stop CP-SAT once its proven bound meets CP-SAT's incumbent. Each
    solution of a minimisation improves the objective, so the latest is the best.
    """

    def __init__(self):
        super().__init__()
        self.best = None

    def on_solution_callback(self) -> None:
        self.best = self.objective_value


def solve_interruptibly(solver, model, interrupt: Interrupt | None = None, poll=None,
                        callback: cp_model.CpSolverSolutionCallback | None = None) -> int:
    """``solver.solve(model)``, stopped cleanly by Ctrl-C.

    The search runs in a helper thread while the main thread waits; SIGINT in
    the main thread calls ``stop_search``. With an ``interrupt`` record the
    solver's best solution comes back with an honest status (as at a time
    limit) and ``interrupt`` says it was stopped; without one,
    ``KeyboardInterrupt`` is raised once the search has stopped, so a caller
    that cannot report a partial result never stores it as a full run.
    CP-SAT's own SIGINT handler is switched off so that it cannot swallow
    the signal unseen. Outside the main thread the call is a plain solve.

    Parameters
    ----------
    solver : cp_model.CpSolver
    model : cp_model.CpModel
    interrupt : Interrupt, optional
        Set when Ctrl-C stopped the search; without it Ctrl-C raises.
    poll : callable, optional
        Called every 50 ms while the search runs (main thread only); when it
        returns True the search is stopped, as at a time limit (a portfolio
        stops CP-SAT once another engine has settled the question).
    callback : CpSolverSolutionCallback, optional
        Passed to ``solver.solve`` (e.g. an :class:`ObjectiveWatch`).

    Returns
    -------
    int
        The CP-SAT status code.
    """
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model, callback)
    box = {}

    def run():
        try:
            box["code"] = solver.solve(model, callback)
        except BaseException as exc:  # pragma: no cover - re-raised below
            box["error"] = exc

    seen = interrupt if interrupt is not None else Interrupt()

    def on_sigint(signum, frame):
        seen.seen = True
        solver.stop_search()

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        worker = threading.Thread(target=run, name="cp-sat", daemon=True)
        worker.start()
        asked = False
        while worker.is_alive():
            worker.join(0.05)
            if poll is not None and not asked and poll():
                asked = True
                solver.stop_search()
    finally:
        # a handler installed outside Python reads back as None: restore the default then
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    if "error" in box:
        raise box["error"]
    if seen and interrupt is None:
        raise KeyboardInterrupt
    return box["code"]


def available_memory() -> int:
    """Bytes of memory available now (MemAvailable), or the physical total where it cannot be read."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def budget_refusal(size: dict, seconds_left: float) -> str:
    """Why a model of estimated ``size`` should not be built now; ``""`` when it fits.

    A model is refused when building it alone would take more than half the
    time left, or more than half the memory available: it could not be
    solved in time, or would push the machine into swapping.

    Parameters
    ----------
    size : dict
        ``model`` (its name), ``constraints``, ``build_seconds`` and
        ``memory_bytes``, as estimated by the model's own estimator.
    seconds_left : float
        What remains of the caller's time limit.

    Returns
    -------
    str
        The reason, with the estimate and a suggestion, or ``""``.
    """
    memory = available_memory()
    what = f"the {size['model']} model would hold about {size['constraints']:,} constraints"
    if size["memory_bytes"] > memory / 2:
        return (f"{what}, about {size['memory_bytes'] / 2**30:.1f} GiB: more than half the memory available "
                f"({memory / 2**30:.1f} GiB); try a smaller instance, or bounds and algorithms for this one")
    if size["build_seconds"] > seconds_left / 2:
        return (f"{what}, about {size['build_seconds']:.0f} s to build: more than half the time left "
                f"({max(seconds_left, 0):.1f} s); give a longer time limit or a smaller instance")
    return ""
