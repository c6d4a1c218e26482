"""Exact optimal I/O of the red-blue pebble game with OR-Tools CP-SAT.

:func:`solve_io` builds one of three CP-SAT formulations, hints it with the
best known schedule, solves, decodes the solution into a schedule, and checks
that schedule with :func:`spartition.game.replay` before returning it.

Formulations
------------
``order`` (oneshot, the default there)
    :mod:`spartition.io_order`: pairwise compute order, loads per (node, use),
    red sets only at computes. Exact: no horizon.
``events`` (the default for recompute)
    :mod:`spartition.io_model`: one time index per compute event. Exact for
    oneshot (exactly ``N`` events); for recompute exact only within the cap
    on the number of compute events.
``baseline``
    :mod:`spartition.io_baseline`: the plain frame-axiom model, one step per
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

import math
import time
from dataclasses import dataclass, field

import ortools
from google.protobuf import json_format, text_format
from ortools.sat import sat_parameters_pb2
from ortools.sat.python import cp_model

from spartition.bounds import min_feasible_memory, require_memory, trivial_lower_bound
from spartition.dag import CompactDAG, compact, dag_hash
from spartition.errors import IllegalMove, InfeasibleMemory, SpartitionError
from spartition.game import VARIANTS, Schedule, replay
from spartition.greedy import greedy_schedule
from spartition.io_baseline import build_baseline_model, decode_baseline
from spartition.io_model import build_event_model, decode_events, event_hint_from_schedule
from spartition.io_order import build_order_model, decode_order, order_hint_from_schedule
from spartition.symmetry import symmetry_precedences

__all__ = ["FORMULATIONS", "ORDER_PARAMETERS", "STATUSES", "TUNED_PARAMETERS", "SolveResult", "solve_io"]

STATUSES = ("OPTIMAL", "OPTIMAL_WITHIN_CAP", "FEASIBLE", "INFEASIBLE", "UNKNOWN")
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
        from spartition.registry import algorithms

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


def _status_name(code) -> str:
    return {
        cp_model.OPTIMAL: "OPTIMAL",
        cp_model.FEASIBLE: "FEASIBLE",
        cp_model.INFEASIBLE: "INFEASIBLE",
        cp_model.MODEL_INVALID: "MODEL_INVALID",
        cp_model.UNKNOWN: "UNKNOWN",
    }[code]


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


def _bound_ascent(build_at, lower, incumbent, wall_deadline, det_budget, workers, seed, log, extra):
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
        code = solver.Solve(mdl.model)
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
        A proven lower bound on the optimum of the true problem (e.g. from an
        S-partition); added to the model and to the reported bound.
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

    Notes
    -----
    If the best hint already meets the lower bound (trivial, or the given
    one) no solver runs and the result is ``OPTIMAL``. Otherwise branch and
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
    >>> from dags.classic import fft, chain
    >>> r = solve_io(fft(1), 3)
    >>> r.status, r.io, r.lower_bound
    ('OPTIMAL', 4, 4)
    >>> solve_io(fft(1), 2).status
    'INFEASIBLE'
    """
    start = time.perf_counter()
    cpu_start = time.process_time()
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; expected one of {VARIANTS}")
    if formulation not in FORMULATIONS:
        raise ValueError(f"unknown formulation {formulation!r}; expected one of {FORMULATIONS}")
    G = None if isinstance(dag, CompactDAG) else dag
    c = dag if isinstance(dag, CompactDAG) else compact(dag)
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
    base = {"variant": variant, "M": M, "dag_hash": dag_hash(G) if G is not None else ""}
    try:
        require_memory(c, M)
    except InfeasibleMemory as exc:
        return SolveResult(
            status="INFEASIBLE", io=None, lower_bound=None, schedule=None, formulation="none",
            message=str(exc), wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start,
            parameters={"options": options, "min_feasible_memory": min_feasible_memory(c)}, **base,
        )

    lb0 = max(trivial_lower_bound(c), int(lower_bound or 0))
    hints = _candidate_hints(G, c, M, variant, hint)
    if variant == "recompute" and hint == "auto" and formulation != "baseline":
        # a oneshot schedule is a recompute schedule: the oneshot optimum is a strong hint
        one = solve_io(
            dag, M, "oneshot", time_limit=max(time_limit / 4, 0.1), workers=workers, seed=seed,
            deterministic_time=deterministic_time / 4 if deterministic_time else None,
            symmetry=symmetry, lower_bound=lower_bound, cp_sat_parameters=cp_sat_parameters,
        )
        if one.schedule is not None:
            s1 = Schedule(M, variant, one.schedule.moves, meta=one.schedule.meta)
            hints.append((one.io, "oneshot-" + one.status.lower(), s1))
            hints.sort(key=lambda h: (h[0], h[1]))
    if formulation in ("order",) or (formulation == "events" and variant == "oneshot"):
        hints = [h for h in hints if _is_oneshot(c, h[2])]
    best = hints[0] if hints else None
    hint_io = best[0] if best else None

    if best is not None and best[0] <= lb0 and formulation != "baseline":
        return SolveResult(
            status="OPTIMAL", io=best[0], lower_bound=best[0], schedule=best[2], formulation="none",
            solver_status="SKIPPED", schedule_source=best[1], hint_io=hint_io,
            message=f"the {best[1]} schedule meets the lower bound {lb0}",
            wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start,
            parameters={"options": options}, **base,
        )

    N = int((~c.is_input).sum())
    sym_info = {}
    pairs = ()
    if symmetry and formulation != "baseline":
        order = _compute_order(c, best[2]) if best else None
        sb = symmetry_precedences(c, order)
        pairs = sb.pairs
        sym_info = sb.to_dict()

    upper = hint_io
    if formulation == "baseline" and upper is None:
        upper = replay(c, greedy_schedule(c, M, variant)).io
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
    code = solver.Solve(mdl.model)
    used_det = solver.response_proto.deterministic_time
    solver_status = _status_name(code)
    parameters = {"options": options, "cp_sat": _parameters_dict(solver)}

    schedule, io, source = None, None, ""
    model_bound = None
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        model_bound = int(math.ceil(solver.BestObjectiveBound() - 1e-6))
        obj = int(round(solver.ObjectiveValue()))
        schedule = decode(mdl, solver.Value, meta={"method": f"cp-sat/{formulation}"})
        try:
            res = replay(c, schedule)
        except IllegalMove as exc:
            rule = f"decoded {formulation} solution fails replay: {exc.rule}"
            raise IllegalMove(exc.step, exc.move, exc.node, rule) from exc
        if res.io > obj:
            raise SpartitionError(f"decoded schedule costs {res.io} > model objective {obj} ({formulation} model bug)")
        io, source = res.io, "solver"
    elif code == cp_model.INFEASIBLE:
        if formulation != "baseline" and best is not None:
            raise SpartitionError(f"the {formulation} model rejected the valid hint schedule (model bug)")
        model_bound = None
    elif code == cp_model.MODEL_INVALID:
        raise SpartitionError(f"CP-SAT says the model is invalid: {mdl.model.Validate()}")
    else:
        bound = solver.BestObjectiveBound()
        model_bound = int(math.ceil(bound - 1e-6)) if math.isfinite(bound) else None

    if best is not None and (io is None or best[0] < io):
        schedule, io, source = best[2], best[0], best[1]

    exact = variant == "oneshot"  # the model is exact for the true problem
    ascent = None
    if ascend and io is not None and code != cp_model.OPTIMAL:
        ascent = _bound_ascent(
            lambda level: _build(formulation, c, M, variant, N, pairs, level, level, recompute_events)[0],
            max(lb0, model_bound or 0), io, start + float(time_limit),
            det - used_det if det else None, workers, seed, log, extra,
        )
        if ascent["schedule_model"] is not None:
            mdl2, solver2 = ascent["schedule_model"]
            sch2 = decode(mdl2, solver2.Value, meta={"method": f"cp-sat/{formulation}/ascent"})
            res2 = replay(c, sch2)
            if res2.io < io:
                schedule, io, source = sch2, res2.io, "solver"
        model_bound = max(model_bound or 0, ascent["bound"])
        parameters["bound_ascent"] = {"proven_bound": ascent["bound"], "found": ascent["schedule_model"] is not None}
        if model_bound >= io:
            code = cp_model.OPTIMAL
    if exact:
        lb = max(lb0, model_bound or 0)
    else:
        lb = lb0
    if io is not None and lb > io:
        raise SpartitionError(f"proven bound {lb} exceeds the I/O {io} of a valid schedule (bug)")
    if io is None:
        status = "UNKNOWN"
    elif code == cp_model.OPTIMAL or (model_bound is not None and model_bound >= io):
        status = "OPTIMAL" if exact or io <= lb else "OPTIMAL_WITHIN_CAP"
    elif io <= lb:
        status = "OPTIMAL"
    else:
        status = "FEASIBLE"
    if status == "OPTIMAL":
        lb = io
    message = {
        "OPTIMAL": "optimal for the true problem",
        "OPTIMAL_WITHIN_CAP": f"optimal among schedules within the cap {cap}; proven lower bound only {lb}",
        "FEASIBLE": f"time limit: best I/O {io}, proven lower bound {lb}",
        "UNKNOWN": "time limit before any schedule was found",
    }[status]
    return SolveResult(
        status=status, io=io, lower_bound=lb, schedule=schedule, formulation=formulation,
        model_bound=model_bound, cap=cap, assumptions=assumptions, solver_status=solver_status,
        schedule_source=source, hint_io=hint_io, symmetry=sym_info,
        wall_s=time.perf_counter() - start, cpu_s=time.process_time() - cpu_start,
        parameters=parameters, message=message, **base,
    )
