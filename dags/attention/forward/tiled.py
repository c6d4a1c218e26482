"""A COSMA-style tiling of attention forward: a resident score tile, every operand streamed one column at a time.

:func:`tiled_forward` walks the ``attention-forward`` DAG in tiles of ``a``
query rows by ``b`` keys. The ``a x b`` tile of running sums ``S_I_J``
stays in fast memory while the inner dimension ``l`` is streamed: for each
``l`` the ``a`` entries ``Q_I_l`` are loaded (or kept, ``keep_q``) and the
``b`` entries ``K_j_l`` pass through one at a time, each used by the ``a``
rows of the tile. So a loaded ``K`` entry is reused ``a`` times and a loaded
``Q`` entry ``b`` times; with ``a b ~ M`` that is the ``sqrt(M)`` reuse of an
I/O-optimal matrix product (Kwasniewski et al., SC 2019), where square
tiling loads whole ``sqrt(M/4)``-sided operand tiles and keeps only a
quarter of the memory for the output. What follows ``S`` depends on
``mode``:

============  =====================================================================
mode          after the tile's ``S = Q K^T``
============  =====================================================================
``spill``     ``A = exp(S)`` stays resident; for each value column ``c`` the
              running ``T_I_c`` are loaded, ``V_j_c`` streamed, ``T_I_c``
              stored again (fused, one pass; fast memory ``a b + 2a + 3``)
``resident``  as ``spill`` but all ``a d`` running ``T_I`` stay in fast
              memory across the row block (no ``T`` traffic; ``+ a d``)
``two-pass``  ``A`` stored, ``r`` stored; then ``T = A V`` as a second
              streamed product with ``a2 x c2`` output tiles of ``T``, or
              tiles of ``run`` consecutive entries of ``T`` in row-major
              order (:func:`phase2_tiles`)
============  =====================================================================

The row sums ``l_I`` stay in fast memory across a row block in every mode.
Every node is computed once, so the schedule is valid in both variants.

References
----------
Kwasniewski et al., "Red-blue pebbling revisited: near optimal parallel
matrix-matrix multiplication" (SC 2019), the near-square output tile
streaming the inner dimension; Saha & Ye, "I/O Complexity of Attention, or
How Optimal is FlashAttention?" (ICML 2024), the attention CDAG and the
Theta(n^2 d / sqrt(M)) regime for M < d^2.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.errors import ParameterError
from spartition.families.attention.forward.tiled_io import (
    FAMILY,
    MIN_M,
    MODES,
    NAME,
    RSF_NAME,
    check_mode,
    check_row_sums_first,
    default_tiles,
    first_pass_rows,
    phase2_tiles,
    row_sums_first_defaults,
    row_sums_first_io,
    row_sums_first_need,
    row_sums_first_space,
    run_rows,
    tiled_forward_io,
    tiled_forward_need,
    tiled_forward_space,
)
from spartition.families.attention.tiling import (
    AttentionIndex,
    block_structure,
    blocks,
    ceil_div,
    chain_name,
    index_from_dag,
    require_fit,
)

__all__ = ["MODES", "ROW_SUMS_FIRST_FORWARD", "TILED_FORWARD", "phase2_tiles", "row_sums_first_forward", "run_rows",
           "tiled_forward", "tiled_forward_io", "tiled_forward_need", "tiled_forward_space"]


class _Forward(AttentionIndex):
    """The index structure of an attention-forward DAG with the names of its running sums."""

    __slots__ = ()

    def s(self, i, j, p):
        return chain_name(f"S_{i}_{j}", f"QK_{i}_{j}_{self.fseq[0]}", p, self.d)

    def l(self, i, t):
        r = self.rows[i]
        return chain_name(f"l_{i}", f"A_{i}_{r[0]}", t, len(r))

    def t(self, i, c, t):
        r = self.rows[i]
        return chain_name(f"T_{i}_{c}", f"AV_{i}_{r[0]}_{c}", t, len(r))


def tiled_forward(G, M: int, variant: str = "oneshot", a=None, b=None, mode=None, keep_q=False, a2=1, c2=1, run=0):
    """COSMA-style tiled attention forward (module docstring): ``a x b`` score tiles, operands streamed.

    Row blocks ``I`` of ``a`` rows outer, key blocks ``J`` of ``b`` keys (in
    the ``j`` order of the sums) inner. On each tile: for each feature ``l``
    (in the order of the ``S`` chains) load ``Q_I_l`` and stream ``K_j_l``,
    ``j`` in ``J``, folding ``Q_i_l K_j_l`` into the resident ``S_i_j``; then
    ``A = exp(S)`` and ``l_i`` folded (``l_I`` resident across ``J``). In a
    fused mode, for each value column ``c``: load the running ``T_I_c``
    (``spill``), stream ``V_j_c``, fold ``A_i_j V_j_c`` into ``T_i_c``, and
    store the running ``T_I_c`` again, or, after the last key block,
    ``O_i_c = r_i T_i_c``. In ``two-pass`` the ``A`` tile and ``r_I`` are
    stored and a second streamed product makes ``T`` and ``O``.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least :func:`tiled_forward_need` of the tiles.
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    a, b : int, optional
        Rows and keys per tile; by default the tiling of
        :func:`tiled_forward_space` with the least closed-form I/O.
    mode : {"spill", "resident", "two-pass"}, optional
    keep_q : bool
        Keep the ``a d`` entries of ``Q_I`` in fast memory across the row block.
    a2, c2 : int
        Rows and value columns of the phase-2 ``T`` tiles (``two-pass``).
    run : int
        ``two-pass`` only: phase-2 tiles of ``run`` consecutive entries of
        ``T`` in row-major order instead of rectangles (:func:`phase2_tiles`);
        ``a2`` and ``c2`` must then be 1.

    Returns
    -------
    Schedule
        ``meta`` records the tiling.

    Raises
    ------
    InfeasibleMemory
        If the tiles do not fit (the message names the M they need).

    Notes
    -----
    Exact I/O: :func:`tiled_forward_io`. ``spill`` costs about
    ``n^2 d (3/b + 2/a)``: ``4.9 n^2 d / sqrt(M)`` at the best shape
    ``b = 1.5 a``, against about ``8 n^2 d / sqrt(M)`` for square tiling;
    ``two-pass`` about ``4 n^2 d / sqrt(M) + n^2``, cheaper when
    ``sqrt(M) < d``.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(4, 2)
    >>> s = tiled_forward(G, 13, a=2, b=3)
    >>> replay(G, s).io, replay(G, s).peak_red <= 13
    (72, True)

    References
    ----------
    Kwasniewski et al. (SC 2019); Saha & Ye (ICML 2024).
    """
    F = index_from_dag(G, FAMILY, NAME, cls=_Forward)
    if a is None:
        a, b, mode, keep_q, a2, c2, run = default_tiles(G.graph["params"], M)
    mode = mode or "spill"
    check_mode(mode)
    if min(a, b, a2, c2) < 1 or run < 0:
        raise ValueError(f"{NAME}: tile sizes must be >= 1, got a={a}, b={b}, a2={a2}, c2={c2}, run={run}")
    if run and (mode != "two-pass" or (a2, c2) != (1, 1)):
        raise ValueError(f"{NAME}: run={run} shapes the two-pass phase-2 tiles; it needs mode='two-pass' and a2 = c2 = 1")
    need = tiled_forward_need(F.d, a, b, mode, keep_q, a2, c2, run)
    shown = f", run={run}" if run else f", a2={a2}, c2={c2}"
    require_fit(NAME, M, need, f"a={a}, b={b}, mode={mode}, keep_q={keep_q}{shown}")
    rec = MoveRecorder(M, (), variant)
    iblocks, jblocks = blocks(range(F.n), a), blocks(F.jseq, b)
    struct = block_structure(F.rows, iblocks, jblocks)
    for ai, I in enumerate(iblocks):
        tiles = [struct[(ai, bj)] for bj in range(len(jblocks)) if (ai, bj) in struct]
        _row_block(rec, F, tiles, mode, keep_q)
    if mode == "two-pass":
        for tile in phase2_tiles(F.n, F.d, a2, c2, run):
            _phase2_tile(rec, F, tile)
    options = {"a": a, "b": b, "mode": mode, "keep_q": keep_q, "a2": a2, "c2": c2, **({"run": run} if run else {})}
    return rec.schedule(method=NAME, **options, io_formula=tiled_forward_io(G.graph["params"], M, **options))


def row_sums_first_forward(G, M: int, variant: str = "recompute", a=None, b=None, h=None, keep_q=True, a0=1, b0=1,
                           keep_q0=True, keep_k0=False):
    """``tiled-forward``'s ``resident`` pass with the row sums of some rows made first, their scores made twice.

    A first pass makes ``r_i = 1 / l_i`` of every row of a block of ``a`` but
    its first ``h`` (:func:`first_pass_rows`) and stores it: ``two-pass``'s
    phase 1 with ``a0 x b0`` tiles, ``A`` dropped instead of stored. The
    fused pass (``resident``, ``a x b`` tiles) then rebuilds those rows'
    scores for ``T = A V`` alone and loads their ``r`` for ``O``. A row whose
    sum the fused pass does not fold leaves a red pebble free, so a block
    holds one more row at the same M (d = 4, M = 32: 3 rows against 2): the
    rows of ``K`` and ``V`` are read ``ceil(n / a)`` times instead of
    ``ceil(n / (a - 1))``, for one more read of ``K`` per ``a0`` first-pass
    rows. As FlashAttention's backward pass rebuilds ``P``, the scores of
    the first pass's rows are computed twice: the schedule is one of the
    standard game only (``variants = ("recompute",)``).

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-forward`` DAG (chain sums; any mask).
    M : int
        At least :func:`row_sums_first_need` of the tiles.
    variant : {"recompute"}
        Any other game is refused (:class:`~spartition.errors.ParameterError`).
    a, b, h, keep_q : int, int, int, bool
        The fused pass: rows and keys per tile, the rows of each block whose
        sums it folds (``0 <= h < a``), ``Q_I`` kept across the block. By
        default the tiling of :func:`row_sums_first_space` with the least
        closed-form I/O.
    a0, b0, keep_q0 : int, int, bool
        The first pass's tiles and whether it keeps ``Q_I``.
    keep_k0 : bool
        The first pass keeps the row ``K_j`` of one key at a time and makes
        each score of its rows whole before the next (``b0 = 1``, ``Q``
        kept): ``d`` more red pebbles than streaming ``K``, but no tile of
        running scores, so a block holds more rows where ``a0 > d``
        (:func:`~spartition.families.attention.forward.tiled_io.first_pass_need`).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If the tiles do not fit (the message names the M they need).
    ParameterError
        For another game than ``recompute``, tiles that are not whole numbers
        with ``0 <= h < a``, ``b`` and ``h`` without ``a`` (or ``a``
        without them), or ``keep_k0`` with ``b0 != 1`` or without
        ``keep_q0``.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> from spartition.core.game import replay
    >>> G = attention_forward(6, 4)
    >>> s = row_sums_first_forward(G, 32, a=3, b=1, h=2, a0=2)
    >>> r = replay(G, s)
    >>> r.io, r.peak_red, row_sums_first_io(G.graph["params"], 32, a=3, b=1, h=2, a0=2)
    (180, 32, 180)
    """
    if variant != "recompute":
        # the first pass's scores are made again: there is no schedule of this algorithm in another game
        raise ParameterError(f"{RSF_NAME} makes schedules of the recompute game only, not {variant}")
    check_row_sums_first(a, b, h, a0, b0, keep_q0, keep_k0)
    F = index_from_dag(G, FAMILY, RSF_NAME, cls=_Forward)
    if a is None:
        a, b, h, keep_q, a0, b0, keep_q0, keep_k0 = row_sums_first_defaults(G.graph["params"], M)
    first = first_pass_rows(F.n, a, h)
    need = row_sums_first_need(F.d, a, b, h, keep_q, a0, b0, keep_q0, has_first_pass=bool(first), keep_k0=keep_k0)
    options = {"a": a, "b": b, "h": h, "keep_q": keep_q, "a0": a0, "b0": b0, "keep_q0": keep_q0, "keep_k0": keep_k0}
    require_fit(RSF_NAME, M, need, ", ".join(f"{k}={v}" for k, v in options.items()))
    rec = MoveRecorder(M, (), variant)
    # the first pass (row sums only, every row folds), then the fused pass (the first h rows of a block fold)
    for I, mode, jb, kq, folding in [(blocks(first, a0), "row-sums", b0, keep_q0, None),
                                      (blocks(range(F.n), a), "resident", b, keep_q, h)]:
        struct = block_structure(F.rows, I, blocks(F.jseq, jb))
        for ai, rows in enumerate(I):
            tiles = [struct[(ai, bj)] for bj in range(ceil_div(F.n, jb)) if (ai, bj) in struct]
            _row_block(rec, F, tiles, mode, kq, None if folding is None else set(rows[:folding]),
                       keep_k=keep_k0 and mode == "row-sums")
    return rec.schedule(method=RSF_NAME, **options, io_formula=row_sums_first_io(G.graph["params"], M, **options))


def _row_block(rec, F, tiles, mode, keep_q, folded=None, keep_k=False):
    """Every tile of one row block, ``l_I`` (and ``Q_I``, ``T_I``) resident across them.

    ``mode`` ``"row-sums"`` makes only ``l`` and ``r`` (``r`` stored, ``A``
    dropped), with ``keep_k`` one whole score at a time from a kept row of
    ``K``; ``folded``: the rows whose row sums a fused mode folds (None:
    all), the others load ``r`` for their outputs.
    """
    active = sorted({i for _, _, per in tiles for i, _ in per})
    q_block = [f"Q_{i}_{l}" for i in active for l in F.fseq] if keep_q else []
    rec.load_all(q_block)
    lrun = {}
    for _, cols, per in tiles:
        users = {j: [] for j in cols}
        for i, js in per:
            for j in js:
                users[j].append(i)
        if keep_k:
            _whole_scores(rec, F, cols, users)
            continue
        _scores(rec, F, per, cols, users, keep_q)
        if mode in ("two-pass", "row-sums"):
            for i, js in per:
                for j in js:
                    _folded_a(rec, F, i, j, store=mode == "two-pass")
        else:
            _fused_rest(rec, F, per, cols, users, mode, lrun, folded)
    if mode in ("two-pass", "row-sums"):
        for i in active:
            rec.compute(f"r_{i}")
            rec.delete(F.l(i, len(F.rows[i]) - 1))
            rec.evict(f"r_{i}")
    rec.delete_all(q_block)


def _scores(rec, F, per, cols, users, keep_q):
    """The tile's S: for each feature, the Q column loaded (unless kept) and K streamed."""
    d = F.d
    for p, l in enumerate(F.fseq):
        qcol = [] if keep_q else [f"Q_{i}_{l}" for i, _ in per]
        rec.load_all(qcol)
        for j in cols:
            k = f"K_{j}_{l}"
            rec.load(k)
            for i in users[j]:
                rec.add_term(f"S_{i}_{j}", f"QK_{i}_{j}_{F.fseq[0]}", p, d, f"QK_{i}_{j}_{l}",
                             release=(k,) if i == users[j][-1] else ())
            rec.delete(k)
        rec.delete_all(qcol)


def _whole_scores(rec, F, cols, users):
    """Row sums only: for each key its row of K loaded, each user's score made whole, folded and dropped."""
    for j in cols:
        krow = [f"K_{j}_{l}" for l in F.fseq]
        rec.load_all(krow)
        for i in users[j]:
            for p, l in enumerate(F.fseq):
                rec.add_term(f"S_{i}_{j}", f"QK_{i}_{j}_{F.fseq[0]}", p, F.d, f"QK_{i}_{j}_{l}")
            _folded_a(rec, F, i, j, store=False)
        rec.delete_all(krow)


def _folded_a(rec, F, i, j, store=True):
    """From the red S_i_j: A_i_j computed, stored (``store``, two-pass) and folded into l_i."""
    A = f"A_{i}_{j}"
    rec.compute(A)
    rec.delete(F.s(i, j, F.d - 1))
    if store:
        rec.store(A)
    t = F.rpos[i][j]
    if t:
        rec.fold(F.l(i, t), F.l(i, t - 1), A)


def _fused_rest(rec, F, per, cols, users, mode, lrun, folded=None):
    """A, l, r and the streamed A V of one tile, A resident until its products are done.

    Rows not in ``folded`` (None: all) fold no row sum; their ``r`` is loaded
    after the tile's ``A`` are dropped, and their outputs made then.
    """
    pending = set()
    for i, js in per:
        fold = folded is None or i in folded
        for j in js:
            A = f"A_{i}_{j}"
            rec.compute(A)
            rec.delete(F.s(i, j, F.d - 1))
            pending.add(A)
            if not fold:
                continue
            t = F.rpos[i][j]
            if t:
                rec.compute(F.l(i, t))
                if F.l(i, t - 1) not in pending:
                    rec.delete(F.l(i, t - 1))
            lrun[i] = F.l(i, t)
        if fold and F.rpos[i][js[-1]] == len(F.rows[i]) - 1:
            rec.compute(f"r_{i}")
            if lrun[i] not in pending:
                rec.delete(lrun[i])
            lrun[i] = None
    for c in range(F.d):
        if mode == "spill":
            for i, js in per:
                t0 = F.rpos[i][js[0]]
                if t0:
                    rec.load(F.t(i, c, t0 - 1))
        for j in cols:
            v = f"V_{j}_{c}"
            rec.load(v)
            for i in users[j]:
                k = len(F.rows[i])
                rec.add_term(f"T_{i}_{c}", f"AV_{i}_{F.rows[i][0]}_{c}", F.rpos[i][j], k, f"AV_{i}_{j}_{c}",
                             release=(v,) if i == users[j][-1] else ())
            rec.delete(v)
        for i, js in per:
            last = F.rpos[i][js[-1]]
            if last == len(F.rows[i]) - 1:
                if folded is not None and i not in folded:
                    continue
                rec.compute(f"O_{i}_{c}")
                rec.delete(F.t(i, c, last))
                rec.evict(f"O_{i}_{c}")
            elif mode == "spill":
                rec.evict(F.t(i, c, last))
    for i, js in per:
        for j in js:
            A = f"A_{i}_{j}"
            if A != lrun.get(i):
                rec.delete(A)
        if lrun.get(i) is None:
            rec.delete(f"r_{i}")
    for i, js in per:
        last = F.rpos[i][js[-1]]
        if folded is not None and i not in folded and last == len(F.rows[i]) - 1:
            rec.load(f"r_{i}")
            for c in range(F.d):
                rec.compute(f"O_{i}_{c}")
                rec.delete(F.t(i, c, last))
                rec.evict(f"O_{i}_{c}")
            rec.delete(f"r_{i}")


def _phase2_tile(rec, F, tile):
    """Two-pass phase 2 on the T entries ``tile``: A columns loaded, V streamed, then O = r T."""
    I = sorted({i for i, _ in tile})
    C = sorted({c for _, c in tile})
    cols = {i: [c for c in C if (i, c) in tile] for i in I}
    for j in F.jseq:
        rs = [i for i in I if j in F.rpos[i]]
        if not rs:
            continue
        acol = [f"A_{i}_{j}" for i in rs]
        rec.load_all(acol)
        for c in C:
            users = [i for i in rs if c in cols[i]]
            if not users:
                continue
            v = f"V_{j}_{c}"
            rec.load(v)
            for i in users:
                rec.add_term(f"T_{i}_{c}", f"AV_{i}_{F.rows[i][0]}_{c}", F.rpos[i][j], len(F.rows[i]), f"AV_{i}_{j}_{c}",
                             release=(v,) if i == users[-1] else ())
            rec.delete(v)
        rec.delete_all(acol)
    for i in I:
        if F.rows[i]:
            rec.load(f"r_{i}")
            last = len(F.rows[i]) - 1
            for c in cols[i]:
                rec.compute(f"O_{i}_{c}")
                rec.delete(F.t(i, c, last))
                rec.evict(f"O_{i}_{c}")
            rec.delete(f"r_{i}")


TILED_FORWARD = Algorithm(
    name=NAME,
    families=(FAMILY,),
    generate=tiled_forward,
    io_formula=tiled_forward_io,
    min_memory=lambda params: MIN_M,
    search_space=tiled_forward_space,
    source="Kwasniewski et al., SC 2019 (COSMA): near-square resident output tile, inner dimension streamed; "
    "applied to S = Q K^T and T = A V of Saha & Ye's CDAG",
)


#: tiled-forward's fused pass with some rows' sums made first: a schedule of the standard game only.
ROW_SUMS_FIRST_FORWARD = Algorithm(
    name=RSF_NAME,
    families=(FAMILY,),
    generate=row_sums_first_forward,
    io_formula=row_sums_first_io,
    min_memory=lambda params: max(MIN_M, int(params["d"]) + 4),
    search_space=row_sums_first_space,
    source="spartition: tiled-forward's resident pass (Kwasniewski et al., SC 2019) with the row sums of some rows made "
    "first and their scores rebuilt, as FlashAttention's backward pass rebuilds P (Dao et al. 2022); one more row "
    "per block at the same M",
    variants=("recompute",),
)
