"""Exact optimal I/O of the red-blue pebble game with OR-Tools CP-SAT.

:func:`solve_io` builds one of three CP-SAT formulations, hints it with the
best known schedule, solves, decodes the solution into a schedule, and checks
that schedule with :func:`spartition.core.game.replay` before returning it.

Formulations
------------
``order`` (oneshot, the default there)
    :mod:`spartition.exact.formulations.order`: pairwise compute order, loads per (node, use),
    red sets only at computes. Exact: no horizon.
``events`` (the default for recompute)
    :mod:`spartition.exact.formulations.events`: one time index per compute event. Exact for
    oneshot (exactly ``N`` events); for recompute exact only within the cap
    on the number of compute events.
``baseline``
    :mod:`spartition.exact.formulations.baseline`: the plain frame-axiom model, one step per
    move, with the horizon ``N + U`` (``U`` the I/O of a known schedule),
    proven harmless for oneshot and a cap for recompute.

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
from dataclasses import dataclass, field

import ortools
from google.protobuf import json_format, text_format
from ortools.sat import sat_parameters_pb2
from ortools.sat.python import cp_model

from spartition.core.bounds import min_feasible_memory, require_memory, trivial_lower_bound
from spartition.core.dag import CompactDAG, as_compact, dag_hash
from spartition.exact.cpsat import (
    Interrupt, budget_refusal, check_settings, proven_bound, solve_interruptibly, status_name,
)
from spartition.errors import ContradictoryBound, IllegalMove, InfeasibleMemory, ModelTooLarge, SpartitionError
from spartition.core.game import VARIANTS, Schedule, replay
from spartition.core.greedy import greedy_schedule
from spartition.exact.formulations.baseline import build_baseline_model, decode_baseline
from spartition.exact.formulations.events import build_event_model, decode_events, event_hint_from_schedule
from spartition.exact.formulations.order import build_order_model, decode_order, order_hint_from_schedule
from spartition.core.symmetry import symmetry_precedences

__all__ = [
    "FORMULATIONS", "ORDER_PARAMETERS", "STATUSES", "TUNED_PARAMETERS", "SolveResult", "estimate_model", "solve_io",
]

STATUSES = ("OPTIMAL", "OPTIMAL_GIVEN_BOUND", "OPTIMAL_WITHIN_CAP", "FEASIBLE", "INFEASIBLE", "UNKNOWN")
FORMULATIONS = ("auto", "order", "events", "baseline")


@dataclass(frozen=True)
class SolveResult:
    """The outcome of :func:`solve_io`, with everything needed to trace and re-run it.

    Attributes
    ----------
    status : str
        One of :data:`STATUSES`.
    io : int or None
        I/O of ``schedule`` (the best schedule found), checked by replay.
    lower_bound : int or None
        A proven lower bound on the optimum of the true problem (the variant
        without any cap); equals ``io`` when ``status == "OPTIMAL"``.
    schedule : Schedule or None
    variant, M : str, int
    formulation : str
        ``order``, ``events`` or ``baseline``; ``none`` when no solver ran.
    model_bound : int or None
        The solver's proven bound on its model; for recompute that is a
        bound only within ``cap``.
    cap : dict
        Recompute: the cap (``{"events": E}`` or ``{"horizon": T}``);
        oneshot: the horizon/event count used, with ``"harmless": True``.
    assumptions : tuple of str
        What the model's exactness rests on, in words.
    solver_status : str
        CP-SAT's own status name (``SKIPPED`` when the hint met the bound).
    schedule_source : str
        ``solver`` or the hint's name (``greedy``, an algorithm name, ``user``).
    hint_io : int or None
        I/O of the hint given to the solver.
    symmetry : dict
        Summary of the symmetry breaking used.
    wall_s : float
        Wall-clock seconds of the whole call.
    cpu_s : float
        Process CPU seconds of the whole call (all threads; the fair measure on a shared machine).
    ortools_version : str
    parameters : dict
        Every CP-SAT parameter (protobuf JSON form) and the call's options.
    message : str
        Human-readable explanation (e.g. why M is infeasible).
    interrupted : bool
        Ctrl-C stopped the search; the status is what was proven by then.
    """

    status: str
    io: int | None
    lower_bound: int | None
    schedule: Schedule | None
    variant: str
    M: int
    formulation: str
    model_bound: int | None = None
    cap: dict = field(default_factory=dict)
    assumptions: tuple = ()
    solver_status: str = ""
    schedule_source: str = ""
    hint_io: int | None = None
    symmetry: dict = field(default_factory=dict)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    ortools_version: str = ortools.__version__
    parameters: dict = field(default_factory=dict)
    message: str = ""
    dag_hash: str = ""
    interrupted: bool = False

    def to_dict(self, with_schedule: bool = False) -> dict:
        """Stable JSON form (``status``, ``io``, ``lower_bound``, ``variant``, ``M``, ``wall_s`` first)."""
        d = {
            "status": self.status,
            "io": self.io,
            "lower_bound": self.lower_bound,
            "variant": self.variant,
            "M": self.M,
            "wall_s": round(self.wall_s, 4),
            "cpu_s": round(self.cpu_s, 4),
            "formulation": self.formulation,
            "model_bound": self.model_bound,
            "cap": self.cap,
            "assumptions": list(self.assumptions),
            "solver_status": self.solver_status,
            "schedule_source": self.schedule_source,
            "hint_io": self.hint_io,
            "symmetry": self.symmetry,
            "ortools_version": self.ortools_version,
            "parameters": self.parameters,
            "message": self.message,
            "dag_hash": self.dag_hash,
            "interrupted": self.interrupted,
        }
        if with_schedule and self.schedule is not None:
            d["schedule"] = self.schedule.to_dict()
        return d


# --------------------------------------------------------------------------- hints


def _candidate_hints(G, c: CompactDAG, M: int, variant: str, hint):
    """Valid schedules to hint the solver with: [(io, source, schedule)], best first."""
    out = []
    if hint is None:
        return out
    if isinstance(hint, Schedule):
        res = replay(c, Schedule(M, variant, hint.moves))
        return [(res.io, "user", hint)]
    if hint not in ("auto", "greedy"):
        raise ValueError(f"hint must be 'auto', 'greedy', None or a Schedule, got {hint!r}")
    g = greedy_schedule(c, M, variant)
    out.append((replay(c, g).io, "greedy", g))
    family = G.graph.get("family") if G is not None else None
    if hint == "auto" and family:
        from spartition.core.registry import algorithms

        for name, alg in algorithms().items():
            if name == "greedy" or not alg.applies_to(family):
                continue
            try:
                s = alg.generate(G, M)
                s = Schedule(M, variant, s.moves, meta=s.meta)
                out.append((replay(c, s).io, name, s))
            except (SpartitionError, ValueError, KeyError, TypeError):
                continue  # the algorithm does not fit this M or DAG: not a hint
    out.sort(key=lambda h: (h[0], h[1]))
    return out


def _compute_order(c: CompactDAG, schedule: Schedule) -> list:
    order, seen = [], set()
    for move, name in schedule.moves:
        if move == "compute":
            v = c.index[name]
            if v not in seen:
                seen.add(v)
                order.append(v)
    return order


def _is_oneshot(c: CompactDAG, schedule: Schedule) -> bool:
    names = [n for m, n in schedule.moves if m == "compute"]
    return len(names) == len(set(names))


# --------------------------------------------------------------------------- solver


#: CP-SAT settings of the tuned formulations: the LP relaxation of these models is weak and
#: slow (clause learning proves the bounds), and the models carry their own symmetry breaking.
TUNED_PARAMETERS = {"linearization_level": 0, "symmetry_level": 0}

#: Added for the order formulation (oneshot): its objective is a sum of Boolean load/store
#: flags, and core-based search (unsatisfiable cores over the objective literals, as in
#: MaxSAT) lifts the lower bound where plain branch and bound stalls at the root bound
#: (attention-forward n=2, d=2: M=4 and M=6 proven optimal in seconds instead of open
#: after 900 s). Core search runs in one worker; with two or more workers the portfolio
#: is pinned to a core worker plus a default LP worker (CP-SAT's default two-worker
#: portfolio does not run core search).
ORDER_PARAMETERS = {"optimize_with_core": True}
ORDER_SUBSOLVERS = ("core", "default_lp")


def _solver_parameters(time_limit, workers, seed, deterministic_time, log, extra=None) -> cp_model.CpSolver:
    solver = cp_model.CpSolver()
    p = solver.parameters
    for key, value in (extra or {}).items():
        if isinstance(value, (list, tuple)):  # repeated fields (e.g. subsolvers)
            field_ = getattr(p, key)
            field_.clear()
            field_.extend(list(value))
        else:
            setattr(p, key, value)
    p.max_time_in_seconds = float(time_limit)
    p.num_workers = int(workers)
    p.random_seed = int(seed)
    if deterministic_time is not None:
        p.max_deterministic_time = float(deterministic_time)
    if workers > 1:
        p.interleave_search = deterministic_time is not None
    p.log_search_progress = bool(log)
    return solver


def _parameters_dict(solver: cp_model.CpSolver) -> dict:
    """Every CP-SAT parameter that differs from its default (the rest are the version's defaults)."""
    msg = text_format.Parse(str(solver.parameters), sat_parameters_pb2.SatParameters())
    return json_format.MessageToDict(msg, preserving_proto_field_name=True)


_ASSUMPTIONS = {
    "order": (
        "oneshot: every non-input node is computed exactly once, so N compute events and no horizon",
        "normal form: a node is red only from a use (or its compute) to a later use; loads happen "
        "just before a use; stores right after the compute; every optimum has such a form",
        "symmetry: DAG automorphisms map schedules to schedules of equal cost; Puget precedences "
        "on the first-compute order keep the lexicographically least optimum",
    ),
    "events_oneshot": (
        "oneshot: exactly N compute events (N = non-input nodes): no horizon to choose",
        "normal form as in the order model (lazy loads, eager deletes, store after compute)",
        "symmetry: Puget precedences on compute events",
    ),
    "events_recompute": (
        "recompute: at most E compute events (the cap); optimal only within the cap",
        "normal form (lazy loads, eager deletes, one store right after a compute)",
        "symmetry: Puget precedences on first-compute events",
    ),
    "baseline_oneshot": ("horizon N + U steps (U = I/O of a known schedule) holds an optimal schedule",),
    "baseline_recompute": ("horizon N + U steps is a cap: optimal only within it",),
}

def _build(formulation, c, M, variant, N, pairs, lower, upper, recompute_events):
    """Build one formulation; returns (model, cap, hint setter, decoder, assumptions)."""
    if formulation == "order":
        mdl = build_order_model(c, M, symmetry_pairs=pairs, lower_bound=lower, upper_bound=upper)
        return mdl, {"events": N, "harmless": True}, order_hint_from_schedule, decode_order, _ASSUMPTIONS["order"]
    if formulation == "events":
        E = N if variant == "oneshot" else int(recompute_events or 2 * N)
        mdl = build_event_model(c, M, variant, events=E, symmetry_pairs=pairs, lower_bound=lower, upper_bound=upper)
        cap = {"events": E, "harmless": variant == "oneshot"}
        return mdl, cap, event_hint_from_schedule, decode_events, _ASSUMPTIONS[f"events_{variant}"]
    T = N + upper
    mdl = build_baseline_model(c, M, variant, T)
    cap = {"horizon": T, "harmless": variant == "oneshot"}
    return mdl, cap, None, decode_baseline, _ASSUMPTIONS[f"baseline_{variant}"]


def _bound_ascent(build_at, lower, incumbent, wall_deadline, det_budget, workers, seed, log, extra, interrupt=None):
    """Prove "no schedule of cost ``level``" for level = lower, lower + 1, ... until time runs out.

    Each level is a feasibility model with the objective fixed to ``level``:
    INFEASIBLE proves the optimum exceeds ``level``; a solution is optimal
    (nothing cheaper exists, by the previous levels). Used after the
    branch-and-bound phase, whose proven bound stays at the root bound
    until it finishes, so a time-limited run still reports a lifted bound.
    """
    level = lower
    found = None
    while level < incumbent:
        left = wall_deadline - time.perf_counter()
        if left <= 0.01 or (det_budget is not None and det_budget <= 0):
            break
        mdl = build_at(level)
        solver = _solver_parameters(left, workers, seed, det_budget, log, extra)
        code = solve_interruptibly(solver, mdl.model, interrupt)
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


def solve_io(
    dag,
    M: int,
    variant: str = "oneshot",
    *,
    time_limit: float = 60.0,
    workers: int = 1,
    seed: int = 0,
    hint="auto",
    formulation: str = "auto",
    deterministic_time: float | None = None,
    symmetry: bool = True,
    lower_bound: int | None = None,
    recompute_events: int | None = None,
    cp_sat_parameters: dict | None = None,
    bound_search: float = 0.5,
    log: bool = False,
) -> SolveResult:
    """The minimum I/O of pebbling ``dag`` with ``M`` red pebbles, with proof status.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Fast memory size.
    variant : {"oneshot", "recompute"}
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
        ``auto`` is ``order`` for oneshot and ``events`` for recompute.
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
        Extra CP-SAT parameters (name -> value), applied after
        :data:`TUNED_PARAMETERS` (which the baseline does not get).
    bound_search : float
        Oneshot, exact models: the share of the time limit kept for the bound
        ascent (levels ``lb, lb + 1, ...`` proven infeasible one by one) when
        branch and bound has not finished; 0 disables it.
    log : bool
        Print CP-SAT's search log.

    Returns
    -------
    SolveResult

    Raises
    ------
    IllegalMove
        If a decoded schedule fails replay (a bug in a model).
    ContradictoryBound
        If ``lower_bound`` exceeds the I/O of a replayed schedule.
    ValueError
        For a setting CP-SAT would misread (NaN or non-positive time limit,
        a seed outside 32 bits, no workers).

    Notes
    -----
    If the best hint already meets the lower bound (trivial, or the given
    one) no solver runs and the result is ``OPTIMAL`` (``OPTIMAL_GIVEN_BOUND``
    for a given bound). A model whose estimated size
    (:func:`estimate_model`) does not fit half the time limit or half the
    available memory is not built: the best hint answers, ``FEASIBLE``,
    with solver status ``TOO_LARGE`` and the estimate in the message. Ctrl-C
    stops the search; the best schedule so far is returned with its honest
    status and ``interrupted`` set. Otherwise branch and
    bound runs on the hinted model (CP-SAT with :data:`TUNED_PARAMETERS`,
    plus core-based search, :data:`ORDER_PARAMETERS`, for the order model);
    in oneshot, if it has not finished after ``1 - bound_search`` of the
    time, the rest goes to the bound ascent (:func:`_bound_ascent`), so a
    time-limited result still carries a bound above the root bound. For
    recompute, the oneshot optimum (solved first with a quarter of the
    time) is the hint. The soundness arguments of each model are in its
    module docstring.

    Examples
    --------
    >>> from spartition.families.classic import fft, chain
    >>> r = solve_io(fft(1), 3)
    >>> r.status, r.io, r.lower_bound
    ('OPTIMAL', 4, 4)
    >>> solve_io(fft(1), 2).status
    'INFEASIBLE'
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    check_settings(time_limit=time_limit, workers=workers, seed=seed, deterministic_time=deterministic_time)
    if lower_bound is not None and (isinstance(lower_bound, bool) or not isinstance(lower_bound, int)
                                    or lower_bound < 0):
        raise ValueError(f"lower_bound must be a non-negative integer, got {lower_bound!r}")
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {FORMULATIONS}")
    G = None if isinstance(dag, CompactDAG) else dag
    c = as_compact(dag)
    if formulation == "auto":
        formulation = "order" if variant == "oneshot" else "events"
    if formulation == "order" and variant != "oneshot":
        raise ValueError("the order formulation is exact for oneshot only; use 'events' for recompute")
    options = {
        "time_limit": time_limit,
        "workers": workers,
        "seed": seed,
        "deterministic_time": deterministic_time,
        "symmetry": symmetry,
        "formulation": formulation,
        "hint": hint if isinstance(hint, (str, type(None))) else "user",
        "lower_bound": lower_bound,
        "recompute_events": recompute_events,
        "bound_search": bound_search,
    }
    run = _Run(start, cpu_start, {"variant": variant, "M": M, "dag_hash": dag_hash(G) if G is not None else ""},
               options, trivial_lower_bound(c) if c.n else 0, lower_bound)
    try:
        require_memory(c, M)
    except InfeasibleMemory as exc:
        return run.result(
            status="INFEASIBLE", io=None, lower_bound=None, schedule=None, formulation="none", message=str(exc),
            parameters={"options": options, "min_feasible_memory": min_feasible_memory(c)},
        )

    lb0 = max(run.proven, int(lower_bound or 0))
    hints = _candidate_hints(G, c, M, variant, hint)
    interrupted = False
    if variant == "recompute" and hint == "auto" and formulation != "baseline":
        # a oneshot schedule is a recompute schedule: the oneshot optimum is a strong hint
        one = solve_io(
            dag, M, "oneshot", time_limit=max(time_limit / 4, 0.1), workers=workers, seed=seed,
            deterministic_time=deterministic_time / 4 if deterministic_time else None,
            symmetry=symmetry, lower_bound=lower_bound, cp_sat_parameters=cp_sat_parameters,
        )
        interrupted = one.interrupted
        if one.schedule is not None:
            s1 = Schedule(M, variant, one.schedule.moves, meta=one.schedule.meta)
            hints.append((one.io, "oneshot-" + one.status.lower(), s1))
            hints.sort(key=lambda h: (h[0], h[1]))
    if formulation in ("order",) or (formulation == "events" and variant == "oneshot"):
        hints = [h for h in hints if _is_oneshot(c, h[2])]
    best = hints[0] if hints else None
    if best is not None and lower_bound is not None and best[0] < lower_bound:
        raise ContradictoryBound(
            f"the supplied lower bound {lower_bound} exceeds the I/O {best[0]} of the replayed "
            f"{best[1]} schedule: the bound is wrong"
        )
    run.hint_io = best[0] if best else None

    if best is not None and best[0] <= lb0 and formulation != "baseline":
        return run.classify(best[2], best[0], best[1], "none", None, closed=True,
                            solver_status="SKIPPED", parameters={"options": options},
                            note=f"the {best[1]} schedule meets the lower bound {lb0}")
    N = int((~c.is_input).sum())
    E = N if variant == "oneshot" or formulation == "baseline" else int(recompute_events or 2 * N)
    upper = run.hint_io
    if formulation == "baseline" and upper is None:
        upper = replay(c, greedy_schedule(c, M, variant)).io
    size = estimate_model(c, formulation, variant, events=E, upper=upper)
    refusal = budget_refusal(size, time_limit - (time.perf_counter() - start))
    if refusal or interrupted:
        why = refusal or "stopped by Ctrl-C before the main search"
        if best is None and interrupted:
            raise KeyboardInterrupt
        if best is None:
            raise ModelTooLarge(why, estimate=size["constraints"])
        return run.classify(best[2], best[0], best[1], "none", None, solver_status="TOO_LARGE" if refusal else
                            "INTERRUPTED", parameters={"options": options, "model_estimate": size},
                            note=why, interrupted=interrupted)

    sym_info, pairs = {}, ()
    if symmetry and formulation != "baseline":
        sb = symmetry_precedences(c, _compute_order(c, best[2]) if best else None)
        pairs, sym_info = sb.pairs, sb.to_dict()
    search = _branch_and_bound(c, M, variant, formulation, N, pairs, lb0, upper, recompute_events, best,
                               time_limit, workers, seed, deterministic_time, hint, bound_search, log,
                               cp_sat_parameters, start)
    search["parameters"]["options"] = options
    schedule, io, source = search["schedule"], search["io"], search["source"]
    if best is not None and (io is None or best[0] < io):
        schedule, io, source = best[2], best[0], best[1]
    if io is not None and lower_bound is not None and io < lower_bound:
        raise ContradictoryBound(
            f"the supplied lower bound {lower_bound} exceeds the I/O {io} of a replayed schedule: the bound is wrong"
        )
    return run.classify(schedule, io, source, formulation, search["model_bound"], closed=search["closed"],
                        cap=search["cap"], assumptions=search["assumptions"], symmetry=sym_info,
                        solver_status=search["solver_status"], parameters=search["parameters"],
                        interrupted=search["interrupted"])


def estimate_model(c: CompactDAG, formulation: str, variant: str, events: int, upper: int | None = None) -> dict:
    """The estimated size of a formulation's model, before it is built.

    Parameters
    ----------
    c : CompactDAG
    formulation : {"order", "events", "baseline"}
    variant : str
    events : int
        Compute events (the events model) or computed nodes.
    upper : int, optional
        I/O of a known schedule (the baseline's horizon is ``N + upper``).

    Returns
    -------
    dict
        ``constraints`` (estimated count), ``build_seconds`` and
        ``memory_bytes`` (estimated from the per-constraint cost).

    Notes
    -----
    Measured on exact attention, d = 2 (``benchmarks/exact_io.py
    --estimate`` prints estimate against actual): the order model holds about
    ``N^3 / 2`` constraints (a red set per compute over the nodes in flight,
    N computed nodes), the events model about ``10 N E / 2`` and the baseline
    about ``6 T (n + |E|)`` for T steps; building costs about 6 us and 300
    bytes per order constraint and 30 us and 400 bytes per event-model
    constraint. The estimate is for refusing hopeless models, not for
    accounting: within a factor of two on the DAGs measured.
    """
    N = int((~c.is_input).sum())
    edges = len(c.pred_idx)
    if formulation == "order":
        cons, per_s, per_b = N ** 3 / 2, 6e-6, 300
    elif formulation == "events":
        cons, per_s, per_b = 5 * N * events, 3e-5, 400
    else:
        T = N + int(upper or N)
        cons, per_s, per_b = 6 * T * (c.n + edges), 1e-5, 300
    cons = int(cons)
    return {"model": formulation, "variant": variant, "constraints": cons,
            "build_seconds": round(cons * per_s, 3), "memory_bytes": int(cons * per_b)}


@dataclass
class _Run:
    """What one :func:`solve_io` call knows before and after its search, to build its result."""

    start: float
    cpu_start: float
    base: dict
    options: dict
    proven: int
    supplied: int | None
    hint_io: int | None = None

    def result(self, **fields) -> SolveResult:
        return SolveResult(wall_s=time.perf_counter() - self.start, cpu_s=time.process_time() - self.cpu_start,
                           hint_io=fields.pop("hint_io", self.hint_io), **self.base, **fields)

    def classify(self, schedule, io, source, formulation, model_bound, *, closed=False, cap=None, assumptions=(),
                 symmetry=None, solver_status="", parameters=None, note="", interrupted=False) -> SolveResult:
        """The honest status of the best schedule found.

        ``closed`` says the search proved nothing cheaper than ``io`` exists
        in its model (or the hint met ``max(proven, supplied)``). Only the
        oneshot models are exact; a recompute model's proof holds within its
        cap. A proof that used a supplied bound above the tool's own is
        ``OPTIMAL_GIVEN_BOUND``: the search excluded everything below it.
        """
        exact = self.base["variant"] == "oneshot" or formulation == "none"
        given = self.supplied is not None and self.supplied > self.proven
        lb = self.proven
        if exact and model_bound is not None and not given:
            lb = max(lb, model_bound)
        if io is not None and lb > io:
            raise SpartitionError(f"proven bound {lb} exceeds the I/O {io} of a valid schedule (bug)")
        proof = closed or (model_bound is not None and io is not None and model_bound >= io)
        if io is None:
            status = "UNKNOWN"
        elif io <= lb:
            status = "OPTIMAL"
        elif proof and not exact:
            status = "OPTIMAL_WITHIN_CAP"
        elif proof:
            status = "OPTIMAL_GIVEN_BOUND" if given else "OPTIMAL"
        else:
            status = "FEASIBLE"
        if status == "OPTIMAL":
            lb = io
        message = {
            "OPTIMAL": "optimal for the true problem",
            "OPTIMAL_GIVEN_BOUND": f"optimal if the supplied lower bound {self.supplied} holds; "
                                   f"proven lower bound only {lb}",
            "OPTIMAL_WITHIN_CAP": f"optimal among schedules within the cap {cap}; proven lower bound only {lb}",
            "FEASIBLE": f"best I/O {io}, proven lower bound {lb}",
            "UNKNOWN": "no schedule was found",
        }[status]
        if note:
            message = f"{message} ({note})"
        if interrupted:
            message += "; stopped by Ctrl-C"
        if given:
            assumptions = tuple(assumptions) + (f"the supplied lower bound {self.supplied} (not checked)",)
        return self.result(status=status, io=io, lower_bound=lb, schedule=schedule, formulation=formulation,
                           model_bound=model_bound, cap=cap or {}, assumptions=tuple(assumptions),
                           solver_status=solver_status, schedule_source=source, symmetry=symmetry or {},
                           parameters=parameters or {}, message=message, interrupted=interrupted)


def _branch_and_bound(c, M, variant, formulation, N, pairs, lb0, upper, recompute_events, best, time_limit,
                      workers, seed, deterministic_time, hint, bound_search, log, cp_sat_parameters, start) -> dict:
    """Build the model, solve it (then the bound ascent), decode and replay: the search of :func:`solve_io`."""
    mdl, cap, set_hint, decode, assumptions = _build(formulation, c, M, variant, N, pairs, lb0, upper, recompute_events)
    if best is not None and set_hint is not None:
        set_hint(mdl, best[2])
    extra = dict(TUNED_PARAMETERS) if formulation != "baseline" else {}
    if formulation == "order":
        extra.update(ORDER_PARAMETERS)
        if workers > 1 and ORDER_PARAMETERS.get("optimize_with_core"):
            extra["subsolvers"] = list(ORDER_SUBSOLVERS)
    extra.update(cp_sat_parameters or {})
    remaining = max(float(time_limit) - (time.perf_counter() - start), 0.05)  # the recompute pre-solve counts
    det = deterministic_time
    if deterministic_time and variant == "recompute" and hint == "auto":
        det = deterministic_time * 3 / 4  # a quarter went to the oneshot pre-solve
    ascend = variant == "oneshot" and formulation != "baseline" and bound_search > 0
    share = 1.0 - bound_search if ascend else 1.0
    solver = _solver_parameters(remaining * share, workers, seed, det * share if det else None, log, extra)
    interrupt = Interrupt()
    code = solve_interruptibly(solver, mdl.model, interrupt)
    used_det = solver.response_proto.deterministic_time
    parameters = {"options": None, "cp_sat": _parameters_dict(solver)}
    out = {"schedule": None, "io": None, "source": "", "model_bound": None, "cap": cap, "assumptions": assumptions,
           "solver_status": status_name(code), "parameters": parameters, "closed": code == cp_model.OPTIMAL}
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        obj = int(round(solver.objective_value))
        schedule = decode(mdl, solver.value, meta={"method": f"cp-sat/{formulation}"})
        try:
            res = replay(c, schedule)
        except IllegalMove as exc:
            rule = f"decoded {formulation} solution fails replay: {exc.rule}"
            raise IllegalMove(exc.step, exc.move, exc.node, rule) from exc
        if res.io > obj:
            raise SpartitionError(f"decoded schedule costs {res.io} > model objective {obj} ({formulation} model bug)")
        if res.io < lb0:  # the model was forced to cost >= lb0; a cheaper replay refutes that bound
            raise ContradictoryBound(
                f"the lower bound {lb0} given to the search exceeds the I/O {res.io} of a replayed schedule"
            )
        out.update(schedule=schedule, io=res.io, source="solver")
        out["model_bound"] = proven_bound(solver, code, "min", res.io)
    elif code == cp_model.INFEASIBLE:
        if formulation != "baseline" and best is not None:
            raise SpartitionError(f"the {formulation} model rejected the valid hint schedule (model bug)")
    elif code == cp_model.MODEL_INVALID:
        reason = mdl.model.validate() or "no reason given; parameters: " + str(parameters["cp_sat"])
        raise SpartitionError(f"CP-SAT rejected the {formulation} model of this DAG at M = {M}: {reason}")
    io = out["io"] if out["io"] is not None else (best[0] if best else None)
    if ascend and io is not None and code != cp_model.OPTIMAL and not interrupt:
        out.update(_ascend(c, M, variant, formulation, N, pairs, recompute_events, decode, out, io, lb0,
                           start + float(time_limit), det - used_det if det else None, workers, seed, log, extra))
    out["interrupted"] = bool(interrupt) or out.get("interrupted", False)
    return out


def _ascend(c, M, variant, formulation, N, pairs, recompute_events, decode, out, io, lb0, deadline, det, workers,
            seed, log, extra) -> dict:
    """Run the bound ascent after an unfinished branch and bound; the fields of the search it improves."""
    interrupt = Interrupt()
    ascent = _bound_ascent(
        lambda level: _build(formulation, c, M, variant, N, pairs, level, level, recompute_events)[0],
        max(lb0, out["model_bound"] or 0), io, deadline, det, workers, seed, log, extra, interrupt,
    )
    upd = {"interrupted": bool(interrupt)}
    if ascent["schedule_model"] is not None:
        mdl2, solver2 = ascent["schedule_model"]
        sch2 = decode(mdl2, solver2.value, meta={"method": f"cp-sat/{formulation}/ascent"})
        res2 = replay(c, sch2)
        if out["io"] is None or res2.io < out["io"]:
            upd.update(schedule=sch2, io=res2.io, source="solver")
            io = min(io, res2.io)
    upd["model_bound"] = max(out["model_bound"] or 0, ascent["bound"])
    out["parameters"]["bound_ascent"] = {"proven_bound": ascent["bound"], "found": ascent["schedule_model"] is not None}
    upd["closed"] = upd["model_bound"] >= io
    return upd
