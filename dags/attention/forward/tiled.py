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
              streamed product with ``a2 x c2`` output tiles of ``T``
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

from spartition.core.algorithm import Algorithm
from spartition.authoring.moves import MoveRecorder
from spartition.families.attention.tiling import (
    AttentionIndex,
    block_structure,
    blocks,
    ceil_div,
    chain_name,
    index_from_dag,
    is_dense,
    require_fit,
)

__all__ = ["MODES", "TILED_FORWARD", "tiled_forward", "tiled_forward_io", "tiled_forward_need", "tiled_forward_space"]

FAMILY = "attention-forward"
NAME = "tiled-forward"
MODES = ("spill", "resident", "two-pass")
#: The smallest M of any tiling (``a = b = 1``, mode ``spill``: S_i_j, l_i, T_i_c, a product and a new sum).
MIN_M = 5


def tiled_forward_need(d: int, a: int, b: int, mode: str = "spill", keep_q: bool = False, a2: int = 1, c2: int = 1) -> int:
    """Fast memory :func:`tiled_forward` uses with these tiles.

    The score tile ``a b``, the running row sums ``a``, the ``Q`` column
    (``a``, or ``a d`` kept) and the values in flight: an operand, a product
    and the new running sum, three while the operand (``K_j_l``, ``V_j_c``)
    still has rows to serve, two with one row per tile (``a = 1``), which
    drops the operand before its only fold; in ``spill`` the ``a`` running
    ``T_I_c`` later take the place of the ``Q`` column; ``resident`` adds
    ``a d`` running ``T``; ``two-pass`` phase 2 needs ``a2 c2 + a2`` and its
    values in flight (two when ``a2 = 1``, three otherwise).

    Examples
    --------
    >>> tiled_forward_need(4, 2, 3), tiled_forward_need(4, 2, 3, "resident"), tiled_forward_need(4, 2, 3, "two-pass", a2=2, c2=4)
    (13, 21, 13)
    >>> tiled_forward_need(2, 1, 1, "resident", keep_q=True)  # Q_i, T_i (2 each), l_i, S_i_j, a product, a new sum
    8
    """
    _check_mode(mode)
    q = a * d if keep_q else a
    flight = in_flight(a)
    if mode == "spill":
        # the running T_I_c (a) take the place of the Q column, not of a kept Q_I
        return a * b + 2 * a + flight + (a * d if keep_q else 0)
    if mode == "resident":
        return a * b + a + q + a * d + flight
    return max(a * b + a + q + flight, a2 * c2 + a2 + in_flight(a2))


def in_flight(rows: int) -> int:
    """Values in flight beside a tile of ``rows`` rows: operand, product and new sum, or two when one row reads the operand."""
    return 3 if rows > 1 else 2


def _check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"{NAME}: unknown mode {mode!r}; expected one of {MODES}")


def tiled_forward_io(params, M: int, a=None, b=None, mode=None, keep_q=False, a2=1, c2=1) -> int | None:
    """Closed-form I/O of :func:`tiled_forward` on a dense DAG (``None`` for a masked one).

    With ``N_I = ceil(n / a)``, ``N_J = ceil(n / b)``:

    * ``Q``: ``n d`` if kept, else ``n d N_J``; ``K``: ``n d N_I``; ``O``: ``n d``;
    * ``spill`` / ``resident``: ``V`` ``n d N_I``; ``spill`` adds
      ``2 n d (N_J - 1)`` loads and stores of the running ``T``;
    * ``two-pass``: ``A`` stored (``n^2``) and loaded ``ceil(d / c2)`` times,
      ``r`` stored (``n``) and loaded ``ceil(d / c2)`` times, ``V`` loaded
      ``ceil(n / a2)`` times.

    Without tile options the defaults of :func:`tiled_forward` are used.

    Examples
    --------
    >>> tiled_forward_io({"n": 4, "d": 2}, 13, a=2, b=3)   # 8*2 + 8*2 + 8*2 + 2*8*1 + 8
    72
    """
    if not is_dense(params):
        return None
    n, d = int(params["n"]), int(params["d"])
    if a is None:
        a, b, mode, keep_q, a2, c2 = _default(params, M)
    mode = mode or "spill"
    ni, nj = ceil_div(n, a), ceil_div(n, b)
    q = n * d if keep_q else n * d * nj
    io = q + n * d * ni + n * d
    if mode == "spill":
        return io + n * d * ni + 2 * n * d * (nj - 1)
    if mode == "resident":
        return io + n * d * ni
    nc2 = ceil_div(d, c2)
    return io + n * n + n + (n * n + n) * nc2 + n * d * ceil_div(n, a2)


def tiled_forward_space(params, M: int) -> list[dict]:
    """Every tiling that fits in ``M``: for each mode, ``keep_q`` and ``a``, the largest ``b`` (and phase-2 tiles).

    A larger ``b`` (``a2``) never costs more I/O at the same ``a`` (``c2``),
    so only the largest that fits is listed; ``b`` and ``a2`` stop at ``n``.

    Examples
    --------
    >>> space = tiled_forward_space({"n": 4, "d": 2}, 8)
    >>> space[0], len(space)
    ({'a': 1, 'b': 4, 'mode': 'spill', 'keep_q': False, 'a2': 1, 'c2': 1}, 8)
    """
    n, d = int(params["n"]), int(params["d"])
    out = []
    phase2 = []
    for c2 in range(1, d + 1):
        a2 = min(n, (M - 3) // (c2 + 1))
        if a2 < 2 and c2 + 1 + in_flight(1) <= M:
            a2 = 1
        if a2 >= 1:
            phase2.append((a2, c2))
    for mode in MODES:
        for keep_q in (False, True):
            for a in range(1, n + 1):
                fixed = (tiled_forward_need(d, a, 0, mode, keep_q) if mode != "two-pass"
                         else a + (a * d if keep_q else a) + in_flight(a))
                b = min(n, (M - fixed) // a)
                if b < 1:
                    break
                if mode == "two-pass":
                    out.extend({"a": a, "b": b, "mode": mode, "keep_q": keep_q, "a2": a2, "c2": c2} for a2, c2 in phase2)
                else:
                    out.append({"a": a, "b": b, "mode": mode, "keep_q": keep_q, "a2": 1, "c2": 1})
    return out


def _default(params, M):
    space = tiled_forward_space(params, M)
    if not space:
        require_fit(NAME, M, MIN_M, "tiles of one row and one key")
    if not is_dense(params):
        # without a closed form: the widest spill tiling of near-square shape
        best = min((o for o in space if o["mode"] == "spill" and not o["keep_q"]), key=lambda o: (abs(o["a"] - o["b"]), -o["a"] * o["b"]))
    else:
        best = min(space, key=lambda o: (tiled_forward_io(params, M, **o), o["a"], o["b"]))
    return best["a"], best["b"], best["mode"], best["keep_q"], best["a2"], best["c2"]


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


def tiled_forward(G, M: int, variant: str = "oneshot", a=None, b=None, mode=None, keep_q=False, a2=1, c2=1):
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
        a, b, mode, keep_q, a2, c2 = _default(G.graph["params"], M)
    mode = mode or "spill"
    _check_mode(mode)
    if min(a, b, a2, c2) < 1:
        raise ValueError(f"{NAME}: tile sizes must be >= 1, got a={a}, b={b}, a2={a2}, c2={c2}")
    need = tiled_forward_need(F.d, a, b, mode, keep_q, a2, c2)
    require_fit(NAME, M, need, f"a={a}, b={b}, mode={mode}, keep_q={keep_q}, a2={a2}, c2={c2}")
    rec = MoveRecorder(M, (), variant)
    iblocks, jblocks = blocks(range(F.n), a), blocks(F.jseq, b)
    struct = block_structure(F.rows, iblocks, jblocks)
    for ai, I in enumerate(iblocks):
        tiles = [struct[(ai, bj)] for bj in range(len(jblocks)) if (ai, bj) in struct]
        _row_block(rec, F, tiles, mode, keep_q)
    if mode == "two-pass":
        for I in blocks(range(F.n), a2):
            for C in blocks(range(F.d), c2):
                _phase2_tile(rec, F, I, C)
    options = {"a": a, "b": b, "mode": mode, "keep_q": keep_q, "a2": a2, "c2": c2}
    return rec.schedule(method=NAME, **options, io_formula=tiled_forward_io(G.graph["params"], M, **options))


def _row_block(rec, F, tiles, mode, keep_q):
    """Every tile of one row block, ``l_I`` (and ``Q_I``, ``T_I``) resident across them."""
    active = sorted({i for _, _, per in tiles for i, _ in per})
    q_block = [f"Q_{i}_{l}" for i in active for l in F.fseq] if keep_q else []
    rec.load_all(q_block)
    lrun = {}
    for _, cols, per in tiles:
        users = {j: [] for j in cols}
        for i, js in per:
            for j in js:
                users[j].append(i)
        _scores(rec, F, per, cols, users, keep_q)
        if mode == "two-pass":
            for i, js in per:
                for j in js:
                    _stored_a(rec, F, i, j)
        else:
            _fused_rest(rec, F, per, cols, users, mode, lrun)
    if mode == "two-pass":
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


def _stored_a(rec, F, i, j):
    """From the red S_i_j: A_i_j computed, stored and folded into l_i (two-pass)."""
    A = f"A_{i}_{j}"
    rec.compute(A)
    rec.delete(F.s(i, j, F.d - 1))
    rec.store(A)
    t = F.rpos[i][j]
    if t:
        rec.fold(F.l(i, t), F.l(i, t - 1), A)


def _fused_rest(rec, F, per, cols, users, mode, lrun):
    """A, l, r and the streamed A V of one tile, A resident until its products are done."""
    pending = set()
    for i, js in per:
        for j in js:
            A = f"A_{i}_{j}"
            rec.compute(A)
            rec.delete(F.s(i, j, F.d - 1))
            pending.add(A)
            t = F.rpos[i][j]
            if t:
                rec.compute(F.l(i, t))
                if F.l(i, t - 1) not in pending:
                    rec.delete(F.l(i, t - 1))
            lrun[i] = F.l(i, t)
        if F.rpos[i][js[-1]] == len(F.rows[i]) - 1:
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


def _phase2_tile(rec, F, I, C):
    """Two-pass phase 2 on the T tile I x C: A columns loaded, V streamed, then O = r T."""
    for j in F.jseq:
        rs = [i for i in I if j in F.rpos[i]]
        if not rs:
            continue
        acol = [f"A_{i}_{j}" for i in rs]
        rec.load_all(acol)
        for c in C:
            v = f"V_{j}_{c}"
            rec.load(v)
            for i in rs:
                rec.add_term(f"T_{i}_{c}", f"AV_{i}_{F.rows[i][0]}_{c}", F.rpos[i][j], len(F.rows[i]), f"AV_{i}_{j}_{c}",
                             release=(v,) if i == rs[-1] else ())
            rec.delete(v)
        rec.delete_all(acol)
    for i in I:
        if F.rows[i]:
            rec.load(f"r_{i}")
            last = len(F.rows[i]) - 1
            for c in C:
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
