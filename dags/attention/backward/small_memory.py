"""The attention backward pass in four red pebbles: P and dS made pair by pair and stored, the gradients streamed.

:func:`~spartition.families.attention.backward.materialised.materialised_backward` keeps a row of ``Q`` or
``dO`` resident and needs ``M >= d + 4``; FlashAttention's backward more. :func:`small_memory_backward` is the
same materialised pass cut down to four red pebbles, the least in which a chain sum of products is made without
storing a running value (:func:`~spartition.families.attention.four_pebbles.row_product_chain`), and
:func:`small_memory_backward_io` its exact I/O. Every node is computed once, so it is a schedule of both
standard games.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.families.attention.four_pebbles import row_product_chain
from spartition.families.attention.tiling import chain_name, index_from_dag, index_from_params, require_fit

__all__ = ["SMALL_MEMORY_BACKWARD", "small_memory_backward", "small_memory_backward_io"]

FAMILY = "attention-backward-flash"
NAME = "small-memory-backward"
#: Red pebbles the schedule needs: a product, its two operands and the running sum it joins.
NEED = 4


def small_memory_backward(G, M: int, variant: str = "oneshot"):
    """The backward pass in four red pebbles (module docstring).

    1. Row by row, pair by pair: ``S_ij`` from ``Q_i`` and ``K_j``,
       ``A_ij``, then ``P_ij`` with ``l_i`` loaded; ``P_ij`` stored.
    2. Row by row: ``D_i`` from ``dO_i`` and ``O_i`` (stored), then pair by
       pair ``dP_ij`` from ``dO_i`` and ``V_j``, ``dP_ij - D_i`` with
       ``D_i`` loaded, ``dS_ij`` with ``P_ij`` loaded; ``dS_ij`` stored.
    3. Each entry of ``dV = P^T dO``, ``dK = dS^T Q`` and ``dQ = dS K`` as a
       chain over the summed index, both operands of each term loaded;
       stored.

    Where ``d <= 2`` a row's sums over the features keep the last ``Q``
    (``dO``) entry red for the row's next sum, which starts with it.

    Parameters
    ----------
    G : networkx.DiGraph
        An ``attention-backward-flash`` DAG (chain sums; any mask and orders).
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
    Exact I/O, with ``k = 1`` if ``d <= 2`` else ``0`` (the operand kept),
    ``z_i`` the pairs of row ``i`` and ``Z`` their number, over the rows
    with a pair (``R`` of them; ``C`` columns with a pair):

    ``sum_i (2 d + (2 d - k)(z_i - 1)) + R (2 d + 1) + Z (8 d + 5 - k) + (R + 2 C) d``

    (the scores' operands; ``D_i``'s ``2 d`` operands and its store; per
    pair the gradient's operands, ``l_i``, ``D_i``, ``P_ij`` loaded, ``P_ij``
    and ``dS_ij`` stored, the ``6 d`` operands of its terms in ``dV``,
    ``dK``, ``dQ``; each output stored). Dense ``n = 32``, ``d = 2``:
    23,936.

    Examples
    --------
    >>> from spartition.families.attention.backward.dag import attention_backward_flash
    >>> from spartition.core.game import replay
    >>> G = attention_backward_flash(3, 2)
    >>> r = replay(G, small_memory_backward(G, 4))
    >>> r.io, small_memory_backward_io(G.graph["params"], 4), r.peak_red
    (243, 243, 4)
    """
    require_fit(NAME, M, NEED, "a product, its operands and a running sum")
    F = index_from_dag(G, FAMILY, NAME, marker="P")
    rec = MoveRecorder(M, (), variant)
    for i in range(F.n):
        kept = None
        for j in F.rows[i]:
            root, kept = _chain(rec, F, f"S_{i}_{j}", f"QK_{i}_{j}", "Q", i, "K", j, kept)
            rec.compute(f"A_{i}_{j}")
            rec.delete(root)
            rec.load(f"l_{i}")
            rec.compute(f"P_{i}_{j}")
            rec.delete_all([f"A_{i}_{j}", f"l_{i}"])
            rec.evict(f"P_{i}_{j}")
        rec.delete_all([] if kept is None else [f"Q_{i}_{kept}"])
    for i in range(F.n):
        if F.rows[i]:
            _gradient_row(rec, F, i)
    for j in range(F.n):
        for out, prod, mat, opnd in (("dV", "PdO", "P", "dO"), ("dK", "dSQ", "dS", "Q")):
            _streamed(rec, F.d, F.cols[j], lambda c, out=out: f"{out}_{j}_{c}",
                      lambda i, c, prod=prod: f"{prod}_{i}_{j}_{c}", lambda i, mat=mat: f"{mat}_{i}_{j}",
                      lambda i, c, opnd=opnd: f"{opnd}_{i}_{c}")
    for i in range(F.n):
        _streamed(rec, F.d, F.rows[i], lambda c: f"dQ_{i}_{c}", lambda j, c: f"dSK_{i}_{j}_{c}",
                  lambda j: f"dS_{i}_{j}", lambda j, c: f"K_{j}_{c}")
    return rec.schedule(method=NAME, io_formula=small_memory_backward_io(G.graph["params"], M))


def _chain(rec, F, total, prefix, left, i, right, j, kept):
    return row_product_chain(rec, F.fseq, total, prefix, lambda c: f"{left}_{i}_{c}", lambda c: f"{right}_{j}_{c}",
                             kept)


def _gradient_row(rec, F, i):
    """Step 2 on row ``i``: ``D_i`` (stored), then each ``dS_ij`` from ``dP_ij``, ``D_i`` and ``P_ij`` (stored)."""
    root, kept = row_product_chain(rec, F.fseq, f"D_{i}", f"dOO_{i}", lambda c: f"dO_{i}_{c}",
                                   lambda c: f"O_{i}_{c}")
    rec.evict(root)
    for j in F.rows[i]:
        dp, kept = _chain(rec, F, f"dP_{i}_{j}", f"dOV_{i}_{j}", "dO", i, "V", j, kept)
        rec.load(root)
        rec.compute(f"dPD_{i}_{j}")
        rec.delete_all([dp, root])
        rec.load(f"P_{i}_{j}")
        rec.compute(f"dS_{i}_{j}")
        rec.delete_all([f"dPD_{i}_{j}", f"P_{i}_{j}"])
        rec.evict(f"dS_{i}_{j}")
    rec.delete_all([] if kept is None else [f"dO_{i}_{kept}"])


def _streamed(rec, d, index, out, prod, mat, opnd):
    """For each feature ``c``: the chain ``out(c)`` over ``index``, each term's two operands loaded; stored."""
    if not index:
        return
    for c in range(d):
        for t, x in enumerate(index):
            rec.load_all([mat(x), opnd(x, c)])
            rec.compute(prod(x, c))
            rec.delete_all([mat(x), opnd(x, c)])
            if t:
                rec.fold(chain_name(out(c), prod(index[0], c), t, len(index)),
                         chain_name(out(c), prod(index[0], c), t - 1, len(index)), prod(x, c))
        rec.evict(chain_name(out(c), prod(index[0], c), len(index) - 1, len(index)))


def small_memory_backward_io(params, M: int) -> int:
    """Closed-form I/O of :func:`small_memory_backward` (see its Notes).

    Examples
    --------
    >>> n, d = 32, 2
    >>> small_memory_backward_io({"n": n, "d": d}, 4) == n * (4 + 31 * 3) + n * 5 + n * n * (3 + 5 + 12) + 3 * n * d
    True
    """
    require_fit(NAME, M, NEED, "a product, its operands and a running sum")
    F = index_from_params(params)
    d, k = F.d, 1 if F.d <= 2 else 0
    sizes = [len(r) for r in F.rows if r]
    cols = sum(1 for c in F.cols if c)
    scores = sum(2 * d + (2 * d - k) * (z - 1) for z in sizes)
    return scores + len(sizes) * (2 * d + 1) + sum(sizes) * (8 * d + 5 - k) + (len(sizes) + 2 * cols) * d


SMALL_MEMORY_BACKWARD = Algorithm(
    name=NAME,
    families=(FAMILY,),
    generate=small_memory_backward,
    io_formula=small_memory_backward_io,
    min_memory=lambda params: NEED,
    source="spartition: the standard backward pass (P and dS in slow memory) in four red pebbles, pair by pair; "
           "for M < d + 4, below the materialised pass",
)
