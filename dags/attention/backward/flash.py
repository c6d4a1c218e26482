"""FlashAttention's backward pass as a schedule on the ``attention-backward-flash`` DAG.

:func:`flash_backward`: K/V blocks outer (``dK``, ``dV`` accumulated in fast memory), Q blocks inner (``dQ``
stored and reloaded between K/V blocks); :func:`flash_backward_io` is its exact I/O. Block pairs of a masked
(sparse) DAG that hold no allowed ``(i, j)`` are skipped; the dense formula is a special case of the masked one.
Every node is computed once, so the schedule is valid in both game variants. Node names follow
:mod:`spartition.families.attention.backward.dag`; sums must be chains, and the generator follows the DAG's
``order``, ``jorder`` and ``iorder``.

References
----------
Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 4. Li, Liang, Shi, Song, Yue, Zhang, "On Fine-Grained I/O
Complexity of Attention Backward Passes" (arXiv 2410.09397): FlashAttention backward is optimal for M >= d^2.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.tiling import (
    block_space,
    block_structure,
    blocks,
    ceil_div,
    chain_name,
    chosen_blocks,
    column_block_tiles,
    flash_block_counts,
    flash_block_sizes,
    index_from_dag,
    index_from_params,
    is_dense,
)

__all__ = ["FLASH_BACKWARD", "flash_backward", "flash_backward_blocks", "flash_backward_io"]


FLASH_FAMILY = "attention-backward-flash"


def _flash_bwd_need(d: int, bc: int, br: int) -> int:
    return 4 * bc * d + br * (3 * d + 2) + 4


def flash_backward_blocks(d: int, M: int) -> tuple[int, int]:
    """Block sizes ``(B_c, B_r)`` of :func:`flash_backward`.

    FlashAttention takes ``B_c = ceil(M / 4d)``, ``B_r = min(B_c, d)``. The
    backward pass keeps ``K, V, dK, dV`` of a K/V block (``4 B_c d``), the
    ``Q, dO, dQ, D, l`` of a Q block (``B_r (3d + 2)``) and four values in
    flight, so ``B_c`` is decreased (with ``B_r = min(B_c, d)``) until
    ``4 B_c d + B_r (3d + 2) + 4 <= M``: for ``M <= 4 d^2`` about
    ``4/7`` of the paper's ``B_c``.

    Raises
    ------
    InfeasibleMemory
        If ``M < 7d + 6`` (blocks of one row).

    Examples
    --------
    >>> [flash_backward_blocks(4, M) for M in (34, 64, 128, 512)]
    [(1, 1), (2, 2), (4, 4), (28, 4)]
    """
    return flash_block_sizes("flash-backward", d, M, _flash_bwd_need)


def flash_backward(G, M: int, variant: str = "oneshot", bc=None, br=None):
    """FlashAttention backward on the FlashAttention-form DAG: K/V blocks outer, Q blocks inner.

    For each block ``J`` of ``B_c`` keys (in ``jorder``): load ``K_J, V_J``;
    the running sums ``dK_J, dV_J`` stay in fast memory. For each block
    ``I`` of ``B_r`` query rows (in ``iorder``) with an allowed pair in
    ``J``: load ``Q_i, dO_i, l_i``; in the first K/V block of row ``i``
    compute ``D_i`` from ``O_i`` (loaded entry by entry) and ``dO_i``, later
    load ``D_i`` (stored once) and the running ``dQ_i``. For each allowed
    ``(i, j)``: ``S, A, P``, ``dP``, ``dS``, and fold ``P dO`` into ``dV_j``,
    ``dS K_j`` into ``dQ_i``, ``dS Q_i`` into ``dK_j``. After the block: store
    ``dQ_i`` (final or running) and ``D_i`` if the row continues. After the
    last ``I``: store ``dK_J`` and ``dV_J``.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-backward-flash`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least ``7d + 6``.
    variant : {"oneshot", "recompute"}
        Written into the schedule.

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 7d + 6`` (see :func:`flash_backward_blocks`).

    Notes
    -----
    ``D_i`` is computed once (as in FlashAttention-2) rather than in every
    block, so the schedule is one-shot. Exact I/O with
    ``(B_c, B_r) = flash_backward_blocks(d, M)`` and ``T_c = ceil(n / B_c)``,
    dense:

    ``Q = 4 n d + n ((4d + 2) T_c - 1 + [T_c > 1])``

    (``K, V`` loaded and ``dK, dV`` stored once: ``4nd``; per row and K/V
    block ``Q_i, dO_i, l_i``: ``2d + 1``; ``O_i`` once: ``d``; ``D_i``
    stored once and reloaded ``T_c - 1`` times; ``dQ_i`` stored and
    reloaded at ``T_c - 1`` boundaries and stored at the end). Masked: with
    ``k_i`` the K/V blocks holding an allowed ``j`` of row ``i`` and ``n_K``
    the keys used, ``Q = 4 d n_K + sum_i (4 d k_i + 2 k_i - 1 + [k_i > 1])``.
    About ``28 n^2 d^2 / M`` for ``M <= 4 d^2``: the ``O(n^2 d^2 / M)`` of
    FlashAttention backward. Fast memory ``4 B_c d + B_r (3d + 2) + 4``.

    Measured ``Q M / (n^2 d^2)``: 34.5 (M = d^2 = 64), 36.0 (M = 256), 33.5
    (M = 1024) at ``n = 64, d = 8``; 29.4 at ``n = 1024, d = 32, M = 4 d^2``.
    It has the smaller I/O than :func:`li_small_cache_backward` from
    ``M = 2 d^2`` on at ``n = 64, d = 8``; Algorithm 6 below that.

    Examples
    --------
    >>> from spartition.families.attention.backward.dag import attention_backward_flash
    >>> from spartition.core.game import replay
    >>> G = attention_backward_flash(4, 2)
    >>> replay(G, flash_backward(G, 20)).io, flash_backward_io(G.graph["params"], 20)
    (192, 192)

    References
    ----------
    Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 4; Li et al.
    (arXiv 2410.09397), FlashAttention backward optimal for M >= d^2.
    """
    F = index_from_dag(G, FLASH_FAMILY, "flash-backward", "P")
    bc, br = chosen_blocks("flash-backward", F.d, M, bc, br, _flash_bwd_need, flash_backward_blocks)
    rec = MoveRecorder(M, (), variant)
    fs = F.fseq
    iblocks = blocks(F.iseq, br)
    jblocks = blocks(F.jseq, bc)
    struct = block_structure(F.rows, iblocks, jblocks)
    for tiles, keys in column_block_tiles(struct, len(iblocks), jblocks):
        rec.load_all([v for j in keys for v in [f"K_{j}_{x}" for x in fs] + [f"V_{j}_{x}" for x in fs]])
        for _, _, per in tiles:
            # the whole Q block is in fast memory before its first pair, as in Algorithm 4
            for i, js in per:
                _flash_bwd_row_start(rec, F, i, js)
            for i, js in per:
                for j in js:
                    _flash_bwd_pair(rec, F, i, j)
                _flash_bwd_row_end(rec, F, i, js)
        _flash_bwd_kv_end(rec, F, keys)
    return rec.schedule(method="flash-backward", B_c=bc, B_r=br,
                        io_formula=flash_backward_io(G.graph["params"], M, bc, br))


def _flash_bwd_d(F, i):
    """The finished ``D_i = sum_c dO_i_c O_i_c``."""
    return chain_name(f"D_{i}", f"dOO_{i}_{F.fseq[0]}", F.d - 1, F.d)


def _flash_bwd_row_start(rec, F, i, js):
    """Bring row ``i`` in for its pairs ``js``: Q_i, dO_i, l_i, and D_i computed (first K/V block) or reloaded with dQ_i."""
    fs, d = F.fseq, F.d
    rec.load_all([f"Q_{i}_{x}" for x in fs] + [f"dO_{i}_{x}" for x in fs] + [f"l_{i}"])
    t0 = F.rpos[i][js[0]]
    if t0 == 0:
        first = f"dOO_{i}_{fs[0]}"
        for p, c in enumerate(fs):
            rec.load(f"O_{i}_{c}")
            rec.compute(f"dOO_{i}_{c}")
            rec.delete(f"O_{i}_{c}")
            if p:
                rec.fold(chain_name(f"D_{i}", first, p, d), chain_name(f"D_{i}", first, p - 1, d), f"dOO_{i}_{c}")
    else:
        rec.load(_flash_bwd_d(F, i))
        k = len(F.rows[i])
        rec.load_all(chain_name(f"dQ_{i}_{x}", f"dSK_{i}_{F.rows[i][0]}_{x}", t0 - 1, k) for x in fs)


def _flash_bwd_pair(rec, F, i, j):
    """One allowed ``(i, j)``: S, A, P, dP, dS, then fold P dO into dV_j, dS K_j into dQ_i and dS Q_i into dK_j."""
    fs, row, col = F.fseq, F.rows[i], F.cols[j]
    s = rec.accumulate(f"S_{i}_{j}", [f"QK_{i}_{j}_{x}" for x in fs])
    rec.compute(f"A_{i}_{j}")
    rec.delete(s)
    rec.compute(f"P_{i}_{j}")
    rec.delete(f"A_{i}_{j}")
    dp = rec.accumulate(f"dP_{i}_{j}", [f"dOV_{i}_{j}_{c}" for c in fs])
    rec.compute(f"dPD_{i}_{j}")
    rec.delete(dp)
    rec.compute(f"dS_{i}_{j}")
    rec.delete(f"dPD_{i}_{j}")
    k, kc, tc, t = len(row), len(col), F.cpos[j][i], F.rpos[i][j]
    for c in fs:
        rec.add_term(f"dV_{j}_{c}", f"PdO_{col[0]}_{j}_{c}", tc, kc, f"PdO_{i}_{j}_{c}")
    rec.delete(f"P_{i}_{j}")
    for x in fs:
        rec.add_term(f"dQ_{i}_{x}", f"dSK_{i}_{row[0]}_{x}", t, k, f"dSK_{i}_{j}_{x}")
    for x in fs:
        rec.add_term(f"dK_{j}_{x}", f"dSQ_{col[0]}_{j}_{x}", tc, kc, f"dSQ_{i}_{j}_{x}")
    rec.delete(f"dS_{i}_{j}")


def _flash_bwd_row_end(rec, F, i, js):
    """Write dQ_i (final or running) and, if the row continues in a later K/V block, D_i; free the row."""
    fs, row = F.fseq, F.rows[i]
    k = len(row)
    last = F.rpos[i][js[-1]]
    for x in fs:
        rec.evict(chain_name(f"dQ_{i}_{x}", f"dSK_{i}_{row[0]}_{x}", last, k))
    if last < k - 1:
        rec.evict(_flash_bwd_d(F, i))
    else:
        rec.delete(_flash_bwd_d(F, i))
    rec.delete_all([f"Q_{i}_{x}" for x in fs] + [f"dO_{i}_{x}" for x in fs] + [f"l_{i}"])


def _flash_bwd_kv_end(rec, F, keys):
    """After the last Q block: write the finished dV_J and dK_J and free K_J, V_J."""
    fs = F.fseq
    for j in keys:
        col = F.cols[j]
        kc = len(col)
        for x in fs:
            rec.evict(chain_name(f"dV_{j}_{x}", f"PdO_{col[0]}_{j}_{x}", kc - 1, kc))
        for x in fs:
            rec.evict(chain_name(f"dK_{j}_{x}", f"dSQ_{col[0]}_{j}_{x}", kc - 1, kc))
        for x in fs:
            rec.delete(f"K_{j}_{x}")
            rec.delete(f"V_{j}_{x}")


def flash_backward_io(params, M: int, bc=None, br=None) -> int:
    """Closed-form I/O of :func:`flash_backward` (see its Notes).

    Examples
    --------
    >>> n, d, M = 16, 4, 64                    # B_c = 2, T_c = 8
    >>> flash_backward_io({"n": n, "d": d}, M) == 4*n*d + n*((4*d + 2)*8 - 1 + 1)
    True
    """
    bc, _ = chosen_blocks("flash-backward", int(params["d"]), M, bc, br, _flash_bwd_need, flash_backward_blocks)
    if is_dense(params):
        n, d = int(params["n"]), int(params["d"])
        tc = ceil_div(n, bc)
        return 4 * n * d + n * ((4 * d + 2) * tc - 1 + (tc > 1))
    F = index_from_params(params)
    ks, keys = flash_block_counts(F, bc)
    d = F.d
    return 4 * d * keys + sum(4 * d * k + 2 * k - 1 + (k > 1) for k in ks if k)


FLASH_BACKWARD = Algorithm(
    name="flash-backward",
    families=(FLASH_FAMILY,),
    generate=flash_backward,
    io_formula=flash_backward_io,
    min_memory=lambda params: _flash_bwd_need(int(params["d"]), 1, 1),
    # B_r = 1 leaves the most room for B_c, on which alone the I/O depends
    search_space=lambda params, M: block_space(int(params["n"]), int(params["d"]), M, _flash_bwd_need),
    source="Dao et al. 2022, FlashAttention Algorithm 4 (B_c = ceil(M/4d), B_r = min(B_c, d)), D computed once",
)
