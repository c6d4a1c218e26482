"""The CP-SAT solver of the partition models, with every parameter set explicitly and recorded.

The models of :mod:`spartition.partition.encoding` know nothing of a solver;
:func:`~spartition.partition.minimum.min_partition` and
:func:`~spartition.partition.capacity.class_capacity` hand them to the solver
made here, and store the returned record of its parameters in their results.
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from spartition.exact.cpsat import new_solver

__all__ = ["partition_solver"]


def partition_solver(time_limit, workers, seed, lp: bool = False) -> tuple[cp_model.CpSolver, dict]:
    """A CP-SAT solver with explicitly set parameters (:func:`spartition.exact.cpsat.new_solver`), and the record of them.

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
    >>> solver, params = partition_solver(5, 2, 0, lp=True)
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
