"""Saha & Ye's small-cache attention-forward algorithm as a schedule: square tiles, A written to slow memory.

:func:`square_tiling_forward` tiles S with squares of side ``floor(sqrt(M / 4))`` (:func:`square_tile`), writes A
to slow memory, then runs a tiled ``A V`` with the row scaling; :func:`square_tiling_forward_io` is its exact I/O.

References
----------
Saha & Ye, "I/O Complexity of Attention, or How Optimal is FlashAttention?" (ICML 2024): square tiling for
M < d^2, Theta(min(n^2 d / sqrt(M), n^2 d^2 / M)).
"""

from __future__ import annotations

import math

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.forward.steps import (
    FAMILY,
    a_step,
    finish_o,
    finish_r,
    forward_index,
    forward_index_of,
    mask_counts,
    s_steps,
)
from spartition.families.attention.tiling import (
    block_structure,
    blocks,
    ceil_div,
    chosen_side,
    is_dense,
    require_fit,
    side_space,
)

__all__ = ["SQUARE_TILING_FORWARD", "square_tile", "square_tiling_forward", "square_tiling_forward_io", "square_tiling_space"]


def _square_need(b: int) -> int:
    return 3 * b * b + b + 2


def square_tile(M: int) -> int:
    """Tile side of :func:`square_tiling_forward`: ``floor(sqrt(M / 4))``, shrunk to fit.

    The tiles of S (or T), Q (or A) and K (or V), the ``b`` running row
    sums and two values in flight need ``3 b^2 + b + 2 <= M``; the paper's
    side would be decreased until that holds, but since
    ``3 b^2 + b + 2 <= 4 b^2`` for ``b >= 2`` it always fits once ``M >= 6``.

    Raises
    ------
    InfeasibleMemory
        If ``M < 6`` (a tile of side 1 needs 6).

    Examples
    --------
    >>> [square_tile(M) for M in (6, 15, 16, 64, 100)]
    [1, 1, 2, 4, 5]
    """
    require_fit("square-tiling-forward", M, _square_need(1), "tile side 1")
    b = max(1, math.isqrt(M // 4))
    while _square_need(b) > M:
        b -= 1
    return b


def _square_plan(F, b):
    iblocks = blocks(range(F.n), b)
    jblocks = blocks(F.jseq, b)
    return iblocks, jblocks, block_structure(F.rows, iblocks, jblocks)


def square_tiling_forward(G, M: int, variant: str = "oneshot", b=None):
    """Saha & Ye's square tiling: tiles of side ``b = floor(sqrt(M/4))``, A written to slow memory.

    Phase 1, for each row block ``I`` (``b`` rows) and, inner, each column
    block ``J`` (``b`` keys) with an allowed pair: for each feature block
    ``L`` (``b`` features) load the ``Q`` tile ``I x L`` and the ``K`` tile
    ``J x L`` and fold their products into the ``S`` tile kept in fast
    memory; then compute ``A = exp(S)`` on the tile, store it, and add it to
    the running row sums ``l_I``, which stay in fast memory across ``J``.
    After the last ``J``: compute and store ``r_I``.

    Phase 2, for each ``I`` and each value-column block ``C`` (``b``
    columns): for each ``J`` with an allowed pair, load the ``A`` tile and the
    ``V`` tile ``J x C`` and fold ``A V`` into the ``T`` tile kept in fast
    memory; then load ``r_I``, compute and store ``O = r T``.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least 6.
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    b : int, optional
        Tile side (default :func:`square_tile`); any side with
        ``3 b^2 + b + 2 <= M`` (:func:`square_tiling_space`).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 6`` (see :func:`square_tile`) or the side ``b`` does not fit.

    Notes
    -----
    Exact I/O with ``b = square_tile(M)``, ``N_I = ceil(n / b)`` row
    blocks and ``N_C = ceil(d / b)`` value-column blocks, dense:

    ``Q = 3 n d N_I + (n^2 + n)(1 + N_C) + n d``

    (phase 1: ``2 n d N_I`` loads of Q and K, ``n^2`` stores of A, ``n`` of
    r; phase 2: ``n^2 N_C`` loads of A, ``n d N_I`` of V, ``n N_C`` of r and
    ``n d`` stores of O). Masked: with ``R_IJ`` / ``C_IJ`` the rows / columns
    of block pair ``(I, J)`` holding an allowed pair and ``Z`` the mask size,
    ``Q = d sum_{IJ} (|R_IJ| + 2 |C_IJ|) + (Z + n)(1 + N_C) + n d``.
    For ``b < d`` this is about ``4 n^2 d / b = 8 n^2 d / sqrt(M)``: the
    ``O(n^2 d / sqrt(M))`` of Saha & Ye. Fast memory: ``3 b^2 + b + 2``.

    Measured ``Q sqrt(M) / (n^2 d)``: 8.6 (M = 16), 9.2 (M = 64 = d^2),
    10.3 (M = 256) at ``n = 64, d = 8``; 8.3 at ``n = 1024, d = 32, M = 64``.
    Square tiling has the smaller I/O up to ``M = 2 d^2`` at ``n = 64, d = 8``
    and FlashAttention from ``M = 3 d^2`` (``benchmarks/schedules.py``).

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(4, 4)
    >>> replay(G, square_tiling_forward(G, 16)).io, square_tiling_forward_io(G.graph["params"], 16)
    (172, 172)

    References
    ----------
    Saha & Ye, "I/O Complexity of Attention, or How Optimal is
    FlashAttention?" (ICML 2024), the algorithm for M < d^2 (square tiling).
    """
    F = forward_index(G, "square-tiling-forward")
    b = chosen_side("square-tiling-forward", M, b, _square_need, square_tile)
    iblocks, jblocks, struct = _square_plan(F, b)
    fblocks = blocks(range(F.d), b)  # feature blocks (l positions, value columns c)
    rec = MoveRecorder(M, (), variant)
    tiles = [[struct[(a, bj)] for bj in range(len(jblocks)) if (a, bj) in struct] for a in range(len(iblocks))]
    # Two passes, as in Saha & Ye: all of A reaches slow memory before the tiled A V starts.
    for I, row_tiles in zip(iblocks, tiles):
        _square_scores(rec, F, I, row_tiles, fblocks)
    for I, row_tiles in zip(iblocks, tiles):
        _square_outputs(rec, F, I, row_tiles, fblocks)
    return rec.schedule(
        method="square-tiling-forward", tile=b, io_formula=square_tiling_forward_io(G.graph["params"], M, b)
    )


def _square_scores(rec, F, I, row_tiles, fblocks):
    """Phase 1 on row block ``I``: each S tile from Q and K tiles, A stored, l_I kept in fast memory, r_I stored."""
    lseq = F.fseq
    for rws, cols, per in row_tiles:
        for L in fblocks:
            operands = [f"Q_{i}_{lseq[p]}" for i in rws for p in L] + [f"K_{j}_{lseq[p]}" for j in cols for p in L]
            rec.load_all(operands)
            for i, js in per:
                for j in js:
                    s_steps(rec, F, i, j, L)
            rec.delete_all(operands)
        for i, js in per:
            for j in js:
                a_step(rec, F, i, j)
    for i in I:
        if F.rows[i]:
            finish_r(rec, F, i)


def _square_outputs(rec, F, I, row_tiles, fblocks):
    """Phase 2 on row block ``I``: for each value-column block C, the T tile from stored A and V, then O = r T."""
    for C in fblocks:
        for _, cols, per in row_tiles:
            operands = [f"A_{i}_{j}" for i, js in per for j in js] + [f"V_{j}_{c}" for j in cols for c in C]
            rec.load_all(operands)
            for i, js in per:
                for j in js:
                    _av_steps(rec, F, i, j, C)
            rec.delete_all(operands)
        for i in I:
            if F.rows[i]:
                rec.load(f"r_{i}")
                finish_o(rec, F, i, C)
                rec.delete(f"r_{i}")


def _av_steps(rec, F, i, j, cs):
    """Compute the products AV_i_j_c for ``c`` in ``cs`` and fold each into T_i_c."""
    t = F.rpos[i][j]
    for c in cs:
        prod = f"AV_{i}_{j}_{c}"
        rec.compute(prod)
        if t:
            rec.fold(F.t(i, c, t), F.t(i, c, t - 1), prod)


def square_tiling_space(params, M: int) -> list[dict]:
    """Every tile side of :func:`square_tiling_forward` that fits in ``M`` (``3 b^2 + b + 2 <= M``, ``b <= n``).

    >>> square_tiling_space({"n": 8, "d": 4}, 16)
    [{'b': 1}, {'b': 2}]
    """
    return side_space(int(params["n"]), M, _square_need)


def square_tiling_forward_io(params, M: int, b=None) -> int:
    """Closed-form I/O of :func:`square_tiling_forward` (see its Notes).

    Examples
    --------
    >>> n, d, M = 8, 4, 16                     # b = 2: 4 row blocks, 2 column blocks
    >>> square_tiling_forward_io({"n": n, "d": d}, M) == 3*n*d*4 + (n*n + n)*(1 + 2) + n*d
    True
    """
    b = chosen_side("square-tiling-forward", M, b, _square_need, square_tile)
    if is_dense(params):
        n, d = int(params["n"]), int(params["d"])
        return 3 * n * d * ceil_div(n, b) + (n * n + n) * (1 + ceil_div(d, b)) + n * d
    F = forward_index_of(params)
    d = F.d
    _, _, struct = _square_plan(F, b)
    n_c = ceil_div(d, b)
    z, rows = mask_counts(F)
    tiles = sum(len(rws) + 2 * len(cols) for rws, cols, _ in struct.values())
    return d * tiles + (z + rows) * (1 + n_c) + rows * d


SQUARE_TILING_FORWARD = Algorithm(
    name="square-tiling-forward",
    families=(FAMILY,),
    generate=square_tiling_forward,
    io_formula=square_tiling_forward_io,
    min_memory=lambda params: _square_need(1),
    search_space=square_tiling_space,
    source="Saha & Ye, ICML 2024: square tiling (side floor(sqrt(M/4))) for M < d^2",
)
