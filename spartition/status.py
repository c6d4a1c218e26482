"""The statuses of every result spartition produces, in one enum.

A :class:`Status` is a :class:`str` (an :class:`enum.StrEnum`), so
``Status.OPTIMAL == "OPTIMAL"`` holds and it reads and writes as its plain
name in JSON, SQLite rows and tables: a row written before the enum existed
loads as the same status (:meth:`Status.parse`).

What each status claims (``docs/definitions.md`` section 6):

* exact optima (:func:`spartition.exact.solve.solve_io`): ``OPTIMAL`` (for
  the true problem), ``OPTIMAL_GIVEN_BOUND`` (if a supplied bound holds),
  ``OPTIMAL_WITHIN_CAP`` (within a model's cap), ``FEASIBLE`` (a schedule,
  with a proven bound below it), ``INFEASIBLE`` (M below the smallest
  feasible M), ``UNKNOWN`` (nothing found);
* CP-SAT's own verdict on a model: ``OPTIMAL``, ``FEASIBLE``,
  ``INFEASIBLE``, ``UNKNOWN``, ``MODEL_INVALID``;
* certificates: ``OPTIMAL_WITHIN_HORIZON`` (a recompute optimum among
  schedules of a bounded length, below the proven horizon ``Q + sum pi(v)``
  of :func:`spartition.certify.encoding.proven_horizon`, which gives
  ``OPTIMAL``);
* class capacities solved on a relaxation: ``RELAXED`` (the relaxation's
  optimum, a proven upper bound on U) and ``RELAXED_<status>`` when its
  search stopped early (:meth:`Status.relaxed`);
* stored rows of studies: ``VALID`` / ``INVALID`` (a replayed schedule),
  ``NOT_APPLICABLE`` (an algorithm outside its parameters), ``CLOSED_FORM``
  (the trivial bound), ``SKIPPED``, ``ERROR``;
* the MaxSAT child process (:mod:`spartition.exact.maxsat`): ``TIME_LIMIT``,
  ``BOUND_MET``, ``STOPPED``, ``INTERRUPTED``, ``FAILED`` besides ``OPTIMAL`` and ``INFEASIBLE``.
"""

from __future__ import annotations

from enum import StrEnum

__all__ = ["Status", "PROVEN_STATUSES", "is_proven"]


class Status(StrEnum):
    """The status of a result; a ``str`` equal to its name.

    Examples
    --------
    >>> Status.OPTIMAL == "OPTIMAL", f"{Status.FEASIBLE}"
    (True, 'FEASIBLE')
    >>> Status.OPTIMAL.is_proven(), Status.FEASIBLE.is_proven()
    (True, False)
    >>> Status.parse("OPTIMAL") is Status.OPTIMAL, Status.FEASIBLE.relaxed()
    (True, 'RELAXED_FEASIBLE')
    """

    OPTIMAL = "OPTIMAL"
    OPTIMAL_GIVEN_BOUND = "OPTIMAL_GIVEN_BOUND"
    OPTIMAL_WITHIN_CAP = "OPTIMAL_WITHIN_CAP"
    OPTIMAL_WITHIN_HORIZON = "OPTIMAL_WITHIN_HORIZON"
    FEASIBLE = "FEASIBLE"
    INFEASIBLE = "INFEASIBLE"
    UNKNOWN = "UNKNOWN"
    MODEL_INVALID = "MODEL_INVALID"
    RELAXED = "RELAXED"
    RELAXED_FEASIBLE = "RELAXED_FEASIBLE"
    RELAXED_INFEASIBLE = "RELAXED_INFEASIBLE"
    RELAXED_UNKNOWN = "RELAXED_UNKNOWN"
    RELAXED_MODEL_INVALID = "RELAXED_MODEL_INVALID"
    VALID = "VALID"
    INVALID = "INVALID"
    NOT_APPLICABLE = "NOT_APPLICABLE"
    CLOSED_FORM = "CLOSED_FORM"
    SKIPPED = "SKIPPED"
    ERROR = "ERROR"
    TIME_LIMIT = "TIME_LIMIT"
    BOUND_MET = "BOUND_MET"
    STOPPED = "STOPPED"
    INTERRUPTED = "INTERRUPTED"
    FAILED = "FAILED"

    def __repr__(self) -> str:
        # the repr of the plain name: messages, doctests and printed records read as before the enum
        return repr(self.value)

    def is_proven(self) -> bool:
        """Whether a result with this status is final: a proof, a closed form, or a checked replay.

        A final row of the results store answers every request, whatever its
        time limit; nothing else is final (an ``OPTIMAL_GIVEN_BOUND`` rests on
        an unchecked bound, an ``OPTIMAL_WITHIN_CAP`` on a model's cap).
        """
        return self in PROVEN_STATUSES

    def is_relaxed(self) -> bool:
        """Whether this is the status of a relaxation's search (``RELAXED`` or ``RELAXED_<status>``)."""
        return self.value.startswith("RELAXED")

    def relaxed(self) -> Status:
        """The status of the same search run on a relaxation: ``RELAXED`` for ``OPTIMAL``, else ``RELAXED_<status>``."""
        return Status.RELAXED if self is Status.OPTIMAL else Status(f"RELAXED_{self.value}")

    @classmethod
    def parse(cls, value) -> Status | str:
        """``value`` (a stored or serialised status) as a :class:`Status`; a name it does not know is kept as given.

        Rows written by older versions of the store hold plain names: each
        loads as its member, and an unknown one (a status of a later version)
        stays a string that is never proven.
        """
        try:
            return cls(value)
        except ValueError:
            return value


#: The statuses a result may be final (``proven``) with.
PROVEN_STATUSES = frozenset({Status.OPTIMAL, Status.INFEASIBLE, Status.VALID, Status.NOT_APPLICABLE,
                             Status.CLOSED_FORM})


def is_proven(status) -> bool:
    """:meth:`Status.is_proven` of a status or of a stored name (an unknown name is not proven).

    Examples
    --------
    >>> is_proven("OPTIMAL"), is_proven("SOMETHING_NEW")
    (True, False)
    """
    return Status.parse(status) in PROVEN_STATUSES

