"""A published algorithm's schedule as a schedule of the game asked, the partial game included.

The sandwich and the studies both play the algorithms in every game: in the
standard games their own schedules; in the partial game their oneshot
schedules, made on the family's binary build where the DAG has its sums as
single nodes and translated edge by edge.
"""

from __future__ import annotations

from spartition.core.dag import as_compact
from spartition.errors import SpartitionError
from spartition.settings import PARTIAL

__all__ = ["binary_build", "default_closed_form", "game_schedule", "in_game", "searched_game_schedule", "to_aggregated"]


def _as_variant(schedule, variant: str):
    """The same moves under the rules of ``variant``."""
    from spartition.core.game import Schedule

    # a oneshot schedule is a recompute schedule: the same moves, checked under the other rules
    return Schedule(schedule.M, variant, schedule.moves, schedule.meta)


def binary_build(G):
    """The family's binary build of a ``sums="node"`` DAG, or None (any other DAG)."""
    params = dict(G.graph.get("params") or {})
    if params.get("sums") != "node" or G.graph.get("family") is None:
        return None
    from spartition.core.registry import build

    params.pop("sums")
    return build(G.graph["family"], max_nodes=None, **params)


def to_aggregated(binary, schedule):
    """A schedule of the binary build played on the build with sums as nodes."""
    from spartition.core.aggregate import chain_schedule_to_aggregated

    return chain_schedule_to_aggregated(binary, schedule)


def game_schedule(G, alg, M: int, variant: str, c=None, binary=None):
    """``alg``'s schedule of ``G`` at ``M`` (its defaults) as a schedule of ``variant``, not yet replayed.

    In the partial game a published algorithm's oneshot schedule is played:
    made on the family's binary build where ``G`` has its sums as nodes
    (``binary``, built here if not given) and carried over
    (:func:`spartition.core.aggregate.chain_schedule_to_aggregated`), then
    translated edge by edge (:func:`spartition.core.partial_greedy.oneshot_to_partial`).
    ``c`` is ``G`` compacted (built here if not given).

    Raises
    ------
    SpartitionError
        The algorithm's refusal (M too small, a DAG it does not run on), or
        an illegal move of the translation.
    """
    if variant != PARTIAL:
        return alg.schedule(G, M, variant)
    c = as_compact(G) if c is None else c
    binary = binary_build(G) if binary is None else binary
    if binary is not None and "*" not in alg.families:
        return in_game(c, to_aggregated(binary, alg.schedule(binary, M, "oneshot")), PARTIAL)
    return in_game(c, alg.schedule(G, M, "oneshot"), PARTIAL)


def searched_game_schedule(G, alg, M: int, variant: str, binary=None, deadline: float | None = None):
    """The cheapest of ``alg``'s tile options at ``M`` (:func:`spartition.exact.search.best_schedule`), in ``variant``.

    Every option is also tried as made for ``2 M`` and re-pebbled at ``M``. In
    the partial game the best oneshot tiling of the family's binary build
    (``binary``, built here if not given) is carried over to ``G``, not yet
    translated (:func:`in_game` does it). Returns the
    :class:`~spartition.exact.search.SearchResult` with that schedule.

    Raises
    ------
    SpartitionError
        The algorithm's refusal (no option fits in ``M``, a DAG it does not run on).
    """
    import dataclasses

    from spartition.exact.search import best_schedule

    if variant == PARTIAL:
        binary = binary_build(G) if binary is None else binary
        if binary is not None and "*" not in alg.families:
            result = best_schedule(binary, alg, M, "oneshot", retarget_from=(2 * M,), deadline=deadline)
            return dataclasses.replace(result, schedule=to_aggregated(binary, result.schedule))
    made_in = "oneshot" if variant == PARTIAL else variant
    return best_schedule(G, alg, M, made_in, retarget_from=(2 * M,), deadline=deadline)


def in_game(c, schedule, variant: str):
    """``schedule`` as a schedule of ``variant``: the same moves, or, for the partial game, a oneshot schedule
    translated by :func:`spartition.core.partial_greedy.oneshot_to_partial` (same M, same loads and stores;
    it raises :class:`IllegalMove` on a schedule that is not oneshot-valid, which the caller lists as refused)."""
    if variant != PARTIAL:
        return schedule if variant == schedule.variant else _as_variant(schedule, variant)
    if schedule.variant == PARTIAL:
        return schedule
    from spartition.core.partial_greedy import oneshot_to_partial

    return oneshot_to_partial(c, schedule)


def default_closed_form(alg, G, M: int) -> int | None:
    """The exact I/O of ``alg``'s default schedule of ``G`` at ``M`` read off its closed form, or None.

    None where it has none (a generic algorithm, a masked DAG) or where ``G``
    is not the size of the DAG its family label names (a file's label is a
    claim; the sandwich checks it in full beside the formulas).

    Examples
    --------
    >>> from spartition.core.registry import algorithm, build
    >>> G = build("attention-forward", n=4, d=2)
    >>> default_closed_form(algorithm("tiled-forward"), G, 8), default_closed_form(algorithm("greedy"), G, 8)
    (80, None)
    """
    from spartition.core.registry import family_node_count

    params = G.graph.get("params", {})
    try:
        if alg.io_formula is None or family_node_count(G.graph.get("family"), **params) != G.number_of_nodes():
            return None
        value = alg.io_formula(params, M)
    except (SpartitionError, ValueError, KeyError, TypeError):
        return None
    return value if isinstance(value, int) else None
