"""Constraints of the class-capacity model that never change U: symmetry breaking and product-layer cuts.

Both are optional steps on the one-set model of
:mod:`spartition.partition.encoding` (``(model, cdag, sv, w, ...)``), each
valid for the maximisation (the proofs are in the Notes): symmetry breaking
orders the weights of blocks whose exchange is a checked automorphism
(:func:`add_set_symmetry`), and the product-layer cuts state a consequence
of P2 that the LP relaxation does not see (:func:`add_product_layer_cuts`).
"""

from __future__ import annotations

import numpy as np

from spartition.core.dag import CompactDAG
from spartition.errors import SpartitionError
from spartition.partition.encoding import SetVars

__all__ = ["add_product_layer_cuts", "add_set_symmetry", "check_block_swap", "product_layers"]


def check_block_swap(cdag: CompactDAG, w: np.ndarray, a: list, b: list) -> str | None:
    """Why swapping blocks ``a`` and ``b`` is not a weight-preserving automorphism, or None if it is.

    Parameters
    ----------
    cdag : CompactDAG
    w : numpy.ndarray
        Node weights.
    a, b : list of int
        Equally long node index lists, aligned position by position.

    Returns
    -------
    str or None
        The first failure (overlap, a weight, an edge without image, an
        input mapped to a non-input), or None.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import fft
    >>> c = compact(fft(1))
    >>> check_block_swap(c, np.ones(4), [0, 2], [1, 3]), check_block_swap(c, np.ones(4), [0], [2])
    (None, 'edge F0_1 -> F1_0 has no image')
    """
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


def add_set_symmetry(model, cdag: CompactDAG, sv: SetVars, w: np.ndarray, blocks) -> int:
    """Symmetry breaking: the set's weight in block 0 >= block 1 >= ... (returns the blocks used).

    ``blocks`` are equally long, disjoint lists of node indices, aligned so that
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

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    sv : SetVars
        From :func:`~spartition.partition.encoding.add_set`.
    w : numpy.ndarray
        Node weights.
    blocks : list of list of int

    Returns
    -------
    int
        The number of blocks ordered (0 for fewer than two).

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
        why = check_block_swap(cdag, w, blocks[k], blocks[k + 1])
        if why:
            raise SpartitionError(f"swapping symmetry blocks {k} and {k + 1} is not an automorphism: {why}")
    sums = [sum(int(w[v]) * sv.x[v] for v in b if w[v]) for b in blocks]
    for k in range(len(blocks) - 1):
        model.add(sums[k] >= sums[k + 1])
    return len(blocks)


def product_layers(cdag: CompactDAG, w: np.ndarray) -> list:
    """Bipartite components of the "input graph" of weighted two-input products.

    A product here is a weighted node with exactly two predecessors, both
    inputs and distinct. Each product is an edge between its two inputs; the
    function returns, for every connected component that is bipartite and
    has no parallel edges, ``(products, left_inputs, right_inputs)``.

    Parameters
    ----------
    cdag : CompactDAG
    w : numpy.ndarray
        Node weights: only weighted nodes are products.

    Returns
    -------
    list of (list of int, list of int, list of int)
        The layers cut by :func:`add_product_layer_cuts`.

    Examples
    --------
    >>> from spartition.core.dag import compact
    >>> from spartition.families.classic.dag import matmul
    >>> c = compact(matmul(2, 2, 2))
    >>> w = np.array([int(op == "mul") for op in c.ops])
    >>> [(len(p), len(a), len(b)) for p, a, b in product_layers(c, w)]
    [(4, 2, 2), (4, 2, 2)]
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


def add_product_layer_cuts(model, cdag: CompactDAG, sv: SetVars, w: np.ndarray) -> int:
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
    never sees the product; CP-SAT propagates it during the search.

    Parameters
    ----------
    model : cp_model.CpModel
    cdag : CompactDAG
    sv : SetVars
        From :func:`~spartition.partition.encoding.add_set`.
    w : numpy.ndarray
        Node weights (:func:`product_layers`).

    Returns
    -------
    int
        The number of layers cut.
    """
    layers = product_layers(cdag, w)
    for k, (prods, left, right) in enumerate(layers):
        a = model.new_int_var(0, len(left), f"layer_{k}_L")
        b = model.new_int_var(0, len(right), f"layer_{k}_R")
        ab = model.new_int_var(0, len(left) * len(right), f"layer_{k}_LR")
        model.add(a == sum(sv.d[u] for u in left))
        model.add(b == sum(sv.d[u] for u in right))
        model.add_multiplication_equality(ab, [a, b])
        model.add(sum(sv.x[p] for p in prods) - sum(sv.d[p] for p in prods) <= ab)
    return len(layers)
