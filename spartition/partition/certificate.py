"""S-partitions: the certificate file and an independent checker of properties P1-P4.

An S-partition of a CDAG splits its nodes into classes V1..Vh such that
(docs/definitions.md section 3, Hong & Kung 1981):

- P1: the classes are disjoint and cover V;
- P2: each class has a dominator set D with ``|D| <= S``: every path from an
  input to a node of the class meets D (an input inside the class must itself
  be in D);
- P3: the minimum set of each class (its nodes with no successor inside the
  class) has at most S nodes;
- P4: the classes can be ordered so that every edge goes from an earlier or
  the same class to a later or the same class.

A certificate is a JSON file::

    {"S": 4, "classes": [["a", "b"], ["c"]], "dominators": [["a"], ["b"]]}

with the classes listed in a topological order and ``dominators`` optional.
The checker computes everything it needs itself (the smallest dominator of a
class is a minimum vertex cut, found by max-flow), so a certificate's claims
are verified, never trusted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import numpy as np

from spartition.core.dag import CompactDAG, as_compact, read_json
from spartition.errors import InvalidPartition
from spartition.partition.dominators import min_vertex_cut, minimum_set_indices, path_avoiding

__all__ = [
    "ClassReport",
    "Partition",
    "PartitionReport",
    "Problem",
    "check_partition",
    "load_partition",
    "min_dominator",
    "minimum_set",
    "save_partition",
]



def _is_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


# ---------------------------------------------------------------------------
# The certificate
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Partition:
    """An S-partition certificate: ``S``, the classes in a topological order, optional dominators.

    Attributes
    ----------
    S : int
        The bound of P2 and P3.
    classes : tuple of tuple of str
        The classes, each a tuple of node ids, listed so that every edge goes
        forward or stays inside a class (P4).
    dominators : tuple of tuple of str, optional
        One claimed dominator set per class; ``None`` when not given (the
        checker then computes a minimum one).
    meta : dict
        Free-form provenance (solver, status, ...); not compared.

    Examples
    --------
    >>> p = Partition(2, [["c0", "c1"], ["c2"]])
    >>> p.classes, len(p)
    ((('c0', 'c1'), ('c2',)), 2)
    >>> Partition.from_dict(p.to_dict()) == p
    True
    """

    S: int
    classes: tuple
    dominators: tuple | None = None
    meta: dict | None = field(default=None, compare=False)

    def __post_init__(self):
        if not _is_int(self.S) or self.S < 0:
            raise InvalidPartition(f"S must be a non-negative integer, got {self.S!r}")
        object.__setattr__(self, "S", int(self.S))
        object.__setattr__(self, "classes", _tuple_of_tuples(self.classes, "classes"))
        if self.dominators is not None:
            doms = _tuple_of_tuples(self.dominators, "dominators")
            if len(doms) != len(self.classes):
                raise InvalidPartition(
                    f"'dominators' has {len(doms)} sets but there are {len(self.classes)} classes"
                )
            object.__setattr__(self, "dominators", doms)

    def __len__(self) -> int:
        return len(self.classes)

    def to_dict(self) -> dict:
        """The JSON form ``{"S": .., "classes": [[..], ..], "dominators": [[..], ..]}``."""
        d = {"S": self.S, "classes": [list(c) for c in self.classes]}
        if self.dominators is not None:
            d["dominators"] = [list(c) for c in self.dominators]
        if self.meta:
            d["meta"] = self.meta
        return d

    @classmethod
    def from_dict(cls, data) -> "Partition":
        """Parse the JSON form.

        Raises
        ------
        InvalidPartition
            If ``data`` is not an object with an integer ``S`` and a list of
            lists of node ids ``classes`` (and, if present, ``dominators`` of
            the same length).
        """
        if not isinstance(data, dict):
            raise InvalidPartition("a partition certificate must be a JSON object")
        for key in ("S", "classes"):
            if key not in data:
                raise InvalidPartition(f"partition certificate has no {key!r} key")
        meta = data.get("meta")
        if meta is not None and not isinstance(meta, dict):
            raise InvalidPartition("'meta' must be an object")
        return cls(S=data["S"], classes=data["classes"], dominators=data.get("dominators"), meta=meta)


def _tuple_of_tuples(value, key: str) -> tuple:
    if not isinstance(value, (list, tuple)):
        raise InvalidPartition(f"{key!r} must be a list of lists of node ids, got {type(value).__name__}")
    out = []
    for k, group in enumerate(value):
        if not isinstance(group, (list, tuple)):
            raise InvalidPartition(f"{key}[{k}] must be a list of node ids, got {group!r}")
        for v in group:
            if not isinstance(v, (str, int)) or isinstance(v, bool):
                raise InvalidPartition(f"{key}[{k}] holds {v!r}, which is not a node id")
        out.append(tuple(str(v) for v in group))
    return tuple(out)


def load_partition(path) -> Partition:
    """Read a partition certificate JSON file.

    Parameters
    ----------
    path : str or pathlib.Path

    Returns
    -------
    Partition

    Raises
    ------
    InvalidPartition
        If the file cannot be read, is not JSON, or is not a certificate.
    """
    return Partition.from_dict(read_json(path, InvalidPartition, "partition"))


def save_partition(partition: Partition, path) -> None:
    """Write a partition certificate JSON file (the form of :meth:`Partition.to_dict`).

    Parameters
    ----------
    partition : Partition
    path : str or pathlib.Path
    """
    Path(path).write_text(json.dumps(partition.to_dict()) + "\n")


# ---------------------------------------------------------------------------
# Dominators and minimum sets
# ---------------------------------------------------------------------------


def min_dominator(dag, nodes) -> tuple:
    """A smallest dominator set of ``nodes``: a minimum vertex cut between the inputs and them.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG.
    nodes : iterable of str
        The class.

    Returns
    -------
    tuple of str
        A dominator set of minimum size, in topological order.

    Notes
    -----
    Node splitting: each ancestor v of the class becomes ``v_in -> v_out``
    with capacity 1, every edge ``u -> v`` becomes ``u_out -> v_in`` with
    infinite capacity, a source feeds ``v_in`` of every input and ``v_out`` of
    every class node feeds a sink. A minimum cut then only cuts node arcs, so
    it is a set of nodes meeting every input-to-class path; an input inside
    the class is on a path of length 0 and must itself be cut. Max-flow by
    Dinic's algorithm (``scipy.sparse.csgraph.maximum_flow``) on the
    ancestors of the class only.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain, fft
    >>> min_dominator(chain(4), ["c2", "c3"])
    ('c0',)
    >>> len(min_dominator(fft(1), ["F1_0", "F1_1"]))
    2

    References
    ----------
    Hong & Kung, "I/O complexity: the red-blue pebble game" (1981), the
    definition of a dominator set.
    """
    cdag = as_compact(dag)
    idx = [_index(cdag, v) for v in nodes]
    return tuple(cdag.names[v] for v in min_vertex_cut(cdag, idx))


def minimum_set(dag, nodes) -> tuple:
    """The minimum set of a class: its nodes with no successor inside the class.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    nodes : iterable of str
        The class.

    Returns
    -------
    tuple of str
        In topological order.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> minimum_set(chain(4), ["c1", "c2", "c3"]), minimum_set(chain(4), ["c0", "c2"])
    (('c3',), ('c0', 'c2'))
    """
    cdag = as_compact(dag)
    idx = sorted({_index(cdag, v) for v in nodes})
    return tuple(cdag.names[v] for v in minimum_set_indices(cdag.succ_lists(), idx))


def _index(cdag: CompactDAG, v) -> int:
    try:
        return cdag.index[str(v)]
    except KeyError:
        raise InvalidPartition(f"unknown node {v!r}") from None


# ---------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Problem:
    """One violated property: which rule (``P1``..``P4``), which class, which nodes, and why."""

    rule: str
    cls: int | None
    nodes: tuple
    message: str

    def to_dict(self) -> dict:
        return {"rule": self.rule, "class": self.cls, "nodes": list(self.nodes), "message": self.message}


@dataclass(frozen=True)
class ClassReport:
    """What the checker measured on one class.

    Attributes
    ----------
    index : int
        Position of the class in the certificate (0-based).
    size : int
        Number of (known) nodes.
    dominator_size : int
        Size of a minimum dominator (minimum vertex cut from the inputs).
    dominator : tuple of str
        One minimum dominator.
    min_set : tuple of str
        The minimum set (nodes without a successor in the class).
    given_dominator_ok : bool or None
        Whether the certificate's dominator dominates with at most S nodes;
        ``None`` when the certificate gives none.
    """

    index: int
    size: int
    dominator_size: int
    dominator: tuple
    min_set: tuple
    given_dominator_ok: bool | None = None

    @property
    def min_set_size(self) -> int:
        return len(self.min_set)

    def to_dict(self) -> dict:
        return {
            "index": self.index,
            "size": self.size,
            "dominator_size": self.dominator_size,
            "dominator": list(self.dominator),
            "min_set_size": self.min_set_size,
            "min_set": list(self.min_set),
            "given_dominator_ok": self.given_dominator_ok,
        }


@dataclass(frozen=True)
class PartitionReport:
    """The verdict of :func:`check_partition`.

    Attributes
    ----------
    valid : bool
        True iff no problem was found.
    S : int
        The S checked against.
    num_classes : int
        Number of classes (``h``).
    problems : tuple of Problem
        Every violation found, by rule then class.
    classes : tuple of ClassReport
        Per-class dominator and minimum-set measurements.
    notes : tuple of str
        Remarks that are not violations (isolated nodes left out, classes
        listed out of topological order although an order exists).
    """

    valid: bool
    S: int
    num_classes: int
    problems: tuple
    classes: tuple
    notes: tuple = ()

    @property
    def dominator_sizes(self) -> tuple:
        return tuple(c.dominator_size for c in self.classes)

    @property
    def min_set_sizes(self) -> tuple:
        return tuple(c.min_set_size for c in self.classes)

    def to_dict(self) -> dict:
        return {
            "valid": self.valid,
            "S": self.S,
            "num_classes": self.num_classes,
            "problems": [p.to_dict() for p in self.problems],
            "dominator_sizes": list(self.dominator_sizes),
            "min_set_sizes": list(self.min_set_sizes),
            "classes": [c.to_dict() for c in self.classes],
            "notes": list(self.notes),
        }


def _show(names, limit: int = 8) -> str:
    names = list(names)
    body = ", ".join(names[:limit])
    if len(names) > limit:
        body += f", ... ({len(names)} nodes)"
    return "{" + body + "}"


def check_partition(dag, partition: Partition, S: int | None = None) -> PartitionReport:
    """Check properties P1-P4 of an S-partition certificate and measure every class.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG.
    partition : Partition
        The certificate.
    S : int, optional
        The S to check against; defaults to ``partition.S``.

    Returns
    -------
    PartitionReport
        ``valid`` plus every problem found (each naming its rule, class index
        and nodes) and, per class, the minimum dominator size and a minimum
        dominator, and the minimum set.

    Raises
    ------
    InvalidPartition
        If ``S`` is negative.

    Notes
    -----
    - P1: every node in at most one class; every non-isolated node in some
      class; no unknown node ids; no empty class.
    - P2: a minimum dominator of each class is a minimum vertex cut between
      the inputs and the class (see :func:`min_dominator`); the class fails
      when its size exceeds S. A dominator given in the certificate is checked
      separately: its nodes must exist, it must have at most S nodes, and no
      input-to-class path may avoid it (the message shows such a path).
    - P3: the minimum set must have at most S nodes.
    - P4: each edge ``u -> v`` must go from the class of ``u`` to the same or
      a later class in the listed order. When the listed order is wrong but
      the quotient graph of the classes is acyclic, P4 still holds (an order
      exists) and a note gives one; a cycle of classes is a violation.
    - Isolated nodes (input and output at once): partition bounds are
      computed on the DAG without them (docs/definitions.md section 3,
      :func:`spartition.core.dag.strip_isolated`), so a certificate may leave them
      out; a note records that. If listed, they are checked like any node (an
      input inside a class, so it must be in the dominator and counts in the
      minimum set).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> G = fft(1)
    >>> ok = check_partition(G, Partition(2, [["F0_0", "F0_1"], ["F1_0", "F1_1"]]))
    >>> ok.valid, ok.dominator_sizes, ok.min_set_sizes
    (True, (2, 2), (2, 2))
    >>> bad = check_partition(G, Partition(1, [["F0_0", "F0_1", "F1_0", "F1_1"]]))
    >>> bad.valid, [p.rule for p in bad.problems]
    (False, ['P2', 'P3'])
    >>> print(bad.problems[1].message)
    P3: class 0 has a minimum set {F1_0, F1_1} of 2 nodes > S = 1

    References
    ----------
    Hong & Kung (1981), definition of an S-partition; docs/definitions.md section 3.
    """
    cdag = as_compact(dag)
    S = partition.S if S is None else S
    if not _is_int(S) or S < 0:
        raise InvalidPartition(f"S must be a non-negative integer, got {S!r}")
    S = int(S)
    problems: list[Problem] = []
    notes: list[str] = []
    owner, members = _check_cover(cdag, partition, problems, notes)
    lists = (cdag.pred_lists(), cdag.succ_lists())  # once: every class walks them
    reports = [_check_class(cdag, lists, partition, k, mine, S, problems) for k, mine in enumerate(members)]
    _check_order(cdag, owner, len(members), problems, notes)
    order = {"P1": 0, "P2": 1, "P3": 2, "P4": 3}
    problems.sort(key=lambda p: (order[p.rule], -1 if p.cls is None else p.cls))
    return PartitionReport(
        valid=not problems,
        S=S,
        num_classes=len(partition.classes),
        problems=tuple(problems),
        classes=tuple(reports),
        notes=tuple(notes),
    )


def _check_cover(cdag: CompactDAG, partition: Partition, problems: list, notes: list) -> tuple:
    """P1: (owner class of every node or -1, the known members of every class); problems and notes appended."""
    owner = np.full(cdag.n, -1, dtype=np.int64)
    members: list[list[int]] = []
    for k, cls in enumerate(partition.classes):
        if not cls:
            problems.append(Problem("P1", k, (), f"P1: class {k} is empty"))
        unknown = [v for v in cls if v not in cdag.index]
        if unknown:
            problems.append(Problem("P1", k, tuple(unknown), f"P1: class {k} names unknown nodes {_show(unknown)}"))
        mine, dup_here = [], []
        for v in cls:
            i = cdag.index.get(v)
            if i is None:
                continue
            if owner[i] == k:
                dup_here.append(v)
            elif owner[i] >= 0:
                problems.append(
                    Problem("P1", k, (v,), f"P1: node {v} is in class {int(owner[i])} and again in class {k}")
                )
            else:
                owner[i] = k
                mine.append(i)
        if dup_here:
            problems.append(Problem("P1", k, tuple(dup_here), f"P1: class {k} lists {_show(dup_here)} twice"))
        members.append(sorted(mine))
    isolated = cdag.isolated()
    missing = [cdag.names[i] for i in np.flatnonzero((owner < 0) & ~isolated)]
    if missing:
        problems.append(Problem("P1", None, tuple(missing), f"P1: nodes in no class: {_show(missing)}"))
    left_out = [cdag.names[i] for i in np.flatnonzero((owner < 0) & isolated)]
    if left_out:
        notes.append(f"isolated nodes left out (partition of the DAG without them): {_show(left_out)}")
    return owner, members


def _check_class(cdag: CompactDAG, lists: tuple, partition: Partition, k: int, mine: list, S: int,
                 problems: list) -> ClassReport:
    """P2 and P3 of class ``k`` (its known members ``mine``), and the given dominator if any.

    ``lists`` is ``(cdag.pred_lists(), cdag.succ_lists())``.
    """
    names = cdag.names
    pred_lists, succ_lists = lists
    dom = tuple(names[v] for v in min_vertex_cut(cdag, mine, pred_lists))
    mins = tuple(names[v] for v in minimum_set_indices(succ_lists, mine))
    cls_names = [names[v] for v in mine]
    if len(dom) > S:
        problems.append(
            Problem(
                "P2",
                k,
                tuple(cls_names),
                f"P2: class {k} {_show(cls_names)} needs a dominator of {len(dom)} nodes > S = {S} "
                f"(a minimum one: {_show(dom)})",
            )
        )
    if len(mins) > S:
        problems.append(
            Problem("P3", k, mins, f"P3: class {k} has a minimum set {_show(mins)} of {len(mins)} nodes > S = {S}")
        )
    given_ok = None
    if partition.dominators is not None:
        given_ok = _check_given_dominator(cdag, pred_lists, k, mine, partition.dominators[k], S, problems)
    return ClassReport(k, len(mine), len(dom), dom, mins, given_ok)


def _check_given_dominator(cdag, pred_lists, k, mine, given, S, problems) -> bool:
    ok = True
    unknown = [v for v in given if v not in cdag.index]
    if unknown:
        problems.append(Problem("P2", k, tuple(unknown), f"P2: dominator of class {k} names unknown nodes {_show(unknown)}"))
        ok = False
    D = {cdag.index[v] for v in given if v in cdag.index}
    if len(D) > S:
        shown = tuple(cdag.names[v] for v in sorted(D))
        problems.append(Problem("P2", k, shown, f"P2: the given dominator of class {k} has {len(D)} nodes > S = {S}"))
        ok = False
    path = path_avoiding(cdag, pred_lists, mine, D)
    if path is not None:
        shown = tuple(cdag.names[v] for v in path)
        problems.append(
            Problem(
                "P2",
                k,
                shown,
                f"P2: the given dominator of class {k} misses the path {' -> '.join(shown)} from an input",
            )
        )
        ok = False
    return ok


def _check_order(cdag, owner, h, problems, notes) -> None:
    src = np.repeat(np.arange(cdag.n), np.diff(cdag.succ_ptr))
    dst = cdag.succ_idx.astype(np.int64)
    cu, cv = owner[src], owner[dst]
    known = (cu >= 0) & (cv >= 0)
    back = np.flatnonzero(known & (cu > cv))
    if not len(back):
        return
    Q = nx.DiGraph()
    Q.add_nodes_from(range(h))
    witness = {}
    for e in np.flatnonzero(known & (cu != cv)):
        a, b = int(cu[e]), int(cv[e])
        Q.add_edge(a, b)
        witness.setdefault((a, b), (cdag.names[src[e]], cdag.names[dst[e]]))
    try:
        cycle = nx.find_cycle(Q)
    except nx.NetworkXNoCycle:
        e = back[0]
        topo = list(nx.lexicographical_topological_sort(Q))
        notes.append(
            f"classes are not listed in a topological order (edge {cdag.names[src[e]]} -> "
            f"{cdag.names[dst[e]]} goes from class {int(cu[e])} back to class {int(cv[e])}); "
            f"P4 holds with the order {topo}"
        )
        return
    steps = [f"{witness[(a, b)][0]} -> {witness[(a, b)][1]} (class {a} to {b})" for a, b in cycle]
    nodes = tuple(x for a, b in cycle for x in witness[(a, b)])
    cls = min(a for a, _ in cycle)
    ring = " -> ".join(str(a) for a, _ in cycle) + f" -> {cycle[0][0]}"
    problems.append(Problem("P4", cls, nodes, f"P4: classes {ring} depend on each other cyclically: " + "; ".join(steps)))
