"""Exception types of spartition: every message names the node, step and rule."""

__all__ = [
    "SpartitionError",
    "InvalidDAG",
    "IllegalMove",
    "InfeasibleMemory",
    "InvalidSchedule",
    "InvalidPartition",
    "UnknownFamily",
]


class SpartitionError(Exception):
    """Base class of every error spartition raises on purpose."""


class InvalidDAG(SpartitionError):
    """A DAG file or graph is unreadable, cyclic, or inconsistent."""


class InvalidSchedule(SpartitionError):
    """A schedule file is malformed (not a rule violation: see IllegalMove)."""


class IllegalMove(InvalidSchedule):
    """A schedule breaks a rule of the pebble game at a given step.

    Attributes ``step``, ``move``, ``node`` and ``rule`` identify the violation;
    ``step`` is the 0-based index of the move (len(moves) for end-of-game checks).
    """

    def __init__(self, step, move, node, rule):
        self.step, self.move, self.node, self.rule = step, move, node, rule
        where = f"step {step}: {move} {node!r}" if move else f"end of schedule (after {step} moves)"
        super().__init__(f"{where}: {rule}")


class InfeasibleMemory(SpartitionError):
    """The fast memory M is too small for any pebbling of the DAG."""


class InvalidPartition(SpartitionError):
    """A partition certificate file is malformed."""


class UnknownFamily(SpartitionError):
    """No DAG family, algorithm or parameter of that name is registered."""
