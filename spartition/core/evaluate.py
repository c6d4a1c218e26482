"""Numeric evaluation of a CDAG: every node's value from numpy inputs, by its ``op``.

Op table (shared by every family):

==========  ==========================================================
op          value
==========  ==========================================================
``input``   ``inputs[T][idx]`` for the node's entry ``(T, *idx)``
``add``     sum of the predecessors
``mul``     product of the predecessors
``scale``   product of the predecessors
``exp``     ``exp`` of the single predecessor
``recip``   ``1 /`` the single predecessor
``sub``     ``value(args[0]) - value(args[1])`` (attribute ``args``)
``div``     ``value(args[0]) / value(args[1])`` (attribute ``args``)
``cscale``  ``coef *`` the single predecessor (attribute ``coef``)
``poly``    ``coef * prod_k value(args[k]) ** powers[k]``
            (attributes ``args``, ``powers``, ``coef`` default 1.0)
``const``   attribute ``value`` (no predecessors)
==========  ==========================================================

``sub``, ``div`` and ``poly`` name their operands in ``args`` because the
order of predecessors is not kept through the JSON format.

Evaluation is vectorised: nodes are grouped by depth (longest path from a
source) and op, and each group is one numpy operation (``reduceat`` over
the CSR predecessor arrays of :class:`spartition.core.dag.CompactDAG`).
"""

from __future__ import annotations

import networkx as nx
import numpy as np

from spartition.core.dag import compact
from spartition.errors import InvalidDAG, SpartitionError

__all__ = ["OPS", "evaluate", "evaluate_array", "assemble"]

OPS = ("input", "add", "mul", "scale", "exp", "recip", "sub", "div", "cscale", "poly", "const")
_CODE = {op: k for k, op in enumerate(OPS)}
_UNARY = ("exp", "recip", "cscale")
_BINARY_ARGS = ("sub", "div")


def _segments(ptr: np.ndarray, nodes: np.ndarray):
    """Flat positions into a CSR index array for ``nodes``, and the segment starts."""
    starts = ptr[nodes]
    lengths = ptr[nodes + 1] - starts
    offsets = np.zeros(len(nodes), dtype=np.int64)
    np.cumsum(lengths[:-1], out=offsets[1:])
    flat = np.repeat(starts - offsets, lengths) + np.arange(lengths.sum())
    return flat, offsets, lengths


def _load_inputs(G, c, vals, inputs):
    by_tensor: dict = {}
    for v in np.flatnonzero(c.is_input):
        name = c.names[v]
        if c.ops[v] == "const":
            continue
        entry = G.nodes[name].get("entry")
        if not entry:
            raise SpartitionError(f"input node {name!r} has no entry naming the tensor it reads")
        by_tensor.setdefault(entry[0], []).append((v, tuple(entry[1:]), name))
    for tensor, items in by_tensor.items():
        if tensor not in inputs:
            raise SpartitionError(f"input node {items[0][2]!r} reads tensor {tensor!r}, which is missing from the inputs")
        arr = np.asarray(inputs[tensor], dtype=float)
        idx = np.array([it[1] for it in items], dtype=np.int64).reshape(len(items), -1)
        if idx.shape[1] != arr.ndim:
            raise SpartitionError(f"input node {items[0][2]!r}: entry has {idx.shape[1]} indices, tensor {tensor!r} has {arr.ndim} dimensions")
        bad = np.flatnonzero(np.any((idx < 0) | (idx >= np.array(arr.shape)), axis=1))
        if len(bad):
            raise SpartitionError(f"input node {items[bad[0]][2]!r}: entry index out of range for tensor {tensor!r} of shape {arr.shape}")
        vals[[it[0] for it in items]] = arr[tuple(idx.T)]


def _attr_args(G, c, v, k=None):
    name = c.names[v]
    args = G.nodes[name].get("args")
    if args is None or (k is not None and len(args) != k):
        raise InvalidDAG(f"node {name!r} (op {c.ops[v]}) needs attribute 'args'" + (f" with {k} node ids" if k else ""))
    preds = {c.names[p] for p in c.preds(v)}
    for a in args:
        if a not in preds:
            raise InvalidDAG(f"node {name!r}: operand {a!r} in 'args' is not a predecessor")
    if k is None and set(args) != preds:
        raise InvalidDAG(f"node {name!r}: 'args' must list every predecessor")
    return [c.index[a] for a in args]


def evaluate_array(dag: nx.DiGraph, inputs: dict):
    """Evaluate ``dag``; return its :class:`~spartition.core.dag.CompactDAG` and the value array.

    Parameters
    ----------
    dag : networkx.DiGraph
        A CDAG (see :func:`evaluate`).
    inputs : dict
        Tensor name -> numpy array.

    Returns
    -------
    (CompactDAG, numpy.ndarray)
        ``values[k]`` is the value of node ``compact.names[k]`` (topological order).

    Raises
    ------
    InvalidDAG, SpartitionError
        As :func:`evaluate`.

    Examples
    --------
    >>> from spartition.families.classic.dag import reduction
    >>> import numpy as np
    >>> c, values = evaluate_array(reduction(3), {"x": np.array([1.0, 2.0, 4.0])})
    >>> float(values[c.index["s"]])
    7.0
    """
    c = compact(dag)
    n = c.n
    indeg = c.in_degree()
    codes = np.empty(n, dtype=np.int64)
    for v, op in enumerate(c.ops):
        if op not in _CODE:
            raise InvalidDAG(f"node {c.names[v]!r} has unknown op {op!r}; known ops: {', '.join(OPS)}")
        codes[v] = _CODE[op]
        if op == "input" and indeg[v]:
            raise InvalidDAG(f"node {c.names[v]!r} has op 'input' but {indeg[v]} predecessors")
        if op != "input" and op != "const" and not indeg[v]:
            raise InvalidDAG(f"node {c.names[v]!r} (op {op}) has no predecessors: only inputs and consts may be sources")
        if op in _UNARY and indeg[v] != 1:
            raise InvalidDAG(f"node {c.names[v]!r} (op {op}) needs exactly one predecessor, has {indeg[v]}")
        if op == "const" and indeg[v]:
            raise InvalidDAG(f"node {c.names[v]!r} (op const) must have no predecessors")
    vals = np.zeros(n, dtype=float)
    _load_inputs(dag, c, vals, inputs)
    depth = np.zeros(n, dtype=np.int64)
    preds = c.pred_lists()
    for v in range(n):
        if preds[v]:
            depth[v] = 1 + max(depth[p] for p in preds[v])
    order = np.lexsort((codes, depth))
    keys = depth[order] * len(OPS) + codes[order]
    cuts = np.flatnonzero(np.diff(keys)) + 1
    with np.errstate(over="ignore"):
        for group in np.split(order, cuts):
            op = OPS[codes[group[0]]]
            if op == "input":
                continue
            _apply(dag, c, op, group, vals)
    return c, vals


def _apply(G, c, op, group, vals):
    if op in ("add", "mul", "scale"):
        flat, offsets, _ = _segments(c.pred_ptr, group)
        ufunc = np.add if op == "add" else np.multiply
        vals[group] = ufunc.reduceat(vals[c.pred_idx[flat]], offsets)
    elif op in _UNARY:
        x = vals[c.pred_idx[c.pred_ptr[group]]]
        if op == "exp":
            vals[group] = np.exp(x)
        elif op == "recip":
            vals[group] = 1.0 / x
        else:
            coef = np.array([float(G.nodes[c.names[v]].get("coef", 1.0)) for v in group])
            vals[group] = coef * x
    elif op in _BINARY_ARGS:
        args = np.array([_attr_args(G, c, v, 2) for v in group], dtype=np.int64)
        a, b = vals[args[:, 0]], vals[args[:, 1]]
        vals[group] = a - b if op == "sub" else a / b
    elif op == "poly":
        flat_args, powers, lengths, coefs = [], [], [], []
        for v in group:
            attrs = G.nodes[c.names[v]]
            args = _attr_args(G, c, v)
            pw = attrs.get("powers", [1] * len(args))
            if len(pw) != len(args):
                raise InvalidDAG(f"node {c.names[v]!r} (op poly): 'powers' and 'args' differ in length")
            flat_args += args
            powers += list(pw)
            lengths.append(len(args))
            coefs.append(float(attrs.get("coef", 1.0)))
        offsets = np.zeros(len(group), dtype=np.int64)
        np.cumsum(lengths[:-1], out=offsets[1:])
        terms = vals[np.array(flat_args, dtype=np.int64)] ** np.array(powers, dtype=float)
        vals[group] = np.array(coefs) * np.multiply.reduceat(terms, offsets)
    elif op == "const":
        vals[group] = [float(G.nodes[c.names[v]].get("value", 0.0)) for v in group]


def evaluate(dag: nx.DiGraph, inputs: dict) -> dict:
    """The value of every node of ``dag`` computed from numpy ``inputs``.

    Parameters
    ----------
    dag : networkx.DiGraph
        A CDAG whose nodes carry ``op`` (module table) and, on inputs, an
        ``entry`` ``(T, *idx)``.
    inputs : dict
        Tensor name -> array; an input with entry ``("Q", i, l)`` reads
        ``inputs["Q"][i, l]``.

    Returns
    -------
    dict
        Node id -> float.

    Raises
    ------
    InvalidDAG
        On an unknown op (naming the node), a wrong number of predecessors,
        or ``args`` that are not predecessors.
    SpartitionError
        On an input whose tensor is missing or whose index is out of range.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> import numpy as np
    >>> val = evaluate(matmul(1, 2, 1), {"A": np.array([[1.0, 2.0]]), "B": np.array([[3.0], [4.0]])})
    >>> val["C_0_0"]
    11.0
    """
    c, vals = evaluate_array(dag, inputs)
    return dict(zip(c.names, vals.tolist()))


def assemble(dag: nx.DiGraph, values: dict, tensor: str, shape=None, fill: float = 0.0) -> np.ndarray:
    """The array of tensor ``tensor`` from node values, placed by each node's ``entry``.

    Nodes whose entry is ``(tensor, *idx)`` (partial sums excluded) and the
    one-term stand-ins in the graph attribute ``aliases`` contribute.

    Parameters
    ----------
    dag : networkx.DiGraph
        The CDAG.
    values : dict
        Node id -> value (from :func:`evaluate`).
    tensor : str
        Tensor name, e.g. ``"O"``.
    shape : tuple of int, optional
        Array shape (default: one past the largest index on each axis).
    fill : float
        Value of entries no node computes (masked-out entries).

    Raises
    ------
    SpartitionError
        If no node holds an entry of ``tensor``.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> import numpy as np
    >>> G = matmul(2, 2, 1)
    >>> v = evaluate(G, {"A": np.array([[1.0, 2.0], [3.0, 4.0]]), "B": np.array([[1.0], [10.0]])})
    >>> assemble(G, v, "C").tolist()
    [[21.0], [43.0]]
    """
    placed = {}
    for v, data in dag.nodes(data=True):
        entry = data.get("entry")
        if entry and entry[0] == tensor and "partial" not in entry[1:]:
            placed[tuple(int(x) for x in entry[1:])] = values[v]
    for alias in dag.graph.get("aliases", {}).values():
        entry = alias["entry"]
        if entry[0] == tensor:
            placed[tuple(int(x) for x in entry[1:])] = values[alias["node"]]
    if not placed:
        raise SpartitionError(f"no node of the DAG holds an entry of tensor {tensor!r}")
    if shape is None:
        idx = np.array(list(placed), dtype=np.int64).reshape(len(placed), -1)
        shape = tuple(int(x) + 1 for x in idx.max(axis=0))
    out = np.full(shape, fill, dtype=float)
    for k, x in placed.items():
        out[k] = x
    return out
