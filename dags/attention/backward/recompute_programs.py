"""The programs behind backward attention's segment counts valid with recomputation, and their exact maxima.

:mod:`spartition.families.attention.backward.recompute_bounds` proves, per
segment, that the products with a designated event are at most the maximum
of a program over a few integers (entries read, rows of closed pairs,
consumer-tree nodes in ``B'``); this module holds those programs as cell
bounds for :func:`~spartition.families.common.programs.program_maximum` and
finds their maxima. Three programs share the variables and constraints and
differ in the products counted (``counted``):

``"QK+dOV"``
    the ``Q K^T`` and ``dO V^T`` products
    (:func:`~spartition.families.attention.backward.recompute_bounds.backward_recompute_capacity`);
``"all"``
    those and the three consumer products ``P o dO``, ``dS K``, ``dS^T Q``
    (:func:`~spartition.families.attention.backward.recompute_bounds.backward_recompute_joint_capacity`);
``"consumers"``
    the consumer products alone
    (:func:`~spartition.families.attention.backward.recompute_bounds.backward_recompute_consumer_capacity`).
"""

from __future__ import annotations

import numpy as np

from spartition.families.attention.forward.bounds import charged_products
from spartition.families.common.programs import known_above, known_below, program_maximum

__all__ = ["COUNTED", "closed_counts", "closed_pairs", "program_cells", "searched_maximum"]

#: The products each program counts, by name.
COUNTED = ("QK+dOV", "all", "consumers")


def closed_pairs(n: int, d: int, s, r, t):
    """The most closed pairs of one kind in ``r`` rows: ``min(r p, t max(r, p))``, ``p = min(n, floor(s / d) - r)``.

    Closed pairs lie in ``r`` rows and ``p`` columns, ``d (r + p) <= s``, and
    each has its row among the ``t_R`` rows or its column among the ``t_C``
    columns whose consumer trees meet ``B'`` (``t_R + t_C <= t``): at most
    ``t_R p + t_C r <= t max(r, p)`` and at most ``r p``; both grow with
    ``p``, so ``p`` is the most the reads allow. Negative where ``d r > s``
    (no such point).

    Examples
    --------
    >>> [int(closed_pairs(32, 2, 8, 1, t)) for t in (0, 1, 9)], int(closed_pairs(32, 2, 8, 2, 9))
    ([0, 3, 3], 4)
    """
    r, t = np.asarray(r), np.asarray(t)
    p = np.minimum(n, np.asarray(s) // d - r)
    return np.minimum(r * p, t * np.maximum(r, p))


def closed_counts(r1, p1, r2, p2, t):
    """The most QK-closed and dOV-closed pairs: ``(x1, x2)`` of the counts' steps 4 and 7.

    With ``y_k = min(r_k p_k, t max(r_k, p_k))`` (:func:`closed_pairs`):
    ``x2 = min(y2, y1)`` (a dOV-closed pair is QK-closed) and ``x1 = min(y1,
    x2 + r1 min(p1, t))`` (a QK-closed pair that is not dOV-closed has its
    column among the ``dV`` trees in ``B'``). Every pair of counts the two
    constraints allow is at most this one in both coordinates, and both grow
    with every argument. Negative ``p`` (no such point) counts as no pair.

    Examples
    --------
    >>> [int(x) for x in closed_counts(5, 11, 0, 0, 7)]  # 5 x 11 closed pairs allowed, no dOV-closed one: 5 x 7
    [35, 0]
    """
    p1, p2 = np.maximum(p1, 0), np.maximum(p2, 0)
    y1 = np.minimum(r1 * p1, t * np.maximum(r1, p1))
    x2 = np.minimum(np.minimum(r2 * p2, t * np.maximum(r2, p2)), y1)
    x1 = np.minimum(y1, x2 + r1 * np.minimum(p1, t))
    return np.asarray(x1, dtype=float), np.asarray(x2, dtype=float)


def program_cells(n: int, d: int, T: int, L: int, counted: str):
    """The cell bound of a program over ``(s1, s2, t, r1, r2)``, for :func:`program_maximum`.

    Every term grows with ``s1, s2, t``, the rows ``r1, r2`` and the columns
    ``p1 = min(n, floor(s1 / d) - r1)``, ``p2 = min(n, floor((s2 - r1 -
    (d - 1) r2) / d))`` (:func:`closed_counts` grows with each argument), and
    with ``c = min(n^2, T - s1 - s2 - t - r1 - r2)``: on a cell the terms are
    read with ``s, t, r`` at its upper corner, ``p`` from the upper ``s`` and
    the lower ``r``, and ``c`` at ``T`` minus the lower corner: an upper bound
    over the cell, the value itself on a one-point cell. A cell whose lower
    corner breaks a budget holds no feasible point.
    """
    if counted not in COUNTED:
        raise ValueError(f"counted must be one of {COUNTED}, got {counted!r}")
    nn = n * n

    def products(s, x, c):  # one kind's count at x closed pairs: H(s, x)
        sf, cf = s.astype(float), c.astype(float)
        return np.minimum(charged_products(sf, cf, d) + d * x, charged_products(sf, cf + x, d))

    def bound(lo, hi):
        a0, b0, t0, r0, q0 = lo.T
        a1, b1, t1, r1, q1 = hi.T
        room = T - a0 - b0 - t0 - r0 - q0
        ok = ((a0 + b0 + r0 <= L) & (room >= 0) & (d * r0 <= a1) & (d * q0 <= b1) & (q0 <= r1)
              & ((d - 1) * q0 + r0 <= b1))
        c = np.minimum(nn, np.maximum(room, 0))
        p1 = np.minimum(n, a1 // d - r0)
        p2 = np.minimum(n, (b1 - r0 - (d - 1) * q0) // d)  # s2 >= d (r2 + p2) + r1 - r2 (step 7)
        x1, x2 = closed_counts(r1, p1, q1, p2, t1)
        value = 0.0
        if counted != "consumers":
            value = products(a1, x1, c) + products(b1, x2, c)
        if counted != "QK+dOV":
            alpha_p, alpha_ds = np.minimum(nn, c + x1), np.minimum(nn, c + x2)
            reads = (alpha_p * b1 + alpha_ds * a1).astype(float)
            value = value + np.minimum(np.sqrt(reads * t1), d * (alpha_p + 2 * alpha_ds))
        return np.where(ok, value, -np.inf)

    return bound


#: (n, d, counted) -> {(T, L): maximum}: the maxima found, a start for the searches at larger budgets
_MAXIMA: dict = {}


def searched_maximum(n: int, d: int, T: int, L: int, counted: str) -> int:
    """The floor of a program's maximum at budgets ``(T, L)``, found exactly.

    ``t`` is searched up to ``min(T, n)`` where only the ``Q K^T`` and ``dO
    V^T`` products are counted (beyond, :func:`closed_counts` no longer grows
    and ``c`` only falls), else up to ``min(T, 3 n d)`` (the consumer trees).
    The search starts from the largest maximum found at smaller budgets
    (:func:`~spartition.families.common.programs.known_below`: every program
    here only loosens as ``T`` and ``L`` grow) and ends once it reaches the
    smallest found at larger ones
    (:func:`~spartition.families.common.programs.known_above`), which changes
    its speed, never its answer.
    """
    known = _MAXIMA.setdefault((n, d, counted), {})
    top = min(n, L // d)
    trees = n if counted == "QK+dOV" else 3 * n * d
    value = program_maximum(program_cells(n, d, T, L, counted), [0] * 5, [L, L, min(T, trees), top, top],
                            at_least=known_below(known, T, L), at_most=known_above(known, T, L))
    known[(T, L)] = value
    return value
