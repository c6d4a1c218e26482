"""The claim set ``segments``: the project's own segment counts and the bounds they give, checked where they can fail.

The segment bounds of dense attention (``segment-forward-lower``,
``segment-backward-lower``; proofs in :mod:`spartition.families.attention.forward.bounds`
and :mod:`spartition.families.attention.backward.bounds`, docs/definitions.md section 3)
are theorems of this project, not of a paper, so nobody else checks their
constants. Two kinds of claim do:

* **the counts**: every segment of ``S`` I/O moves of a replayed schedule
  computes at most ``F`` of the counted products, ``F`` the count with the
  budgets of that segment's boundaries (step 11: ``a`` red non-inputs at its
  start, ``b`` at its end; the first and the last segment as in step 9).
  These budgets are at most step 9's, so the claim checks step 9's count
  too. A schedule whose segment computes more refutes the proof; the
  instances are those where the count is below the products' total, so the
  claim could fail;
* **the bounds**: the best replayed schedule (every registered algorithm
  that applies, and greedy) costs at least the bound. Informative where the
  bound exceeds the trivial bound.

The exact optima at ``n = 2, 3`` (where the bounds stay near the trivial
bound) are checked against both bounds in ``tests/families/attention/test_forward_segment_bound.py``
and ``tests/families/attention/test_backward_segment_bound.py``.

The counts valid with recomputation (``segment-forward-recompute-lower``,
``segment-forward-av-lower``, ``segment-backward-recompute-lower``,
``segment-backward-consumer-lower``, ``segment-matmul-lower``; standard
game, so valid in both) get three more kinds of claim, each able to fail
where a constant is mutated (tests/families/attention/test_recompute_claims.py mutates them):

* **the programs**: each count at a segment's budgets equals its program
  enumerated point by point here (a count lowered or raised by 10% differs);
* **the derivations**: each bound is ``S (h - 1)`` with ``h`` recomputed from
  the counts at the bound's ``S`` (:func:`shared_segments_needed`; a bound
  ``S h`` differs);
* **the per-segment counts on schedules that really recompute**
  (:func:`~spartition.core.recomputing.recomputing_schedule`, and greedy and
  the published algorithms), and **the bounds** against every replayed
  schedule, in the standard game.
"""

from __future__ import annotations

import math

from spartition.families.attention.forward.bounds import forward_segment_bound, segment_capacity
from spartition.families.attention.forward.charges import segment_charges
from spartition.families.attention.backward.bounds import (
    backward_segment_bound,
    backward_segment_capacity,
    backward_segment_charges,
)
from spartition.families.common.papers import SEGMENTS
from spartition.families.attention.backward import recompute_bounds as backward_recompute
from spartition.families.attention.backward.recompute_charges import backward_recompute_charges
from spartition.families.attention.forward import recompute_bounds as forward_recompute
from spartition.families.attention.forward.recompute_charges import forward_recompute_charges
from spartition.families.attention.pair_sum_claims import PAIR_SUM_LIST
from spartition.families.classic import recompute_bounds as matmul_recompute
from spartition.families.common.segments import shared_budgets, shared_segments_needed
from spartition.study.claim_quantities import optimum_range
from spartition.study.claims import Claim, Interval, Quantity, expr, formula
from spartition.study.claimsets import ClaimSet

__all__ = ["SEGMENT_CLAIMS", "enumerated_backward_consumer_count", "enumerated_backward_count",
           "enumerated_backward_joint_count", "enumerated_forward_av_count", "enumerated_forward_count",
           "enumerated_matmul_count",
           "segment_excess"]

FWD = "attention-forward"
BWD = "attention-backward-flash"
FWD_ALGS = ("flash-forward", "square-tiling-forward", "standard-forward", "tiled-forward", "greedy")
BWD_ALGS = ("flash-backward", "greedy")
#: schedules of the standard game the recompute-valid forward counts are checked on (row-sums-first-forward
#: makes the scores of its first pass's rows twice)
FWD_RECOMPUTE_ALGS = ("greedy", "flash-forward", "tiled-forward", "row-sums-first-forward")


def segment_excess(segments, capacity, counted=lambda c: c["products"]) -> tuple:
    """The most products one segment computes beyond its count, and that segment's index.

    Parameters
    ----------
    segments : list of dict
        The charges of a replayed schedule's segments, each with ``first`` and
        ``last`` (:func:`segment_charges`, :func:`backward_segment_charges`).
    capacity : callable
        ``capacity(start, end, a, b) -> int``: the count of a segment that
        does not start (``start``) or end (``end``) the schedule, with ``a``
        red non-inputs at its start and ``b`` at its end (step 11).
    counted : callable
        ``counted(charges) -> int``: the counted products of one segment.

    Returns
    -------
    tuple
        ``(max over segments of products - count, index of that segment)``;
        a positive excess refutes the count's proof.

    Examples
    --------
    >>> from spartition.core.registry import algorithm, build
    >>> G = build("attention-forward", n=4, d=1)
    >>> segments = segment_charges(G, algorithm("greedy").generate(G, 4), 4)
    >>> excess, k = segment_excess(segments, lambda start, end, a, b: segment_capacity(4, 1, 4, 4, start, end))
    >>> excess <= 0
    True
    """
    gaps = [counted(c) - capacity(not c["first"], not c["last"], c["a"], c["b"]) for c in segments]
    worst = max(gaps)
    return worst, gaps.index(worst)


def _segment_sizes(M: int, best_S: int) -> tuple:
    """The segment lengths a count is checked at: the bound's own and a spread around M."""
    return tuple(sorted({best_S, max(1, M // 2), M, 2 * M}))


def _worst_segment(count, best_S, charges, counted, total, algs, extra=None) -> Quantity:
    """Most products beyond the count in any segment of any replayed schedule (at the sizes of :func:`_segment_sizes`).

    Known without a schedule: at most ``total - F`` for the largest count
    ``F`` of a middle segment among the sizes checked, so the claim informs
    where some count is below the products' total.
    """
    def sizes(ctx):
        n, d, M = ctx.params["n"], ctx.params["d"], ctx.M
        return n, d, M, _segment_sizes(M, best_S(n, d, M))

    def ev(ctx):
        from spartition.core.game import replay
        from spartition.core.registry import algorithm
        from spartition.errors import SpartitionError

        n, d, M, Ss = sizes(ctx)
        worst = None
        found = {}
        for name in algs:
            try:
                found[name] = algorithm(name).generate(ctx.dag, M)
            except SpartitionError:
                continue
        found.update(extra(ctx.dag, M) if extra is not None else {})
        for name, schedule in found.items():
            try:
                replay(ctx.dag, schedule)
            except SpartitionError:
                continue
            for S in Ss:
                gap, k = segment_excess(charges(ctx.dag, schedule, S),
                                        lambda start, end, a, b, S=S: count(n, d, M, S, start, end, a, b), counted)
                if worst is None or gap > worst[0]:
                    worst = (gap, f"schedule {name}, segment {k} of S = {S} I/O moves")
        if worst is None:
            return None
        return Interval.point(worst[0], "most products beyond F(M, S) in one segment of a replayed schedule", worst[1])

    def known(ctx):
        n, d, M, Ss = sizes(ctx)
        return Interval(-math.inf, total(n, d) - min(count(n, d, M, S, True, True, 0, M) for S in Ss),
                        "0 .. all products")

    return Quantity("products beyond the count in one segment", ev, known)


def _at_boundaries(capacity):
    """A count read with step 11's budgets: ``(n, d, M, S, start, end, a, b) -> int``."""
    return lambda n, d, M, S, start, end, a, b: capacity(n, d, M, S, budgets=shared_budgets(M, S, a, b, start, end))


def _count_claim(name, family, what, count, best_S, charges, counted, total, algs, grid, Ms, source):
    return Claim(
        name, f"every segment of S I/O moves computes at most F(M, S) {what}, with the budgets of its boundaries "
        "(M + S + b; inputs M - a + S; a, b its red non-inputs at start and end)", source, family, grid,
        _worst_segment(_at_boundaries(count), best_S, charges, counted, total, algs), "<=",
        expr(lambda p, M: 0, "0"), Ms=Ms, regime="dense, oneshot; every S")


def _cheapest(algs) -> Quantity:
    """The cheapest replayed schedule among ``algs``, as a point: a bound above it is refuted by that schedule."""
    best = optimum_range(algs)

    def ev(ctx):
        r = best.evaluate(ctx)
        return Interval.point(r.hi, f"the cheapest of {', '.join(algs)}, replayed", r.witness)

    return Quantity(f"I/O of the cheapest of {', '.join(algs)}", ev, best.known)


def _bound_claim(name, family, algs, grid, Ms):
    return Claim(
        name, f"no replayed schedule costs less than {name} (max_S S (h(S) - 1)): the bound's proof survives "
        "every schedule the project has", SEGMENTS, family, grid, _cheapest(algs), ">=", formula(name), Ms=Ms,
        regime="dense, oneshot, 3 <= M <= n d")


def _F(s, c, d):
    return min(s / 2 * math.sqrt(c), d * c, (s / 2) ** 2)


def enumerated_forward_count(n: int, d: int, T: int, L: int) -> int:
    """:func:`forward_recompute_capacity`'s program, every integer point ``(r, p, s, c)`` tried.

    >>> enumerated_forward_count(4, 1, 9, 6)
    9
    """
    best = 0.0
    for r in range(0, min(n, L // d) + 1):
        for p in range(0, min(n, L // d) + 1):
            for s in range(d * (r + p), L + 1):
                for c in range(0, min(n * n, T - s - r) + 1):
                    best = max(best, min(_F(s, c, d) + d * r * p, _F(s, c + r * p, d)))
    return math.floor(best + 1e-6)


def enumerated_forward_av_count(n: int, d: int, T: int, L: int) -> int:
    """:func:`forward_recompute_av_capacity`'s program, every integer point ``(r, p, s, v, c, t)`` tried.

    >>> enumerated_forward_av_count(2, 1, 7, 4)
    3
    """
    best = 0.0
    for r in range(0, min(n, L // d) + 1):
        for p in range(0, min(n, L // d) + 1):
            for s in range(d * (r + p), L + 1):
                for v in range(0, min(L - s, n * d) + 1):
                    for t in range(r, T - s - v + 1):
                        for c in range(0, min(n * n, T - s - v - t) + 1):
                            alpha = min(n * n, c + r * p)
                            best = max(best, min(math.sqrt(alpha * v * t), d * alpha, n * v, n * t))
    return math.floor(best + 1e-6)


def enumerated_backward_count(n: int, d: int, T: int, L: int, counted: str = "QK+dOV") -> int:
    """The program of a backward count valid with recomputation, every integer point tried.

    ``counted``: ``"QK+dOV"`` (:func:`backward_recompute_capacity`), ``"all"``
    (the five-product one) or ``"consumers"`` (the consumer products alone).

    The points are ``(s1, s2, r1, r2, t, c)`` with ``r2 <= r1``, ``t <= 3 n
    d`` (``t <= n`` for ``"QK+dOV"``: more adds nothing) and the columns
    ``p1, p2`` with ``d (r1 + p1) <= s1`` and ``d (r2 + p2) + r1 - r2 <=
    s2``; the closed pairs ``y_k = min(r_k p_k, t max(r_k, p_k))``, then
    ``x2 = min(y2, y1)`` and ``x1 = min(y1, x2 + r1 min(p1, t))``, each step
    written out here, not through the program's helper.

    >>> [enumerated_backward_count(2, 1, 5, 3, counted) for counted in ("QK+dOV", "all", "consumers")]
    [2, 3, 2]
    """
    joint, products = counted != "QK+dOV", counted != "consumers"
    best = 0.0
    for s1 in range(L + 1):
        for s2 in range(L + 1 - s1):
            for r1 in range(0, min(n, s1 // d, L - s1 - s2) + 1):
                for r2 in range(0, min(n, s2 // d, r1) + 1):
                    if d * r2 + r1 - r2 > s2:
                        continue
                    for t in range(0, min(T - s1 - s2 - r1 - r2, 3 * n * d if joint else n) + 1):
                        for c in range(0, min(n * n, T - s1 - s2 - r1 - r2 - t) + 1):
                            for p1 in range(0, min(n, s1 // d - r1) + 1):
                                for p2 in range(0, min(n, (s2 - r1 + r2) // d - r2) + 1):
                                    y1 = min(r1 * p1, t * max(r1, p1))
                                    x2 = min(r2 * p2, t * max(r2, p2), y1)
                                    x1 = min(y1, x2 + r1 * min(p1, t))
                                    value = 0.0
                                    if products:
                                        value = (min(_F(s1, c, d) + d * x1, _F(s1, c + x1, d))
                                                 + min(_F(s2, c, d) + d * x2, _F(s2, c + x2, d)))
                                    if joint:
                                        alpha_p, alpha_ds = min(n * n, c + x1), min(n * n, c + x2)
                                        value += min(math.sqrt((alpha_p * s2 + alpha_ds * s1) * t),
                                                     d * (alpha_p + 2 * alpha_ds))
                                    best = max(best, value)
    return math.floor(best + 1e-6)


def enumerated_backward_joint_count(n: int, d: int, T: int, L: int) -> int:
    """:func:`backward_recompute_joint_capacity`'s program, every integer point tried (:func:`enumerated_backward_count`).

    >>> enumerated_backward_joint_count(2, 1, 5, 3)
    3
    """
    return enumerated_backward_count(n, d, T, L, "all")


def enumerated_backward_consumer_count(n: int, d: int, T: int, L: int) -> int:
    """:func:`backward_recompute_consumer_capacity`'s program, every integer point tried (:func:`enumerated_backward_count`).

    >>> enumerated_backward_consumer_count(2, 1, 5, 3)
    2
    """
    return enumerated_backward_count(n, d, T, L, "consumers")


def enumerated_matmul_count(a: int, b: int, c: int, T: int, L: int) -> int:
    """:func:`matmul_segment_capacity`'s program, every integer point ``(x, y, z)`` tried.

    >>> enumerated_matmul_count(8, 8, 8, 12, 8)
    8
    """
    best = 0.0
    for x in range(0, min(a * b, L) + 1):
        for y in range(0, min(b * c, L - x) + 1):
            for z in range(0, min(a * c, T - x - y) + 1):
                best = max(best, min(math.sqrt(x * y * z), b * z, x * y, c * x, a * y))
    return math.floor(best + 1e-9)


def _program_claim(name, family, what, count, enumerated, grid, Ms, where):
    """The count at a middle segment of ``S = M`` I/O moves (step 9's ``T = 3M``, ``L = 2M``) against its program."""
    def args(p, M):
        dims = (p["a"], p["b"], p["c"]) if family == "matmul" else (p["n"], p["d"])
        return (*dims, 3 * M, 2 * M)

    return Claim(
        name, f"the count of {what} at T = 3M, L = 2M is its program's maximum (every integer point tried)", where,
        family, grid, expr(lambda p, M: count()(*args(p, M)), f"{where.split()[0]}"), "==",
        expr(lambda p, M: enumerated(*args(p, M)), "the program, enumerated"), Ms=Ms,
        regime="every instance (an identity)")


def _derivation_claim(name, family, bound, counts, grid, Ms):
    """The registered bound against ``S (h - 1)``, ``h`` recomputed from the counts at the bound's own ``S``."""
    def again(p, M):
        dims = (p["a"], p["b"], p["c"]) if family == "matmul" else (p["n"], p["d"])
        b = bound()(*dims, M)
        W, capacity = counts(dims, b.weight)
        h = shared_segments_needed(
            W, lambda start, end, x, y: capacity(*shared_budgets(M, b.S, x, y, start, end)), M, 8)
        return b.S * (h - 1) if h else 0

    return Claim(
        name + "-derivation", f"{name} is S (h - 1) at its S, h the fewest segments whose counts reach W (step 11)",
        SEGMENTS, family, grid, formula(name), "==", expr(again, "S (h(S) - 1), h recomputed"), Ms=Ms,
        variant="recompute", regime="3 <= M (the formula's regime)")


def _forward_counts(dims, weight):
    n, d = dims
    if weight == "QK":
        return n * n * d, lambda T, L: forward_recompute.forward_recompute_capacity(n, d, T, L)
    if weight == "AV":
        return n * n * d, lambda T, L: forward_recompute.forward_recompute_av_capacity(n, d, T, L)
    return 2 * n * n * d, lambda T, L: forward_recompute.forward_recompute_joint_capacity(n, d, T, L)


def _backward_counts(dims, weight):
    n, d = dims
    if weight == "QK+dOV":
        return 2 * n * n * d, lambda T, L: backward_recompute.backward_recompute_capacity(n, d, T, L)
    if weight == "consumers":
        return 3 * n * n * d, lambda T, L: backward_recompute.backward_recompute_consumer_capacity(n, d, T, L)
    return 5 * n * n * d, lambda T, L: backward_recompute.backward_recompute_joint_capacity(n, d, T, L)


def _matmul_counts(dims, weight):
    a, b, c = dims
    return a * b * c, lambda T, L: matmul_recompute.matmul_segment_capacity(a, b, c, T, L)


def _recomputing(dag, M):
    """Schedules that really recompute (values deleted unstored and rebuilt), two seeds."""
    from spartition.core.recomputing import recomputing_schedule

    return {f"recomputing-{seed}": recomputing_schedule(dag, M, seed=seed) for seed in range(2)}


def _recompute_count_claim(name, family, what, capacity, best_S, charges, counted, total, algs, grid, Ms, source):
    def count(n, d, M, S, start, end, a, b):
        return capacity()(n, d, *shared_budgets(M, S, a, b, start, end))

    return Claim(
        name, f"every segment of S I/O moves has at most F(T, L) {what} with a designated event, with the budgets "
        "of its boundaries (T = M + S + b, L = M - a + S), on schedules that recompute", source, family, grid,
        _worst_segment(count, best_S, charges, counted, total, algs, _recomputing), "<=",
        expr(lambda p, M: 0, "0"), Ms=Ms, variant="recompute", regime="dense, both games; every S")


def _recompute_bound_claim(name, family, algs, grid, Ms):
    return Claim(
        name, f"no replayed schedule of the standard game costs less than {name} (max_S S (h(S) - 1))", SEGMENTS,
        family, grid, _cheapest(algs), ">=", formula(name), Ms=Ms, variant="recompute",
        regime="dense, both games, 3 <= M <= n d")


SEGMENT_LIST = (
    _count_claim("segment-forward-count", FWD, "Q K^T products", segment_capacity,
                 lambda n, d, M: forward_segment_bound(n, d, M).S, segment_charges, lambda c: c["products"],
                 lambda n, d: n * n * d, FWD_ALGS,
                 {"n": [8, 12], "d": [2]}, (3, 4, 6, 8),
                 "spartition.families.attention.forward.bounds.segment_capacity (steps 1-11)"),
    _count_claim("segment-backward-count", BWD, "Q K^T and dO V^T products", backward_segment_capacity,
                 lambda n, d, M: backward_segment_bound(n, d, M).S, backward_segment_charges,
                 lambda c: c["qk"] + c["dov"], lambda n, d: 2 * n * n * d, BWD_ALGS,
                 {"n": [6], "d": [2]}, (4, 6, 8),
                 "spartition.families.attention.backward.bounds.backward_segment_capacity (steps 1-4, 11)"),
    _bound_claim("segment-forward-lower", FWD, FWD_ALGS, {"n": [16, 24], "d": [2, 4]}, (3, 4, 6, 8, 16)),
    _bound_claim("segment-backward-lower", BWD, BWD_ALGS, {"n": [8, 12], "d": [2]}, (4, 6, 8, 12)),
    # valid with recomputation (standard game, so both games)
    _program_claim("segment-forward-recompute-program", FWD, "Q K^T products",
                   lambda: forward_recompute.forward_recompute_capacity, enumerated_forward_count,
                   {"n": [6, 16], "d": [1, 2]}, (3, 4, 5),
                   "forward_recompute_capacity (spartition.families.attention.forward.recompute_bounds)"),
    _program_claim("segment-forward-av-program", FWD, "A V products",
                   lambda: forward_recompute.forward_recompute_av_capacity, enumerated_forward_av_count,
                   {"n": [4, 8], "d": [1, 2]}, (3, 4),
                   "forward_recompute_av_capacity (spartition.families.attention.forward.recompute_bounds)"),
    _program_claim("segment-backward-recompute-program", BWD, "Q K^T and dO V^T products",
                   lambda: backward_recompute.backward_recompute_capacity, enumerated_backward_count,
                   {"n": [4, 8], "d": [1, 2]}, (3, 4),
                   "backward_recompute_capacity (spartition.families.attention.backward.recompute_bounds)"),
    _program_claim("segment-backward-recompute-joint-program", BWD, "products of all five kinds",
                   lambda: backward_recompute.backward_recompute_joint_capacity, enumerated_backward_joint_count,
                   {"n": [4, 8], "d": [1, 2]}, (3, 4),
                   "backward_recompute_joint_capacity (spartition.families.attention.backward.recompute_bounds)"),
    _program_claim("segment-backward-recompute-consumer-program", BWD, "consumer products (P o dO, dS K, dS^T Q)",
                   lambda: backward_recompute.backward_recompute_consumer_capacity, enumerated_backward_consumer_count,
                   {"n": [4, 8], "d": [1, 2]}, (3, 4),
                   "backward_recompute_consumer_capacity (spartition.families.attention.backward.recompute_bounds)"),
    _program_claim("segment-matmul-program", "matmul", "matrix-product products",
                   lambda: matmul_recompute.matmul_segment_capacity, enumerated_matmul_count,
                   {"a": [4, 8], "b": [8], "c": [8]}, (3, 4, 6),
                   "matmul_segment_capacity (spartition.families.classic.recompute_bounds)"),
    _derivation_claim("segment-forward-recompute-lower", FWD, lambda: forward_recompute.forward_recompute_bound,
                      _forward_counts, {"n": [16, 32], "d": [2]}, (4, 8)),
    _derivation_claim("segment-forward-av-lower", FWD,
                      lambda: lambda n, d, M: forward_recompute.forward_recompute_bound(n, d, M, counted="AV"),
                      _forward_counts, {"n": [16, 32], "d": [2]}, (8, 16)),
    _derivation_claim("segment-backward-recompute-lower", BWD, lambda: backward_recompute.backward_recompute_bound,
                      _backward_counts, {"n": [16, 32], "d": [2]}, (4, 8)),
    _derivation_claim("segment-backward-consumer-lower", BWD,
                      lambda: lambda n, d, M: backward_recompute.backward_recompute_bound(n, d, M, counted="consumers"),
                      _backward_counts, {"n": [16, 32], "d": [2]}, (4, 8)),
    _derivation_claim("segment-matmul-lower", "matmul", lambda: matmul_recompute.matmul_segment_bound,
                      _matmul_counts, {"a": [8], "b": [8], "c": [8]}, (4, 8)),
    _recompute_count_claim("segment-forward-recompute-count", FWD, "Q K^T products",
                           lambda: forward_recompute.forward_recompute_capacity,
                           lambda n, d, M: forward_recompute.forward_recompute_bound(n, d, M).S,
                           forward_recompute_charges, lambda c: c["products"],
                           lambda n, d: n * n * d, FWD_RECOMPUTE_ALGS,
                           {"n": [8], "d": [2]}, (3, 4, 8),
                           "spartition.families.attention.forward.recompute_bounds.forward_recompute_capacity"),
    _recompute_count_claim("segment-forward-av-count", FWD, "A V products",
                           lambda: forward_recompute.forward_recompute_av_capacity,
                           lambda n, d, M: forward_recompute.forward_recompute_bound(n, d, M, counted="AV").S,
                           forward_recompute_charges, lambda c: c["av"],
                           lambda n, d: n * n * d, FWD_RECOMPUTE_ALGS,
                           {"n": [8], "d": [2]}, (3, 4, 8),
                           "spartition.families.attention.forward.recompute_bounds.forward_recompute_av_capacity"),
    _recompute_count_claim("segment-backward-recompute-count", BWD, "Q K^T and dO V^T products",
                           lambda: backward_recompute.backward_recompute_capacity,
                           lambda n, d, M: backward_recompute.backward_recompute_bound(n, d, M).S,
                           backward_recompute_charges, lambda c: c["qk"] + c["dov"],
                           lambda n, d: 2 * n * n * d, ("greedy", "flash-backward"),
                           {"n": [4], "d": [2]}, (4, 8),
                           "spartition.families.attention.backward.recompute_bounds.backward_recompute_capacity"),
    _recompute_count_claim("segment-backward-recompute-joint-count", BWD, "products of all five kinds",
                           lambda: backward_recompute.backward_recompute_joint_capacity,
                           lambda n, d, M: backward_recompute.backward_recompute_bound(n, d, M).S,
                           backward_recompute_charges, lambda c: c["qk"] + c["dov"] + c["consumer"],
                           lambda n, d: 5 * n * n * d, ("greedy", "flash-backward", "materialised-backward"),
                           {"n": [4], "d": [2]}, (4, 8),
                           "spartition.families.attention.backward.recompute_bounds.backward_recompute_joint_capacity"),
    _recompute_count_claim("segment-backward-recompute-consumer-count", BWD, "consumer products",
                           lambda: backward_recompute.backward_recompute_consumer_capacity,
                           lambda n, d, M: backward_recompute.backward_recompute_bound(n, d, M).S,
                           backward_recompute_charges, lambda c: c["consumer"],
                           lambda n, d: 3 * n * n * d, ("greedy", "flash-backward", "materialised-backward"),
                           {"n": [4], "d": [2]}, (4, 8),
                           "spartition.families.attention.backward.recompute_bounds.backward_recompute_consumer_capacity"),
    _recompute_bound_claim("segment-forward-recompute-lower", FWD, FWD_ALGS, {"n": [16, 32], "d": [2]}, (4, 8, 16)),
    _recompute_bound_claim("segment-forward-av-lower", FWD, FWD_ALGS, {"n": [16, 32], "d": [2]}, (8, 16)),
    _recompute_bound_claim("segment-backward-recompute-lower", BWD, BWD_ALGS + ("tiled-backward",),
                           {"n": [8, 16], "d": [2]}, (4, 8)),
    _recompute_bound_claim("segment-backward-consumer-lower", BWD,
                           BWD_ALGS + ("tiled-backward", "materialised-backward"), {"n": [8, 16], "d": [2]}, (4, 8)),
)

SEGMENT_CLAIMS = ClaimSet("segments", SEGMENTS, SEGMENT_LIST + PAIR_SUM_LIST)
