"""Exception types of spartition: every message names the node, step and rule."""

__all__ = [
    "SpartitionError",
    "InvalidDAG",
    "IllegalMove",
    "InfeasibleMemory",
    "InvalidSchedule",
    "InvalidPartition",
    "UnknownFamily",
    "ParameterError",
    "ModelTooLarge",
    "ContradictoryBound",
    "UsageError",
    "DAGTooLarge",
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


class InvalidClaim(SpartitionError):
    """A user's claim cannot be evaluated: its expression or regime test raised (the message names the claim)."""


class UnknownFamily(SpartitionError):
    """No DAG family, algorithm or parameter of that name is registered."""


class ParameterError(SpartitionError, ValueError):
    """A parameter has a bad value: a family parameter of the wrong type; a seed, time limit, worker count or variant
    out of range.

    A ``ValueError`` too, so that code catching the built-in error for a bad
    value (as Python's own functions raise it) still catches this one.
    """


class ModelTooLarge(SpartitionError):
    """A model's estimated size does not fit the time or memory budget.

    Raised before the model is built; the message states the estimate and
    suggests a cheaper method or a smaller instance. ``estimate`` holds the
    estimated number of variables (or nodes) and ``limit`` the budget.
    """

    def __init__(self, message, estimate=None, limit=None):
        self.estimate, self.limit = estimate, limit
        super().__init__(message)


class ContradictoryBound(SpartitionError):
    """A caller-supplied bound contradicts a certificate the tool can exhibit.

    For example a lower bound on the I/O above the I/O of a replayed schedule,
    or a lower bound on P(S) above the classes of a checked partition.
    """


class UsageError(SpartitionError):
    """A command-line flag or argument is out of range, or the command is misused."""


class DAGTooLarge(SpartitionError):
    """A family DAG would exceed the node limit; the message states its computed size."""


class TimeLimitReached(SpartitionError):
    """A time limit ran out before an all-or-nothing result (a certificate) was reached.

    Nothing partial is returned or written; the message says where the time
    ran out and what was found by then (a replayed schedule is no certificate).
    """
