"""The small-cache backward algorithm of Li et al. (their Algorithm 6) as a schedule on ``attention-backward-weights``.

:func:`li_small_cache_backward`: every matrix product of the gradient chain done with square tiles, the n x n
and n x d intermediates written to slow memory between products; :func:`li_small_cache_backward_io` is its
exact I/O. Block pairs of a masked DAG with no allowed ``(i, j)`` are skipped. Every node is computed once, so
the schedule is valid in both game variants.

References
----------
Li, Liang, Shi, Song, Yue, Zhang, "On Fine-Grained I/O Complexity of Attention Backward Passes"
(arXiv 2410.09397), Algorithm 6: O((n^2 d + n d^2) / sqrt(M)) for small M.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.forward.square_tiling import square_tile
from spartition.families.attention.tiling import (
    AttentionIndex,
    blocks,
    ceil_div,
    chain_name,
    chosen_side,
    index_from_dag,
    index_from_params,
    is_dense,
    require_fit,
    tiled_product,
    tiled_product_loads,
)

__all__ = ["LI_SMALL_CACHE_BACKWARD", "li_small_cache_backward", "li_small_cache_backward_io"]


WEIGHTS_FAMILY = "attention-backward-weights"


def _li_plan(F, b, zb=None):
    n, d = F.n, F.d
    zb = b if zb is None else zb  # the summed index streamed in blocks of zb (1: one entry at a time)
    allowed = [set(r) for r in F.rows]
    fs, rows = F.fseq, F.rows
    ib = blocks(range(n), b)
    return {
        "A": (ib, blocks(range(d), b), blocks(fs, zb), lambda i, k: fs, lambda i, m: ("A1", i, m), lambda m, k: ("X", m, k)),
        "B": (ib, blocks(range(d), b), blocks(fs, zb), lambda j, c: fs, lambda j, m: ("A3", j, m), lambda m, c: ("Y", m, c)),
        "C": (ib, blocks(F.jseq, b), blocks(fs, zb), lambda i, j: fs if j in allowed[i] else (),
              lambda i, k: ("L", i, k), lambda k, j: ("A2", j, k)),
        "E": (ib, blocks(range(d), b), blocks(F.jseq, zb), lambda i, c: rows[i],
              lambda i, j: ("f", i, j), lambda j, c: ("h", j, c)),
        "F": (ib, blocks(F.jseq, b), blocks(fs, zb), lambda i, j: fs if j in allowed[i] else (),
              lambda i, c: ("c", i, c), lambda c, j: ("h", j, c)),
        "H": (ib, blocks(range(d), b), blocks(F.jseq, zb), lambda i, k: rows[i],
              lambda i, j: ("p", i, j), lambda j, k: ("A2", j, k)),
        "I": (blocks(range(d), b), blocks(range(d), b), blocks(F.iseq, zb), lambda m, k: F.iseq,
              lambda m, i: ("A1", i, m), lambda i, k: ("R", i, k)),
    }


def li_small_cache_backward(G, M: int, variant: str = "oneshot", b=None, z=None):
    """Li et al.'s small-cache algorithm (Algorithm 6): square tiles, intermediates in slow memory.

    Every product of the gradient chain is a tiled matrix product with
    square tiles of side ``b = square_tile(M)`` (``floor(sqrt(M/4))``): an
    output tile stays in fast memory while operand tiles stream over the
    summed index, then the tile is written to slow memory. The stages:

    A. ``L = A1 X``; B. ``h = A3 Y`` (n x d, stored);
    C. ``S = L A2^T`` tile by tile, ``u = exp(S)`` stored, ``l_i`` kept in
       fast memory across the row's tiles, ``r_i = 1/l_i`` stored;
    D. ``f = r u`` entrywise (n x n, stored);
    E. ``z = f h``, then ``c = z - E`` (n x d, stored);
    F. ``q = c h^T`` tile by tile, ``p1 = f q`` stored, ``s_i`` kept in fast
       memory across the row's tiles and stored;
    G. ``p = p1 - s f`` entrywise (n x n, stored);
    H. ``R = p A2`` (n x d, stored); I. ``G = A1^T R`` (d x d, the output).

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-backward-weights`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least 6.
    variant : {"oneshot", "recompute"}
        Written into the schedule.

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If ``M < 6`` (see :func:`spartition.families.attention.forward.square_tiling.square_tile`).

    Notes
    -----
    The stage split is ours: the paper's summary fixes the approach (square
    tiles, n x n and n x d intermediates written to slow memory), not the
    order of the elementwise steps. Exact I/O, dense with ``n >= 2``,
    ``N = ceil(n / b)``, ``N_d = ceil(d / b)``:

    ``Q = 8 n^2 + 2 n^2 N_d + 6 n d N + 4 n d N_d + 2 d^2 N + 5 n d + 4 n + d^2``

    (a tiled ``x x z x y`` product loads its left operand ``ceil(y / b)``
    times, its right operand ``ceil(x / b)`` times). About
    ``(16 n^2 d + 12 n d^2) / sqrt(M)`` for ``b < d``: the
    ``O((n^2 d + n d^2) / sqrt(M))`` of Li et al. Masked: the same sum with
    every operand tile restricted to the rows and columns a block pair uses
    (computed by :func:`li_small_cache_backward_io`). Fast memory
    ``3 b^2 + b + 2``.

    Measured ``Q sqrt(M) / (n^2 d + n d^2)``: 19.4 (M = 16), 23.3
    (M = 64 = d^2), 31.0 (M = 256) at ``n = 64, d = 8``; 17.9 at
    ``n = 1024, d = 32, M = 64``.

    Examples
    --------
    >>> from spartition.families.attention.backward.dag import attention_backward_weights
    >>> from spartition.core.game import replay
    >>> G = attention_backward_weights(3, 2)
    >>> replay(G, li_small_cache_backward(G, 16)).io, li_small_cache_backward_io(G.graph["params"], 16)
    (248, 248)

    References
    ----------
    Li, Liang, Shi, Song, Yue, Zhang (arXiv 2410.09397), Algorithm 6 and
    the upper bound O((n^2 d + n d^2) / sqrt(M)) for M = o(d^2).
    """
    F = index_from_dag(G, WEIGHTS_FAMILY, "li-small-cache-backward", "u")
    b, z = _li_tiles(M, b, z)
    li = _Li(MoveRecorder(M, (), variant), F, _li_plan(F, b, z))
    _li_a_l(li)
    _li_b_h(li)
    _li_c_u(li)
    _li_d_f(li)
    _li_e_c(li)
    _li_f_p1(li)
    _li_g_p(li)
    _li_h_r(li)
    _li_i_g(li)
    return li.rec.schedule(
        method="li-small-cache-backward", tile=b, z=z, io_formula=li_small_cache_backward_io(G.graph["params"], M, b, z)
    )


@dataclass(frozen=True)
class _Li:
    """What every stage of Algorithm 6 shares: the recorder, the DAG's index and the plan of :func:`_li_plan`."""

    rec: MoveRecorder
    F: AttentionIndex
    plan: dict


def _li_run(li, stage, a, b, prod, acc, finish, row_end=None):
    """Run ``stage`` of the plan as a tiled product (:func:`~spartition.families.attention.tiling.tiled_product`)."""
    xb, yb, zb, terms, _, _ = li.plan[stage]
    tiled_product(li.rec, xb, yb, zb, terms, a, b, prod, acc, finish, row_end)


def _li_chain(name, first):
    """The ``acc`` of a product whose entry ``(x, y)`` is the chain sum ``name(x, y)`` starting at ``first(x, y)``."""
    return lambda x, y, zs, t: chain_name(name(x, y), first(x, y), t, len(zs))


def _li_write(li):
    """The ``finish`` of a product whose finished entries go straight to slow memory."""
    return lambda x, y, v: li.rec.evict(v)


def _li_store_and_sum(li, row_sum, i, j, v):
    """Store the red entry ``v`` of ``(i, j)`` and fold it into the running row sum ``row_sum(F, i, t)``."""
    li.rec.store(v)
    t = li.F.rpos[i][j]
    if t:
        li.rec.fold(row_sum(li.F, i, t), row_sum(li.F, i, t - 1), v)


def _finished_l(F, i, k):
    """The finished ``L_i_k = sum_m A1_i_m X_m_k``."""
    return chain_name(f"L_{i}_{k}", f"A1X_{i}_{k}_{F.fseq[0]}", F.d - 1, F.d)


def _finished_h(F, j, c):
    """The finished ``h_j_c = sum_m A3_j_m Y_m_c``."""
    return chain_name(f"h_{j}_{c}", f"A3Y_{j}_{c}_{F.fseq[0]}", F.d - 1, F.d)


def _finished_r(F, i, k):
    """The finished ``R_i_k = sum_j p_i_j A2_j_k``."""
    row = F.rows[i]
    return chain_name(f"R_{i}_{k}", f"pA2_{i}_{row[0]}_{k}", len(row) - 1, len(row))


def _running_l(F, i, t):
    """Running value of ``l_i`` after ``t + 1`` allowed ``j``."""
    row = F.rows[i]
    return chain_name(f"l_{i}", f"u_{i}_{row[0]}", t, len(row))


def _running_s(F, i, t):
    """Running value of ``s_i`` after ``t + 1`` allowed ``j``."""
    row = F.rows[i]
    return chain_name(f"s_{i}", f"p1_{i}_{row[0]}", t, len(row))


def _li_a_l(li):
    """Stage A: ``L = A1 X`` (n x d, stored)."""
    f0 = li.F.fseq[0]
    _li_run(li, "A", lambda i, m: f"A1_{i}_{m}", lambda m, k: f"X_{m}_{k}", lambda i, k, m: f"A1X_{i}_{k}_{m}",
            _li_chain(lambda i, k: f"L_{i}_{k}", lambda i, k: f"A1X_{i}_{k}_{f0}"), _li_write(li))


def _li_b_h(li):
    """Stage B: ``h = A3 Y`` (n x d, stored)."""
    f0 = li.F.fseq[0]
    _li_run(li, "B", lambda j, m: f"A3_{j}_{m}", lambda m, c: f"Y_{m}_{c}", lambda j, c, m: f"A3Y_{j}_{c}_{m}",
            _li_chain(lambda j, c: f"h_{j}_{c}", lambda j, c: f"A3Y_{j}_{c}_{f0}"), _li_write(li))


def _li_c_u(li):
    """Stage C: ``S = L A2^T`` tile by tile, ``u = exp(S)`` stored, ``l_i`` kept in fast memory, ``r_i = 1/l_i`` stored."""
    rec, F = li.rec, li.F
    f0 = F.fseq[0]

    def finish(i, j, s):
        rec.compute(f"u_{i}_{j}")
        rec.delete(s)
        _li_store_and_sum(li, _running_l, i, j, f"u_{i}_{j}")

    def row_end(X):
        for i in X:
            rec.compute(f"r_{i}")
            rec.delete(_running_l(F, i, len(F.rows[i]) - 1))
            rec.evict(f"r_{i}")

    _li_run(li, "C", lambda i, k: _finished_l(F, i, k), lambda k, j: f"A2_{j}_{k}", lambda i, j, k: f"LA2_{i}_{j}_{k}",
            _li_chain(lambda i, j: f"S_{i}_{j}", lambda i, j: f"LA2_{i}_{j}_{f0}"), finish, row_end)


def _li_d_f(li):
    """Stage D: ``f = r u`` entrywise (n x n, stored)."""
    rec, F = li.rec, li.F
    for i in range(F.n):
        rec.load(f"r_{i}")
        for j in F.rows[i]:
            rec.load(f"u_{i}_{j}")
            rec.compute(f"f_{i}_{j}")
            rec.delete(f"u_{i}_{j}")
            rec.evict(f"f_{i}_{j}")
        rec.delete(f"r_{i}")


def _li_e_c(li):
    """Stage E: ``z = f h``, then ``c = z - E`` (n x d, stored)."""
    rec, F = li.rec, li.F
    rows = F.rows

    def finish(i, c, z):
        rec.load(f"E_{i}_{c}")
        rec.compute(f"c_{i}_{c}")
        rec.delete(z)
        rec.delete(f"E_{i}_{c}")
        rec.evict(f"c_{i}_{c}")

    _li_run(li, "E", lambda i, j: f"f_{i}_{j}", lambda j, c: _finished_h(F, j, c), lambda i, c, j: f"fh_{i}_{j}_{c}",
            _li_chain(lambda i, c: f"z_{i}_{c}", lambda i, c: f"fh_{i}_{rows[i][0]}_{c}"), finish)


def _li_f_p1(li):
    """Stage F: ``q = c h^T`` tile by tile, ``p1 = f q`` stored, ``s_i`` kept in fast memory across the row and stored."""
    rec, F = li.rec, li.F
    f0 = F.fseq[0]

    def finish(i, j, q):
        rec.load(f"f_{i}_{j}")
        rec.compute(f"p1_{i}_{j}")
        rec.delete(q)
        rec.delete(f"f_{i}_{j}")
        _li_store_and_sum(li, _running_s, i, j, f"p1_{i}_{j}")

    def row_end(X):
        for i in X:
            rec.evict(_running_s(F, i, len(F.rows[i]) - 1))

    _li_run(li, "F", lambda i, c: f"c_{i}_{c}", lambda c, j: _finished_h(F, j, c), lambda i, j, c: f"ch_{i}_{j}_{c}",
            _li_chain(lambda i, j: f"q_{i}_{j}", lambda i, j: f"ch_{i}_{j}_{f0}"), finish, row_end)


def _li_g_p(li):
    """Stage G: ``p = p1 - s f`` entrywise (n x n, stored)."""
    rec, F = li.rec, li.F
    for i in range(F.n):
        s = _running_s(F, i, len(F.rows[i]) - 1)
        rec.load(s)
        for j in F.rows[i]:
            rec.load(f"f_{i}_{j}")
            rec.load(f"p1_{i}_{j}")
            rec.compute(f"sf_{i}_{j}")
            rec.delete(f"f_{i}_{j}")
            rec.compute(f"p_{i}_{j}")
            rec.delete(f"sf_{i}_{j}")
            rec.delete(f"p1_{i}_{j}")
            rec.evict(f"p_{i}_{j}")
        rec.delete(s)


def _li_h_r(li):
    """Stage H: ``R = p A2`` (n x d, stored)."""
    rows = li.F.rows
    _li_run(li, "H", lambda i, j: f"p_{i}_{j}", lambda j, k: f"A2_{j}_{k}", lambda i, k, j: f"pA2_{i}_{j}_{k}",
            _li_chain(lambda i, k: f"R_{i}_{k}", lambda i, k: f"pA2_{i}_{rows[i][0]}_{k}"), _li_write(li))


def _li_i_g(li):
    """Stage I: ``G = A1^T R`` (d x d, the output)."""
    F = li.F
    i0 = F.iseq[0]
    _li_run(li, "I", lambda m, i: f"A1_{i}_{m}", lambda i, k: _finished_r(F, i, k), lambda m, k, i: f"A1R_{i}_{m}_{k}",
            _li_chain(lambda m, k: f"G_{m}_{k}", lambda m, k: f"A1R_{i0}_{m}_{k}"), _li_write(li))


def _li_need(b, z=None):
    # the output tile, the two operand blocks (b x z each), the row sums kept across tiles, two in flight
    return b * b + 2 * b * (b if z is None else z) + b + 2


def _li_tiles(M, b, z):
    """The tile side (default the paper's) and the summed block (default the side), checked to fit."""
    b = chosen_side("li-small-cache-backward", M, b, lambda s: _li_need(s, z), square_tile)
    z = b if z is None else z
    require_fit("li-small-cache-backward", M, _li_need(b, z), f"tile side {b}, summed block {z}")
    return b, z


def _li_space(params, M):
    top = max(int(params["n"]), int(params["d"]))
    return [{"b": b, "z": z} for z in range(1, top + 1) for b in range(z, top + 1) if _li_need(b, z) <= M]


def li_small_cache_backward_io(params, M: int, b=None, z=None) -> int:
    """Exact I/O of :func:`li_small_cache_backward` (closed form in its Notes for dense DAGs).

    Sums, stage by stage, the operand tiles each product loads (for a mask:
    only the rows and columns each block pair uses) and the stores of every
    intermediate; ``s_i`` is a separate store only for rows with two or more
    allowed ``j`` (otherwise it is ``p1_i_j``, stored already).

    Examples
    --------
    >>> n, d, M = 8, 4, 16                      # b = 2: N = 4, N_d = 2
    >>> li_small_cache_backward_io({"n": n, "d": d}, M) == (8*n*n + 2*n*n*2 + 6*n*d*4 + 4*n*d*2
    ...                                                     + 2*d*d*4 + 5*n*d + 4*n + d*d)
    True
    """
    b, z = _li_tiles(M, b, z)
    if is_dense(params) and int(params["n"]) >= 2 and z == b:
        n, d = int(params["n"]), int(params["d"])
        N, Nd = ceil_div(n, b), ceil_div(d, b)
        return (8 * n * n + 2 * n * n * Nd + 6 * n * d * N + 4 * n * d * Nd + 2 * d * d * N
                + 5 * n * d + 4 * n + d * d)
    F = index_from_params(params)
    n, d = F.n, F.d
    z = sum(len(r) for r in F.rows)
    multi = sum(1 for r in F.rows if len(r) > 1)
    loads = sum(tiled_product_loads(*plan[:4], *plan[4:]) for plan in _li_plan(F, b, z).values())
    stores = (
        2 * n * d  # L, h
        + z + n  # u, r
        + z  # f
        + n * d  # c
        + z + multi  # p1, s
        + z  # p
        + n * d  # R
        + d * d  # G
    )
    elementwise = (
        z + n  # D: u, r
        + n * d  # E: E entries
        + z  # F: f
        + n + 2 * z - (n - multi)  # G: s, f, p1 (s is p1 on one-entry rows)
    )
    return loads + stores + elementwise


LI_SMALL_CACHE_BACKWARD = Algorithm(
    name="li-small-cache-backward",
    families=(WEIGHTS_FAMILY,),
    generate=li_small_cache_backward,
    io_formula=li_small_cache_backward_io,
    min_memory=lambda params: 6,
    search_space=_li_space,
    source="Li et al., arXiv 2410.09397, Algorithm 6 (square tiles, intermediates in slow memory)",
)
