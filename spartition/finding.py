"""What the tool knows of one instance's optimal I/O, from one method, in one game: the one result record.

Every layer reports through a :class:`Finding`: the exact solver
(:meth:`spartition.exact.result.SolveResult.finding`), the lower-bound
methods (:meth:`spartition.partition.lower_bounds.Bound.finding`), the
published formulas (:meth:`spartition.study.formulas.FormulaValue.finding`),
the results store (:meth:`spartition.study.store.StoredResult.finding`), the
sandwich (its sides are findings) and the claims (:meth:`Interval.optimum
<spartition.study.claims.Interval.optimum>`). Each layer keeps its own record for
what only it has (a solver's parameters, a row's key); what the number
*means* -- an upper side, a lower side, final or cut by a time limit -- is
decided here and nowhere else.

A finding is one of three kinds:

* ``lower``: ``value`` is a proven lower bound on the optimum of ``game``
  (a theorem, a partition re-checked, a solver's proven objective bound);
  ``bound`` equals it.
* ``upper``: ``value`` is the I/O of a schedule of ``game`` that the
  checker replayed: an upper bound on the optimum. ``bound`` is None.
* ``exact``: an exact search's outcome: ``value`` the I/O of its best
  replayed schedule (None if it found none), ``bound`` its proven lower
  bound (None if the status proves none); the two meet when the status is
  ``OPTIMAL``.

``status`` is a :class:`~spartition.status.Status`; ``final`` says no longer
time limit can change the finding, ``time_limited`` that a search behind it
stopped at its limit (its value is still valid, but perhaps not the method's
last word).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from spartition.status import Status, is_proven

__all__ = ["EXACT", "KINDS", "LOWER", "SCHEDULE_STATUSES", "UPPER", "Finding"]

LOWER, UPPER, EXACT = "lower", "upper", "exact"
KINDS = (LOWER, UPPER, EXACT)

#: Statuses whose value is the I/O of a replayed schedule (a certified upper bound).
SCHEDULE_STATUSES = (Status.OPTIMAL, Status.OPTIMAL_GIVEN_BOUND, Status.OPTIMAL_WITHIN_CAP,
                     Status.OPTIMAL_WITHIN_HORIZON, Status.FEASIBLE, Status.VALID)
#: Statuses of an exact search that prove no bound on the optimum of the true problem.
_NO_BOUND = (Status.INVALID, Status.INFEASIBLE, Status.SKIPPED)


@dataclass(frozen=True, kw_only=True)
class Finding:
    """A value, the proven bound, the status and the evidence of one result in one game.

    Attributes
    ----------
    value : int, float or None
        The number reported (see the module's description of ``kind``).
    method : str
        What produced it: ``exact:<solver>``, ``bound:<method>``,
        ``formula:<name>``, ``algorithm:<name>``, ``trivial``, ...
    kind : {"lower", "upper", "exact"}
    evidence : str
        What certifies the value, in words: the theorem, the replay, the
        re-checked partition, the solver's status.
    bound : int, float or None
        The proven lower bound on the optimum; a ``lower`` finding's value
        when not given.
    bound_evidence : str
        What certifies the bound where it is not the value (an ``exact``
        finding's proven bound); ``evidence`` when empty.
    status : Status
        Default: ``CLOSED_FORM`` for a ``lower`` finding, ``VALID`` (a replayed
        schedule) for an ``upper`` one, ``UNKNOWN`` for an ``exact`` one.
    game : str
        The game the value is for (``oneshot``, ``recompute``, ``partial``;
        empty where the caller did not say).
    time_limited : bool
        A search behind the value stopped at its time limit.

    Examples
    --------
    >>> f = Finding(kind="exact", value=25, bound=17, status=Status.FEASIBLE, method="exact:cpsat", game="oneshot")
    >>> f.upper, f.lower, f.final
    (25, 17, False)
    >>> f.as_lower().value, f.as_upper().kind
    (17, 'upper')
    >>> Finding(value=12, method="trivial", status=Status.CLOSED_FORM).lower
    12
    """

    value: int | float | None
    method: str
    kind: str = LOWER
    evidence: str = ""
    bound: int | float | None = None
    bound_evidence: str = ""
    status: Status | str | None = None
    game: str = ""
    time_limited: bool = False

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        default = {LOWER: Status.CLOSED_FORM, UPPER: Status.VALID, EXACT: Status.UNKNOWN}[self.kind]
        object.__setattr__(self, "status", default if self.status is None else Status.parse(self.status))
        # a lower bound bounds by its value; a proven optimum is its own bound
        if self.bound is None and (self.kind == LOWER or self.kind == EXACT and self.status == Status.OPTIMAL):
            object.__setattr__(self, "bound", self.value)

    @property
    def certificate(self) -> str:
        """The evidence (the name the sandwich's sides have always had for it)."""
        return self.evidence

    @property
    def final(self) -> bool:
        """No longer time limit can change it: a proof, a closed form, a checked replay (:meth:`Status.is_proven`)."""
        return is_proven(self.status) and not self.time_limited

    @property
    def upper(self) -> int | float | None:
        """The I/O of a replayed schedule this finding holds (an upper bound on the optimum), else None."""
        if self.kind == LOWER or self.value is None or self.status not in SCHEDULE_STATUSES:
            return None
        return self.value

    @property
    def lower(self) -> int | float | None:
        """The proven lower bound on the optimum this finding holds, else None."""
        if self.kind == UPPER or self.kind == EXACT and self.status in _NO_BOUND:
            return None
        return self.bound

    def as_lower(self) -> Finding:
        """This finding's lower side as a ``lower`` finding (its bound as the value)."""
        if self.kind == LOWER:
            return self
        return replace(self, kind=LOWER, value=self.lower, bound=self.lower,
                       evidence=self.bound_evidence or self.evidence, bound_evidence="")

    def as_upper(self) -> Finding:
        """This finding's upper side as an ``upper`` finding (its schedule's I/O as the value)."""
        return self if self.kind == UPPER else replace(self, kind=UPPER, value=self.upper, bound=None, bound_evidence="")

    @classmethod
    def of_method(cls, method: str, *, status, value, bound, final: bool, ran_with_limit: bool, game: str = "") -> Finding:
        """The finding of a recorded result (a row of the results store), its kind from ``method``'s prefix.

        ``exact:<solver>`` is ``exact`` (the replayed schedule and the
        solver's proven bound), ``bound:<method>`` ``lower``,
        ``algorithm:<name>`` ``upper``. A lower bound is rounded up to an
        integer and an I/O down (both are integers; a record may hold
        floats). A bound not ``final`` is ``time_limited`` (its search
        stopped early; the value still bounds), and so is an exact result
        not final that ran with a limit.

        Examples
        --------
        >>> f = Finding.of_method("exact:cpsat", status="FEASIBLE", value=25.0, bound=17.0, final=False,
        ...                       ran_with_limit=True, game="oneshot")
        >>> f.kind, f.upper, f.lower, f.time_limited
        ('exact', 25, 17, True)
        """
        prefix = method.partition(":")[0]
        kind = {"exact": EXACT, "bound": LOWER, "algorithm": UPPER}.get(prefix)
        if kind is None:
            raise ValueError(f"method {method!r} names no kind of result (exact:, bound:, algorithm:)")
        status = Status.parse(status)
        value = None if value is None else (math.ceil(value - 1e-9) if kind == LOWER else int(value))
        common = {"kind": kind, "value": value, "method": method, "status": status, "game": game}
        if kind == LOWER:
            return cls(**common, evidence=f"{status}" + ("" if final else ", search stopped early (still a valid bound)"),
                       time_limited=not final and status != Status.SKIPPED)
        if kind == UPPER:
            return cls(**common, evidence="schedule replayed")
        return cls(**common, bound=None if bound is None else math.ceil(bound - 1e-9),
                   evidence=f"{status}, certificate schedule replayed", bound_evidence=f"{status}, the solver's proven bound",
                   time_limited=not final and status != Status.SKIPPED and ran_with_limit)

    def to_dict(self) -> dict:
        """JSON form: ``value``, ``method`` and ``certificate`` (the evidence) first, as the sandwich has printed them."""
        return {"value": self.value, "method": self.method, "certificate": self.evidence, "kind": self.kind,
                "bound": self.bound, "status": str(self.status), "game": self.game,
                "time_limited": self.time_limited}
