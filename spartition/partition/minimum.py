"""The minimum S-partition P(S): a greedy partition, then CP-SAT over as many classes.

:func:`greedy_partition` gives a valid partition (an upper bound on P(S) and
the number of classes to model), :func:`partition_model` assembles the
encoding steps of :mod:`spartition.partition.encoding`, and
:func:`min_partition` solves it, decodes the partition, re-checks it with
:func:`~spartition.partition.certificate.check_partition` and reports the
proven lower bound next to it.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass, field

import numpy as np
from ortools.sat.python import cp_model

from spartition.core.dag import CompactDAG
from spartition.errors import ContradictoryBound, SpartitionError
from spartition.cpsat import (
    SOLVER_VERSION, budget_refusal, proven_bound, recorded_solver, solve_interruptibly, status_name,
)
from spartition.partition.capacity import class_capacity
from spartition.partition.certificate import Partition, check_partition
from spartition.partition.dominators import min_vertex_cut
from spartition.partition.encoding import (
    PartitionVars, add_assignment, add_class_usage, add_dominators, add_min_set_limit, add_order,
    add_partition_hint, add_partition_objective, decode_partition,
)
from spartition.partition.weights import partitioned_dag
from spartition.settings import DEFAULT_SEED, DEFAULT_WORKERS, check_solver_settings
from spartition.status import Status

__all__ = ["PartitionResult", "estimate_partition_model", "greedy_partition", "min_partition", "partition_model"]


# ---------------------------------------------------------------------------
# A greedy partition: the starting point (and the number of classes to model)
# ---------------------------------------------------------------------------


def greedy_partition(dag, S: int, tries: int = 6, deadline: float | None = None,
                     stop: float | None = None) -> Partition | None:
    """A valid S-partition built greedily; an upper bound on P(S) and a solver hint.

    Nodes are taken in a topological order; the next node is the ready node
    (all predecessors placed) with the most predecessors in the current
    class, among the first ``tries`` candidates that keep P2 and P3; when none
    fits, the class is closed. Prefixes are predecessor-closed, so P4 holds.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG; isolated nodes are left out (docs/definitions.md section 3).
    S : int
        At least 1 (every single node is a class with dominator itself).
    tries : int
        Candidates tried before a class is closed.
    deadline : float, optional
        A ``time.perf_counter()`` value: past it a candidate is accepted only
        when its entry nodes (outside predecessors and inputs inside) number
        at most S, without the max-flow that could find a smaller dominator.
        The partition stays valid (the entry nodes dominate the class); it
        may have more classes.
    stop : float, optional
        A ``time.perf_counter()`` value past which the construction gives
        up (it is linear-logarithmic in the DAG but takes seconds per 10^5
        nodes): the caller's time limit.

    Returns
    -------
    Partition or None
        None when ``stop`` passed before the partition was complete.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> greedy_partition(chain(4), 1).classes
    (('c0', 'c1', 'c2', 'c3'),)
    """
    cdag, _ = partitioned_dag(dag)
    if S < 1 and cdag.n:
        raise ValueError(f"S = {S}: a class needs S >= 1")
    preds, succs = cdag.pred_lists(), cdag.succ_lists()
    n = cdag.n
    missing = [len(p) for p in preds]
    ready = [v for v in range(n) if missing[v] == 0]
    classes, current = [], []
    in_cur, minset, entry = set(), set(), set()  # entry: outside predecessors and inputs inside

    def grown(v):
        """(minimum set, entry set) of the current class with v added: v's successors are not placed yet."""
        m = (minset - set(preds[v])) | {v}
        e = (entry | {u for u in preds[v] if u not in in_cur}) | ({v} if cdag.is_input[v] else set())
        return m, e

    def dominator(v):
        """A dominator of at most S nodes of the class grown by v (None if P2 or P3 fails)."""
        m, e = grown(v)
        if len(m) > S:
            return None
        # the entry nodes meet every path from an input into the class: a dominator without max-flow
        if len(e) <= S:
            return sorted(e)
        if deadline is not None and time.perf_counter() > deadline:
            return None
        cut = min_vertex_cut(cdag, current + [v], preds)
        return cut if len(cut) <= S else None

    doms, dom = [], None
    inside = np.zeros(n, dtype=np.int64)  # predecessors in the current class, kept as nodes join it
    is_ready = np.zeros(n, dtype=bool)
    is_ready[ready] = True
    # a lazy heap of (-inside, v): an entry is current while v is ready and its key is -inside[v];
    # sorting the ready list at every step made this quadratic (minutes at 10^4 nodes)
    heap = [(0, v) for v in ready]
    heapq.heapify(heap)

    steps = 0
    while heap:
        steps += 1
        if stop is not None and steps % 1024 == 0 and time.perf_counter() > stop:
            return None
        ranked = _best_ready(heap, is_ready, inside, tries)
        if not ranked:
            break
        chosen = None
        for v in ranked:
            d = dominator(v)
            if d is not None:
                chosen, dom = v, d
                break
        if chosen is None:
            if current:
                classes.append(current)
                doms.append(dom)
                for u in current:
                    for w in succs[u]:
                        if inside[w]:
                            inside[w] = 0
                            if is_ready[w]:
                                heapq.heappush(heap, (0, w))
                current, in_cur, minset, entry = [], set(), set(), set()
                continue
            chosen, dom = ranked[0], [ranked[0]]  # a single node always fits (S >= 1)
        minset, entry = grown(chosen)
        current.append(chosen)
        in_cur.add(chosen)
        is_ready[chosen] = False
        for w in succs[chosen]:
            inside[w] += 1
            missing[w] -= 1
            if missing[w] == 0:
                is_ready[w] = True
            if is_ready[w]:
                heapq.heappush(heap, (-int(inside[w]), w))
    if current:
        classes.append(current)
        doms.append(dom)
    return Partition(S, [[cdag.names[v] for v in sorted(c)] for c in classes],
                     dominators=[[cdag.names[v] for v in d] for d in doms], meta={"method": "greedy"})


def _best_ready(heap: list, is_ready: np.ndarray, inside: np.ndarray, k: int) -> list:
    """The k ready nodes of most predecessors in the current class (ties: lowest index), best first.

    ``heap`` holds ``(-inside, v)`` entries, some stale (v no longer ready, or
    its count changed since): those are dropped; the k returned stay in it.
    """
    top, seen = [], set()
    while heap and len(top) < k:
        key, v = heapq.heappop(heap)
        if is_ready[v] and key == -inside[v] and v not in seen:
            seen.add(v)
            top.append((key, v))
    for item in top:
        heapq.heappush(heap, item)
    return [v for _, v in top]


# ---------------------------------------------------------------------------
# The minimum S-partition
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionResult:
    """The outcome of :func:`min_partition`.

    Attributes
    ----------
    S : int
    status : str
        ``OPTIMAL`` (``num_classes`` is P(S)), ``FEASIBLE`` (a partition, not
        proven minimum), or ``UNKNOWN``.
    partition : Partition or None
        The best partition found, verified by :func:`check_partition`.
    num_classes : int or None
        Its number of classes (an upper bound on P(S)).
    lower_bound : int
        A proven lower bound on P(S) (equal to ``num_classes`` when OPTIMAL).
    nodes : int
        Nodes of the DAG without isolated nodes (the DAG partitioned).
    wall_s : float
    solver_version : str
    parameters : dict
        The CP-SAT parameters set, and the number of classes modelled.
    """

    S: int
    status: str
    partition: Partition | None
    num_classes: int | None
    lower_bound: int
    nodes: int
    wall_s: float
    solver_version: str = SOLVER_VERSION
    parameters: dict = field(default_factory=dict, compare=False)

    @property
    def proven(self) -> bool:
        """True when ``num_classes`` is P(S) (status ``OPTIMAL``)."""
        return self.status == Status.OPTIMAL

    def to_dict(self) -> dict:
        """The JSON form (the keys of the ``partition`` command's output)."""
        return {
            "S": self.S,
            "status": self.status,
            "num_classes": self.num_classes,
            "lower_bound": self.lower_bound,
            "classes": [list(c) for c in self.partition.classes] if self.partition else None,
            "dominators": [list(c) for c in self.partition.dominators]
            if self.partition and self.partition.dominators is not None
            else None,
            "nodes": self.nodes,
            "wall_s": round(self.wall_s, 3),
            "solver_version": self.solver_version,
            "parameters": self.parameters,
        }


def estimate_partition_model(cdag: CompactDAG, H: int) -> dict:
    """The estimated size of the :func:`min_partition` model with ``H`` classes, before it is built.

    Measured on attention, FFT and matrix-product DAGs of 100-200 nodes: about
    ``2.5 H (|V| + |E|)`` constraints, 13 us and 500 bytes each to build.
    The same record as :func:`spartition.exact.formulations.estimate_model`.

    Parameters
    ----------
    cdag : CompactDAG
    H : int
        Classes modelled.

    Returns
    -------
    dict
        ``model``, ``constraints``, ``build_seconds``, ``memory_bytes``.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> estimate_partition_model(compact(chain(3)), 2)["constraints"]
    25
    """
    cons = int(2.5 * H * (cdag.n + len(cdag.pred_idx)))
    return {"model": "partition", "constraints": cons, "build_seconds": round(cons * 1.3e-5, 3),
            "memory_bytes": cons * 500}


def partition_model(cdag: CompactDAG, S: int, H: int, lower: int = 1, hint: Partition | None = None) -> tuple:
    """The CP-SAT model of a minimum S-partition with at most H classes, built step by step.

    Parameters
    ----------
    cdag : CompactDAG
        The DAG without isolated nodes.
    S : int
    H : int
        Classes modelled: at least P(S) (e.g. those of a greedy partition).
    lower : int
        A proven lower bound on P(S).
    hint : Partition, optional
        A known partition of at most H classes, given to the solver as a hint.

    Returns
    -------
    (cp_model.CpModel, PartitionVars)

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> model, pv = partition_model(compact(chain(3)), 1, 2)
    >>> pv.H, len(pv.d)
    (2, 2)
    """
    model = cp_model.CpModel()
    pv = add_assignment(model, cdag, H)
    add_order(model, cdag, pv)
    add_class_usage(model, cdag, pv)
    add_min_set_limit(model, cdag, pv, S)
    add_dominators(model, cdag, pv, S)
    add_partition_objective(model, pv, lower)
    if hint is not None:
        add_partition_hint(model, cdag, pv, hint)
    return model, pv


def min_partition(
    dag,
    S: int,
    time_limit: float = 60.0,
    workers: int = DEFAULT_WORKERS,
    seed: int = DEFAULT_SEED,
    lower: int = 1,
    capacity_bound: bool = True,
) -> PartitionResult:
    """A minimum S-partition by CP-SAT, with the proven lower bound on P(S).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG; isolated nodes are removed first (docs/definitions.md section 3).
    S : int
        The bound of P2 and P3 (at least 1 for a non-empty DAG).
    time_limit : float
        Seconds of search.
    workers : int
        CP-SAT workers (at most 2 on the shared machine).
    seed : int
        CP-SAT random seed.
    lower : int
        A lower bound on P(S) already PROVEN elsewhere (e.g.
        ``ceil(|V| / U(S))`` from a class capacity); it is added as a
        constraint, so an unproven value would make the result wrong.
    capacity_bound : bool
        First compute the unit-weight convex class capacity U(S) (with a
        fifth of the time limit) and add the proven bound
        ``P(S) >= ceil(|V| / U(S))``; the partition search gets the rest of
        the time.

    Returns
    -------
    PartitionResult
        Status, the best partition (re-verified by
        :func:`~spartition.partition.certificate.check_partition`,
        classes in topological order, each with the dominator the solver
        chose), and the proven lower bound: the optimum when OPTIMAL, else
        the solver's best objective bound (never the incumbent).

    Raises
    ------
    ValueError
        If ``S < 1`` on a non-empty DAG.
    SpartitionError
        If the decoded partition fails the checker (a bug, never expected).

    Notes
    -----
    The model has one class index per node and, per class k < H (H from
    :func:`greedy_partition`, whose partition is also the hint), a dominator
    choice and reachability Booleans (:mod:`spartition.partition.encoding`): ``O(H (|V| + |E|))``
    variables and clauses. The optimum over H classes is P(S) because the
    greedy partition already has H classes.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> res = min_partition(fft(1), 2, time_limit=10, workers=1)
    >>> res.status, res.num_classes, res.lower_bound
    ('OPTIMAL', 1, 1)
    >>> min_partition(fft(1), 1, time_limit=10, workers=1).num_classes
    4

    References
    ----------
    Hong & Kung (1981), the S-partition lemma; docs/definitions.md section 3.
    """
    t0 = time.perf_counter()
    check_solver_settings(time_limit=time_limit, workers=workers, seed=seed)
    cdag, _ = partitioned_dag(dag)
    n = cdag.n
    if n == 0:
        return PartitionResult(S, Status.OPTIMAL, Partition(S, []), 0, 0, 0, time.perf_counter() - t0)
    if S < 1:
        raise ValueError(f"S = {S}: no S-partition of a non-empty DAG exists for S < 1")
    # the greedy start may use a third of the time: past that it stops looking for small dominators
    greedy = greedy_partition(cdag, S, deadline=t0 + time_limit / 3, stop=t0 + time_limit)
    if greedy is None:
        # no partition to start from (or to model H classes with): only a bound proven elsewhere
        return PartitionResult(S, Status.UNKNOWN, None, None, max(1, int(lower)), n, time.perf_counter() - t0,
                               parameters={"skipped": f"the greedy start did not finish within {time_limit:g} s",
                                           "lower_bound_given": max(1, int(lower))})
    H = len(greedy)
    lower = max(1, int(lower))
    if capacity_bound:
        cap = class_capacity(cdag, S, convex=True, time_limit=time_limit / 5, workers=workers, seed=seed)
        lower = max(lower, math.ceil(n / max(cap.upper_bound, 1)))
    if lower > H:
        raise ContradictoryBound(f"lower bound {lower} on P({S}) exceeds the {H} classes of a valid greedy partition")
    greedy.meta.update(status=Status.FEASIBLE)
    settled = _settled_without_search(cdag, S, greedy, lower, time_limit, t0)
    if settled is not None:
        return settled
    model, pv = partition_model(cdag, S, H, lower, hint=greedy)
    solver, params = recorded_solver(max(0.1, time_limit - (time.perf_counter() - t0)), workers, seed)
    params = dict(params, classes_modelled=H, lower_bound_given=lower, capacity_bound=capacity_bound)
    code = solve_interruptibly(solver, model)
    seconds = time.perf_counter() - t0
    part, found, status = _solution(solver, code, cdag, pv, S, greedy)
    # the model's bound counts only where its status proves one; `lower` was proven elsewhere
    bound = max(lower, proven_bound(solver, code, "min", found) or 0)
    if bound > found:  # pragma: no cover - proven_bound and the check above exclude it
        raise SpartitionError(f"proven lower bound {bound} on P({S}) exceeds a checked partition of {found} classes")
    # the proven bound decides, not the status name
    status = Status.OPTIMAL if bound == found else (Status.FEASIBLE if status == Status.OPTIMAL else status)
    part.meta.update(status=status, lower_bound=bound)
    return PartitionResult(S, status, part, found, bound, n, seconds, parameters=params)


def _settled_without_search(cdag, S: int, greedy: Partition, lower: int, time_limit: float, t0: float):
    """The result when no search is needed or affordable (greedy meets the bound, or the model is too big), else None."""
    H, n = len(greedy), cdag.n
    if lower == H:  # the greedy partition meets a proven bound: nothing to search
        greedy.meta.update(status=Status.OPTIMAL, lower_bound=H)
        return PartitionResult(S, Status.OPTIMAL, greedy, H, H, n, time.perf_counter() - t0,
                               parameters={"classes_modelled": 0, "lower_bound_given": lower})
    size = estimate_partition_model(cdag, H)
    refusal = budget_refusal(size, time_limit - (time.perf_counter() - t0))
    if refusal:
        greedy.meta.update(lower_bound=lower)
        return PartitionResult(S, Status.FEASIBLE, greedy, H, lower, n, time.perf_counter() - t0,
                               parameters={"skipped": refusal, "model_estimate": size, "lower_bound_given": lower})
    return None


def _solution(solver, code: int, cdag, pv: PartitionVars, S: int, greedy: Partition) -> tuple:
    """(partition, its classes, status) after the solve: the decoded and checked one, or the greedy one."""
    status = status_name(code)
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        meta = {"method": "cp-sat", "status": status, "solver_version": SOLVER_VERSION}
        part = decode_partition(solver, cdag, pv, S, meta)
        report = check_partition(cdag, part)
        if not report.valid:  # pragma: no cover - the model is sound
            raise SpartitionError("CP-SAT partition fails the checker: " + "; ".join(p.message for p in report.problems))
        return part, len(part), status
    if code != cp_model.UNKNOWN:  # pragma: no cover - a greedy partition with H classes exists
        raise SpartitionError(f"CP-SAT returned {status} on a feasible partition model")
    found = Partition(S, greedy.classes, meta={"method": "greedy", "status": Status.FEASIBLE})
    return found, len(greedy), Status.FEASIBLE
