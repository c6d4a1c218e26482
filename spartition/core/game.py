"""The red-blue pebble game: schedules, their JSON files, and replay.

Rules (docs/definitions.md section 2, Hong & Kung 1981, with inputs never computable):

=========  ========================================================  =====
move       precondition                                              cost
=========  ========================================================  =====
load v     v in B, v not in R                                        1
store v    v in R, v not in B                                        1
compute v  v not an input, v not in R, all predecessors in R         0
delete v   v in R                                                    0
=========  ========================================================  =====

|R| <= M after every move; start R = {}, B = inputs; goal: outputs in B.
Variant ``oneshot`` computes each node at most once, ``recompute`` any number
of times. A schedule of variant ``partial`` is a schedule of the
partial-computation game, whose rules and replay are in
:mod:`spartition.core.partial`; :func:`replay` checks it by those rules.
"""

from __future__ import annotations

import json
from operator import itemgetter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from spartition.core.dag import CompactDAG, as_compact, read_json
from spartition.core.partial import check_partial_moves
from spartition.errors import IllegalMove, InvalidSchedule
from spartition.settings import GAMES, PARTIAL

__all__ = [
    "MOVES",
    "ReplayResult",
    "Schedule",
    "load_schedule",
    "replay",
    "require_standard",
    "save_schedule",
]

MOVES = ("load", "store", "compute", "delete")
_LOAD, _STORE, _COMPUTE, _DELETE = range(4)


@dataclass(frozen=True)
class Schedule:
    """A pebbling schedule: fast-memory size, variant, and a list of (move, node) pairs.

    ``meta`` carries free-form provenance (which algorithm or solver made it).

    Examples
    --------
    >>> Schedule(2, "oneshot", [("load", "a"), ("compute", "b"), ("store", "b")])
    Schedule(M=2, variant='oneshot', moves=<3 moves>)
    """

    M: int
    variant: str
    moves: tuple
    meta: dict = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if self.variant not in GAMES:
            raise InvalidSchedule(f"unknown variant {self.variant!r}; expected one of {GAMES}")
        if not isinstance(self.M, int) or isinstance(self.M, bool) or self.M < 0:
            raise InvalidSchedule(f"M must be a non-negative integer, got {self.M!r}")
        if not isinstance(self.moves, tuple):
            object.__setattr__(self, "moves", tuple(tuple(m) for m in self.moves))

    def __repr__(self) -> str:
        # a schedule has up to millions of moves: its repr (and that of every result holding one) counts them
        meta = f", meta={self.meta!r}" if self.meta else ""
        return f"Schedule(M={self.M}, variant={self.variant!r}, moves=<{len(self.moves):,} moves>{meta})"

    def to_dict(self) -> dict:
        """The JSON form ``{"M": .., "variant": .., "moves": [[move, node], ...]}``."""
        d = {"M": self.M, "variant": self.variant, "moves": [list(m) for m in self.moves]}
        if self.meta:
            d["meta"] = self.meta
        return d

    @classmethod
    def from_dict(cls, data) -> "Schedule":
        """Parse the JSON form, raising :class:`InvalidSchedule` on a malformed one."""
        if not isinstance(data, dict):
            raise InvalidSchedule("a schedule must be a JSON object")
        for key in ("M", "variant", "moves"):
            if key not in data:
                raise InvalidSchedule(f"schedule has no {key!r} key")
        moves = data["moves"]
        if not isinstance(moves, (list, tuple)):  # a tuple: a certificate built in memory from a Schedule
            raise InvalidSchedule("'moves' must be a list")
        # the partial game's compute names an edge: ["partial", u, v]
        sizes = (2, 3) if data["variant"] == PARTIAL else (2,)
        for t, m in enumerate(moves):
            if not (isinstance(m, (list, tuple)) and len(m) in sizes):
                raise InvalidSchedule(f"step {t}: a move is a [move, node] pair, got {m!r}")
        return cls(
            M=data["M"],
            variant=data["variant"],
            moves=tuple(tuple(map(str, m)) for m in moves),
            meta=data.get("meta", {}),
        )


def require_standard(schedule: Schedule, what: str) -> None:
    """Raise :class:`InvalidSchedule` if ``schedule`` is of the partial game, which ``what`` does not read.

    Examples
    --------
    >>> require_standard(Schedule(2, "partial", []), "improve")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidSchedule: improve reads schedules of the standard game (oneshot, recompute), not of the partial game
    """
    if schedule.variant == PARTIAL:
        raise InvalidSchedule(f"{what} reads schedules of the standard game (oneshot, recompute), not of the "
                              "partial game")


def load_schedule(path) -> Schedule:
    """Read a schedule JSON file.

    Raises
    ------
    InvalidSchedule
        If the file is unreadable or malformed, naming the file (and saying
        so when it holds a DAG: ``improve g.json g.json`` is an easy slip).
    """
    data = read_json(path, InvalidSchedule, "schedule")
    try:
        return Schedule.from_dict(data)
    except InvalidSchedule as exc:
        hint = ""
        if isinstance(data, dict) and "nodes" in data and "moves" not in data:
            hint = " (it holds a DAG, not a schedule)"
        raise InvalidSchedule(f"schedule file {path}{hint}: {exc}") from None


def save_schedule(schedule: Schedule, path) -> None:
    """Write a schedule JSON file."""
    Path(path).write_text(json.dumps(schedule.to_dict()) + "\n")


@dataclass(frozen=True)
class ReplayResult:
    """What a valid schedule costs."""

    M: int
    variant: str
    loads: int
    stores: int
    computes: int
    peak_red: int
    moves: int

    @property
    def io(self) -> int:
        """I/O cost: loads + stores."""
        return self.loads + self.stores

    def to_dict(self) -> dict:
        return {
            "M": self.M,
            "variant": self.variant,
            "io": self.io,
            "loads": self.loads,
            "stores": self.stores,
            "computes": self.computes,
            "peak_red": self.peak_red,
            "moves": self.moves,
        }


def _encode(cdag: CompactDAG, moves) -> tuple[np.ndarray, np.ndarray]:
    code_of = {name: k for k, name in enumerate(MOVES)}
    T = len(moves)
    if T == 0:
        return np.zeros(0, dtype=np.int8), np.zeros(0, dtype=np.int64)
    # map/itemgetter allocate no container objects, so the cyclic GC stays idle
    # on schedules of millions of moves (zip(*moves) made replay 2x slower).
    try:
        kinds = np.fromiter(map(code_of.__getitem__, map(itemgetter(0), moves)), dtype=np.int8, count=T)
        nodes = np.fromiter(map(cdag.index.__getitem__, map(itemgetter(1), moves)), dtype=np.int64, count=T)
    except KeyError:
        for t, (move, node) in enumerate(moves):
            if move not in code_of:
                raise IllegalMove(t, move, node, f"unknown move {move!r}; expected one of {MOVES}") from None
            if node not in cdag.index:
                raise IllegalMove(t, move, node, f"unknown node {node!r}") from None
        raise
    return kinds, nodes


def _violation(step, kinds, nodes, cdag, rule):
    return IllegalMove(int(step), MOVES[kinds[step]], cdag.names[nodes[step]], rule)


# One function on purpose, past the size the other functions keep: the vectorised replay
# checks every rule in one pass over the move arrays; split by rule it would walk them once
# per rule (tests/test_layout.py lists it as the one exception).
def replay(dag, schedule: Schedule) -> ReplayResult:
    """Check a schedule against the rules and return its cost.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG.
    schedule : Schedule
        The moves, M and variant. A schedule of variant ``"partial"`` is
        checked by the rules of the partial-computation game
        (:func:`spartition.core.partial.check_partial_moves`; its saves count
        as stores, its partial computes as computes).

    Returns
    -------
    ReplayResult
        Loads, stores, I/O, computes and peak number of red pebbles.

    Raises
    ------
    IllegalMove
        At the first move that breaks a rule, naming the step, move, node and
        rule; or at the end if an output is not in slow memory.

    Notes
    -----
    The check is vectorised: the state of a node before step t is a function
    of the last earlier move on that node, found by sorting moves by (node,
    step); the predecessors of each compute are looked up by binary search
    in that order. Up to the first violation every move is legal, so these
    states are exactly those of a step-by-step replay, and the earliest
    violating step is reported. Cost O(T log T + sum of in-degrees of the
    computed nodes).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> s = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("delete", "c0"),
    ...                             ("compute", "c2"), ("store", "c2")])
    >>> replay(chain(3), s).io
    2
    >>> replay(chain(3), Schedule(2, "oneshot", [("compute", "c2")]))
    Traceback (most recent call last):
    ...
    spartition.errors.IllegalMove: step 0: compute 'c2': predecessor 'c1' is not in fast memory
    """
    if schedule.variant == PARTIAL:
        return ReplayResult(M=schedule.M, variant=PARTIAL, **check_partial_moves(dag, schedule.M, schedule.moves))
    cdag = as_compact(dag)
    kinds, nodes = _encode(cdag, schedule.moves)
    T = len(kinds)
    M, variant = schedule.M, schedule.variant
    is_input = cdag.is_input

    # Moves sorted by (node, step): the previous move on the same node.
    order = np.lexsort((np.arange(T), nodes))
    snodes = nodes[order]
    skinds = kinds[order]
    first_of_node = np.ones(T, dtype=bool)
    first_of_node[1:] = snodes[1:] != snodes[:-1]
    # Red after a move: load/compute make red, delete removes; a (legal) store keeps red.
    red_after_sorted = skinds != _DELETE
    red_before_sorted = np.zeros(T, dtype=bool)
    red_before_sorted[1:] = red_after_sorted[:-1]
    red_before_sorted[first_of_node] = False

    def count_before(mask_sorted):
        # number of earlier moves of this kind on the same node
        c = np.cumsum(mask_sorted) - mask_sorted
        group_start = np.maximum.accumulate(np.where(first_of_node, np.arange(T), 0))
        return c - c[group_start]

    stores_before_sorted = count_before(skinds == _STORE)
    computes_before_sorted = count_before(skinds == _COMPUTE)

    red_before = np.empty(T, dtype=bool)
    red_before[order] = red_before_sorted
    blue_before = np.empty(T, dtype=bool)
    blue_before[order] = stores_before_sorted > 0
    blue_before |= is_input[nodes]
    computed_before = np.empty(T, dtype=bool)
    computed_before[order] = computes_before_sorted > 0

    is_load, is_store = kinds == _LOAD, kinds == _STORE
    is_compute, is_delete = kinds == _COMPUTE, kinds == _DELETE

    # Each candidate violation: (mask, rule); rules are tested in this order at a step.
    checks = [
        (is_load & ~blue_before, "load of a node not in slow memory"),
        (is_load & red_before, "load of a node already in fast memory"),
        (is_store & ~red_before, "store of a node not in fast memory"),
        (is_store & blue_before, "store of a node already in slow memory"),
        (is_compute & is_input[nodes], "compute of an input (inputs must be loaded)"),
        (is_compute & red_before, "compute of a node already in fast memory"),
        (is_delete & ~red_before, "delete of a node not in fast memory"),
    ]
    if variant == "oneshot":
        checks.append((is_compute & computed_before, "recompute of a node in the oneshot variant"))

    # Predecessors of computed nodes must be red just before the compute.
    csteps = np.flatnonzero(is_compute)
    cnodes = nodes[csteps]
    indeg = (cdag.pred_ptr[cnodes + 1] - cdag.pred_ptr[cnodes]).astype(np.int64)
    q_step = np.repeat(csteps, indeg)
    starts = np.repeat(cdag.pred_ptr[cnodes] - np.cumsum(indeg) + indeg, indeg)
    q_pred = cdag.pred_idx[starts + np.arange(indeg.sum())].astype(np.int64) if len(q_step) else np.zeros(0, np.int64)
    keys = snodes * (T + 1) + order
    pos = np.searchsorted(keys, q_pred * (T + 1) + q_step, side="left") - 1
    found = pos >= 0
    posc = np.where(found, pos, 0)
    found &= snodes[posc] == q_pred if T else found
    pred_red = found & red_after_sorted[posc] if T else found
    missing = ~pred_red
    pred_bad = np.zeros(T, dtype=bool)
    pred_bad[q_step[missing]] = True
    checks.append((pred_bad, "predecessor missing"))

    delta = np.where(is_load | is_compute, 1, np.where(is_delete, -1, 0))
    red_count = np.cumsum(delta)
    checks.append((red_count > M, f"more than M = {M} red pebbles"))

    first = T
    for mask, _ in checks:
        hits = np.flatnonzero(mask)
        if len(hits):
            first = min(first, int(hits[0]))
    if first < T:
        for mask, rule in checks:
            if mask[first]:
                if rule == "predecessor missing":
                    bad = q_pred[(q_step == first) & missing][0]
                    rule = f"predecessor {cdag.names[bad]!r} is not in fast memory"
                raise _violation(first, kinds, nodes, cdag, rule)

    blue_end = is_input.copy()
    blue_end[nodes[is_store]] = True
    unfinished = np.flatnonzero(cdag.is_output & ~blue_end)
    if len(unfinished):
        names = [cdag.names[i] for i in unfinished[:5]]
        more = f" and {len(unfinished) - 5} more" if len(unfinished) > 5 else ""
        raise IllegalMove(T, None, None, f"outputs not in slow memory at the end: {names}{more}")

    return ReplayResult(
        M=M,
        variant=variant,
        loads=int(is_load.sum()),
        stores=int(is_store.sum()),
        computes=int(is_compute.sum()),
        peak_red=int(red_count.max()) if T else 0,
        moves=T,
    )
