"""The approximate-attention DAG of the polynomial method (Alman & Song; DAG of Papp, Sobczyk & Zouzias).

A degree-``g`` polynomial ``P(x) = sum_l c_l x^l`` replaces ``exp``, so
``P(Q K^T) = U1 U2^T`` with ``r = C(d + g, g)`` columns, one per monomial
(multi-index ``a`` with ``|a| <= g`` over ``d`` variables), and the output
``U1 (U2^T V)`` is computed through the small intermediate ``H = U2^T V``
(docs/definitions.md section 4).

Monomials and columns
---------------------
A monomial is written as its non-decreasing tuple of variable indices,
``x0^2 x2 = (0, 0, 2)``. Its *column index* ``a`` is its position in the
lexicographic order of these tuples (:func:`monomials`): ``a = 0`` is the
constant ``()``, then ``(0,), (0, 0), (0, 0, 0), ..., (0, 1), ...``.
Node names use the column index, whatever the summation order.

The polynomial is the truncated Taylor series of ``exp`` in
``x = q . k / s`` with ``s = sqrt(d)`` (``scaled=True``) or ``s = 1``:
``c_l = 1 / l!``. Expanding ``(q . k)^l`` puts the multinomial coefficient
and ``c_l / s^l`` on the ``U1`` side: ``U1[i, a] = prod_m q_m^{a_m} /
(prod_m a_m! s^{|a|})`` and ``U2[j, a] = prod_m k_m^{a_m}``, so
``U1 U2^T = P(Q K^T)`` exactly and ``c0 = 1``.

Naming of ``approx-attention`` (fixed: the schedule generators rely on it).
Indices: ``i`` query row, ``j`` key row, ``l`` feature, ``c`` value column,
``a`` monomial column (``a >= 1`` unless said).

====================  ======  =====================  ===========================================
node                  op      entry                  value
====================  ======  =====================  ===========================================
``Q_{i}_{l}``         input   ("Q", i, l)            Q[i, l]
``K_{j}_{l}``         input   ("K", j, l)            K[j, l]
``V_{j}_{c}``         input   ("V", j, c)            V[j, c]
``U1_{i}_{a}``        poly    ("U1", i, a)           coef(a) prod_l Q[i, l]^{a_l}
``U2_{j}_{a}``        poly    ("U2", j, a)           prod_l K[j, l]^{a_l}
``R_{j}_{a}_{c}``     mul     ("R", j, a, c)         U2[j, a] V[j, c]
``H_{a}_{c}``         add     ("H", a, c)            sum over j of R_j_a_c (j ascending)
``H_0_{c}``           add     ("H", 0, c)            sum over j of V_j_c
``C0_{c}``            cscale  ("C0", c)              c0 H[0, c]   (shared by all rows)
``P_{i}_{c}_{a}``     mul     ("P", i, c, a)         U1[i, a] H[a, c]
``Out_{i}_{c}``       add     ("Out", i, c)          C0_c + sum over a of P_i_c_a (column order)
====================  ======  =====================  ===========================================

With ``normalize=True`` the outputs are ``O`` instead of ``Out``:

====================  ======  =====================  ===========================================
``W_{a}``             add     ("W", a)               sum over j of U2_j_a (j ascending)
``Dc``                const   ("Dc",)                c0 n (attribute ``value``)
``DP_{i}_{a}``        mul     ("DP", i, a)           U1[i, a] W[a]
``Den_{i}``           add     ("Den", i)             Dc + sum over a of DP_i_a (column order)
``O_{i}_{c}``         div     ("O", i, c)            Out[i, c] / Den[i]   (the outputs)
====================  ======  =====================  ===========================================

``Dc`` is a source, hence an input of the pebble game (one load whenever a
schedule needs it): the game has no constant nodes that cost nothing.

Every sum is built by :func:`spartition.authoring.sums.add_sum` in the parameter
``shape``; the sums over ``a`` (``Out``, ``Den``) run in the column order
given by the parameter ``order`` with the constant term first, the sums over
``j`` in ascending ``j``. A sum of one term is that term (``n = 1``:
``H_a_c`` is ``R_0_a_c``, ``H_0_c`` is ``V_0_c``, ``W_a`` is ``U2_0_a``);
such stand-ins are recorded in the graph attribute ``aliases`` and
:func:`value_node` resolves them.

Column orders (``order``)
-------------------------
``"lex"``
    Column index order.
``"graded"``
    By degree, then lexicographic.
``"grouped-W"`` (also ``"grouped:W"``)
    The order in which the grouped tiles of Key Lemma 3.2 consume the
    columns (:func:`grouped_tiles`): variables cut into groups of
    ``q = W // g`` consecutive indices, one tile per ``g``-subset of groups in
    lexicographic order, each monomial in the first tile that holds all its
    groups, lexicographic inside a tile. ``grouped-g`` (groups of one
    variable) is the order of Lemma 3.3.

Node count (any shape and order), with ``r = C(d + g, g)``::

    3nd + 2n(r - 1) + 3nd(r - 1) + (n - 1) d r + d
      + [normalize] ((n - 1)(r - 1) + 1 + 2n(r - 1) + nd)

References
----------
P. A. Papp, A. Sobczyk, A. N. Zouzias, "Approaching I/O-optimality for
Approximate Attention", Sections 2.2-3 and Figure 1; J. Alman, Z. Song,
"Fast attention requires bounded entries", NeurIPS 2023.
"""

from __future__ import annotations

import math
from functools import lru_cache
from itertools import combinations, combinations_with_replacement

import networkx as nx
import numpy as np

from spartition.authoring.nodes import add_inputs, add_node, paper_params
from spartition.authoring.sums import add_named_sum, check_shape, check_sums, value_node, with_sums
from spartition.families.attention.tiling import ceil_div
from spartition.core.dag import new_dag

__all__ = [
    "approx_attention",
    "approx_node_count",
    "approx_sums_saved",
    "column_order",
    "grouped_tiles",
    "monomials",
    "monomial_coef",
    "paper_params",
    "parse_column_order",
    "reference_output",
    "tau",
    "u_matrices",
    "value_node",
]


def tau(w: int, g: int) -> int:
    """``tau(w) = C(w + g, g)``: the monomials of degree ``<= g`` in ``w`` variables (Definition 2.1).

    Examples
    --------
    >>> tau(2, 2), tau(3, 1), tau(0, 3)
    (6, 4, 1)
    """
    return math.comb(w + g, g)


@lru_cache(maxsize=64)
def _monomials(d: int, g: int) -> tuple:
    out = []
    for deg in range(g + 1):
        out.extend(combinations_with_replacement(range(d), deg))
    return tuple(sorted(out))


def monomials(d: int, g: int) -> list[tuple]:
    """Every monomial of degree ``<= g`` in ``d`` variables, in column-index (lexicographic) order.

    A monomial is its non-decreasing tuple of variable indices; index 0 is the
    constant ``()``. There are ``r = C(d + g, g)`` of them.

    Examples
    --------
    >>> monomials(2, 2)
    [(), (0,), (0, 0), (0, 1), (1,), (1, 1)]
    """
    if d < 1 or g < 0:
        raise ValueError(f"monomials need d >= 1 and g >= 0, got d={d}, g={g}")
    return list(_monomials(d, g))


def monomial_coef(mono, d: int, scaled: bool = True) -> float:
    """The ``U1`` coefficient of a monomial: ``1 / (prod_m a_m! * s^|a|)``, ``s = sqrt(d)`` if scaled.

    It is the Taylor coefficient ``1/|a|!`` times the multinomial
    coefficient ``|a|! / prod a_m!`` times ``s^-|a|``.

    Examples
    --------
    >>> monomial_coef((0, 0, 1), 3, scaled=False)
    0.5
    """
    counts: dict = {}
    for v in mono:
        counts[v] = counts.get(v, 0) + 1
    denom = 1.0
    for k in counts.values():
        denom *= math.factorial(k)
    s = math.sqrt(d) if scaled else 1.0
    return 1.0 / (denom * s ** len(mono))


def parse_column_order(order: str, g: int):
    """Split an order name into ``(kind, W)``: ``("lex", None)``, ``("graded", None)`` or ``("grouped", W)``.

    Raises
    ------
    ValueError
        On an unknown order or a grouped order with ``W < g``.

    Examples
    --------
    >>> parse_column_order("grouped-4", 2), parse_column_order("grouped:4", 2)
    (('grouped', 4), ('grouped', 4))
    """
    if order in ("lex", "graded"):
        return order, None
    for prefix in ("grouped-", "grouped:"):
        if order.startswith(prefix):
            try:
                W = int(order[len(prefix):])
            except ValueError:
                break
            if W < g or W < 1:
                raise ValueError(f"grouped order needs W >= g = {g} (groups of W // g variables), got {order!r}")
            return "grouped", W
    raise ValueError(f"unknown column order {order!r}; expected 'lex', 'graded' or 'grouped-W'")


def grouped_tiles(d: int, g: int, W: int) -> list[tuple]:
    """The aggregation tiles of Key Lemma 3.2 for ``W`` loaded variables per row.

    Variables ``0..d-1`` are cut into ``m = ceil(d / q)`` groups of ``q = W // g``
    consecutive indices (the last may be shorter). A tile is a ``g``-subset of
    the groups, in lexicographic order of sorted group indices (a single tile
    of all groups when ``m <= g``); each non-constant monomial belongs to the
    first tile holding every group it touches, which is its group set padded
    with the smallest groups it does not touch.

    Returns
    -------
    list of (groups, variables, columns)
        Per tile: its group indices, the variables it loads (the union of its
        groups) and the column indices of the monomials assigned to it, in
        column-index order. Tiles are never empty.

    References
    ----------
    Papp, Sobczyk & Zouzias, Appendix A.1 (upper bound of Key Lemma 3.2);
    with ``W = g`` (groups of one variable) the tiles of Lemma 3.3 (Appendix B.2).

    Examples
    --------
    >>> [(t[0], t[2]) for t in grouped_tiles(3, 2, 2)]
    [((0, 1), [1, 2, 3, 5, 6]), ((0, 2), [4, 8, 9]), ((1, 2), [7])]
    """
    q = max(W // g, 1) if g > 0 else d
    m = ceil_div(d, q)
    groups = [list(range(k * q, min((k + 1) * q, d))) for k in range(m)]
    if m <= g:
        subsets = [tuple(range(m))]
    else:
        subsets = list(combinations(range(m), g))
    position = {s: t for t, s in enumerate(subsets)}
    cols: list[list[int]] = [[] for _ in subsets]
    for a, mono in enumerate(monomials(d, g)):
        if a == 0:
            continue
        touched = sorted({v // q for v in mono})
        if m <= g:
            key = subsets[0]
        else:
            pad = [k for k in range(m) if k not in touched][: g - len(touched)]
            key = tuple(sorted(touched + pad))
        cols[position[key]].append(a)
    return [(s, [v for k in s for v in groups[k]], c) for s, c in zip(subsets, cols)]


def column_order(d: int, g: int, order: str = "lex") -> list[int]:
    """The non-constant column indices in the summation order ``order`` (module docstring).

    Examples
    --------
    >>> column_order(2, 2), column_order(2, 2, "graded")
    ([1, 2, 3, 4, 5], [1, 4, 2, 3, 5])
    >>> column_order(3, 2, "grouped-2")
    [1, 2, 3, 5, 6, 4, 8, 9, 7]
    """
    kind, W = parse_column_order(order, g)
    mons = monomials(d, g)
    if kind == "lex":
        return list(range(1, len(mons)))
    if kind == "graded":
        return sorted(range(1, len(mons)), key=lambda a: (len(mons[a]), mons[a]))
    return [a for _, _, cols in grouped_tiles(d, g, W) for a in cols]


def approx_node_count(n: int, d: int, g: int, normalize: bool = False) -> int:
    """Nodes of ``approx-attention`` (any shape and order), from the closed form of the module docstring.

    Examples
    --------
    >>> approx_node_count(1, 1, 1), approx_attention(1, 1, 1).number_of_nodes()
    (9, 9)
    >>> approx_node_count(3, 2, 2, True), approx_attention(3, 2, 2, normalize=True).number_of_nodes()
    (211, 211)
    """
    r = tau(d, g)
    count = 3 * n * d + 2 * n * (r - 1) + 3 * n * d * (r - 1) + (n - 1) * d * r + d
    if normalize:
        count += (n - 1) * (r - 1) + 1 + 2 * n * (r - 1) + n * d
    return count


def approx_sums_saved(n: int, d: int, g: int, normalize: bool = False) -> int:
    """Nodes ``approx-attention`` loses with ``sums="node"``, ``r = tau(d, g)``.

    ``d r max(n-2, 0) + n d max(r-2, 0)``: the dr sums ``H_a_c`` over the n
    keys and the nd sums ``Out_i_c`` of ``C0_c`` and r - 1 products; with
    ``normalize`` also ``(r-1) max(n-2, 0) + n max(r-2, 0)`` (``W_a`` and
    ``Den_i``). See :func:`spartition.authoring.sums.sums_saved`.

    Examples
    --------
    >>> approx_sums_saved(4, 4, 2), approx_node_count(4, 4, 2) - approx_attention(4, 4, 2, sums="node").number_of_nodes()
    (328, 328)
    """
    r = tau(d, g)
    saved = d * r * max(n - 2, 0) + n * d * max(r - 2, 0)
    if normalize:
        saved += (r - 1) * max(n - 2, 0) + n * max(r - 2, 0)
    return saved


def approx_attention(
    n: int = 2,
    d: int = 2,
    g: int = 2,
    normalize: bool = False,
    order: str = "lex",
    shape: str = "chain",
    scaled: bool = True,
    sums: str = "binary",
) -> nx.DiGraph:
    """The approximate-attention CDAG ``U1 (U2^T V)`` of degree ``g`` (docs/definitions.md section 4).

    Parameters
    ----------
    n, d : int
        Sequence length and head dimension (``>= 1``).
    g : int
        Polynomial degree (``>= 1``).
    normalize : bool
        Divide each output row by ``Den_i = c0 n + sum_a U1[i, a] W[a]``
        (the outputs are then ``O_i_c``; otherwise ``Out_i_c``).
    order : str
        Order of the monomial columns in the sums ``Out`` and ``Den``:
        ``"lex"``, ``"graded"`` or ``"grouped-W"`` (module docstring). A
        schedule generator that consumes the columns in tiles needs the DAG
        built in its order (paper Appendix A.3).
    shape : {"chain", "tree"}
        Shape of every sum.
    scaled : bool
        Approximate ``exp(q . k / sqrt(d))`` (True) or ``exp(q . k)``.
    sums : {"binary", "node"}
        ``node``: every sum (``H``, ``Out``, ``W``, ``Den``) one node whose
        in-edges are its terms, free of the column order the tree fixes
        (:func:`spartition.authoring.sums.with_sums`, for the partial game);
        :func:`approx_sums_saved` nodes fewer.

    Returns
    -------
    networkx.DiGraph
        The CDAG with :func:`approx_node_count` nodes; graph attributes
        ``family``, ``params``, ``paper`` (:func:`paper_params`), ``aliases``
        (:func:`value_node`), ``columns`` (the column order) and ``c0``.

    Raises
    ------
    ValueError
        On ``n, d, g < 1``, an unknown shape or order.

    Examples
    --------
    >>> G = approx_attention(2, 2, 1)
    >>> G.number_of_nodes(), sorted(v for v in G if G.out_degree(v) == 0)
    (52, ['Out_0_0', 'Out_0_1', 'Out_1_0', 'Out_1_1'])
    >>> G.nodes["U1_0_1"]["op"], G.nodes["U1_0_1"]["entry"], list(G.predecessors("U1_0_1"))
    ('poly', ('U1', 0, 1), ['Q_0_0'])

    References
    ----------
    Papp, Sobczyk & Zouzias, Section 2.2 and Figure 1.
    """
    if n < 1 or d < 1 or g < 1:
        raise ValueError(f"approx-attention needs n, d, g >= 1, got n={n}, d={d}, g={g}")
    check_shape(shape)
    check_sums(sums)
    cols = column_order(d, g, order)
    mons = monomials(d, g)
    r = len(mons)
    params = {"n": n, "d": d, "g": g, "normalize": normalize, "order": order, "shape": shape, "scaled": scaled}
    G = new_dag("approx-attention", params)
    G.graph["aliases"] = {}
    G.graph["paper"] = {"n": n, "d": d, "g": g, "r": r, "Z_input": 3 * n * d}
    G.graph["columns"] = list(cols)
    c0 = 1.0
    G.graph["c0"] = c0
    for T in ("Q", "K", "V"):
        add_inputs(G, T, n, d)
    _key_side(G, n, d, mons, normalize, shape, c0)
    for i in range(n):
        _query_row(G, i, d, mons, cols, normalize, shape, scaled)
    return with_sums(G, sums)


def _poly(G, name, entry, tensor, i, mono, coef):
    """The node ``coef`` times the monomial ``mono`` of row ``i`` of ``tensor``."""
    vars_ = sorted(set(mono))
    args = [f"{tensor}_{i}_{v}" for v in vars_]
    powers = [mono.count(v) for v in vars_]
    return add_node(G, name, "poly", entry, args, args=args, powers=powers, coef=coef)


def _key_side(G, n, d, mons, normalize, shape, c0):
    """``U2``, then ``H = U2^T V`` with ``C0 = c0 H_0`` (and ``W = U2^T 1`` and the constant ``Dc`` if normalized)."""
    r = len(mons)
    for j in range(n):
        for a in range(1, r):
            _poly(G, f"U2_{j}_{a}", ("U2", j, a), "K", j, mons[a], 1.0)
    # column 0 is the constant monomial: H_0 is a plain sum of V, no U2 column
    for c in range(d):
        add_named_sum(G, [f"V_{j}_{c}" for j in range(n)], f"H_0_{c}", ("H", 0, c), shape)
        add_node(G, f"C0_{c}", "cscale", ("C0", c), [value_node(G, f"H_0_{c}")], coef=c0)
    for a in range(1, r):
        for c in range(d):
            terms = [add_node(G, f"R_{j}_{a}_{c}", "mul", ("R", j, a, c), [f"U2_{j}_{a}", f"V_{j}_{c}"]) for j in range(n)]
            add_named_sum(G, terms, f"H_{a}_{c}", ("H", a, c), shape)
        if normalize:
            add_named_sum(G, [f"U2_{j}_{a}" for j in range(n)], f"W_{a}", ("W", a), shape)
    if normalize:
        add_node(G, "Dc", "const", ("Dc",), value=c0 * n)


def _query_row(G, i, d, mons, cols, normalize, shape, scaled):
    """Row ``i`` of ``U1``, then ``Out_i = c0 H_0 + U1_i H`` in the column order (and ``Den_i``, ``O_i = Out_i / Den_i``)."""
    for a in range(1, len(mons)):
        _poly(G, f"U1_{i}_{a}", ("U1", i, a), "Q", i, mons[a], monomial_coef(mons[a], d, scaled))
    for c in range(d):
        terms = [f"C0_{c}"]
        for a in cols:
            terms.append(add_node(G, f"P_{i}_{c}_{a}", "mul", ("P", i, c, a), [f"U1_{i}_{a}", value_node(G, f"H_{a}_{c}")]))
        add_named_sum(G, terms, f"Out_{i}_{c}", ("Out", i, c), shape)
    if normalize:
        terms = ["Dc"] + [
            add_node(G, f"DP_{i}_{a}", "mul", ("DP", i, a), [f"U1_{i}_{a}", value_node(G, f"W_{a}")]) for a in cols
        ]
        add_named_sum(G, terms, f"Den_{i}", ("Den", i), shape)
        for c in range(d):
            num, den = f"Out_{i}_{c}", f"Den_{i}"
            add_node(G, f"O_{i}_{c}", "div", ("O", i, c), [num, den], args=[num, den])


def u_matrices(Q, K, g: int, scaled: bool = True):
    """``U1`` and ``U2`` (``n x r``, columns in column-index order) built directly in numpy.

    ``U1 @ U2.T`` equals the truncated Taylor polynomial of ``exp`` applied
    entrywise to ``Q K^T / sqrt(d)`` (or ``Q K^T``).

    Examples
    --------
    >>> import numpy as np
    >>> Q = np.array([[0.3, -0.2]]); K = np.array([[0.1, 0.4]])
    >>> U1, U2 = u_matrices(Q, K, 3, scaled=False)
    >>> x = float((Q @ K.T)[0, 0]); bool(np.isclose((U1 @ U2.T)[0, 0], 1 + x + x**2 / 2 + x**3 / 6))
    True
    """
    Q, K = np.asarray(Q, dtype=float), np.asarray(K, dtype=float)
    d = Q.shape[1]
    mons = monomials(d, g)
    U1 = np.empty((Q.shape[0], len(mons)))
    U2 = np.empty((K.shape[0], len(mons)))
    for a, mono in enumerate(mons):
        idx = list(mono)
        U1[:, a] = monomial_coef(mono, d, scaled) * np.prod(Q[:, idx], axis=1)
        U2[:, a] = np.prod(K[:, idx], axis=1)
    return U1, U2


def reference_output(Q, K, V, g: int, normalize: bool = False, scaled: bool = True):
    """``U1 (U2^T V)`` (optionally divided by ``U1 (U2^T 1)``) computed directly in numpy.

    Examples
    --------
    >>> import numpy as np
    >>> Q = K = np.zeros((2, 1)); V = np.array([[1.0], [3.0]])
    >>> reference_output(Q, K, V, 2).tolist(), reference_output(Q, K, V, 2, normalize=True).tolist()
    ([[4.0], [4.0]], [[2.0], [2.0]])
    """
    U1, U2 = u_matrices(Q, K, g, scaled)
    out = U1 @ (U2.T @ np.asarray(V, dtype=float))
    if normalize:
        out = out / (U1 @ U2.sum(axis=0))[:, None]
    return out


def _approx_count(n, d, g, normalize, sums="binary", **_):
    if n < 1 or d < 1 or g < 1:
        raise ValueError(f"approx-attention needs n, d, g >= 1, got n={n}, d={d}, g={g}")
    return approx_node_count(n, d, g, normalize) - (approx_sums_saved(n, d, g, normalize) if sums == "node" else 0)


#: Called by the registry's size guard before building (closed form, any shape and order).
approx_attention.node_count = _approx_count
