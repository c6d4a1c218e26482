"""A COSMA-style tiling of the attention backward pass: a resident score tile, every operand streamed.

:func:`tiled_backward` walks the ``attention-backward-flash`` DAG in tiles
of ``a`` query rows by ``b`` keys, row blocks outer (in ``iorder``), key
blocks inner (in ``jorder``). The ``a x b`` tile of ``S``, then ``P``, then
``dS`` stays in fast memory while the inner dimension is streamed, as in
:mod:`spartition.families.attention.forward.tiled`; the ``n x d`` operands and the
``n x d`` outputs pass one column of the tile at a time. Per tile, for every
feature in turn:

=========  ==============================================================
stage      what is resident / streamed
=========  ==============================================================
``S``      ``Q_I_l`` loaded, ``K_j_l`` streamed: ``S = Q K^T`` on the tile;
           then ``P = exp(S) / l`` (``l_i`` loaded per row)
``dV``     the running ``dV_J_c`` loaded, ``dO_i_c`` streamed, folded
           ``P_i_j dO_i_c``; the running ``dV_J_c`` stored again
``dP``     ``dO_I_c`` loaded, ``V_j_c`` streamed: ``dP = dO V^T``; then
           ``dPD = dP - D`` (``D_i`` loaded per row) and ``dS = P dPD``
``dQ``     the running ``dQ_I_l`` loaded (or kept, ``keep_dq``),
           ``K_j_l`` streamed, folded ``dS_i_j K_j_l``; stored again
``dK``     the running ``dK_J_l`` loaded, ``Q_i_l`` streamed, folded
           ``dS_i_j Q_i_l``; stored again
=========  ==============================================================

With ``spill`` the ``P`` tile is stored after the ``dV`` stage and read back
entry by entry for ``dS``, so that only one ``a x b`` tile is ever resident
(fast memory ``ab + max(a, b) + 3``, down to 4 at ``a = b = 1``, one above
the smallest M of any schedule); without it ``P`` and ``dP`` are resident
together (``2ab + a + 3``) and the ``dV`` and ``dP`` stages are one pass:
``dO_I_c`` loaded once, ``V_j_c`` and the running ``dV_j_c`` streamed. ``D_i = sum_c dO_i_c O_i_c`` is computed once, at
the start of its row block, and stored (or, with ``keep_ld``, kept in fast
memory with ``l_I`` across the row block). An operand whose last use is the
product just computed is deleted before that product is folded into its sum,
which is what lets one-entry tiles run at M = 4.

With ``outer="keys"`` the key blocks are the outer loop, as in
FlashAttention's backward pass: ``keep_kv`` and ``keep_dkv`` then keep the
key block's ``K_J, V_J`` and its running ``dK_J, dV_J`` in fast memory while
every row passes, one feature at a time, where the paper loads ``B_r x d``
blocks of ``Q, O, dO, dQ``; each ``dK``, ``dV`` entry is stored once, when
its sum is complete. ``keep_q`` keeps ``Q_I`` from a tile's ``S`` stage to
its ``dK`` stage in either order.

Every node is computed once, so the schedule is valid in both game variants.

References
----------
Kwasniewski et al., "Red-blue pebbling revisited: near optimal parallel
matrix-matrix multiplication" (SC 2019), the resident output tile streaming
the inner dimension; Dao et al., "FlashAttention" (NeurIPS 2022),
Algorithm 4, the backward pass this DAG encodes.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.backward.tiled_io import (
    MIN_M,
    NAME,
    default_tiles,
    tiled_backward_io,
    tiled_backward_need,
    tiled_backward_space,
)
from spartition.families.attention.tiling import (
    AttentionIndex,
    block_structure,
    blocks,
    chain_name,
    index_from_dag,
    require_fit,
)

__all__ = ["TILED_BACKWARD", "tiled_backward"]


FAMILY = "attention-backward-flash"


class _Backward(AttentionIndex):
    """The index structure of an attention-backward-flash DAG with the names of its running sums."""

    __slots__ = ()

    def s(self, i, j, p):
        return chain_name(f"S_{i}_{j}", f"QK_{i}_{j}_{self.fseq[0]}", p, self.d)

    def dp(self, i, j, p):
        return chain_name(f"dP_{i}_{j}", f"dOV_{i}_{j}_{self.fseq[0]}", p, self.d)

    def dd(self, i, p):
        return chain_name(f"D_{i}", f"dOO_{i}_{self.fseq[0]}", p, self.d)

    def dq(self, i, x, t):
        r = self.rows[i]
        return chain_name(f"dQ_{i}_{x}", f"dSK_{i}_{r[0]}_{x}", t, len(r))

    def dv(self, j, c, t):
        col = self.cols[j]
        return chain_name(f"dV_{j}_{c}", f"PdO_{col[0]}_{j}_{c}", t, len(col))

    def dk(self, j, x, t):
        col = self.cols[j]
        return chain_name(f"dK_{j}_{x}", f"dSQ_{col[0]}_{j}_{x}", t, len(col))


def tiled_backward(G, M: int, variant: str = "oneshot", a=None, b=None, spill=None, keep_dq=False, keep_ld=False,
                   outer="rows", keep_kv=False, keep_dkv=False, keep_q=False):
    """COSMA-style tiled attention backward (module docstring): ``a x b`` score tiles, operands streamed.

    Row blocks ``I`` of ``a`` rows (in ``iorder``) outer, key blocks ``J`` of
    ``b`` keys (in ``jorder``) inner, or (``outer="keys"``) the other way
    round, the loop order of FlashAttention's backward pass. ``D_i`` is
    computed and stored before the first tile of row ``i``. On each tile,
    the stages ``S``/``P``, ``dV``, ``dP``/``dS``, ``dQ``, ``dK`` of the
    module docstring, each streaming one feature at a time; the running
    ``dV_J``, ``dK_J`` (unless ``keep_dkv``) and ``dQ_I`` (unless
    ``keep_dq``) go back to slow memory after every tile.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-backward-flash`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least :func:`tiled_backward_need` of the tiles
        (4 for ``a = b = 1`` with ``spill``).
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    a, b : int, optional
        Rows and keys per tile; by default the tiling of
        :func:`tiled_backward_space` with the least closed-form I/O.
    spill : bool, optional
        Store the ``P`` tile after ``dV`` and read it back for ``dS``
        (default ``True``): one resident tile instead of two.
    keep_dq : bool
        Keep the ``a d`` running ``dQ_I`` in fast memory across the row block.
    keep_ld : bool
        Keep ``l_I`` and ``D_I`` in fast memory across the row block (``D``
        is then never stored).
    outer : {"rows", "keys"}
        The outer loop: row blocks (``keep_dq``, ``keep_ld`` apply) or key
        blocks (``keep_kv``, ``keep_dkv`` apply).
    keep_kv : bool
        Keep ``K_J`` and ``V_J`` in fast memory across the key block: each
        entry is loaded once.
    keep_dkv : bool
        Keep the running ``dK_J`` and ``dV_J`` across the key block: each
        entry is stored once, when its sum is complete, and never loaded.
    keep_q : bool
        Keep ``Q_I`` from a tile's ``S`` stage to its ``dK`` stage (loaded
        once per tile, not twice).

    Returns
    -------
    Schedule
        ``meta`` records the tiling.

    Raises
    ------
    InfeasibleMemory
        If the tiles do not fit (the message names the M they need).
    ValueError
        If a tile size is below 1, or a ``keep_`` option does not belong to
        the loop order.

    Notes
    -----
    Exact I/O: :func:`tiled_backward_io`, about ``n^2 d (6/b + 7/a)``:
    ``O(n^2 d / sqrt(M))`` where FlashAttention backward costs
    ``O(n^2 d^2 / M)`` and needs ``M >= 7d + 6``. With key blocks outer and
    ``K_J, V_J, dK_J, dV_J`` resident it is FlashAttention's own algorithm
    with the rows streamed one feature at a time instead of loaded as
    ``B_r x d`` blocks: about ``n^2 (4d + 2) / b`` with ``4 b d`` of the
    memory, so ``b`` about ``M / 4d`` keys where the paper's blocks fit
    fewer.

    Examples
    --------
    >>> from spartition.families.attention.backward.dag import attention_backward_flash
    >>> from spartition.core.game import replay
    >>> G = attention_backward_flash(2, 1)
    >>> r = replay(G, tiled_backward(G, 4, a=1, b=1))
    >>> r.io, r.peak_red
    (68, 4)
    >>> replay(G, tiled_backward(G, 9, a=1, b=1, outer="keys", keep_kv=True)).io
    60

    References
    ----------
    Kwasniewski et al. (SC 2019); Dao et al. (NeurIPS 2022), Algorithm 4.
    """
    F = index_from_dag(G, FAMILY, NAME, "P", cls=_Backward)
    if a is None:
        return tiled_backward(G, M, variant, **default_tiles(G.graph["params"], M))
    spill = True if spill is None else bool(spill)
    if min(a, b) < 1:
        raise ValueError(f"{NAME}: tile sizes must be >= 1, got a={a}, b={b}")
    need = tiled_backward_need(F.d, a, b, spill, keep_dq, keep_ld, outer, keep_kv, keep_dkv, keep_q)
    options = {"a": a, "b": b, "spill": spill, "keep_dq": keep_dq, "keep_ld": keep_ld}
    if outer == "keys" or keep_q:
        options.update(outer=outer, keep_kv=keep_kv, keep_dkv=keep_dkv, keep_q=keep_q)
    require_fit(NAME, M, need, ", ".join(f"{k}={v}" for k, v in options.items()))
    rec = MoveRecorder(M, (), variant)
    iblocks, jblocks = blocks(F.iseq, a), blocks(F.jseq, b)
    struct = block_structure(F.rows, iblocks, jblocks)
    keep = {"keep_dq": keep_dq, "keep_ld": keep_ld, "keep_dkv": keep_dkv, "keep_q": keep_q}
    if outer == "rows":
        for ai in range(len(iblocks)):
            tiles = [struct[(ai, bj)] for bj in range(len(jblocks)) if (ai, bj) in struct]
            if not tiles:
                continue
            for i in sorted({i for _, _, per in tiles for i, _ in per}, key=F.iseq.index):
                _d_row(rec, F, i, keep_ld)
            for _, cols, per in tiles:
                _tile(rec, F, cols, per, spill, **keep)
    else:
        has_d = set()
        for bj in range(len(jblocks)):
            tiles = [struct[(ai, bj)] for ai in range(len(iblocks)) if (ai, bj) in struct]
            held = {f"{x}_{j}_{f}" for x in "KV" for j in jblocks[bj] for f in F.fseq} if keep_kv else set()
            rec.pinned |= held  # loaded at their first use, then kept until the key block ends
            for _, cols, per in tiles:
                for i, _ in per:
                    if i not in has_d:
                        _d_row(rec, F, i, False)
                        has_d.add(i)
                _tile(rec, F, cols, per, spill, **keep)
            rec.pinned -= held
            rec.delete_all(sorted(held))
    return rec.schedule(method=NAME, **options, io_formula=tiled_backward_io(G.graph["params"], M, **options))


def _fold(rec, name, first, t, k, term, done):
    """Compute ``term``, the ``t``-th of the ``k`` terms of chain sum ``name``; drop ``done``; fold the term in.

    The operands in ``done`` have no use left, so they go before the fold
    rather than after it: one value less in flight.
    """
    rec.compute(term)
    rec.delete_all(done)
    if t:
        rec.fold(chain_name(name, first, t, k), chain_name(name, first, t - 1, k), term)


def _d_row(rec, F, i, keep):
    """``D_i = sum_c dO_i_c O_i_c``, computed from one pair of operands at a time; stored unless kept."""
    first = f"dOO_{i}_{F.fseq[0]}"
    for p, c in enumerate(F.fseq):
        rec.load(f"dO_{i}_{c}")
        rec.load(f"O_{i}_{c}")
        _fold(rec, f"D_{i}", first, p, F.d, f"dOO_{i}_{c}", [f"dO_{i}_{c}", f"O_{i}_{c}"])
    if not keep:
        rec.evict(F.dd(i, F.d - 1))


def _row_done(F, i, js):
    """Whether the tile's pairs ``js`` of row ``i`` end the row (its last allowed ``j``)."""
    return F.rpos[i][js[-1]] == len(F.rows[i]) - 1


def _tile(rec, F, cols, per, spill, keep_dq, keep_ld, keep_dkv, keep_q):
    """The five stages of one tile (module docstring)."""
    users = {j: [] for j in cols}
    for i, js in per:
        for j in js:
            users[j].append(i)
    q_held = {f"Q_{i}_{f}" for i, _ in per for f in F.fseq} if keep_q else set()
    rec.pinned |= q_held  # from the S stage to the dK stage, which reads each entry for the last time
    _stage_s(rec, F, cols, per, users, keep_ld)
    if spill:
        _stage_dv(rec, F, cols, per, keep_dkv)
        for i, js in per:
            for j in js:
                rec.evict(f"P_{i}_{j}")
        _stage_dp(rec, F, cols, per, users)
    else:
        _stage_dp_dv(rec, F, cols, per, users, keep_dkv)
    _stage_ds(rec, F, per, keep_ld)
    _stage_dq(rec, F, cols, per, users, keep_dq)
    rec.pinned -= q_held
    _stage_dk(rec, F, cols, per, keep_dkv)
    for i, js in per:
        rec.delete_all(f"dS_{i}_{j}" for j in js)


def _tile_product(rec, F, cols, per, users, row, col, out, product):
    """``out = row col^T`` on the tile: per feature, the rows' ``row_I_f`` loaded, each ``col_j_f`` streamed and
    folded into every ``out_i_j`` (``product_i_j_f``); an operand is deleted before the fold of its last product."""
    last = {i: js[-1] for i, js in per}
    for p, f in enumerate(F.fseq):
        rec.load_all(f"{row}_{i}_{f}" for i, _ in per)
        for j in cols:
            streamed = f"{col}_{j}_{f}"
            rec.load(streamed)
            for u, i in enumerate(users[j]):
                done = ([streamed] if u == len(users[j]) - 1 else []) + ([f"{row}_{i}_{f}"] if last[i] == j else [])
                _fold(rec, f"{out}_{i}_{j}", f"{product}_{i}_{j}_{F.fseq[0]}", p, F.d, f"{product}_{i}_{j}_{f}", done)


def _stage_s(rec, F, cols, per, users, keep_ld):
    """``S = Q K^T`` on the tile (``Q_I_l`` loaded, ``K_j_l`` streamed), then ``P = exp(S) / l``."""
    _tile_product(rec, F, cols, per, users, "Q", "K", "S", "QK")
    for i, js in per:
        rec.load(f"l_{i}")
        for j in js:
            rec.compute(f"A_{i}_{j}")
            rec.delete(F.s(i, j, F.d - 1))
            rec.compute(f"P_{i}_{j}")
            rec.delete(f"A_{i}_{j}")
        if not keep_ld or _row_done(F, i, js):
            rec.delete(f"l_{i}")


def _stage_dv(rec, F, cols, per, keep):
    """``dV += P^T dO``: the running ``dV_J_c`` loaded, ``dO_i_c`` streamed, ``dV_J_c`` stored again."""
    _stage_column_sums(rec, F, cols, per, F.dv, "dV", "PdO", "dO", keep)


def _release_column_sum(rec, F, running, j, c, last_user, keep):
    """Store the running column sum after the tile's last row of key ``j``, or (``keep``) only when it is complete."""
    t = F.cpos[j][last_user[j]]
    if not keep or t == len(F.cols[j]) - 1:
        rec.evict(running(j, c, t))


def _stage_column_sums(rec, F, cols, per, running, out, product, streamed, keep):
    """Per feature ``c``: the running sums ``out_j_c`` of the tile's columns loaded (unless ``keep`` holds them),
    ``streamed_i_c`` read once per row and folded into every column's sum (``product_i_j_c``), each sum stored
    again after its last row (with ``keep``, once complete)."""
    first_user, last_user = _users_span(per)
    for c in range(F.d):
        for j in cols:
            t0 = F.cpos[j][first_user[j]]
            if t0:
                rec.load(running(j, c, t0 - 1))
        for i, js in per:
            o = f"{streamed}_{i}_{c}"
            rec.load(o)
            for j in js:
                col = F.cols[j]
                _fold(rec, f"{out}_{j}_{c}", f"{product}_{col[0]}_{j}_{c}", F.cpos[j][i], len(col),
                      f"{product}_{i}_{j}_{c}", [o] if j == js[-1] else [])
        for j in cols:
            _release_column_sum(rec, F, running, j, c, last_user, keep)


def _users_span(per):
    """For every key of the tile: its first and its last row there."""
    first, last = {}, {}
    for i, js in per:
        for j in js:
            first.setdefault(j, i)
            last[j] = i
    return first, last


def _stage_dp(rec, F, cols, per, users):
    """``dP = dO V^T`` on the tile: ``dO_I_c`` loaded, ``V_j_c`` streamed."""
    _tile_product(rec, F, cols, per, users, "dO", "V", "dP", "dOV")


def _stage_dp_dv(rec, F, cols, per, users, keep_dkv):
    """``dP = dO V^T`` and ``dV += P^T dO`` in one pass: ``dO_I_c`` loaded once, ``V_j_c`` and the running ``dV_j_c`` streamed."""
    first_user, last_user = _users_span(per)
    last = {i: js[-1] for i, js in per}
    for p, c in enumerate(F.fseq):
        rec.load_all(f"dO_{i}_{c}" for i, _ in per)
        for j in cols:
            v = f"V_{j}_{c}"
            rec.load(v)
            for u, i in enumerate(users[j]):
                _fold(rec, f"dP_{i}_{j}", f"dOV_{i}_{j}_{F.fseq[0]}", p, F.d, f"dOV_{i}_{j}_{c}",
                      [v] if u == len(users[j]) - 1 else [])
            t0 = F.cpos[j][first_user[j]]
            if t0:
                rec.load(F.dv(j, c, t0 - 1))
            col = F.cols[j]
            for i in users[j]:
                _fold(rec, f"dV_{j}_{c}", f"PdO_{col[0]}_{j}_{c}", F.cpos[j][i], len(col), f"PdO_{i}_{j}_{c}",
                      [f"dO_{i}_{c}"] if last[i] == j else [])
            _release_column_sum(rec, F, F.dv, j, c, last_user, keep_dkv)


def _stage_ds(rec, F, per, keep_ld):
    """``dPD = dP - D`` (``D_i`` loaded per row unless kept) and ``dS = P dPD`` (``P`` read back if spilled)."""
    for i, js in per:
        D = F.dd(i, F.d - 1)
        rec.load(D)
        for j in js:
            rec.compute(f"dPD_{i}_{j}")
            rec.delete(F.dp(i, j, F.d - 1))
        if not keep_ld or _row_done(F, i, js):
            rec.delete(D)
        for j in js:
            rec.load(f"P_{i}_{j}")  # spilled after dV, or still resident
            rec.compute(f"dS_{i}_{j}")
            rec.delete(f"P_{i}_{j}")
            rec.delete(f"dPD_{i}_{j}")


def _stage_dq(rec, F, cols, per, users, keep_dq):
    """``dQ += dS K``: the running ``dQ_I_l`` loaded (unless kept), ``K_j_l`` streamed, stored again."""
    for x in range(F.d):
        for i, js in per:
            t0 = F.rpos[i][js[0]]
            if t0:
                rec.load(F.dq(i, x, t0 - 1))
        for j in cols:
            k = f"K_{j}_{x}"
            rec.load(k)
            for u, i in enumerate(users[j]):
                row = F.rows[i]
                _fold(rec, f"dQ_{i}_{x}", f"dSK_{i}_{row[0]}_{x}", F.rpos[i][j], len(row), f"dSK_{i}_{j}_{x}",
                      [k] if u == len(users[j]) - 1 else [])
        for i, js in per:
            if not keep_dq or _row_done(F, i, js):
                rec.evict(F.dq(i, x, F.rpos[i][js[-1]]))


def _stage_dk(rec, F, cols, per, keep):
    """``dK += dS^T Q``: the running ``dK_J_l`` loaded, ``Q_i_l`` streamed (or kept), ``dK_J_l`` stored again."""
    _stage_column_sums(rec, F, cols, per, F.dk, "dK", "dSQ", "Q", keep)


TILED_BACKWARD = Algorithm(
    name=NAME,
    families=(FAMILY,),
    generate=tiled_backward,
    io_formula=tiled_backward_io,
    min_memory=lambda params: MIN_M,
    search_space=tiled_backward_space,
    source="Kwasniewski et al., SC 2019 (COSMA): resident score tile, inner dimension streamed, running "
    "dQ, dK, dV spilled or kept; applied to the FlashAttention backward pass (Dao et al. 2022, Algorithm 4), "
    "in its loop order or the other",
)
