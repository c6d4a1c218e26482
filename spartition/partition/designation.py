"""Designated compute events of a schedule in the standard game: the values the outputs are really built from.

With recomputation a node may be computed many times, and Hong & Kung's
"each node in the segment of its last computation" does not tell which of
those computations a segment count may charge: a computation can be useless,
or feed one successor and not another. This module follows the values
instead. Every pebble holds the value of one *compute event* (a compute
move, identified by its step): a compute creates a new value, a load copies
the blue value and a store copies the red one. An input's pebbles hold the
input's value, which no event produces.

**Designation.** An event is *designated* if it is the event whose value is
blue on an output at the end of the schedule (the *final* event of that
output), or if it is the event whose value a designated event read from one
of its predecessors (its *operand* event). This is the least set closed
under "final" and "operand of".

**Designation lemma** (any valid schedule, either game). Let a schedule be
cut into segments of consecutive moves (:func:`designated_segments`: after
every ``S``-th load or store, as Hong & Kung's argument cuts it).

1. *Coverage.* Every non-input node with a path to an output has at least one
   designated event; a node whose successors each have exactly one
   designated event, read once each, has at most one per successor (so a
   node of an in-tree that ends in an output, e.g. a product of a sum tree
   whose root is an output, has exactly one).
2. *Crossing edges.* Let ``e`` (a compute of ``v``) be designated and read
   the value of event ``f`` (a compute of ``u``). If ``f`` lies in an earlier
   segment than ``e``, then ``u`` is red at the start of ``e``'s segment or
   loaded in it, and ``u`` is red at the end of ``f``'s segment or stored in
   it.
3. *Final events.* If the final event of an output ``o`` lies in segment
   ``sigma``, then ``o`` is stored in ``sigma`` or red at its end (and
   stored in it when ``sigma`` ends the schedule).

So a segment count may charge, for every designated edge that crosses a
segment boundary, a node of the set ``B`` of the segment's red pebbles at
its start and end, loads and stores; and it counts *distinct nodes* with a
designated event in the segment: each counted node has at least one (1), so
the segments' counts sum to at least the number of counted nodes.

**Proof.** Blue is permanent in this game (a node is stored at most once:
storing a node already in slow memory is illegal), so the blue value of a
non-input is the value its red pebble held at its one store, and a load of
``u`` gives the value of the event stored.

1. Induction along a path ``v = w_0 -> ... -> w_m = o`` to an output:
   ``o``'s final event is designated (a valid schedule ends with ``o`` blue,
   and ``o`` is not an input, so its blue value came from an event); if a
   designated event of ``w_(t+1)`` exists, it read ``w_t``'s red pebble,
   whose value is an event of ``w_t`` (``w_0 = v`` is not an input, nor is a
   ``w_t`` with a predecessor ``w_(t-1)``), designated. A
   node's designated events are the operands read by its successors'
   designated events (plus its final event if it is an output, which has no
   successor): at most one per designated event of each successor.
2. At ``e``'s step ``u`` is red holding ``f``'s value. Take the last move
   before ``e`` that made ``u`` red. It is not a compute in ``e``'s segment
   (a compute creates a new event, not ``f``, which is earlier). If it lies
   in ``e``'s segment it is a load; if it lies before, ``u`` stayed red from
   then to ``e``, across the segment's start. For the other end: if ``u`` is
   red with ``f``'s value at the end of ``f``'s segment, done. Else the
   pebble ``e`` reads was made red after that end, by a load (a compute would
   create another event), whose blue value is ``f``'s: ``u`` was stored
   holding ``f``'s value, at its one store. That store is after ``f``; if it
   is after ``f``'s segment, the red pebble it stores holds ``f``'s value and
   was made red before the store by ``f`` itself (no load can give ``f``'s
   value before ``u`` is blue), so ``u`` was red from ``f`` through the end of
   ``f``'s segment, a contradiction. So it is in ``f``'s segment.
3. The store that made ``o`` blue with the final value comes after the
   final event; the red pebble it stores held that value since the event
   (no load can give it earlier), so ``o`` is red at the end of ``sigma`` or
   the store is in ``sigma``; no move follows the last segment.

Functions: :func:`designate` (the events, their operands, the designated
ones), :func:`designated_segments` (per segment: the designated events and
nodes, the designated edges crossing a boundary, the red pebbles at its ends,
its loads and stores) and :func:`lemma_violations` (parts 1-3 checked on a
schedule, for the tests).

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981): the
game and the segment argument. Bilardi & De Stefani, "The I/O complexity of
Strassen's matrix multiplication with recomputation" (WADS 2017): lower bounds
in the game with recomputation.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay

__all__ = ["DesignatedSegment", "Designation", "INPUT_VALUE", "designate", "designated_segments", "lemma_violations"]

#: The value an input's pebbles hold: no compute event produced it.
INPUT_VALUE = -1


@dataclass(frozen=True)
class Designation:
    """The compute events of a schedule, the value each read, and which are designated.

    Attributes
    ----------
    steps : tuple of int
        ``steps[e]``: the move index of compute event ``e`` (events are
        numbered in schedule order).
    nodes : tuple of str
        ``nodes[e]``: the node event ``e`` computes.
    operands : tuple of tuple
        ``operands[e]``: ``(u, f)`` for each predecessor ``u`` of ``nodes[e]``:
        the event whose value ``e`` read from ``u`` (:data:`INPUT_VALUE` for
        an input).
    designated : tuple of bool
        Whether each event is designated.
    final : dict
        Each non-input output -> the event whose value is blue on it at the end.
    """

    steps: tuple
    nodes: tuple
    operands: tuple
    designated: tuple
    final: dict

    def events_of(self, node: str, designated_only: bool = True) -> list:
        """The events that compute ``node`` (designated ones only, by default), in schedule order."""
        return [e for e, v in enumerate(self.nodes) if v == node and (self.designated[e] or not designated_only)]

    def computed_twice(self) -> set:
        """The nodes computed more than once: the schedule really recomputes if this is not empty."""
        seen, twice = set(), set()
        for v in self.nodes:
            (twice if v in seen else seen).add(v)
        return twice


@dataclass(frozen=True)
class DesignatedSegment:
    """One segment of a schedule, with what the designation lemma speaks of.

    Attributes
    ----------
    index : int
        Position among the segments (0 first).
    first, last : bool
        Whether it starts / ends the schedule.
    moves : (int, int)
        Its move indices ``[begin, end)``.
    io : int
        Its loads plus stores.
    start, end : frozenset
        Nodes red at its start and at its end.
    loaded, stored : frozenset
        Nodes loaded, stored in it.
    events : tuple of int
        Designated events in it.
    nodes : frozenset
        The distinct nodes of those events (the quantity a segment count bounds).
    crossing_in : tuple
        ``(f, e, u)``: designated edges into the segment, ``e`` in it reading
        ``u`` with the value of ``f`` from an earlier segment.
    crossing_out : tuple
        ``(f, e, u)``: designated edges out of it, ``f`` in it, ``e`` later.
    finals : frozenset
        Outputs whose final event lies in it.
    """

    index: int
    first: bool
    last: bool
    moves: tuple
    io: int
    start: frozenset
    end: frozenset
    loaded: frozenset
    stored: frozenset
    events: tuple
    nodes: frozenset
    crossing_in: tuple
    crossing_out: tuple
    finals: frozenset

    @property
    def charged(self) -> frozenset:
        """``B``: red at the start, loaded, stored, red at the end (not at the end of the last segment)."""
        return self.start | self.loaded | self.stored | (frozenset() if self.last else self.end)


def designate(dag, schedule: Schedule) -> Designation:
    """The compute events of a valid schedule and the designated ones.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    schedule : Schedule
        Valid in its variant (replayed first).

    Returns
    -------
    Designation

    Raises
    ------
    IllegalMove
        If the schedule is not valid (from :func:`~spartition.core.game.replay`).

    Notes
    -----
    One pass over the moves keeps the value (event) of every red and blue
    pebble; a second walks back from the final events through the operands.
    Time ``O(T + sum of in-degrees of the computed nodes)``.

    Examples
    --------
    A chain ``c0 -> c1 -> c2`` in which ``c1`` is computed twice; only its
    second computation feeds the output:

    >>> from spartition.core.registry import build
    >>> chain = lambda n: build("chain", n=n)
    >>> s = Schedule(2, "recompute", [("load", "c0"), ("compute", "c1"), ("delete", "c1"), ("compute", "c1"),
    ...                               ("delete", "c0"), ("compute", "c2"), ("store", "c2")])
    >>> d = designate(chain(3), s)
    >>> d.nodes, d.designated, d.final
    (('c1', 'c1', 'c2'), (False, True, True), {'c2': 2})
    """
    replay(dag, schedule)
    c = as_compact(dag)
    preds = c.pred_lists()
    names, is_input = c.names, c.is_input
    red = [None] * c.n
    blue = [INPUT_VALUE if is_input[v] else None for v in range(c.n)]
    steps, nodes, operands = [], [], []
    for t, (move, name) in enumerate(schedule.moves):
        v = c.index[name]
        if move == "compute":
            operands.append(tuple((names[u], red[u]) for u in preds[v]))
            red[v] = len(steps)
            steps.append(t)
            nodes.append(name)
        elif move == "load":
            red[v] = blue[v]
        elif move == "store":
            blue[v] = red[v]
        else:
            red[v] = None
    final = {names[v]: blue[v] for v in range(c.n) if c.is_output[v] and not is_input[v]}
    designated = [False] * len(steps)
    stack = list(final.values())
    while stack:
        e = stack.pop()
        if e == INPUT_VALUE or designated[e]:
            continue
        designated[e] = True
        stack.extend(f for _, f in operands[e])
    return Designation(tuple(steps), tuple(nodes), tuple(operands), tuple(designated), final)


def designated_segments(designation: Designation, schedule: Schedule, S: int) -> list:
    """The segments of ``S`` loads and stores of a schedule, with their designated events and crossing edges.

    The schedule is cut after every ``S``-th I/O move; moves after the last
    I/O move join the last segment when they are only deletes (the segment
    argument's ``h = ceil(Q / S)``), and form a segment of their own when
    they compute something.

    Parameters
    ----------
    designation : Designation
        :func:`designate` of the same schedule.
    schedule : Schedule
    S : int
        I/O moves per segment (at least 1).

    Returns
    -------
    list of DesignatedSegment
    """
    if S < 1:
        raise ValueError(f"a segment needs S >= 1 I/O moves, got {S}")
    bounds, io, begin, computed_since = [], 0, 0, False
    for t, (move, _) in enumerate(schedule.moves):
        if move in ("load", "store"):
            io += 1
            if io % S == 0:
                bounds.append((begin, t + 1))
                begin, computed_since = t + 1, False
        elif move == "compute":
            computed_since = True
    T = len(schedule.moves)
    if begin < T or not bounds:
        if computed_since or io % S or not bounds:
            bounds.append((begin, T))
        else:
            bounds[-1] = (bounds[-1][0], T)
    seg_of_step = [0] * T
    for k, (a, b) in enumerate(bounds):
        for t in range(a, b):
            seg_of_step[t] = k
    seg_of_event = [seg_of_step[t] for t in designation.steps]
    event_at = {t: e for e, t in enumerate(designation.steps)}
    out, red = [], set()
    finals_in: dict = {}
    for o, e in designation.final.items():
        finals_in.setdefault(seg_of_event[e], set()).add(o)
    crossing: dict = {}
    for e, ops in enumerate(designation.operands):
        if not designation.designated[e]:
            continue
        for u, f in ops:
            if f != -1 and seg_of_event[f] != seg_of_event[e]:
                crossing.setdefault(("in", seg_of_event[e]), []).append((f, e, u))
                crossing.setdefault(("out", seg_of_event[f]), []).append((f, e, u))
    for k, (a, b) in enumerate(bounds):
        start, loaded, stored, events, n_io = frozenset(red), set(), set(), [], 0
        for t in range(a, b):
            move, v = schedule.moves[t]
            if move == "compute":
                red.add(v)
                e = event_at[t]
                if designation.designated[e]:
                    events.append(e)
            elif move == "delete":
                red.discard(v)
            else:
                n_io += 1
                (loaded if move == "load" else stored).add(v)
                if move == "load":
                    red.add(v)
        out.append(DesignatedSegment(
            k, k == 0, k == len(bounds) - 1, (a, b), n_io, start, frozenset(red), frozenset(loaded),
            frozenset(stored), tuple(events), frozenset(designation.nodes[e] for e in events),
            tuple(crossing.get(("in", k), ())), tuple(crossing.get(("out", k), ())),
            frozenset(finals_in.get(k, ()))))
    return out


def lemma_violations(dag, designation: Designation, segments) -> list:
    """Every way the schedule breaks the designation lemma (parts 1-3 of the module docstring); empty if none.

    Part 1 is checked as stated (at least one designated event per non-input
    node with a path to an output, at most one per designated event of its
    successors); parts 2 and 3 on every crossing edge and final event of
    ``segments`` (:func:`designated_segments` of the same schedule).

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> chain = lambda n: build("chain", n=n)
    >>> s = Schedule(2, "recompute", [("load", "c0"), ("compute", "c1"), ("delete", "c0"), ("compute", "c2"),
    ...                               ("store", "c2")])
    >>> d = designate(chain(3), s)
    >>> lemma_violations(chain(3), d, designated_segments(d, s, 1))
    []
    """
    c = as_compact(dag)
    found = []
    reaches = _reaches_output(c)
    count: dict = {}
    for e, v in enumerate(designation.nodes):
        if designation.designated[e]:
            count[v] = count.get(v, 0) + 1
    readers: dict = {}
    for e, ops in enumerate(designation.operands):
        if designation.designated[e]:
            for u, _ in ops:
                readers[u] = readers.get(u, 0) + 1
    for v in range(c.n):
        name = c.names[v]
        if c.is_input[v]:
            continue
        if reaches[v] and not count.get(name):
            found.append(f"part 1: {name!r} reaches an output and has no designated event")
        if count.get(name, 0) > readers.get(name, 0) + (name in designation.final):
            found.append(f"part 1: {name!r} has more designated events than designated reads")
    for seg in segments:
        for f, e, u in seg.crossing_in:
            if u not in seg.start and u not in seg.loaded:
                found.append(f"part 2: segment {seg.index}: {u!r} read by event {e} from event {f} of an earlier "
                             "segment is neither red at the start nor loaded")
        for f, e, u in seg.crossing_out:
            if u not in seg.stored and (seg.last or u not in seg.end):
                found.append(f"part 2: segment {seg.index}: {u!r} of event {f}, read later by event {e}, is "
                             "neither stored nor red at the end")
        for o in seg.finals:
            if o not in seg.stored and (seg.last or o not in seg.end):
                found.append(f"part 3: segment {seg.index}: output {o!r} computed here is neither stored nor red at "
                             "the end")
    return found


def _reaches_output(c) -> list:
    """For each node index: whether some path leads from it to an output (the node itself included)."""
    seen = [bool(x) for x in c.is_output]
    stack = [v for v in range(c.n) if seen[v]]
    preds = c.pred_lists()
    while stack:
        v = stack.pop()
        for u in preds[v]:
            if not seen[u]:
                seen[u] = True
                stack.append(u)
    return seen
