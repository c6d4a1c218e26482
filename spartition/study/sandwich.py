"""The sandwich: per M, the best proven lower bound and the best replayed schedule of one DAG, and their ratio.

The two sides of a tightness question, each with what stands behind it:

* **lower**: the largest of the trivial bound, in the standard games at
  ``M <= 4`` the pair-sum bound (:func:`spartition.partition.lower_bounds.pair_sum_bound`,
  found by the DAG's structure), every registered *explicit*
  lower-bound formula of the DAG's family that applies at ``(params, M)``
  and is proven for the game asked (:attr:`Formula.variants`; each carries
  its proof in its docstring, e.g.
  :func:`spartition.families.attention.forward.bounds.segment_capacity`), and, on
  request, the S-partition bounds of
  :func:`spartition.partition.lower_bounds.io_lower_bounds` (certificate
  partitions, proven statuses only);
* **upper**: the cheapest schedule among every registered algorithm that
  applies to the family, at its best tile options
  (:func:`spartition.exact.search.best_schedule`), then with its evictions
  re-chosen (:func:`spartition.exact.improve.improve_schedule`); each is
  replayed by :func:`spartition.core.game.replay` (a schedule is only ever a
  replayed one: an algorithm's own I/O formula only orders candidates).

A time limit bounds the whole call: the formulas are then evaluated in a
child process beside the schedule generation
(:class:`spartition.study.formula_run.FormulaRun`; some are searches of
their own), candidates not done in time are listed as skipped and the row
is marked ``time_limited``.

:func:`row_sandwich` reads the same two sides off a study row of
:func:`spartition.study.studies.compare` (what the study stored, nothing
searched), for ``compare``, the HTML report and :meth:`Study.sandwich`.
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import as_compact
from spartition.core.game import replay
from spartition.core.registry import algorithms
from spartition.errors import ParameterError, SpartitionError
from spartition.finding import UPPER, Finding
from spartition.partition.lower_bounds import pair_sum_bound
from spartition.settings import DEFAULT_VARIANT, PARTIAL
from spartition.study.game_schedules import (
    binary_build,
    default_closed_form,
    game_schedule,
    in_game,
    searched_game_schedule,
)

__all__ = ["INTERRUPTED_NOTE", "RowInterrupted", "SandwichRow", "SandwichSettings", "Side", "formula_sides",
           "row_sandwich", "sandwich", "sandwich_row"]


#: A side of a sandwich: a ``lower`` or ``upper`` :class:`~spartition.finding.Finding` (the name is kept for callers).
Side = Finding


@dataclass(frozen=True)
class SandwichRow:
    """The sandwich at one M.

    Attributes
    ----------
    M : int
    variant : str
    lower : Side
        The best proven lower bound.
    upper : Side or None
        The cheapest replayed schedule (None: no algorithm ran at this M).
    lowers, uppers : tuple of Side
        Every candidate of either side, best first.
    skipped : tuple of str
        Candidates that did not run, each with the reason (too little memory,
        the time limit).
    time_limited : bool
        Whether the time limit cut the candidates short.
    schedule : Schedule or None
        The upper side's schedule, replayed: its ``meta`` names the method
        and the generator's parameters, so anyone can replay the upper side.
    """

    M: int
    variant: str
    lower: Side
    upper: Side | None
    lowers: tuple = ()
    uppers: tuple = ()
    skipped: tuple = ()
    time_limited: bool = False
    wall_s: float = field(default=0.0, compare=False)
    schedule: object = field(default=None, compare=False, repr=False)

    @property
    def ratio(self) -> float | None:
        """upper / lower (None without an upper side or with a zero lower bound)."""
        if self.upper is None or self.lower.value <= 0:
            return None
        return self.upper.value / self.lower.value

    def to_dict(self) -> dict:
        return {"M": self.M, "variant": self.variant, "lower": self.lower.to_dict(),
                "upper": self.upper.to_dict() if self.upper else None, "ratio": self.ratio,
                "lowers": [s.to_dict() for s in self.lowers], "uppers": [s.to_dict() for s in self.uppers],
                "skipped": list(self.skipped), "time_limited": self.time_limited, "wall_s": round(self.wall_s, 3)}


def _formula_lowers(G, M: int, variant: str, deadline: float | None = None, c=None):
    """The explicit formulas proven for ``variant``, and a skipped note when ``G`` is not the DAG its label names.

    Returns ``(sides, skipped)``; with a ``deadline`` the formulas are
    evaluated in a child process instead (some are searches of their own) and
    the first item is a callable that waits for them until the deadline and
    returns ``(sides, skipped)``, so the schedules are generated meanwhile.
    """
    from spartition.study.formulas import evaluate_formulas, formula_families

    family = G.graph.get("family")
    if family not in formula_families():
        return [], []
    params = dict(G.graph.get("params") or {})
    # a file's family label is a claim: a formula bounds the family's DAG, not whatever graph the file holds
    label = " ".join([family, *(f"{k}={v}" for k, v in params.items())])
    mislabelled = [f"formulas: the DAG is not {label}'s (its graph differs from the family's build)"]
    if deadline is None:
        if not _is_its_family(G):
            return [], mislabelled
        values = evaluate_formulas(family, params, M)
        return formula_sides(values, variant), cut_notes(values, variant)
    from spartition.core.dag import dag_hash
    from spartition.study.formula_run import FormulaRun

    # networkx counts edges by walking them (a second on 10^5 nodes); the compact form knows the count
    key = (G.number_of_nodes(), G.number_of_edges() if c is None else int(len(c.pred_idx)))
    known = _CHECKED_LABELS.get(G)
    known = known[1] if known is not None and known[0] == key else None
    if known is False:
        return [], mislabelled
    # the label's check (a rebuild: seconds on 10^5 nodes) runs in the child too
    run = FormulaRun(family, params, M, variant, None if known else dag_hash(G), G.number_of_nodes())

    collected = []

    def wait(until: float | None = None):  # until: read what was sent by then (Ctrl-C), else the deadline
        if collected:  # the child is ended once; a second call (Ctrl-C after the collection) reads the same
            return collected[0]
        values, skipped = run.collect(deadline if until is None else until)
        if run.label is not None:
            _CHECKED_LABELS[G] = (key, run.label)
        collected.append(([], mislabelled) if run.label is False
                         else (formula_sides(values, variant), skipped + cut_notes(values, variant)))
        return collected[0]

    return wait, []


def cut_notes(values, variant: str) -> list[str]:
    """A formula whose search its time limit cut says so: its value stands, maybe weaker than its full search."""
    from spartition.study.formulas import formula_named

    return [f"formula:{v.name}: {note}" for v in values if v.kind == "lower" and v.applies
            and variant in formula_named(v.name).variants for note in v.notes]


def formula_sides(values, variant: str) -> list[Side]:
    """The lower sides of evaluated formulas: explicit, in their regime, finite and proven for ``variant``.

    Parameters
    ----------
    values : iterable of FormulaValue
    variant : {"oneshot", "recompute"}

    Returns
    -------
    list of Side
        One per such formula, the value rounded down to an integer (an I/O
        count is one), the theorem named as the certificate.
    """
    return [f for f in (v.finding(variant) for v in values) if f is not None]


def _is_its_family(G) -> bool:
    """Whether ``G`` is the DAG its ``family`` and ``params`` build (isolated nodes aside).

    Remembered per graph object and size, so a sandwich over many M rebuilds a big DAG once.
    """
    key = (G.number_of_nodes(), G.number_of_edges())
    known = _CHECKED_LABELS.get(G)
    if known is not None and known[0] == key:
        return known[1]
    from spartition.core.dag import dag_hash, strip_isolated
    from spartition.core.registry import rebuild

    try:
        built = rebuild(G, max_nodes=max(G.number_of_nodes(), 1))
        digest = dag_hash(G)
        # the stripped build only when the plain one differs: on 10^5 nodes each costs seconds
        same = digest == dag_hash(built) or digest == dag_hash(strip_isolated(built))
    except (SpartitionError, ValueError, TypeError):
        same = False
    _CHECKED_LABELS[G] = (key, same)
    return same


#: DAGs of at most this many nodes get the exact solver (:func:`spartition.exact.solve.solve_io`) in each row.
EXACT_NODES = 100
#: Seconds the exact solver gets per row without a time limit (with one: the time left in the row).
EXACT_SECONDS = 10.0


def _exact_sides(G, M: int, variant: str, deadline: float | None) -> tuple[list, list, dict, bool]:
    """The exact solver's proven bound (a lower side) and replayed schedule (an upper side) at ``M``, and whether
    Ctrl-C stopped it (its sides are then its best so far, as ``spartition solve`` prints them)."""
    from spartition.exact.solve import solve_io

    seconds = EXACT_SECONDS if deadline is None else deadline - time.monotonic()
    if seconds <= 0.05:
        return [], [], {}, False
    r = solve_io(G, M, variant, time_limit=seconds, workers=1)
    found = r.finding("exact:solve")
    lowers = [found.as_lower()] if found.lower is not None else []
    uppers, schedules = [], {}
    if r.schedule is not None and found.upper is not None:
        uppers.append(found.as_upper())
        schedules["exact:solve"] = type(r.schedule)(r.schedule.M, r.schedule.variant, r.schedule.moves,
                                                    {**r.schedule.meta, "method": "exact:solve",
                                                     "solver": r.schedule.meta.get("method"),
                                                     "status": str(r.status), "source": r.schedule_source})
    return lowers, uppers, schedules, r.interrupted


#: graph -> ((nodes, edges), whether its family label rebuilds it), for :func:`_is_its_family`.
_CHECKED_LABELS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _partition_lowers(G, M: int, variant: str, seconds: float) -> list[Side]:
    from spartition.partition.lower_bounds import io_lower_bounds

    out = []
    for b in io_lower_bounds(G, M, time_limit=seconds):
        if b.proven and b.method not in ("trivial", "pair-sums"):  # both are in every row already
            out.append(b.finding(variant))
    return out


def _partial_edge_lowers(c, M: int, skipped: list) -> list[Side]:
    """The partial game's edge-partition bound (:mod:`spartition.partition.partial_edges`) on tiny DAGs."""
    from spartition.partition.partial_edges import MAX_PARTIAL_PARTITION_EDGES, partial_edge_partition_bound

    if len(c.pred_idx) > MAX_PARTIAL_PARTITION_EDGES:
        skipped.append(f"bound:partial-edge-partition: more than {MAX_PARTIAL_PARTITION_EDGES} edges")
        return []
    return [Finding(value=partial_edge_partition_bound(c, M), method="bound:partial-edge-partition", game=PARTIAL,
                    evidence="max over k of k (P(M + k) - 1), exhaustive edge-partition search "
                             "(proof: spartition.partition.partial_edges)")]


def _uppers(G, M: int, variant: str, deadline: float | None, names, search: bool,
            c=None, found: dict | None = None) -> tuple[list[Side], list[str], dict, float]:
    """Every applicable algorithm's schedule at its defaults, then (``search``) its tile options searched, the
    cheapest default first; the family's own algorithms before the generic ones: on a big DAG the time limit
    then cuts the least promising work. Returns the sides, what was skipped, the schedules by method and the
    seconds the latest schedule took to make and replay.
    ``c`` is ``G`` compacted once (each replay of ``G`` itself compacts it again: a second on 10^5 nodes).
    ``found`` (filled as schedules are replayed) keeps them for a caller that Ctrl-C interrupts."""
    c = G if c is None else c
    # the partial game plays the oneshot schedules of the published algorithms, translated edge by edge
    made_in = "oneshot" if variant == PARTIAL else variant
    family = G.graph.get("family")
    chosen = [(name, alg) for name, alg in algorithms().items()
              if (names is None or name in names) and alg.applies_to(family, made_in)]
    found = {} if found is None else found
    skipped, refused = [], {}
    # sums as nodes: the published generators name the binary DAG's partial sums; they run on the binary build
    # and their schedules are played on this one (spartition.core.aggregate.chain_schedule_to_aggregated)
    binary = binary_build(G) if variant == PARTIAL else None

    last = [0.0]  # seconds the latest schedule (a default or a search's best) took to make and replay

    def out_of_time(name) -> bool:
        # nothing is started that, as long as the last schedule made, would end past the deadline: one tile search
        # at 10^6 nodes takes 30 s, and the last one started ran a 60 s row to 97 s
        if deadline is not None and time.monotonic() + last[0] > deadline:
            skipped.append(f"{name}: time limit")
            return True
        return False

    def keep(name, schedule, options) -> None:
        schedule = in_game(c, schedule, variant)
        io = replay(c, schedule).io
        if name not in found or io < found[name][0]:
            found[name] = (io, schedule, options)

    def defaults(group) -> None:
        # under a deadline, cheapest closed form first; one above a schedule made is not (its search still runs,
        # last): at n = 256, d = 4 a default takes 10-20 s, and the hopeless ones ran a 60 s row to 71 s
        unread = deadline is None or (G in _CHECKED_LABELS and _CHECKED_LABELS[G][1] is False)  # or mislabelled
        forms = {} if unread else {name: default_closed_form(alg, G, M) for name, alg in group}
        group = sorted(group, key=lambda na: (forms.get(na[0]) is None, forms.get(na[0]) or 0))
        for name, alg in group:
            best = min((io for io, *_ in found.values()), default=forms.get(name))
            if forms.get(name) is not None and forms[name] > best:
                skipped.append(f"{name} (default): its closed form {forms[name]} is above {best}, not made")
                continue
            if out_of_time(name):
                continue
            began = time.monotonic()
            try:
                keep(name, game_schedule(G, alg, M, variant, c, binary), {})
            except SpartitionError as exc:  # refused at once (M too small): says nothing of the time one takes
                refused[name] = exc
                continue
            last[0] = time.monotonic() - began

    def searched(group) -> None:
        # the cheapest defaults first, those whose defaults do not fit after them
        for name, alg in sorted(group, key=lambda na: (na[0] not in found, found.get(na[0], (0,))[0])):
            if any(s.startswith(f"{name}: ") for s in skipped) or out_of_time(f"{name} (tile search)"):
                continue
            began = time.monotonic()
            try:
                # the partial game: the best oneshot tiling, translated by keep (oneshot_to_partial)
                result = searched_game_schedule(G, alg, M, variant, binary, deadline)
            except SpartitionError as exc:
                refused.setdefault(name, exc)
                continue
            keep(name, result.schedule, result.options)
            last[0] = time.monotonic() - began
            if result.cut:
                skipped.append(f"{name} (tile search, cut): time limit")

    # the family's own algorithms, defaults and searches, before any generic one: greedy is the slowest on a big
    # DAG and rarely the best (n = 256, d = 4, M = 4: run first it left the searches no time)
    for group in ([na for na in chosen if "*" not in na[1].families], [na for na in chosen if "*" in na[1].families]):
        defaults(group)
        if search:
            searched(group)
    if variant == PARTIAL and not out_of_time("partial-greedy"):
        from spartition.core.partial_greedy import partial_greedy_schedule

        # the greedy of the partial game itself: it orders each node's in-edges freely, no oneshot schedule does
        try:
            keep("partial-greedy", partial_greedy_schedule(c, M), {})
        except SpartitionError as exc:
            refused["partial-greedy"] = exc
    skipped += [f"{name}: {exc}" for name, exc in refused.items() if name not in found]
    sides, schedules = _upper_sides(found, M, variant)
    return sides, skipped, schedules, last[0]


def _upper_sides(found: dict, M: int, variant: str, made: dict | None = None) -> tuple[list[Side], dict]:
    """The sides (cheapest first) and schedules by method of :func:`_uppers`' replayed schedules, and of ``made``'s
    (a side and its schedule by method)."""
    made = made or {}
    sides, schedules = [side for side, _ in made.values()], {method: sched for method, (_, sched) in made.items()}
    for name, (io, schedule, options) in found.items():
        method = _algorithm_method(name, options, M)
        schedules[method] = _with_provenance(schedule, method, name, options, variant)
        shown = ", ".join(f"{k}={v}" for k, v in sorted(options.items()))
        sides.append(Finding(kind=UPPER, value=io, method=method, game=variant,
                             evidence=f"schedule replayed ({len(schedule.moves)} moves{'; ' + shown if shown else ''})"))
    return sorted(sides, key=lambda s: (s.value, s.method)), schedules


def _algorithm_method(name: str, options: dict, M: int) -> str:
    """The label of an algorithm's schedule: its tiling, and where it was made when that is another M.

    ``algorithm:flash-forward`` at M = 8 reading 8 where ``schedule
    flash-forward`` gives 18 misled: the 8 was a tiling made for M = 16 with
    its evictions re-chosen at 8. Such a schedule is named for what it is.

    Examples
    --------
    >>> _algorithm_method("flash-forward", {"B_c": 2, "retargeted_from": 16, "weight": 1.0}, 8)
    'algorithm:flash-forward(B_c=2) made for M=16, re-pebbled at M=8'
    >>> _algorithm_method("greedy", {}, 8)
    'algorithm:greedy'
    """
    tiles = ",".join(f"{k}={v}" for k, v in sorted(options.items()) if k not in ("retargeted_from", "weight"))
    method = f"algorithm:{name}" + (f"({tiles})" if tiles else "")
    if options.get("retargeted_from") is not None:
        method += f" made for M={options['retargeted_from']}, re-pebbled at M={M}"
    return method


def _with_provenance(schedule, method: str, name: str, options: dict, variant: str):
    """``schedule`` in the game asked, its ``meta`` naming the generator and its parameters."""
    from spartition.core.game import Schedule

    meta = {**schedule.meta, "method": method, "algorithm": name, "options": dict(options)}
    return Schedule(schedule.M, variant, schedule.moves, meta)


def _improved(G, best: Side, schedule, deadline: float | None, made: dict) -> tuple | None:
    """``(Side, schedule)`` of ``schedule`` improved (:func:`improve_schedule`), or None if it is no cheaper; kept
    in ``made`` too, for a row that the Ctrl-C that ends the passes (with their best so far) then cuts."""
    from spartition.core.game import Schedule
    from spartition.exact.improve import improve_schedule

    left = None if deadline is None else deadline - time.monotonic()
    if left is not None and left <= 0:
        return None
    result = improve_schedule(G, schedule, time_limit=left)
    io, method = replay(G, result.schedule).io, f"{best.method}+improve"
    if io < best.value:
        made[method] = (Finding(kind=UPPER, value=io, method=method, game=best.game,
                                evidence=f"schedule replayed ({len(result.schedule.moves)} moves; the compute order "
                                f"of {best.method.removeprefix('algorithm:')}, evictions re-chosen by spartition improve)"),
                        Schedule(result.schedule.M, result.schedule.variant, result.schedule.moves,
                                 {**schedule.meta, **result.schedule.meta, "method": method}))
    if result.interrupted:  # the passes swallowed the Ctrl-C: the sandwich stops, as every other command does
        raise KeyboardInterrupt
    return made.get(method)


@dataclass(frozen=True, kw_only=True)
class SandwichSettings:
    """How :func:`sandwich` and :func:`sandwich_row` work out the two sides, apart from the problem (DAG, M, game).

    Attributes
    ----------
    time_limit : float or None
        Seconds for the whole row (:func:`sandwich`: for all rows); the partition bounds get half of it.
    partition_bounds : bool
        Also run the CP-SAT S-partition bounds (small DAGs).
    algorithm_names : iterable of str or None
        Only these algorithms (default: every one that applies).
    search : bool
        Search each algorithm's tile options (:func:`spartition.exact.search.best_schedule`)
        instead of running its defaults.
    improve : bool
        Re-choose the loads, stores and evictions of the cheapest schedule
        for its compute order (:func:`spartition.exact.improve.improve_schedule`)
        in the time left, in the oneshot and the standard game; kept only if
        it replays cheaper.
    """

    time_limit: float | None = None
    partition_bounds: bool = False
    algorithm_names: object = None
    search: bool = True
    improve: bool = True


def _settings(settings: SandwichSettings | None, **keywords) -> SandwichSettings:
    """``settings``, or the keywords as settings; both at once is refused (which would win is not obvious)."""
    if settings is None:
        return SandwichSettings(**keywords)
    defaults = SandwichSettings()
    clash = sorted(k for k, v in keywords.items() if v != getattr(defaults, k))
    if clash:
        raise ParameterError(f"pass the sandwich's settings either as keywords or as settings=, not both "
                             f"(given both ways: {', '.join(clash)})")
    return settings


def sandwich_row(dag, M: int, variant: str = DEFAULT_VARIANT, time_limit: float | None = None,
                 partition_bounds: bool = False, algorithm_names=None, search: bool = True,
                 improve: bool = True, settings: SandwichSettings | None = None) -> SandwichRow:
    """The sandwich of ``dag`` at one ``M``.

    Parameters
    ----------
    dag : networkx.DiGraph
        A CDAG (a family's: its registered formulas and algorithms take part).
    M : int
        Fast memory.
    variant : {"oneshot", "recompute", "partial"}
        The game: a lower bound proven only for another game is left out.
        ``"partial"``: the lower side is the partial game's trivial bound
        (and the exact solver's, on small DAGs); the upper side is the
        partial game's greedy and every algorithm's oneshot schedule
        translated by :func:`spartition.core.partial_greedy.oneshot_to_partial`,
        each replayed in the partial game.
    time_limit, partition_bounds, algorithm_names, search, improve
        As :class:`SandwichSettings`' attributes.
    settings : SandwichSettings, optional
        The same five at once (then the keywords keep their defaults).

    Returns
    -------
    SandwichRow

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> row = sandwich_row(build("attention-forward", n=16, d=2), 8)
    >>> row.lower.method, row.lower.value > 4 * 16 * 2, row.upper.value >= row.lower.value
    ('formula:segment-forward-lower', True, True)
    """
    s = _settings(settings, time_limit=time_limit, partition_bounds=partition_bounds,
                  algorithm_names=algorithm_names, search=search, improve=improve)
    return _row(dag, as_compact(dag), M, variant, s.time_limit, s.partition_bounds, s.algorithm_names, s.search,
                s.improve)


#: The skipped note of a row cut by Ctrl-C (:class:`RowInterrupted`).
INTERRUPTED_NOTE = "Ctrl-C: the rest of this row was not computed"


class RowInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sandwich row: ``row`` is what the row had by then.

    Its lower side is the trivial bound and the formulas evaluated before the
    signal, its upper side the schedules replayed before it, each as valid as
    in a finished row; ``skipped`` says the rest was not computed.
    """

    def __init__(self, row: SandwichRow):
        super().__init__()
        self.row = row


def _row(dag, c, M: int, variant: str, time_limit: float | None, partition_bounds: bool, algorithm_names,
         search: bool, improve: bool) -> SandwichRow:
    """:func:`sandwich_row` with ``dag`` compacted (``c``) once for every row: a second each on 10^5 nodes.

    Raises :class:`RowInterrupted` on Ctrl-C, with the row as far as it got.
    """
    t0 = time.monotonic()
    deadline = None if time_limit is None else t0 + time_limit
    lowers = [Finding(value=trivial_lower_bound(c), method="trivial", game=variant,
                      evidence="every input loaded, every output stored")]
    if variant != PARTIAL:
        pair = pair_sum_bound(c, M)
        if pair.parameters["gain"] > 0:
            lowers.append(pair.finding(variant))
    if variant == PARTIAL:
        from spartition.exact.partial_solve import partial_trivial_bound

        lowers = [Finding(value=partial_trivial_bound(c), method="trivial", game=variant,
                          evidence="every input loaded, every output saved (proven for the partial game: "
                                   "spartition.exact.partial_solve.partial_trivial_bound)")]
    found, made = {}, {}  # what a row cut by Ctrl-C keeps: the schedules so far, by algorithm (_uppers) and method
    # with a time limit the formulas run in a child beside the schedules, collected at the end;
    # only formulas that declare the game asked count (formula_sides): none of the standard game's is partial-valid
    formula_lowers = None
    try:
        formula_lowers, formula_skipped = _formula_lowers(dag, M, variant, deadline, c)
        if not callable(formula_lowers):
            lowers += formula_lowers
        return _rest_of_row(dag, c, M, variant, time_limit, deadline, partition_bounds, algorithm_names, search,
                            improve, t0, lowers, formula_lowers, formula_skipped, found, made)
    except KeyboardInterrupt:
        if callable(formula_lowers):  # the formulas the child finished before the signal
            try:
                lowers += [side for side in formula_lowers(time.monotonic())[0] if side not in lowers]
            except (OSError, ValueError, EOFError):
                pass  # Ctrl-C came while the child was being collected and ended it: its formulas are lost
        raise RowInterrupted(_interrupted_row(M, variant, lowers, found, made, t0)) from None


def _interrupted_row(M: int, variant: str, lowers: list, found: dict, made: dict, t0: float) -> SandwichRow:
    """The row as far as Ctrl-C let it get (:class:`RowInterrupted`)."""
    uppers, schedules = _upper_sides(found, M, variant, made)
    lowers = sorted(lowers, key=lambda s: (-s.value, s.method != "trivial", s.method))
    return SandwichRow(M, variant, lowers[0], uppers[0] if uppers else None, tuple(lowers), tuple(uppers),
                       (INTERRUPTED_NOTE,), False, time.monotonic() - t0,
                       schedules.get(uppers[0].method) if uppers else None)


def _rest_of_row(dag, c, M, variant, time_limit, deadline, partition_bounds, algorithm_names, search, improve, t0,
                 lowers, formula_lowers, formula_skipped, found, made) -> SandwichRow:
    """:func:`_row` after the formulas started: the partition bounds, the schedules, the exact solver."""
    if partition_bounds and variant == PARTIAL:
        formula_skipped = [*formula_skipped, "partition bounds: the vertex S-partition bounds are proven for the "
                           "standard game (the partial game can be cheaper); only the edge partition bound is used"]
        lowers += _partial_edge_lowers(c, M, formula_skipped)
    elif partition_bounds:
        lowers += _partition_lowers(dag, M, variant, (time_limit or 60.0) / 2)
    uppers, skipped, schedules, last = _uppers(dag, M, variant, deadline,
                                               None if algorithm_names is None else set(algorithm_names), search, c,
                                               found)
    # the standard game too: a schedule that computes each node once is re-pebbled into one that does (valid in
    # both games); a recomputing one is returned as it is. An eviction pass costs about what making a schedule did
    # (23 s at 10^6 nodes): it is not started if that would end past the deadline
    if improve and uppers and variant != PARTIAL:
        if deadline is not None and time.monotonic() + last > deadline:
            skipped = [*skipped, "improve: time limit"]
        elif (better := _improved(c, uppers[0], schedules[uppers[0].method], deadline, made)) is not None:
            uppers.insert(0, better[0])
            schedules[better[0].method] = better[1]
    if c.n <= EXACT_NODES:
        # a user's own small DAG has no formula and no published algorithm: what the solver proves is the answer
        exact_lowers, exact_uppers, exact_schedules, stopped = _exact_sides(dag, M, variant, deadline)
        lowers += exact_lowers
        made.update({side.method: (side, exact_schedules[side.method]) for side in exact_uppers})
        if stopped:
            raise KeyboardInterrupt
        uppers = sorted(uppers + exact_uppers, key=lambda s: (s.value, s.method))
        schedules.update(exact_schedules)
    if callable(formula_lowers):
        sides, late = formula_lowers()
        lowers += sides
        formula_skipped += late
    skipped = formula_skipped + skipped
    lowers.sort(key=lambda s: (-s.value, s.method != "trivial", s.method))  # the plainest proof of a tie first
    if uppers and uppers[0].value < lowers[0].value:
        # a replayed schedule below a proven bound refutes the bound's proof: never report it as a sandwich
        raise AssertionError(f"replayed {uppers[0].method} costs {uppers[0].value} < proven {lowers[0].method} "
                             f"{lowers[0].value} at M = {M}: a lower bound's proof is wrong")
    return SandwichRow(M, variant, lowers[0], uppers[0] if uppers else None, tuple(lowers), tuple(uppers),
                       tuple(skipped), any(s.endswith(": time limit") for s in skipped), time.monotonic() - t0,
                       schedules.get(uppers[0].method) if uppers else None)


def sandwich(dag, Ms, variant: str = DEFAULT_VARIANT, time_limit: float | None = None, partition_bounds: bool = False,
             algorithm_names=None, progress=None, search: bool = True, improve: bool = True,
             found: list | None = None, settings: SandwichSettings | None = None) -> list[SandwichRow]:
    """:func:`sandwich_row` at every M of ``Ms``, the time limit shared across them.

    The settings as in :func:`sandwich_row` (keywords, or ``settings``).

    ``progress(M)`` is called after each row (a progress bar's tick). Each
    row is appended to ``found`` (if given) as soon as it is done, so a
    caller interrupted by Ctrl-C still holds the rows finished before, and
    the row it cut as far as it got (:class:`RowInterrupted`).

    Raises
    ------
    InfeasibleMemory
        If some M of ``Ms`` is below the smallest feasible M (as :func:`spartition.exact.solve.solve_io`
        says): no schedule exists there, so a row would compare a bound with nothing.
    """
    from spartition.core.bounds import require_memory
    from spartition.core.dag import compact
    from spartition.core.partial import require_partial_memory

    s = _settings(settings, time_limit=time_limit, partition_bounds=partition_bounds,
                  algorithm_names=algorithm_names, search=search, improve=improve)
    t0 = time.monotonic()
    rows, Ms = ([] if found is None else found), list(Ms)
    c = compact(dag)
    if Ms:
        (require_partial_memory if variant == PARTIAL else require_memory)(c, min(Ms))
    for k, M in enumerate(Ms):
        left = None if s.time_limit is None else max(0.0, (s.time_limit - (time.monotonic() - t0)) / (len(Ms) - k))
        try:
            rows.append(_row(dag, c, M, variant, left, s.partition_bounds, s.algorithm_names, s.search, s.improve))
        except RowInterrupted as stop:
            rows.append(stop.row)  # the caller's ``found`` holds it too, marked as cut by Ctrl-C
            raise
        if progress is not None:
            progress(M)
    return rows


def row_sandwich(row) -> SandwichRow:
    """The sandwich of one study row, from what the study computed.

    The lower side is the best of the row's lower bounds (every bound
    method's value is a valid bound, even from a search stopped early), the
    exact solvers' proven bounds and the explicit formulas proven for the
    row's game (:func:`formula_sides`); the upper side is the cheapest of
    its replayed schedules (the exact solvers' certificates and the
    algorithms). Unlike :func:`sandwich_row` nothing is computed here: no tile
    search and no improvement, so a study's upper side can be above the
    sandwich command's.

    Parameters
    ----------
    row : StudyRow

    Returns
    -------
    SandwichRow
        ``time_limited`` when a search behind the row stopped at its time
        limit (an exact or bound row that is not proven). A lower side
        above the upper one is returned as it is: the row's verdicts call
        it violated.

    Examples
    --------
    >>> from spartition.study.studies import StudySpec, compare
    >>> s = compare(StudySpec("chain", {"n": 3}, Ms=(2,), exact=("brute",), bounds=False))
    >>> r = row_sandwich(s.rows[0])
    >>> (r.lower.value, r.lower.method), (r.upper.value, r.upper.method), r.ratio
    ((2, 'exact:brute'), (2, 'algorithm:greedy'), 1.0)
    """
    lowers, uppers, limited = [], [], False
    for r in [*row.bounds.values(), *row.exact.values(), *row.algorithms.values()]:
        found = r.finding()
        if found.lower is not None:
            lowers.append(found.as_lower())
        if found.upper is not None:
            uppers.append(found.as_upper())
        limited |= found.time_limited
    lowers += formula_sides(row.formulas, row.variant)
    if not lowers:
        lowers = [Finding(value=0, method="none", evidence="no lower bound computed", game=row.variant)]
    lowers.sort(key=lambda s: (-s.value, s.method))
    uppers.sort(key=lambda s: (s.value, s.method))
    return SandwichRow(row.M, row.variant, lowers[0], uppers[0] if uppers else None, tuple(lowers), tuple(uppers),
                       (), limited)
