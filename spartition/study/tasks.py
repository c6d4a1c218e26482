"""Units of work of a study: one method on one DAG at one M, run anywhere and stored with its certificate.

A :class:`Task` is pure and picklable; :func:`run_task` computes it -- the
exact optimum (CP-SAT :func:`spartition.exact.solve.solve_io` or the state
search :func:`spartition.exact.brute.brute_force`), every lower bound of
:data:`spartition.partition.lower_bounds.BOUND_METHODS` in one run, or the
replayed I/O of a registered algorithm -- and returns store rows
(:class:`~spartition.study.store.StoredResult`), every certificate checked by
replay. The same rows come from an in-process loop, a process pool or a Dask
cluster (:mod:`spartition.study.sweep`).
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from functools import lru_cache

from spartition import __version__
from spartition.errors import (
    InfeasibleMemory,
    InvalidDAG,
    InvalidSchedule,
    ModelTooLarge,
    ParameterError,
    SpartitionError,
)
from spartition.finding import SCHEDULE_STATUSES
from spartition.settings import (
    DEFAULT_SEED, DEFAULT_VARIANT, DEFAULT_WORKERS, PARTIAL, check_positive_int, check_seed, check_time_limit,
)
from spartition.study.store import ResultKey, StoredResult, canonical_json
from spartition.status import Status

__all__ = [
    "EXACT_METHODS",
    "FINAL_EXACT",
    "SCHEDULE_STATUSES",
    "SKIPPED",
    "Task",
    "build_dag",
    "default_memories",
    "exact_available",
    "expand_grid",
    "family_dag_hash",
    "method_version",
    "source_hash",
    "run_task",
]

EXACT_METHODS = ("cpsat", "brute")
#: The bounds a study computes in the partial game (those proven for it; :func:`_partial_bounds`).
PARTIAL_BOUNDS = ("trivial", "partial-edge-partition")
FINAL_EXACT = (Status.OPTIMAL, Status.INFEASIBLE)
#: The status of a method refused for an instance (its model would not fit the time or memory budget).
SKIPPED = Status.SKIPPED
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


@lru_cache(maxsize=1)
def source_hash() -> str:
    """A hash of the source that computes stored results: the engine and the built-in families.

    The version string ``0.1.0`` stays put while the code changes; a stored
    verdict must answer only for the code that computed it, so every row is
    keyed by this hash too. The files are hashed by their path inside the
    package (the families under ``families/``, wherever they are found: the
    installed package or a checkout's ``dags/``), so an installed copy and a
    checkout of the same commit agree.

    Returns
    -------
    str
        The first 16 hex digits of the SHA-256 of every ``.py`` file, in path order.

    Examples
    --------
    >>> len(source_hash()), source_hash() == source_hash()
    (16, True)
    """
    import hashlib
    import importlib.util
    from pathlib import Path

    import spartition

    # located, not imported: the engine reads the families' files but never runs a family module here
    families = importlib.util.find_spec("spartition.families").submodule_search_locations
    files = {}
    for root in map(Path, spartition.__path__):
        for path in root.rglob("*.py"):
            rel = path.relative_to(root)
            if rel.parts[0] != "families" and "__pycache__" not in rel.parts:
                files[rel.as_posix()] = path
    for root in map(Path, families):
        for path in root.rglob("*.py"):
            if "__pycache__" not in path.parts:
                files["families/" + path.relative_to(root).as_posix()] = path
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel].read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def method_version(method: str) -> str:
    """The version string a stored row of ``method`` is keyed by.

    Parameters
    ----------
    method : str
        A store method, ``exact:<name>``, ``bound:<name>`` or ``algorithm:<name>``.

    Returns
    -------
    str
        ``spartition <version>`` and the :func:`source_hash` of the code,
        followed by the solver library's version for methods whose results
        depend on it (CP-SAT and the bounds that run a solver). A row keyed by
        another string answers no request.
    """
    import ortools

    base = f"spartition {__version__}; sources {source_hash()}"
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


# a hash is small: keep many, so that a store lookup never rebuilds a DAG evicted from _build_cached
@lru_cache(maxsize=4096)
def _hash_cached(family: str, params_json: str) -> str:
    from spartition.core.dag import dag_hash

    return dag_hash(_build_cached(family, params_json))


@lru_cache(maxsize=32)
def _compact_cached(family: str, params_json: str):
    from spartition.core.dag import compact

    return compact(_build_cached(family, params_json))


def family_dag_hash(family: str, params: dict) -> str:
    """The :func:`~spartition.core.dag.dag_hash` of family ``family`` at ``params`` (built and hashed once per process)."""
    return _hash_cached(family, canonical_json(params))


def expand_grid(grid, sort_keys: bool = True):
    """The parameter dicts of a grid: the cartesian product of each dict's value lists, dict after dict.

    Parameters
    ----------
    grid : dict or list of dict
        Parameter name -> list of values; a list (or tuple) of such dicts is
        the union of their products, in order.
    sort_keys : bool
        Take (and key) the names in sorted order (the claims' grids); False:
        in the dict's own order (a sweep's grid, in its family's order).

    Yields
    ------
    dict
        Name -> value, the last name varying fastest.

    Examples
    --------
    >>> list(expand_grid({"n": [2, 3], "d": [1]}))
    [{'d': 1, 'n': 2}, {'d': 1, 'n': 3}]
    >>> list(expand_grid([{"n": [2]}, {"n": [4], "d": [1, 2]}], sort_keys=False))
    [{'n': 2}, {'n': 4, 'd': 1}, {'n': 4, 'd': 2}]
    """
    for g in grid if isinstance(grid, (list, tuple)) else [grid]:
        names = sorted(g) if sort_keys else list(g)
        for combo in itertools.product(*(g[n] for n in names)):
            yield dict(zip(names, combo))


def default_memories(G, variant: str = DEFAULT_VARIANT) -> list[int]:
    """The whole interesting M range of ``G``: from the smallest feasible M to saturation.

    Saturation is an M at which the furthest-next-use schedule already
    costs the trivial lower bound (found by bisection, the smallest one when
    the greedy cost is monotone in M); the optimum is non-increasing in M
    and never below that bound, so every larger M has the same optimum (the
    trivial bound) and tells nothing new.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
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
    sharing partitions) or ``algorithm`` (``name`` a registered algorithm;
    with ``options`` ``(("search", True),)`` its tile options are searched
    and the cheapest one's evictions re-chosen, as the sandwich does, and
    that schedule is stored, replayed, with what it chose in its record).
    """

    family: str
    params: tuple  # sorted (key, value) pairs: hashable
    M: int
    variant: str
    kind: str
    name: str
    time_limit: float | None = None
    workers: int = DEFAULT_WORKERS
    seed: int = DEFAULT_SEED
    options: tuple = ()

    @property
    def params_dict(self) -> dict:
        """The builder parameters as a dict."""
        return dict(self.params)

    def methods(self) -> list[str]:
        """The store methods this task writes."""
        if self.kind == "exact":
            return [f"exact:{self.name}"]
        if self.kind == "bounds":
            if self.variant == PARTIAL:
                return [f"bound:{m}" for m in PARTIAL_BOUNDS]
            return [f"bound:{m}" for m in dict(self.options).get("methods", _bound_names())]
        return [f"algorithm:{self.name}"]

    def solver_params(self, method: str) -> dict:
        """Parameters the stored rows are keyed by (the time limit is a column)."""
        if method.startswith("algorithm:"):
            # a searched schedule is another row than the defaults' (the options it chose are in its record)
            return {"search": True} if dict(self.options).get("search") else {}
        if _closed_form_bound(method):
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
        if _closed_form_bound(method) or method.startswith("algorithm:"):
            return None
        return self.time_limit  # the brute force's too: it gives up at it, and a longer one may finish

    def label(self) -> str:
        """A one-line name for messages, e.g. ``chain:n=3 M=2 oneshot algorithm:greedy``."""
        p = ",".join(f"{k}={v}" for k, v in self.params)
        return f"{self.family}:{p} M={self.M} {self.variant} {self.kind}:{self.name}"


def _row(task: Task, method: str, h: str, status: Status, value, bound, wall: float, record: dict,
         certificate=None, proven: bool | None = None) -> StoredResult:
    """One row of ``task``; final exactly when ``status`` is proven (``proven`` may only withdraw that)."""
    proven = Status(status).is_proven() and proven is not False
    return StoredResult(
        key=ResultKey(h, task.M, task.variant, method, task.solver_params(method), method_version(method)),
        status=status, value=None if value is None else float(value), bound=None if bound is None else float(bound),
        proven=proven, time_limit=task.effective_limit(method), wall_s=round(wall, 4), record=record,
        family=task.family, family_params=task.params_dict, certificate=certificate,
    )


def _certificate(schedule) -> dict:
    """``schedule.to_dict()`` without copying its moves into lists: JSON writes the tuples as the same arrays.

    A schedule of a million moves is stored without a million list copies
    (the store keeps only the JSON text, read back as lists).
    """
    out = {"M": schedule.M, "variant": schedule.variant, "moves": schedule.moves}
    if schedule.meta:
        out["meta"] = schedule.meta
    return out


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

            # the study's time limit bounds the brute force too (compare --exact brute ran for minutes at 3 s)
            res = brute_force(G, task.M, task.variant, max_states=opts.get("max_states", 5_000_000),
                              time_limit=task.time_limit)
            status, io, lb, schedule, record = Status.OPTIMAL, res.io, res.io, res.schedule, res.to_dict()
        elif task.name == "cpsat":
            from spartition.exact.solve import solve_io

            res = solve_io(G, task.M, task.variant, time_limit=task.time_limit, workers=task.workers, seed=task.seed)
            status, io, lb, schedule, record = res.status, res.io, res.lower_bound, res.schedule, res.to_dict()
        else:
            raise ValueError(f"unknown exact method {task.name!r}; expected one of {EXACT_METHODS}")
    except InfeasibleMemory as exc:
        return [_row(task, method, h, Status.INFEASIBLE, None, None, time.perf_counter() - t0, {"error": str(exc)})]
    except ModelTooLarge as exc:  # refused before building: the other methods of the row still run
        return [_skipped(task, method, h, exc, time.perf_counter() - t0)]
    except SpartitionError as exc:  # brute force gave up (state cap or time limit): nothing proven
        return [_row(task, method, h, Status.UNKNOWN, None, None, time.perf_counter() - t0, {"error": str(exc)})]
    wall = time.perf_counter() - t0
    cert = None
    if schedule is not None:
        checked, err = _checked_io(G, schedule)
        if err is not None or checked != io:
            record = {**record, "check": err or f"replay says {checked}, solver says {io}"}
            return [_row(task, method, h, Status.INVALID, io, lb, wall, record)]
        cert = _certificate(schedule)
    return [_row(task, method, h, status, io, lb, wall, record, cert)]


def _run_bounds(task: Task, G, h: str) -> list[StoredResult]:
    from spartition.partition.lower_bounds import io_lower_bounds

    if task.variant == PARTIAL:
        return _partial_bounds(task, G, h)
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
        out.append(_row(task, f"bound:{b.method}", h, Status(b.status), b.value, b.value,
                        b.wall_s if b.wall_s else wall, b.to_dict(), proven=b.proven))
    return out + skipped


def _partial_bounds(task: Task, G, h: str) -> list[StoredResult]:
    """The lower bounds proven for the partial game: the trivial one and, on tiny DAGs, the edge partitions'.

    The vertex S-partition bounds are proven for the standard games only
    (docs/definitions.md section 3), so they are not run here.
    """
    from spartition.core.bounds import trivial_lower_bound
    from spartition.core.dag import as_compact
    from spartition.partition.partial_edges import MAX_PARTIAL_PARTITION_EDGES, partial_edge_partition_bound

    c = as_compact(G)
    t0 = time.perf_counter()
    trivial = trivial_lower_bound(c)
    out = [_row(task, "bound:trivial", h, Status.CLOSED_FORM, trivial, trivial, time.perf_counter() - t0,
                {"method": "trivial", "value": trivial, "game": PARTIAL})]
    t0 = time.perf_counter()
    if len(c.pred_idx) > MAX_PARTIAL_PARTITION_EDGES:
        out.append(_row(task, "bound:partial-edge-partition", h, SKIPPED, None, None, 0.0,
                        {"error": f"more than {MAX_PARTIAL_PARTITION_EDGES} edges", "skipped": True}))
        return out
    value = partial_edge_partition_bound(c, task.M)
    out.append(_row(task, "bound:partial-edge-partition", h, Status.OPTIMAL, value, value, time.perf_counter() - t0,
                    {"method": "partial-edge-partition", "value": value,
                     "proof": "spartition.partition.partial_edges (exhaustive edge-partition search)"}))
    return out


def _skipped(task: Task, method: str, h: str, exc: ModelTooLarge, wall: float) -> StoredResult:
    """The row of a method refused for this instance: no value, never final, with the refusal as a note."""
    record = {"error": f"model too large: {exc}", "skipped": True, "estimate": exc.estimate, "limit": exc.limit}
    return _row(task, method, h, SKIPPED, None, None, wall, record)


def _run_algorithm(task: Task, G, h: str) -> list[StoredResult]:
    from spartition.core.dag import as_compact
    from spartition.core.registry import algorithm
    from spartition.study.game_schedules import game_schedule, in_game, searched_game_schedule

    method = f"algorithm:{task.name}"
    alg = algorithm(task.name)
    t0 = time.perf_counter()
    record = {"algorithm": task.name, "source": getattr(alg, "source", "")}
    search = bool(dict(task.options).get("search"))
    formula = None
    # the closed form is the defaults' (a study checks the replay against it): a searched schedule has none
    if getattr(alg, "io_formula", None) is not None and not search:
        try:
            value = alg.io_formula({**task.params_dict, **G.graph.get("params", {})}, task.M)
            formula = None if value is None else int(value)
        except (SpartitionError, ValueError, KeyError, ZeroDivisionError):  # no closed form here
            formula = None
    record["io_formula"] = formula
    try:
        if search:
            # the cheapest of its tile options, as the sandwich searches them (no deadline: a stored row is final)
            found = searched_game_schedule(G, alg, task.M, task.variant)
            record.update(options=found.options, candidates=found.candidates, replayed=found.replayed)
            schedule = _improved(G, in_game(as_compact(G), found.schedule, task.variant), record)
        else:
            # the partial game plays the algorithm's oneshot schedule, translated (as in the sandwich)
            schedule = game_schedule(G, alg, task.M, task.variant)
    except ModelTooLarge as exc:
        return [_skipped(task, method, h, exc, time.perf_counter() - t0)]
    except (InfeasibleMemory, InvalidDAG, ParameterError) as exc:
        # M below the algorithm's smallest, a DAG it does not run on (e.g. a sum order it cannot follow), or a
        # game it makes no schedules of
        record["error"] = f"{type(exc).__name__}: {exc}"
        return [_row(task, method, h, Status.NOT_APPLICABLE, None, None, time.perf_counter() - t0, record)]
    # the DAG's compact form is built once per process, not once per replay
    io, err = _checked_io(_compact_cached(task.family, canonical_json(task.params_dict)), schedule)
    wall = time.perf_counter() - t0
    if err is not None:
        record["error"] = err
        return [_row(task, method, h, Status.INVALID, None, None, wall, record)]
    record["io"] = io
    return [_row(task, method, h, Status.VALID, io, None, wall, record, _certificate(schedule))]


def _improved(G, schedule, record: dict):
    """``schedule`` with its evictions re-chosen (:func:`spartition.exact.improve.improve_schedule`), as the
    sandwich does, if that replays cheaper (noted in ``record``); not in the partial game."""
    from spartition.exact.improve import improve_schedule

    if schedule.variant == PARTIAL:
        return schedule
    result = improve_schedule(G, schedule)
    if result.after >= result.before:
        return schedule
    record.update(improved_by=result.method, io_before_improve=result.before)
    return result.schedule


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


def exact_available(name: str) -> bool:
    """Whether ``name`` is an exact method this package runs (:data:`EXACT_METHODS`).

    Examples
    --------
    >>> exact_available("cpsat"), exact_available("gurobi")
    (True, False)
    """
    return name in EXACT_METHODS
