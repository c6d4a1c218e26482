"""The generic greedy schedule registered as the baseline algorithm of every DAG family."""

from __future__ import annotations

from spartition.core.algorithm import Algorithm

__all__ = ["GREEDY", "greedy"]


def greedy(G, M: int, variant: str = "oneshot"):
    """Topological order with furthest-next-use eviction (:func:`spartition.core.greedy.greedy_schedule`).

    Parameters
    ----------
    G : networkx.DiGraph or CompactDAG
        Any CDAG.
    M : int
        Fast memory size, at least ``1 + max in-degree``.
    variant : {"oneshot", "recompute"}
        Written into the schedule (each node is computed once).

    Returns
    -------
    Schedule

    Raises
    ------
    InfeasibleMemory
        If no pebbling fits in M (the message names the smallest M).

    Notes
    -----
    No closed form: the cost is whatever replay reports.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.game import replay
    >>> replay(chain(4), greedy(chain(4), 2)).io
    2

    References
    ----------
    docs/definitions.md section 5 (generic upper bound); Belady's furthest-next-use rule.
    """
    from spartition.core.greedy import greedy_schedule

    return greedy_schedule(G, M, variant)


GREEDY = Algorithm(
    name="greedy",
    families=("*",),
    generate=greedy,
    io_formula=None,
    min_memory=None,
    source="docs/definitions.md section 5: topological order with furthest-next-use eviction",
)
