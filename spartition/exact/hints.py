"""The known schedules that hint the exact solver: the greedy one, the family's algorithms, the user's.

Every hint is replayed before it is used, so a hint is a valid schedule of
the stated variant and its I/O is an upper bound on the optimum; the solver
gets the cheapest, and :func:`spartition.exact.solve.solve_io` returns it
when the search finds nothing better.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule, replay
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import algorithms
from spartition.errors import SpartitionError

__all__ = ["Hint", "candidate_hints", "compute_order", "is_oneshot"]


@dataclass(frozen=True)
class Hint:
    """A replayed schedule offered to the exact search, with its I/O and where it came from.

    The fields come in the order :meth:`spartition.exact.result.Outcome.classify`
    takes a found schedule: the schedule, its I/O, its source.

    Attributes
    ----------
    schedule : Schedule
        Valid for the call's variant and ``M`` (replayed).
    io : int
        Its replayed I/O: an upper bound on the optimum.
    source : str
        ``greedy``, an algorithm's name, ``user``, or ``oneshot-<status>``
        (the oneshot optimum hinting a recompute search).
    """

    schedule: Schedule
    io: int
    source: str

    def rank(self) -> tuple:
        """The order hints are tried in: cheapest first, then by source name."""
        return self.io, self.source


def candidate_hints(G, c: CompactDAG, M: int, variant: str, hint) -> list:
    """Valid schedules to hint the solver with, cheapest first.

    Parameters
    ----------
    G : networkx.DiGraph or None
        The DAG as given (its ``graph["family"]`` selects the algorithms);
        None for a compact DAG.
    c : CompactDAG
    M : int
    variant : {"oneshot", "recompute"}
    hint : "auto", "greedy", None or Schedule
        ``auto``: the greedy schedule and every registered algorithm that
        applies to the DAG's family; ``greedy``: the greedy schedule only; a
        Schedule is replayed and used as given; None: no hint.

    Returns
    -------
    list of Hint
        Sorted by I/O, then source name (:meth:`Hint.rank`).

    Raises
    ------
    ValueError
        For any other ``hint``.
    IllegalMove
        If a given Schedule fails replay.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> [(h.io, h.source) for h in candidate_hints(None, compact(fft(1)), 3, "oneshot", "greedy")]
    [(4, 'greedy')]
    """
    if hint is None:
        return []
    if isinstance(hint, Schedule):
        hint = Schedule(M, variant, hint.moves, meta=hint.meta)  # checked, and returned, at this call's M
        return [Hint(hint, replay(c, hint).io, "user")]
    if hint not in ("auto", "greedy"):
        raise ValueError(f"hint must be 'auto', 'greedy', None or a Schedule, got {hint!r}")
    g = greedy_schedule(c, M, variant)
    out = [Hint(g, replay(c, g).io, "greedy")]
    family = G.graph.get("family") if G is not None else None
    if hint == "auto" and family:
        out += _algorithm_hints(G, c, M, variant, family)
    out.sort(key=Hint.rank)
    return out


def _algorithm_hints(G, c: CompactDAG, M: int, variant: str, family: str) -> list:
    out = []
    for name, alg in algorithms().items():
        if name == "greedy" or not alg.applies_to(family, variant):
            continue
        try:
            s = alg.schedule(G, M, variant)
            s = Schedule(M, variant, s.moves, meta=s.meta)
            out.append(Hint(s, replay(c, s).io, name))
        except (SpartitionError, ValueError, KeyError, TypeError):
            continue  # the algorithm does not fit this M or DAG: not a hint
    return out


def compute_order(c: CompactDAG, schedule: Schedule) -> list:
    """The node indices of ``schedule`` in the order of their first compute.

    Parameters
    ----------
    c : CompactDAG
    schedule : Schedule

    Returns
    -------
    list of int

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import compact
    >>> c = compact(chain(3))
    >>> compute_order(c, Schedule(2, "oneshot", [("compute", "c1"), ("compute", "c2")]))
    [1, 2]
    """
    order, seen = [], set()
    for move, name in schedule.moves:
        if move == "compute":
            v = c.index[name]
            if v not in seen:
                seen.add(v)
                order.append(v)
    return order


def is_oneshot(schedule: Schedule) -> bool:
    """Whether ``schedule`` computes every node at most once.

    Parameters
    ----------
    schedule : Schedule

    Returns
    -------
    bool
    """
    names = [n for m, n in schedule.moves if m == "compute"]
    return len(names) == len(set(names))
