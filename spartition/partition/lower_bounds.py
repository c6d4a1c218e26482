"""I/O lower bounds from S-partitions, each with its provenance.

Five bounds on the optimal I/O Q of the red-blue pebble game with M red
pebbles (docs/definitions.md sections 2 and 3), valid for both variants:

``trivial``
    (#inputs with a successor) + (#outputs that are not inputs).
``pair-sums``
    for M <= 4, the trivial bound plus ``max(0, 3 k - |U|)``, k the pair sums
    (``x y + x' y'`` of four inputs) and U their inputs
    (:mod:`~spartition.partition.pair_sums`, which holds the proof); the
    trivial bound for M >= 5.
``hong-kung``
    ``M * (P(2M) - 1)`` (Hong & Kung 1981, Lemma 3.1 / Theorem 3.1).
``x-partition``
    ``max over X > M of (X - M) * (P(X) - 1)``, X searched over a range
    (the form used in the COSMA / SOAP line of work; X = 2M is Hong-Kung).
``capacity``
    ``max over X > M of (X - M) * (ceil(w(V) / U(X)) - 1)`` where U(X)
    bounds the weight of one class (:func:`~spartition.partition.capacity.class_capacity`).

Partition quantities are computed on the DAG without isolated nodes. A bound
is only as good as the P or U it uses: P must be a proven LOWER bound on the
minimum and U a proven UPPER bound on the maximum. When CP-SAT stops before
proving optimality, its proven objective bound is used (never the
incumbent); the bound is still valid, and ``proven`` is False to say that it
may be weaker than the method's exact value.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import as_compact, strip_isolated
from spartition.core.registry import BOUND_METHODS
from spartition.cpsat import SOLVER_VERSION
from spartition.finding import Finding
from spartition.partition.capacity import class_capacity
from spartition.partition.minimum import PartitionResult, min_partition
from spartition.partition.pair_sums import pair_sum_value
from spartition.partition.sets import CapacityResult
from spartition.partition.weights import node_weights, partitioned_dag, weight_label
from spartition.settings import DEFAULT_SEED, DEFAULT_WORKERS, check_solver_settings
from spartition.status import Status

__all__ = ["BOUND_METHODS", "CAPACITY", "HONG_KUNG", "METHODS", "PAIR_SUMS", "TRIVIAL", "X_PARTITION", "Bound",
           "BoundMethod", "best_bound", "io_lower_bounds", "pair_sum_bound", "trivial_bound"]


@dataclass(frozen=True)
class Bound:
    """One lower bound on the optimal I/O, with everything needed to trace and re-run it.

    Attributes
    ----------
    value : int
        The bound (never negative).
    method : str
        One of :data:`METHODS`.
    proven : bool
        True when every P or U the bound used was proven optimal by the
        solver (or no solver was needed). False when some search stopped
        early and its proven objective bound was used instead: the value is
        still a valid lower bound, but maybe not the method's exact value.
    status : str
        ``OPTIMAL`` / ``FEASIBLE`` / ``UNKNOWN`` of the solver runs (the
        weakest), or ``CLOSED_FORM``.
    parameters : dict
        M, the X used, the P or U used and per-X details.
    solver_version : str or None
    wall_s : float
    """

    value: int
    method: str
    proven: bool
    status: str
    parameters: dict = field(compare=False)
    solver_version: str | None
    wall_s: float = field(compare=False)

    def to_dict(self) -> dict:
        return {
            "value": self.value,
            "method": self.method,
            "proven": self.proven,
            "status": self.status,
            "parameters": self.parameters,
            "solver_version": self.solver_version,
            "wall_s": round(self.wall_s, 3),
        }

    def finding(self, game: str = "") -> Finding:
        """This bound as a ``lower`` :class:`~spartition.finding.Finding` named ``bound:<method>``.

        A search stopped early still gives a valid bound: it is ``time_limited``, not dropped.
        """
        evidence = f"{self.status}, " + _EVIDENCE.get(self.method, "certificate partition re-checked")
        return Finding(value=self.value, method=f"bound:{self.method}", status=self.status, evidence=evidence,
                       game=game, time_limited=not self.proven)


def _weakest(statuses) -> str:
    rank = {Status.OPTIMAL: 0, Status.RELAXED: 1, Status.FEASIBLE: 2, Status.RELAXED_FEASIBLE: 2, Status.UNKNOWN: 3,
            Status.RELAXED_UNKNOWN: 3}
    return max(statuses, key=lambda s: rank.get(s, 3)) if statuses else Status.OPTIMAL


def trivial_bound(dag, M: int | None = None) -> Bound:
    """The trivial bound: every input with a successor loaded, every non-input output stored.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> trivial_bound(fft(1)).value
    4
    """
    t0 = time.perf_counter()
    value = int(trivial_lower_bound(dag))
    return Bound(value, "trivial", True, Status.CLOSED_FORM, {"M": M}, None, time.perf_counter() - t0)


def pair_sum_bound(dag, M: int) -> Bound:
    """The pair-sum bound: for M <= 4, three I/O moves per pair sum on its inputs and products.

    See :func:`spartition.partition.pair_sums.pair_sum_value` for the bound
    and its proof; valid in both standard games (not the partial one).

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> b = pair_sum_bound(matmul(2, 2, 2), 4)
    >>> b.value, b.method, b.parameters["sums"]
    (16, 'pair-sums', 4)
    """
    t0 = time.perf_counter()
    value, details = pair_sum_value(dag, M)
    return Bound(value, "pair-sums", True, Status.CLOSED_FORM, details, None, time.perf_counter() - t0)


_EVIDENCE = {"trivial": "every input loaded, every output stored",
             "pair-sums": "the pair-sum lemma (docs/definitions.md section 3), pair sums found by structure"}


@dataclass(frozen=True)
class _Run:
    """What one :func:`io_lower_bounds` call shares among its methods: the DAG, M, the X range, cached searches."""

    dag: object
    M: int
    xs: list
    weight: object
    convex: bool
    partition: Callable  # S -> minimum S-partition result (cached, shared by hong-kung and x-partition)
    capacity: Callable  # X -> class capacity result of the requested weight


def _trivial(run: _Run) -> Bound:
    return trivial_bound(run.dag, run.M)


def _pair_sums(run: _Run) -> Bound:
    return pair_sum_bound(run.dag, run.M)


def _hong_kung(run: _Run) -> Bound:
    t0 = time.perf_counter()
    M = run.M
    r = run.partition(2 * M)
    value = max(0, M * (r.lower_bound - 1))
    params = {"M": M, "S": 2 * M, "P": r.lower_bound, "P_found": r.num_classes,
              "P_from": _p_from(r), "nodes": r.nodes, "solver": r.parameters}
    return Bound(value, "hong-kung", r.proven, r.status, params, SOLVER_VERSION, time.perf_counter() - t0)


def _x_partition(run: _Run) -> Bound:
    t0 = time.perf_counter()
    rows = []
    for X in run.xs:
        r = run.partition(X)
        rows.append({"X": X, "P": r.lower_bound, "P_found": r.num_classes, "status": r.status,
                     "value": max(0, (X - run.M) * (r.lower_bound - 1))})
    return _best_of("x-partition", run.M, rows, time.perf_counter() - t0)


def _capacity(run: _Run) -> Bound:
    t0 = time.perf_counter()
    rows = []
    for X in run.xs:
        c = run.capacity(X)
        U = c.upper_bound
        P = math.ceil(c.total_weight / U) if U > 0 else 0
        rows.append({"X": X, "U": U, "U_found": c.capacity, "w(V)": c.total_weight, "P": P,
                     "status": c.status, "value": max(0, (X - run.M) * (P - 1))})
    b = _best_of("capacity", run.M, rows, time.perf_counter() - t0)
    b.parameters.update({"weight": "unit" if run.weight is None else str(run.weight), "convex": run.convex})
    return b


@dataclass(frozen=True)
class BoundMethod:
    """One lower-bound method: its name, what it computes (the legend of study tables) and how.

    Attributes
    ----------
    name : str
        The method's name (``Bound.method``, the study's ``bound:<name>``).
    description : str
        The bound and its provenance, in one line.
    compute : callable
        ``compute(run) -> Bound`` on the state one :func:`io_lower_bounds` call shares.
    solver : bool
        Whether it runs CP-SAT (then its results depend on the solver's
        version, settings and time limit); False for closed forms.
    """

    name: str
    description: str
    compute: Callable = field(repr=False, compare=False)
    solver: bool = True


TRIVIAL = BoundMethod("trivial", "inputs with a successor loaded, non-input outputs stored (docs/definitions.md "
                      "section 2)", _trivial, solver=False)
PAIR_SUMS = BoundMethod("pair-sums", "M <= 4: trivial + max(0, 3 k - |U|), k pair sums x y + x' y' of four inputs, "
                        "U their inputs (docs/definitions.md section 3)", _pair_sums, solver=False)
HONG_KUNG = BoundMethod("hong-kung", "M (P(2M) - 1), P from a minimum 2M-partition by CP-SAT (Hong & Kung 1981)",
                        _hong_kung)
X_PARTITION = BoundMethod("x-partition", "max over X > M of (X - M)(P(X) - 1) (X-partition form, COSMA/SOAP line)",
                          _x_partition)
CAPACITY = BoundMethod("capacity", "max over X > M of (X - M)(ceil(|V| / U(X)) - 1), U the largest class "
                       "(docs/definitions.md section 3)", _capacity)
#: The method names, in :data:`BOUND_METHODS` order (each method is a ``spartition.bounds`` entry point).
METHODS = tuple(BOUND_METHODS)


def _default_xs(cdag, M: int) -> list[int]:
    """X from M + 1 up to where P(X) = 1 is certain (X >= #inputs and #outputs), at most 4M, always 2M."""
    n_in, n_out = int(cdag.is_input.sum()), int(cdag.is_output.sum())
    top = min(max(n_in, n_out, M + 1), 4 * M)
    return sorted(set(range(M + 1, top + 1)) | {2 * M})


def io_lower_bounds(
    dag,
    M: int,
    xs=None,
    weight=None,
    convex: bool = True,
    methods=METHODS,
    time_limit: float = 30.0,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    restrict=None,
    capacity_method: str = "cp-sat",
    found: list | None = None,
) -> tuple:
    """Every lower bound of :data:`METHODS` on the optimal I/O with M red pebbles.

    Parameters
    ----------
    dag : networkx.DiGraph
        The CDAG.
    M : int
        Red pebbles (at least 1).
    xs : iterable of int, optional
        The X searched by ``x-partition`` and ``capacity`` (each > M).
        Default: ``M + 1 .. min(4M, max(#inputs, #outputs))`` plus ``2M``;
        above ``max(#inputs, #outputs)`` one class holds everything and the
        partition bound is 0.
    weight : None, str, dict or callable
        Node weight of the capacity bound (:func:`~spartition.partition.weights.node_weights`);
        unit weight by default.
    convex : bool
        Require convex classes in the capacity (valid: every class of a
        partition is convex; stronger).
    methods : iterable of str
        Which bounds to compute.
    time_limit : float
        Seconds for the whole call: shared out over the solver runs still to
        come (one per X and method; partition runs share theirs with the
        unit capacity), so a run that finishes early leaves its time to the
        later ones.
    workers, seed
        CP-SAT settings.
    restrict, capacity_method
        Passed to :func:`~spartition.partition.capacity.class_capacity` for
        the ``capacity`` bound: its U then comes from the restricted
        relaxation (status ``RELAXED``, a proven upper bound on U, so the
        bound stays valid), solved by CP-SAT or by the matrix-product
        decomposition (``"product"``).
    found : list, optional
        Each bound is appended to it as soon as it is computed, so a caller
        interrupted (Ctrl-C) still holds the bounds finished before.

    Returns
    -------
    tuple of Bound
        One per method, in :data:`METHODS` order.

    Notes
    -----
    P(X) comes from :func:`~spartition.partition.minimum.min_partition` and
    is the proven lower bound it reports; U(X) is the proven upper bound of
    :func:`~spartition.partition.capacity.class_capacity`. Each of the formulas
    is clipped at 0. Partition results are shared between ``hong-kung`` and
    ``x-partition``; each partition search starts from the proven lower
    bound ``P(X) >= ceil(|V| / U(X))`` of the unit-weight convex capacity
    (also shared with the ``capacity`` bound when its weight is unit).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> [(b.method, b.value, b.proven) for b in io_lower_bounds(fft(1), 3, time_limit=10, workers=1)]
    [('trivial', 4, True), ('pair-sums', 4, True), ('hong-kung', 0, True), ('x-partition', 0, True), ('capacity', 0, True)]

    References
    ----------
    Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981);
    Kwasniewski et al., "Red-blue pebbling revisited" (SC 2019) for the
    X-partition form; docs/definitions.md section 3.
    """
    if M < 1:
        raise ValueError(f"M = {M}: need at least one red pebble")
    check_solver_settings(time_limit=time_limit, workers=workers, seed=seed)
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise ValueError(f"unknown bound method {unknown[0]!r}; expected some of {METHODS}")
    # one compact form for every run: copying and compacting the graph per run took longer than the runs
    # on 10^5 nodes
    full = as_compact(dag)
    cdag, _ = partitioned_dag(full)
    xs = _default_xs(cdag, M) if xs is None else sorted(set(int(x) for x in xs))
    bad = [x for x in xs if x <= M]
    if bad:
        raise ValueError(f"X = {bad[0]} is not larger than M = {M}")
    n = cdag.n
    cache, unit, total = {}, {}, []
    shared = weight is None and convex and restrict is None and capacity_method == "cp-sat"
    budget = _Budget(time_limit, _planned_runs(methods, M, xs, shared))

    def unit_capacity(X):
        if X not in unit:
            unit[X] = (class_capacity(cdag, X, convex=True, time_limit=budget.next(), workers=workers, seed=seed)
                       if budget.open() else _capacity_not_run(X, n, "unit", True))
        return unit[X]

    def partition(S):
        if S not in cache:
            U = unit_capacity(S).upper_bound if n else 0
            lower = math.ceil(n / U) if U else 1
            cache[S] = (min_partition(cdag, S, time_limit=budget.next(), workers=workers, seed=seed, lower=lower,
                                      capacity_bound=False)
                        if budget.open() else _partition_not_run(S, n, lower))
        return cache[S]

    def capacity(X):
        if shared:
            return unit_capacity(X)
        if not budget.open():
            if not total:  # w(V), weighed once for every run left out
                total.append(sum(node_weights(strip_isolated(dag), weight).values()))
            return _capacity_not_run(X, total[0], weight_label(weight), convex)
        return class_capacity(dag, X, weight=weight, convex=convex, time_limit=budget.next(), workers=workers,
                              seed=seed, restrict=restrict, method=capacity_method)

    run = _Run(full, M, xs, weight, convex, partition, capacity)
    done = [] if found is None else found
    for m in METHODS:
        if m in methods:
            done.append(BOUND_METHODS[m].compute(run))
    return tuple(done[-sum(1 for m in METHODS if m in methods):])


def _planned_runs(methods, M: int, xs, shared: bool) -> int:
    """How many solver runs :func:`io_lower_bounds` will make (a unit capacity and a partition per X)."""
    part = ({2 * M} if "hong-kung" in methods else set()) | (set(xs) if "x-partition" in methods else set())
    runs = 2 * len(part)
    if "capacity" in methods:
        runs += len(set(xs) - part) if shared else len(xs)
    return max(runs, 1)


class _Budget:
    """A time limit shared out over the solver runs still to come."""

    def __init__(self, seconds: float, runs: int):
        self.deadline = time.perf_counter() + float(seconds)
        self.left = runs

    def open(self) -> bool:
        """Whether time is left for another run (past the deadline the remaining runs are not started)."""
        return time.perf_counter() < self.deadline

    def next(self) -> float:
        share = (self.deadline - time.perf_counter()) / max(self.left, 1)
        self.left -= 1
        # CP-SAT needs a positive limit; past the deadline a run only reports what it has at once
        return max(share, 0.01)


_NOT_RUN = "not run: the time limit was used up by the earlier runs"


def _partition_not_run(S: int, n: int, lower: int) -> PartitionResult:
    """A partition run left out at the deadline: no partition, only the bound already proven."""
    return PartitionResult(S, Status.UNKNOWN, None, None, lower, n, 0.0, parameters={"skipped": _NOT_RUN})


def _capacity_not_run(X: int, total: int, weight: str, convex: bool) -> CapacityResult:
    """A capacity run left out at the deadline: U is bounded by the total weight only."""
    return CapacityResult(X, Status.UNKNOWN, 0, total, (), (), total, weight, convex, 0.0,
                          parameters={"skipped": _NOT_RUN})


def _p_from(r: PartitionResult) -> str:
    if r.status == Status.OPTIMAL:
        return "proven optimum"
    if "skipped" in r.parameters:
        return "bound proven before the search, which was not run: " + r.parameters["skipped"]
    return "solver's proven bound (search stopped early)"


def _best_of(method: str, M: int, rows: list, seconds: float) -> Bound:
    statuses = [r["status"] for r in rows]
    if rows:
        best = max(rows, key=lambda r: (r["value"], -r["X"]))
        value, X = best["value"], best["X"]
    else:
        value, X = 0, None
    params = {"M": M, "X": X, "per_X": rows}
    status = _weakest(statuses)
    return Bound(value, method, status == Status.OPTIMAL, status, params, SOLVER_VERSION, seconds)


def best_bound(bounds) -> Bound:
    """The largest of several bounds (the first on ties).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> best_bound(io_lower_bounds(chain(4), 2, time_limit=5, workers=1)).method
    'trivial'
    """
    bounds = list(bounds)
    return max(bounds, key=lambda b: b.value) if bounds else None
