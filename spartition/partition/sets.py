"""One candidate class on its own: the record of a class capacity, its restricted relaxation, its check.

A class capacity U(X) is the largest weight of one node set that satisfies
P2 and P3 for X (docs/definitions.md section 3). Two methods compute it, CP-SAT
(:mod:`spartition.partition.capacity`) and the exact matrix-product
decomposition (:mod:`spartition.partition.product`); both return a
:class:`CapacityResult`, may solve the ``restrict`` relaxation
(:func:`restricted_dag`) instead of the full DAG, and re-check the set they
found with :func:`verify_set` before returning it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx
import numpy as np

from spartition.core.dag import CompactDAG, compact
from spartition.errors import SpartitionError
from spartition.cpsat import SOLVER_VERSION
from spartition.partition.dominators import min_vertex_cut, minimum_set_indices
from spartition.status import Status

__all__ = ["CapacityResult", "restricted_dag", "verify_set"]


@dataclass(frozen=True)
class CapacityResult:
    """The outcome of a class capacity (:func:`~spartition.partition.capacity.class_capacity`,
    :func:`~spartition.partition.product.product_capacity`).

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
    wall_s : float
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
    wall_s: float
    solver_version: str = SOLVER_VERSION
    parameters: dict = field(default_factory=dict, compare=False)

    @property
    def proven(self) -> bool:
        """True when ``capacity`` is U itself (status ``OPTIMAL``)."""
        return self.status == Status.OPTIMAL

    def to_dict(self) -> dict:
        """The JSON form (the keys of the ``capacity`` command's output)."""
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
            "wall_s": round(self.wall_s, 3),
            "solver_version": self.solver_version,
            "parameters": self.parameters,
        }


def restricted_dag(cdag: CompactDAG, w: np.ndarray, keep) -> tuple:
    """The ``restrict`` relaxation of a capacity: the sub-DAG of ``keep`` and all its ancestors.

    Parameters
    ----------
    cdag : CompactDAG
        The DAG (without isolated nodes).
    w : numpy.ndarray
        The weight of every node of ``cdag``.
    keep : iterable of str
        The kept node ids.

    Returns
    -------
    (CompactDAG, numpy.ndarray, numpy.ndarray of bool)
        The sub-DAG R, the weights of its nodes, and its exits (nodes with a
        successor outside R), which the relaxation does not count in P3.

    Raises
    ------
    ValueError
        If a weighted node is outside R (R must hold every weighted node).

    Notes
    -----
    The maximum weight of a set of R meeting P2 and P3 with the exits
    exempt is an upper bound on the capacity U of the whole DAG: R is closed
    under predecessors, so for a set V' of the DAG with dominator D, the part
    V' cap R has the same weight, D cap R dominates it, its counted nodes
    belong to the minimum set of V', and convexity is kept (the proof in
    full: :func:`~spartition.partition.capacity.class_capacity`).

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import chain
    >>> sub, wsub, exits = restricted_dag(compact(chain(4)), np.array([1, 1, 0, 0]), ["c1"])
    >>> sub.names, wsub.tolist(), exits.tolist()
    (('c0', 'c1'), [1, 1], [False, True])
    """
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


def verify_set(cdag: CompactDAG, members: list, X: int, convex: bool, exempt=None) -> None:
    """Check a set found by a capacity method independently: P2 by max-flow, P3, convexity if asked.

    Parameters
    ----------
    cdag : CompactDAG
    members : list of int
        The set (node indices).
    X : int
        The bound on the dominator and on the minimum set.
    convex : bool
        Also require convexity.
    exempt : numpy.ndarray of bool, optional
        Nodes not counted in P3 (the exits of a :func:`restricted_dag`).

    Raises
    ------
    SpartitionError
        Naming every property that fails (never expected: the models are sound).

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import fft
    >>> verify_set(compact(fft(1)), [2, 3], 2, convex=True)
    >>> verify_set(compact(fft(1)), [2, 3], 1, convex=True)
    Traceback (most recent call last):
    ...
    spartition.errors.SpartitionError: CP-SAT capacity set fails the check: P2 fails; P3 fails
    """
    preds, succs = cdag.pred_lists(), cdag.succ_lists()
    problems = []
    if len(min_vertex_cut(cdag, members, preds)) > X:
        problems.append("P2 fails")
    mins = minimum_set_indices(succs, members)
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
