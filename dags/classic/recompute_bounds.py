"""The matrix product's segment count proven in the standard game (with recomputation), through designated events.

The products of ``matmul`` counted per segment over their designated compute
events (:mod:`spartition.partition.designation`): Loomis-Whitney over the
entries of ``A`` and ``B`` read and the sums touched, with step 11's shared
boundaries (:mod:`spartition.families.common.segments`). Valid in both games:
a oneshot schedule is a standard one. The forward-attention counts of the
same kind are :mod:`spartition.families.attention.forward.recompute_bounds`.

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981): the game
and the segment argument. Irony, Toledo & Tiskin, "Communication lower bounds
for distributed-memory matrix multiplication" (JPDC 2004): the Loomis-Whitney
count. Smith, Lowery, Langou & van de Geijn, "A tight I/O lower bound for
matrix multiplication" (2019): the same setting with the red pebbles at the
boundaries, ``2 m n k / sqrt(M)``.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.common.papers import SEGMENTS
from spartition.families.common.segments import SegmentBound, capped_shared_bound
from spartition.partition.designation import designate, designated_segments
from spartition.study.formulas import Formula


__all__ = ["MATMUL_SEGMENT_FORMULA", "matmul_segment_bound", "matmul_segment_capacity", "matmul_segment_charges"]


@lru_cache(maxsize=1 << 14)
def matmul_segment_capacity(a: int, b: int, c: int, T: int, L: int) -> int:
    """The most distinct products ``P_i_j_k`` with a designated event in one segment (both games).

    Parameters
    ----------
    a, b, c : int
        ``A`` is ``a x b``, ``B`` is ``b x c`` (``b`` the summed index).
    T : int
        A bound on ``|B'|``: the segment's red pebbles at its start, loads,
        stores and non-inputs red at its end
        (:func:`~spartition.families.common.segments.shared_budgets`).
    L : int
        A bound on the inputs red at its start or loaded.

    Returns
    -------
    int
        ``F(T, L) = max min(sqrt(x y z), b z, x y, c x, a y)`` over integers
        ``0 <= x <= ab``, ``0 <= y <= bc``, ``x + y <= L``, ``z = min(ac, T - x
        - y) >= 0`` (the objective grows with ``z``); 0 if no point is feasible.

    Notes
    -----
    **Proof.** Fix a valid schedule of the standard game, cut into segments,
    and a segment ``sigma`` with its sets as in step 11 of
    :func:`~spartition.families.attention.forward.bounds.segment_capacity`: ``B' =``
    (red at its start) + (loaded) + (stored) + (non-inputs red at its end,
    none for the segment that ends the schedule).

    1. *Inputs.* A designated event of ``P_i_j_k`` in ``sigma`` reads
       ``A_i_k`` and ``B_k_j``, red then. Inputs are never computed, so each
       was red at the start of ``sigma`` or loaded in it: with ``x`` entries of
       ``A`` and ``y`` of ``B`` read by such events, ``x + y <= L`` and they lie
       in ``B'``.
    2. *One designated tree per sum.* ``Tree(i, j)``, the products of ``C_i_j``
       and its add nodes, is an in-tree whose root ``C_i_j`` is an output
       (a sum of one term is the product itself); every other node has one
       successor, inside the tree. So each node of it has exactly one
       designated event (designation lemma, part 1: the root's is its final
       event, and each designated event reads each operand once), and these
       events form a copy of the tree, each event reading its children's.
    3. *Touched sums meet* ``B'``. If the designated copy of ``Tree(i, j)``
       has an event in ``sigma`` and one outside, some tree edge joins an
       event in ``sigma`` to one outside it: by part 2 of the lemma its
       operand's node is red at the start of ``sigma`` or loaded (the edge
       enters ``sigma``), or red at its end or stored (it leaves; then a later
       segment exists, so the end is not the schedule's). If all of it is in
       ``sigma``, the root's final event is, and by part 3 ``C_i_j`` is stored
       in ``sigma`` or red at its end (not the schedule's end). Either way a
       non-input node of ``Tree(i, j)`` is in ``B'``; the trees are disjoint,
       so the ``z`` sums touched (with a designated product in ``sigma``)
       number at most ``|B'| - x - y``, ``z <= T - x - y``, and ``z <= ac``.
    4. *Loomis-Whitney.* The products counted lie in ``{(i, j, k): A_i_k
       read, B_k_j read, (i, j) touched}``, whose projections have ``x``,
       ``y`` and ``z`` points: at most ``sqrt(x y z)`` of them (Irony, Toledo
       & Tiskin), at most ``b z`` (``b`` per sum), ``x y`` (a product is fixed
       by its two operands), ``c x`` and ``a y``.

    Recomputation enters only through step 2 (one designated event per node
    of a tree, however often it is computed) and the lemma's parts 2 and 3,
    which hold in both games; nothing is assumed about how often a product
    is computed.

    Examples
    --------
    One middle segment of ``S = 4`` moves at ``M = 4``, square ``8 x 8 x 8``:
    ``T = 2M + S = 12``, ``L = M + S = 8``; ``x = y = 4``, ``z = 4`` give
    ``sqrt(64) = 8``:

    >>> matmul_segment_capacity(8, 8, 8, 12, 8)
    8
    """
    xs = np.arange(0, min(a * b, L) + 1)[:, None]
    ys = np.arange(0, min(b * c, L) + 1)[None, :]
    z = np.minimum(a * c, T - xs - ys)
    ok = (xs + ys <= L) & (z >= 0)
    if not ok.any():
        return 0
    zf = np.maximum(z, 0).astype(float)
    value = np.minimum.reduce([np.sqrt(xs * ys * zf), b * zf, (xs * ys).astype(float) + 0 * zf,
                               (c * xs).astype(float) + 0 * zf, (a * ys).astype(float) + 0 * zf])
    return math.floor(float(value[ok].max()) + 1e-9)


@lru_cache(maxsize=256)
def matmul_segment_bound(a: int, b: int, c: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)`` from :func:`matmul_segment_capacity`: a lower bound in both games.

    **Proof.** Cut any valid schedule (standard or oneshot game) with ``Q``
    I/O moves after every ``S``-th one: ``h = ceil(Q / S)`` segments (moves
    after the last I/O move join the last segment), so ``Q >= S (h - 1)``.
    Every product reaches an output, so it has a designated event (the
    designation lemma, part 1), in some segment: the ``W = a b c`` products
    are at most the sum over segments of the distinct products with a
    designated event there. A segment with ``a'`` red non-inputs at its start
    and ``b'`` at its end counts at most :func:`matmul_segment_capacity` at
    :func:`~spartition.families.common.segments.shared_budgets` ``(M, S, a', b')``
    (the first with nothing red at its start, the last with nothing needed at
    its end), and the ``b'`` of one segment is the ``a'`` of the next; so
    ``h`` is at least :func:`~spartition.families.common.segments.shared_segments_needed`
    of these counts. Any ``S`` gives a valid bound; the search (a grid of
    multiples of ``M``, then the ends of the sawtooth's teeth) only decides
    how strong it is.

    Returns
    -------
    SegmentBound
        ``weight`` ``"P"`` (the ``a b c`` products), ``shared`` true.

    Examples
    --------
    >>> b = matmul_segment_bound(8, 8, 8, 4)
    >>> b.value, b.value == b.S * (b.segments - 1), b.value > 8 * 8 * 3  # above the trivial 3 n^2
    (384, True, True)
    """
    W = a * b * c
    return capped_shared_bound(W, M, 4 * (W + a * b + b * c + a * c + M),
                        lambda TL: matmul_segment_capacity(a, b, c, *TL), "P")


def matmul_segment_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` I/O moves: the quantities :func:`matmul_segment_capacity`'s proof bounds.

    For the tests, on any valid schedule of the ``matmul`` DAG (either game):
    ``products`` (distinct, with a designated event in the segment), ``x`` and
    ``y`` (entries of ``A`` and ``B`` they read), ``z`` (sums touched),
    ``met`` (touched sums with a node in ``B'``), ``inputs_available`` and
    ``B_shared`` (``|B'|``), ``a`` and ``b`` (the red non-inputs at its ends).
    """
    d = designate(G, schedule)
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    out = []
    for seg in designated_segments(d, schedule, S):
        prods = {v for v in seg.nodes if entry[v][:1] == ("P",)}
        reads = {u for e in seg.events if entry[d.nodes[e]][:1] == ("P",) for u, _ in d.operands[e]}
        end = frozenset() if seg.last else {v for v in seg.end if G.in_degree(v)}
        shared = seg.start | seg.loaded | seg.stored | end
        touched = {entry[v][1:3] for v in prods}
        met = {entry[v][1:3] for v in shared if entry[v][:1] in (("P",), ("C",))}
        out.append({"first": seg.first, "last": seg.last, "products": len(prods),
                    "x": sum(1 for u in reads if entry[u][:1] == ("A",)),
                    "y": sum(1 for u in reads if entry[u][:1] == ("B",)),
                    "z": len(touched), "met": len(touched & met), "B_shared": len(shared),
                    "inputs_available": sum(1 for v in seg.start | seg.loaded if not G.in_degree(v)),
                    "a": sum(1 for v in seg.start if G.in_degree(v)), "b": len(end)})
    return out


def _matmul_regime(p, M):
    return 3 <= M <= p["a"] * p["b"] + p["b"] * p["c"] + p["a"] * p["c"]


def _matmul_lower(p, M):
    # outside the regime the DAG is not pebblable (M < 3) or the trivial bound is attained: undefined (nan)
    if not _matmul_regime(p, M):
        return math.nan
    return float(matmul_segment_bound(p["a"], p["b"], p["c"], M).value)


#: The matrix-product segment bound, proven for both games (registered with the ``matmul`` family's bounds).
MATMUL_SEGMENT_FORMULA = Formula(
    name="segment-matmul-lower",
    families=("matmul",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the a b c products over their designated events, proved in "
          "spartition.families.classic.recompute_bounds.matmul_segment_capacity (Loomis-Whitney as in Irony, Toledo "
          "& Tiskin)",
    constants="explicit",
    regime="every summation shape and order, both games (recomputation allowed), 3 <= M <= ab + bc + ac",
    func=_matmul_lower,
    holds=_matmul_regime,
    detail=(("F(T, L)", "max min(sqrt(x y z), b z, x y, c x, a y) over x <= ab, y <= bc, z <= ac, x + y <= L, "
                        "x + y + z <= T: x, y the entries of A, B read by designated products, z the sums touched"),
            ("h(S)", "the fewest segments whose counts reach a b c, with T = M + S + b', L = M - a' + S for a' "
                     "(b') red non-inputs at a segment's start (end), shared by neighbouring segments")),
    variants=("oneshot", "recompute"),
)


