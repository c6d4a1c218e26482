"""Hong & Kung's segment argument, independent of the DAG: budgets, segment counts, boundaries, the search over S.

A schedule cut after every ``S``-th load or store has ``h`` segments and at
least ``S (h - 1)`` I/O moves. A family's proof bounds what one segment
computes given its budgets (``T`` for the nodes it can use, ``L`` for the
inputs it can read: :func:`segment_budgets`, or :func:`shared_budgets` when
the red non-inputs at its boundaries are known); this module turns such
counts into the least ``h`` (:func:`segments_needed`,
:func:`shared_segments_needed`) and the bound (:class:`SegmentBound`,
:func:`best_segment_size`, :func:`shared_bound`), and walks a replayed
schedule segment by segment (:func:`split_segments`, :func:`shared_charges`)
for the tests that check a proof step by step. The counts themselves, with
their proofs, are in :mod:`spartition.families.attention.forward.bounds` (forward) and
:mod:`spartition.families.attention.backward.bounds` (backward); the definitions are in
docs/definitions.md, "Segment counts".

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

import numpy as np

__all__ = ["OutOfTime", "SEGMENT_ENDS", "SegmentBound", "best_segment_size", "best_shared_size", "capped_shared_bound", "largest_size_keeping", "segment_budgets", "segments_needed", "shared_bound", "shared_budgets", "shared_segments_needed", "timed_best"]


# the budgets of a middle segment, the first, the last and a schedule of one segment, in SegmentBound's order
SEGMENT_ENDS = ((True, True), (False, True), (True, False), (False, False))


def segment_budgets(M: int, S: int, start: bool, end: bool) -> tuple:
    """Step 9: ``T`` bounds ``|B|``, ``L`` the nodes red at the start or loaded."""
    return M * (int(start) + int(end)) + S, M * int(start) + S


def shared_budgets(M: int, S: int, a: int, b: int, start: bool = True, end: bool = True) -> tuple:
    """Step 11: ``T`` and ``L`` of a segment with ``a`` red non-inputs at its start and ``b`` at its end.

    ``T = M start + S + b end`` bounds ``|B'|`` and ``L = (M - a) start + S``
    the inputs read (:func:`~spartition.families.attention.forward.bounds.segment_capacity`, step 11); a segment that
    starts the schedule has nothing red at its start (``a = 0``), one that
    ends it needs nothing red at its end. ``a = 0, b = M`` gives step 9's
    :func:`segment_budgets`.

    Examples
    --------
    >>> shared_budgets(8, 5, 3, 2), shared_budgets(8, 5, 0, 8) == segment_budgets(8, 5, True, True)
    ((15, 10), True)
    >>> shared_budgets(8, 5, 0, 2, start=False), shared_budgets(8, 5, 3, 0, end=False)
    ((7, 5), (13, 10))
    """
    return M * int(start) + S + b * int(end), (M - a) * int(start) + S


def shared_segments_needed(W: int, count, M: int, cells: int = 8) -> int:
    """The fewest segments that can compute ``W`` products when neighbours share their boundary's red pebbles.

    Step 11 of :func:`~spartition.families.attention.forward.bounds.segment_capacity`: with ``x_k`` the red non-inputs at
    the boundary after segment ``k`` (``0 <= x_k <= M``), segment ``k``
    computes at most ``count(start, end, x_(k-1), x_k)``, so ``W`` is at
    most the sum of these along some sequence ``x_1 .. x_(h-1)``. This
    returns the least ``h`` for which the largest such sum reaches ``W``:
    every schedule has at least that many segments.

    Parameters
    ----------
    W : int
        Products to compute.
    count : callable
        ``(start, end, a, b) -> int``: at least the maximum of a program
        that bounds the products of a segment with ``a`` red non-inputs at
        its start and ``b`` at its end (``start`` / ``end`` false for the
        segments that start / end the schedule, as in
        :func:`shared_budgets`), where the program's feasible set only grows
        as ``a`` falls and ``b`` rises (its budgets do). The computed value
        itself need not be monotone (a cell search may read a larger budget
        more tightly); the program's maximum is.
    M : int
        Red pebbles: ``x_k`` ranges over ``0 .. M``.
    cells : int
        The range is split into ``{0}`` and at most ``cells`` intervals. An
        ``x`` in the interval ``[lo, hi]`` is read as ``hi`` where it ends a
        segment and as ``lo`` where it starts the next: a segment's products
        are at most the program's maximum at its true ``(a, b)``, which is at
        most the maximum at the cells' corners, which ``count`` bounds; so
        the answer is a valid (at coarse cells, weaker) lower bound.

    Returns
    -------
    int
        The least ``h``; 0 if no number of segments reaches ``W`` (a middle
        segment counts nothing and the ends do not suffice).

    Notes
    -----
    The largest sum over ``h`` segments is the max-plus product ``first *
    mid^(h - 2) * last`` of the cell counts; it does not decrease with
    ``h`` (a segment may repeat its start's cell, adding ``>= 0``), so the
    least ``h`` is found by max-plus powers of ``mid`` and a binary descent.

    Examples
    --------
    A count that ignores the boundaries gives :func:`segments_needed`'s answer:

    >>> shared_segments_needed(100, lambda start, end, a, b: 10 if start and end else 4, 8)
    12
    >>> segments_needed(100, 10, 4, 4, 4)
    12

    A middle segment that counts ``2 b + (4 - a)`` (M = 4): step 9 would
    allow 12 each (``a = 0, b = 4``) and 11 segments; along a sequence at
    most the first middle segment gets 12, the others 8 (``x = 4``
    throughout), so 14 segments (12 + 11 * 8 = 100):

    >>> shared_segments_needed(100, lambda start, end, a, b: 2 * b + 4 - a if start and end else 0, 4)
    14
    """
    if count(False, False, 0, 0) >= W:
        return 1
    edges = np.unique(np.linspace(0, M, max(1, cells) + 1).round().astype(int))
    lo = np.concatenate([[0], edges[:-1] + 1])  # cells {0} and (e_(t-1), e_t]
    hi = np.concatenate([[0], edges[1:]])
    C = len(hi)
    first = np.array([count(False, True, 0, int(hi[j])) for j in range(C)], dtype=float)
    last = np.array([count(True, False, int(lo[i]), 0) for i in range(C)], dtype=float)
    mid = np.array([[count(True, True, int(lo[i]), int(hi[j])) for j in range(C)] for i in range(C)], dtype=float)

    def times(v, A):  # max-plus vector-matrix product
        return (v[:, None] + A).max(axis=0)

    def reaches(v) -> bool:
        return float((v + last).max()) >= W

    if reaches(first):
        return 2
    if mid.max() <= 0:
        return 0
    powers = [mid]  # mid^(2^t); a middle segment adds at least one product where mid > 0 along a cycle
    while not reaches(times(first, powers[-1])):
        if len(powers) > 64:
            return 0
        A = powers[-1]
        powers.append((A[:, :, None] + A[None, :, :]).max(axis=1))
    v, mids = first, 0
    for t in range(len(powers) - 1, -1, -1):  # the largest number of middle segments that still falls short
        w = times(v, powers[t])
        if not reaches(w):
            v, mids = w, mids + (1 << t)
    return mids + 3


@dataclass(frozen=True)
class SegmentBound:
    """The explicit bound ``S (h - 1)`` at its best segment length ``S``.

    ``weight`` names the products counted: ``QK`` (``W = n^2 d``, the counts
    of :func:`~spartition.families.attention.forward.bounds.segment_capacity`) or ``QK+AV`` (``W = 2 n^2 d``, those of
    :func:`joint_segment_capacity`). ``capacity`` is the count ``F`` of a
    middle segment, ``first`` and ``last`` those of the segments that start
    and end the schedule, ``whole`` that of a schedule of one segment, and
    ``segments`` the least number ``h`` of segments they allow
    (:func:`segments_needed`). ``shared`` marks a bound whose ``h`` comes
    from step 11 (:func:`shared_segments_needed`: neighbouring segments share
    their boundary's red pebbles), at least the ``h`` of the four counts
    alone. ``skipped`` names the counts a time limit left out of the search
    (:func:`timed_best`): the bound is the best of the others, still valid.
    """

    value: int
    S: int
    capacity: int
    weight: str = "QK"
    first: int = 0
    last: int = 0
    whole: int = 0
    segments: int = 0
    shared: bool = False
    skipped: tuple = ()


def segments_needed(W: int, capacity: int, first: int, last: int, whole: int) -> int:
    """The fewest segments that can compute ``W`` products, given each segment's count.

    One segment computes at most ``whole``; with ``h >= 2`` segments, the
    first computes at most ``first``, the last at most ``last`` and each
    other at most ``capacity``: ``h`` is the least with ``first + last + (h -
    2) capacity >= W`` (0 if no number of segments can, i.e. ``capacity = 0``
    and the two ends do not suffice: no such schedule exists and the bound
    says nothing).

    Examples
    --------
    >>> segments_needed(100, 30, 10, 20, 25), segments_needed(25, 30, 10, 20, 25), segments_needed(30, 30, 10, 20, 25)
    (5, 1, 2)
    """
    if whole >= W:
        return 1
    rest = W - first - last
    if rest <= 0:
        return 2
    return 2 + -(-rest // capacity) if capacity else 0


def shared_bound(W: int, M: int, S: int, weight: str, capacity, boundary_cells: int = 8,
                 budgets=shared_budgets) -> SegmentBound:
    """``S (h - 1)`` with step 11's ``h``: :func:`shared_segments_needed` of a capacity given its budgets.

    ``capacity((T, L)) -> int`` bounds the counted products of a segment
    with the budgets ``(T, L)`` (``budgets(M, S, a, b, start, end)``,
    :func:`shared_budgets` unless a count reads its budgets otherwise). The returned
    ``capacity``, ``first``, ``last`` and ``whole`` are step 9's four counts
    (the budgets at ``a = 0, b = M``), for comparison.
    """
    memo: dict = {}

    def count(start: bool, end: bool, a: int, b: int) -> int:
        at = budgets(M, S, a, b, start, end)
        if at not in memo:
            memo[at] = capacity(at)
        return memo[at]

    h = shared_segments_needed(W, count, M, boundary_cells)
    ends = [count(start, end, 0, M) for start, end in SEGMENT_ENDS]
    return SegmentBound(S * (h - 1) if h else 0, S, ends[0], weight, *ends[1:], h, True)


def best_segment_size(bound_at, M: int, candidates) -> SegmentBound:
    """The largest ``bound_at(S)`` found over segment sizes S: a grid, then a halving search around its best two.

    Any S gives a valid bound, so the search only decides how strong the
    result is, never whether it holds.

    Parameters
    ----------
    bound_at : callable
        ``S -> SegmentBound``.
    M : int
        Red pebbles (the first refinement step is ``M // 8``).
    candidates : iterable of int
        The grid of S.
    """
    grid = sorted((bound_at(S) for S in candidates), key=lambda b: (-b.value, b.S))
    found = []
    for best in grid[:2]:  # the bound is not unimodal in S: refine around the two best grid points
        step = max(1, M // 8)
        while step:
            for S in (best.S - step, best.S + step):
                if S >= 1:
                    cand = bound_at(S)
                    if cand.value > best.value:
                        best = cand
            step //= 2
        found.append(best)
    return max(found, key=lambda b: (b.value, -b.S))


def best_shared_size(bound_at, M: int, also=()) -> SegmentBound:
    """Step 11's search over S: coarse reads on the grid ``M/2 .. 4M`` (measured: its best S lies there), fine ones
    at the best S found, its neighbours and ``also``, then the end of the best fine read's tooth and of the tooth
    with one segment more (:func:`largest_size_keeping`).

    Parameters
    ----------
    bound_at : callable
        ``(S, fine) -> SegmentBound`` (:func:`shared_bound` with coarse or fine cells).
    M : int
    also : iterable of int
        Further segment sizes read finely (e.g. step 9's best S).
    """
    grid = sorted({max(1, round(M * t / 2)) for t in range(1, 9)})
    coarse = best_segment_size(lambda S: bound_at(S, False), M, grid)
    finals = {S for S in (coarse.S - 1, coarse.S, coarse.S + 1, *also) if S >= 1}
    best = max((bound_at(S, True) for S in sorted(finals)), key=lambda b: (b.value, -b.S))
    if not best.segments:
        return best
    # S (h - 1) is a sawtooth in S: for the h found and one segment more, the bound peaks where h is about to drop
    found = [best] + [largest_size_keeping(lambda S: bound_at(S, True), h, best.S, M)
                      for h in (best.segments, best.segments + 1)]
    return max(found, key=lambda b: (b.value, -b.S))


def largest_size_keeping(bound_at, h: int, S: int, M: int) -> SegmentBound:
    """The bound at the largest segment size found whose ``h(S)`` is at least ``h``: a gallop, then a bisection.

    Where ``h(S)`` falls as ``S`` grows (the counts' programs only loosen),
    ``S (h(S) - 1)`` is a sawtooth whose teeth peak just before ``h`` drops;
    this finds the last ``S`` of the tooth of ``h``. Any ``S`` gives a valid
    bound, so where ``h(S)`` is not monotone the search only finds less.

    Parameters
    ----------
    bound_at : callable
        ``S -> SegmentBound``.
    h : int
        Segments to keep.
    S : int
        A first segment size; the search walks down from it if ``h(S) < h``.
    M : int
        Red pebbles: the first gallop step is ``M // 16``.

    Examples
    --------
    >>> from spartition.families.common.segments import SegmentBound
    >>> def at(S):  # 1,000 products, a segment of S moves computes 2 S of them: h = ceil(500 / S)
    ...     h = -(-500 // S)
    ...     return SegmentBound(S * (h - 1), S, 2 * S, "QK", 2 * S, 2 * S, 2 * S, h)
    >>> b = largest_size_keeping(at, 7, 60, 64)
    >>> b.S, b.segments, b.value  # ceil(500 / 83) = 7, ceil(500 / 84) = 6
    (83, 7, 498)
    """
    step = max(1, M // 16)
    lo = bound_at(S)
    while lo.segments < h:  # walk down to a size that keeps h
        if lo.S == 1:
            return lo
        lo, step = bound_at(max(1, lo.S - step)), step * 2
    step = max(1, M // 16)
    while True:  # gallop up until h drops
        up = bound_at(lo.S + step)
        if up.segments < h:
            break
        lo, step = up, step * 2
    while up.S - lo.S > 1:
        mid = bound_at((lo.S + up.S) // 2)
        lo, up = (mid, up) if mid.segments >= h else (lo, mid)
    return lo


def capped_shared_bound(W: int, M: int, cap: int, capacity, weight: str, budgets=shared_budgets) -> SegmentBound:
    """:func:`best_shared_size` with segments of at most ``cap`` I/O moves (``budgets`` as in :func:`shared_bound`).

    Above ``cap`` the bound is read as 0 with no segment count (a valid bound
    that stops the search's gallop, which never ends where ``h(S) = 1`` for
    every large ``S``).
    """
    def at(S: int, fine: bool) -> SegmentBound:
        if S > cap:
            return SegmentBound(0, S, 0, weight)
        return shared_bound(W, M, S, weight, capacity, 8 if fine else 4, budgets)

    return best_shared_size(at, M)


class OutOfTime(Exception):
    """Raised inside a count's search when its deadline has passed (caught by :func:`timed_best`)."""


def timed_best(searches, time_limit: float | None = None) -> SegmentBound:
    """The best of several bound searches, each skipped if the deadline passes while it runs.

    Parameters
    ----------
    searches : sequence of (str, callable)
        ``(weight, search)``: ``search(check)`` returns a :class:`SegmentBound`
        and calls ``check()`` before each count it evaluates; ``check`` raises
        :class:`OutOfTime` once the deadline has passed.
    time_limit : float or None
        Seconds for all of them together (None: no limit).

    Returns
    -------
    SegmentBound
        The largest bound of the searches that finished, with ``skipped``
        naming those cut (value 0, a valid bound, if all were cut).

    Notes
    -----
    A search cut part-way is dropped whole: its best ``S`` so far would be
    valid too (any ``S`` gives a valid bound), but which ``S`` it reached
    depends on the machine, and a dropped search keeps the result the same
    on every machine that finishes it. Each count evaluated completes before
    the check, so caches of counts only ever hold finished values.

    Examples
    --------
    >>> fast = ("QK", lambda check: SegmentBound(10, 2, 5, "QK"))
    >>> def slow(check):
    ...     check()
    ...     return SegmentBound(20, 2, 9, "QK+AV")
    >>> timed_best([fast, ("QK+AV", slow)]).value, timed_best([fast, ("QK+AV", slow)], 0.0).skipped
    (20, ('QK+AV: time limit',))
    """
    deadline = None if time_limit is None else time.monotonic() + time_limit

    def check() -> None:
        if deadline is not None and time.monotonic() >= deadline:
            raise OutOfTime

    found, skipped = [], []
    for weight, search in searches:
        try:
            found.append(search(check))
        except OutOfTime:
            skipped.append(f"{weight}: time limit")
    best = max(found, key=lambda b: b.value) if found else SegmentBound(0, 0, 0, "none")
    return replace(best, skipped=tuple(skipped)) if skipped else best
