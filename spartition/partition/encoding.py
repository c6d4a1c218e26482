"""CP-SAT encodings of S-partitions: the model steps of the minimum partition and of one class, and their decoding.

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

Each model is built in small ``add_*`` steps, each adding one family of
constraints to a ``cp_model.CpModel``; a ``decode_*`` function turns a
solved model into a :class:`~spartition.partition.certificate.Partition` (or
a node set) that :func:`~spartition.partition.certificate.check_partition`
(or :func:`~spartition.partition.sets.verify_set`) verifies independently.
Nothing here runs a solver: :mod:`spartition.partition.minimum` and
:mod:`spartition.partition.capacity` assemble the steps, solve and decode.
The optional capacity steps that never change U (symmetry breaking,
product-layer cuts) are in :mod:`spartition.partition.cuts`.

Every step takes ``(model, cdag, vars, ...)``: the CP-SAT model, the
:class:`~spartition.core.dag.CompactDAG` (nodes numbered topologically,
isolated nodes already removed) and the variables record the first step
returned (:class:`PartitionVars` or :class:`SetVars`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spartition.core.dag import CompactDAG
from spartition.partition.certificate import Partition

__all__ = [
    "PartitionVars",
    "SetVars",
    "add_assignment",
    "add_capacity_cap",
    "add_capacity_objective",
    "add_class_usage",
    "add_convexity",
    "add_dominators",
    "add_min_set_limit",
    "add_order",
    "add_partition_hint",
    "add_partition_objective",
    "add_set",
    "add_set_dominator",
    "add_set_min_set",
    "decode_partition",
    "decode_set",
    "set_weight",
]


# ---------------------------------------------------------------------------
# The minimum S-partition: H classes at once
# ---------------------------------------------------------------------------


@dataclass
class PartitionVars:
    """The variables of the minimum-partition model, filled in by its steps.

    Attributes
    ----------
    H : int
        Classes modelled (an upper bound on P(S), from a known partition).
    x, c, used, h
        Membership Booleans ``x[v][k]``, class indices ``c[v]``, class usage
        ``used[k]`` and the number of classes ``h`` (:func:`add_assignment`).
    d, r : list
        Per class k, the dominator choice ``d[k][v]`` and the forced
        reachability ``r[k][v]`` (:func:`add_dominators`).
    """

    H: int
    x: list  # x[v][k]: node v in class k
    c: list  # c[v]: class index of v
    used: list  # used[k]: class k is non-empty
    h: object  # number of classes
    d: list = field(default_factory=list)  # d[k][v]: v in the dominator of class k
    r: list = field(default_factory=list)  # r[k][v]: an input reaches v avoiding D_k


def add_assignment(model, cdag: CompactDAG, H: int) -> PartitionVars:
    """P1: each node in exactly one of H classes; ``c[v]`` its index. The first step of the model.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    H : int
        Classes modelled (at least 1).

    Returns
    -------
    PartitionVars
        The variables, passed to every later step.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> pv = add_assignment(cp_model.CpModel(), compact(chain(3)), 2)
    >>> len(pv.x), len(pv.x[0]), pv.H
    (3, 2, 2)
    """
    n = cdag.n
    x = [[model.new_bool_var(f"x_{v}_{k}") for k in range(H)] for v in range(n)]
    c = [model.new_int_var(0, H - 1, f"c_{v}") for v in range(n)]
    for v in range(n):
        model.add_exactly_one(x[v])
        model.add(c[v] == sum(k * x[v][k] for k in range(1, H)))
    used = [model.new_bool_var(f"used_{k}") for k in range(H)]
    h = model.new_int_var(1 if n else 0, H, "h")
    return PartitionVars(H=H, x=x, c=c, used=used, h=h)


def add_order(model, cdag: CompactDAG, pv: PartitionVars) -> None:
    """P4: the class index never decreases along an edge.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    pv : PartitionVars
        From :func:`add_assignment`.
    """
    for u in range(cdag.n):
        for w in cdag.succs(u):
            model.add(pv.c[u] <= pv.c[int(w)])


def add_class_usage(model, cdag: CompactDAG, pv: PartitionVars) -> None:
    """Classes 0..h-1 are exactly the non-empty ones (no gaps), so h counts them.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    pv : PartitionVars
        From :func:`add_assignment`.
    """
    n, H = cdag.n, pv.H
    for k in range(H):
        members = [pv.x[v][k] for v in range(n)]
        for b in members:
            model.add_implication(b, pv.used[k])
        model.add_bool_or(members).only_enforce_if(pv.used[k])
        if k + 1 < H:
            model.add_implication(pv.used[k + 1], pv.used[k])
    model.add(pv.h == sum(pv.used))


def add_min_set_limit(model, cdag: CompactDAG, pv: PartitionVars, S: int) -> None:
    """P3: at most S nodes of each class without a successor in the class.

    ``same[u, w]`` (edge u -> w) may be true only if w is in u's class;
    ``top[u]`` may be false only if some ``same[u, w]`` is true. The nodes
    counted per class (``x and top``) contain its true minimum set.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    pv : PartitionVars
        From :func:`add_assignment`.
    S : int
    """
    n, H = cdag.n, pv.H
    top = []
    for u in range(n):
        succ = [int(w) for w in cdag.succs(u)]
        t = model.new_bool_var(f"top_{u}")
        if not succ:
            model.add(t == 1)
        else:
            same = []
            for w in succ:
                s = model.new_bool_var(f"same_{u}_{w}")
                model.add(pv.c[w] == pv.c[u]).only_enforce_if(s)
                same.append(s)
            model.add_bool_or([t] + same)
        top.append(t)
    for k in range(H):
        counted = []
        for v in range(n):
            y = model.new_bool_var(f"min_{v}_{k}")
            model.add_bool_or([y, ~pv.x[v][k], ~top[v]])
            counted.append(y)
        model.add(sum(counted) <= S)


def add_dominators(model, cdag: CompactDAG, pv: PartitionVars, S: int) -> None:
    """P2: each class k picks D_k (at most S nodes) cutting every input-to-class path.

    ``r[k][v]`` is forced true when an input reaches v avoiding D_k; class
    members must have it false (see the module notes). D_k is restricted to
    nodes of classes 0..k, which holds for some minimum dominator since every
    ancestor of a class-k node is in a class <= k (P4): no partition is lost.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    pv : PartitionVars
        From :func:`add_assignment`.
    S : int

    References
    ----------
    Hong & Kung (1981), the dominator set; docs/definitions.md section 3.
    """
    n, H = cdag.n, pv.H
    inputs = np.flatnonzero(cdag.is_input)
    preds = cdag.pred_lists()
    for k in range(H):
        d = [model.new_bool_var(f"d_{k}_{v}") for v in range(n)]
        r = [model.new_bool_var(f"r_{k}_{v}") for v in range(n)]
        model.add(sum(d) <= S)
        for v in inputs:
            model.add_bool_or([r[v], d[v]])
        for v in range(n):
            for u in preds[v]:
                model.add_bool_or([r[v], d[v], ~r[u]])
            model.add_implication(pv.x[v][k], ~r[v])
            model.add(pv.c[v] <= k).only_enforce_if(d[v])
        pv.d.append(d)
        pv.r.append(r)


def add_partition_objective(model, pv: PartitionVars, lower: int = 1) -> None:
    """Minimise the number of classes (at least ``lower``, a proven bound).

    Parameters
    ----------
    model : cp_model.CpModel
    pv : PartitionVars
    lower : int
        A lower bound on P(S) proven elsewhere; an unproven one would make
        the optimum wrong.
    """
    model.add(pv.h >= lower)
    model.minimize(pv.h)


def add_partition_hint(model, cdag: CompactDAG, pv: PartitionVars, partition: Partition) -> None:
    """Hint a known partition (class k of the hint -> index k).

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    pv : PartitionVars
        From :func:`add_assignment`.
    partition : Partition
        At most ``pv.H`` classes of the same DAG, listed in a P4 order.
    """
    for k, cls in enumerate(partition.classes):
        for name in cls:
            v = cdag.index[name]
            for j in range(pv.H):
                model.add_hint(pv.x[v][j], int(j == k))


def decode_partition(solver, cdag: CompactDAG, pv: PartitionVars, S: int, meta: dict) -> Partition:
    """The partition of a solved model: classes in index order, empty ones dropped, with their D.

    Parameters
    ----------
    solver : cp_model.CpSolver
        After a solve that found a solution (``OPTIMAL`` or ``FEASIBLE``).
    cdag : CompactDAG
    pv : PartitionVars
    S : int
    meta : dict
        Provenance stored in the partition.

    Returns
    -------
    Partition
        Not yet checked: the caller runs :func:`~spartition.partition.certificate.check_partition`.
    """
    groups = [[] for _ in range(pv.H)]
    for v in range(cdag.n):
        groups[solver.value(pv.c[v])].append(v)
    classes, doms = [], []
    for k, g in enumerate(groups):
        if g:
            classes.append([cdag.names[v] for v in g])
            doms.append([cdag.names[v] for v in range(cdag.n) if solver.value(pv.d[k][v])])
    return Partition(S, classes, dominators=doms, meta=meta)


# ---------------------------------------------------------------------------
# One class: a single node set
# ---------------------------------------------------------------------------


@dataclass
class SetVars:
    """The variables of the one-set (class capacity) model.

    Attributes
    ----------
    x, d, r : list
        Membership, dominator choice and forced reachability per node.
    below : list
        ``below[v]``: v is in the set or has a descendant in it (exact).
    above : list or None
        ``above[v]``: v is in the set or has an ancestor in it (exact; set
        by :func:`add_convexity`).
    """

    x: list
    d: list
    r: list
    below: list  # below[v]: v is in the set or has a descendant in it
    above: list | None = None  # above[v]: v is in the set or has an ancestor in it


def add_set(model, cdag: CompactDAG) -> SetVars:
    """One node set: ``x[v]``, its dominator ``d[v]``, reachability ``r[v]``, and ``below[v]`` exactly.

    The first step of the capacity model.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG

    Returns
    -------
    SetVars
        The variables, passed to every later step.

    Examples
    --------
    >>> from ortools.sat.python import cp_model
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> len(add_set(cp_model.CpModel(), compact(chain(3))).below)
    3
    """
    n = cdag.n
    x = [model.new_bool_var(f"x_{v}") for v in range(n)]
    d = [model.new_bool_var(f"d_{v}") for v in range(n)]
    r = [model.new_bool_var(f"r_{v}") for v in range(n)]
    below = [model.new_bool_var(f"below_{v}") for v in range(n)]
    for v in range(n):
        succ = [below[int(w)] for w in cdag.succs(v)]
        model.add_implication(x[v], below[v])
        for b in succ:
            model.add_implication(b, below[v])
        model.add_bool_or([x[v]] + succ).only_enforce_if(below[v])
    return SetVars(x=x, d=d, r=r, below=below)


def add_set_dominator(model, cdag: CompactDAG, sv: SetVars, X: int) -> None:
    """P2 for one set: at most X dominator nodes, among the set and its ancestors.

    The clauses of the module notes; restricting D to the set and its
    ancestors (``below``) loses no set, as a minimum vertex cut lies there.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    sv : SetVars
        From :func:`add_set`.
    X : int
    """
    model.add(sum(sv.d) <= X)
    for v in np.flatnonzero(cdag.is_input):
        model.add_bool_or([sv.r[v], sv.d[v]])
    for v in range(cdag.n):
        for u in cdag.preds(v):
            model.add_bool_or([sv.r[v], sv.d[v], ~sv.r[int(u)]])
        model.add_implication(sv.x[v], ~sv.r[v])
        model.add_implication(sv.d[v], sv.below[v])


def add_set_min_set(model, cdag: CompactDAG, sv: SetVars, X: int, exempt=None) -> None:
    """P3 for one set: counted[v] >= x[v] - (number of successors in the set); at most X counted.

    Nodes with ``exempt[v]`` true are not counted (the restriction of
    :func:`~spartition.partition.capacity.class_capacity`, whose exits may
    have successors outside).

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    sv : SetVars
        From :func:`add_set`.
    X : int
    exempt : numpy.ndarray of bool, optional
    """
    counted = []
    for v in range(cdag.n):
        if exempt is not None and exempt[v]:
            continue
        succ = [sv.x[int(w)] for w in cdag.succs(v)]
        y = model.new_bool_var(f"min_{v}")
        model.add_bool_or([y, ~sv.x[v]] + succ)
        counted.append(y)
    model.add(sum(counted) <= X)


def add_convexity(model, cdag: CompactDAG, sv: SetVars) -> None:
    """Convexity: a node with an ancestor and a descendant in the set is in the set.

    Every class of a valid partition is convex (a path leaving and
    re-entering a class would break P4), so adding this only lowers U.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    sv : SetVars
        From :func:`add_set`.
    """
    n = cdag.n
    above = [model.new_bool_var(f"above_{v}") for v in range(n)]
    for v in range(n):
        pred = [above[int(u)] for u in cdag.preds(v)]
        model.add_implication(sv.x[v], above[v])
        for a in pred:
            model.add_implication(a, above[v])
        model.add_bool_or([sv.x[v]] + pred).only_enforce_if(above[v])
        succ_below = [sv.below[int(w)] for w in cdag.succs(v)]
        for a in pred:
            for b in succ_below:
                model.add_bool_or([sv.x[v], ~a, ~b])
    sv.above = above


def set_weight(sv: SetVars, w: np.ndarray):
    """The weight of the set, a linear expression over the weighted nodes.

    Parameters
    ----------
    sv : SetVars
    w : numpy.ndarray
        Node weights.
    """
    return sum(int(w[v]) * sv.x[v] for v in range(len(w)) if w[v])


def add_capacity_objective(model, sv: SetVars, w: np.ndarray) -> None:
    """Maximise the weight of the set.

    Parameters
    ----------
    model : cp_model.CpModel
    sv : SetVars
    w : numpy.ndarray
        Node weights.
    """
    model.maximize(set_weight(sv, w))


def add_capacity_cap(model, sv: SetVars, w: np.ndarray, bound: int) -> None:
    """The weight of the set is at most ``bound``, a PROVEN upper bound on U (it removes no optimum).

    With it the search stops as soon as a set reaches the bound.

    Parameters
    ----------
    model : cp_model.CpModel
    sv : SetVars
    w : numpy.ndarray
        Node weights.
    bound : int
        E.g. the maximum of a relaxation (:mod:`spartition.partition.product`).
    """
    model.add(set_weight(sv, w) <= bound)


def decode_set(solver, cdag: CompactDAG, sv: SetVars) -> tuple:
    """The chosen set and dominator, as node ids in topological order.

    Parameters
    ----------
    solver : cp_model.CpSolver
        After a solve that found a solution.
    cdag : CompactDAG
    sv : SetVars

    Returns
    -------
    (tuple of str, tuple of str)
        Not yet checked: the caller runs :func:`~spartition.partition.sets.verify_set`.
    """
    nodes = tuple(cdag.names[v] for v in range(cdag.n) if solver.value(sv.x[v]))
    dom = tuple(cdag.names[v] for v in range(cdag.n) if solver.value(sv.d[v]))
    return nodes, dom
