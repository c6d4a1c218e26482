"""A recorder of pebble-game moves for the schedule generators of published algorithms.

It tracks the red and blue sets so a generator can say what it needs
("make these red", "keep this in slow memory") and only the moves that the
rules require are emitted. It is a convenience for writing generators, not a
checker: every schedule it produces is verified by :func:`spartition.game.replay`.
"""

from __future__ import annotations

from spartition.game import Schedule

__all__ = ["MoveRecorder"]


class MoveRecorder:
    """Accumulates moves and the red/blue state they produce.

    Parameters
    ----------
    M : int
        Fast memory size (recorded in the schedule; exceeding it is not
        checked here but by replay, except through ``peak``).
    inputs : iterable of str
        Nodes blue at the start.
    variant : str
        Variant written into the schedule.

    Examples
    --------
    >>> r = MoveRecorder(2, ["c0"])
    >>> r.load("c0"); r.compute("c1"); r.delete("c0"); r.compute("c2"); r.store("c2")
    >>> r.io, r.peak, len(r.moves)
    (2, 2, 5)
    """

    __slots__ = ("M", "variant", "moves", "red", "blue", "io", "peak")

    def __init__(self, M: int, inputs, variant: str = "oneshot"):
        self.M, self.variant = M, variant
        self.moves: list = []
        self.red: set = set()
        self.blue: set = set(inputs)
        self.io = 0
        self.peak = 0

    def load(self, v: str) -> None:
        """Load ``v`` (which must be blue) unless it is already red."""
        if v not in self.red:
            self.moves.append(("load", v))
            self.red.add(v)
            self.io += 1
            if len(self.red) > self.peak:
                self.peak = len(self.red)

    def compute(self, v: str) -> None:
        """Compute ``v`` (its predecessors must be red)."""
        self.moves.append(("compute", v))
        self.red.add(v)
        if len(self.red) > self.peak:
            self.peak = len(self.red)

    def store(self, v: str) -> None:
        """Store ``v`` (red) unless it is already blue."""
        if v not in self.blue:
            self.moves.append(("store", v))
            self.blue.add(v)
            self.io += 1

    def delete(self, v: str) -> None:
        """Delete ``v`` from fast memory if it is red."""
        if v in self.red:
            self.moves.append(("delete", v))
            self.red.discard(v)

    def evict(self, v: str) -> None:
        """Store ``v`` if it is not blue yet, then delete it."""
        if v in self.red:
            self.store(v)
            self.delete(v)

    def clear(self, keep=()) -> None:
        """Delete every red node except those in ``keep`` (nothing is stored)."""
        keep = set(keep)
        for v in sorted(self.red - keep):
            self.delete(v)

    def schedule(self, **meta) -> Schedule:
        """The recorded moves as a :class:`~spartition.game.Schedule`."""
        return Schedule(self.M, self.variant, tuple(self.moves), meta=meta)
