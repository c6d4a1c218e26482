"""CP-SAT models of S-partitions: the minimum partition P(S) and the class capacity U(X).

Both models share one encoding of the dominator condition P2, sound by
construction: a class chooses a set D of at most S nodes, and a Boolean
``r[v]`` ("some input reaches v along a path that avoids D") is forced up
along every edge::

    r[v] or d[v]              for every input v
    r[v] or d[v] or not r[u]  for every edge u -> v
    x[v] implies not r[v]     for every node v of the class

Any assignment that satisfies these clauses has ``r`` at least the true
reachability, so no class node is reachable from an input avoiding D: the
chosen D really dominates the class. Conversely, the true reachability of a
real dominator satisfies them, so no partition is lost.

The minimum set (P3) is encoded from above the same way: ``top[v]`` may be
false only if some successor is declared to be in the same class, so the
counted set contains the true minimum set. P4 is an integer class index per
node that never decreases along an edge.

Each model is built in small ``add_*`` steps, solved with explicitly set and
recorded parameters, and decoded into a :class:`~spartition.partition.certificate.Partition`
(or a node set) that :func:`~spartition.partition.certificate.check_partition` verifies
independently before anything is returned.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field

import networkx as nx
import numpy as np
from ortools.sat.python import cp_model

from spartition.exact.cpsat import (
    SOLVER_VERSION, budget_refusal, check_settings, proven_bound, solve_interruptibly, status_name,
)
from spartition.core.dag import CompactDAG, compact, strip_isolated
from spartition.errors import ContradictoryBound, SpartitionError
from spartition.partition.certificate import Partition, _min_vertex_cut, _minimum_set_idx, check_partition

__all__ = [
    "SOLVER_VERSION",
    "CapacityResult",
    "PartitionResult",
    "add_assignment",
    "add_capacity_objective",
    "add_class_usage",
    "add_convexity",
    "add_dominators",
    "add_min_set_limit",
    "add_order",
    "add_partition_hint",
    "add_partition_objective",
    "add_product_layer_cuts",
    "add_set",
    "add_set_dominator",
    "add_set_min_set",
    "add_set_symmetry",
    "attention_column_blocks",
    "attention_row_blocks",
    "class_capacity",
    "decode_partition",
    "decode_set",
    "estimate_partition_model",
    "greedy_partition",
    "min_partition",
    "node_weights",
    "parse_selector",
]



def _networkx(dag: CompactDAG, drop=None) -> nx.DiGraph:
    """The networkx form of a CompactDAG (names and ``op``), without the nodes flagged in ``drop``."""
    G = nx.DiGraph()
    for v in range(dag.n):
        if drop is None or not drop[v]:
            G.add_node(dag.names[v], op=dag.ops[v])
    for v in range(dag.n):
        for w in dag.succs(v):
            G.add_edge(dag.names[v], dag.names[int(w)])
    return G


def _strip(dag):
    """(CompactDAG of the DAG without isolated nodes, networkx form or None)."""
    if isinstance(dag, CompactDAG):
        iso = dag.is_input & dag.is_output
        if not iso.any():
            return dag, None
        G = _networkx(dag, iso)
        return compact(G), G
    H = strip_isolated(dag)
    return compact(H), H


def _solver(time_limit, workers, seed, lp: bool = False) -> tuple[cp_model.CpSolver, dict]:
    """A CP-SAT solver with explicitly set parameters, and the record of them.

    ``lp=True`` (the capacity model) asks for the full LP relaxation
    (``linearization_level = 2``) and, with several workers, the ``max_lp``
    and ``core`` subsolvers: measured on reduction trees and attention DAGs,
    the default multi-worker portfolio never solved an LP there and could not
    move the upper bound, while these prove optimality in well under a second.
    """
    solver = cp_model.CpSolver()
    params = {
        "max_time_in_seconds": float(time_limit),
        "num_workers": int(workers),
        "random_seed": int(seed),
        "log_search_progress": False,
    }
    solver.parameters.max_time_in_seconds = params["max_time_in_seconds"]
    solver.parameters.num_workers = params["num_workers"]
    solver.parameters.random_seed = params["random_seed"]
    solver.parameters.log_search_progress = False
    if lp:
        params["linearization_level"] = 2
        solver.parameters.linearization_level = 2
        if workers >= 2:
            params["subsolvers"] = ["max_lp", "core"]
            for name in params["subsolvers"]:
                solver.parameters.subsolvers.append(name)
    return solver, params


# ---------------------------------------------------------------------------
# A greedy partition: the starting point (and the number of classes to model)
# ---------------------------------------------------------------------------


def greedy_partition(dag, S: int, tries: int = 6) -> Partition:
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

    Returns
    -------
    Partition

    Examples
    --------
    >>> from spartition.families.classic import chain
    >>> greedy_partition(chain(4), 1).classes
    (('c0', 'c1', 'c2', 'c3'),)
    """
    cdag, _ = _strip(dag)
    if S < 1 and cdag.n:
        raise ValueError(f"S = {S}: a class needs S >= 1")
    preds, succs = cdag.pred_lists(), cdag.succ_lists()
    n = cdag.n
    missing = [len(p) for p in preds]
    ready = [v for v in range(n) if missing[v] == 0]
    placed = np.zeros(n, dtype=bool)
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
        cut = _min_vertex_cut(cdag, current + [v], preds)
        return cut if len(cut) <= S else None

    doms, dom = [], None
    while ready:
        ranked = sorted(ready, key=lambda v: (-sum(u in in_cur for u in preds[v]), v))
        chosen = None
        for v in ranked[:tries]:
            d = dominator(v)
            if d is not None:
                chosen, dom = v, d
                break
        if chosen is None:
            if current:
                classes.append(current)
                doms.append(dom)
                current, in_cur, minset, entry = [], set(), set(), set()
                continue
            chosen, dom = ranked[0], [ranked[0]]  # a single node always fits (S >= 1)
        minset, entry = grown(chosen)
        current.append(chosen)
        in_cur.add(chosen)
        placed[chosen] = True
        ready.remove(chosen)
        for w in succs[chosen]:
            missing[w] -= 1
            if missing[w] == 0:
                ready.append(w)
    if current:
        classes.append(current)
        doms.append(dom)
    return Partition(S, [[cdag.names[v] for v in sorted(c)] for c in classes],
                     dominators=[[cdag.names[v] for v in d] for d in doms], meta={"method": "greedy"})


# ---------------------------------------------------------------------------
# The minimum S-partition
# ---------------------------------------------------------------------------


@dataclass
class _PartitionVars:
    H: int
    x: list  # x[v][k]: node v in class k
    c: list  # c[v]: class index of v
    used: list  # used[k]: class k is non-empty
    h: object  # number of classes
    d: list = field(default_factory=list)  # d[k][v]: v in the dominator of class k
    r: list = field(default_factory=list)  # r[k][v]: an input reaches v avoiding D_k


def add_assignment(model, cdag: CompactDAG, H: int) -> _PartitionVars:
    """P1: each node in exactly one of H classes; ``c[v]`` its index."""
    n = cdag.n
    x = [[model.NewBoolVar(f"x_{v}_{k}") for k in range(H)] for v in range(n)]
    c = [model.NewIntVar(0, H - 1, f"c_{v}") for v in range(n)]
    for v in range(n):
        model.AddExactlyOne(x[v])
        model.Add(c[v] == sum(k * x[v][k] for k in range(1, H)))
    used = [model.NewBoolVar(f"used_{k}") for k in range(H)]
    h = model.NewIntVar(1 if n else 0, H, "h")
    return _PartitionVars(H=H, x=x, c=c, used=used, h=h)


def add_order(model, cdag: CompactDAG, pv: _PartitionVars) -> None:
    """P4: the class index never decreases along an edge."""
    for u in range(cdag.n):
        for w in cdag.succs(u):
            model.Add(pv.c[u] <= pv.c[int(w)])


def add_class_usage(model, cdag: CompactDAG, pv: _PartitionVars) -> None:
    """Classes 0..h-1 are exactly the non-empty ones (no gaps), so h counts them."""
    n, H = cdag.n, pv.H
    for k in range(H):
        members = [pv.x[v][k] for v in range(n)]
        for b in members:
            model.AddImplication(b, pv.used[k])
        model.AddBoolOr(members).OnlyEnforceIf(pv.used[k])
        if k + 1 < H:
            model.AddImplication(pv.used[k + 1], pv.used[k])
    model.Add(pv.h == sum(pv.used))


def add_min_set_limit(model, cdag: CompactDAG, pv: _PartitionVars, S: int) -> None:
    """P3: at most S nodes of each class without a successor in the class.

    ``same[u, w]`` (edge u -> w) may be true only if w is in u's class;
    ``top[u]`` may be false only if some ``same[u, w]`` is true. The nodes
    counted per class (``x and top``) contain its true minimum set.
    """
    n, H = cdag.n, pv.H
    top = []
    for u in range(n):
        succ = [int(w) for w in cdag.succs(u)]
        t = model.NewBoolVar(f"top_{u}")
        if not succ:
            model.Add(t == 1)
        else:
            same = []
            for w in succ:
                s = model.NewBoolVar(f"same_{u}_{w}")
                model.Add(pv.c[w] == pv.c[u]).OnlyEnforceIf(s)
                same.append(s)
            model.AddBoolOr([t] + same)
        top.append(t)
    for k in range(H):
        counted = []
        for v in range(n):
            y = model.NewBoolVar(f"min_{v}_{k}")
            model.AddBoolOr([y, pv.x[v][k].Not(), top[v].Not()])
            counted.append(y)
        model.Add(sum(counted) <= S)


def add_dominators(model, cdag: CompactDAG, pv: _PartitionVars, S: int) -> None:
    """P2: each class k picks D_k (at most S nodes) cutting every input-to-class path.

    ``r[k][v]`` is forced true when an input reaches v avoiding D_k; class
    members must have it false (see the module notes). D_k is restricted to
    nodes of classes 0..k, which holds for some minimum dominator since every
    ancestor of a class-k node is in a class <= k (P4): no partition is lost.
    """
    n, H = cdag.n, pv.H
    inputs = np.flatnonzero(cdag.is_input)
    preds = cdag.pred_lists()
    for k in range(H):
        d = [model.NewBoolVar(f"d_{k}_{v}") for v in range(n)]
        r = [model.NewBoolVar(f"r_{k}_{v}") for v in range(n)]
        model.Add(sum(d) <= S)
        for v in inputs:
            model.AddBoolOr([r[v], d[v]])
        for v in range(n):
            for u in preds[v]:
                model.AddBoolOr([r[v], d[v], r[u].Not()])
            model.AddImplication(pv.x[v][k], r[v].Not())
            model.Add(pv.c[v] <= k).OnlyEnforceIf(d[v])
        pv.d.append(d)
        pv.r.append(r)


def add_partition_objective(model, pv: _PartitionVars, lower: int = 1) -> None:
    """Minimise the number of classes (at least ``lower``, a proven bound)."""
    model.Add(pv.h >= lower)
    model.Minimize(pv.h)


def add_partition_hint(model, cdag: CompactDAG, pv: _PartitionVars, partition: Partition) -> None:
    """Hint a known partition (class k of the hint -> index k)."""
    for k, cls in enumerate(partition.classes):
        for name in cls:
            v = cdag.index[name]
            for j in range(pv.H):
                model.AddHint(pv.x[v][j], int(j == k))


def decode_partition(solver, cdag: CompactDAG, pv: _PartitionVars, S: int, meta: dict) -> Partition:
    """The partition of a solved model: classes in index order, empty ones dropped, with their D."""
    groups = [[] for _ in range(pv.H)]
    for v in range(cdag.n):
        groups[solver.Value(pv.c[v])].append(v)
    classes, doms = [], []
    for k, g in enumerate(groups):
        if g:
            classes.append([cdag.names[v] for v in g])
            doms.append([cdag.names[v] for v in range(cdag.n) if solver.Value(pv.d[k][v])])
    return Partition(S, classes, dominators=doms, meta=meta)


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
    seconds : float
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
    seconds: float
    solver_version: str = SOLVER_VERSION
    parameters: dict = field(default_factory=dict, compare=False)

    @property
    def proven(self) -> bool:
        return self.status == "OPTIMAL"

    def to_dict(self) -> dict:
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
            "seconds": round(self.seconds, 3),
            "solver_version": self.solver_version,
            "parameters": self.parameters,
        }


def estimate_partition_model(cdag: CompactDAG, H: int) -> dict:
    """The estimated size of the :func:`min_partition` model with ``H`` classes, before it is built.

    Measured on attention, FFT and matrix-product DAGs of 100-200 nodes: about
    ``2.5 H (|V| + |E|)`` constraints, 13 us and 500 bytes each to build.
    The same record as :func:`spartition.exact.solve.estimate_model`.
    """
    cons = int(2.5 * H * (cdag.n + len(cdag.pred_idx)))
    return {"model": "partition", "constraints": cons, "build_seconds": round(cons * 1.3e-5, 3),
            "memory_bytes": cons * 500}


def min_partition(
    dag,
    S: int,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
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
        Status, the best partition (re-verified by :func:`check_partition`,
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
    choice and reachability Booleans (module notes): ``O(H (|V| + |E|))``
    variables and clauses. The optimum over H classes is P(S) because the
    greedy partition already has H classes.

    Examples
    --------
    >>> from spartition.families.classic import fft
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
    check_settings(time_limit=time_limit, workers=workers, seed=seed)
    cdag, _ = _strip(dag)
    n = cdag.n
    if n == 0:
        return PartitionResult(S, "OPTIMAL", Partition(S, []), 0, 0, 0, time.perf_counter() - t0)
    if S < 1:
        raise ValueError(f"S = {S}: no S-partition of a non-empty DAG exists for S < 1")
    greedy = greedy_partition(cdag, S)
    H = len(greedy)
    lower = max(1, int(lower))
    if capacity_bound:
        cap = class_capacity(cdag, S, convex=True, time_limit=time_limit / 5, workers=workers, seed=seed)
        lower = max(lower, math.ceil(n / max(cap.upper_bound, 1)))
    if lower > H:
        raise ContradictoryBound(f"lower bound {lower} on P({S}) exceeds the {H} classes of a valid greedy partition")
    greedy.meta.update(status="FEASIBLE")
    if lower == H:  # the greedy partition meets a proven bound: nothing to search
        greedy.meta.update(status="OPTIMAL", lower_bound=H)
        return PartitionResult(S, "OPTIMAL", greedy, H, H, n, time.perf_counter() - t0,
                               parameters={"classes_modelled": 0, "lower_bound_given": lower})
    size = estimate_partition_model(cdag, H)
    refusal = budget_refusal(size, time_limit - (time.perf_counter() - t0))
    if refusal:
        greedy.meta.update(lower_bound=lower)
        return PartitionResult(S, "FEASIBLE", greedy, H, lower, n, time.perf_counter() - t0,
                               parameters={"skipped": refusal, "model_estimate": size, "lower_bound_given": lower})
    model = cp_model.CpModel()
    pv = add_assignment(model, cdag, H)
    add_order(model, cdag, pv)
    add_class_usage(model, cdag, pv)
    add_min_set_limit(model, cdag, pv, S)
    add_dominators(model, cdag, pv, S)
    add_partition_objective(model, pv, lower)
    add_partition_hint(model, cdag, pv, greedy)
    solver, params = _solver(max(0.1, time_limit - (time.perf_counter() - t0)), workers, seed)
    params = dict(params, classes_modelled=H, lower_bound_given=lower, capacity_bound=capacity_bound)
    code = solve_interruptibly(solver, model)
    status = status_name(code)
    seconds = time.perf_counter() - t0
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        meta = {"method": "cp-sat", "status": status, "solver_version": SOLVER_VERSION}
        part = decode_partition(solver, cdag, pv, S, meta)
        report = check_partition(cdag, part)
        if not report.valid:  # pragma: no cover - the model is sound
            raise SpartitionError("CP-SAT partition fails the checker: " + "; ".join(p.message for p in report.problems))
        found = len(part)
    elif code == cp_model.UNKNOWN:
        part = Partition(S, greedy.classes, meta={"method": "greedy", "status": "FEASIBLE"})
        found, status = H, "FEASIBLE"
    else:  # pragma: no cover - a greedy partition with H classes exists
        raise SpartitionError(f"CP-SAT returned {status} on a feasible partition model")
    # the model's bound counts only where its status proves one; `lower` was proven elsewhere
    bound = max(lower, proven_bound(solver, code, "min", found) or 0)
    if bound > found:  # pragma: no cover - proven_bound and the check above exclude it
        raise SpartitionError(f"proven lower bound {bound} on P({S}) exceeds a checked partition of {found} classes")
    if bound == found:
        status = "OPTIMAL"
    part.meta.update(status=status, lower_bound=bound)
    return PartitionResult(S, status, part, found, bound, n, seconds, parameters=params)


# ---------------------------------------------------------------------------
# Node weights: which nodes a capacity counts
# ---------------------------------------------------------------------------


def parse_selector(text: str) -> dict:
    """Parse ``"op=mul,tensor=QK"`` into ``{"op": {"mul"}, "tensor": {"QK"}}``.

    Keys: ``op`` (the node's op label), ``tensor`` (the first item of its
    ``entry``), or any other node attribute (compared as a string). A value
    may list alternatives with ``|``: ``op=mul|add``.

    Raises
    ------
    ValueError
        On an item without ``=``.

    Examples
    --------
    >>> sel = parse_selector("op=mul|add, tensor=QK")
    >>> sorted(sel["op"]), sel["tensor"]
    (['add', 'mul'], {'QK'})
    """
    sel = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"weight selector item {item!r} is not key=value")
        key, value = item.split("=", 1)
        sel.setdefault(key.strip(), set()).update(x.strip() for x in value.split("|"))
    return sel


def _matches(attrs: dict, sel: dict) -> bool:
    for key, values in sel.items():
        if key == "tensor":
            entry = attrs.get("entry")
            got = str(entry[0]) if isinstance(entry, (tuple, list)) and entry else None
        else:
            got = attrs.get(key)
            got = None if got is None else str(got)
        if got not in values:
            return False
    return True


def node_weights(dag, weight=None) -> dict:
    """The weight of every node: 1 everywhere (``None``), by selector string, dict or callable.

    Parameters
    ----------
    dag : networkx.DiGraph
    weight : None, str, dict or callable
        ``None``: unit weight. ``str``: a selector (:func:`parse_selector`),
        weight 1 on matching nodes and 0 elsewhere. ``dict``: node -> int
        (missing nodes 0). ``callable(node, attrs) -> int``.

    Returns
    -------
    dict
        node -> non-negative int.

    Examples
    --------
    >>> from spartition.families.classic import matmul
    >>> w = node_weights(matmul(1, 1, 2), "op=mul")
    >>> sorted(v for v in w if w[v])
    ['P_0_0_0', 'P_0_1_0']
    """
    if weight is None:
        out = {v: 1 for v in dag}
    elif isinstance(weight, str):
        sel = parse_selector(weight)
        out = {v: int(_matches(dag.nodes[v], sel)) for v in dag}
    elif isinstance(weight, dict):
        out = {v: int(weight.get(v, 0)) for v in dag}
    elif callable(weight):
        out = {v: int(weight(v, dag.nodes[v])) for v in dag}
    else:
        raise ValueError(f"weight must be None, a selector string, a dict or a callable, got {type(weight).__name__}")
    bad = [v for v, x in out.items() if x < 0]
    if bad:
        raise ValueError(f"negative weight on node {bad[0]!r}")
    return out


# ---------------------------------------------------------------------------
# The class capacity
# ---------------------------------------------------------------------------


@dataclass
class _SetVars:
    x: list
    d: list
    r: list
    below: list  # below[v]: v is in the set or has a descendant in it
    above: list | None = None  # above[v]: v is in the set or has an ancestor in it


def add_set(model, cdag: CompactDAG) -> _SetVars:
    """One node set: ``x[v]``, its dominator ``d[v]``, reachability ``r[v]``, and ``below[v]`` exactly."""
    n = cdag.n
    x = [model.NewBoolVar(f"x_{v}") for v in range(n)]
    d = [model.NewBoolVar(f"d_{v}") for v in range(n)]
    r = [model.NewBoolVar(f"r_{v}") for v in range(n)]
    below = [model.NewBoolVar(f"below_{v}") for v in range(n)]
    for v in range(n):
        succ = [below[int(w)] for w in cdag.succs(v)]
        model.AddImplication(x[v], below[v])
        for b in succ:
            model.AddImplication(b, below[v])
        model.AddBoolOr([x[v]] + succ).OnlyEnforceIf(below[v])
    return _SetVars(x=x, d=d, r=r, below=below)


def add_set_dominator(model, cdag: CompactDAG, sv: _SetVars, X: int) -> None:
    """P2 for one set: at most X dominator nodes, among the set and its ancestors."""
    model.Add(sum(sv.d) <= X)
    for v in np.flatnonzero(cdag.is_input):
        model.AddBoolOr([sv.r[v], sv.d[v]])
    for v in range(cdag.n):
        for u in cdag.preds(v):
            model.AddBoolOr([sv.r[v], sv.d[v], sv.r[int(u)].Not()])
        model.AddImplication(sv.x[v], sv.r[v].Not())
        model.AddImplication(sv.d[v], sv.below[v])


def add_set_min_set(model, cdag: CompactDAG, sv: _SetVars, X: int, exempt=None) -> None:
    """P3 for one set: counted[v] >= x[v] - (number of successors in the set); at most X counted.

    Nodes with ``exempt[v]`` true are not counted (the restriction of
    :func:`class_capacity`, whose exits may have successors outside).
    """
    counted = []
    for v in range(cdag.n):
        if exempt is not None and exempt[v]:
            continue
        succ = [sv.x[int(w)] for w in cdag.succs(v)]
        y = model.NewBoolVar(f"min_{v}")
        model.AddBoolOr([y, sv.x[v].Not()] + succ)
        counted.append(y)
    model.Add(sum(counted) <= X)


def add_convexity(model, cdag: CompactDAG, sv: _SetVars) -> None:
    """Convexity: a node with an ancestor and a descendant in the set is in the set."""
    n = cdag.n
    above = [model.NewBoolVar(f"above_{v}") for v in range(n)]
    for v in range(n):
        pred = [above[int(u)] for u in cdag.preds(v)]
        model.AddImplication(sv.x[v], above[v])
        for a in pred:
            model.AddImplication(a, above[v])
        model.AddBoolOr([sv.x[v]] + pred).OnlyEnforceIf(above[v])
        succ_below = [sv.below[int(w)] for w in cdag.succs(v)]
        for a in pred:
            for b in succ_below:
                model.AddBoolOr([sv.x[v], a.Not(), b.Not()])
    sv.above = above


_ROW_TENSORS = ("Q", "QK", "S", "A", "l", "r", "AV", "T", "O")
_ROW_NAME = re.compile(r"^(" + "|".join(_ROW_TENSORS) + r")_(\d+)(.*)$")


def attention_row_blocks(names) -> list:
    """The query-row blocks of an attention-forward DAG, aligned node by node.

    Block ``i`` holds every node whose name starts with one of the row
    tensors (``Q, QK, S, A, l, r, AV, T, O``, partial sums included) and
    whose first index is ``i``; position ``t`` of every block is the node
    with the same name once the row index is blanked out. Nodes of ``K`` and
    ``V`` belong to no block. Permuting the rows is an automorphism of the
    attention DAG (no sum runs over ``i``); :func:`add_set_symmetry` checks
    this before using the blocks, so a wrong guess raises instead of cutting.

    Parameters
    ----------
    names : sequence of str
        Node names (e.g. ``CompactDAG.names``).

    Returns
    -------
    list of list of str
        The blocks in row order; empty if the rows do not align.

    Examples
    --------
    >>> attention_row_blocks(["Q_0_0", "Q_1_0", "K_0_0", "QK_0_0_0", "QK_1_0_0"])
    [['QK_0_0_0', 'Q_0_0'], ['QK_1_0_0', 'Q_1_0']]
    """
    rows: dict = {}
    for v in names:
        m = _ROW_NAME.match(v)
        if m:
            rows.setdefault(int(m.group(2)), {})[f"{m.group(1)}_*{m.group(3)}"] = v
    if len(rows) < 2:
        return []
    keys = sorted(rows[min(rows)])
    if sorted(rows) != list(range(len(rows))) or any(sorted(r) != keys for r in rows.values()):
        return []
    return [[rows[i][k] for k in keys] for i in range(len(rows))]


_COL_NAME = re.compile(r"^(K)_(\d+)(.*)$|^(QK|S)_(\d+)_(\d+)(.*)$")


def attention_column_blocks(names) -> list:
    """The key-column blocks (index ``j`` of ``K``, ``QK`` and ``S``), aligned like :func:`attention_row_blocks`.

    Permuting key columns is an automorphism of the ``S = Q K^T`` part only
    (the softmax and output sums run over ``j`` in a fixed order), i.e. of a
    ``restrict`` sub-DAG ending at the ``S`` nodes; :func:`add_set_symmetry`
    checks it and raises on the full DAG.

    Examples
    --------
    >>> attention_column_blocks(["K_0_0", "K_1_0", "QK_0_0_0", "QK_0_1_0"])
    [['K_0_0', 'QK_0_0_0'], ['K_1_0', 'QK_0_1_0']]
    """
    cols: dict = {}
    for v in names:
        m = _COL_NAME.match(v)
        if not m:
            continue
        if m.group(1):
            j, key = int(m.group(2)), f"K_*{m.group(3)}"
        else:
            j, key = int(m.group(6)), f"{m.group(4)}_{m.group(5)}_*{m.group(7)}"
        cols.setdefault(j, {})[key] = v
    if len(cols) < 2:
        return []
    keys = sorted(cols[min(cols)])
    if sorted(cols) != list(range(len(cols))) or any(sorted(c) != keys for c in cols.values()):
        return []
    return [[cols[j][k] for k in keys] for j in range(len(cols))]


def _check_block_swap(cdag: CompactDAG, w: np.ndarray, a: list, b: list) -> str | None:
    """None if swapping blocks a and b (aligned index lists) is a weight-preserving automorphism."""
    perm = np.arange(cdag.n)
    perm[a], perm[b] = b, a
    if len(set(perm.tolist())) != cdag.n:
        return "blocks overlap"
    if not np.array_equal(w[perm], w):
        return "weights differ"
    edges = {(u, int(v)) for u in range(cdag.n) for v in cdag.succs(u)}
    for u, v in edges:
        if (int(perm[u]), int(perm[v])) not in edges:
            return f"edge {cdag.names[u]} -> {cdag.names[v]} has no image"
    if not np.array_equal(cdag.is_input[perm], cdag.is_input):
        return "inputs not preserved"
    return None


def add_set_symmetry(model, cdag: CompactDAG, sv: _SetVars, w: np.ndarray, blocks) -> int:
    """Symmetry breaking: the set's weight in block 0 >= block 1 >= ... (returns the blocks used).

    ``blocks`` are equally long, disjoint lists of node ids, aligned so that
    exchanging any two blocks position by position (all other nodes fixed)
    is an automorphism of the DAG that preserves the weights; this is
    checked for every adjacent pair, and those transpositions generate every
    permutation of the blocks. Blocks failing the check raise.

    Notes
    -----
    Valid for the maximisation: an automorphism ``pi`` maps a set with
    dominator D to ``pi(set)`` with dominator ``pi(D)`` (paths map to paths,
    inputs to inputs), its minimum set to the minimum set of ``pi(set)``, a
    convex set to a convex set, and keeps the weight. Given any feasible set,
    the block permutation that sorts its block weights in decreasing order
    gives a feasible set of the same weight meeting these constraints, so
    the maximum is unchanged (some maximum sets are cut off, never all).

    Raises
    ------
    SpartitionError
        If the blocks are not a weight-preserving automorphism family.
    """
    blocks = [list(map(int, b)) for b in blocks]
    if len(blocks) < 2:
        return 0
    if len({len(b) for b in blocks}) != 1:
        raise SpartitionError("symmetry blocks differ in size")
    for k in range(len(blocks) - 1):
        why = _check_block_swap(cdag, w, blocks[k], blocks[k + 1])
        if why:
            raise SpartitionError(f"swapping symmetry blocks {k} and {k + 1} is not an automorphism: {why}")
    sums = [sum(int(w[v]) * sv.x[v] for v in b if w[v]) for b in blocks]
    for k in range(len(blocks) - 1):
        model.Add(sums[k] >= sums[k + 1])
    return len(blocks)


def _product_layers(cdag: CompactDAG, w: np.ndarray) -> list:
    """Bipartite components of the "input graph" of weighted two-input products.

    A product here is a weighted node with exactly two predecessors, both
    inputs and distinct. Each product is an edge between its two inputs; the
    function returns, for every connected component that is bipartite and
    has no parallel edges, ``(products, left_inputs, right_inputs)``.
    """
    adj: dict = {}
    prods: dict = {}
    for v in np.flatnonzero(w > 0):
        pr = [int(u) for u in cdag.preds(int(v))]
        if len(pr) != 2 or pr[0] == pr[1] or not (cdag.is_input[pr[0]] and cdag.is_input[pr[1]]):
            continue
        a, b = sorted(pr)
        prods.setdefault((a, b), []).append(int(v))
        adj.setdefault(a, set()).add(b)
        adj.setdefault(b, set()).add(a)
    side: dict = {}
    layers = []
    for s0 in sorted(adj):
        if s0 in side:
            continue
        side[s0] = 0
        comp, stack, ok = [s0], [s0], True
        while stack:
            u = stack.pop()
            for t in adj[u]:
                if t not in side:
                    side[t] = 1 - side[u]
                    comp.append(t)
                    stack.append(t)
                elif side[t] == side[u]:
                    ok = False
        cset = set(comp)
        edges = [e for e in prods if e[0] in cset]
        if not ok or any(len(prods[e]) != 1 for e in edges) or len(edges) < 2:
            continue
        left = sorted(u for u in comp if side[u] == 0)
        right = sorted(u for u in comp if side[u] == 1)
        layers.append(([prods[e][0] for e in edges], left, right))
    return layers


def add_product_layer_cuts(model, cdag: CompactDAG, sv: _SetVars, w: np.ndarray) -> int:
    """Redundant P2 cuts: in each product layer, sum(x - d) over products <= |D cap L| * |D cap R|.

    Notes
    -----
    Valid for every set with dominator D: the path ``u -> p`` from an input
    ``u`` to a product ``p`` is one edge, so a product of the set that is
    not itself in D has both its inputs in D. In a bipartite layer (inputs
    L and R, each product an edge between them, no two products on the same
    pair) the products with both inputs in D number at most
    ``|D cap L| * |D cap R|``, and ``x[p] - d[p] <= 1`` exactly when p is such
    a product. The model's reachability clauses imply each product's two
    implications, but the LP relaxation spreads D thinly over all inputs and
    never sees the product; CP-SAT propagates it during the search. Returns
    the number of layers cut.
    """
    layers = _product_layers(cdag, w)
    for k, (prods, left, right) in enumerate(layers):
        a = model.NewIntVar(0, len(left), f"layer_{k}_L")
        b = model.NewIntVar(0, len(right), f"layer_{k}_R")
        ab = model.NewIntVar(0, len(left) * len(right), f"layer_{k}_LR")
        model.Add(a == sum(sv.d[u] for u in left))
        model.Add(b == sum(sv.d[u] for u in right))
        model.AddMultiplicationEquality(ab, [a, b])
        model.Add(sum(sv.x[p] for p in prods) - sum(sv.d[p] for p in prods) <= ab)
    return len(layers)


def add_capacity_objective(model, sv: _SetVars, w: np.ndarray) -> None:
    """Maximise the weight of the set."""
    model.Maximize(sum(int(w[v]) * sv.x[v] for v in range(len(w)) if w[v]))


def decode_set(solver, cdag: CompactDAG, sv: _SetVars) -> tuple:
    """The chosen set and dominator, as node ids in topological order."""
    nodes = tuple(cdag.names[v] for v in range(cdag.n) if solver.Value(sv.x[v]))
    dom = tuple(cdag.names[v] for v in range(cdag.n) if solver.Value(sv.d[v]))
    return nodes, dom


@dataclass(frozen=True)
class CapacityResult:
    """The outcome of :func:`class_capacity`.

    Attributes
    ----------
    X : int
    status : str
        ``OPTIMAL`` (``capacity`` is U), ``FEASIBLE`` or ``UNKNOWN``; with
        ``restrict``, ``RELAXED`` (``upper_bound`` is the relaxation's
        maximum, proven) or ``RELAXED_FEASIBLE`` / ``RELAXED_UNKNOWN``.
    capacity : int
        Weight of the best set found (a lower bound on U).
    upper_bound : int
        A proven upper bound on U: what a lower bound on I/O may use.
    nodes : tuple of str
        The best set found (verified: P2 and P3 for X, convex if asked).
    dominator : tuple of str
        Its dominator.
    total_weight : int
        w(V) over the DAG without isolated nodes.
    weight : str
        Description of the weight.
    convex : bool
    seconds : float
    solver_version : str
    parameters : dict
    """

    X: int
    status: str
    capacity: int
    upper_bound: int
    nodes: tuple
    dominator: tuple
    total_weight: int
    weight: str
    convex: bool
    seconds: float
    solver_version: str = SOLVER_VERSION
    parameters: dict = field(default_factory=dict, compare=False)

    @property
    def proven(self) -> bool:
        return self.status == "OPTIMAL"

    def to_dict(self) -> dict:
        return {
            "X": self.X,
            "status": self.status,
            "capacity": self.capacity,
            "upper_bound": self.upper_bound,
            "nodes": list(self.nodes),
            "dominator": list(self.dominator),
            "total_weight": self.total_weight,
            "weight": self.weight,
            "convex": self.convex,
            "seconds": round(self.seconds, 3),
            "solver_version": self.solver_version,
            "parameters": self.parameters,
        }


def _restrict(cdag: CompactDAG, w: np.ndarray, keep) -> tuple:
    """(sub-CompactDAG of ``keep`` and its ancestors, its weights, exempt mask of its exits)."""
    keep_idx = [cdag.index[v] for v in keep]
    inside = np.zeros(cdag.n, dtype=bool)
    inside[keep_idx] = True
    for v in range(cdag.n - 1, -1, -1):  # topological order: successors come later
        if not inside[v]:
            inside[v] = any(inside[int(t)] for t in cdag.succs(v))
    missing = [cdag.names[v] for v in np.flatnonzero(w > 0) if not inside[v]]
    if missing:
        raise ValueError(f"restriction loses weighted node {missing[0]!r}: keep a descendant of every weighted node")
    H = nx.DiGraph()
    for v in np.flatnonzero(inside):
        H.add_node(cdag.names[v], op=cdag.ops[v])
    for v in np.flatnonzero(inside):
        for t in cdag.succs(v):
            if inside[int(t)]:
                H.add_edge(cdag.names[v], cdag.names[int(t)])
    sub = compact(H)
    exits = np.array([any(not inside[int(t)] for t in cdag.succs(cdag.index[v])) for v in sub.names], dtype=bool)
    wsub = np.array([w[cdag.index[v]] for v in sub.names], dtype=np.int64)
    return sub, wsub, exits


def _verify_set(cdag: CompactDAG, members: list, X: int, convex: bool, exempt=None) -> None:
    preds, succs = cdag.pred_lists(), cdag.succ_lists()
    problems = []
    if len(_min_vertex_cut(cdag, members, preds)) > X:
        problems.append("P2 fails")
    mins = _minimum_set_idx(succs, members)
    if exempt is not None:
        mins = [v for v in mins if not exempt[v]]
    if len(mins) > X:
        problems.append("P3 fails")
    if convex and members:
        inside = set(members)
        # nodes with an ancestor in the set, and nodes with a descendant in it
        anc_in = np.zeros(cdag.n, dtype=bool)
        for v in range(cdag.n):
            anc_in[v] = v in inside or any(anc_in[u] for u in preds[v])
        desc_in = np.zeros(cdag.n, dtype=bool)
        for v in range(cdag.n - 1, -1, -1):
            desc_in[v] = v in inside or any(desc_in[w] for w in succs[v])
        holes = [cdag.names[v] for v in range(cdag.n) if anc_in[v] and desc_in[v] and v not in inside]
        if holes:
            problems.append(f"not convex at {holes[:5]}")
    if problems:  # pragma: no cover - the model is sound
        raise SpartitionError("CP-SAT capacity set fails the check: " + "; ".join(problems))


def class_capacity(
    dag,
    X: int,
    weight=None,
    convex: bool = False,
    time_limit: float = 60.0,
    workers: int = 2,
    seed: int = 0,
    symmetry=None,
    layer_cuts: bool = False,
    restrict=None,
    method: str = "cp-sat",
    relaxation=None,
) -> CapacityResult:
    """The maximum weight of one node set satisfying P2 and P3 for X (and convexity if asked).

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG; isolated nodes are removed first (docs/definitions.md section 3). A
        selector weight needs the networkx form (it reads ``op`` and ``entry``).
    X : int
        The bound on the dominator and the minimum set (at least 1).
    weight : None, str, dict or callable
        See :func:`node_weights`; e.g. ``"op=mul,tensor=QK"`` counts the
        products of ``S = Q K^T`` in an attention DAG.
    convex : bool
        Also require convexity (every class of a valid partition is convex:
        a path leaving and re-entering a class would break P4), which can
        only lower U and so strengthens the bound.
    time_limit, workers, seed
        CP-SAT settings.
    symmetry : None, "rows" or list of lists of node ids
        Symmetry breaking (:func:`add_set_symmetry`): ``"rows"`` uses the
        query rows of an attention DAG (:func:`attention_row_blocks`), a list
        gives aligned blocks explicitly. Checked to be automorphisms; it
        never changes U, only the search.
    layer_cuts : bool
        Add the redundant product-layer cuts of :func:`add_product_layer_cuts`
        (valid; they never change U).
    restrict : None or iterable of node ids
        Solve a RELAXATION instead: the sub-DAG R of these nodes and all
        their ancestors (it must hold every weighted node), where nodes of R
        with a successor outside R are not counted in P3. Its maximum is an
        upper bound on U (see Notes), so the result has status ``RELAXED``
        (``upper_bound`` proven, ``capacity`` 0: no set of the DAG is
        claimed) or ``RELAXED_FEASIBLE`` (time limit; ``upper_bound`` is the
        relaxation's proven bound).
    method : "cp-sat" or "product"
        How the ``restrict`` relaxation is solved: by CP-SAT, or exactly by
        :func:`~spartition.partition.product.product_capacity` when the
        restricted DAG is a matrix product (all (row, column) components
        alike, e.g. the S = Q K^T part of unmasked attention, or a whole
        matrix product without ``restrict``); the CP-SAT settings are then
        unused.
    relaxation : None or iterable of node ids
        Solve the full DAG, capped by a proven bound: the ``restrict``
        relaxation of these nodes is first solved exactly by the
        matrix-product decomposition, and its maximum (an upper bound on U)
        is added as a constraint on the objective (it removes no set), so
        the search stops as soon as a set reaches it. Recorded in
        ``parameters`` (``relaxation_bound``, ``relaxation_seconds``).

    Returns
    -------
    CapacityResult
        The best set and its weight, the status, and the proven upper bound
        on U (equal to the capacity when OPTIMAL).

    Notes
    -----
    If every class of an X-partition has weight at most U, then
    ``P(X) >= ceil(w(V) / U)`` (docs/definitions.md section 3). The model is one set of
    the :func:`min_partition` encoding: ``x``, a dominator ``d`` restricted
    to ancestors of the set, forced reachability ``r``, and a minimum-set
    count; about ``5 |V| + |E|`` Booleans.

    Why ``restrict`` gives an upper bound: R is closed under predecessors,
    so for a set V' of the DAG meeting P2 and P3 (dominator D) the part
    V' cap R has the same weight (R holds every weighted node); every path
    from an input to it lies in R, so D cap R dominates it; a node of it
    with no successor in V' cap R and all successors inside R has no
    successor in V' at all, so the counted nodes are part of the minimum set
    of V'; and a path of R between two of its nodes is a path of the DAG, so
    convexity is kept. Hence the relaxation admits V' cap R, and its maximum
    is at least U.

    Examples
    --------
    >>> from spartition.families.classic import fft, chain
    >>> class_capacity(fft(1), 1, time_limit=10, workers=1).upper_bound
    1
    >>> res = class_capacity(chain(5), 1, time_limit=10, workers=1)
    >>> res.status, res.capacity, res.upper_bound
    ('OPTIMAL', 5, 5)

    References
    ----------
    Hong & Kung (1981); the per-class lemmas of Saha & Ye (ICML 2024) and
    Papp, Sobczyk & Zouzias bound exactly this quantity.
    """
    if method not in ("cp-sat", "product"):
        raise ValueError(f"unknown capacity method {method!r}; expected 'cp-sat' or 'product'")
    check_settings(time_limit=time_limit, workers=workers, seed=seed)
    if method == "product":
        from spartition.partition.product import product_capacity

        if relaxation is not None:
            raise ValueError("relaxation= caps the CP-SAT search of the full DAG: use it with method='cp-sat'")
        G = _networkx(dag) if isinstance(dag, CompactDAG) else dag
        return product_capacity(G, X, weight=weight, restrict=restrict, convex=convex)
    t0 = time.perf_counter()
    if isinstance(dag, CompactDAG):
        if weight is not None and not isinstance(weight, dict):
            raise ValueError("a selector or callable weight needs the networkx DAG, not a CompactDAG")
        cdag, G = _strip(dag)
        names = cdag.names
        wmap = {v: 1 for v in names} if weight is None else {v: int(weight.get(v, 0)) for v in names}
    else:
        G = strip_isolated(dag)
        cdag = compact(G)
        wmap = node_weights(G, weight)
    w = np.array([wmap[v] for v in cdag.names], dtype=np.int64)
    total = int(w.sum())
    wdesc = "unit" if weight is None else weight if isinstance(weight, str) else type(weight).__name__
    if X < 1:
        raise ValueError(f"X = {X}: a class needs X >= 1")
    exempt = None
    cap_bound = None
    if relaxation is not None:
        if restrict is not None:
            raise ValueError("give restrict (solve the relaxation) or relaxation (bound the full DAG), not both")
        from spartition.partition.product import product_capacity

        rel = product_capacity(G if G is not None else _networkx(cdag), X, weight=wmap, restrict=relaxation,
                               convex=convex)
        cap_bound = (rel.upper_bound, rel.seconds)
    if restrict is not None:
        cdag, w, exempt = _restrict(cdag, w, [str(v) for v in restrict])
    model = cp_model.CpModel()
    sv = add_set(model, cdag)
    add_set_dominator(model, cdag, sv, X)
    add_set_min_set(model, cdag, sv, X, exempt)
    if convex:
        add_convexity(model, cdag, sv)
    nblocks = []
    if symmetry is not None:
        if isinstance(symmetry, str):
            helpers = {"rows": attention_row_blocks, "cols": attention_column_blocks}
            families = [helpers[part](cdag.names) for part in symmetry.split("+")]
        else:
            families = [symmetry]
        # several families are valid together only if each family's permutations keep
        # the block weights of the others (true for rows and key columns: they commute
        # and a column permutation maps each row block to itself)
        for blocks in families:
            nblocks.append(add_set_symmetry(model, cdag, sv, w, [[cdag.index[v] for v in b] for b in blocks]))
    nlayers = add_product_layer_cuts(model, cdag, sv, w) if layer_cuts else 0
    add_capacity_objective(model, sv, w)
    if cap_bound is not None:
        model.Add(sum(int(w[v]) * sv.x[v] for v in range(len(w)) if w[v]) <= cap_bound[0])
    solver, params = _solver(time_limit, workers, seed, lp=True)
    if layer_cuts:
        params = dict(params, product_layers=nlayers)
    if symmetry is not None:
        params = dict(params, symmetry_blocks=nblocks)
    code = solve_interruptibly(solver, model)
    status = status_name(code)
    seconds = time.perf_counter() - t0
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        nodes, dom = decode_set(solver, cdag, sv)
        members = [cdag.index[v] for v in nodes]
        _verify_set(cdag, members, X, convex, exempt)
        cap = int(w[members].sum()) if members else 0
    elif code == cp_model.UNKNOWN:
        nodes, dom, cap = (), (), 0
    else:  # pragma: no cover - the empty set is always feasible
        raise SpartitionError(f"CP-SAT returned {status} on a capacity model")
    # UNKNOWN proves nothing: U is then bounded only by the total weight (or the relaxation)
    solved = proven_bound(solver, code, "max", cap)
    ub = total if solved is None else min(solved, total)
    if cap_bound is not None:
        if cap_bound[0] < cap:
            raise SpartitionError(
                f"the relaxation's bound {cap_bound[0]} is below a verified set of weight {cap} (relaxation bug)"
            )
        ub = min(ub, cap_bound[0])
        params = dict(params, relaxation_bound=cap_bound[0], relaxation_seconds=round(cap_bound[1], 3))
    if ub == cap:
        status = "OPTIMAL"
    if restrict is not None:
        params = dict(params, restricted_nodes=cdag.n, exits=int(exempt.sum()), relaxed_capacity=cap,
                      relaxed_set=list(nodes))
        status = "RELAXED" if status == "OPTIMAL" else "RELAXED_" + status
        nodes, dom, cap = (), (), 0
    return CapacityResult(
        X, status, cap, ub, nodes, dom, total, wdesc, convex, seconds, parameters=params
    )
