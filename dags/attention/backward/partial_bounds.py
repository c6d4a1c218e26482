"""The FlashAttention backward pass's segment count in the partial-computation game, over the ``P dO`` product edges.

``dV = P^T dO`` is, for the partial game, the forward pass's ``T = A V`` with
``P`` for ``A`` and ``dO`` for ``V``: each product ``PdO_i_j_c`` has one
out-edge, into the sum of the output ``dV_jc``, and ``P_ij`` is built from
the rows ``Q_i`` and ``K_j`` (and the input ``l_i``). The count is
:func:`~spartition.families.attention.forward.partial_bounds.forward_partial_capacity`'s
program, proven again here for these nodes.
"""

from __future__ import annotations

from functools import lru_cache

from spartition.families.attention.forward.partial_bounds import (
    forward_partial_bound,
    forward_partial_capacity,
    partial_lower,
    partial_regime,
)
from spartition.families.attention.partial_charges import BACKWARD_PDO, product_edge_charges
from spartition.families.common.papers import SEGMENTS
from spartition.families.common.segments import SegmentBound
from spartition.study.formulas import Formula

__all__ = ["BACKWARD_PARTIAL_FORMULA", "backward_partial_bound", "backward_partial_capacity",
           "backward_partial_charges"]


def backward_partial_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most ``P dO`` product edges one segment of the partial game marks, on dense ``attention-backward-flash``.

    Returns
    -------
    int
        :func:`~spartition.families.attention.forward.partial_bounds.forward_partial_capacity`
        ``(n, d, T, L)``: ``max min(n t, p + min(sqrt(x v t), x v, d x, n v))``,
        ``x = min(n^2, c + r q)``, over ``d (r + q) + c + v + p <= L`` and
        ``+ t <= T``.

    Notes
    -----
    **Proof.** That of ``forward_partial_capacity``, node for node: the
    counted edges are ``(PdO_i_j_c, w)``, ``w`` in the sum of ``dV_jc``
    (``n^2 d`` of them, each marked once).

    1. A product whose edge is marked is held from before or loaded (``p``),
       or started fresh in the segment, reading ``P_ij`` and the input
       ``dO_ic`` (``v`` entries read, red at the start or loaded).
    2. ``(i, j)`` is *charged* if a node of ``P_ij``'s tree (``QK_i_j_l``,
       the adds of ``S_ij``, ``S_ij``, ``A_ij``, ``P_ij``) was red at the
       start or loaded. A node of the tree complete and red in the segment
       has its pair charged or every ``QK_i_j_l`` started fresh there, with
       ``Q_il`` and ``K_jl`` red at the start or loaded: the induction of
       the forward proof, where ``P_ij``'s other in-edge comes from the
       input ``l_i`` (red at the start or loaded, not counted). So the
       ``P_ij`` that fresh products read number at most ``x = min(n^2,
       c + r q)``, ``d (r + q)`` entries of ``Q`` and ``K`` read in full.
    3. The tree of ``dV_jc`` (its products, its adds, ``dV_jc``): if every
       edge of it is marked in the segment, the output ``dV_jc`` is dark
       after its last aggregation and is saved there or red at the end (a
       deleted dark output never becomes blue); otherwise an add or
       ``dV_jc`` has a tree edge in the segment and one outside, and is
       red at the start or loaded (an earlier in-edge forbids a fresh start)
       or saved or red at the end (a later edge needs it kept). ``t``
       touched trees, each with such a node in ``B'``.
    4. The nodes of steps 1-3 are distinct: ``d (r + q) + c + v + p <= L``,
       ``+ t <= T``; the fresh products lie in ``{(i, j, c): P_ij read,
       dO_ic read, dV_jc touched}``, at most ``sqrt(x v t)``, ``x v``,
       ``d x`` and ``n v``; every counted edge enters a touched tree, ``n``
       per tree (the sum over ``i``).

    Examples
    --------
    >>> backward_partial_capacity(2, 1, 7, 4)
    4
    """
    return forward_partial_capacity(n, d, T, L)


@lru_cache(maxsize=256)
def backward_partial_bound(n: int, d: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)`` from :func:`backward_partial_capacity`: a lower bound of the partial game.

    The same program and segment argument as the forward pass's, so the
    same value (:func:`~spartition.families.attention.forward.partial_bounds.forward_partial_bound`),
    proven here for the backward pass's ``n^2 d`` ``P dO`` edges.

    >>> backward_partial_bound(32, 2, 8).value
    1062
    """
    return forward_partial_bound(n, d, M)


def backward_partial_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` loads and saves: the quantities :func:`backward_partial_capacity`'s proof bounds
    (:func:`~spartition.families.attention.partial_charges.product_edge_charges` of the ``P dO`` products)."""
    return product_edge_charges(G, schedule, S, BACKWARD_PDO)


#: The backward pass's segment bound of the partial game (registered with the family's bounds).
BACKWARD_PARTIAL_FORMULA = Formula(
    name="segment-backward-partial-lower",
    families=("attention-backward-flash",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the n^2 d P dO product edges (dV = P^T dO) marked per segment, proved in "
          "spartition.families.attention.backward.partial_bounds.backward_partial_capacity",
    constants="explicit",
    regime="dense, the partial game, sums as one node or binary trees of any shape and order, 2 <= M <= n d, "
"M d <= 1024",
    func=partial_lower(backward_partial_bound),
    holds=partial_regime,
    detail=(("H(T, L)", "segment-forward-partial-lower's, with P for A, dO for V and dV for T"),
            ("h(S)", "the fewest segments whose counts reach n^2 d, with T = M + S + b', L = M + S")),
    variants=("partial",),
)
