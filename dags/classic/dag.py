"""Classic CDAG families: chain, reduction, matrix product, FFT, pyramid, stencil, random DAGs.

Every builder returns a CDAG (see :mod:`spartition.core.dag`) whose graph
attributes ``family`` and ``params`` record how it was built, and documents
its node count in closed form. Nodes are added in a topological order.
"""

from __future__ import annotations

import random

import networkx as nx

from spartition.authoring.nodes import add_inputs, add_node
from spartition.authoring.sums import add_sum, check_sums, with_sums
from spartition.core.dag import new_dag

__all__ = ["chain", "reduction", "matmul", "fft", "pyramid", "stencil", "random_layered", "random_dag"]

#: Largest FFT exponent whose node count is computed at all (2**k points beyond any machine).
FFT_MAX_K = 64


def chain(n: int = 4) -> nx.DiGraph:
    """A path of ``n`` nodes ``c0 -> c1 -> ... -> c{n-1}``; ``n`` nodes.

    Costs 2 I/Os for every M >= 2 (load c0, store the last node).

    Examples
    --------
    >>> chain(3).number_of_nodes()
    3
    """
    if n < 2:
        raise ValueError("a chain needs n >= 2 nodes")
    G = new_dag("chain", {"n": n})
    prev = add_node(G, "c0", "input", ("c", 0))
    for i in range(1, n):
        prev = add_node(G, f"c{i}", "scale", ("c", i), [prev])
    return G


def reduction(k: int = 4, shape: str = "chain") -> nx.DiGraph:
    """The sum of ``k`` leaves as binary adds; ``2k - 1`` nodes.

    Parameters
    ----------
    k : int
        Number of leaves (inputs ``x0..x{k-1}``).
    shape : {"chain", "tree"}
        Left-deep chain or balanced tree (docs/definitions.md section 4).

    Examples
    --------
    >>> reduction(5, "tree").number_of_nodes()
    9
    """
    if k < 1:
        raise ValueError("a reduction needs k >= 1 leaves")
    G = new_dag("reduction", {"k": k, "shape": shape})
    leaves = [add_node(G, f"x{i}", "input", ("x", i)) for i in range(k)]
    add_sum(G, leaves, "s", ("s",), shape)
    return G


def matmul(a: int = 2, b: int = 2, c: int = 2, shape: str = "chain", order: str = "", sums: str = "binary") -> nx.DiGraph:
    """Matrix product C = A B of an ``a x b`` by a ``b x c`` matrix.

    Inputs ``A_i_k``, ``B_k_j``; products ``P_i_j_k``; each ``C_i_j`` the sum
    over k of the products in the given shape and order. Node count
    ``ab + bc + abc + ac(b - 1)`` (20 for (2, 2, 2)).

    Parameters
    ----------
    a, b, c : int
        Dimensions (b is the summed index).
    shape : {"chain", "tree"}
        Summation shape.
    order : str
        Comma-separated permutation of ``range(b)``: the order in which the
        products are summed (default ascending).
    sums : {"binary", "node"}
        ``node``: each ``C_i_j`` one node whose in-edges are its b products
        (:func:`spartition.authoring.sums.with_sums`, for the partial game);
        ``ab + bc + abc + ac`` nodes when b >= 2 (shape and order then do
        not matter).

    Examples
    --------
    >>> matmul(2, 2, 2).number_of_nodes(), matmul(1, 1, 1).number_of_nodes()
    (20, 3)
    >>> matmul(2, 3, 2, sums="node").number_of_nodes()
    28
    """
    check_sums(sums)
    perm = [int(x) for x in order.split(",")] if order else list(range(b))
    if sorted(perm) != list(range(b)):
        raise ValueError(f"order must be a permutation of 0..{b - 1}, got {order!r}")
    G = new_dag("matmul", {"a": a, "b": b, "c": c, "shape": shape, "order": order})
    add_inputs(G, "A", a, b)
    add_inputs(G, "B", b, c)
    for i in range(a):
        for j in range(c):
            terms = [add_node(G, f"P_{i}_{j}_{k}", "mul", ("P", i, j, k), [f"A_{i}_{k}", f"B_{k}_{j}"]) for k in perm]
            add_sum(G, terms, f"C_{i}_{j}", ("C", i, j), shape)
    return with_sums(G, sums)


def fft(k: int = 1) -> nx.DiGraph:
    """The FFT butterfly on ``2**k`` points: ``(k + 1) 2**k`` nodes.

    Level 0 holds the inputs ``F0_i``; node ``F{l+1}_i`` depends on ``Fl_i``
    and ``Fl_{i xor 2**l}``. The 2-point butterfly (k = 1) costs 4 and needs
    M >= 3.

    Examples
    --------
    >>> fft(3).number_of_nodes()
    32
    """
    if k < 1:
        raise ValueError("an FFT needs k >= 1 (2 points)")
    N = 2**k
    G = new_dag("fft", {"k": k})
    for i in range(N):
        add_node(G, f"F0_{i}", "input", ("F", 0, i))
    for lev in range(k):
        for i in range(N):
            j = i ^ (1 << lev)
            add_node(G, f"F{lev + 1}_{i}", "butterfly", ("F", lev + 1, i), [f"F{lev}_{min(i, j)}", f"F{lev}_{max(i, j)}"])
    return G


def pyramid(h: int = 3) -> nx.DiGraph:
    """A pyramid of height ``h``: level ``l`` has ``h + 1 - l`` nodes; ``(h + 1)(h + 2) / 2`` nodes.

    Node ``Y{l}_{j}`` depends on ``Y{l-1}_{j}`` and ``Y{l-1}_{j+1}``.

    Examples
    --------
    >>> pyramid(3).number_of_nodes()
    10
    """
    if h < 1:
        raise ValueError("a pyramid needs h >= 1")
    G = new_dag("pyramid", {"h": h})
    for j in range(h + 1):
        add_node(G, f"Y0_{j}", "input", ("Y", 0, j))
    for lev in range(1, h + 1):
        for j in range(h + 1 - lev):
            add_node(G, f"Y{lev}_{j}", "add", ("Y", lev, j), [f"Y{lev - 1}_{j}", f"Y{lev - 1}_{j + 1}"])
    return G


def stencil(width: int = 4, steps: int = 2) -> nx.DiGraph:
    """A 3-point 1-D stencil: ``width`` cells over ``steps`` time steps; ``width (steps + 1)`` nodes.

    Cell ``U{t}_{j}`` depends on ``U{t-1}_{j-1}``, ``U{t-1}_{j}``, ``U{t-1}_{j+1}``
    (those that exist).

    Examples
    --------
    >>> stencil(4, 2).number_of_nodes()
    12
    """
    if width < 1 or steps < 1:
        raise ValueError("a stencil needs width >= 1 and steps >= 1")
    G = new_dag("stencil", {"width": width, "steps": steps})
    for j in range(width):
        add_node(G, f"U0_{j}", "input", ("U", 0, j))
    for t in range(1, steps + 1):
        for j in range(width):
            preds = [f"U{t - 1}_{i}" for i in (j - 1, j, j + 1) if 0 <= i < width]
            add_node(G, f"U{t}_{j}", "stencil", ("U", t, j), preds)
    return G


def random_layered(layers: int = 3, width: int = 3, indeg: int = 2, seed: int = 0) -> nx.DiGraph:
    """A seeded random layered DAG: ``layers * width`` nodes.

    Each node of layer ``l >= 1`` draws between 1 and ``indeg`` distinct
    predecessors from layer ``l - 1``.

    Examples
    --------
    >>> random_layered(3, 4, 2, seed=1).number_of_nodes()
    12
    """
    if layers < 1 or width < 1 or indeg < 1:
        raise ValueError("random-layered needs layers, width, indeg >= 1")
    rng = random.Random(seed)
    G = new_dag("random-layered", {"layers": layers, "width": width, "indeg": indeg, "seed": seed})
    for j in range(width):
        add_node(G, f"L0_{j}", "input", ("L", 0, j))
    for lev in range(1, layers):
        for j in range(width):
            k = rng.randint(1, min(indeg, width))
            preds = sorted(rng.sample(range(width), k))
            add_node(G, f"L{lev}_{j}", "op", ("L", lev, j), [f"L{lev - 1}_{i}" for i in preds])
    return G


def random_dag(n: int = 6, p: float = 0.4, indeg: int = 2, seed: int = 0) -> nx.DiGraph:
    """A seeded random DAG on ``n`` nodes ``v0..v{n-1}``; ``n`` nodes.

    Each pair ``i < j`` is an edge with probability ``p``, keeping at most
    ``indeg`` predecessors per node (the first drawn). Isolated nodes may occur.

    Examples
    --------
    >>> random_dag(7, seed=3).number_of_nodes()
    7
    """
    if n < 1 or indeg < 1 or not 0 <= p <= 1:
        raise ValueError("random-dag needs n >= 1, indeg >= 1 and 0 <= p <= 1")
    rng = random.Random(seed)
    G = new_dag("random-dag", {"n": n, "p": p, "indeg": indeg, "seed": seed})
    for j in range(n):
        cands = [i for i in range(j) if rng.random() < p]
        rng.shuffle(cands)
        preds = sorted(cands[:indeg])
        add_node(G, f"v{j}", "op", ("v", j), [f"v{i}" for i in preds])
    for v in G:
        if G.in_degree(v) == 0:
            G.nodes[v]["op"] = "input"
    return G


# Node counts in closed form, called by the registry's size guard with every
# parameter (defaults filled in) before a builder runs: ``builder.node_count``.


def _fft_count(k, **_):
    if k > FFT_MAX_K:
        raise ValueError(f"fft needs k <= {FFT_MAX_K} (2**k points), got k={k}")
    return (k + 1) << max(k, 0)


chain.node_count = lambda n, **_: n
reduction.node_count = lambda k, **_: 2 * k - 1
matmul.node_count = lambda a, b, c, sums="binary", **_: (
    a * b + b * c + a * b * c + a * c * (b - 1) - (a * c * max(b - 2, 0) if sums == "node" else 0))
fft.node_count = _fft_count
pyramid.node_count = lambda h, **_: (h + 1) * (h + 2) // 2
stencil.node_count = lambda width, steps, **_: width * (steps + 1)
random_layered.node_count = lambda layers, width, **_: layers * width
random_dag.node_count = lambda n, **_: n
