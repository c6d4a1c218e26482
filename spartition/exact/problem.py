"""The exact solver's problem apart from its settings, as OR-Tools keeps a model apart from its solver's parameters.

:class:`PebblingProblem` is what is asked (the DAG, the memory, the game) and
fixes the answer; :class:`SolverSettings` is how it is searched and how much
of it is proven. :func:`spartition.exact.solve.solve` takes both;
:func:`spartition.exact.solve.solve_io` takes the same as arguments.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.settings import DEFAULT_CUBE_DEPTH, DEFAULT_SEED, DEFAULT_VARIANT, DEFAULT_WORKERS

__all__ = ["PebblingProblem", "SolverSettings"]


@dataclass(frozen=True)
class PebblingProblem:
    """What :func:`~spartition.exact.solve.solve` is asked: the least I/O of pebbling ``dag`` with ``M`` red pebbles.

    The problem alone fixes the answer (the optimum); :class:`SolverSettings`
    only change how it is searched and how much of it is proven, as OR-Tools
    keeps a ``CpModel`` apart from its solver's parameters.

    Attributes
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory size.
    variant : {"oneshot", "recompute", "partial"}
        ``"partial"``: the partial-computation game, answered by
        :func:`spartition.exact.partial_solve.solve_partial_io` (the exact state
        search where it is small, else its CP-SAT model); the options of the
        standard game's models (formulation, engine, lower_bound,
        recompute_events) must keep their defaults.
    """

    dag: object
    M: int
    variant: str = DEFAULT_VARIANT


@dataclass(frozen=True, kw_only=True)
class SolverSettings:
    """How :func:`~spartition.exact.solve.solve` searches a :class:`PebblingProblem`: solver, model and limits.

    The defaults are :func:`~spartition.exact.solve.solve_io`'s. The same
    settings can be reused across problems (``dataclasses.replace`` changes
    one field); the result records them (``SolveResult.parameters["options"]``).

    Attributes
    ----------
    time_limit : float
        Wall-clock seconds for CP-SAT.
    workers : int
        CP-SAT workers (1 or 2 on this project's machines).
    seed : int
        CP-SAT random seed.
    hint : "auto", "greedy", None or Schedule
        Solution hint: ``auto`` tries the greedy schedule and every registered
        algorithm of the DAG's family and keeps the cheapest; a Schedule is
        replayed and used as given.
    formulation : {"auto", "order", "events", "baseline"}
        A name of :data:`spartition.exact.solve.FORMULATIONS`; ``auto`` is
        the registered default of the variant: ``order`` for oneshot and
        ``events`` for recompute.
    deterministic_time : float, optional
        CP-SAT deterministic time limit; with it (or ``workers=1``) and a fixed
        seed the result is reproducible.
    symmetry : bool
        Add Puget symmetry-breaking precedences (order and events models).
    lower_bound : int, optional
        A lower bound on the optimum proven elsewhere (e.g. from an
        S-partition). It prunes the search, but the tool cannot check it: a
        result whose optimality rests on it is ``OPTIMAL_GIVEN_BOUND``, and
        the reported ``lower_bound`` stays what the tool proved itself.
    recompute_events : int, optional
        Recompute cap on compute events (default twice the non-input count).
    cp_sat_parameters : dict, optional
        Extra CP-SAT parameters (name -> value), applied after the
        formulation's own (its record's ``parameters``; the baseline has none).
    bound_search : float
        Oneshot, exact models: the share of the time limit kept for the bound
        ascent (levels ``lb, lb + 1, ...`` proven infeasible one by one) when
        branch and bound has not finished; 0 disables it.
    log : bool
        Print CP-SAT's search log.
    engine : {"auto", "cp-sat", "maxsat", "linear", "portfolio", "cubes"}
        Who solves the model. ``cp-sat``: CP-SAT alone. ``maxsat``: the order
        model's clauses and RC2 (:mod:`spartition.exact.maxsat`, needs the
        ``certify`` extra), alone, in one process. ``linear``: the same
        clauses and the linear search from above
        (:func:`spartition.exact.maxsat.linear_solve`), alone, in one
        process. ``portfolio``: the engines side by side, one process each
        (:func:`spartition.exact.portfolio.portfolio_search`): with two
        workers RC2 and the linear search, with three or more CP-SAT on the
        workers left as well, with one RC2 and CP-SAT sharing the core; in
        oneshot, where RC2's bound has not passed the trivial bound after a
        quarter of the time, the exhaustive step search
        (:mod:`spartition.exact.step_run`) takes RC2's core; the
        best replayed schedule and the best proven bound win, and whichever
        engine settles the question first stops the others. ``auto`` is
        ``portfolio`` for the order model with two or more workers, no
        ``deterministic_time`` (the SAT solvers have no deterministic
        clock, so a reproducible run stays CP-SAT's) and PySAT installed;
        otherwise ``cp-sat``. With one worker ``auto`` keeps CP-SAT alone:
        two engines would share one core, and a one-worker run stays the
        reproducible CP-SAT run it always was; ask for the others by name.
        ``cubes``: the order model split on
        ``cube_depth`` order literals into ``2^cube_depth`` cubes, each
        solved by RC2, ``workers`` at a time (:mod:`spartition.exact.cubes`:
        the least cube bound is proven; the cube optima's least is the
        optimum once every cube is settled); for instances where RC2 on the
        whole model stalls.
    cube_depth : int
        Order literals the ``cubes`` engine splits on (1 to 10).
    """

    time_limit: float = 60.0
    workers: int = DEFAULT_WORKERS
    seed: int = DEFAULT_SEED
    hint: object = "auto"
    formulation: str = "auto"
    deterministic_time: float | None = None
    symmetry: bool = True
    lower_bound: int | None = None
    recompute_events: int | None = None
    cp_sat_parameters: dict | None = None
    bound_search: float = 0.5
    log: bool = False
    engine: str = "auto"
    cube_depth: int = DEFAULT_CUBE_DEPTH
