"""The cheapest replayed schedule of a registered algorithm over its tile options."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from spartition.core.dag import as_compact
from spartition.core.game import ReplayResult, Schedule, replay
from spartition.errors import InfeasibleMemory, InvalidSchedule
from spartition.settings import DEFAULT_VARIANT

__all__ = ["SearchResult", "best_schedule"]


@dataclass(frozen=True)
class SearchResult:
    """The cheapest schedule :func:`best_schedule` replayed, with the options that made it.

    Attributes
    ----------
    algorithm : str
        Registry name of the generator.
    options : dict
        Keyword options passed to the generator (``{}``: its defaults).
    schedule : Schedule
    result : ReplayResult
        The replay of ``schedule`` (its I/O is the result's).
    candidates : int
        Options the algorithm lists at this M (its defaults included).
    replayed : int
        Options generated and replayed.
    ranked_by : str
        ``"closed form"`` (options ordered by the algorithm's exact I/O
        formula, the ``top`` first replayed) or ``"replay"`` (no formula:
        options replayed in listed order).
    tried : tuple
        ``(options, replayed I/O)`` of every replayed candidate.
    cut : bool
        The deadline passed before every candidate was generated.
    """

    algorithm: str
    options: dict
    schedule: Schedule
    result: ReplayResult
    candidates: int
    replayed: int
    ranked_by: str
    tried: tuple = field(default=(), compare=False)
    cut: bool = field(default=False, compare=False)

    @property
    def io(self) -> int:
        """Replayed I/O of the best schedule."""
        return self.result.io

    def to_dict(self) -> dict:
        return {
            "algorithm": self.algorithm,
            "options": self.options,
            "io": self.io,
            "candidates": self.candidates,
            "replayed": self.replayed,
            "ranked_by": self.ranked_by,
            "tried": [{"options": o, "io": io} for o, io in self.tried],
            "cut": self.cut,
        }


def best_schedule(dag, algorithm, M: int, variant: str = DEFAULT_VARIANT, top: int = 3, max_replays: int = 64,
                  retarget_from=(), retarget_top: int | None = None, deadline: float | None = None) -> SearchResult:
    """Search an algorithm's tile options at ``M``; return the cheapest schedule that replays.

    Parameters
    ----------
    dag : networkx.DiGraph
        A DAG of a family the algorithm applies to (``dag.graph["params"]``
        are its family parameters).
    algorithm : Algorithm
        A registry record (:func:`spartition.core.registry.algorithm`); its
        ``search_space(params, M)`` lists the options, ``io_formula(params,
        M, **options)`` (if any) ranks them.
    M : int
        Fast memory size.
    variant : {"oneshot", "recompute"}
    top : int
        With a closed form: how many of the best-ranked options are replayed.
    max_replays : int
        Without a closed form: at most this many options are replayed.
    retarget_from : iterable of int
        Other memories ``M'``: the ``top`` options at each ``M'`` are
        generated there and their compute order is re-pebbled at ``M``
        (:func:`spartition.exact.improve.evict_by_lookahead`, weights 1 and
        1.5); such a candidate's options carry ``"retargeted_from": M'``.
        A tiling made for a larger memory often has the better compute order
        where the algorithm's own tiles do not fit or are too small.
    retarget_top : int, optional
        How many options per ``M'`` are re-pebbled (default ``top``).
    deadline : float, optional
        A ``time.monotonic()`` time: once it has passed, or would have
        passed after another candidate as long as the last one, no further
        candidate is generated and the best one so far is returned (at
        least one is always generated; ``tried`` lists what was).

    Returns
    -------
    SearchResult

    Raises
    ------
    InfeasibleMemory
        From the generator, if no option (not even its defaults) fits in ``M``.

    Notes
    -----
    The generator's defaults (``{}``) are always a candidate, so the result
    is never worse than the default schedule. The closed form only orders
    the candidates; every reported I/O is the replay's, and a formula that
    disagrees with the replay does not hide a cheaper schedule among the
    ``top`` replayed ones.

    Examples
    --------
    >>> from spartition.core.registry import algorithm, build
    >>> dag = build("attention-forward", n=8, d=2)
    >>> found = best_schedule(dag, algorithm("square-tiling-forward"), 32)
    >>> found.options, found.io, found.candidates    # the paper's side floor(sqrt(M/4)) = 2 costs 352
    ({'b': 3}, 304, 4)
    """
    params = dag.graph.get("params", {})
    space = [{}]
    if getattr(algorithm, "search_space", None) is not None:
        space += [o for o in algorithm.search_space(params, M) if o]
    ranked, how = _rank(algorithm, params, M, space)
    chosen = ranked[:top] if how == "closed form" else ranked[:max_replays]
    if how == "closed form" and {} not in chosen:
        chosen.append({})
    cdag = as_compact(dag)
    best = None
    tried = []
    last_error = None
    cut = False
    # a candidate is not started once one is found and the last one, as long again, would end past the deadline:
    # on 10^6 nodes one takes tens of seconds, and the search ran a 60 s sandwich row to 121 s
    began = time.monotonic()
    for options in chosen:
        if best is not None and _past(deadline, time.monotonic() - began):
            cut = True
            break
        began = time.monotonic()
        try:
            schedule = algorithm.schedule(dag, M, variant, **options)
        except InfeasibleMemory as exc:  # an option that does not fit is skipped, re-raised if none fits
            last_error = exc
            continue
        result = replay(cdag, schedule)
        tried.append((dict(options), result.io))
        if best is None or result.io < best[2].io:
            best = (options, schedule, result)
    for M2 in retarget_from:
        if cut or best is not None and _past(deadline):
            cut = True
            break
        k = top if retarget_top is None else retarget_top
        began = time.monotonic()
        for options, schedule, result in _retargeted(dag, cdag, algorithm, M2, M, variant, k):
            tried.append((options, result.io))
            if best is None or result.io < best[2].io:
                best = (options, schedule, result)
            if _past(deadline, time.monotonic() - began):
                cut = True
                break
            began = time.monotonic()
    if best is None:
        raise last_error
    return SearchResult(algorithm.name, dict(best[0]), best[1], best[2], len(space), len(tried), how, tuple(tried),
                        cut)


def _past(deadline: float | None, ahead: float = 0.0) -> bool:
    """Whether ``deadline`` has passed, or will have after ``ahead`` more seconds."""
    return deadline is not None and time.monotonic() + ahead > deadline


def _retargeted(G, cdag, algorithm, M_from, M, variant, top):
    """The ``top`` options at ``M_from``, their compute orders re-pebbled at ``M`` and replayed, one at a time."""
    from spartition.exact.improve import evict_by_lookahead

    params = G.graph.get("params", {})
    space = [{}]
    if getattr(algorithm, "search_space", None) is not None:
        space += [o for o in algorithm.search_space(params, M_from) if o]
    ranked, how = _rank(algorithm, params, M_from, space)
    for options in ranked[:top]:
        try:
            schedule = algorithm.schedule(G, M_from, variant, **options)
        except InfeasibleMemory:
            continue
        order = [cdag.index[v] for m, v in schedule.moves if m == "compute"]
        if len(set(order)) != len(order):
            continue
        for weight in (1.0, 1.5):
            try:
                moved = evict_by_lookahead(cdag, order, M, variant, weight)
            except InvalidSchedule:
                break
            yield {**options, "retargeted_from": M_from, "weight": weight}, moved, replay(cdag, moved)


def _rank(algorithm, params, M, space):
    """The options in order of closed-form I/O (stable), or as listed when there is no closed form."""
    formula = getattr(algorithm, "io_formula", None)
    if formula is None:
        return list(space), "replay"
    keyed = []
    for k, options in enumerate(space):
        try:
            value = formula(params, M, **options)
        except InfeasibleMemory:  # the defaults may not fit where a listed option does
            continue
        if value is None:
            return list(space), "replay"
        keyed.append((value, k, options))
    keyed.sort(key=lambda t: (t[0], t[1]))
    return [o for _, _, o in keyed], "closed form"
