"""S-partition CNFs: "an S-partition with at most H classes exists" and "a set of weight >= W with P2, P3 for X exists".

Deliberately simple and separate from :mod:`spartition.partition.encoding`:
no symmetry breaking, no product-layer cuts, no capacity bound. The DAG is
taken without its isolated nodes (docs/definitions.md section 3).

Partition CNF
-------------
Classes are numbered ``0 .. H-1``; ``g[v][k]`` (k = 1 .. H-1) says v's class
is at least k, ``x[v][k]`` that it is k (``g[v][k] and not g[v][k+1]``).

- P1: the order encoding gives every node exactly one class
  (``g[v][k+1] -> g[v][k]``, ``x`` defined both ways from ``g``);
- P4: ``g[u][k] -> g[v][k]`` for every edge u -> v: classes numbered in an
  order every edge respects; any partition satisfying P4 can be numbered so;
- P3: ``m[v][k]`` is forced when v is in class k and no successor is
  (``not x[v][k] or x[w1][k] or ... or m[v][k]``), at most S per class;
- P2: for each class a set ``d[.][k]`` of at most S nodes and ``a[v][k]``,
  forced for every node reachable from an input by a path avoiding d
  (``d[v][k] or a[v][k]`` for inputs, ``not a[u][k] or d[v][k] or a[v][k]``
  per edge), and ``not x[v][k] or not a[v][k]``: no node of the class is
  reachable around d, which is what "d dominates the class" means (an input
  in the class must be in d).

A model gives a partition with at most H non-empty classes satisfying P1-P4
(read the classes off ``x``; forced variables are at least their meaning, so
the stated limits hold for the true minimum sets and the chosen dominators).
A partition with at most H classes gives a model (number its classes in a
P4 order, pad with empty classes, give each variable its meaning). So the
CNF is unsatisfiable exactly when P(S) > H: refuting it for H = h - 1
certifies P(S) >= h.

Set CNF (class capacity)
------------------------
One set ``x[v]`` with the P2 and P3 clauses above for X, optionally convex
(``z[v]`` forced when some path leaves the set and reaches v:
``not x[u] or x[v] or z[v]``, ``not z[u] or z[v]`` per edge u -> v, and
``not z[v] or not x[v]``), and total weight at least W (each node's literal
repeated by its integer weight in an at-least counter). Unsatisfiable for
W = U + 1 exactly when no such set weighs more than U.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.certify.cardinality import at_least, at_most
from spartition.certify.cnf import CNF
from spartition.core.dag import CompactDAG, compact, dag_hash, strip_isolated

__all__ = ["PARTITION_ENCODER_VERSION", "PartitionCNF", "partition_cnf", "set_cnf"]

PARTITION_ENCODER_VERSION = "partition-1"


@dataclass
class PartitionCNF:
    """The CNF, the compact DAG it speaks about (isolated nodes removed) and the class variables."""

    cnf: CNF
    cdag: CompactDAG
    member: list

    def decode_classes(self, model) -> list:
        """The non-empty classes of a model (lists of node ids, in class order)."""
        true = set(model)
        H = len(self.member[0]) if self.member else 0
        out = [[self.cdag.names[v] for v in range(self.cdag.n) if self.member[v][k] in true] for k in range(H)]
        return [c for c in out if c]


def _dominated(f: CNF, c: CompactDAG, preds, inside, S: int) -> None:
    """P2 for the node set whose membership literals are ``inside``."""
    d = [f.new_var() for _ in range(c.n)]
    a = [f.new_var() for _ in range(c.n)]
    for v in range(c.n):
        if c.is_input[v]:
            f.add(d[v], a[v])
        for u in preds[v]:
            f.add(-a[u], d[v], a[v])
        f.add(-inside[v], -a[v])
    at_most(f, d, S)


def _minimum_set(f: CNF, c: CompactDAG, succs, inside, S: int) -> None:
    """P3 for the node set whose membership literals are ``inside``."""
    m = []
    for v in range(c.n):
        mv = f.new_var()
        f.add(-inside[v], *[inside[w] for w in succs[v]], mv)
        m.append(mv)
    at_most(f, m, S)


def _prepared(dag):
    G = strip_isolated(dag)
    return G, compact(G)


def partition_cnf(dag, S: int, H: int) -> PartitionCNF:
    """The CNF "an S-partition of ``dag`` with at most ``H`` classes exists" (module docstring).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.certify.sat import solve_cnf
    >>> [solve_cnf(partition_cnf(fft(1), 1, h).cnf).satisfiable for h in (3, 4)]
    [False, True]
    """
    G, c = _prepared(dag)
    f = CNF()
    f.comments += [f"spartition {PARTITION_ENCODER_VERSION}: an S-partition with S = {S} and at most {H} classes",
                   f"dag sha256 {dag_hash(G)} (isolated nodes removed)"]
    n = c.n
    preds, succs = c.pred_lists(), c.succ_lists()
    if n == 0:
        return PartitionCNF(f, c, [])
    if H <= 0:
        at_least(f, [f.new_var()], 2)  # a non-empty DAG has no partition into no classes
        return PartitionCNF(f, c, [[] for _ in range(n)])
    # g[v][k] for k = 1 .. H-1; index 0 and H stand for the constants true and false.
    g = [[None] + [f.new_var() for _ in range(H - 1)] + [None] for _ in range(n)]
    x = [[f.new_var() for _ in range(H)] for _ in range(n)]
    for v in range(n):
        for k in range(H):
            lo, hi = g[v][k], g[v][k + 1]
            if lo is not None:
                f.add(-x[v][k], lo)
            if hi is not None:
                f.add(-x[v][k], -hi)
            f.add(*([-lo] if lo is not None else []), *([hi] if hi is not None else []), x[v][k])
            if lo is not None and hi is not None:
                f.add(-hi, lo)
        for u in preds[v]:
            for k in range(1, H):
                f.add(-g[u][k], g[v][k])
    for k in range(H):
        inside = [x[v][k] for v in range(n)]
        _minimum_set(f, c, succs, inside, S)
        _dominated(f, c, preds, inside, S)
    return PartitionCNF(f, c, x)


def set_cnf(dag, X: int, weights, W: int, convex: bool = False) -> PartitionCNF:
    """The CNF "a node set with P2 and P3 for ``X`` (convex if asked) and weight >= ``W`` exists".

    ``weights`` maps node ids to non-negative integers (a missing node weighs 0).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.certify.sat import solve_cnf
    >>> [solve_cnf(set_cnf(fft(1), 1, {v: 1 for v in fft(1)}, w).cnf).satisfiable for w in (1, 2)]
    [True, False]
    """
    G, c = _prepared(dag)
    f = CNF()
    f.comments += [f"spartition {PARTITION_ENCODER_VERSION}: a {'convex ' if convex else ''}set with P2, P3 "
                   f"for X = {X} and weight >= {W}", f"dag sha256 {dag_hash(G)} (isolated nodes removed)"]
    n = c.n
    preds, succs = c.pred_lists(), c.succ_lists()
    x = [f.new_var() for _ in range(n)]
    _minimum_set(f, c, succs, x, X)
    _dominated(f, c, preds, x, X)
    if convex:
        z = [f.new_var() for _ in range(n)]
        for v in range(n):
            for u in preds[v]:
                f.add(-x[u], x[v], z[v])
                f.add(-z[u], z[v])
            f.add(-z[v], -x[v])
    lits = []
    for v in range(n):
        w = int(weights.get(c.names[v], 0))
        if w < 0:
            raise ValueError(f"negative weight on {c.names[v]!r}")
        lits += [x[v]] * w
    if W > 0:
        at_least(f, lits, W)
    return PartitionCNF(f, c, [[xv] for xv in x])
