"""Backward attention's segment count proven in the standard game (with recomputation), through designated events.

The count of :func:`~spartition.families.attention.backward.bounds.backward_segment_capacity`
(the products of ``Q K^T`` and ``dO V^T`` of ``attention-backward-flash``)
is proven for the oneshot game: a closed pair there has its whole piece,
both kinds of products, computed in the segment. With recomputation a
segment may rebuild ``S_ij`` (and ``P_ij``) alone, for one consumer, and
compute ``dP_ij`` elsewhere. :func:`backward_recompute_capacity` counts, per
segment, the distinct ``QK`` and ``dOV`` products with a *designated* compute
event in it (:mod:`spartition.partition.designation`), each kind closed on
its own sum tree; :func:`backward_recompute_bound` turns it into ``S (h -
1)``, valid in both games, registered as ``segment-backward-recompute-lower``.
:func:`backward_recompute_charges` measures the proof's quantities on a
replayed schedule, segment by segment, for the tests.

References
----------
Hong & Kung (STOC 1981); Irony, Toledo & Tiskin (JPDC 2004); Li, Liang, Shi,
Song, Yue, Zhang, "On Fine-Grained I/O Complexity of Attention Backward
Passes" (arXiv 2410.09397); Dao, "FlashAttention-2" (2023): the backward
pass that recomputes ``P`` instead of storing it.
"""

from __future__ import annotations

import math
from functools import lru_cache

from spartition.families.attention.backward.recompute_programs import searched_maximum
from spartition.families.attention.forward.bounds import joint_counts_searched
from spartition.families.common.papers import SEGMENTS
from spartition.families.common.segments import (
    SegmentBound,
    capped_shared_bound,
    timed_best,
)
from spartition.study.formulas import Formula

__all__ = ["BACKWARD_CONSUMER_FORMULA", "BACKWARD_RECOMPUTE_FORMULA", "BACKWARD_RECOMPUTE_MAX_M", "BACKWARD_RECOMPUTE_SECONDS", "backward_recompute_bound", "backward_recompute_capacity",
           "backward_recompute_consumer_capacity", "backward_recompute_joint_capacity"]


@lru_cache(maxsize=1 << 16)
def backward_recompute_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most distinct ``QK`` and ``dOV`` products with a designated event in one segment of dense backward (both games).

    Parameters
    ----------
    n, d : int
        ``Q, K, V, O, dO`` are ``n x d``.
    T, L : int
        The budgets of step 11
        (:func:`~spartition.families.common.segments.shared_budgets`): ``|B'|``
        and the inputs red at the start or loaded.

    Returns
    -------
    int
        The maximum over integers ``s1, s2, t, r1, r2 >= 0`` with ``d r1 <=
        s1``, ``d r2 + (r1 - r2) <= s2``, ``r2 <= r1``, ``s1 + s2 + r1 <= L``
        and ``c = min(n^2, T - s1 - s2 - t - r1 - r2) >= 0`` of ``H(s1, x1) +
        H(s2, x2)``, where ``H(s, x) = min(F(s, c) + d x, F(s, c + x))``,
        ``F(s, c) = min(s/2 sqrt(c), d c, (s/2)^2)``
        (:func:`~spartition.families.attention.forward.bounds.charged_products`)
        and ``(x1, x2)`` = :func:`~spartition.families.attention.backward.recompute_programs.closed_counts` ``(r1, p1, r2, p2, t)`` with
        the columns ``p1 = min(n, floor(s1 / d) - r1)`` and ``p2 = min(n,
        floor((s2 - r1 + r2) / d) - r2)``.

    Notes
    -----
    **Proof** (any valid schedule of the standard game; dense
    ``attention-backward-flash`` with any summation shape and order). Fix a
    segment ``sigma``; ``B'`` is the set of step 11 (red at its start,
    loaded, stored, non-inputs red at its end; no end for the segment that
    ends the schedule). ``Pair(i, j)`` is the products ``QK_i_j_l`` and
    ``dOV_i_j_c``, the adds of the sum trees of ``S_ij`` and ``dP_ij`` and
    the nodes ``A_ij, P_ij, dPD_ij, dS_ij``: disjoint across pairs and from
    the inputs. ``Tree(S_ij)`` (its products and adds) and ``Tree(dP_ij)``
    lie in ``Pair(i, j)``.

    1. *Inputs.* The entries of ``Q, K`` (``q, k``) and ``dO, V`` (``o, v``)
       read by designated product events in ``sigma`` (of any of the five
       kinds) were red at its start or loaded (inputs are never computed):
       ``s1 + s2 <= L`` with ``s1 = q + k``, ``s2 = o + v``, and they lie in
       ``B'``.
    2. *Copies.* Every node of ``Tree(S_ij)`` but its root has one successor,
       inside the tree. So a designated event of a product ``QK_i_j_l`` is
       the operand of a designated event of its parent, and so on up to a
       designated event of ``S_ij``: it lies in the *copy* of the tree rooted
       there (the events reached from that root by operand links, one per
       tree node). Likewise for ``dOV_i_j_c`` and ``Tree(dP_ij)``. With
       recomputation ``S_ij`` may have several designated events (``A_ij``
       feeds ``P_ij``, which has ``d + 1`` successors), so several copies.
    3. *Charged pairs.* A pair with a designated product in ``sigma`` is
       charged if ``Pair(i, j)`` meets ``B'``: one node of ``B'`` each, not an
       input, so ``c`` charged pairs (of either kind) with ``s1 + s2 + c <=
       T`` and ``c <= n^2``.
    4. *Closed pairs, one kind at a time.* A pair with a designated ``QK``
       product in ``sigma`` and no node in ``B'`` is *QK-closed*. The copy of
       ``Tree(S_ij)`` holding that event lies wholly in ``sigma``: were one of
       its events outside, an edge of the copy (a designated event reading
       another's value) would join an event in ``sigma`` to one outside, and
       by the designation lemma, part 2, the node read would be red at the
       start of the reader's segment or loaded in it, and red at the end of
       the producer's or stored in it; one of the two segments is ``sigma``
       (and when it is the producer's, a later segment exists, so its end is
       not the schedule's): a tree node in ``B'``. So all ``d`` products of
       ``S_ij`` are designated in ``sigma`` and read the rows ``Q_i`` and
       ``K_j`` in full: with ``r1`` rows and ``p1`` columns holding a
       QK-closed pair, ``d r1 <= q``, ``d p1 <= k`` (``d (r1 + p1) <= s1``)
       and at most ``r1 p1`` QK-closed pairs. Likewise *dOV-closed* pairs,
       ``r2, p2`` with ``d (r2 + p2) <= s2`` (rows of ``dO``, rows of
       ``V``). A segment may rebuild ``S_ij`` for ``P_ij``'s ``P dO``
       products alone while ``dP_ij`` is built elsewhere, but not the other
       way round: **a dOV-closed pair is QK-closed.** The root of its copy
       of ``Tree(dP_ij)`` is in ``sigma``; the designated ``dPD_ij`` event
       reading it is in ``sigma`` too (were it later, ``dP_ij`` would be red
       at the end of ``sigma`` or stored in it, part 2: in ``B'``), and so
       is the designated ``dS_ij`` event reading that (else ``dPD_ij`` is in
       ``B'``; ``dS_ij`` is not an output, so such an event exists, part 1).
       It reads a designated ``P_ij`` event, in ``sigma`` (else ``P_ij`` is
       in ``B'``), which reads ``A_ij``'s, in ``sigma``, which reads
       ``S_ij``'s, in ``sigma``, whose copy of ``Tree(S_ij)`` has no node in
       ``B'`` and so lies in ``sigma`` as above: the pair has designated
       ``QK`` products in ``sigma``. So the dOV-closed pairs are among the
       QK-closed ones (``x2 <= x1``) and their rows among the QK-closed rows
       (``r2 <= r1``).
    5. *Loomis-Whitney.* The ``QK`` products counted lie in ``{(i, j, l):
       Q_il read, K_jl read, (i, j) charged or QK-closed}``: at most
       ``min(sqrt(q k (c + r1 p1)), d (c + r1 p1), q k)``; the charged pairs'
       alone at most ``min(sqrt(q k c), d c, q k)`` and the closed ones' ``d
       r1 p1``. With ``q k <= (s1/2)^2`` both are at most their ``F`` forms,
       so the ``QK`` count is at most ``min(F(s1, c) + d r1 p1, F(s1, c + r1
       p1))`` and the ``dOV`` count likewise with ``s2, r2, p2``.

    6. *Consumer trees meet* ``B'``. ``Tree(dV_jc)`` (the products
       ``PdO_i_j_c`` and adds of ``dV_jc``), ``Tree(dQ_il)`` and
       ``Tree(dK_jl)`` are in-trees ending in outputs, disjoint from each
       other, the pairs and the inputs: each node has exactly one designated
       event (designation lemma, part 1), and, as in
       :func:`~spartition.families.classic.recompute_bounds.matmul_segment_capacity`
       step 3, a tree with a designated event in the segment has a node in
       ``B'`` (a crossing edge of its copy, part 2, or its root's final event
       in the segment, part 3). ``t`` is the number of consumer-tree nodes in
       ``B'``: at least the trees touched, and ``s1 + s2 + c + t <= T``.
    7. *Closed pairs reach a consumer.* Let ``(i, j)`` be QK-closed: the copy
       of ``Tree(S_ij)`` lies in the segment (step 4). Its root's event is
       read by a designated event of ``A_ij`` (``S_ij``'s one successor),
       which is in the segment (else ``S_ij`` is in ``B'``, part 2), and read
       by a designated event of ``P_ij`` in the segment (else ``A_ij`` is in
       ``B'``); ``P_ij`` is not an output, so a designated event of ``dS_ij``
       or of some ``PdO_i_j_c`` reads it, in the segment (else ``P_ij`` is in
       ``B'``); from ``dS_ij`` likewise a designated ``dSK_i_j_l`` or
       ``dSQ_i_j_l`` in the segment. So a consumer product of the pair has a
       designated event in the segment: ``Tree(dQ_il)`` (row ``i``) or
       ``Tree(dV_jc)`` or ``Tree(dK_jl)`` (column ``j``) is touched and meets
       ``B'``. A dOV-closed pair goes ``dP_ij -> dPD_ij -> dS_ij`` to
       ``dSK`` or ``dSQ`` the same way. So every closed pair has its row
       among ``t_R`` rows or its column among ``t_C`` columns with a
       consumer-tree node in ``B'``, ``t_R + t_C <= t``, and one kind's
       closed pairs number at most ``y = min(r p, t max(r, p))``
       (:func:`~spartition.families.attention.backward.recompute_programs.closed_pairs`). A QK-closed pair that is not dOV-closed
       reaches a ``PdO_i_j_c`` (its ``P_ij`` is read in the segment by a
       designated ``dS_ij`` or ``PdO`` event; a ``dS_ij`` event there would
       make the pair dOV-closed, as in step 4's chain), which lies in
       ``Tree(dV_jc)``: its column ``j`` has a ``dV`` tree node in ``B'``,
       so such pairs number at most ``r1 min(p1, t)``, and that event read
       ``dO_ic``: each QK-closed row without a dOV-closed pair has an entry
       of ``dO`` read, the ``r2`` rows with one all ``d`` (step 4), so ``o
       >= d r2 + (r1 - r2)`` and ``d p2 <= v``, ``d (r2 + p2) + r1 - r2 <=
       s2``. So the closed pairs number at most
       :func:`~spartition.families.attention.backward.recompute_programs.closed_counts`:
       step 5 holds with ``x1`` in place of ``r1 p1`` and ``x2`` in place
       of ``r2 p2``.
    8. *Closed rows.* A QK-closed pair's designated ``P_ij`` event in the
       segment (step 7) reads the input ``l_i``, so ``l_i`` was red at the
       start or loaded: one input per QK-closed row, none of ``Q, K, dO,
       V``: ``s1 + s2 + r1 <= L``. A dOV-closed pair's designated ``dPD_ij``
       event in the segment reads a designated event ``f`` of ``D_i``. If
       ``f`` is earlier, ``D_i`` is in ``B'`` (part 2); else ``f`` is in the
       segment and the copy of ``D_i``'s sum tree rooted at ``f`` has a node
       in ``B'`` (a crossing edge) or lies in the segment, when its products
       ``dOO_i_c`` read the inputs ``O_ic`` there (red at the start or
       loaded). So each dOV-closed row puts a node of ``D_i``'s tree or an
       ``O_ic`` in ``B'``: with step 3, 6 and 7's charges (all disjoint:
       pairs, consumer trees, ``l``, ``D``, ``O`` and the inputs of step 1),
       ``s1 + s2 + c + t + r1 + r2 <= T``.

    Each count grows with ``c``, so ``c = min(n^2, T - s1 - s2 - t - r1 -
    r2)``, and with the columns ``p1, p2``, so each is the most the reads
    allow.
    Unlike the oneshot count, a QK-closed pair needs neither the other
    kind's rows nor all the consumers of ``P_ij`` and ``dS_ij``: one
    consumer tree, shared by a whole row or column, in ``B'``. Step 11's shared
    budgets apply: every charge is a non-input, or an input read in
    ``sigma`` (red at its start or loaded), never needed red at its end.
    Found exactly by :func:`~spartition.families.common.programs.program_maximum`
    over ``(s1, s2, t, r1, r2)``, ``t`` up to ``min(T, n)`` (beyond,
    :func:`~spartition.families.attention.backward.recompute_programs.closed_pairs` no longer grows and ``c`` only falls; the cell
    bound is :func:`~spartition.families.attention.backward.recompute_programs.program_cells`'s).

    Examples
    --------
    A middle segment at ``M = 8, S = 8`` (``T = 24, L = 16``), ``n = 32, d = 2``:

    >>> backward_recompute_capacity(32, 2, 24, 16), backward_recompute_capacity(2, 1, 5, 3)
    (22, 2)
    """
    return searched_maximum(n, d, T, L, "QK+dOV")


@lru_cache(maxsize=1 << 16)
def backward_recompute_joint_capacity(n: int, d: int, T: int, L: int) -> int:
    """All five products of dense backward with a designated event in one segment (both games).

    The ``QK`` and ``dOV`` products of :func:`backward_recompute_capacity` and
    those that consume ``P`` and ``dS``: ``PdO_i_j_c`` (sum tree of
    ``dV_jc``), ``dSK_i_j_l`` (``dQ_il``), ``dSQ_i_j_l`` (``dK_jl``); ``5 n^2
    d`` in all.

    Parameters
    ----------
    n, d, T, L : int
        As in :func:`backward_recompute_capacity`.

    Returns
    -------
    int
        :func:`backward_recompute_capacity`'s program (the same variables and
        constraints, ``t`` now up to ``min(T, 3 n d)``) with ``min(sqrt((alpha_P
        s2 + alpha_dS s1) t), d (alpha_P + 2 alpha_dS))`` added, ``alpha_P =
        min(n^2, c + x1)``, ``alpha_dS = min(n^2, c + x2)`` (``x1, x2`` as
        there).

    Notes
    -----
    **Proof**, continuing :func:`backward_recompute_capacity`'s steps 1-8
    (``q, k, o, v`` now the entries read by any designated product event in
    the segment, so ``s1 + s2 + r1 <= L`` still, and each count of steps 1-8
    grows with them; ``t`` as in step 6, at least the consumer trees
    touched).

    9. *The P and dS read.* A designated ``PdO`` event in the segment reads
       a designated event of ``P_ij``. If that event is earlier, ``P_ij`` is
       in ``B'`` (part 2): the pair is charged. Else it reads a designated
       ``A_ij`` event, earlier (``A_ij`` in ``B'``) or in the segment,
       reading a designated ``S_ij`` event, earlier (``S_ij`` in ``B'``) or
       in the segment, whose copy of ``Tree(S_ij)`` meets ``B'`` or lies in
       the segment: then the pair has designated ``QK`` products here and,
       with no node in ``B'``, is QK-closed. A designated ``dSK`` or ``dSQ``
       event reads a designated event of ``dS_ij``: earlier (charged) or in
       the segment, reading a designated ``dPD_ij`` event, earlier
       (charged) or in the segment, reading a designated ``dP_ij`` event,
       earlier (charged) or in the segment, whose copy of ``Tree(dP_ij)``
       meets ``B'`` or lies in the segment: the pair is charged or
       dOV-closed. So the pairs whose ``P`` is read number ``alpha_P <= c +
       x1`` and those whose ``dS`` is read ``alpha_dS <= c + x2`` (``c`` now
       the pairs meeting ``B'`` with a designated product or a ``P``, ``dS``
       read here; steps 3-5 grow with ``c``), both at most ``n^2``.
    10. *Loomis-Whitney.* The ``PdO`` products counted lie in ``{(i, j, c):
       P_ij read, dO_ic read, Tree(dV_jc) touched}``: at most
       ``sqrt(alpha_P o t_V)``; the ``dSK`` ones ``sqrt(alpha_dS k t_Q)``,
       the ``dSQ`` ones ``sqrt(alpha_dS q t_K)``; by Cauchy-Schwarz together
       at most ``sqrt((alpha_P o + alpha_dS (q + k)) t) <= sqrt((alpha_P s2
       + alpha_dS s1) t)``, and at most ``d (alpha_P + 2 alpha_dS)`` (``d``
       products per pair and consumer). The trees touched number at most
       ``3 n d``, so ``t`` is read as at most ``3 n d`` (a larger ``t`` only
       spends budget).

    Every term grows with ``c``, so ``c = min(n^2, T - s1 - s2 - t - r1 -
    r2)``; the maximum over ``(s1, s2, t, r1, r2)``, ``t <= min(T, 3 n d)``,
    is found exactly by
    :func:`~spartition.families.common.programs.program_maximum` with
    :func:`~spartition.families.attention.backward.recompute_programs.program_cells`'s cell bound.

    Examples
    --------
    >>> backward_recompute_joint_capacity(32, 2, 24, 16), backward_recompute_joint_capacity(2, 1, 5, 3)
    (38, 3)
    """
    return searched_maximum(n, d, T, L, "all")


@lru_cache(maxsize=1 << 16)
def backward_recompute_consumer_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most distinct ``PdO``, ``dSK`` and ``dSQ`` products with a designated event in one segment (both games, dense).

    Parameters
    ----------
    n, d, T, L : int
        As in :func:`backward_recompute_capacity`.

    Returns
    -------
    int
        :func:`backward_recompute_joint_capacity`'s program with the ``Q
        K^T`` and ``dO V^T`` terms left out: the maximum of ``min(sqrt((alpha_P
        s2 + alpha_dS s1) t), d (alpha_P + 2 alpha_dS))`` under the same
        constraints.

    Notes
    -----
    **Proof.** Steps 1-10 of :func:`backward_recompute_joint_capacity` bound
    the consumer products of a segment by its step 10 over quantities that
    satisfy the constraints of steps 1-8, whether or not the ``Q K^T`` and
    ``dO V^T`` products are counted too. Leaving them out matters for the
    bound, not the count: a ``Q K^T`` product rebuilt in many segments has a
    designated event in each (one per copy of its tree) and is counted in
    each, while a consumer product, in the in-tree of an output, has exactly
    one designated event (designation lemma, part 1). With ``W = 3 n^2 d``
    the segments needed can be more than with all five products.

    Examples
    --------
    >>> backward_recompute_consumer_capacity(32, 2, 24, 16), backward_recompute_consumer_capacity(2, 1, 5, 3)
    (22, 2)
    """
    return searched_maximum(n, d, T, L, "consumers")


#: Seconds the registered formula gives its searches together (:func:`backward_recompute_bound`); measured on
#: one core: n = 32, d = 2 under 4 s per M, n = 32 and 64, d = 4, M = 16 about 17 s; n = 64, d = 4, M = 64 about
#: 44 s for the consumer count and 35 s for the joint one (stop 54; a sandwich row's 60 s then cuts the second).
BACKWARD_RECOMPUTE_SECONDS = 60.0


_FINISHED: dict = {}


def backward_recompute_bound(n: int, d: int, M: int, time_limit: float | None = None,
                             counted: str | None = None) -> SegmentBound:
    """The best ``S (h(S) - 1)`` of a backward count valid with recomputation: a lower bound in both games.

    **Proof.** Cut any valid schedule (standard or oneshot) with ``Q`` I/O
    moves after every ``S``-th: ``h = ceil(Q / S)`` segments, ``Q >= S (h -
    1)``. Every ``QK`` and ``dOV`` product reaches an output (through
    ``dS_ij`` to ``dQ``), so it has a designated event (the designation
    lemma, part 1), in some segment: the ``W = 2 n^2 d`` products are at
    most the sum over segments of the distinct products with a designated
    event there, each at most :func:`backward_recompute_capacity` (with the
    consumer products, ``W = 5 n^2 d`` and
    :func:`backward_recompute_joint_capacity`; the consumer products alone,
    ``W = 3 n^2 d`` and :func:`backward_recompute_consumer_capacity`) at step
    11's budgets (the first segment with nothing red at its start, the last
    with nothing needed at its end, neighbours sharing a boundary); ``h`` is
    at least :func:`~spartition.families.common.segments.shared_segments_needed`
    of these counts. Any ``S`` gives a valid bound; the search decides only
    how strong it is.

    Parameters
    ----------
    n, d, M : int
    time_limit : float or None
        Seconds for the search; a search the limit cuts is skipped (value 0,
        ``skipped`` says so; :func:`~spartition.families.common.segments.timed_best`).
    counted : {"QK+dOV", "all", "consumers"} or None
        The count searched; None: ``"all"`` where
        :func:`~spartition.families.attention.forward.bounds.joint_counts_searched`,
        else ``"QK+dOV"`` (strength and cost, never validity: the ``Q K^T``
        and ``dO V^T`` count alone never beat the joint one on the grid of
        issue 39).

    Returns
    -------
    SegmentBound
        ``weight`` the count searched; results with nothing skipped are
        remembered.

    Examples
    --------
    >>> b = backward_recompute_bound(32, 2, 8)
    >>> b.value, b.weight, b.value == b.S * (b.segments - 1), b.value > 8 * 32 * 2 + 32  # above the trivial bound
    (2856, 'all', True, True)
    >>> backward_recompute_bound(32, 2, 8, counted="consumers").value
    3000
    """
    if counted is None:
        counted = "all" if joint_counts_searched(n, d, M) else "QK+dOV"
    if (n, d, M, counted) in _FINISHED:
        return _FINISHED[(n, d, M, counted)]
    W, capacity = {"QK+dOV": (2, backward_recompute_capacity), "all": (5, backward_recompute_joint_capacity),
                   "consumers": (3, backward_recompute_consumer_capacity)}[counted]
    W *= n * n * d

    def run(check):
        def count(TL):
            check()
            return capacity(n, d, *TL)
        return capped_shared_bound(W, M, 4 * (W + 8 * n * d + n + M), count, counted)

    best = timed_best([(counted, run)], time_limit)
    if not best.skipped:
        _FINISHED[(n, d, M, counted)] = best
    return best


#: The largest M the registered formula is evaluated at (a compute cap, like the oneshot count's: n = 64,
#: d = 4, M = 64 takes about 60 s, n = 64, d = 16, M = 256 does not finish in 60 s); the benchmark grid of
#: issue 39 (n = 32, 64, d = 2, 4, M = 4 .. 4 d^2) lies below it. Strength, never validity.
BACKWARD_RECOMPUTE_MAX_M = 64


def _regime(p, M):
    return (p.get("Z_QK") in (None, p["n"] * p["n"]) and 3 <= M <= p["n"] * p["d"]
            and M <= BACKWARD_RECOMPUTE_MAX_M)


def _consumer_regime(p, M):
    # searched where the joint counts are (strength and cost, never validity)
    return _regime(p, M) and joint_counts_searched(p["n"], p["d"], M)


def _lower(counted):
    def value(p, M):
        # outside the regime (masked, M < 3 or a whole input matrix red) the value is undefined (nan)
        if not (_regime if counted is None else _consumer_regime)(p, M):
            return math.nan
        # a search cut by BACKWARD_RECOMPUTE_SECONDS is skipped: 0, still valid
        b = backward_recompute_bound(p["n"], p["d"], M, BACKWARD_RECOMPUTE_SECONDS, counted)
        _CUT[(counted, p["n"], p["d"], M)] = b.skipped
        return float(b.value)

    return value


#: (count, n, d, M) -> the searches its last evaluation skipped (the formula's notes; the sandwich lists them).
_CUT: dict = {}


def _notes(counted):
    return lambda p, M: _CUT.get((counted, p["n"], p["d"], M), ())


_DETAIL_F = ("F(T, L)", "max over s1 + s2 + r1 <= L, d r_k <= s_k, r2 <= r1, c = min(n^2, T - s1 - s2 - t - r1 - r2) "
             "of H(s1, x1) + H(s2, x2), H(s, x) = min(F(s, c) + d x, F(s, c + x)), x1 = min(r1 p1, t max(r1, p1), "
             "x2 + r1 min(p1, t)), x2 = min(r2 p2, t max(r2, p2), x1), p1 = min(n, s1/d - r1), p2 = min(n, (s2 - "
             "r1 + r2)/d - r2), F(s, c) = min(s/2 sqrt(c), d c, (s/2)^2): s1 = q + k, s2 = o + v entries read, c "
             "pairs meeting B', t consumer-tree nodes in B', r_k rows of one kind's closed pairs (each charged: l_i "
             "read, D_i's tree or O_i in B'); a dOV-closed pair is QK-closed")
_DETAIL_H = ("h(S)", "as in segment-matmul-lower (T = M + S + b', L = M - a' + S, shared boundaries)")
_DETAIL_TIME = ("time", "searched within BACKWARD_RECOMPUTE_SECONDS = 60 s; a cut search is skipped (0)")
_REGIME = ("dense, every summation shape and order, both games (recomputation allowed), 3 <= M <= n d; "
           "evaluated for M <= 64 only (a compute cap)")

#: The segment bound of dense attention backward (FlashAttention form) valid with recomputation, both games.
BACKWARD_RECOMPUTE_FORMULA = Formula(
    name="segment-backward-recompute-lower",
    families=("attention-backward-flash",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment counts of the Q K^T and dO V^T products (W = 2 n^2 d) and of all five products (W = 5 n^2 d) "
          "over their designated events, each kind closed on its own sum tree, proved in "
          "spartition.families.attention.backward.recompute_bounds.backward_recompute_capacity and "
          "backward_recompute_joint_capacity",
    constants="explicit",
    regime=_REGIME,
    func=_lower(None),
    holds=_regime,
    detail=(_DETAIL_F,
            ("G(T, L)", "F's program (t <= 3 n d) plus min(sqrt((alpha_P s2 + alpha_dS s1) t), d (alpha_P + 2 "
                        "alpha_dS)), alpha_P = min(n^2, c + x1), alpha_dS = min(n^2, c + x2): the products of P o dO, "
                        "dS K and dS^T Q"),
            ("searched", "G where the joint counts are searched (M d <= 512, M < n d), else F"),
            _DETAIL_H, _DETAIL_TIME),
    variants=("oneshot", "recompute"),
    notes=_notes(None),
)

#: The segment bound of the consumer products alone (W = 3 n^2 d), both games: a separate formula, so that the
#: sandwich's formula child sends the joint count's bound before it starts this slower search.
BACKWARD_CONSUMER_FORMULA = Formula(
    name="segment-backward-consumer-lower",
    families=("attention-backward-flash",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the consumer products P o dO, dS K and dS^T Q (W = 3 n^2 d) over their designated "
          "events, proved in "
          "spartition.families.attention.backward.recompute_bounds.backward_recompute_consumer_capacity",
    constants="explicit",
    regime=_REGIME + ", M d <= 512 and M < n d",
    func=_lower("consumers"),
    holds=_consumer_regime,
    detail=(_DETAIL_F,
            ("C(T, L)", "F's variables and constraints (t <= 3 n d), maximising min(sqrt((alpha_P s2 + alpha_dS s1) "
                        "t), d (alpha_P + 2 alpha_dS)), alpha_P = min(n^2, c + x1), alpha_dS = min(n^2, c + x2)"),
            _DETAIL_H, _DETAIL_TIME),
    variants=("oneshot", "recompute"),
    notes=_notes("consumers"),
)
