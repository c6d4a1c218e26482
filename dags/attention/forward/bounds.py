"""Proven segment counts for dense attention forward: the products one segment of a schedule can compute.

The tool's Loomis-Whitney count ``2X + X^(3/2)/2`` (``dags/attention/claims.py``)
is an application the tool checks, not a theorem about attention: a class can
finish the sums ``S_ij`` of many pairs and consume them in ``A_ij`` without
any minimum node per pair. This module proves, for the oneshot game on the
dense ``attention-forward`` DAG (any summation shape and order), how many
``QK`` products one segment of a schedule with ``S`` I/O moves can compute,
and derives the explicit lower bound

    Q >= S (h - 1),   h the fewest segments whose counts reach n^2 d,   maximised over S,

from it (at least ``S (ceil(n^2 d / F(M, S)) - 1)``;
:func:`~spartition.families.common.segments.segments_needed`; with step 11,
:func:`~spartition.families.common.segments.shared_segments_needed`). Every number
below is an upper bound proven in :func:`segment_capacity`'s docstring; the
tests check it against replayed schedules segment by segment
(:func:`segment_charges`), against every replayed published schedule and
against the exact optima. The same argument counts the products of the
backward pass in FlashAttention's form (``attention-backward-flash``) in
:mod:`spartition.families.attention.backward.bounds`, with the Loomis-Whitney count of
charged pairs defined here and the segment machinery of
:mod:`spartition.families.common.segments`.

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981): the
segment argument. Irony, Toledo & Tiskin, "Communication lower bounds for
distributed-memory matrix multiplication" (JPDC 2004): the Loomis-Whitney
count. Saha & Ye, "I/O Complexity of Attention, or How Optimal is
FlashAttention?" (ICML 2024): the Theta(min(n^2 d^2 / M, n^2 d / sqrt(M))) this
bound makes explicit for the oneshot game.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.common.programs import program_maximum
from spartition.families.common.segments import SEGMENT_ENDS, SegmentBound, best_segment_size, best_shared_size, segment_budgets, segments_needed, shared_bound

__all__ = ["JOINT_SEGMENT_MAX_MD", "charged_products", "forward_segment_bound", "joint_counts_searched", "joint_segment_capacity", "segment_capacity"]


def segment_capacity(n: int, d: int, M: int, S: int, start: bool = True, end: bool = True,
                     budgets: tuple | None = None) -> int:
    """The most ``QK`` products one segment with ``S`` I/O moves computes (oneshot, dense forward).

    Parameters
    ----------
    n, d : int
        The attention sizes (``Q, K, V`` are ``n x d``).
    M : int
        Fast memory.
    S : int
        I/O moves (loads plus stores) in the segment.
    start : bool
        False for a segment that starts the schedule (no red pebble at its
        start; step 9).
    end : bool
        False for a segment that ends the schedule (no move after it; step 9).
    budgets : (int, int), optional
        ``(T, L)`` in place of step 9's, e.g. step 11's
        :func:`~spartition.families.common.segments.shared_budgets` for a segment whose boundaries hold known
        numbers of red non-inputs.

    Returns
    -------
    int
        ``F(M, S)``, an upper bound on the products ``QK_i_j_l`` computed in any
        segment of any valid oneshot schedule that has at most ``S`` I/O moves
        (the program below only loosens as ``S`` grows).

    Notes
    -----
    **Proof.** Fix a segment (a run of consecutive moves) with ``S`` I/O
    moves. Let ``B`` be the nodes red at its start, red at its end, loaded in
    it or stored in it: ``|B| <= 2M + S``, and of these at most ``M + S`` are
    red at the start or loaded. ``Tree(i, j)`` is the sum tree of ``S_ij``
    (its products ``QK_i_j_l`` and add nodes); ``Tree(T_ic)`` that of
    ``T_ic`` (its products ``AV_i_j_c``). Every node of these trees and
    ``A_ij`` has one successor or more, each computed after it; every node is
    an ancestor of an output, so computed exactly once (oneshot).

    1. *Inputs.* An input read by a compute in the segment is red then:
       red at the start or loaded. With ``q, k, v`` the entries of ``Q, K, V``
       read, ``q + k + v <= M + S``, and they lie in ``B``.
    2. *Crossing edges.* If a tree has nodes computed in the segment and
       nodes computed outside it, it has an edge ``u -> v`` with one end
       inside. If ``v`` is inside, ``u`` was computed before and is red when
       ``v`` is computed: red at the start or loaded. If ``u`` is inside and
       ``v`` after, ``u`` must still be red or blue when ``v`` is computed:
       red at the end, or stored in the segment (its only computation is
       here). Either way ``u in B``.
    3. *Charged pairs.* Call a pair ``(i, j)`` with a product computed in the
       segment *charged* if ``Tree(i, j) + {A_ij}`` meets ``B``; the sets are
       disjoint across pairs, so there are ``c <= |B| - q - k - v`` charged
       pairs, each with at most ``d`` products. Their products lie in
       ``{(i, j, l): Q_il read, K_jl read, (i, j) charged}``, so by
       Loomis-Whitney they number at most ``sqrt(q k c) <= (q + k)/2 sqrt(c)``,
       and at most ``d c`` and ``q k``.
    4. *Closed pairs.* An uncharged pair has its whole tree computed in the
       segment (else step 2 puts a tree node in ``B``), so ``S_ij`` is
       computed here; ``A_ij`` is too (else ``S_ij`` would be red at the end
       or stored), and ``A_ij`` not in ``B`` means it is gone after the
       segment, so all its successors ``AV_i_j_c`` are computed here. The
       pair read all of ``Q_i``, ``K_j`` and ``V_j`` (``d`` entries each):
       with ``r`` rows ``i`` and ``p`` rows ``j`` having closed pairs,
       ``d r <= q``, ``d p <= min(k, v)`` and there are at most ``r p``
       closed pairs, ``d r p`` products.
    5. *Closed rows.* For a row ``i`` with a closed pair and a column ``c``,
       ``Tree'(T_ic)``, the sum tree of ``T_ic`` with the output ``O_ic``
       (connected: every node has a path to ``O_ic`` in it), has a node
       computed here, and it meets ``B``: if a node of it is computed
       outside the segment, by step 2; if all of it is computed here, the
       output ``O_ic`` is stored after it is computed, so stored in the
       segment or red at its end (it is never recomputed, and not blue
       before its store). These nodes are disjoint across ``(i, c)`` and
       from steps 1 and 3. Hence ``q + k + v + c + r d <= 2M + S``.
    10. *Row sums and full rows* (``n >= 2``). Call an active pair (step 6:
        a node of ``Tree(i, j) + {A_ij}`` computed in the segment, or ``A_ij``
        read by a computation there) that does not meet ``B`` closed: it is
        (step 6's argument: ``A_ij`` read but not computed here is red at the
        start or loaded; computed here, ``S_ij`` and the whole tree are, by
        step 2). Let ``c`` count the active pairs that meet ``B`` (one node
        of ``B`` each; at least the charged pairs, and step 3's count grows
        with ``c``). For a closed pair ``(i, j)``, ``A_ij`` has a successor
        in ``Tree(l_i)`` (the add nodes of ``l_i``, ``n >= 2`` terms), computed
        here (step 4). Call a closed row *full* if all its ``n`` pairs are
        active. A ``Tree(l_i)`` computed whole here read every ``A_ij``: in
        a row that is not full it meets ``B`` (with the row's ``d`` trees of
        step 5, ``d + 1`` charges); in a full row only the ``d`` of step 5
        are sure. A full row has at most ``p`` closed pairs (in the columns
        with one), so at least ``n - p`` active pairs that meet ``B``, distinct
        across rows. With ``w`` full rows: ``q + k + v + c + (r - w)(d + 1) +
        w d <= 2M + S`` and ``c >= w (n - p)``; step 5's constraint is the
        case ``w = r`` without the second.
    9. *The first and the last segment.* Steps 1-5 use of ``B`` only that
       it holds every input read (step 1), one end of every crossing edge
       (step 2), ``A_ij`` when a successor of ``A_ij`` is computed after
       the segment (step 4) and an output computed in it (step 5: stored in
       it, or red at its end, which the last segment cannot be). A segment that starts the schedule has no red
       pebble at its start: ``B`` is the nodes red at its end, loaded or
       stored, ``|B| <= M + S``, and the inputs read were loaded, ``q + k + v
       <= S``. A segment that ends the schedule has no move after it: no
       crossing edge leaves it and no successor is computed after it, so
       ``B`` without the nodes red at its end serves every step: ``|B| <= M
       + S`` and still ``q + k + v <= M + S``. In general the program below
       runs with ``T = M (start + end) + S`` in place of ``2M + S`` and
       ``L = M start + S`` in place of ``M + S``.
    11. *Shared boundaries.* Every charge of steps 2-10 is a non-input
        node (a node of a pair's tree, ``A_ij``, a ``T`` tree with its
        output, a row sum), and of the nodes red at the end of the segment
        only charges are used. So ``B' = `` (red at the start) + (loaded) +
        (stored) + (the non-inputs red at the end) serves every step. With
        ``a`` non-inputs red at the start and ``b`` at the end: at most ``M -
        a`` inputs are red at the start, so the inputs read number at most
        ``L = M - a + S``, and ``|B'| <= T = M + S + b``
        (:func:`~spartition.families.common.segments.shared_budgets`; step 9's ``T`` and ``L`` are the case ``a =
        0, b = M``). A red non-input at a boundary is thus counted by both
        segments it separates, a red input by the later one only: the ``2M``
        of step 9 is ``M`` plus what the boundary spends on non-inputs,
        which :func:`~spartition.families.common.segments.shared_segments_needed` takes from the segment after it.
    12. *Charged and closed pairs together.* A pair with a product computed
        in the segment is charged or closed (step 4), so all the products
        lie in ``{(i, j, l): Q_il read, K_jl read, (i, j) charged or
        closed}``: by Loomis-Whitney at most ``min((q+k)/2 sqrt(c + r p), d
        (c + r p), ((q+k)/2)^2)``. Steps 3 and 4 count a closed pair's ``d``
        products as if no other pair shared its rows of ``Q`` and ``K``; this
        count does not, and the smaller of the two holds.

    ``F`` is the maximum over ``r, p, w`` allowed by 1-5 and 10 (``k`` and
    ``v`` at their least, which only loosens the constraints) of the
    smaller of two maxima over ``s = q + k`` (``c`` at the most the budget
    leaves): of ``min((q+k)/2 sqrt(c), d c, ((q+k)/2)^2) + d r p`` (steps 3
    and 4) and of step 12's count; the smaller maximum bounds the maximum
    of the smaller. Step 9's ``T`` and ``L``; rounded down: a count of
    products is an integer.

    Examples
    --------
    >>> segment_capacity(2, 1, 3, 1), segment_capacity(32, 2, 4, 17)
    (3, 22)
    >>> segment_capacity(32, 2, 4, 17, start=False), segment_capacity(32, 2, 4, 17, end=False)
    (18, 18)
    """
    T, L = budgets if budgets is not None else segment_budgets(M, S, start, end)
    peak = _peaks(d, 1 << max(T, 1).bit_length())  # one table per power of two serves every S below it
    r = np.arange(0, min(n, L // d) + 1)[:, None, None]
    p = np.arange(0, min(n, L // d) + 1)[None, :, None]
    w = np.arange(0, min(n, L // d) + 1)[None, None, :]  # step 10's full rows (none when n = 1)
    if n == 1:
        w = w[:, :, :1]
    v = d * p
    # what is left for the q + k inputs and the charged pairs: steps 5 and 10's charges of the closed rows
    rows = r * d if n == 1 else r * (d + 1) - w
    budget = T - v - rows
    lo, hi = d * (r + p), np.minimum(L - v, budget - w * (n - p))  # step 10: w (n - p) pairs among the charged
    ok = (hi >= lo) & (w <= r)
    if not ok.any():
        return 0
    # the charged products are quasi-concave in s = q + k: their best s in [lo, hi] is the clamped peak
    budget = np.clip(budget, 0, T)  # budgets above T only where w > r (dropped)
    s = np.clip(peak[budget], lo, hi).astype(float)
    apart = charged_products(s, budget - s, d) + d * r * p
    # step 12: the closed pairs among the pairs of one count, its own peak at the budget widened by r p
    closed = r * p
    widened = _peaks(d, 1 << max(T + int(closed.max()), 1).bit_length())
    s = np.clip(widened[budget + closed], lo, hi).astype(float)
    values = np.minimum(apart, charged_products(s, budget + closed - s, d))
    return math.floor(float(values[ok].max()) + 1e-6)


def joint_segment_capacity(n: int, d: int, M: int, S: int, start: bool = True, end: bool = True,
                           budgets: tuple | None = None) -> int:
    """The most ``QK`` and ``AV`` products together that one segment with ``S`` I/O moves computes (oneshot, dense).

    Parameters
    ----------
    n, d, M, S, start, end, budgets
        As in :func:`segment_capacity`.

    Returns
    -------
    int
        ``G(M, S)``, an upper bound on the products ``QK_i_j_l`` and
        ``AV_i_j_c`` computed in any segment of any valid oneshot schedule
        with ``S`` I/O moves.

    Notes
    -----
    **Proof**, continuing the steps of :func:`segment_capacity` (the same
    ``B``, ``q, k, v``, charged and closed pairs, ``r, p``).

    6. *Pairs an AV product uses.* Call a pair *active* if a node of
       ``Tree(i, j) + {A_ij}`` is computed in the segment or ``A_ij`` is read
       by an ``AV`` product there. An active pair that does not meet ``B`` is
       closed (step 4's argument: if ``A_ij`` is read but not computed here it
       is red at the start or loaded, so in ``B``). With ``c`` now the active
       pairs that meet ``B`` (still one node of ``B`` each), the ``A_ij`` read
       number ``alpha <= c + r p``; step 3's count of their ``QK`` products
       stands (more pairs only loosen it).
    7. *T trees.* An ``AV_i_j_c`` computed here puts a node of
       ``Tree'(T_ic)`` in the segment, and the tree meets ``B`` (step 5's
       argument): the ``t`` trees touched take ``t`` nodes of ``B``, disjoint
       from the other charges (the closed rows' ``r d`` of step 5 are among
       them), and ``q + k + v + c + t <= 2M + S``.
    8. *AV products* lie in ``{(i, j, c): A_ij read, V_jc read, (i, c)
       touched}``: at most ``sqrt(alpha v t)`` (Loomis-Whitney), ``d alpha``
       and ``n v``.

    With step 10 (``n >= 2``): the row sums of the closed rows that are not
    full meet ``B`` too, one node each, disjoint from the trees above, so
    ``q + k + v + c + t + (r - w) <= 2M + S``, where ``t >= r d`` and
    ``c >= w (n - p)``.

    ``G`` is the maximum over the integers allowed by steps 1-8 of the
    ``QK`` count (the smaller of steps 3 and 4's and step 12's) plus step
    8's ``AV`` count, with step 9's ``T =
    M (start + end) + S`` and ``L = M start + S`` (steps 6-8 use of ``B``
    only what steps 1-5 do, and that an ``A_ij`` read but not computed in the
    segment is red at its start or loaded, which holds in every segment;
    step 11's budgets likewise, as the ``T`` trees and row sums charged are
    non-inputs). It is found exactly by
    :func:`~spartition.families.common.programs.program_maximum`, which needs on
    a box of integers (a cell) an upper bound of the program that is its
    value on a single point: the objective grows with every variable, so
    its value at a cell's upper corner bounds it on the cell (``t`` read at
    the cell's lower corner, where it is largest), and a cell holds no
    feasible point if one constraint fails everywhere in it.

    Examples
    --------
    >>> joint_segment_capacity(2, 1, 3, 1), joint_segment_capacity(32, 2, 4, 9)
    (4, 14)
    """
    T, L = budgets if budgets is not None else segment_budgets(M, S, start, end)
    full = n >= 2  # step 10's full rows (none when n = 1: the row sum is then A_ij itself)

    def bound(lo, hi):  # variables r, w, p, v, s, c; each constraint at the corner that eases it
        r0, w0, p0, v0, s0, c0 = lo.T
        r1, w1, p1, v1, s1, c1 = hi.T
        # the closed rows' T and row-sum charges (r - w)(d + 1) + w d, at least r d as w <= r
        rows = np.maximum(r0 * d, r0 * (d + 1) - w1) if full else r0 * d
        sums = np.maximum(r0 - w1, 0) if full else 0
        ok = ((w0 <= r1) & (v1 >= d * p0) & (s1 >= d * (r0 + p0)) & (s0 + v0 <= L) & (s0 + v0 + c0 + rows <= T)
              & (c1 >= w0 * (n - p1)))
        y = (r1 * p1).astype(float)
        t = np.maximum(T - s0 - v0 - c0 - sums, 0).astype(float)  # step 7: every touched T tree meets B
        alpha = c1 + y
        av = np.minimum(np.minimum(np.sqrt(alpha * v1 * t), d * alpha), n * v1.astype(float))
        s1, c1 = s1.astype(float), c1.astype(float)
        qk = np.minimum(charged_products(s1, c1, d) + d * y, charged_products(s1, c1 + y, d))  # steps 3-4 or 12
        return np.where(ok, qk + av, -np.inf)

    top = min(n, L // d)
    return program_maximum(bound, [0] * 6, [top, top if full else 0, top, L, L, T])


def charged_products(s, c, d: int):
    """Step 3's bound on the products of the charged pairs: ``min(s/2 sqrt(c), d c, (s/2)^2)``."""
    return np.minimum(np.minimum(s / 2 * np.sqrt(np.maximum(c, 0)), d * c), (s / 2) ** 2)


@lru_cache(maxsize=64)
def _peaks(d: int, T: int) -> np.ndarray:
    """For each budget ``b <= T``: the ``s`` in ``0..b`` that maximises ``charged_products(s, b - s)``.

    ``charged_products`` is the minimum of a strictly increasing, a strictly
    decreasing and a strictly unimodal function of ``s``, so it is strictly
    unimodal: a ternary search over all budgets at once finds each peak in
    ``O(log T)`` vectorised steps (memory ``O(T)``).
    """
    b = np.arange(T + 1)
    lo, hi = np.zeros(T + 1, dtype=np.int64), b.copy()
    while True:
        wide = hi - lo > 2
        if not wide.any():
            break
        m1, m2 = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        h1, h2 = charged_products(m1.astype(float), (b - m1).astype(float), d), charged_products(m2.astype(float), (b - m2).astype(float), d)
        lo = np.where(wide & (h1 < h2), m1 + 1, np.where(wide & (h1 == h2), m1, lo))
        hi = np.where(wide & (h1 > h2), m2 - 1, np.where(wide & (h1 == h2), m2, hi))
    best, arg = np.full(T + 1, -1.0), lo.copy()
    for k in range(3):
        s = np.minimum(lo + k, hi)
        v = charged_products(s.astype(float), (b - s).astype(float), d)
        arg, best = np.where(v > best, s, arg), np.maximum(v, best)
    return arg


def _bound_at(n: int, d: int, M: int, S: int, weight: str) -> SegmentBound:
    if weight == "QK":
        W = n * n * d
        counts = [segment_capacity(n, d, M, S, start, end) for start, end in SEGMENT_ENDS]
    else:
        W = 2 * n * n * d
        counts = [joint_segment_capacity(n, d, M, S, start, end) for start, end in SEGMENT_ENDS]
    h = segments_needed(W, *counts)
    return SegmentBound(S * (h - 1) if h else 0, S, *counts[:1], weight, *counts[1:], h)


@lru_cache(maxsize=1 << 16)
def _capacity_within(n: int, d: int, T: int, L: int, weight: str) -> int:
    # the counts depend on M and S only through (T, L): segment sizes and boundaries that share budgets share a value
    if weight == "QK":
        return segment_capacity(n, d, 0, 0, budgets=(T, L))
    return joint_segment_capacity(n, d, 0, 0, budgets=(T, L))


def _shared_bound_at(n: int, d: int, M: int, S: int, weight: str, boundary_cells: int = 8) -> SegmentBound:
    W = n * n * d * (1 if weight == "QK" else 2)
    return shared_bound(W, M, S, weight, lambda TL: _capacity_within(n, d, *TL, weight), boundary_cells)


def _best_segment(n: int, d: int, M: int, weight: str, candidates) -> SegmentBound:
    return best_segment_size(lambda S: _bound_at(n, d, M, S, weight), M, candidates)


#: The largest ``M d`` the joint counts (forward ``QK+AV``, backward ``all``) are searched at. Their search
#: grows with M and d (measured, one core, forward: n = 8, d = 16: 4 s at M = 16, 115 s at M = 50, 321 s at
#: M = 100; n = 64, d = 16, M = 50: 127 s); every row of the benchmark grid that needs them has M d <= 512.
#: They are not searched at M >= n d either, where a whole input matrix fits in fast memory and they say
#: little (backward n = 8, d = 4, M = 64: 239, below the trivial 264, after 61 s).
JOINT_SEGMENT_MAX_MD = 512


def joint_counts_searched(n: int, d: int, M: int) -> bool:
    """Whether the joint counts are searched at ``(n, d, M)``: ``M d <= JOINT_SEGMENT_MAX_MD`` and ``M < n d``.

    >>> joint_counts_searched(2, 64, 8), joint_counts_searched(2, 64, 9), joint_counts_searched(8, 4, 32)
    (True, False, False)
    """
    return M * d <= JOINT_SEGMENT_MAX_MD and M < n * d


@lru_cache(maxsize=256)
def forward_segment_bound(n: int, d: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)``: a lower bound on the oneshot optimum of dense forward attention.

    **Proof.** Let an optimal oneshot schedule make ``Q >= 1`` I/O moves
    and cut it after every ``S``-th I/O move: ``h = ceil(Q / S)`` segments
    (the last holds the moves after the ``(h - 1) S``-th I/O move), all but
    the last with ``S`` I/O moves, the last with at most ``S``; so ``Q >= S
    (h - 1)``. Each of the ``W`` counted products (``n^2 d`` of ``Q K^T``;
    with the ``AV`` products ``2 n^2 d``) is computed once, in one segment.
    A segment computes at most ``F(M, S)`` of them (:func:`segment_capacity`,
    :func:`joint_segment_capacity`); the first starts the schedule and the
    last ends it, so they compute at most the counts with ``start=False``,
    ``end=False`` (step 9), and a schedule of one segment at most the count
    with both. So ``h`` is at least :func:`~spartition.families.common.segments.segments_needed` of these counts.
    This holds for every ``S`` and either count; the search tries ``S`` on a
    grid of multiples of ``M`` and refines around the best (any ``S`` gives a
    valid bound, so the search only affects strength). With step 11 the
    counts also depend on the red non-inputs ``x_k`` at each boundary, and
    ``h`` is at least :func:`~spartition.families.common.segments.shared_segments_needed` of them (the least
    number of segments some sequence ``x_1 .. x_(h-1)`` lets reach ``W``),
    never less than the ``h`` of the four counts alone.

    Parameters
    ----------
    n, d, M : int

    Returns
    -------
    SegmentBound
        The largest of the counts' bounds, with step 9's ``h`` or step 11's
        (``shared``); the joint count is searched below ``M = 2 d^2`` only
        (step 11's also at ``M = 2 d^2 <= 64``), where it can be the larger,
        and where :func:`joint_counts_searched`: the choice affects strength,
        never validity.

    Examples
    --------
    >>> b = forward_segment_bound(32, 2, 4)
    >>> b.value > 4 * 32 * 2, b.weight, b.value == b.S * (b.segments - 1), b.shared
    (True, 'QK+AV', True, True)

    Step 11 needs more segments than the four counts alone would:

    >>> b.segments > segments_needed(2 * 2048, b.capacity, b.first, b.last, b.whole)
    True
    """
    apart = [_best_segment(n, d, M, "QK", sorted({max(1, round(M * t / 8)) for t in range(1, 49)}))]
    # measured on n = 16..128, d = 2..8: from M = 2 d^2 on the Q K^T count alone is the larger (and far cheaper)
    weights = ("QK", "QK+AV") if M < 2 * d * d and joint_counts_searched(n, d, M) else ("QK",)
    if "QK+AV" in weights:
        apart.append(_best_segment(n, d, M, "QK+AV", sorted({max(1, round(M * t / 4)) for t in range(1, 21)})))
    # step 11's sharper h, searched on its own and at step 9's best S; its joint count still pays at M = 2 d^2
    # for d <= 4 (n = 32..128: 1,189 -> 1,339 at n = 32, d = 2, M = 8), not at d = 8 (M = 128: below the Q K^T
    # count, and 20 s), so it runs there up to M = 64 only (strength, never validity)
    if M == 2 * d * d and M <= 64:
        weights = ("QK", "QK+AV")
    shared = [best_shared_size(lambda S, fine, w=weight: _shared_bound_at(n, d, M, S, w, 8 if fine else 4),
                               M, [b.S for b in apart if b.weight == weight]) for weight in weights]
    return max(apart + shared, key=lambda b: b.value)
