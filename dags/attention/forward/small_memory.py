"""Attention forward in four red pebbles: each score alone, A written to slow memory, the row sums streamed.

The published tilings need more memory than the smallest M: the square tiling a tile of side 1 and its row sums
(``M >= 6``), FlashAttention and the tiled forward more. :func:`small_memory_forward` is the schedule a red-blue
pebbling at ``M = 4`` leaves room for, and :func:`small_memory_forward_io` its exact I/O. It computes every node
once, so it is a schedule of both standard games.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.forward.steps import (
    FAMILY,
    finish_o,
    finish_r,
    forward_index,
    forward_index_of,
)
from spartition.families.attention.four_pebbles import row_product_chain
from spartition.families.attention.tiling import require_fit

__all__ = ["SMALL_MEMORY_FORWARD", "small_memory_forward", "small_memory_forward_io"]

#: Red pebbles the schedule needs: a product's two operands, the product and the running score.
NEED = 4


def small_memory_forward(G, M: int, variant: str = "oneshot"):
    """Attention forward with four red pebbles: each ``S_ij`` from scratch, ``A`` stored, then the sums streamed.

    Phase 1, row by row and, inner, pair by pair in the row's chain order:
    the products of ``S_ij`` are made from their loaded operands and folded
    in the sum's order; ``A_ij = exp(S_ij)`` is computed and written to
    slow memory. Where ``d <= 2`` the pair's last ``Q`` entry stays red and
    the next pair of the row starts with the product that reads it (the
    first two terms of a chain may be made in either order), so each pair
    but the first of a row loads one operand fewer.

    Phase 2, row by row: ``l_i`` from the stored ``A_i*`` (then ``r_i =
    1 / l_i``, stored); for each value column ``c``: ``T_ic`` from the
    stored ``A_i*`` and ``V_*c``, then ``O_ic = r_i T_ic``, stored.

    At any moment at most four nodes are red: a product, its two operands
    and the running sum it joins (phase 2: the running sum, ``A_ij``,
    ``V_jc`` and their product).

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask and orders).
    M : int
        Fast memory size, at least 4.
    variant : {"oneshot", "recompute"}
        Written into the schedule.

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 4``.

    Notes
    -----
    Exact I/O, dense, ``k = 1`` if ``d <= 2`` else ``0`` (the operand kept):

    ``Q = 2 d n + (2 d - k) n (n - 1) + n^2 + n^2 (2 d + 1) + n (2 d + 1)``

    (phase 1: the operands of each score, ``n^2`` stores of A; phase 2:
    ``d + 1`` loads of each ``A_ij``, one of each ``V_jc`` per row, and per
    row one store of ``r_i``, ``d`` loads of it and ``d`` stores of ``O``).
    At ``d = 2`` that is ``9 n^2 + 6 n``; the square tiling with its side 1
    makes ``9 n^2 + 5 n`` at ``M = 6``, where it keeps ``l_i`` red through
    phase 1 (four pebbles leave no room for it beside a score being made). Masked, with ``z_i`` the allowed
    pairs of row ``i`` and ``Z`` their sum, over the rows with a pair:
    ``sum_i (2 d + (2 d - k)(z_i - 1) + 2 d + 1) + Z (2 d + 2)``.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(4, 2)
    >>> r = replay(G, small_memory_forward(G, 4))
    >>> r.io, small_memory_forward_io(G.graph["params"], 4), r.peak_red
    (168, 168, 4)
    """
    require_fit("small-memory-forward", M, NEED, "a product, its operands and a running sum")
    F = forward_index(G, "small-memory-forward")
    rec = MoveRecorder(M, (), variant)
    for i in range(F.n):
        kept = None
        for j in F.rows[i]:
            kept = _score(rec, F, i, j, kept)
        rec.delete_all([] if kept is None else [f"Q_{i}_{kept}"])
    for i in range(F.n):
        if F.rows[i]:
            _row_sums(rec, F, i)
    return rec.schedule(method="small-memory-forward", io_formula=small_memory_forward_io(G.graph["params"], M))


def _score(rec, F, i, j, kept):
    """``S_ij`` and ``A_ij`` (stored) with the ``Q`` entry of column ``kept`` red; return the column left red."""
    root, kept = row_product_chain(rec, F.fseq, f"S_{i}_{j}", f"QK_{i}_{j}", lambda c: f"Q_{i}_{c}",
                                   lambda c: f"K_{j}_{c}", kept)
    a = f"A_{i}_{j}"
    rec.compute(a)
    rec.delete(root)
    rec.evict(a)
    return kept


def _row_sums(rec, F, i):
    """Phase 2 on row ``i``: ``l_i`` and ``r_i`` from the stored ``A``, then each ``T_ic`` and ``O_ic``."""
    row = F.rows[i]
    for t, j in enumerate(row):
        rec.load(f"A_{i}_{j}")
        if t:
            rec.fold(F.l(i, t), F.l(i, t - 1), f"A_{i}_{j}")
    finish_r(rec, F, i)
    for c in range(F.d):
        for t, j in enumerate(row):
            rec.load_all([f"A_{i}_{j}", f"V_{j}_{c}"])
            prod = f"AV_{i}_{j}_{c}"
            rec.compute(prod)
            rec.delete_all([f"A_{i}_{j}", f"V_{j}_{c}"])
            if t:
                rec.fold(F.t(i, c, t), F.t(i, c, t - 1), prod)
        rec.load(f"r_{i}")
        finish_o(rec, F, i, [c])
        rec.delete(f"r_{i}")


def small_memory_forward_io(params, M: int) -> int:
    """Closed-form I/O of :func:`small_memory_forward` (see its Notes).

    Examples
    --------
    >>> n, d = 32, 2
    >>> small_memory_forward_io({"n": n, "d": d}, 4) == 9 * n * n + 6 * n
    True
    >>> small_memory_forward_io({"n": 8, "d": 4}, 4) == 18 * 64 + 9 * 8
    True
    """
    require_fit("small-memory-forward", M, NEED, "a product, its operands and a running sum")
    F = forward_index_of(params)
    d, k = F.d, 1 if F.d <= 2 else 0
    sizes = [len(r) for r in F.rows if r]
    return sum(2 * d + (2 * d - k) * (z - 1) + 2 * d + 1 for z in sizes) + sum(sizes) * (2 * d + 2)


SMALL_MEMORY_FORWARD = Algorithm(
    name="small-memory-forward",
    families=(FAMILY,),
    generate=small_memory_forward,
    io_formula=small_memory_forward_io,
    min_memory=lambda params: NEED,
    source="spartition: each score in four red pebbles (one Q entry kept between pairs where d <= 2), A written "
           "to slow memory, the row sums streamed; for M = 4 and 5, below the square tiling's 6",
)
