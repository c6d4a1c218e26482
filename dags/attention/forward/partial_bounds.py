"""Dense attention forward's segment count in the partial-computation game, over the marked A V product edges.

The counts of :mod:`~spartition.families.attention.forward.bounds` and
:mod:`~spartition.families.attention.forward.recompute_bounds` count compute
events of whole nodes; in the partial game (docs/definitions.md section 2.1)
a sum is aggregated one edge at a time, so they do not carry over. This
count counts *edges*: each product ``AV_i_j_c`` has one out-edge, into the
sum of ``T_i_c``, and the one-shot partial game marks each edge once. It is
the matrix product's partial count
(:func:`~spartition.families.classic.partial_bounds.matmul_partial_capacity`)
for ``A V``, where the entries of ``A`` are not inputs: a segment reads an
``A_ij`` it holds from before or loads (charged), or one it builds, which
needs a node of ``A_ij``'s score tree charged or the whole rows ``Q_i`` and
``K_j`` read (the same closure as the standard game's ``A V`` count,
:func:`~spartition.families.attention.forward.recompute_bounds.forward_recompute_av_capacity`).

References
----------
A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
the red-blue pebble game", SPAA 2025, arXiv:2506.10854: the game, and the
statement that FlashAttention keeps its standard-game bound there.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.common.papers import SEGMENTS
from spartition.families.attention.partial_charges import FORWARD_AV, product_edge_charges
from spartition.families.common.partial_segments import partial_budgets
from spartition.families.common.segments import SegmentBound, capped_shared_bound
from spartition.study.formulas import Formula

__all__ = ["FORWARD_PARTIAL_FORMULA", "forward_partial_bound", "forward_partial_capacity", "forward_partial_charges",
           "partial_lower", "partial_regime", "partial_searched"]


@lru_cache(maxsize=1 << 14)
def forward_partial_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most ``A V`` product edges one segment of the partial game marks, on dense attention forward.

    Parameters
    ----------
    n, d : int
        Sequence length and head dimension.
    T : int
        A bound on ``|B'|``: the segment's red pebbles at its start, loads,
        saves and non-inputs red at its end
        (:func:`~spartition.families.common.partial_segments.partial_budgets`).
    L : int
        A bound on the nodes red at its start or loaded.

    Returns
    -------
    int
        ``H(T, L) = max min(n t, p + min(sqrt(x v t), x v, d x, n v))``,
        ``x = min(n^2, c + r q)``, over integers ``0 <= r, q <= n``,
        ``c, p >= 0``, ``0 <= v, t <= n d`` with ``d (r + q) + c + v + p <= L``
        and ``d (r + q) + c + v + p + t <= T``; 0 if no point is feasible.

    Notes
    -----
    **Proof.** Fix a valid schedule of the partial game on dense
    ``attention-forward(n, d)``, its sums built as one node each or as binary
    trees of any shape and order, cut into segments; fix a segment
    ``sigma`` with ``B' =`` (red at its start) + (loaded) + (saved) +
    (non-inputs red at its end, none for the segment that ends the
    schedule). Count the edges ``(AV_i_j_c, w)`` marked in ``sigma``
    (``w`` in the sum of ``T_i_c``); each ``A V`` product has one out-edge,
    marked once, so ``n^2 d`` in all.

    1. *Products.* When ``(AV_i_j_c, w)`` is marked, the product is complete
       and red; its red pebble in ``sigma`` goes back to the start, a load,
       or a fresh start, legal only while none of its in-edges is marked:
       then ``(A_ij, AV_i_j_c)`` and ``(V_jc, AV_i_j_c)`` are marked in
       ``sigma`` with ``A_ij`` and ``V_jc`` red. ``V_jc``, an input, was red
       at the start or loaded. ``p`` counts the products of the first kind,
       ``v`` the entries of ``V`` the fresh ones read.
    2. *Which A_ij a segment can read.* Call ``(i, j)`` *charged* if a node
       of its score tree (the products ``QK_i_j_l``, the adds of ``S_ij``,
       ``S_ij``) or ``A_ij`` was red at the start of ``sigma`` or loaded.
       If a node ``u`` of that tree is complete and red at a time in
       ``sigma``, then ``(i, j)`` is charged or every ``QK_i_j_l`` started
       fresh in ``sigma``, with ``Q_il`` and ``K_jl`` red at the start or
       loaded. By induction on the tree: ``u``'s red pebble goes back to the
       start or a load (charged), or to a fresh start in ``sigma``, after
       which all its in-edges are marked in ``sigma`` while ``u`` is red,
       each from a complete red predecessor: an input ``Q_il`` or ``K_jl``
       (red at the start or loaded), or a node of the tree (the induction).
       ``A_ij`` has one in-edge, from ``S_ij``. So the ``A_ij`` read by fresh
       products number at most ``x = min(n^2, c + r q)``, with ``c`` charged
       pairs and ``r`` (``q``) rows of ``Q`` (``K``) red at the start or
       loaded in full: ``d (r + q)`` inputs.
    3. *Touched sums meet* ``B'``. The tree of ``T_i_c``: its products, the
       adds of its sum, ``T_ic`` and the edge ``(T_ic, O_ic)`` (the edge
       from ``r_i`` is not in it). If every edge of it is marked in
       ``sigma``, ``O_ic`` is dark after ``(T_ic, O_ic)``; an output deleted
       dark never becomes blue again, so ``O_ic`` is saved in ``sigma`` or
       red at its end. Otherwise a node ``w`` has one tree edge marked in
       ``sigma`` and one outside (the tree is connected); products and
       ``O_ic`` have one tree edge, so ``w`` is an add or ``T_ic``: an
       in-edge marked before ``sigma`` forbids a fresh start (``w`` was red
       at the start or loaded); an edge after one in ``sigma`` needs ``w``
       kept, dark with its out-edge unmarked (saved in ``sigma`` or red at
       its end). With ``t`` touched trees, each has a node in ``B'`` that is
       no input, product, or node of a score tree.
    4. *Counting.* The nodes of steps 1-3 are distinct:
       ``d (r + q) + c + v + p <= L`` (red at the start or loaded) and
       ``+ t <= |B'| <= T``. The fresh products lie in ``{(i, j, c): A_ij
       read, V_jc read, T_ic touched}``: at most ``sqrt(x v t)``
       (Loomis-Whitney), ``x v``, ``d x`` and ``n v``; the others at most
       ``p``; every edge counted enters a touched tree, ``n`` per tree.

    The count depends on ``(r, q, c)`` only through ``x`` and the budget
    ``u = d (r + q) + c``, and on ``(u, v)`` through ``u + v`` and the best
    Loomis-Whitney term at that sum; both are tabulated once per ``(n, d)``
    (``r q`` at most ``floor(k/2) ceil(k/2)`` for ``k = r + q``).

    Examples
    --------
    ``n = 2, d = 1``, ``T = 7, L = 4``: four products held (``p = 4``) into
    two touched sums give ``min(2 * 2, 4) = 4``:

    >>> forward_partial_capacity(2, 1, 7, 4)
    4
    """
    if T < 0 or L < 0:
        return 0
    lw = _loomis_whitney(n, d, 1 << max(0, L).bit_length())[: L + 1, : min(n * d, T) + 1]
    s = np.arange(L + 1)[:, None]
    t = np.arange(lw.shape[1])[None, :]
    p = np.minimum(L - s, T - s - t)  # the objective grows with p: the most the budgets allow
    ok = p >= 0
    if not ok.any():
        return 0
    value = np.minimum(n * t, p + lw)
    return max(0, math.floor(float(value[ok].max()) + 1e-9))


@lru_cache(maxsize=64)
def _loomis_whitney(n: int, d: int, reads: int) -> np.ndarray:
    """``[s, t] -> max over u + v = s`` of ``min(sqrt(x v t), x v, d x, n v)``, ``x = X(u)``, ``v <= n d``."""
    ks = np.arange(0, 2 * n + 1)
    rq = (ks // 2) * (ks - ks // 2)
    X = np.array([float(np.minimum(n * n, u - d * ks[: min(2 * n, u // d) + 1]
                                   + rq[: min(2 * n, u // d) + 1]).max()) for u in range(reads + 1)])
    t = np.arange(n * d + 1)[None, :]
    table = np.zeros((reads + 1, n * d + 1))
    for s in range(reads + 1):
        x = X[: s + 1][:, None]
        v = np.minimum(s - np.arange(s + 1), n * d)[:, None]
        table[s] = np.minimum.reduce([np.sqrt(x * v * t), x * v + 0.0 * t, d * x + 0.0 * t,
                                      n * v + 0.0 * t]).max(axis=0)
    return table


@lru_cache(maxsize=256)
def forward_partial_bound(n: int, d: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)`` from :func:`forward_partial_capacity`: a lower bound of the partial game.

    **Proof.** As :func:`~spartition.families.classic.partial_bounds.matmul_partial_bound`:
    cut any valid partial-game schedule after every ``S``-th load or save,
    ``Q >= S (h - 1)``; the ``n^2 d`` product edges, each marked once, are at
    most the sum of the segments' counts at their budgets, so ``h`` is at
    least :func:`~spartition.families.common.segments.shared_segments_needed`
    of them. Any ``S`` gives a valid bound.

    Examples
    --------
    >>> b = forward_partial_bound(32, 2, 8)
    >>> b.value, b.value == b.S * (b.segments - 1), b.value > 4 * 32 * 2  # above the trivial 4 n d
    (1062, True, True)
    """
    W = n * n * d
    return capped_shared_bound(W, M, 4 * (W + 4 * n * d + M), lambda TL: forward_partial_capacity(n, d, *TL),
                               "AV-edges", budgets=partial_budgets)


def forward_partial_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` loads and saves: the quantities :func:`forward_partial_capacity`'s proof bounds.

    For the tests, on any valid partial-game schedule of dense
    ``attention-forward`` (either build of its sums):
    :func:`~spartition.families.attention.partial_charges.product_edge_charges`
    of the ``A V`` products.
    """
    return product_edge_charges(G, schedule, S, FORWARD_AV)


def partial_searched(n: int, d: int, M: int) -> bool:
    """Whether the formulas evaluate the count: ``M d <= 1024`` (a compute cap, never validity).

    Its table takes about ``(5 M)^2 n d / 2`` steps: 10 s at ``n = 128, d = 8, M = 128``, and the sandwich of
    ``n = 64, d = 16`` at ``M = 1000`` would not end.

    >>> partial_searched(128, 8, 128), partial_searched(64, 16, 1000)
    (True, False)
    """
    return M * d <= 1024


def partial_regime(p, M) -> bool:
    """Dense, ``2 <= M <= n d``, and searched (:func:`partial_searched`): where the partial formulas evaluate."""
    return (p.get("Z_QK") in (None, p["n"] * p["n"]) and 2 <= M <= p["n"] * p["d"]
            and partial_searched(p["n"], p["d"], M))


def partial_lower(bound):
    """``(p, M) -> bound(n, d, M).value`` in :func:`partial_regime`, else nan: a partial formula's value."""
    def value(p, M):
        # outside the regime (masked, M < 2, a whole input matrix red, or above the compute cap) the value is nan
        if not partial_regime(p, M):
            return math.nan
        return float(bound(p["n"], p["d"], M).value)

    return value


#: Dense attention forward's segment bound of the partial game (registered with the family's bounds).
FORWARD_PARTIAL_FORMULA = Formula(
    name="segment-forward-partial-lower",
    families=("attention-forward",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the n^2 d A V product edges marked per segment, proved in "
          "spartition.families.attention.forward.partial_bounds.forward_partial_capacity",
    constants="explicit",
    regime="dense, the partial game, sums as one node or binary trees of any shape and order, 2 <= M <= n d, "
"M d <= 1024",
    func=partial_lower(forward_partial_bound),
    holds=partial_regime,
    detail=(("H(T, L)", "max min(n t, p + min(sqrt(x v t), x v, d x, n v)), x = min(n^2, c + r q), over "
                        "d (r + q) + c + v + p <= L, + t <= T: r, q rows of Q, K held or loaded in full, c charged "
                        "pairs, v entries of V read, p products held from before or loaded, t sums of T touched"),
            ("h(S)", "the fewest segments whose counts reach n^2 d, with T = M + S + b', L = M + S (b' red "
                     "non-inputs at a segment's end, shared with the next)")),
    variants=("partial",),
)
