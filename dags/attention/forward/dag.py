"""The attention forward DAG (Saha & Ye) with optional sparse masks, and helpers shared by the attention families.

Naming of ``attention-forward`` (fixed: schedule generators rely on it).
Indices: ``i`` query row, ``j`` key row, ``l`` feature, ``c`` value column.

===================  ======  ===================  =====================================
node                 op      entry                value
===================  ======  ===================  =====================================
``Q_{i}_{l}``        input   ("Q", i, l)          Q[i, l]
``K_{j}_{l}``        input   ("K", j, l)          K[j, l]
``V_{j}_{c}``        input   ("V", j, c)          V[j, c]
``QK_{i}_{j}_{l}``   mul     ("QK", i, j, l)      Q[i, l] K[j, l]
``S_{i}_{j}``        add     ("S", i, j)          sum over l of QK_i_j_l
``A_{i}_{j}``        exp     ("A", i, j)          exp(S[i, j])
``l_{i}``            add     ("l", i)             sum over allowed j of A_i_j
``r_{i}``            recip   ("r", i)             1 / l[i]
``AV_{i}_{j}_{c}``   mul     ("AV", i, j, c)      A[i, j] V[j, c]
``T_{i}_{c}``        add     ("T", i, c)          sum over allowed j of AV_i_j_c
``O_{i}_{c}``        scale   ("O", i, c)          r[i] T[i, c]   (the outputs)
===================  ======  ===================  =====================================

Sums are built by :func:`spartition.authoring.sums.add_sum` (chain partial sums
``S_{i}_{j}~t``, tree inner nodes ``S_{i}_{j}~L{level}_{pos}``). A sum of one
term is that term, so with ``d = 1`` the value of ``S_i_j`` is the node
``QK_i_j_0``, and a row with a single allowed ``j`` has ``l_i = A_i_j`` and
``T_i_c = AV_i_j_c``. Such stand-ins are recorded in the graph attribute
``aliases`` (``{"S_0_0": {"node": "QK_0_0_0", "entry": ["S", 0, 0]}}``);
:func:`value_node` resolves a name either way.

Graph attribute ``paper`` holds the parameters the papers' bounds use
(``n, d, r, g, Z_input, Z_QK``); :func:`paper_params` returns them.
"""

from __future__ import annotations

import re

import networkx as nx

from spartition.families.attention.masks import mask_count, mask_pairs, mask_rows, sort_by_order
from spartition.authoring.nodes import add_inputs, add_node, paper_params
from spartition.authoring.sums import add_named_sum, check_shape, check_sums, sums_saved, value_node, with_sums
from spartition.core.dag import new_dag

__all__ = [
    "attention_forward",
    "check_attention_params",
    "forward_node_count",
    "forward_sums_saved",
    "new_attention_dag",
    "paper_params",
    "value_node",
    "parse_order",
]


def parse_order(order: str, k: int, what: str = "order") -> list[int]:
    """A comma-separated permutation of ``range(k)`` (empty: ascending).

    Any non-digit separates numbers, so ``"2-0-1"`` also works where commas
    are taken (``FAMILY:key=value,...`` DAG specs on the command line).

    Raises
    ------
    ValueError
        If ``order`` is not a permutation of ``0..k-1``.

    Examples
    --------
    >>> parse_order("", 3), parse_order("2,0,1", 3), parse_order("1-0", 2)
    ([0, 1, 2], [2, 0, 1], [1, 0])
    """
    perm = [int(x) for x in re.findall(r"\d+", str(order))] if order else list(range(k))
    if sorted(perm) != list(range(k)):
        raise ValueError(f"{what} must be a comma-separated permutation of 0..{k - 1}, got {order!r}")
    return perm


def check_attention_params(n: int, d: int, shape: str) -> None:
    """Raise ``ValueError`` on ``n < 1``, ``d < 1`` or an unknown summation shape (every attention family).

    Examples
    --------
    >>> check_attention_params(0, 2, "chain")
    Traceback (most recent call last):
    ...
    ValueError: attention needs n >= 1 and d >= 1, got n=0, d=2
    """
    if n < 1 or d < 1:
        raise ValueError(f"attention needs n >= 1 and d >= 1, got n={n}, d={d}")
    check_shape(shape)


def new_attention_dag(family: str, params: dict, z_input: int, z_qk: int) -> nx.DiGraph:
    """An empty attention CDAG with the graph attributes every attention family records.

    ``family`` and ``params`` (:func:`spartition.core.dag.new_dag`), an empty
    ``aliases`` (:func:`value_node`) and ``paper`` (:func:`paper_params`:
    ``n, d`` from ``params``, ``r = g = None``, ``Z_input``, ``Z_QK``).

    Examples
    --------
    >>> new_attention_dag("attention-forward", {"n": 2, "d": 1}, 6, 4).graph["paper"]
    {'n': 2, 'd': 1, 'r': None, 'g': None, 'Z_input': 6, 'Z_QK': 4}
    """
    G = new_dag(family, params)
    G.graph["aliases"] = {}
    G.graph["paper"] = {"n": params["n"], "d": params["d"], "r": None, "g": None, "Z_input": z_input, "Z_QK": z_qk}
    return G


def forward_node_count(n: int, d: int, z_qk: int | None = None) -> int:
    """Nodes of ``attention-forward``: ``3nd + 4 Z d + Z`` with ``Z = Z_QK`` (``n**2`` dense).

    Dense this is ``3nd + 4n^2 d + n^2`` for every summation shape and order.

    Examples
    --------
    >>> forward_node_count(2, 3), attention_forward(2, 3).number_of_nodes()
    (70, 70)
    """
    z = n * n if z_qk is None else z_qk
    return 3 * n * d + 4 * z * d + z


def attention_forward(
    n: int = 2,
    d: int = 2,
    shape: str = "chain",
    mask: str = "none",
    window: int = 1,
    block: int = 2,
    density: float = 0.5,
    seed: int = 0,
    order: str = "",
    jorder: str = "",
    sums: str = "binary",
) -> nx.DiGraph:
    """Softmax attention ``O = diag(l)^-1 exp(Q K^T) V`` as a CDAG (docs/definitions.md section 4).

    Parameters
    ----------
    n, d : int
        Sequence length and head dimension (``>= 1``).
    shape : {"chain", "tree"}
        Shape of every sum (S over l; l and T over j).
    mask : {"none", "causal", "window", "block", "random"}
        Sparse-attention mask (:func:`spartition.families.attention.masks.mask_pairs`); only allowed
        ``(i, j)`` get QK, S, A and AV nodes.
    window, block, density, seed
        Mask parameters (see :func:`spartition.families.attention.masks.mask_pairs`).
    order : str
        Comma-separated permutation of ``0..d-1``: the order in which
        ``S_i_j`` sums its products (default ascending).
    jorder : str
        Comma-separated permutation of ``0..n-1``: the order in which
        ``l_i`` and ``T_i_c`` sum over the allowed ``j`` (default ascending).
    sums : {"binary", "node"}
        ``node``: every sum (``S``, ``l``, ``T``) one node whose in-edges are
        its terms (:func:`spartition.authoring.sums.with_sums`, for the
        partial game); :func:`forward_node_count` less
        :func:`forward_sums_saved` nodes.

    Returns
    -------
    networkx.DiGraph
        The CDAG, with ``3nd + 4 Z d + Z`` nodes where ``Z`` is the mask
        size (``3nd + 4n^2 d + n^2`` dense). Graph attributes ``family``,
        ``params``, ``paper`` (:func:`paper_params`), ``aliases``
        (:func:`value_node`).

    Raises
    ------
    ValueError
        On ``n < 1``, ``d < 1``, an unknown shape or mask, or a bad order.

    Notes
    -----
    Naming is fixed in the module docstring. The score sum runs over ``l`` in
    ``order``; the row sum ``l_i`` and the numerators ``T_i_c`` run over the
    allowed ``j`` sorted by ``jorder``.

    Examples
    --------
    >>> G = attention_forward(2, 2)
    >>> G.number_of_nodes(), sorted(v for v in G if G.out_degree(v) == 0)
    (48, ['O_0_0', 'O_0_1', 'O_1_0', 'O_1_1'])
    >>> attention_forward(3, 2, mask="causal").number_of_nodes()
    72
    >>> attention_forward(4, 3, sums="node").number_of_nodes(), forward_node_count(4, 3) - forward_sums_saved(4, 3)
    (196, 196)

    References
    ----------
    Saha & Ye, "I/O Complexity of Attention, or How Optimal is
    FlashAttention?" (ICML 2024), section 2 (the attention CDAG); Li et al.
    (arXiv 2410.09397), section 4 (sparse attention).
    """
    check_attention_params(n, d, shape)
    check_sums(sums)
    lperm = parse_order(order, d, "order")
    jperm = parse_order(jorder, n, "jorder")
    pairs = mask_pairs(n, mask, window, block, density, seed)
    rows = sort_by_order(mask_rows(n, pairs), jperm)
    params = {
        "n": n, "d": d, "shape": shape, "mask": mask, "window": window, "block": block,
        "density": density, "seed": seed, "order": order, "jorder": jorder,
    }
    G = new_attention_dag("attention-forward", params, 3 * n * d, len(pairs))
    for name in ("Q", "K", "V"):
        add_inputs(G, name, n, d)
    for i in range(n):
        for j in rows[i]:
            terms = [add_node(G, f"QK_{i}_{j}_{t}", "mul", ("QK", i, j, t), [f"Q_{i}_{t}", f"K_{j}_{t}"]) for t in lperm]
            s = add_named_sum(G, terms, f"S_{i}_{j}", ("S", i, j), shape)
            add_node(G, f"A_{i}_{j}", "exp", ("A", i, j), [s])
        lsum = add_named_sum(G, [f"A_{i}_{j}" for j in rows[i]], f"l_{i}", ("l", i), shape)
        add_node(G, f"r_{i}", "recip", ("r", i), [lsum])
        for c in range(d):
            terms = [add_node(G, f"AV_{i}_{j}_{c}", "mul", ("AV", i, j, c), [f"A_{i}_{j}", f"V_{j}_{c}"]) for j in rows[i]]
            tsum = add_named_sum(G, terms, f"T_{i}_{c}", ("T", i, c), shape)
            add_node(G, f"O_{i}_{c}", "scale", ("O", i, c), [f"r_{i}", tsum])
    return with_sums(G, sums)


def forward_sums_saved(n: int, d: int, rows=None) -> int:
    """Nodes ``attention-forward`` loses with ``sums="node"``: ``Z max(d-2, 0) + (d+1) sum_i max(r_i - 2, 0)``.

    ``Z`` score sums of d terms, and per row i the sum ``l_i`` and the d sums
    ``T_i_c`` of ``r_i`` terms (``r_i`` the allowed j of row i, ``rows`` its
    list; None: dense, ``r_i = n``); see :func:`spartition.authoring.sums.sums_saved`.

    Examples
    --------
    >>> forward_sums_saved(32, 2), forward_sums_saved(3, 3, [[0], [0, 1], [0, 1, 2]])
    (2880, 10)
    """
    sizes = [n] * n if rows is None else [len(r) for r in rows]
    z = sum(sizes)
    return z * max(d - 2, 0) + (d + 1) * sums_saved(sizes)


def _forward_count(n, d, mask, window, block, density, seed, sums="binary", **_):
    check_attention_params(n, d, "chain")
    count = forward_node_count(n, d, mask_count(n, mask, window, block, density, seed))
    if sums != "node":
        return count
    # the row lengths of a sparse mask are drawn with it: O(Z), the size of the DAG's sums anyway
    rows = None if mask == "none" else mask_rows(n, mask_pairs(n, mask, window, block, density, seed))
    return count - forward_sums_saved(n, d, rows)


#: Called by the registry's size guard before building (closed form, any shape and order).
attention_forward.node_count = _forward_count
