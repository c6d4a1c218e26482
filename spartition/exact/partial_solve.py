"""Exact optimal I/O of the partial-computation game, as :func:`spartition.exact.solve.solve_io` reports it.

:func:`solve_partial_io` answers ``solve_io(dag, M, "partial")``: the exact
state search (:func:`spartition.exact.partial_brute.partial_search`) while
it stays within a state budget, else the CP-SAT model
(:func:`spartition.exact.partial_cpsat.solve_partial`) in the time left.
The result is a :class:`~spartition.exact.result.SolveResult` whose
``formulation`` names which of the two answered; ``OPTIMAL`` only when the
search closed (the state search always does when it finishes; the CP-SAT
model when its bound meets its schedule), otherwise ``FEASIBLE`` with the
proven bound.

References
----------
A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
"""

from __future__ import annotations

import time

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import CompactDAG, as_compact, dag_hash
from spartition.core.game import replay
from spartition.core.partial import min_partial_memory
from spartition.errors import InfeasibleMemory, ParameterError, SpartitionError
from spartition.settings import DEFAULT_SEED, DEFAULT_WORKERS, PARTIAL
from spartition.status import Status

__all__ = ["PARTIAL_SEARCH_STATES", "partial_trivial_bound", "solve_io_partial", "solve_partial_io"]

#: States the exact search may visit before :func:`solve_partial_io` hands the DAG to CP-SAT.
PARTIAL_SEARCH_STATES = 200_000


def partial_trivial_bound(dag) -> int:
    """The trivial lower bound of the partial game: inputs with a successor plus outputs that are not inputs.

    Equal to :func:`spartition.core.bounds.trivial_lower_bound`; proven here
    for the partial game, whose moves differ.

    Notes
    -----
    Proof. An input u with an out-edge (u, v): the edge must be marked, and a
    partial compute of it needs u red. u starts blue only; a partial compute
    never targets u (it has no in-edge), so only a load makes u red: one load
    per such input. An output w that is not an input must end blue; it starts
    without a blue pebble, a partial compute removes blue rather than adding
    it, a load needs w blue already, so only a save makes w blue: one save per
    such output. These loads and saves are distinct moves of cost 1 each.
    An isolated node is an input and an output at once and is counted by
    neither term (it is blue from the start and needs no pebble).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain, fft
    >>> partial_trivial_bound(chain(5)), partial_trivial_bound(fft(1))
    (2, 4)

    References
    ----------
    J.-W. Hong, H. T. Kung, "I/O complexity: the red-blue pebble game", STOC
    1981 (the same count in the standard game); A. Papp, A. Sobczyk,
    A. N. Yzelman, SPAA 2025, arXiv:2506.10854 (the partial game).
    """
    return trivial_lower_bound(dag)


def solve_partial_io(dag, M: int, *, time_limit: float = 60.0, workers: int = DEFAULT_WORKERS,
                     seed: int = DEFAULT_SEED, search_states: int = PARTIAL_SEARCH_STATES):
    """The minimum I/O of the partial game, with its proof status, as a :class:`SolveResult`.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory (light plus dark red pebbles).
    time_limit : float
        Seconds for the whole call (the state search, then CP-SAT in what is left).
    workers, seed : int
        CP-SAT workers and random seed (the state search uses neither).
    search_states : int
        States the exact search may visit before CP-SAT takes over.

    Returns
    -------
    SolveResult
        ``variant = "partial"``; ``formulation`` is ``partial-search`` (the
        A* state search: ``OPTIMAL``) or ``partial-cp-sat`` (``OPTIMAL`` if
        its search closed, else ``FEASIBLE`` with the proven bound);
        ``INFEASIBLE`` when M < 2 on a DAG with an edge. The schedule is
        replayed in the partial game.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> r = solve_partial_io(fft(1), 2)
    >>> r.status, r.io, r.lower_bound, r.formulation
    ('OPTIMAL', 5, 5, 'partial-search')

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    from spartition.exact.partial_brute import partial_search
    from spartition.exact.partial_cpsat import ASSUMPTIONS, solve_partial
    from spartition.exact.result import SolveResult

    start = time.perf_counter()
    cpu_start = time.process_time()
    c = as_compact(dag)
    base = {"variant": PARTIAL, "M": M, "dag_hash": "" if isinstance(dag, CompactDAG) else dag_hash(dag)}
    trivial = partial_trivial_bound(c) if c.n else 0

    def result(**fields):
        return SolveResult(wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start,
                           **base, **fields)

    if M < min_partial_memory(c):
        return result(status=Status.INFEASIBLE, io=None, lower_bound=None, schedule=None, formulation="none",
                      message=str(InfeasibleMemory(f"the partial game needs M >= 2 on a DAG with an edge, got M = {M}")),
                      parameters={"min_feasible_memory": min_partial_memory(c)})
    note = ""
    try:
        found = partial_search(c, M, max_states=search_states, time_limit=time_limit / 2)
    except SpartitionError as exc:  # too large for the exact search: CP-SAT in the time left
        note = f"state search: {exc}"
    else:
        io = replay(c, found.schedule).io
        return result(status=Status.OPTIMAL, io=io, lower_bound=io, schedule=found.schedule,
                      formulation="partial-search", model_bound=io, solver_status=Status.OPTIMAL,
                      schedule_source="partial-search", bound_source="partial-search",
                      parameters={"states": found.states, "search_states": search_states},
                      message="exhaustive A* search of the partial game (spartition.exact.partial_brute)")
    left = max(time_limit - (time.perf_counter() - start), 0.1)
    r = solve_partial(c, M, time_limit=left, workers=workers, seed=seed)
    bound = max(r.lower_bound or 0, trivial)
    io = replay(c, r.schedule).io
    status = Status.OPTIMAL if bound == io else Status.FEASIBLE
    bound_source = "partial-cp-sat" if (r.lower_bound or 0) >= trivial and r.lower_bound else "trivial"
    return result(status=status, io=io, lower_bound=bound, schedule=r.schedule, formulation="partial-cp-sat",
                  model_bound=r.lower_bound, cap={"horizon": r.horizon, "harmless": True},
                  assumptions=ASSUMPTIONS, solver_status=r.parameters.get("cp_sat_status", ""),
                  schedule_source=r.schedule_source, bound_source=bound_source,
                  parameters=r.parameters, message=note)


def solve_io_partial(dag, M: int, time_limit, workers, seed, formulation, engine, lower_bound, recompute_events):
    """``solve_io(..., variant="partial")``: :func:`solve_partial_io`, the standard game's options refused by name
    rather than ignored (a user would believe they ran)."""
    from spartition.settings import check_solver_settings

    check_solver_settings(time_limit=time_limit, workers=workers, seed=seed, deterministic_time=None)
    for name, value, default in (("formulation", formulation, "auto"), ("engine", engine, "auto"),
                                 ("lower_bound", lower_bound, None), ("recompute_events", recompute_events, None)):
        if value != default:
            raise ParameterError(f"{name}={value!r} does not apply to the partial game (it has its own "
                                 "state search and CP-SAT model)")
    return solve_partial_io(dag, M, time_limit=time_limit, workers=workers, seed=seed)
