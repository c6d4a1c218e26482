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
from spartition.families.common.segments import shared_budgets
from spartition.study.claim_quantities import optimum_range
from spartition.study.claims import Claim, Interval, Quantity, expr, formula
from spartition.study.claimsets import ClaimSet

__all__ = ["SEGMENT_CLAIMS", "segment_excess"]

FWD = "attention-forward"
BWD = "attention-backward-flash"
FWD_ALGS = ("flash-forward", "square-tiling-forward", "standard-forward", "tiled-forward", "greedy")
BWD_ALGS = ("flash-backward", "greedy")


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


def _worst_segment(count, best_S, charges, counted, total, algs) -> Quantity:
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
        for name in algs:
            try:
                schedule = algorithm(name).generate(ctx.dag, M)
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
)

SEGMENT_CLAIMS = ClaimSet("segments", SEGMENTS, SEGMENT_LIST)
