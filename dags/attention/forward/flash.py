"""FlashAttention's forward pass as a schedule: K/V blocks outer, Q blocks inner, running sums stored between blocks.

:func:`flash_forward` uses the blocks ``B_c = ceil(M / 4d)``, ``B_r = min(B_c, d)`` (:func:`flash_blocks`, shrunk
to fit M); the running sums ``l_i`` and ``T_i_c`` are stored and reloaded between K/V blocks.
:func:`flash_forward_io` is its exact I/O.

References
----------
Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 1 (block sizes).
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
    s_steps,
)
from spartition.families.attention.tiling import (
    block_space,
    block_structure,
    blocks,
    ceil_div,
    chosen_blocks,
    column_block_tiles,
    flash_block_counts,
    flash_block_sizes,
    is_dense,
)

__all__ = ["FLASH_FORWARD", "flash_blocks", "flash_forward", "flash_forward_io", "flash_space"]


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
    F = forward_index(G, "flash-forward")
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
                    s_steps(rec, F, i, j, ls)
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
                    finish_r(rec, F, i, store=False)
                    finish_o(rec, F, i, ls)
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
    F = forward_index_of(params)
    ks, used = flash_block_counts(F, bc)
    d = F.d
    return 2 * d * used + d * sum(ks) + 2 * (d + 1) * sum(k - 1 for k in ks if k) + d * sum(1 for k in ks if k)


FLASH_FORWARD = Algorithm(
    name="flash-forward",
    families=(FAMILY,),
    generate=flash_forward,
    io_formula=flash_forward_io,
    min_memory=lambda params: _flash_need(int(params["d"]), 1, 1),
    search_space=flash_space,
    source="Dao et al. 2022, FlashAttention Algorithm 1 (B_c = ceil(M/4d), B_r = min(B_c, d))",
)
