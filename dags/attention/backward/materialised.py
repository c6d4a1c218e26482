"""The attention backward pass with ``P`` and ``dS`` materialised in slow memory, every product tiled.

:func:`materialised_backward` runs the ``attention-backward-flash`` DAG in
five passes, as standard (non-fused) attention does, where FlashAttention
keeps the ``n x n`` matrices out of slow memory:

1. ``P = diag(l)^-1 exp(Q K^T)``: ``a`` rows of ``Q`` (and their ``l``)
   resident, ``K`` streamed one entry at a time; ``P`` stored.
2. ``dS = P o (dO V^T - D)``: ``a`` rows of ``dO`` resident, their ``D`` made
   from ``O`` and kept, ``V`` streamed; ``P`` loaded for its one entry,
   ``dS`` stored.
3. - 5. ``dQ = dS K``, ``dK = dS^T Q``, ``dV = P^T dO``: each an ``n x d``
   output in ``x x c2`` tiles, the summed index one entry at a time
   (:func:`~spartition.families.attention.tiling.tiled_product`).

Each ``n x n`` entry is read from slow memory once per pass that needs it,
instead of being rebuilt from ``2d`` operand entries: at small ``M``, where
a fused tile holds few rows, this is the cheaper schedule (n = 32, d = 2,
M = 8: 15,264 against tiled-backward's 19,520). Dao et al.'s standard
backward pass (FlashAttention, NeurIPS 2022, Algorithm 3) writes ``dP`` too;
here ``dP`` is folded into ``dS`` as it is made. Every node is computed once,
so the schedule is valid in both game variants.

References
----------
Dao et al., "FlashAttention" (NeurIPS 2022), Algorithm 3 (standard attention
backward pass); Li et al. (arXiv 2410.09397), the backward DAG.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.tiling import (
    blocks,
    ceil_div,
    chain_name,
    index_from_dag,
    is_dense,
    require_fit,
    tiled_product,
)

__all__ = ["MATERIALISED_BACKWARD", "materialised_backward", "materialised_backward_io",
           "materialised_backward_need", "materialised_backward_space"]

FAMILY = "attention-backward-flash"
NAME = "materialised-backward"


def materialised_backward_need(d: int, a: int, x: int, c2: int) -> int:
    """Fast memory :func:`materialised_backward` uses.

    Passes 1 and 2: ``a`` resident rows of ``d`` operand entries, their ``l``
    or ``D`` and their running sums (``a (d + 2)``), and three values in
    flight (the streamed entry, a product, the new sum); with one resident
    row, two: the streamed entry is deleted after the last row's product,
    before its fold (:meth:`~spartition.authoring.moves.MoveRecorder.add_term`'s
    ``release``). Passes 3-5: the ``x c2`` running outputs, one summed
    index's ``c2`` operands of ``K``, ``Q`` or ``dO``, one entry of ``dS`` or
    ``P`` at a time (:func:`~spartition.families.attention.tiling.tiled_product`
    loads them row by row), a product and the new sum.

    Examples
    --------
    >>> materialised_backward_need(2, 3, 4, 2), materialised_backward_need(2, 1, 1, 1)
    (15, 6)
    """
    return max(a * (d + 2) + (3 if a > 1 else 2), x * c2 + c2 + 3)


def materialised_backward_space(params, M: int) -> list[dict]:
    """Every tiling that fits in ``M``: the most rows ``a``, and for each ``c2`` the most output rows ``x``.

    More rows never cost more I/O, so only the largest that fit are listed.

    Examples
    --------
    >>> materialised_backward_space({"n": 32, "d": 2}, 16)
    [{'a': 3, 'x': 12, 'c2': 1}, {'a': 3, 'x': 5, 'c2': 2}]
    """
    n, d = int(params["n"]), int(params["d"])
    a = min(n, (M - 3) // (d + 2))
    if a < 1 and M >= d + 4:
        a = 1  # one resident row releases the streamed entry before its fold (materialised_backward_need)
    if a < 1:
        return []
    out = []
    for c2 in range(1, d + 1):
        x = min(n, (M - c2 - 3) // c2)
        if x >= 1:
            out.append({"a": a, "x": x, "c2": c2})
    return out


def materialised_backward_io(params, M: int, a=None, x=None, c2=None) -> int | None:
    """Exact I/O of :func:`materialised_backward` on a dense DAG (``None`` for a masked one).

    Pass 1 loads ``Q`` and ``l`` once and ``K`` once per block of ``a`` rows,
    and stores ``P``; pass 2 loads ``dO`` and ``O`` once, ``V`` once per
    block, ``P`` once, and stores ``dS``; each of passes 3-5 loads, per output
    tile and summed index, the tile's ``x`` (or fewer) entries of ``dS`` or
    ``P`` and ``c2`` (or fewer) of ``K``, ``Q`` or ``dO``, and stores its
    ``n d`` outputs:
    ``3 n d + n + 2 n d ceil(n / a) + 3 n^2 + 3 (n (n ceil(d / c2) + d ceil(n / x)) + n d)``.

    Examples
    --------
    >>> materialised_backward_io({"n": 32, "d": 2}, 8, a=1, x=2, c2=1)
    16800
    """
    if not is_dense(params):
        return None
    n, d = int(params["n"]), int(params["d"])
    if a is None:
        a, x, c2 = _default(params, M)
    product = n * (n * ceil_div(d, c2) + d * ceil_div(n, x)) + n * d
    return 3 * n * d + n + 2 * n * d * ceil_div(n, a) + 3 * n * n + 3 * product


def _default(params, M):
    space = materialised_backward_space(params, M)
    if not space:
        require_fit(NAME, M, int(params["d"]) + 4, "one resident row")
    best = min(space, key=lambda o: (materialised_backward_io(params, M, **o) or 0, -o["x"]))
    return best["a"], best["x"], best["c2"]


def materialised_backward(G, M: int, variant: str = "oneshot", a=None, x=None, c2=None):
    """The backward pass in five passes over ``P`` and ``dS`` stored in slow memory (module docstring).

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-backward-flash`` DAG (chain sums; any mask).
    M : int
        Fast memory size, at least :func:`materialised_backward_need`.
    variant : {"oneshot", "recompute"}
        Written into the schedule.
    a : int, optional
        Rows resident in passes 1 and 2.
    x, c2 : int, optional
        Rows and columns of the output tiles of passes 3-5; by default the
        options of :func:`materialised_backward_space` with the least
        closed-form I/O.

    Returns
    -------
    Schedule
        ``meta`` records the options.

    Raises
    ------
    InfeasibleMemory
        If the options do not fit in ``M``.

    Examples
    --------
    >>> from spartition.families.attention.backward.dag import attention_backward_flash
    >>> from spartition.core.game import replay
    >>> G = attention_backward_flash(32, 2)
    >>> r = replay(G, materialised_backward(G, 8))
    >>> r.io, r.io == materialised_backward_io(G.graph["params"], 8), r.peak_red <= 8
    (15264, True, True)
    """
    F = index_from_dag(G, FAMILY, NAME, marker="P")
    if a is None:
        a, x, c2 = _default(G.graph["params"], M)
    if min(a, x, c2) < 1 or c2 > F.d:
        raise ValueError(f"{NAME}: a, x and c2 must be >= 1 (c2 <= d = {F.d}), got a={a}, x={x}, c2={c2}")
    require_fit(NAME, M, materialised_backward_need(F.d, a, x, c2), f"a={a}, x={x}, c2={c2}")
    rec = MoveRecorder(M, (), variant)
    first = F.fseq[0]
    for I in blocks(range(F.n), a):
        _scores(rec, F, I, first)
    for I in blocks(range(F.n), a):
        _gradients(rec, F, I, first)
    xs, ys = blocks(range(F.n), x), blocks(range(F.d), c2)
    # dQ_i_t = sum over j in rows[i] of dS_ij K_jt; dK_j_t and dV_j_c sum over i in cols[j]
    tiled_product(rec, xs, ys, [[j] for j in F.jseq], lambda i, t: F.rows[i],
                  lambda i, j: f"dS_{i}_{j}", lambda j, t: f"K_{j}_{t}", lambda i, t, j: f"dSK_{i}_{j}_{t}",
                  lambda i, t, js, k: chain_name(f"dQ_{i}_{t}", f"dSK_{i}_{js[0]}_{t}", k, len(js)),
                  lambda i, t, node: rec.evict(node))
    for out, prod, opnd, mat in (("dK", "dSQ", "Q", "dS"), ("dV", "PdO", "dO", "P")):
        tiled_product(rec, xs, ys, [[i] for i in F.iseq], lambda j, t: F.cols[j],
                      lambda j, i, mat=mat: f"{mat}_{i}_{j}", lambda i, t, opnd=opnd: f"{opnd}_{i}_{t}",
                      lambda j, t, i, prod=prod: f"{prod}_{i}_{j}_{t}",
                      lambda j, t, iz, k, out=out, prod=prod: chain_name(f"{out}_{j}_{t}", f"{prod}_{iz[0]}_{j}_{t}",
                                                                         k, len(iz)),
                      lambda j, t, node: rec.evict(node))
    return rec.schedule(method=NAME, a=a, x=x, c2=c2, io_formula=materialised_backward_io(G.graph["params"], M, a, x, c2))


def _streamed_sums(rec, F, I, operand, prod, total, first):
    """For each key ``j``: the chain sums ``total(i, j)`` over the features, ``operand`` streamed.

    Yields ``(i, j, root)`` for each finished sum, ``root`` its red final node.
    """
    for j in F.jseq:
        rs = [i for i in I if j in F.rpos[i]]
        if not rs:
            continue
        for p, f in enumerate(F.fseq):
            v = f"{operand}_{j}_{f}"
            rec.load(v)
            for i in rs:
                rec.add_term(total(i, j), f"{prod}_{i}_{j}_{first}", p, F.d, f"{prod}_{i}_{j}_{f}",
                             release=(v,) if i == rs[-1] else ())
        for i in rs:
            yield i, j, chain_name(total(i, j), f"{prod}_{i}_{j}_{first}", F.d - 1, F.d)


def _scores(rec, F, I, first):
    """Pass 1 on the rows ``I``: ``Q_I`` and ``l_I`` resident, ``K`` streamed, each ``P_ij`` stored."""
    resident = [f"Q_{i}_{f}" for i in I for f in F.fseq] + [f"l_{i}" for i in I]
    rec.load_all(resident)
    for i, j, s in _streamed_sums(rec, F, I, "K", "QK", lambda i, j: f"S_{i}_{j}", first):
        rec.compute(f"A_{i}_{j}")
        rec.delete(s)
        rec.compute(f"P_{i}_{j}")
        rec.delete(f"A_{i}_{j}")
        rec.evict(f"P_{i}_{j}")
    rec.delete_all(resident)


def _gradients(rec, F, I, first):
    """Pass 2 on the rows ``I``: ``dO_I`` resident, ``D_I`` made from ``O``, ``V`` streamed, each ``dS_ij`` stored."""
    rows = [f"dO_{i}_{f}" for i in I for f in F.fseq]
    rec.load_all(rows)
    D = {}
    for i in I:
        for p, f in enumerate(F.fseq):
            o = f"O_{i}_{f}"
            rec.load(o)
            rec.add_term(f"D_{i}", f"dOO_{i}_{first}", p, F.d, f"dOO_{i}_{f}", release=(o,))
        D[i] = chain_name(f"D_{i}", f"dOO_{i}_{first}", F.d - 1, F.d)
    for i, j, dp in _streamed_sums(rec, F, I, "V", "dOV", lambda i, j: f"dP_{i}_{j}", first):
        rec.compute(f"dPD_{i}_{j}")
        rec.delete(dp)
        rec.load(f"P_{i}_{j}")
        rec.compute(f"dS_{i}_{j}")
        rec.delete(f"dPD_{i}_{j}")
        rec.delete(f"P_{i}_{j}")
        rec.evict(f"dS_{i}_{j}")
    rec.delete_all(rows + list(D.values()))


MATERIALISED_BACKWARD = Algorithm(
    name=NAME,
    families=(FAMILY,),
    generate=materialised_backward,
    io_formula=materialised_backward_io,
    min_memory=lambda params: int(params["d"]) + 4,
    search_space=materialised_backward_space,
    source="Dao et al., NeurIPS 2022, Algorithm 3 (standard attention backward: P and dS in slow memory), "
    "each product tiled",
)
