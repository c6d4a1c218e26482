"""The partial game's segments: the budgets of its segment counts, and a schedule cut into segments.

The counts of :mod:`spartition.families.classic.partial_bounds` and
:mod:`spartition.families.attention.forward.partial_bounds` count marked
edges per segment of ``S`` loads and saves (docs/definitions.md section 3,
"Segment counts in the partial game").
"""

from __future__ import annotations

__all__ = ["partial_budgets", "partial_segment_index"]


def partial_budgets(M: int, S: int, a: int, b: int, start: bool = True, end: bool = True) -> tuple:
    """``(T, L)`` of a segment of the partial game's counts, with ``b`` red non-inputs at its end (``a`` unused).

    ``T = M start + S + b end`` bounds ``|B'|`` as in :func:`~spartition.families.common.segments.shared_budgets`;
    ``L = M start + S`` the nodes red at its start or loaded that a count
    charges, non-inputs among them (a product held at the start), so ``a``
    does not lower ``L`` as it does there. A segment that starts the
    schedule has nothing red at its start; one that ends it needs nothing
    red at its end.

    Examples
    --------
    >>> partial_budgets(8, 5, 3, 2), partial_budgets(8, 5, 0, 2, start=False)
    ((15, 13), (7, 5))
    """
    return M * int(start) + S + b * int(end), M * int(start) + S


def partial_segment_index(moves, S: int) -> list[int]:
    """The segment of each move of a partial-game schedule, cut after every ``S``-th load or save.

    Deletes after the last load, save or partial compute join the last
    segment (the segment argument's ``h = ceil(Q / S)``).

    Examples
    --------
    >>> partial_segment_index([("load", "a"), ("partial", "a", "b"), ("save", "b"), ("delete", "a")], 1)
    [0, 1, 1, 1]
    """
    seg, io, out = 0, 0, []
    for move in moves:
        out.append(seg)
        if move[0] in ("load", "save", "store"):
            io += 1
            if io % S == 0:
                seg += 1
    last = max((out[t] for t, move in enumerate(moves) if move[0] != "delete"), default=0)
    return [min(k, last) for k in out]
