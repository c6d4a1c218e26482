"""Schedules of the published attention-forward algorithms on the ``attention-forward`` DAG.

Three generators, each a function ``G, M -> Schedule`` that walks the
family's index space (never the networkx graph: only the names of the
``A_i_j`` nodes are looked up, to find the mask), and each documenting its
exact I/O in closed form:

* :func:`standard_forward` -- the textbook three-kernel algorithm that
  materialises S and A in slow memory, computing every entry from
  streamed operands (no reuse between entries);
* :func:`square_tiling_forward` -- Saha & Ye's small-cache algorithm: square
  tiles of side ``floor(sqrt(M / 4))``, A written to slow memory, then a
  tiled ``A V`` with the row scaling;
* :func:`flash_forward` -- FlashAttention's blocks ``B_c = ceil(M / 4d)``,
  ``B_r = min(B_c, d)``: K/V blocks outer, Q blocks inner, the running
  sums ``l_i`` and ``T_i_c`` stored and reloaded between K/V blocks.

On a masked (sparse) DAG every generator skips the block pairs with no
allowed ``(i, j)`` and loads only the rows a block uses: the dense
formulas are the special case of the masked ones. Every schedule computes
each node exactly once, so it is valid in both game variants.

Node names follow :mod:`spartition.families.attention.forward.dag`; sums must be chains (the order
parameters ``order`` and ``jorder`` are followed).

References
----------
Saha & Ye, "I/O Complexity of Attention, or How Optimal is FlashAttention?"
(ICML 2024): square tiling for M < d^2, Theta(min(n^2 d / sqrt(M), n^2 d^2 / M)).
Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 1 (block sizes) and
Algorithm 0 (standard attention).
"""

from __future__ import annotations

import math

from spartition.core.algorithm import Algorithm
from spartition.authoring.moves import MoveRecorder
from spartition.families.attention.tiling import (
    AttentionIndex,
    block_space,
    block_structure,
    blocks,
    ceil_div,
    chain_name,
    chosen_blocks,
    chosen_side,
    column_block_tiles,
    flash_block_counts,
    flash_block_sizes,
    index_from_dag,
    index_from_params,
    is_dense,
    require_fit,
    side_space,
)

__all__ = [
    "STANDARD_FORWARD",
    "SQUARE_TILING_FORWARD",
    "FLASH_FORWARD",
    "standard_forward",
    "square_tiling_forward",
    "flash_forward",
    "standard_forward_io",
    "square_tiling_forward_io",
    "flash_forward_io",
    "square_tile",
    "square_tiling_space",
    "flash_blocks",
    "flash_space",
]

FAMILY = "attention-forward"


# --------------------------------------------------------------------------- structure


class _Forward(AttentionIndex):
    """The index structure of an attention-forward DAG with the names of its running sums."""

    __slots__ = ()

    def s(self, i, j, p):
        """Running value of S_i_j after the products at positions 0..p of the l order."""
        return chain_name(f"S_{i}_{j}", f"QK_{i}_{j}_{self.fseq[0]}", p, self.d)

    def l(self, i, t):
        """Running value of l_i after t + 1 allowed j."""
        r = self.rows[i]
        return chain_name(f"l_{i}", f"A_{i}_{r[0]}", t, len(r))

    def t(self, i, c, t):
        """Running value of T_i_c after t + 1 allowed j."""
        r = self.rows[i]
        return chain_name(f"T_{i}_{c}", f"AV_{i}_{r[0]}_{c}", t, len(r))


def _from_dag(G, algorithm) -> _Forward:
    return index_from_dag(G, FAMILY, algorithm, cls=_Forward)


def _from_params(params) -> _Forward:
    return index_from_params(params, cls=_Forward)


def _s_steps(rec, F, i, j, ps):
    """Compute the products QK_i_j_l at l-positions ``ps`` and fold them into S_i_j."""
    name, first, lseq = f"S_{i}_{j}", f"QK_{i}_{j}_{F.fseq[0]}", F.fseq
    for p in ps:
        rec.add_term(name, first, p, F.d, f"QK_{i}_{j}_{lseq[p]}")


def _streamed(rec, a, b, prod):
    """Load ``a`` and ``b``, compute their product ``prod`` and free both operands."""
    rec.load(a)
    rec.load(b)
    rec.compute(prod)
    rec.delete(a)
    rec.delete(b)


def _a_step(rec, F, i, j):
    """From the red S_i_j: compute A_i_j, store it and fold it into l_i."""
    A = f"A_{i}_{j}"
    rec.compute(A)
    rec.delete(F.s(i, j, F.d - 1))
    rec.store(A)
    t = F.rpos[i][j]
    if t:
        rec.fold(F.l(i, t), F.l(i, t - 1), A)


def _finish_r(rec, F, i, store=True):
    """From the finished l_i: compute r_i (and write it to slow memory unless ``store`` is false)."""
    rec.compute(f"r_{i}")
    rec.delete(F.l(i, len(F.rows[i]) - 1))
    if store:
        rec.evict(f"r_{i}")


def _finish_o(rec, F, i, cs):
    """From the red r_i and the finished T_i_c: compute and write O_i_c for ``c`` in ``cs``."""
    last = len(F.rows[i]) - 1
    for c in cs:
        rec.compute(f"O_{i}_{c}")
        rec.delete(F.t(i, c, last))
        rec.evict(f"O_{i}_{c}")


# --------------------------------------------------------------------------- standard


STANDARD_MIN_M = 5


def standard_forward(G, M: int, variant: str = "oneshot"):
    """The standard algorithm: S and A materialised in slow memory, entries computed one at a time.

    Three kernels, as in standard (non-fused) attention:

    1. for every allowed ``(i, j)``: stream ``Q_i_l, K_j_l`` over ``l``,
       accumulate ``S_i_j``, store it;
    2. for every row ``i``: load each ``S_i_j``, compute ``A_i_j``, store it
       and add it to ``l_i``; compute ``r_i`` and store it;
    3. for every row ``i``: load ``r_i``; for every ``c``: stream
       ``A_i_j, V_j_c`` over the allowed ``j``, accumulate ``T_i_c``, compute
       and store ``O_i_c``.

    No operand is reused between entries, so the cost does not depend on M.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least 5.
    variant : {"oneshot", "recompute"}
        Written into the schedule (each node is computed once).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 5``.

    Notes
    -----
    Exact I/O, with ``Z`` the number of allowed pairs (``n^2`` dense) and
    ``n`` rows (every mask keeps each row non-empty):
    ``Q = Z (4d + 3) + n (d + 2)``; dense ``4 n^2 d + 3 n^2 + n d + 2 n``.
    (Kernel 1: ``Z (2d + 1)``; kernel 2: ``2 Z + n``; kernel 3:
    ``2 d Z + n + n d``.) Peak fast memory 5: ``r_i``, the running ``T``,
    ``A_i_j``, ``V_j_c`` and their product.

    Measured: ``Q / (n^2 d) = 4.39`` at ``n = 64, d = 8`` for every M. The
    Theta(nd + n^2) of Dao et al.'s Theorem 2 assumes blocked matrix
    products; this baseline streams every operand instead.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(2, 2)
    >>> replay(G, standard_forward(G, 5)).io, standard_forward_io(G.graph["params"], 5)
    (52, 52)

    References
    ----------
    Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 0 (standard
    attention: S and P written to and read from HBM).
    """
    F = _from_dag(G, "standard-forward")
    require_fit("standard-forward", M, STANDARD_MIN_M, "r, T, A, V and their product")
    rec = MoveRecorder(M, (), variant)
    d = F.d
    for i in range(F.n):
        for j in F.rows[i]:
            for p, l in enumerate(F.fseq):
                prod = f"QK_{i}_{j}_{l}"
                _streamed(rec, f"Q_{i}_{l}", f"K_{j}_{l}", prod)
                if p:
                    rec.fold(F.s(i, j, p), F.s(i, j, p - 1), prod)
            rec.evict(F.s(i, j, d - 1))
    for i in range(F.n):
        for j in F.rows[i]:
            rec.load(F.s(i, j, d - 1))
            _a_step(rec, F, i, j)
        if F.rows[i]:
            _finish_r(rec, F, i)
    for i in range(F.n):
        row = F.rows[i]
        if not row:
            continue
        rec.load(f"r_{i}")
        for c in range(d):
            for t, j in enumerate(row):
                prod = f"AV_{i}_{j}_{c}"
                _streamed(rec, f"A_{i}_{j}", f"V_{j}_{c}", prod)
                if t:
                    rec.fold(F.t(i, c, t), F.t(i, c, t - 1), prod)
            _finish_o(rec, F, i, [c])
        rec.delete(f"r_{i}")
    return rec.schedule(method="standard-forward", io_formula=standard_forward_io(G.graph["params"], M))


def _mask_counts(F) -> tuple[int, int]:
    """The number of allowed pairs and of non-empty rows."""
    return sum(len(r) for r in F.rows), sum(1 for r in F.rows if r)


def standard_forward_io(params, M: int) -> int:
    """Closed-form I/O of :func:`standard_forward`: ``Z (4d + 3) + n (d + 2)``.

    Examples
    --------
    >>> standard_forward_io({"n": 4, "d": 3}, 5), 4 * 16 * 3 + 3 * 16 + 4 * 3 + 2 * 4
    (260, 260)
    """
    if is_dense(params):
        n, d = int(params["n"]), int(params["d"])
        return 4 * n * n * d + 3 * n * n + n * d + 2 * n
    F = _from_params(params)
    z, rows = _mask_counts(F)
    return z * (4 * F.d + 3) + rows * (F.d + 2)


# --------------------------------------------------------------------------- square tiling


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
    F = _from_dag(G, "square-tiling-forward")
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
                    _s_steps(rec, F, i, j, L)
            rec.delete_all(operands)
        for i, js in per:
            for j in js:
                _a_step(rec, F, i, j)
    for i in I:
        if F.rows[i]:
            _finish_r(rec, F, i)


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
                _finish_o(rec, F, i, C)
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
    F = _from_params(params)
    d = F.d
    _, _, struct = _square_plan(F, b)
    n_c = ceil_div(d, b)
    z, rows = _mask_counts(F)
    tiles = sum(len(rws) + 2 * len(cols) for rws, cols, _ in struct.values())
    return d * tiles + (z + rows) * (1 + n_c) + rows * d


# --------------------------------------------------------------------------- FlashAttention


def _flash_need(d: int, bc: int, br: int) -> int:
    return 2 * bc * d + br * (2 * d + 1) + 3


def flash_blocks(d: int, M: int) -> tuple[int, int]:
    """Block sizes ``(B_c, B_r)`` of :func:`flash_forward`.

    FlashAttention takes ``B_c = ceil(M / 4d)`` and ``B_r = min(B_c, d)``.
    A K/V block (``2 B_c d``), a Q block and its running sums
    (``B_r (2d + 1)``) and three values in flight need
    ``2 B_c d + B_r (2d + 1) + 3 <= M``; ``B_c`` is decreased (with
    ``B_r = min(B_c, d)``) until that holds.

    Raises
    ------
    InfeasibleMemory
        If ``M < 4d + 4`` (blocks of one row need that).

    Examples
    --------
    >>> [flash_blocks(8, M) for M in (36, 64, 256, 1024)]
    [(1, 1), (1, 1), (7, 7), (32, 8)]
    """
    return flash_block_sizes("flash-forward", d, M, _flash_need)


def flash_forward(G, M: int, variant: str = "oneshot", bc=None, br=None):
    """FlashAttention forward on the Saha-Ye DAG: K/V blocks outer, Q blocks inner.

    For each block ``J`` of ``B_c`` keys (in the ``j`` order of the sums):
    load ``K_J`` and ``V_J``; for each block ``I`` of ``B_r`` query rows with
    an allowed pair in ``J``: load ``Q_I`` and, for rows already started,
    the running sums ``l_i`` and ``T_i_c`` stored after the previous block;
    for each allowed ``(i, j)`` compute ``S_i_j`` from the red Q and K rows,
    ``A_i_j``, and fold ``A_i_j`` into ``l_i`` and ``A_i_j V_j_c`` into
    ``T_i_c``; then store the running sums of rows that continue in a later
    block, and finish the others: ``r_i``, ``O_i_c = r_i T_i_c`` stored.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least ``4d + 4``.
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    bc, br : int, optional
        Block sizes (default :func:`flash_blocks`); any pair with
        ``2 B_c d + B_r (2d + 1) + 3 <= M`` (:func:`flash_space`).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 4d + 4`` (see :func:`flash_blocks`) or the blocks do not fit.

    Notes
    -----
    Exact I/O with ``(B_c, B_r) = flash_blocks(d, M)`` and
    ``T_c = ceil(n / B_c)`` K/V blocks, dense:

    ``Q = 3 n d + n d T_c + 2 n (d + 1)(T_c - 1)``

    (K and V loaded once: ``2 n d``; Q once per K/V block: ``n d T_c``; the
    ``d + 1`` running sums of a row stored and reloaded at each of the
    ``T_c - 1`` block boundaries; O stored: ``n d``). Masked: with ``k_i``
    the number of K/V blocks holding an allowed ``j`` of row ``i`` and
    ``n_K`` the keys used by some row, ``Q = 2 d n_K + d sum_i k_i +
    2 (d + 1) sum_i (k_i - 1) + n d``. For ``n`` a multiple of ``B_c = M / 4d``
    this is about ``12 n^2 d^2 / M``: the ``O(n^2 d^2 / M)`` of FlashAttention.
    Fast memory: ``2 B_c d + B_r (2d + 1) + 3``.

    Measured ``Q M / (n^2 d^2)``: 26.1 (M = d^2 = 64, ``B_c = 1``), 16.6
    (M = 256), 14.5 (M = 1024) at ``n = 64, d = 8``; 13.1 at
    ``n = 1024, d = 32, M = 4 d^2``.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(4, 2)
    >>> replay(G, flash_forward(G, 24)).io, flash_forward_io(G.graph["params"], 24)
    (64, 64)

    References
    ----------
    Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 1; Saha & Ye
    (ICML 2024), the upper bound O(n^2 d^2 / M) for M >= d^2.
    """
    F = _from_dag(G, "flash-forward")
    bc, br = chosen_blocks("flash-forward", F.d, M, bc, br, _flash_need, flash_blocks)
    rec = MoveRecorder(M, (), variant)
    _flash_moves(rec, F, bc, br)
    return rec.schedule(
        method="flash-forward", B_c=bc, B_r=br, io_formula=flash_forward_io(G.graph["params"], M, bc, br)
    )


def flash_space(params, M: int) -> list[dict]:
    """Every ``B_c`` of :func:`flash_forward` that fits in ``M``, with ``B_r = 1`` (:func:`~spartition.families.attention.tiling.block_space`).

    >>> flash_space({"n": 8, "d": 2}, 20)
    [{'bc': 1, 'br': 1}, {'bc': 2, 'br': 1}, {'bc': 3, 'br': 1}]
    """
    return block_space(int(params["n"]), int(params["d"]), M, _flash_need)


def _flash_moves(rec, F, bc, br):
    lseq, ls = F.fseq, range(F.d)
    iblocks = blocks(range(F.n), br)
    jblocks = blocks(F.jseq, bc)
    struct = block_structure(F.rows, iblocks, jblocks)
    for tiles, kv in column_block_tiles(struct, len(iblocks), jblocks):
        kv_block = [v for j in kv for v in [f"K_{j}_{l}" for l in lseq] + [f"V_{j}_{c}" for c in ls]]
        rec.load_all(kv_block)
        for _, _, per in tiles:
            for i, js in per:
                rec.load_all(f"Q_{i}_{l}" for l in lseq)
                t0 = F.rpos[i][js[0]]
                if t0:
                    rec.load(F.l(i, t0 - 1))
                    rec.load_all(F.t(i, c, t0 - 1) for c in ls)
            for i, js in per:
                pos = F.rpos[i]
                for j in js:
                    t = pos[j]
                    _s_steps(rec, F, i, j, ls)
                    A = f"A_{i}_{j}"
                    rec.compute(A)
                    rec.delete(F.s(i, j, F.d - 1))
                    if t:
                        rec.fold(F.l(i, t), F.l(i, t - 1))
                    for c in ls:
                        prod = f"AV_{i}_{j}_{c}"
                        rec.compute(prod)
                        if t:
                            rec.fold(F.t(i, c, t), F.t(i, c, t - 1), prod)
                    if t:
                        rec.delete(A)
                last = pos[js[-1]]
                if last < len(F.rows[i]) - 1:
                    rec.evict(F.l(i, last))
                    for c in ls:
                        rec.evict(F.t(i, c, last))
                else:
                    _finish_r(rec, F, i, store=False)
                    _finish_o(rec, F, i, ls)
                    rec.delete(f"r_{i}")
                rec.delete_all(f"Q_{i}_{l}" for l in lseq)
        rec.delete_all(kv_block)


def flash_forward_io(params, M: int, bc=None, br=None) -> int:
    """Closed-form I/O of :func:`flash_forward` (see its Notes).

    Examples
    --------
    >>> n, d, M = 64, 8, 256                   # B_c = 7, T_c = 10
    >>> flash_forward_io({"n": n, "d": d}, M) == 3*n*d + n*d*10 + 2*n*(d + 1)*9
    True
    """
    bc, _ = chosen_blocks("flash-forward", int(params["d"]), M, bc, br, _flash_need, flash_blocks)
    if is_dense(params):
        n, d = int(params["n"]), int(params["d"])
        tc = ceil_div(n, bc)
        return 3 * n * d + n * d * tc + 2 * n * (d + 1) * (tc - 1)
    F = _from_params(params)
    ks, used = flash_block_counts(F, bc)
    d = F.d
    return 2 * d * used + d * sum(ks) + 2 * (d + 1) * sum(k - 1 for k in ks if k) + d * sum(1 for k in ks if k)


# --------------------------------------------------------------------------- registry


STANDARD_FORWARD = Algorithm(
    name="standard-forward",
    families=(FAMILY,),
    generate=standard_forward,
    io_formula=standard_forward_io,
    min_memory=lambda params: STANDARD_MIN_M,
    source="Dao et al. 2022, Algorithm 0 (standard attention), entries streamed one at a time",
)

SQUARE_TILING_FORWARD = Algorithm(
    name="square-tiling-forward",
    families=(FAMILY,),
    generate=square_tiling_forward,
    io_formula=square_tiling_forward_io,
    min_memory=lambda params: _square_need(1),
    search_space=square_tiling_space,
    source="Saha & Ye, ICML 2024: square tiling (side floor(sqrt(M/4))) for M < d^2",
)

FLASH_FORWARD = Algorithm(
    name="flash-forward",
    families=(FAMILY,),
    generate=flash_forward,
    io_formula=flash_forward_io,
    min_memory=lambda params: _flash_need(int(params["d"]), 1, 1),
    search_space=flash_space,
    source="Dao et al. 2022, FlashAttention Algorithm 1 (B_c = ceil(M/4d), B_r = min(B_c, d))",
)
