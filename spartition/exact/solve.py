"""Exact optimal I/O of the red-blue pebble game with OR-Tools CP-SAT.

:func:`solve_io` builds one of the registered CP-SAT formulations, hints it
with the best known schedule, solves, decodes the solution into a schedule,
and checks that schedule with :func:`spartition.core.game.replay` before
returning it. Everything it knows about a model (how to build, hint and
decode it, its cap, its assumptions, its size, its CP-SAT parameters) comes
from the model's :class:`~spartition.exact.formulations.Formulation` record.

Formulations
------------
``order`` (oneshot, the default there)
    :mod:`spartition.exact.formulations.order`: pairwise compute order, loads per (node, use),
    red sets only at computes. Exact: no horizon.
``events`` (the default for recompute)
    :mod:`spartition.exact.formulations.events`: one time index per compute event. Exact for
    oneshot (exactly ``N`` events); for recompute exact only within the cap
    on the number of compute events.
Recompute, exactly: with ``formulation="auto"`` a DAG of at most
:data:`STEP_SEARCH_NODES` nodes first gets the step search of
:mod:`spartition.exact.steps` (exhaustive A* over normal-form steps, no cap,
the best hint as its ceiling); if it finishes, its value is ``OPTIMAL``
(formulation ``step-search``), else the bound it left open is a proven bound
of the true problem and the events model continues with it. The events model
itself is exact for recompute with its default cap whenever that cap is the
harmless ``sum pi(v)`` of :mod:`spartition.exact.formulations.caps`
(``cap["harmless"]``).

``baseline``
    :mod:`spartition.exact.formulations.baseline`: the plain frame-axiom model, one step per
    move, with the horizon ``N + U`` (``U`` the I/O of a known schedule),
    proven harmless for oneshot and a cap for recompute.

Engines
-------
The order model has three engines: CP-SAT, and two MaxSAT searches on the
same model written as clauses (:mod:`spartition.exact.formulations.order_cnf`,
one soft unit clause per load or store, solved by :mod:`spartition.exact.maxsat`):
PySAT's core-guided RC2, whose bound after every core is a proven bound,
and the linear search from above, which asks CaDiCaL for a schedule
cheaper than the best one known until none exists (each answer a replayed
schedule; the last "none" proves the optimum). None wins everywhere
(RC2 closes attention-forward n=2 d=2 in seconds; the linear search
proves optima of real DAGs on which RC2 and CP-SAT stall;
docs/exact_frontier.md measures them), so ``engine="portfolio"`` runs them
side by side (:mod:`spartition.exact.portfolio`), and ``auto`` does so with
two or more workers (see :func:`solve_io`). Where memory is loose, RC2's
cores stop at the trivial bound; the portfolio then hands RC2's core to a
fourth engine that does not use the model at all, the exhaustive oneshot
step search (:mod:`spartition.exact.step_run`), which proves matmul 3x3x3
at M = 12 to 14 and lifts the bounds of the other loose rows. Where RC2
stalls on the whole model, ``engine="cubes"`` splits it on a few order
literals and solves the cubes (:mod:`spartition.exact.cubes`).
``bound_source`` names the engine behind the bound (``order`` for CP-SAT,
``maxsat`` for RC2, ``maxsat-linear`` for the linear search,
``maxsat-cubes`` for the cubes, ``step-search`` for the step search),
``schedule_source`` the one behind the schedule.

Statuses
--------
``OPTIMAL``
    The I/O is proven minimal for the true problem of the stated variant.
``OPTIMAL_WITHIN_CAP``
    Recompute only: minimal among schedules with at most ``cap`` computes
    (``events``) or steps (``baseline``); not known minimal without the cap.
    A recompute value is promoted to ``OPTIMAL`` only when it meets a valid
    lower bound of the true problem (the trivial bound or one supplied).
``OPTIMAL_GIVEN_BOUND``
    Minimal if the caller's ``lower_bound`` holds: the search excluded
    everything below it, so the proof rests on that unchecked bound.
``FEASIBLE``
    A valid schedule, not proven optimal; ``lower_bound`` is proven.
``INFEASIBLE``
    ``M`` is below the smallest feasible fast memory.
``UNKNOWN``
    No schedule was found (cannot happen with a hint).

References
----------
J.-W. Hong and H. T. Kung, "I/O complexity: the red-blue pebble game", STOC 1981.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial

from ortools.sat.python import cp_model

from spartition.core.bounds import min_feasible_memory, require_memory, trivial_lower_bound
from spartition.core.dag import CompactDAG, as_compact, dag_hash
from spartition.core.game import Schedule, replay
from spartition.core.greedy import greedy_schedule
from spartition.core.symmetry import symmetry_precedences
from spartition.errors import (
    ContradictoryBound, IllegalMove, InfeasibleMemory, ModelTooLarge, ParameterError, SpartitionError,
)
from spartition.exact import formulations
from spartition.cpsat import (
    Interrupt,
    ObjectiveWatch,
    budget_refusal,
    check_parameters,
    new_solver,
    parameters_dict,
    proven_bound,
    solve_interruptibly,
    status_name,
)
from spartition.exact.formulations import Formulation, ModelSpec, estimate_model
from spartition.exact.formulations.caps import harmless_events
from spartition.exact.formulations.order_cnf import estimate_order_cnf
from spartition.exact.hints import Hint, candidate_hints, compute_order, is_oneshot
from spartition.exact.maxsat import maxsat_available
from spartition.exact.portfolio import cubes_search, maxsat_search, portfolio_search
from spartition.exact.problem import PebblingProblem, SolverSettings
from spartition.exact.result import EXACT_SEARCHES, STATUSES, Outcome, SearchOutcome, SolveResult
from spartition.exact.steps import STEP_SEARCH_ASSUMPTIONS, step_search
from spartition.settings import (
    DEFAULT_CUBE_DEPTH, DEFAULT_SEED, DEFAULT_VARIANT, DEFAULT_WORKERS, ENGINES, check_solver_settings, check_variant,
    PARTIAL,
)
from spartition.status import Status

__all__ = ["ENGINES", "FORMULATIONS", "STATUSES", "SolveResult", "estimate_model", "solve", "solve_io"]

#: The names ``solve_io`` accepts: ``auto`` and every registered formulation
#: (:data:`spartition.exact.formulations.FORMULATIONS` holds the records).
FORMULATIONS = ("auto", *formulations.FORMULATIONS)

#: Recompute: the events model gets the harmless cap ``sum pi(v)`` of compute events when it is at
#: most this many times the number of computed nodes; beyond, ``2 N`` events, a cap that is not harmless.
HARMLESS_EVENTS_FACTOR = 10

#: Recompute, ``formulation="auto"``: DAGs of at most this many nodes get the exact step search
#: (:mod:`spartition.exact.steps`) first, with this share of the time left and at most this many states.
STEP_SEARCH_NODES = 40
STEP_SEARCH_SHARE = 0.85
STEP_SEARCH_STATES = 2_000_000


@dataclass(frozen=True)
class _Settings:
    """The solver settings of one :func:`solve_io` call, as its search reads them."""

    time_limit: float
    workers: int
    seed: int
    deterministic_time: float | None
    symmetry: bool
    hint: object
    bound_search: float
    log: bool
    cp_sat_parameters: dict | None
    start: float
    engine: str = "cp-sat"
    cube_depth: int = DEFAULT_CUBE_DEPTH
    poll: object = None  # the portfolio's "stop CP-SAT now" test, given CP-SAT's incumbent (portfolio_search)

    def options(self, formulation: str, lower_bound, recompute_events) -> dict:
        """The call's options as the result records them."""
        return {
            "time_limit": self.time_limit,
            "workers": self.workers,
            "seed": self.seed,
            "deterministic_time": self.deterministic_time,
            "symmetry": self.symmetry,
            "formulation": formulation,
            "hint": self.hint if isinstance(self.hint, (str, type(None))) else "user",
            "lower_bound": lower_bound,
            "recompute_events": recompute_events,
            "bound_search": self.bound_search,
            "engine": self.engine,
            **({"cube_depth": self.cube_depth} if self.engine == "cubes" else {}),
        }


def solve_io(
    dag,
    M: int,
    variant: str = DEFAULT_VARIANT,
    *,
    time_limit: float = 60.0,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    hint="auto",
    formulation: str = "auto",
    deterministic_time: float | None = None,
    symmetry: bool = True,
    lower_bound: int | None = None,
    recompute_events: int | None = None,
    cp_sat_parameters: dict | None = None,
    bound_search: float = 0.5,
    log: bool = False,
    engine: str = "auto",
    cube_depth: int = DEFAULT_CUBE_DEPTH,
) -> SolveResult:
    """The minimum I/O of pebbling ``dag`` with ``M`` red pebbles, with proof status.

    ``solve_io(dag, M, variant, **settings)`` is ``solve(PebblingProblem(dag,
    M, variant), SolverSettings(**settings))``: ``dag``, ``M`` and
    ``variant`` as :class:`PebblingProblem`'s attributes, every keyword as
    :class:`SolverSettings`' (documented there). See :func:`solve` for the
    result, the errors and how the search runs.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> r = solve_io(fft(1), 3)
    >>> r.status, r.io, r.lower_bound
    ('OPTIMAL', 4, 4)
    """
    return solve(PebblingProblem(dag, M, variant), SolverSettings(
        time_limit=time_limit, workers=workers, seed=seed, hint=hint, formulation=formulation,
        deterministic_time=deterministic_time, symmetry=symmetry, lower_bound=lower_bound,
        recompute_events=recompute_events, cp_sat_parameters=cp_sat_parameters, bound_search=bound_search,
        log=log, engine=engine, cube_depth=cube_depth))


def solve(problem: PebblingProblem, settings: SolverSettings | None = None) -> SolveResult:
    """The minimum I/O of ``problem``, searched as ``settings`` say, with proof status.

    Parameters
    ----------
    problem : PebblingProblem
        The DAG, the memory and the game.
    settings : SolverSettings, optional
        Default: ``SolverSettings()``, the defaults of :func:`solve_io`.

    Returns
    -------
    SolveResult

    Raises
    ------
    IllegalMove
        If a decoded schedule fails replay (a bug in a model).
    ContradictoryBound
        If ``lower_bound`` exceeds the I/O of a replayed schedule.
    ModelTooLarge
        If the model would not fit the time or memory left and no hint can answer.
    ValueError
        For a setting CP-SAT would misread (NaN or non-positive time limit,
        a seed outside 32 bits, no workers), an unknown variant,
        formulation or engine, a formulation that does not model the
        variant, or an engine that cannot solve the formulation.
    SpartitionError
        For ``engine="maxsat"``, ``"linear"``, ``"portfolio"`` or ``"cubes"`` without PySAT installed.

    Notes
    -----
    If the best hint already meets the lower bound (trivial, or the given
    one) no solver runs and the result is ``OPTIMAL`` (``OPTIMAL_GIVEN_BOUND``
    for a given bound); the baseline is always solved. A model whose
    estimated size (:func:`estimate_model`) does not fit half the time limit
    or half the available memory is not built: the best hint answers,
    ``FEASIBLE``, with solver status ``TOO_LARGE`` and the estimate in the
    message. Ctrl-C stops the search; the best schedule so far is returned
    with its honest status and ``interrupted`` set. Otherwise branch and
    bound runs on the hinted model with the formulation's CP-SAT parameters
    (the order model adds core-based search,
    :data:`spartition.exact.formulations.order.ORDER_PARAMETERS`); in
    oneshot, if it has not finished after ``1 - bound_search`` of the time,
    the rest goes to the bound ascent (:func:`_bound_ascent`), so a
    time-limited result still carries a bound above the root bound. For
    recompute, the oneshot optimum (solved first with a quarter of the
    time, by a call of ``solve_io`` on the oneshot game: ``_oneshot_hint``)
    is the hint. The soundness arguments of each model are in its
    module docstring.

    Examples
    --------
    >>> from dataclasses import replace
    >>> from spartition.families.classic.dag import fft
    >>> quick = SolverSettings(time_limit=10, workers=1)
    >>> [solve(PebblingProblem(fft(1), M), quick).status for M in (2, 3)]
    ['INFEASIBLE', 'OPTIMAL']
    >>> solve(PebblingProblem(fft(2), 4, "recompute"), replace(quick, seed=7)).io
    11
    """
    dag, M, variant = problem.dag, problem.M, problem.variant
    given = SolverSettings() if settings is None else settings
    time_limit, workers, seed, hint = given.time_limit, given.workers, given.seed, given.hint
    formulation, deterministic_time, symmetry = given.formulation, given.deterministic_time, given.symmetry
    lower_bound, recompute_events = given.lower_bound, given.recompute_events
    cp_sat_parameters, bound_search, log = given.cp_sat_parameters, given.bound_search, given.log
    engine, cube_depth = given.engine, given.cube_depth
    if isinstance(cube_depth, bool) or not isinstance(cube_depth, int) or not 1 <= cube_depth <= 10:
        raise ParameterError(f"cube_depth must be an integer from 1 to 10 (2 to 1,024 cubes), got {cube_depth!r}")
    if variant == PARTIAL:
        from spartition.exact.partial_solve import solve_io_partial

        return solve_io_partial(dag, M, time_limit, workers, seed, formulation, engine, lower_bound, recompute_events)
    settings = _Settings(time_limit, workers, seed, deterministic_time, symmetry, hint, bound_search, log,
                         cp_sat_parameters, time.perf_counter(), cube_depth=cube_depth)
    cpu_start = time.process_time()
    _check_arguments(settings, lower_bound, variant, formulation)
    G = None if isinstance(dag, CompactDAG) else dag
    c = as_compact(dag)
    record = _choose_formulation(formulation, variant)
    settings = replace(settings, engine=_choose_engine(engine, record, settings, variant))
    options = settings.options(record.name, lower_bound, recompute_events)
    base = {"variant": variant, "M": M, "dag_hash": dag_hash(G) if G is not None else ""}
    run = Outcome(settings.start, cpu_start, base, options, trivial_lower_bound(c) if c.n else 0, lower_bound)
    try:
        require_memory(c, M)
    except InfeasibleMemory as exc:
        return run.result(
            status=Status.INFEASIBLE, io=None, lower_bound=None, schedule=None, formulation="none", message=str(exc),
            parameters={"options": options, "min_feasible_memory": min_feasible_memory(c)},
        )
    lb0 = max(run.proven, int(lower_bound or 0))
    hints = candidate_hints(G, c, M, variant, settings.hint)
    interrupted = False
    if variant == "recompute" and settings.hint == "auto" and record.hint is not None:
        # a oneshot schedule is a recompute schedule: the oneshot optimum, solved first, is a strong hint
        oneshot, interrupted = _oneshot_hint(dag, M, settings, lower_bound)
        hints = sorted(hints + [oneshot], key=Hint.rank) if oneshot is not None else hints
    if variant == "oneshot" and record.hint is not None:
        hints = [h for h in hints if is_oneshot(h.schedule)]  # a oneshot model holds oneshot schedules only
    best = hints[0] if hints else None
    if best is not None and lower_bound is not None and best.io < lower_bound:
        raise ContradictoryBound(
            f"the supplied lower bound {lower_bound} exceeds the I/O {best.io} of the replayed "
            f"{best.source} schedule: the bound is wrong"
        )
    run.hint_io = best.io if best else None
    if best is not None and best.io <= lb0 and not record.always_solve:
        met = SearchOutcome(best.schedule, best.io, best.source, closed=True, solver_status=Status.SKIPPED,
                            parameters={"options": options})
        return _classify(run, met, "none", note=f"the {best.source} schedule meets the lower bound {lb0}")
    if variant == "recompute" and formulation == "auto" and best is not None and c.n <= STEP_SEARCH_NODES \
            and not interrupted:
        try:
            found = _step_search(run, c, M, best, settings, lower_bound)
        except KeyboardInterrupt:  # the in-process A* has no stop hook: Ctrl-C ends it, the best hint answers
            return _answer_unsearched(run, best, "", True, {}, stage="in the exhaustive step search")
        if found is not None:
            return found
        lb0 = max(lb0, run.proven)
    spec = _model_spec(c, M, variant, record, recompute_events, lb0, run.hint_io)
    estimate = estimate_order_cnf if settings.engine in ("maxsat", "linear", "cubes") else record.estimate
    size = estimate(c, variant, spec.events, spec.upper)
    refusal = budget_refusal(size, time_limit - (time.perf_counter() - settings.start))
    if refusal or interrupted:
        return _answer_unsearched(run, best, refusal, interrupted, size)
    sym_info = {}
    if symmetry and record.symmetry:
        sb = symmetry_precedences(c, compute_order(c, best.schedule) if best else None)
        spec, sym_info = replace(spec, pairs=sb.pairs), sb.to_dict()
    try:
        search = _SEARCHES[settings.engine](record, spec, best, settings)
    except KeyboardInterrupt:  # before the solver's own Ctrl-C handling took over (building the model)
        return _answer_unsearched(run, best, "", True, size, stage="before the main search had a result")
    search = replace(search, parameters={**search.parameters, "options": options})
    if best is not None and (search.io is None or best.io < search.io):
        search = replace(search, schedule=best.schedule, io=best.io, source=best.source)
    if search.io is not None and lower_bound is not None and search.io < lower_bound:
        raise ContradictoryBound(f"the supplied lower bound {lower_bound} exceeds the I/O {search.io} of a "
                                 f"replayed schedule: the bound is wrong")
    return _classify(run, search, record.name, symmetry=sym_info)


# --------------------------------------------------------------------------- preparing the search


def _check_arguments(settings: _Settings, lower_bound, variant: str, formulation: str) -> None:
    check_solver_settings(time_limit=settings.time_limit, workers=settings.workers, seed=settings.seed,
                   deterministic_time=settings.deterministic_time)
    check_parameters(settings.cp_sat_parameters)
    if lower_bound is not None and (isinstance(lower_bound, bool) or not isinstance(lower_bound, int)
                                    or lower_bound < 0):
        raise ParameterError(f"lower_bound must be a non-negative integer, got {lower_bound!r}")
    check_variant(variant)
    if formulation not in FORMULATIONS:
        raise ParameterError(f"unknown formulation {formulation!r}; expected one of {FORMULATIONS}")


def _choose_formulation(name: str, variant: str) -> Formulation:
    """The record ``name`` means for ``variant`` (``auto``: the registered default)."""
    record = formulations.default_formulation(variant) if name == "auto" else formulations.formulation(name)
    if variant not in record.variants:
        other = formulations.default_formulation(variant).name
        raise ValueError(f"the {record.name} formulation is exact for {' and '.join(record.variants)} only; "
                         f"use '{other}' for {variant}")
    return record




def _choose_engine(name: str, record: Formulation, settings: _Settings, variant: str) -> str:
    """The engine ``name`` means for ``record`` (``auto``: see :func:`solve_io`)."""
    if name not in ENGINES:
        raise ValueError(f"unknown engine {name!r}; expected one of {', '.join(ENGINES)}")
    if name == "auto":
        if "maxsat" in record.engines and settings.workers >= 2 and settings.deterministic_time is None \
                and maxsat_available():
            return "portfolio"
        return "cp-sat"
    if name != "cp-sat" and "maxsat" not in record.engines:
        # in the game's terms: "the events formulation has no MaxSAT engine" told a recompute user nothing
        if variant != "oneshot":
            raise ValueError(f"engine {name!r} solves the oneshot game only (on the order model); the "
                             f"{variant} game is solved by CP-SAT: engine 'cp-sat' or 'auto'")
        raise ValueError(f"engine {name!r} runs on the order model only, not on the {record.name} model: "
                         f"formulation 'order' or 'auto', or engine 'cp-sat'")
    if name != "cp-sat" and not maxsat_available():
        raise SpartitionError(f"engine {name!r} needs PySAT: pip install 'spartition[certify]' (package python-sat)")
    return name


def _oneshot_hint(dag, M: int, settings: _Settings, lower_bound) -> tuple[Hint | None, bool]:
    """Recompute: the oneshot optimum of the same DAG, by :func:`solve_io` with a quarter of the time, as a hint.

    Returns the hint (None if no schedule was found) and whether Ctrl-C
    stopped that search.
    """
    det = settings.deterministic_time
    one = solve_io(
        dag, M, "oneshot", time_limit=max(settings.time_limit / 4, 0.1), workers=settings.workers,
        seed=settings.seed, deterministic_time=det / 4 if det else None, symmetry=settings.symmetry,
        lower_bound=lower_bound, cp_sat_parameters=settings.cp_sat_parameters,
    )
    if one.schedule is None:
        return None, one.interrupted
    schedule = Schedule(M, "recompute", one.schedule.moves, meta=one.schedule.meta)
    return Hint(schedule, one.io, "oneshot-" + one.status.lower()), one.interrupted


def _classify(run: Outcome, found: SearchOutcome, formulation: str, **fields) -> SolveResult:
    """:meth:`Outcome.classify` of ``found``, told whether ``formulation``'s proof holds for the true problem.

    ``none`` (no model ran) and the step search hold for it with no cap;
    a model holds for it when its record says it is exact for the variant
    within the cap it ran with.
    """
    exact = formulation in EXACT_SEARCHES or formulations.formulation(formulation).proves(run.base["variant"],
                                                                                         found.cap)
    return run.classify(found, formulation, exact, **fields)


def _step_search(run: Outcome, c: CompactDAG, M: int, best, settings: _Settings, lower_bound) -> SolveResult | None:
    """Recompute: the exact step search with the best hint as its ceiling.

    Returns the OPTIMAL result when the search finishes; otherwise lifts
    ``run.proven`` to the least bound it left open (a bound of the true
    problem, :mod:`spartition.exact.steps`) and returns None.
    """
    left = float(settings.time_limit) - (time.perf_counter() - settings.start)
    if left <= 0.05:
        return None
    found = step_search(c, M, upper=best.schedule, max_states=STEP_SEARCH_STATES, time_limit=left * STEP_SEARCH_SHARE)
    if lower_bound is not None and found.io < lower_bound:
        raise ContradictoryBound(f"the supplied lower bound {lower_bound} exceeds the I/O {found.io} of a replayed "
                                 f"schedule: the bound is wrong")
    stats = {"options": run.options, "step_search": {"states": found.states, "expanded": found.expanded,
                                                      "complete": found.complete, "lower_bound": found.lower_bound,
                                                      "wall_s": round(found.wall_s, 3)}}
    if not found.complete:  # its open bound is proven for the true game; the options record where it came from
        if found.lower_bound > run.proven:
            run.proven, run.proven_by = found.lower_bound, "step-search"
        run.options["step_search"] = stats["step_search"]
        return None
    source = "step-search" if found.io < best.io else best.source
    done = SearchOutcome(found.schedule, found.io, source, model_bound=found.io, closed=True,
                         solver_status="SEARCH_COMPLETE", parameters=stats, assumptions=STEP_SEARCH_ASSUMPTIONS,
                         used_supplied=False)
    return _classify(run, done, "step-search", note="exhaustive A* over normal-form steps")


def _model_spec(c: CompactDAG, M: int, variant: str, record: Formulation, recompute_events, lower: int,
                upper: int | None) -> ModelSpec:
    N = int((~c.is_input).sum())
    if variant == "oneshot":
        events = N
    else:  # the harmless cap (formulations.caps) unless it is too large to be worth building
        harmless = harmless_events(c)
        events = int(recompute_events or (harmless if harmless <= HARMLESS_EVENTS_FACTOR * N else 2 * N))
    if record.needs_upper and upper is None:
        upper = replay(c, greedy_schedule(c, M, variant)).io
    return ModelSpec(cdag=c, M=M, variant=variant, computed=N, events=events, lower=lower, upper=upper)


def _answer_unsearched(run: Outcome, best, refusal: str, interrupted: bool, size: dict,
                       stage: str = "before the main search") -> SolveResult:
    """The best hint as the answer when the model is too large to build, or Ctrl-C came first (``stage``: when)."""
    why = refusal or f"the search was cut short {stage}"  # the message adds "stopped by Ctrl-C"
    if best is None and interrupted:
        raise KeyboardInterrupt
    if best is None:
        raise ModelTooLarge(why, estimate=size["constraints"])
    hinted = SearchOutcome(best.schedule, best.io, best.source,
                           solver_status="TOO_LARGE" if refusal else Status.INTERRUPTED,
                           parameters={"options": run.options, "model_estimate": size}, interrupted=interrupted)
    return _classify(run, hinted, "none", note=why)


# --------------------------------------------------------------------------- the search


def _branch_and_bound(record: Formulation, spec: ModelSpec, best: Hint | None, settings: _Settings) -> SearchOutcome:
    """Build the model, solve it (then the bound ascent), decode and replay: the search of :func:`solve_io`."""
    mdl = record.build(spec)
    if best is not None and record.hint is not None:
        record.hint(mdl, best.schedule)
    extra = record.solver_parameters(settings.workers)
    extra.update(settings.cp_sat_parameters or {})
    # the recompute pre-solve counts against the time limit
    remaining = max(float(settings.time_limit) - (time.perf_counter() - settings.start), 0.05)
    det = settings.deterministic_time
    if det and spec.variant == "recompute" and settings.hint == "auto":
        det = det * 3 / 4  # a quarter went to the oneshot pre-solve
    ascend = record.bounded and record.proves(spec.variant, record.cap(spec)) and settings.bound_search > 0
    share = 1.0 - settings.bound_search if ascend else 1.0
    solver = new_solver(remaining * share, settings.workers, settings.seed, det * share if det else None,
                        settings.log, extra)
    interrupt = Interrupt()
    watch = ObjectiveWatch() if settings.poll is not None else None

    def poll() -> bool:  # the other engine settles it once its bound meets CP-SAT's incumbent, not only the hint
        return settings.poll(watch.best)

    code = solve_interruptibly(solver, mdl.model, interrupt, poll if watch is not None else None, watch)
    used_det = solver.response_proto.deterministic_time
    parameters = {"options": None, "cp_sat": parameters_dict(solver)}
    # never closed by the status name: by the proven bound alone (SearchOutcome.settles)
    out = SearchOutcome(cap=record.cap(spec), assumptions=record.assumptions[spec.variant],
                        solver_status=status_name(code), parameters=parameters)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        out = _decode_solution(record, spec, mdl, solver, code, out)
    elif code == cp_model.INFEASIBLE:
        if record.hint is not None and best is not None:  # a hinted model holds the hint schedule
            raise SpartitionError(f"the {record.name} model rejected the valid hint schedule (model bug)")
    elif code == cp_model.MODEL_INVALID:
        reason = mdl.model.validate() or "no reason given; parameters: " + str(parameters["cp_sat"])
        raise SpartitionError(f"CP-SAT rejected the {record.name} model of this DAG at M = {spec.M}: {reason}")
    io = out.io if out.io is not None else (best.io if best else None)
    settled = settings.poll is not None and settings.poll(io)  # the portfolio's other engine settled it
    if ascend and io is not None and not out.settles() and not interrupt and not settled:
        deadline = settings.start + float(settings.time_limit)
        out = _ascend(record, spec, out, io, deadline, det - used_det if det else None, settings, extra)
    return replace(out, interrupted=bool(interrupt) or out.interrupted)


def _decode_solution(record: Formulation, spec: ModelSpec, mdl, solver, code, out: SearchOutcome) -> SearchOutcome:
    """The solver's schedule, replayed, and the bound its status proves; raises on a model bug."""
    obj = int(round(solver.objective_value))
    schedule = record.decode(mdl, solver.value, meta={"method": f"cp-sat/{record.name}"})
    try:
        res = replay(spec.cdag, schedule)
    except IllegalMove as exc:
        rule = f"decoded {record.name} solution fails replay: {exc.rule}"
        raise IllegalMove(exc.step, exc.move, exc.node, rule) from exc
    if res.io > obj:
        raise SpartitionError(f"decoded schedule costs {res.io} > model objective {obj} ({record.name} model bug)")
    if res.io < spec.lower:  # the model was forced to cost >= lower; a cheaper replay refutes that bound
        raise ContradictoryBound(
            f"the lower bound {spec.lower} given to the search exceeds the I/O {res.io} of a replayed schedule"
        )
    return replace(out, schedule=schedule, io=res.io, source="solver",
                   model_bound=proven_bound(solver, code, "min", res.io))


def _ascend(record: Formulation, spec: ModelSpec, out: SearchOutcome, io: int, deadline: float, det,
            settings: _Settings, extra: dict) -> SearchOutcome:
    """Run the bound ascent after an unfinished branch and bound; the search ``out`` it improves."""
    interrupt = Interrupt()
    build_seconds = record.estimate(spec.cdag, spec.variant, spec.events, spec.upper)["build_seconds"]
    ascent = _bound_ascent(
        lambda level: record.build(replace(spec, lower=level, upper=level)),
        max(spec.lower, out.model_bound or 0), io, deadline, det, settings, extra, interrupt, build_seconds,
    )
    upd = {"interrupted": bool(interrupt)}
    if ascent["schedule_model"] is not None:
        mdl2, solver2 = ascent["schedule_model"]
        sch2 = record.decode(mdl2, solver2.value, meta={"method": f"cp-sat/{record.name}/ascent"})
        res2 = replay(spec.cdag, sch2)
        if out.io is None or res2.io < out.io:
            upd.update(schedule=sch2, io=res2.io, source="solver")
            io = min(io, res2.io)
    bound = max(out.model_bound or 0, ascent["bound"])
    found = ascent["schedule_model"] is not None
    parameters = {**out.parameters, "bound_ascent": {"proven_bound": ascent["bound"], "found": found}}
    # the ascent proved every level below ``bound`` empty: at the best I/O known, the search is closed
    return replace(out, model_bound=bound, parameters=parameters, closed=bound >= io, **upd)


def _bound_ascent(build_at, lower, incumbent, wall_deadline, det_budget, settings: _Settings, extra,
                  interrupt=None, build_seconds: float = 0.0) -> dict:
    """Prove "no schedule of cost ``level``" for level = lower, lower + 1, ... until time runs out.

    Each level is a feasibility model with the objective fixed to ``level``:
    INFEASIBLE proves the optimum exceeds ``level``; a solution is optimal
    (nothing cheaper exists, by the previous levels). Used after the
    branch-and-bound phase, whose proven bound stays at the root bound
    until it finishes, so a time-limited run still reports a lifted bound.
    A level is not built when its estimated ``build_seconds`` exceed the time
    left, and it is solved with what is left after its build.
    """
    level = lower
    found = None
    while level < incumbent:
        left = wall_deadline - time.perf_counter()
        if left <= 0.01 or (det_budget is not None and det_budget <= 0):
            break
        if settings.poll is not None and settings.poll(incumbent):
            break
        if build_seconds > left:  # the build alone would run past the limit (matmul 3x3x3 recompute: 20.5 s at 15)
            break
        mdl = build_at(level)
        left = wall_deadline - time.perf_counter()
        if left <= 0.01:
            break
        solver = new_solver(left, settings.workers, settings.seed, det_budget, settings.log, extra)
        poll = None if settings.poll is None else partial(settings.poll, incumbent)
        code = solve_interruptibly(solver, mdl.model, interrupt, poll)
        if poll is not None and poll() and code not in (cp_model.OPTIMAL, cp_model.INFEASIBLE):
            break  # stopped for the other engine: an unfinished level proves nothing
        if interrupt:
            break  # a level stopped by Ctrl-C proves nothing
        if det_budget is not None:
            det_budget -= solver.response_proto.deterministic_time
        if code == cp_model.INFEASIBLE:
            level += 1
            continue
        if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
            found = (mdl, solver)
        break
    return {"bound": level, "schedule_model": found}


def _maxsat(record: Formulation, spec: ModelSpec, best: Hint | None, settings: _Settings) -> SearchOutcome:
    return maxsat_search(record, spec, settings.time_limit, settings.start)


def _linear(record: Formulation, spec: ModelSpec, best: Hint | None, settings: _Settings) -> SearchOutcome:
    return maxsat_search(record, spec, settings.time_limit, settings.start, method="linear")


def _cubes(record: Formulation, spec: ModelSpec, best: Hint | None, settings: _Settings) -> SearchOutcome:
    return cubes_search(record, spec, settings.time_limit, settings.start, settings.workers, settings.cube_depth)


def _portfolio(record: Formulation, spec: ModelSpec, best: Hint | None, settings: _Settings) -> SearchOutcome:
    """RC2, the linear search and CP-SAT on the order model (:func:`spartition.exact.portfolio.portfolio_search`)."""

    def cp_search(workers: int, poll) -> SearchOutcome:  # the branch and bound, stopped once another engine settles it
        # RC2 proves the bounds: a lone CP-SAT worker interleaves LNS, which finds schedules (exact_frontier.md)
        cp = {**({"interleave_search": True} if workers == 1 else {}), **(settings.cp_sat_parameters or {})}
        return _branch_and_bound(record, spec, best,
                                 replace(settings, workers=workers, poll=poll, cp_sat_parameters=cp))
    out = portfolio_search(spec, best.io if best is not None else None, cp_search, settings.workers,
                           settings.time_limit, settings.start,
                           upper_schedule=best.schedule if best is not None and spec.variant == "oneshot" else None)
    # every engine states the order model (the step search adds its own assumptions): its record's, once
    return replace(out, cap=out.cap or record.cap(spec),
                   assumptions=tuple(dict.fromkeys((*record.assumptions[spec.variant], *out.assumptions))))


#: The search behind each engine of :func:`solve_io` (after ``auto`` is resolved).
_SEARCHES = {"cp-sat": _branch_and_bound, "maxsat": _maxsat, "linear": _linear, "portfolio": _portfolio,
             "cubes": _cubes}
