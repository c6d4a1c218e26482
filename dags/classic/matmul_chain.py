"""Chains of matrix products ``M1 M2 ... Mk``, associated to the left: the pieces such as ``(A1 X) A2^T``.

Naming: inputs ``M{t}_{a}_{b}`` (op input, entry ``("M{t}", a, b)``) for
the ``t``-th factor (``t = 1..k``, of size ``dims[t-1] x dims[t]``); the
running product ``C{t} = C{t-1} M{t}`` (``C1 = M1``) has products
``P{t}_{a}_{b}_{e}`` = ``C{t-1}[a, e] M{t}[e, b]`` (op mul, the summed
index ``e`` last) and sums ``C{t}_{a}_{b}`` (op add). The outputs are
``C{k}_{a}_{b}``. One-term sums (a factor with an inner dimension 1) are
recorded in the graph attribute ``aliases``.

Node count: ``sum_t m_{t-1} m_t`` inputs plus, for each ``t >= 2``,
``m_0 m_t (2 m_{t-1} - 1)`` products and adds (``dims = m_0, ..., m_k``).
"""

from __future__ import annotations

import re

import networkx as nx

from spartition.authoring.nodes import add_inputs, add_node
from spartition.authoring.sums import add_named_sum, check_shape
from spartition.core.dag import new_dag

__all__ = ["matmul_chain", "matmul_chain_node_count"]


def _dims(dims: str) -> list[int]:
    # every item must be a size: "two3four2x5" or "-2,3,2" once built some other chain from the digits
    items = [x for x in re.split(r"\s*[,x;]\s*|\s+", str(dims).strip())]
    bad = next((x for x in items if not re.fullmatch(r"[0-9]+", x)), None)
    if bad is not None:
        raise ValueError(f"dims must list positive sizes m0,m1,m2,... (separated by ',', 'x', ';' or spaces), "
                         f"got {dims!r}: {bad!r} is not a size")
    m = [int(x) for x in items]
    if len(m) < 3 or min(m) < 1:
        raise ValueError(f"dims must list at least three positive sizes m0,m1,m2,..., got {dims!r}")
    return m


def matmul_chain_node_count(dims: str) -> int:
    """Nodes of :func:`matmul_chain`: inputs plus ``m_0 m_t (2 m_{t-1} - 1)`` per product.

    Examples
    --------
    >>> matmul_chain_node_count("2,2,2"), matmul_chain("2,2,2").number_of_nodes()
    (20, 20)
    """
    m = _dims(dims)
    inputs = sum(m[t - 1] * m[t] for t in range(1, len(m)))
    return inputs + sum(m[0] * m[t] * (2 * m[t - 1] - 1) for t in range(2, len(m)))


def matmul_chain(dims: str = "2,2,2,2", shape: str = "chain") -> nx.DiGraph:
    """The left-associated product chain ``((M1 M2) M3) ...`` of matrices of sizes ``dims``.

    Parameters
    ----------
    dims : str
        Sizes ``m0,m1,...,mk``, positive integers separated by ``,``, ``x``,
        ``;`` or spaces (anything else is refused; ``k >= 2`` factors; factor
        ``t`` is ``m_{t-1} x m_t``). ``(A1 X) A2^T`` with A1, A2 ``n x d`` and
        X ``d x d`` is ``dims="n,d,d,n"``.
    shape : {"chain", "tree"}
        Shape of every sum (ascending order of the summed index).

    Returns
    -------
    networkx.DiGraph
        :func:`matmul_chain_node_count` nodes; outputs ``C{k}_{a}_{b}``.

    Raises
    ------
    ValueError
        On fewer than three sizes, a size below 1, or an unknown shape.

    Examples
    --------
    >>> G = matmul_chain("1,2,2,1")
    >>> G.number_of_nodes(), sorted(v for v in G if G.out_degree(v) == 0)
    (17, ['C3_0_0'])

    References
    ----------
    Li et al. (arXiv 2410.09397): the products ``A1 X`` and ``(A1 X) A2^T``
    behind the ``n d^3 / M`` and ``n^2 d^2 / M`` terms of the backward bound.
    """
    m = _dims(dims)
    check_shape(shape)
    k = len(m) - 1
    G = new_dag("matmul-chain", {"dims": dims, "shape": shape})
    G.graph["aliases"] = {}
    G.graph["paper"] = {"n": None, "d": None, "r": None, "g": None, "Z_input": sum(m[t - 1] * m[t] for t in range(1, k + 1)), "Z_QK": None}
    for t in range(1, k + 1):
        add_inputs(G, f"M{t}", m[t - 1], m[t])
    prev = {(a, b): f"M1_{a}_{b}" for a in range(m[0]) for b in range(m[1])}
    for t in range(2, k + 1):
        cur = {}
        for a in range(m[0]):
            for b in range(m[t]):
                terms = [
                    add_node(G, f"P{t}_{a}_{b}_{e}", "mul", (f"P{t}", a, b, e), [prev[a, e], f"M{t}_{e}_{b}"])
                    for e in range(m[t - 1])
                ]
                cur[a, b] = add_named_sum(G, terms, f"C{t}_{a}_{b}", (f"C{t}", a, b), shape)
        prev = cur
    return G


#: Called by the registry's size guard before building.
matmul_chain.node_count = lambda dims, **_: matmul_chain_node_count(dims)
