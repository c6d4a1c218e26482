"""Tightness studies: the exact optimum, lower bounds, published formulas and algorithms side by side.

A study takes one DAG family at fixed parameters and a list of fast-memory
sizes M. For every M it computes (or reads from the results store)

* the exact optimal I/O (CP-SAT :func:`spartition.exact.solve.solve_io`, or the
  state search :func:`spartition.exact.brute.brute_force`), with its status;
* every computed lower bound (:func:`spartition.partition.lower_bounds.io_lower_bounds`:
  trivial, Hong-Kung, best X-partition, class capacity), with provenance;
* the replayed I/O of every registered algorithm that applies;

evaluates the registered formulas (:mod:`spartition.study.formulas`) and gives
verdicts (:func:`verdicts`). The units of work are :class:`Task` objects --
pure, picklable, run anywhere by :func:`run_task` -- so the same rows come
from an in-process loop, a process pool or a Dask cluster
(:mod:`spartition.study.sweep`).

Verdicts
--------
``violated``
    A bug or a false published claim: a computed lower bound (valid even
    when a search stopped early) above a certified upper bound (the I/O of
    a replayed schedule); an algorithm's I/O below a proven optimum; two
    exact methods proving different optima; an explicit-constant published
    lower bound, in its regime, above a certified upper bound; an
    explicit-constant published upper bound, in its regime, below a proven
    lower bound. Asymptotic formulas (constant unknown) are never claims a
    number can violate.
``tight``
    A computed lower bound equals the proven optimum and an algorithm
    attains it.
``mismatch``
    An algorithm's replayed I/O differs from the closed form its generator
    documents (``io_formula``).
``invalid``
    A certificate schedule rejected by replay.

Nothing unproven is called optimal: an exact row whose search stopped
early is shown with its status, incumbent, proven bound and time limit.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache

from spartition import __version__
from spartition.errors import (
    InfeasibleMemory,
    InvalidDAG,
    InvalidSchedule,
    ModelTooLarge,
    SpartitionError,
    UnknownFamily,
)
from spartition.study.store import PROVEN_STATUSES, ResultKey, StoredResult, canonical_json, check_time_limit

__all__ = [
    "BUILTIN_STUDY",
    "EXACT_METHODS",
    "Task",
    "StudySpec",
    "StudyRow",
    "Study",
    "Verdict",
    "plan_tasks",
    "run_task",
    "build_dag",
    "default_memories",
    "assemble_row",
    "verdicts",
    "compare",
    "rows_from_store",
    "exact_available",
    "format_exact",
    "check_positive_int",
    "check_seed",
    "sigint_watch",
]

EXACT_METHODS = ("cpsat", "brute")
FINAL_EXACT = ("OPTIMAL", "INFEASIBLE")
#: Statuses whose value is the I/O of a replayed schedule (a certified upper bound).
SCHEDULE_STATUSES = ("OPTIMAL", "OPTIMAL_WITHIN_CAP", "FEASIBLE", "VALID")
#: The status of a method refused for an instance (its model would not fit the time or memory budget).
SKIPPED = "SKIPPED"
VARIANTS = ("oneshot", "recompute")
#: CP-SAT takes a 32-bit random seed.
SEED_MAX = 2**31 - 1


def check_positive_int(value, name: str) -> int:
    """``value`` if it is an integer >= 1 (not a bool), else ValueError naming ``name``.

    Examples
    --------
    >>> check_positive_int(2, "workers")
    2
    >>> check_positive_int(0, "--workers")
    Traceback (most recent call last):
    ...
    ValueError: --workers must be a positive integer, got 0
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


def check_seed(value, name: str = "seed") -> int:
    """``value`` if it is an integer in CP-SAT's seed range 0 .. 2**31 - 1, else ValueError naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= SEED_MAX:
        raise ValueError(f"{name} must be an integer from 0 to {SEED_MAX}, got {value!r}")
    return value


def _check_names(value, name: str, valid) -> None:
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise ValueError(f"{name} must be a list of names, got {value!r}")
    for v in value:
        if v not in valid:
            raise UnknownFamily(f"unknown {name} {v!r}; valid: {', '.join(valid)}")


def _bound_names() -> tuple:
    """The registered lower-bound methods, in their order (imported late: the solver modules are slow to load)."""
    from spartition.partition.lower_bounds import METHODS

    return METHODS


def _closed_form_bound(method: str) -> bool:
    """Whether store method ``bound:<name>`` is a registered bound that runs no solver."""
    from spartition.partition.lower_bounds import BOUND_METHODS

    kind, _, name = method.partition(":")
    bound = BOUND_METHODS.get(name) if kind == "bound" else None
    return bound is not None and not bound.solver


def method_version(method: str) -> str:
    """The version string a stored row of ``method`` is keyed by.

    Parameters
    ----------
    method : str
        A store method, ``exact:<name>``, ``bound:<name>`` or ``algorithm:<name>``.

    Returns
    -------
    str
        ``spartition <version>``, followed by the solver library's version
        for methods whose results depend on it (CP-SAT and the bounds that
        run a solver).
    """
    import ortools

    base = f"spartition {__version__}"
    if method == "exact:cpsat" or method.startswith("bound:") and not _closed_form_bound(method):
        return f"{base}; ortools {ortools.__version__}"
    return base


# ---------------------------------------------------------------- DAGs


@lru_cache(maxsize=32)
def _build_cached(family: str, params_json: str):
    import json

    from spartition.core.registry import build

    return build(family, **json.loads(params_json))


def build_dag(family: str, params: dict):
    """Build (once per process) the DAG of ``family`` at ``params``; do not mutate the result."""
    return _build_cached(family, canonical_json(params))


@lru_cache(maxsize=32)
def _hash_cached(family: str, params_json: str) -> str:
    from spartition.core.dag import dag_hash

    return dag_hash(_build_cached(family, params_json))


def family_dag_hash(family: str, params: dict) -> str:
    """The :func:`~spartition.core.dag.dag_hash` of family ``family`` at ``params`` (built and hashed once per process)."""
    return _hash_cached(family, canonical_json(params))


def default_memories(G, variant: str = "oneshot") -> list[int]:
    """The whole interesting M range of ``G``: from the smallest feasible M to saturation.

    Saturation is an M at which the furthest-next-use schedule already
    costs the trivial lower bound (found by bisection, the smallest one when
    the greedy cost is monotone in M); the optimum is non-increasing in M
    and never below that bound, so every larger M has the same optimum (the
    trivial bound) and tells nothing new.

    Examples
    --------
    >>> from spartition.families.classic import fft
    >>> default_memories(fft(1))
    [3]
    """
    from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
    from spartition.core.game import replay
    from spartition.core.greedy import greedy_schedule

    lo = max(1, min_feasible_memory(G))
    trivial = trivial_lower_bound(G)

    def saturated(M):
        return replay(G, greedy_schedule(G, M, variant)).io <= trivial

    # every node red at once: greedy never evicts, so it costs the trivial bound
    hi = max(lo, G.number_of_nodes())
    a = lo
    while a < hi:  # invariant: saturated(hi)
        mid = (a + hi) // 2
        if saturated(mid):
            hi = mid
        else:
            a = mid + 1
    return list(range(lo, hi + 1))


# ---------------------------------------------------------------- tasks


@dataclass(frozen=True)
class Task:
    """One unit of work: one method on one DAG at one M.

    ``kind`` is ``exact`` (``name`` in :data:`EXACT_METHODS`), ``bounds``
    (``name`` = ``"all"``: every registered bound method
    (:data:`spartition.partition.lower_bounds.BOUND_METHODS`) in one run,
    sharing partitions) or ``algorithm`` (``name`` a registered algorithm).
    """

    family: str
    params: tuple  # sorted (key, value) pairs: hashable
    M: int
    variant: str
    kind: str
    name: str
    time_limit: float | None = None
    workers: int = 1
    seed: int = 0
    options: tuple = ()

    @property
    def params_dict(self) -> dict:
        return dict(self.params)

    def methods(self) -> list[str]:
        """The store methods this task writes."""
        if self.kind == "exact":
            return [f"exact:{self.name}"]
        if self.kind == "bounds":
            return [f"bound:{m}" for m in dict(self.options).get("methods", _bound_names())]
        return [f"algorithm:{self.name}"]

    def solver_params(self, method: str) -> dict:
        """Parameters the stored rows are keyed by (the time limit is a column)."""
        if _closed_form_bound(method) or method.startswith("algorithm:"):
            return {}
        opts = {k: v for k, v in self.options if k != "methods"}
        if method == "exact:brute":
            return opts
        return {"workers": self.workers, "seed": self.seed, **opts}

    def keys(self, dag_hash: str | None = None) -> list[ResultKey]:
        """The store keys of the rows this task produces."""
        h = dag_hash or family_dag_hash(self.family, self.params_dict)
        return [ResultKey(h, self.M, self.variant, m, self.solver_params(m), method_version(m)) for m in self.methods()]

    def effective_limit(self, method: str) -> float | None:
        """The time limit that matters for ``method`` (None for methods without one)."""
        if method == "exact:brute" or _closed_form_bound(method) or method.startswith("algorithm:"):
            return None
        return self.time_limit

    def label(self) -> str:
        p = ",".join(f"{k}={v}" for k, v in self.params)
        return f"{self.family}:{p} M={self.M} {self.variant} {self.kind}:{self.name}"


def _row(task: Task, method: str, h: str, status: str, value, bound, proven: bool, wall: float, record: dict,
         certificate=None) -> StoredResult:
    return StoredResult(
        key=ResultKey(h, task.M, task.variant, method, task.solver_params(method), method_version(method)),
        status=status, value=None if value is None else float(value), bound=None if bound is None else float(bound),
        proven=proven, time_limit=task.effective_limit(method), wall_s=round(wall, 4), record=record,
        family=task.family, family_params=task.params_dict, certificate=certificate,
    )


def _checked_io(G, schedule) -> tuple[int | None, str | None]:
    """Replay ``schedule`` (the independent check of every certificate)."""
    from spartition.core.game import replay

    try:
        return replay(G, schedule).io, None
    except InvalidSchedule as exc:
        return None, str(exc)


def _run_exact(task: Task, G, h: str) -> list[StoredResult]:
    method = f"exact:{task.name}"
    t0 = time.perf_counter()
    opts = dict(task.options)
    try:
        if task.name == "brute":
            from spartition.exact.brute import brute_force

            res = brute_force(G, task.M, task.variant, max_states=opts.get("max_states", 5_000_000))
            status, io, lb, schedule, record = "OPTIMAL", res.io, res.io, res.schedule, res.to_dict()
        elif task.name == "cpsat":
            from spartition.exact.solve import solve_io

            res = solve_io(G, task.M, task.variant, time_limit=task.time_limit, workers=task.workers, seed=task.seed)
            status, io, lb, schedule, record = res.status, res.io, res.lower_bound, res.schedule, res.to_dict()
        else:
            raise ValueError(f"unknown exact method {task.name!r}; expected one of {EXACT_METHODS}")
    except InfeasibleMemory as exc:
        return [_row(task, method, h, "INFEASIBLE", None, None, True, time.perf_counter() - t0, {"error": str(exc)})]
    except ModelTooLarge as exc:  # refused before building: the other methods of the row still run
        return [_skipped(task, method, h, exc, time.perf_counter() - t0)]
    except SpartitionError as exc:  # brute force gave up (state cap): nothing proven
        return [_row(task, method, h, "UNKNOWN", None, None, False, time.perf_counter() - t0, {"error": str(exc)})]
    wall = time.perf_counter() - t0
    cert = None
    if schedule is not None:
        checked, err = _checked_io(G, schedule)
        if err is not None or checked != io:
            record = {**record, "check": err or f"replay says {checked}, solver says {io}"}
            return [_row(task, method, h, "INVALID", io, lb, False, wall, record)]
        cert = schedule.to_dict()
    proven = status in FINAL_EXACT
    return [_row(task, method, h, status, io, lb, proven, wall, record, cert)]


def _run_bounds(task: Task, G, h: str) -> list[StoredResult]:
    from spartition.partition.lower_bounds import io_lower_bounds

    opts = dict(task.options)
    methods = tuple(opts.pop("methods", _bound_names()))

    def run(ms):
        return io_lower_bounds(G, task.M, methods=ms, time_limit=task.time_limit or 30.0,
                               workers=task.workers, seed=task.seed, **opts)

    t0 = time.perf_counter()
    skipped = []
    try:
        bounds = list(run(methods))
    except ModelTooLarge:
        # one method's model is refused: run each alone, so the cheap bounds are still stored
        bounds = []
        for m in methods:
            t1 = time.perf_counter()
            try:
                bounds += list(run((m,)))
            except ModelTooLarge as exc:
                skipped.append(_skipped(task, f"bound:{m}", h, exc, time.perf_counter() - t1))
    wall = time.perf_counter() - t0
    out = []
    for b in bounds:
        # final only with a proven status: a bound from a search stopped early is recomputed by a longer run
        proven = bool(b.proven) and b.status in PROVEN_STATUSES
        out.append(_row(task, f"bound:{b.method}", h, b.status, b.value, b.value, proven,
                        b.seconds if b.seconds else wall, b.to_dict()))
    return out + skipped


def _skipped(task: Task, method: str, h: str, exc: ModelTooLarge, wall: float) -> StoredResult:
    """The row of a method refused for this instance: no value, never final, with the refusal as a note."""
    record = {"error": f"model too large: {exc}", "skipped": True, "estimate": exc.estimate, "limit": exc.limit}
    return _row(task, method, h, SKIPPED, None, None, False, wall, record)


def _run_algorithm(task: Task, G, h: str) -> list[StoredResult]:
    from spartition.core.registry import algorithm

    method = f"algorithm:{task.name}"
    alg = algorithm(task.name)
    t0 = time.perf_counter()
    record = {"algorithm": task.name, "source": getattr(alg, "source", "")}
    formula = None
    if getattr(alg, "io_formula", None) is not None:
        try:
            formula = int(alg.io_formula({**task.params_dict, **G.graph.get("params", {})}, task.M))
        except (SpartitionError, ValueError, KeyError, ZeroDivisionError):  # no closed form here
            formula = None
    record["io_formula"] = formula
    try:
        schedule = alg.generate(G, task.M, task.variant)
    except ModelTooLarge as exc:
        return [_skipped(task, method, h, exc, time.perf_counter() - t0)]
    except (InfeasibleMemory, InvalidDAG) as exc:
        # M below the algorithm's smallest, or a DAG it does not run on (e.g. a sum order it cannot follow)
        record["error"] = f"{type(exc).__name__}: {exc}"
        return [_row(task, method, h, "NOT_APPLICABLE", None, None, True, time.perf_counter() - t0, record)]
    io, err = _checked_io(G, schedule)
    wall = time.perf_counter() - t0
    if err is not None:
        record["error"] = err
        return [_row(task, method, h, "INVALID", None, None, False, wall, record)]
    record["io"] = io
    return [_row(task, method, h, "VALID", io, None, True, wall, record, schedule.to_dict())]


def run_task(task: Task) -> list[StoredResult]:
    """Compute ``task``: the rows it produces, each with its certificate. Pure and picklable.

    Raises
    ------
    SpartitionError
        On an unknown family or algorithm, or a failure that is a bug.

    Examples
    --------
    >>> t = Task("chain", (("n", 3),), 2, "oneshot", "algorithm", "greedy")
    >>> [(r.key.method, r.status, r.value) for r in run_task(t)]
    [('algorithm:greedy', 'VALID', 2.0)]
    """
    check_time_limit(task.time_limit, "time_limit")
    check_positive_int(task.workers, "workers")
    check_seed(task.seed, "seed")
    G = build_dag(task.family, task.params_dict)
    h = family_dag_hash(task.family, task.params_dict)
    if task.kind == "exact":
        return _run_exact(task, G, h)
    if task.kind == "bounds":
        return _run_bounds(task, G, h)
    if task.kind == "algorithm":
        return _run_algorithm(task, G, h)
    raise ValueError(f"unknown task kind {task.kind!r}")


# ---------------------------------------------------------------- specs


@dataclass(frozen=True)
class StudySpec:
    """What to compute for one DAG (family at fixed parameters) over memories ``Ms``.

    Attributes
    ----------
    family : str
    params : dict
        Builder parameters.
    Ms : tuple of int or None
        None: :func:`default_memories`.
    variant : {"oneshot", "recompute"}
    exact : tuple of str
        Exact methods (:data:`EXACT_METHODS`).
    bounds : bool
        Compute the lower bounds.
    algorithms : tuple of str or None
        Algorithm names; None: every registered one that applies.
    time_limit : float
        Seconds per exact run.
    bound_time_limit : float
        Seconds per partition / capacity run.
    workers, seed : int
        CP-SAT settings.
    """

    family: str
    params: dict = field(default_factory=dict)
    Ms: tuple | None = None
    variant: str = "oneshot"
    exact: tuple = ("cpsat",)
    bounds: bool = True
    algorithms: tuple | None = None
    time_limit: float = 60.0
    bound_time_limit: float = 20.0
    workers: int = 1
    seed: int = 0
    brute_max_states: int = 2_000_000

    def __post_init__(self):
        # checked here so that every entry point (compare, sweeps, claims) refuses the same bad settings
        if not isinstance(self.family, str) or not self.family:
            raise ValueError(f"family must be a family name, got {self.family!r}")
        if not isinstance(self.params, dict):
            raise ValueError(f"params must be a dict of builder parameters, got {self.params!r}")
        if self.Ms is not None:
            if isinstance(self.Ms, (str, bytes)) or not isinstance(self.Ms, (tuple, list)) or not self.Ms:
                raise ValueError(f"Ms must be a non-empty list of memories (or None), got {self.Ms!r}")
            for M in self.Ms:
                check_positive_int(M, "M")
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, got {self.variant!r}")
        _check_names(self.exact, "exact method", EXACT_METHODS)
        if not isinstance(self.bounds, bool):
            raise ValueError(f"bounds must be true or false, got {self.bounds!r}")
        if self.algorithms is not None:
            from spartition.core.registry import algorithms

            _check_names(self.algorithms, "algorithm", list(algorithms()))
        check_time_limit(self.time_limit, "time_limit", allow_none=False)
        check_time_limit(self.bound_time_limit, "bound_time_limit", allow_none=False)
        check_positive_int(self.workers, "workers")
        check_seed(self.seed, "seed")
        check_positive_int(self.brute_max_states, "brute_max_states")

    def dag(self):
        return build_dag(self.family, self.params)

    def memories(self) -> list[int]:
        return list(self.Ms) if self.Ms is not None else default_memories(self.dag(), self.variant)

    def algorithm_names(self) -> list[str]:
        from spartition.core.registry import algorithms

        if self.algorithms is not None:
            return list(self.algorithms)
        return [name for name, a in algorithms().items() if _applies(a, self.family)]

    def to_dict(self) -> dict:
        return {"family": self.family, "params": dict(self.params), "Ms": None if self.Ms is None else list(self.Ms),
                "variant": self.variant, "exact": list(self.exact), "bounds": self.bounds,
                "algorithms": None if self.algorithms is None else list(self.algorithms),
                "time_limit": self.time_limit, "bound_time_limit": self.bound_time_limit,
                "workers": self.workers, "seed": self.seed}


def _applies(alg, family: str) -> bool:
    f = getattr(alg, "applies_to", None)
    return True if f is None else bool(f(family))


#: The README's main job: exact-attention forward with n = 2, d = 1 over its whole M range,
#: the CP-SAT optimum cross-checked by the exhaustive state search.
BUILTIN_STUDY = StudySpec(
    family="attention-forward", params={"n": 2, "d": 1}, Ms=None, variant="oneshot",
    exact=("cpsat", "brute"), time_limit=60.0, bound_time_limit=20.0, workers=1,
)


def exact_available(name: str) -> bool:
    """Whether ``name`` is an exact method this package runs (:data:`EXACT_METHODS`).

    Examples
    --------
    >>> exact_available("cpsat"), exact_available("gurobi")
    (True, False)
    """
    return name in EXACT_METHODS


def plan_tasks(spec: StudySpec) -> list[Task]:
    """The tasks of ``spec``, slowest kinds first (exact, bounds, algorithms) per M.

    An exact method that cannot run here (:func:`exact_available`) is left out.
    """
    params = tuple(sorted(spec.params.items()))
    tasks = []
    exact = [name for name in spec.exact if exact_available(name)]
    for M in spec.memories():
        for name in exact:
            opts = (("max_states", spec.brute_max_states),) if name == "brute" else ()
            tasks.append(Task(spec.family, params, M, spec.variant, "exact", name,
                              None if name == "brute" else spec.time_limit, spec.workers, spec.seed, opts))
        if spec.bounds:
            tasks.append(Task(spec.family, params, M, spec.variant, "bounds", "all", spec.bound_time_limit,
                              spec.workers, spec.seed))
        for name in spec.algorithm_names():
            tasks.append(Task(spec.family, params, M, spec.variant, "algorithm", name))
    return tasks


# ---------------------------------------------------------------- rows and verdicts


@dataclass(frozen=True)
class Verdict:
    """One verdict on a row: ``kind`` in violated / tight / mismatch / invalid, and why."""

    kind: str
    message: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class StudyRow:
    """Everything known at one M: stored results by method, formulas, verdicts, ratios."""

    family: str
    params: dict
    M: int
    variant: str
    dag_hash: str
    exact: dict  # method name -> StoredResult
    bounds: dict  # bound method -> StoredResult
    algorithms: dict  # algorithm name -> StoredResult
    formulas: tuple  # FormulaValue
    verdicts: tuple = ()
    ratios: dict = field(default_factory=dict)
    missing: tuple = ()

    @property
    def optimum(self) -> float | None:
        """The proven optimum (an OPTIMAL exact row), else None."""
        for r in self.exact.values():
            if r.status == "OPTIMAL" and r.value is not None:
                return r.value
        return None

    @property
    def upper(self) -> float | None:
        """The best certified upper bound: the least I/O of a replayed schedule."""
        vals = [r.value for r in [*self.exact.values(), *self.algorithms.values()]
                if r.value is not None and r.status in SCHEDULE_STATUSES]
        return min(vals) if vals else None

    @property
    def lower(self) -> float | None:
        """The best valid lower bound: computed bounds and the exact solvers' proven bounds."""
        vals = [r.value for r in self.bounds.values() if r.value is not None]
        vals += [r.bound for r in self.exact.values() if r.bound is not None and r.status not in ("INVALID", "INFEASIBLE")]
        return max(vals) if vals else None

    def to_dict(self) -> dict:
        def cell(r):
            return {"status": r.status, "value": r.value, "bound": r.bound, "proven": r.proven,
                    "time_limit": r.time_limit, "wall_s": r.wall_s, "record": r.record}

        return {
            "family": self.family, "params": dict(self.params), "M": self.M, "variant": self.variant,
            "dag_hash": self.dag_hash, "optimum": self.optimum, "upper": self.upper, "lower": self.lower,
            "exact": {k: cell(v) for k, v in self.exact.items()},
            "bounds": {k: cell(v) for k, v in self.bounds.items()},
            "algorithms": {k: cell(v) for k, v in self.algorithms.items()},
            "formulas": [f.to_dict() for f in self.formulas],
            "verdicts": [v.to_dict() for v in self.verdicts], "ratios": dict(self.ratios),
            "missing": list(self.missing),
        }


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.3g}"


def format_exact(r: StoredResult) -> str:
    """An exact cell with its status, e.g. ``"31 (FEASIBLE, bound 27, time limit 10 s)"``.

    Examples
    --------
    >>> from spartition.study.store import ResultKey
    >>> k = ResultKey("h", 3, "oneshot", "exact:cpsat")
    >>> format_exact(StoredResult(k, "FEASIBLE", 31.0, 27.0, False, 10.0, 10.1, {}))
    '31 (FEASIBLE, bound 27, time limit 10 s)'
    >>> format_exact(StoredResult(k, "OPTIMAL", 24.0, 24.0, True, 10.0, 1.2, {}))
    '24 (OPTIMAL)'
    """
    if r.status == "OPTIMAL":
        return f"{_fmt(r.value)} (OPTIMAL)"
    if r.status == "INFEASIBLE":
        return "infeasible M (INFEASIBLE)"
    if r.status == SKIPPED:
        return "skipped (model too large; see the notes)"
    parts = [r.status]
    if r.bound is not None:
        parts.append(f"bound {_fmt(r.bound)}")
    if r.time_limit is not None:
        parts.append(f"time limit {_fmt(r.time_limit)} s")
    if r.record.get("error") and r.status not in ("FEASIBLE",):
        parts.append(str(r.record["error"])[:60])
    return f"{_fmt(r.value)} ({', '.join(parts)})"


def verdicts(row: StudyRow) -> tuple[tuple, dict]:
    """The verdicts and ratios of ``row`` (see the module docstring).

    Returns
    -------
    (tuple of Verdict, dict)
        Verdicts, and ratios ``"<what>/opt"`` of every algorithm and
        applicable formula to the proven optimum, and ``"opt/lower"``.
    """
    out = []
    opt = row.optimum
    ub = row.upper
    ub_who = None
    if ub is not None:
        for name, r in [*row.algorithms.items(), *row.exact.items()]:
            if r.value == ub and r.status in SCHEDULE_STATUSES:
                ub_who = name
                break
    # exact methods agree
    proven = {m: r.value for m, r in row.exact.items() if r.status == "OPTIMAL"}
    if len(set(proven.values())) > 1:
        out.append(Verdict("violated", "exact methods prove different optima: "
                           + ", ".join(f"{m} = {_fmt(v)}" for m, v in proven.items()) + " (a bug)"))
    for m, r in row.exact.items():
        if r.status == "INVALID":
            out.append(Verdict("invalid", f"exact:{m} certificate rejected: {r.record.get('check')}"))
    # computed lower bounds against certified upper bounds
    for m, r in row.bounds.items():
        if ub is not None and r.value is not None and r.value > ub:
            out.append(Verdict("violated", f"lower bound {m} = {_fmt(r.value)} > {_fmt(ub)} = I/O of {ub_who} (a bug)"))
    for m, r in row.exact.items():
        if ub is not None and r.bound is not None and r.status not in ("INVALID", "INFEASIBLE") and r.bound > ub:
            out.append(Verdict("violated", f"exact:{m} proven bound {_fmt(r.bound)} > {_fmt(ub)} = I/O of {ub_who} (a bug)"))
    # algorithms
    for name, r in row.algorithms.items():
        if r.status == "INVALID":
            out.append(Verdict("invalid", f"{name}: schedule rejected by replay: {r.record.get('error')}"))
            continue
        if r.status != "VALID":
            continue
        if opt is not None and r.value < opt:
            out.append(Verdict("violated", f"{name} I/O {_fmt(r.value)} < proven optimum {_fmt(opt)} (a bug)"))
        f = r.record.get("io_formula")
        if f is not None and f != r.value:
            out.append(Verdict("mismatch", f"{name}: replayed I/O {_fmt(r.value)} != its closed form {f}"))
    # explicit-constant formulas in their regime
    lb = row.lower
    for fv in row.formulas:
        if not fv.applies or fv.constants != "explicit" or not math.isfinite(fv.value):
            continue
        if fv.kind == "lower" and ub is not None and fv.value > ub:
            out.append(Verdict("violated", f"formula {fv.name} ({fv.source}, {fv.where}) = {_fmt(fv.value)} "
                               f"> {_fmt(ub)} = I/O of {ub_who}: the published lower bound fails here"))
        if fv.kind == "upper" and lb is not None and fv.value < lb:
            out.append(Verdict("violated", f"formula {fv.name} ({fv.source}, {fv.where}) = {_fmt(fv.value)} "
                               f"< {_fmt(lb)} = proven lower bound: the published upper bound fails here"))
    # tight
    if opt is not None:
        lbs = [m for m, r in row.bounds.items() if r.value == opt and r.proven]
        algs = [name for name, r in row.algorithms.items() if r.status == "VALID" and r.value == opt]
        if lbs and algs:
            out.append(Verdict("tight", f"{' = '.join(lbs)} = optimum = {' = '.join(algs)} = {_fmt(opt)}"))
    ratios = {}
    if opt:
        for name, r in row.algorithms.items():
            if r.status == "VALID":
                ratios[f"{name}/opt"] = round(r.value / opt, 4)
        for fv in row.formulas:
            if fv.applies and math.isfinite(fv.value):
                ratios[f"{fv.name}/opt"] = round(fv.value / opt, 4)
        best_lb = max((r.value for r in row.bounds.values() if r.value is not None), default=None)
        if best_lb:
            ratios["opt/lower"] = round(opt / best_lb, 4)
    return tuple(out), ratios


def _formula_values(family: str, params: dict, M: int) -> tuple:
    from spartition.study.formulas import evaluate_formulas

    try:
        return tuple(evaluate_formulas(family, params, M))
    except (UnknownFamily, KeyError, ValueError):
        return ()


def assemble_row(family: str, params: dict, M: int, variant: str, results, dag_hash: str = "",
                 missing=()) -> StudyRow:
    """A :class:`StudyRow` from stored results (any order) at one M, with formulas and verdicts."""
    exact, bounds, algs = {}, {}, {}
    for r in results:
        kind, _, name = r.key.method.partition(":")
        {"exact": exact, "bound": bounds, "algorithm": algs}.get(kind, {})[name] = r
    order = _bound_names()
    bounds = {m: bounds[m] for m in order if m in bounds} | {m: r for m, r in bounds.items() if m not in order}
    rank = {m: k for k, m in enumerate(EXACT_METHODS)}
    exact = dict(sorted(exact.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    row = StudyRow(family, dict(params), M, variant, dag_hash, exact, bounds, dict(sorted(algs.items())),
                   _formula_values(family, params, M), missing=tuple(missing))
    v, ratios = verdicts(row)
    return replace(row, verdicts=v, ratios=ratios)


@dataclass(frozen=True)
class Study:
    """The rows of one study, with the counts of computed, cached and failed tasks."""

    spec: StudySpec
    rows: tuple
    computed: int = 0
    cached: int = 0
    failed: tuple = ()
    wall_s: float = 0.0
    notes: tuple = ()

    @property
    def violated(self) -> list:
        return [(row.M, v) for row in self.rows for v in row.verdicts if v.kind == "violated"]

    def to_dict(self) -> dict:
        return {"spec": self.spec.to_dict(), "rows": [r.to_dict() for r in self.rows], "computed": self.computed,
                "cached": self.cached, "failed": list(self.failed), "wall_s": round(self.wall_s, 2),
                "notes": list(self.notes)}


@contextmanager
def sigint_watch():
    """Notice a Ctrl-C that a handler swallowed: yields ``seen()``, true if SIGINT arrived inside the block.

    CP-SAT searches stop cleanly on Ctrl-C and return a shortened, honest
    result without raising; such a result must not be stored as if it had
    run its whole time limit. The signal module's wakeup file descriptor
    records every signal whatever Python handler runs, so the caller can
    drop the result and stop. Outside the main thread nothing is watched.
    """
    import signal
    import socket
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    r, w = socket.socketpair()
    r.setblocking(False)
    w.setblocking(False)
    seen = []
    try:
        old = signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        r.close()
        w.close()
        yield lambda: False
        return

    def check():
        try:
            while True:
                data = r.recv(4096)
                if not data:
                    break
                seen.extend(data)
        except (BlockingIOError, OSError):
            pass
        return int(signal.SIGINT) in seen

    try:
        yield check
    finally:
        check()
        signal.set_wakeup_fd(old)
        r.close()
        w.close()


def _serial_map(tasks):
    for t in tasks:
        with sigint_watch() as interrupted:
            try:
                rows, exc = run_task(t), None
            except Exception as e:  # a failed task is reported, never silently dropped
                rows, exc = None, e
        if interrupted():
            raise KeyboardInterrupt
        yield t, rows, exc


def compare(spec: StudySpec, store=None, mapper=None, refresh: bool = False, progress=None) -> Study:
    """Run a study: compute what the store lacks, then assemble one row per M.

    Parameters
    ----------
    spec : StudySpec
    store : ResultStore or None
        Cached rows are reused (a row answers a request if it is proven or
        ran with at least the requested time limit) and new ones written as
        soon as each task finishes.
    mapper : callable or None
        ``mapper(tasks) -> iterable of (task, rows or None, exception or None)``
        in completion order (:mod:`spartition.study.sweep` executors); default
        in-process.
    refresh : bool
        Recompute even cached rows.
    progress : callable or None
        ``progress(event, count)``: ``("total", number of tasks)`` first, then
        ``("computed" | "cached" | "failed", 1)`` per task.

    Examples
    --------
    >>> s = compare(StudySpec("chain", {"n": 3}, Ms=(2,), exact=("brute",), bounds=False))
    >>> [(r.M, r.optimum, r.algorithms["greedy"].value) for r in s.rows]
    [(2, 2.0, 2.0)]
    """
    t0 = time.perf_counter()
    h = family_dag_hash(spec.family, spec.params)
    tasks = plan_tasks(spec)
    if progress:
        progress("total", len(tasks))
    found: dict = {}
    todo = []
    cached = 0
    for t in tasks:
        got = None
        if store is not None and not refresh:
            got = [store.get(k, t.effective_limit(k.method)) for k in t.keys(h)]
        if got and all(g is not None for g in got):
            for g in got:
                found[(g.key.M, g.key.method)] = g
            cached += 1
            if progress:
                progress("cached", 1)
        else:
            todo.append(t)
    failed = []
    computed = 0
    results = (mapper or _serial_map)(todo)
    try:
        for t, rows, exc in results:
            if exc is not None:
                failed.append(f"{t.label()}: " + (exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"))
                if progress:
                    progress("failed", 1)
                continue
            for r in rows:
                if store is not None:
                    store.put(r)
                found[(r.key.M, r.key.method)] = r
            computed += 1
            if progress:
                progress("computed", 1)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # a pool stops now on Ctrl-C, not when the generator is collected
    notes = [f"M = {r.key.M}: {r.key.method} skipped: {r.record.get('error', 'refused')}"
              for r in sorted(found.values(), key=lambda r: (r.key.M, r.key.method)) if r.status == SKIPPED]
    rows = []
    for M in spec.memories():
        results = [r for (m, _), r in found.items() if m == M]
        missing = [f"{t.kind}:{t.name}" for t in tasks if t.M == M and any((M, k) not in found for k in t.methods())]
        rows.append(assemble_row(spec.family, spec.params, M, spec.variant, results, h, missing))
    return Study(spec, tuple(rows), computed, cached, tuple(failed), time.perf_counter() - t0, tuple(notes))


def _preference(r: StoredResult):
    # an unproven row without a known limit ranks below any limited run (NULL is not "no limit")
    tl = r.time_limit if isinstance(r.time_limit, (int, float)) and math.isfinite(r.time_limit) else -math.inf
    return (r.proven, tl, r.created)


def rows_from_store(store, family: str | None = None) -> list:
    """Every stored result as study rows: a list of ``(family, params, variant, [StudyRow per M])``.

    Where several rows answer one method (other solver parameters or
    versions), the proven one, else the one with the longest time limit,
    else the newest is shown.
    """
    import json

    best: dict = {}
    for r in store.rows(family=family):
        if r.family is None:
            continue
        group = (r.family, canonical_json(r.family_params or {}), r.key.variant)
        slot = (r.key.M, r.key.method)
        cur = best.setdefault(group, {}).get(slot)
        if cur is None or _preference(r) > _preference(cur):
            best[group][slot] = r
    out = []
    for (fam, pj, variant), slots in sorted(best.items()):
        params = json.loads(pj)
        rows = []
        for M in sorted({m for m, _ in slots}):
            results = [r for (m, _), r in slots.items() if m == M]
            rows.append(assemble_row(fam, params, M, variant, results, results[0].key.dag_hash))
        out.append((fam, params, variant, rows))
    return out
