"""The maximum of a segment count's program: branch and bound over integer boxes, with warm starts.

A family's per-segment count is the maximum of a program in a few integer
variables (:mod:`spartition.families.common.segments`). :func:`program_maximum`
finds its floor exactly from a bound on boxes ("cells");
:func:`known_below` and :func:`known_above` read the maxima already found at
other budgets, which bracket the answer (the programs only loosen as their
budgets grow): they change how fast a search ends, never what it returns.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["CORNER_CELLS", "known_above", "known_below", "program_maximum"]


#: how many cells' corners :func:`program_maximum` reads per round for feasible points (its speed, never its answer)
CORNER_CELLS = 1024


def program_maximum(bound, lo, hi, max_cells: int = 1 << 21, at_least: float = -np.inf,
                    at_most: float = np.inf) -> int:
    """The floor of a program's maximum over an integer box, by branch and bound on cells.

    A family's count is the maximum of a program in a few integer variables
    (rows, columns, inputs read, pairs charged, ...). ``bound`` reads it on
    boxes ("cells"): for each cell an upper bound of the program over the
    cell's feasible points (``-inf`` if it has none), which on a cell of one
    point is the program's value there.

    Parameters
    ----------
    bound : callable
        ``(lo, hi) -> values``: ``lo`` and ``hi`` are ``(cells, variables)``
        integer arrays, the corners of each cell; returns one float per cell.
    lo, hi : sequence of int
        The box of the variables.
    max_cells : int
        The most cells a round may hold; a search stopped by it returns an
        upper bound of the maximum instead of the maximum.
    at_least : float
        A value the maximum is known to reach (a feasible point's, e.g. the
        maximum of the same program at smaller budgets: :func:`known_below`).
        The search starts from it as if found, so cells that cannot beat it
        are dropped from the first round. A larger value would be returned as
        it is: an upper bound of the maximum, as a search stopped by
        ``max_cells`` returns (for a count, weaker but still valid).
    at_most : float
        A value the maximum is known not to exceed (e.g. the maximum of the
        same program at larger budgets: :func:`known_above`). The search
        ends as soon as a feasible point reaches its floor, which is then
        the answer. A smaller value would end the search early with an
        answer below the maximum, which no count may use: it must be a
        true upper bound.

    Returns
    -------
    int
        The floor of the maximum (a count of products is an integer); when
        the search is stopped by ``max_cells``, at least that.

    Notes
    -----
    **Why the answer is right.** Let ``best`` be the largest value read on
    a one-point cell so far (the two corners of the ``CORNER_CELLS`` cells
    with the largest bounds are read as one-point cells too; which points are
    read changes how early cells are dropped, never the answer): a feasible
    point, so the maximum is at least ``best``. A cell
    is dropped only if its bound is below ``floor(best) + 1``: no point in it
    can raise the floor of the maximum. The others are split in two along
    every variable they span, and the cells always cover every point not
    dropped. When no cell is left, the floor of the maximum is
    ``floor(best)``; when ``max_cells`` stops the search, the largest of
    ``best`` and the bounds of the cells left bounds the maximum.

    Examples
    --------
    The most ``x y`` with ``x + y <= 7`` over ``0 <= x, y <= 7`` (12 at
    ``3, 4``), bounded on a cell by ``x_hi y_hi``:

    >>> def bound(lo, hi):
    ...     return np.where(lo.sum(axis=1) <= 7, (hi[:, 0] * hi[:, 1]).astype(float), -np.inf)
    >>> program_maximum(bound, [0, 0], [7, 7])
    12
    """
    lo, hi = np.asarray(lo, dtype=np.int64), np.asarray(hi, dtype=np.int64)
    L, H = lo[None, :], hi[None, :]
    best = float(at_least)
    ceiling = math.floor(at_most + 1e-6) if at_most < np.inf else None
    while True:
        if ceiling is not None and best > -np.inf and math.floor(best + 1e-6) >= ceiling:
            return max(ceiling, 0)  # a feasible point reaches the known upper bound: nothing can beat it
        values = bound(L, H)
        # feasible points to prune with: the corners of the most promising cells (any points would do; these are
        # the likeliest to be good, and reading every cell's corners would triple the work)
        top = np.argpartition(-values, CORNER_CELLS)[:CORNER_CELLS] if len(values) > CORNER_CELLS else slice(None)
        best = max(best, float(np.max(bound(L[top], L[top]), initial=-np.inf)),
                   float(np.max(bound(H[top], H[top]), initial=-np.inf)))
        point = (L == H).all(axis=1)
        best = max(best, float(np.max(values[point], initial=-np.inf)))
        floor = math.floor(best + 1e-6) if best > -np.inf else -1
        keep = ~point & (values > floor + 1 - 1e-6)
        if not keep.any():
            return max(floor, 0)
        L, H = L[keep], H[keep]
        if len(L) << L.shape[1] > max_cells:
            return math.floor(max(best, float(values[keep].max())) + 1e-6)
        for axis in range(L.shape[1]):  # halve every variable at once: few rounds, each vectorised
            wide = H[:, axis] > L[:, axis]
            middle = (L[wide, axis] + H[wide, axis]) // 2
            upper_lo, upper_hi = L[wide].copy(), H[wide]
            upper_lo[:, axis] = middle + 1
            H = H.copy()
            H[wide, axis] = middle
            L, H = np.concatenate([L, upper_lo]), np.concatenate([H, upper_hi])


def known_below(known: dict, T: int, L: int) -> float:
    """The largest maximum in ``known`` (``(T', L') -> maximum``) at budgets ``T' <= T`` and ``L' <= L``; ``-inf`` if none.

    For a program whose feasible set only grows with its budgets ``(T, L)``
    and whose objective does not fall as they grow (every segment count
    here): its maximum at ``(T, L)`` is at least this, a start for
    :func:`program_maximum`'s ``at_least``.

    Examples
    --------
    >>> known_below({(10, 4): 7, (12, 6): 9, (20, 2): 11}, 12, 5)
    7
    """
    return max((v for (t, l), v in known.items() if t <= T and l <= L), default=-np.inf)


def known_above(known: dict, T: int, L: int) -> float:
    """The smallest maximum in ``known`` (``(T', L') -> maximum``) at budgets ``T' >= T`` and ``L' >= L``; ``inf`` if none.

    For the same programs as :func:`known_below`: their maximum at ``(T,
    L)`` is at most this, an end for :func:`program_maximum`'s ``at_most``
    (where it equals :func:`known_below`'s value, that is the maximum).

    Examples
    --------
    >>> known_above({(10, 4): 7, (12, 6): 9, (20, 2): 11}, 11, 5)
    9
    """
    return min((v for (t, l), v in known.items() if t >= T and l >= L), default=np.inf)
