"""Proven segment counts for dense attention backward (``attention-backward-flash``): the products one segment computes.

The argument of :mod:`spartition.families.attention.forward.bounds` (Hong & Kung's
segments, the Loomis-Whitney count, the budget ``B`` of a segment) applied to
the backward pass in FlashAttention's form: :func:`backward_segment_capacity`
counts the products of ``Q K^T`` and ``dO V^T``,
:func:`backward_joint_segment_capacity` all five products, and
:func:`backward_segment_bound` derives the explicit lower bound
``S (h - 1)``; :func:`backward_segment_charges` measures every quantity of the
proofs on a replayed schedule, segment by segment, for the tests.

References
----------
Hong & Kung (STOC 1981); Irony, Toledo & Tiskin (JPDC 2004); Li, Liang, Shi,
Song, Yue, Zhang, "On Fine-Grained I/O Complexity of Attention Backward
Passes" (arXiv 2410.09397): the products of dS, dQ, dK, dV counted here.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.attention.forward.bounds import charged_products, joint_counts_searched
from spartition.families.common.schedule_segments import shared_charges, split_segments
from spartition.families.common.programs import program_maximum
from spartition.families.common.segments import SEGMENT_ENDS, SegmentBound, best_segment_size, best_shared_size, segment_budgets, segments_needed, shared_bound

__all__ = ["backward_joint_segment_capacity", "backward_segment_bound", "backward_segment_capacity",
           "backward_segment_charges"]


def backward_segment_capacity(n: int, d: int, M: int, S: int, start: bool = True, end: bool = True,
                              budgets: tuple | None = None) -> int:
    """The most ``QK`` and ``dOV`` products one segment with ``S`` I/O moves computes (oneshot, dense backward).

    For ``attention-backward-flash`` (FlashAttention's backward pass, the
    form Li et al. bound): the products ``QK_i_j_l`` of ``S = Q K^T`` and
    ``dOV_i_j_c`` of ``dP = dO V^T``, ``2 n^2 d`` in all.

    Parameters
    ----------
    n, d, M, S, start, end, budgets
        As in :func:`segment_capacity`.

    Returns
    -------
    int
        An upper bound on the ``QK`` and ``dOV`` products computed in any
        segment of any valid oneshot schedule with at most ``S`` I/O moves.

    Notes
    -----
    **Proof**, with ``B`` and step 9's budgets as in :func:`segment_capacity`
    (``|B| <= T = M (start + end) + S``, inputs read ``<= L = M start + S``).
    ``Pair(i, j)`` is the products ``QK_i_j_l`` and ``dOV_i_j_c``, the sum
    trees of ``S_ij`` and ``dP_ij`` and the nodes ``A_ij, P_ij, dPD_ij,
    dS_ij``: connected (every node has a path to ``dS_ij`` inside it),
    disjoint across pairs and from the inputs; every node has a successor
    and is computed exactly once (oneshot).

    1. *Inputs.* The entries of ``Q, K, dO, V`` read by a compute in the
       segment, ``q, k, o, v`` of them, are red at its start or loaded:
       ``q + k + o + v <= L``, and they lie in ``B``.
    2. *Crossing edges.* If ``Pair(i, j)`` has nodes computed inside and
       outside the segment, an edge of it has one end inside (the pair is
       connected), and as in :func:`segment_capacity` step 2 a node of it is
       in ``B``.
    3. *Charged pairs* (a product computed here, ``Pair(i, j)`` meets
       ``B``): ``c <= T - q - k - o - v`` of them. Their ``QK`` products lie in
       ``{(i, j, l): Q_il read, K_jl read, (i, j) charged}``: at most
       ``min(sqrt(q k c), d c, q k)`` (Loomis-Whitney), at most
       ``min((q + k)/2 sqrt(c), d c, ((q + k)/2)^2)``; their ``dOV`` products
       likewise with ``o + v``.
    4. *Closed pairs* (a product computed here, ``Pair(i, j)`` does not meet
       ``B``): by step 2 the whole pair is computed here, so all of ``Q_i``,
       ``K_j``, ``dO_i`` and ``V_j`` were read. With ``r`` rows ``i`` and
       ``p`` rows ``j`` having closed pairs: ``d r <= min(q, o)``, ``d p <=
       min(k, v)``, at most ``r p`` closed pairs, ``2 d`` products each.

    The count is the maximum of step 3's two counts plus ``2 d r p`` over
    the integers allowed by 1-4, with ``s1 = q + k >= d (r + p)`` and ``s2 =
    o + v >= d (r + p)``, rounded down. It grows with ``c``, so ``c = T -
    s1 - s2``; the program is solved exactly, by a table over ``(s1, s2)``
    and its suffix maxima over ``s1, s2 >= d (r + p)``.

    Step 11 of :func:`segment_capacity` holds here: every charge above (a
    node of a pair, later of a consumer tree) is a non-input, and every
    input counted is read in the segment, so red at its start or loaded;
    the program runs with
    :func:`~spartition.families.common.segments.shared_budgets` where the red
    non-inputs at the segment's boundaries are known.

    Examples
    --------
    >>> backward_segment_capacity(2, 1, 3, 1), backward_segment_capacity(32, 2, 4, 8)
    (4, 20)
    """
    T, L = budgets if budgets is not None else segment_budgets(M, S, start, end)
    s = np.arange(L + 1)
    s1, s2 = s[:, None].astype(float), s[None, :].astype(float)
    c = T - s1 - s2
    table = np.where((s1 + s2 <= L) & (c >= 0), charged_products(s1, c, d) + charged_products(s2, c, d), -np.inf)
    # best[m1, m2] = max of the table over s1 >= m1, s2 >= m2
    best = np.maximum.accumulate(np.maximum.accumulate(table[::-1, ::-1], axis=0), axis=1)[::-1, ::-1]
    top = 0.0
    for m in range(0, min(2 * n, L // d) + 1):  # m = r + p
        r = np.arange(max(0, m - n), min(n, m) + 1)
        if r.size == 0 or best[d * m, d * m] == -np.inf:
            continue
        top = max(top, float(best[d * m, d * m] + 2 * d * (r * (m - r)).max()))
    return math.floor(top + 1e-6)


def backward_joint_segment_capacity(n: int, d: int, M: int, S: int, start: bool = True, end: bool = True,
                                    budgets: tuple | None = None) -> int:
    """All five products of the backward pass one segment with ``S`` I/O moves computes (oneshot, dense).

    The ``QK`` and ``dOV`` products of :func:`backward_segment_capacity` and
    those that consume ``P`` and ``dS``: ``PdO_i_j_c`` (in the sum tree of
    ``dV_jc``), ``dSK_i_j_l`` (of ``dQ_il``) and ``dSQ_i_j_l`` (of ``dK_jl``),
    ``5 n^2 d`` in all.

    Parameters
    ----------
    n, d, M, S, start, end, budgets
        As in :func:`segment_capacity`.

    Returns
    -------
    int
        An upper bound on these products computed in any segment of any
        valid oneshot schedule with at most ``S`` I/O moves.

    Notes
    -----
    **Proof**, continuing steps 1-4 of :func:`backward_segment_capacity`.

    5. *Active pairs.* Call a pair active if a node of ``Pair(i, j)`` is
       computed in the segment or ``P_ij`` or ``dS_ij`` is read by a
       computation there. An active pair that does not meet ``B`` is closed
       (``P_ij`` or ``dS_ij`` read but not computed here is red at the start
       or loaded; computed here, the whole pair is, by step 2). With ``c`` now
       the active pairs that meet ``B`` (one node each; at least the charged
       pairs, and steps 3's counts grow with ``c``), ``alpha <= c + r p``
       pairs are active.
    6. *Consumer trees.* A consumer product computed here puts a node of its
       sum tree (``dV_jc``, ``dQ_il`` or ``dK_jl``; disjoint from each other,
       the pairs and the inputs) in the segment, and the tree meets ``B``: if
       a node of it is computed outside the segment, by step 2; if all of it
       is computed here, its root is an output, stored after it is computed,
       so stored in the segment or red at its end (the root is never
       recomputed; in the segment that ends the schedule it is stored in
       it). So ``t`` touched trees take ``t`` nodes of ``B``: ``s1 + s2 + c +
       t <= T``.
    7. *Consumer products.* The ``PdO`` products lie in ``{(i, j, c): (i, j)
       active, dO_ic read, dV_jc touched}``: at most ``sqrt(alpha o t_V)``
       (Loomis-Whitney); the ``dSK`` ones at most ``sqrt(alpha k t_Q)``, the
       ``dSQ`` ones ``sqrt(alpha q t_K)``. By Cauchy-Schwarz the three
       together are at most ``sqrt(alpha (q + k + o) t) <= sqrt(alpha (s1 +
       s2 - d p) t)`` (``V`` is not among them: ``q + k + o = s1 + s2 - v``
       and ``v >= d p``, step 4), and at most ``3 d alpha`` (``3 d`` per
       active pair).
    8. *Closed rows and columns.* A closed pair ``(i, j)`` has ``P_ij`` and
       ``dS_ij`` computed here and not in ``B``, so every successor of them
       is computed here too (after the segment it would need them red at its
       end or stored; before, they did not exist): the products of ``dV_jc``
       for every ``c``, ``dQ_il`` and ``dK_jl`` for every ``l``. So the ``r``
       closed rows touch ``r d`` trees of ``dQ`` and the ``p`` closed columns
       ``2 p d`` of ``dK`` and ``dV``: ``t >= d (r + 2 p)``. A closed row
       also reads the input ``l_i`` (in ``P_ij``) and ``D_i`` (in
       ``dPD_ij``): ``l_i`` is red at the start or loaded, and ``D_i`` is
       either in ``B`` itself, or has a node of its sum tree in ``B`` (step
       2), or was computed whole here from the inputs ``O_ic`` (red at the
       start or loaded): two nodes of ``B`` per closed row, none of them
       counted above (``O`` and ``l`` are not among ``q, k, o, v``). So
       ``s1 + s2 + c + t + 2 r <= T``; and as the ``l_i`` are inputs read,
       ``s1 + s2 + r <= L``.
    11. *Shared boundaries* (:func:`segment_capacity`, step 11). The charges
       of steps 5-8 are non-inputs (pair nodes, consumer trees, ``D_i``'s
       tree) or inputs read in the segment (``l_i``, ``O_ic``): red at its
       start or loaded, never needed red at its end. So the program runs
       with :func:`~spartition.families.common.segments.shared_budgets` too.
    12. *Charged and closed pairs together* (:func:`segment_capacity`, step
        12). Every ``QK`` product computed here is in a charged or a closed
        pair, so they lie in ``{(i, j, l): Q_il read, K_jl read, (i, j)
        charged or closed}``: at most ``min(s1/2 sqrt(c + r p), d (c + r p),
        (s1/2)^2)``; the ``dOV`` products likewise with ``dO``, ``V`` and
        ``s2``. Each count is the smaller of this and steps 3 and 4's.

    The count is the maximum over the integers allowed by 1-8 of the ``QK``
    and the ``dOV`` count (``c`` as in step 5) plus step 7's, with step 9's budgets
    of :func:`segment_capacity`, found exactly by
    :func:`~spartition.families.common.programs.program_maximum`: on a cell of
    ``r, p, s1, s2, c`` the objective is read at the corner that favours it
    (it grows with each variable but ``t``, read at the lower corner) and the
    cell holds no feasible point if a constraint fails everywhere in it.

    Examples
    --------
    >>> backward_joint_segment_capacity(2, 1, 3, 1), backward_joint_segment_capacity(32, 2, 4, 8)
    (5, 19)
    """
    T, L = budgets if budgets is not None else segment_budgets(M, S, start, end)

    def bound(lo, hi):  # variables r, p, s1, s2, c; each constraint at the corner that eases it
        r0, p0, a0, b0, c0 = lo.T
        r1, p1, a1, b1, c1 = hi.T
        used = a0 + b0 + c0
        # step 8: the closed lines' trees and row charges
        ok = ((a1 >= d * (r0 + p0)) & (b1 >= d * (r0 + p0)) & (a0 + b0 + r0 <= L)
              & (used + 2 * r0 + d * (r0 + 2 * p0) <= T))
        rp = (r1 * p1).astype(float)
        alpha = c1 + rp
        t = np.maximum(T - used - 2 * r0, 0).astype(float)  # step 6: the most trees the cell leaves room for in B
        reads = np.maximum(a1 + b1 - d * p0, 0).astype(float)  # step 7: q + k + o, without the V read
        consumer = np.minimum(np.sqrt(alpha * reads * t), 3 * d * alpha)
        a1, b1, c1 = a1.astype(float), b1.astype(float), c1.astype(float)
        # steps 3-4, or step 12 of segment_capacity for each product (the closed pairs among the pairs)
        qk = np.minimum(charged_products(a1, c1, d) + d * rp, charged_products(a1, c1 + rp, d))
        dov = np.minimum(charged_products(b1, c1, d) + d * rp, charged_products(b1, c1 + rp, d))
        values = qk + dov + consumer
        return np.where(ok, values, -np.inf)

    top = min(n, L // d)
    return program_maximum(bound, [0] * 5, [top, top, L, L, T])


def _backward_bound_at(n: int, d: int, M: int, S: int, weight: str = "QK+dOV") -> SegmentBound:
    if weight == "QK+dOV":
        W, counts = 2 * n * n * d, [backward_segment_capacity(n, d, M, S, start, end) for start, end in SEGMENT_ENDS]
    else:
        W = 5 * n * n * d
        counts = [backward_joint_segment_capacity(n, d, M, S, start, end) for start, end in SEGMENT_ENDS]
    h = segments_needed(W, *counts)
    return SegmentBound(S * (h - 1) if h else 0, S, counts[0], weight, *counts[1:], h)


def _best_backward(n: int, d: int, M: int, weight: str) -> SegmentBound:
    return best_segment_size(lambda S: _backward_bound_at(n, d, M, S, weight), M,
                             sorted({max(1, round(M * t / 4)) for t in range(1, 25)}))


@lru_cache(maxsize=1 << 16)
def _backward_capacity_within(n: int, d: int, T: int, L: int, weight: str) -> int:
    # the counts depend on M and S only through (T, L), which neighbouring segment sizes share
    if weight == "QK+dOV":
        return backward_segment_capacity(n, d, 0, 0, budgets=(T, L))
    return backward_joint_segment_capacity(n, d, 0, 0, budgets=(T, L))


def _backward_shared_at(n: int, d: int, M: int, S: int, weight: str, boundary_cells: int) -> SegmentBound:
    W = n * n * d * (2 if weight == "QK+dOV" else 5)
    return shared_bound(W, M, S, weight, lambda TL: _backward_capacity_within(n, d, *TL, weight), boundary_cells)


@lru_cache(maxsize=256)
def backward_segment_bound(n: int, d: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)`` of the backward counts: a lower bound on the oneshot optimum of dense ``attention-backward-flash``.

    **Proof.** As in :func:`forward_segment_bound`, with the ``W = 2 n^2 d``
    products of ``Q K^T`` and ``dO V^T`` and the counts of
    :func:`backward_segment_capacity`, or all ``W = 5 n^2 d`` products and
    the counts of :func:`backward_joint_segment_capacity`; each product is
    computed once. Either count's ``h`` is step 9's (:func:`segments_needed`)
    or step 11's (:func:`~spartition.families.common.segments.shared_segments_needed`, the red non-inputs at each
    boundary shared by the segments it separates).

    Returns
    -------
    SegmentBound
        The largest of the counts' bounds (``weight`` ``QK+dOV`` or
        ``all``, the latter searched where
        :func:`~spartition.families.attention.forward.bounds.joint_counts_searched`;
        ``shared`` for step 11's ``h``).

    Examples
    --------
    >>> b = backward_segment_bound(32, 2, 4)
    >>> b.value > 8 * 32 * 2 + 32, b.value == b.S * (b.segments - 1), b.weight
    (True, True, 'all')
    """
    # which counts are searched is a matter of strength and cost, never of validity
    weights = ("QK+dOV", "all") if joint_counts_searched(n, d, M) else ("QK+dOV",)
    bounds = [_best_backward(n, d, M, weight) for weight in weights]
    bounds += [best_shared_size(lambda S, fine, w=weight: _backward_shared_at(n, d, M, S, w, 8 if fine else 4), M)
               for weight in weights]
    return max(bounds, key=lambda b: b.value)


_BACKWARD_PAIR = ("QK", "S", "A", "P", "dOV", "dP", "dPD", "dS")


def backward_segment_charges(G, schedule, S: int) -> list[dict]:
    """Per segment of ``S`` I/O moves: the quantities the proof of :func:`backward_segment_capacity` bounds.

    Parameters
    ----------
    G : networkx.DiGraph
        A dense ``attention-backward-flash`` DAG.
    schedule : Schedule
        A valid oneshot schedule (replay it first: this walks it without checking).
    S : int
        I/O moves per segment.

    Returns
    -------
    list of dict
        One per segment, in order: the products (``qk``, ``dov``), the inputs
        read (``q, k, o, v``), the charged and closed pairs with the products
        of each kind, the rows and columns with a closed pair, ``|B|`` (step 9:
        without the nodes red at the end for the last segment), and whether
        every closed pair was computed whole in the segment.
    """
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    pair = {v: ("pair", *entry[v][1:3]) for v in G if entry[v][:1] and entry[v][0] in _BACKWARD_PAIR}
    members: dict = {}
    for v, t in pair.items():
        members.setdefault(t, []).append(v)
    tree = {v: t for v in G if (t := _consumer_tree(entry[v]))}
    for v, t in tree.items():
        members.setdefault(t, []).append(v)
    n = G.graph["params"]["n"]
    segments = split_segments(G, schedule, S, entry)
    out = []
    for k, seg in enumerate(segments):
        first, last = k == 0, k == len(segments) - 1
        B = seg["start"] | seg["io"] | (set() if last else seg["end"])
        b_entries = {entry[b] for b in B}
        done = seg["computed"]
        met = {pair[b] for b in B if b in pair}
        kinds = {"QK": {}, "dOV": {}}
        for v in done:
            if entry[v][0] in kinds:
                p = entry[v][1:3]
                kinds[entry[v][0]][p] = kinds[entry[v][0]].get(p, 0) + 1
        pairs = set(kinds["QK"]) | set(kinds["dOV"])
        charged = {p for p in pairs if ("pair", *p) in met}
        closed = pairs - charged
        counts = {t: sum(1 for v in seg["read"] if entry[v][0] == t) for t in ("Q", "K", "dO", "V")}
        # steps 5-7: active pairs, the consumer trees touched, met or computed whole
        active = {pair[v][1:] for v in done if v in pair}
        active |= {entry[u][1:3] for v in done for u in G.predecessors(v) if entry[u][:1] in (("P",), ("dS",))}
        consumer = {kind: [v for v in done if entry[v][0] == kind] for kind in ("PdO", "dSK", "dSQ")}
        touched = {kind: {tree[v] for v in vs} for kind, vs in consumer.items()}
        met_trees = {t for t in (tree.get(b) for b in B) if t}
        whole = {kind: {t for t in ts if t not in met_trees and all(v in done for v in members[t])}
                 for kind, ts in touched.items()}
        out.append({"first": first, "last": last, "qk": sum(kinds["QK"].values()), "dov": sum(kinds["dOV"].values()),
                    "alpha": len(active), "active_met": sum(1 for p in active if ("pair", *p) in met),
                    "active_unmet_closed": all(p in closed for p in active if ("pair", *p) not in met),
                    "consumer": {kind: len(vs) for kind, vs in consumer.items()},
                    "touched": {kind: len(ts) for kind, ts in touched.items()},
                    "touched_met": sum(1 for ts in touched.values() for t in ts if t in met_trees),
                    "touched_whole": {kind: len(ts) for kind, ts in whole.items()},
                    "touched_neither": sum(1 for kind, ts in touched.items() for t in ts
                                           if t not in met_trees and t not in whole[kind]),
                    "full_lines": sum(1 for i in range(n) if all((i, j) in active for j in range(n)))
                    + sum(1 for j in range(n) if all((i, j) in active for i in range(n))),
                    "q": counts["Q"], "k": counts["K"], "o": counts["dO"], "v": counts["V"],
                    "charged": len(charged), "closed": len(closed),
                    "qk_charged": sum(kinds["QK"].get(p, 0) for p in charged),
                    "dov_charged": sum(kinds["dOV"].get(p, 0) for p in charged),
                    "closed_rows": len({i for i, _ in closed}), "closed_cols": len({j for _, j in closed}),
                    "closed_whole": all(all(v in done for v in members[("pair", *p)]) for p in closed),
                    "B": len(B), "start_or_loaded": len(seg["start"] | seg["loaded"]), **shared_charges(seg, last),
                    # step 8: per closed row, l_i and a node of D_i's tree or an input O_ic in B
                    "row_charges": sum(("l", i) in b_entries for i in {i for i, _ in closed})
                    + sum(any(e[:2] in (("D", i), ("dOO", i)) or e[:2] == ("O", i) for e in b_entries)
                          for i in {i for i, _ in closed})})
    return out


def _consumer_tree(e):
    """The consumer sum tree of a backward node: ``("dV", j, c)``, ``("dQ", i, l)`` or ``("dK", j, l)``."""
    if not e:
        return None
    if e[0] == "PdO":
        return ("dV", e[2], e[3])
    if e[0] == "dSK":
        return ("dQ", e[1], e[3])
    if e[0] == "dSQ":
        return ("dK", e[2], e[3])
    if e[0] in ("dV", "dQ", "dK"):
        return (e[0], e[1], e[2])
    return None
