"""A recorder of pebble-game moves for the schedule generators of published algorithms.

It tracks the red and blue sets so a generator can say what it needs
("make these red", "keep this in slow memory") and only the moves that the
rules require are emitted. It is a convenience for writing generators, not a
checker: every schedule it produces is verified by :func:`spartition.core.game.replay`.
"""

from __future__ import annotations

from spartition.authoring.sums import chain_name
from spartition.core.game import Schedule

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

    __slots__ = ("M", "variant", "moves", "red", "blue", "io", "peak", "pinned")

    def __init__(self, M: int, inputs, variant: str = "oneshot"):
        self.M, self.variant = M, variant
        self.moves: list = []
        self.red: set = set()
        self.blue: set = set(inputs)
        self.io = 0
        self.peak = 0
        #: nodes a generator keeps resident across code that would otherwise drop them (:meth:`delete`)
        self.pinned: set = set()

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
        """Delete ``v`` from fast memory if it is red and not :attr:`pinned`.

        Examples
        --------
        >>> r = MoveRecorder(2, ["a"]); r.load("a"); r.pinned.add("a"); r.delete("a"); r.red
        {'a'}
        """
        if v in self.red and v not in self.pinned:
            self.moves.append(("delete", v))
            self.red.discard(v)

    def evict(self, v: str) -> None:
        """Store ``v`` if it is not blue yet, then delete it (neither if it is :attr:`pinned`)."""
        if v in self.red and v not in self.pinned:
            self.store(v)
            self.delete(v)

    def load_all(self, nodes) -> None:
        """:meth:`load` each of ``nodes`` in order."""
        for v in nodes:
            self.load(v)

    def delete_all(self, nodes) -> None:
        """:meth:`delete` each of ``nodes`` in order."""
        for v in nodes:
            self.delete(v)

    def fold(self, new: str, old: str, *terms: str) -> None:
        """A chain-sum step: compute ``new`` from the running value ``old``, then delete ``old`` and ``terms``.

        Examples
        --------
        >>> r = MoveRecorder(3, ["a", "b"])
        >>> r.load("a"); r.load("b"); r.fold("s", "a", "b"); r.moves[2:]
        [('compute', 's'), ('delete', 'a'), ('delete', 'b')]
        """
        self.compute(new)
        self.delete(old)
        for v in terms:
            self.delete(v)

    def add_term(self, name: str, first: str, t: int, k: int, term: str, release=()) -> None:
        """Compute ``term``, the ``t``-th of the ``k`` terms of chain sum ``name``, and fold it into the sum.

        ``first`` names the first term; for ``t > 0`` the running value
        :func:`~spartition.authoring.sums.chain_name` ``(name, first, t, k)`` is computed
        and the previous one and ``term`` are deleted (:meth:`fold`). The nodes
        of ``release`` (an operand read for the last time by ``term``) are
        deleted between the product and the fold, so the fold needs one red
        pebble fewer.

        Examples
        --------
        >>> r = MoveRecorder(3, []); r.add_term("s", "p0", 0, 2, "p0"); r.add_term("s", "p0", 1, 2, "p1")
        >>> r.moves
        [('compute', 'p0'), ('compute', 'p1'), ('compute', 's'), ('delete', 'p0'), ('delete', 'p1')]
        """
        self.compute(term)
        for v in release:
            self.delete(v)
        if t:
            self.fold(chain_name(name, first, t, k), chain_name(name, first, t - 1, k), term)

    def accumulate(self, name: str, terms, positions=None) -> str:
        """:meth:`add_term` the ``terms`` (in chain order) at ``positions`` (all); return the sum's final node."""
        k = len(terms)
        for t in range(k) if positions is None else positions:
            self.add_term(name, terms[0], t, k, terms[t])
        return chain_name(name, terms[0], k - 1, k)

    def clear(self, keep=()) -> None:
        """Delete every red node except those in ``keep`` (nothing is stored)."""
        keep = set(keep)
        for v in sorted(self.red - keep):
            self.delete(v)

    def schedule(self, **meta) -> Schedule:
        """The recorded moves as a :class:`~spartition.core.game.Schedule`."""
        return Schedule(self.M, self.variant, tuple(self.moves), meta=meta)
