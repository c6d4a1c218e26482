"""The result of an exact I/O run and how its status is decided.

:class:`SolveResult` is what :func:`spartition.exact.solve.solve_io` returns.
A search (CP-SAT's branch and bound, RC2, both side by side, the step
search) reports a :class:`SearchOutcome`; :meth:`Outcome.classify` is the one
place that turns it, with the tool's own bounds, into the honest status of
:data:`STATUSES`, as described in :mod:`spartition.exact.solve`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from spartition.core.game import Schedule
from spartition.cpsat import ORTOOLS_VERSION
from spartition.errors import SpartitionError
from spartition.finding import EXACT, Finding
from spartition.status import Status

__all__ = ["EXACT_SEARCHES", "STATUSES", "Outcome", "SearchOutcome", "SolveResult"]

#: Result ``formulation`` names whose proof holds for the true problem with no model cap:
#: ``none`` (no model ran; a hint met a bound) and ``step-search`` (:mod:`spartition.exact.steps`).
EXACT_SEARCHES = ("none", "step-search")

#: The statuses of a :class:`SolveResult`.
STATUSES = (Status.OPTIMAL, Status.OPTIMAL_GIVEN_BOUND, Status.OPTIMAL_WITHIN_CAP, Status.FEASIBLE, Status.INFEASIBLE,
            Status.UNKNOWN)


@dataclass(frozen=True)
class SolveResult:
    """The outcome of :func:`~spartition.exact.solve.solve_io`, with everything needed to trace and re-run it.

    Attributes
    ----------
    status : Status
        One of :data:`STATUSES` (a ``str``: ``status == "OPTIMAL"`` holds).
    io : int or None
        I/O of ``schedule`` (the best schedule found), checked by replay.
    lower_bound : int or None
        A proven lower bound on the optimum of the true problem (the variant
        without any cap); equals ``io`` when ``status == "OPTIMAL"``.
    schedule : Schedule or None
    variant, M : str, int
    formulation : str
        ``order``, ``events`` or ``baseline``; ``step-search`` for the exact
        recompute state search; ``none`` when no solver ran.
    model_bound : int or None
        The solver's proven bound on its model; for recompute that is a
        bound only within ``cap``.
    cap : dict
        Recompute: the cap (``{"events": E}`` or ``{"horizon": T}``);
        oneshot: the horizon/event count used, with ``"harmless": True``.
    assumptions : tuple of str
        What the model's exactness rests on, in words.
    solver_status : str
        CP-SAT's own status name (``SKIPPED`` when the hint met the bound);
        with the MaxSAT engine the run's status
        (:class:`spartition.exact.maxsat.MaxSATOutcome`), with the portfolio
        both (``"cp-sat FEASIBLE; maxsat OPTIMAL"``).
    schedule_source : str
        ``solver`` (CP-SAT), ``maxsat`` (RC2's optimum) or the hint's name (``greedy``, an algorithm name, ``user``):
        the method behind ``io``, the upper side of the gap.
    bound_source : str
        The method behind ``lower_bound``, the lower side: ``trivial``
        (inputs plus outputs), ``step-search`` (the least open bound of
        :mod:`spartition.exact.steps`), or the formulation whose search
        proved it (its bound, or its closed search): ``order`` when CP-SAT
        proved it on the order model, ``maxsat`` when RC2 did
        (:mod:`spartition.exact.maxsat`).
    hint_io : int or None
        I/O of the hint given to the solver.
    symmetry : dict
        Summary of the symmetry breaking used.
    wall_s : float
        Wall-clock seconds of the whole call.
    cpu_s : float
        Process CPU seconds of the whole call (all threads; the fair measure on a shared machine).
    ortools_version : str
    parameters : dict
        Every CP-SAT parameter (protobuf JSON form) and the call's options.
    message : str
        Human-readable explanation (e.g. why M is infeasible).
    interrupted : bool
        Ctrl-C stopped the search; the status is what was proven by then.
    """

    status: str
    io: int | None
    lower_bound: int | None
    schedule: Schedule | None
    variant: str
    M: int
    formulation: str
    model_bound: int | None = None
    cap: dict = field(default_factory=dict)
    assumptions: tuple = ()
    solver_status: str = ""
    schedule_source: str = ""
    bound_source: str = ""
    hint_io: int | None = None
    symmetry: dict = field(default_factory=dict)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    ortools_version: str = ORTOOLS_VERSION
    parameters: dict = field(default_factory=dict)
    message: str = ""
    dag_hash: str = ""
    interrupted: bool = False

    def to_dict(self, with_schedule: bool = False) -> dict:
        """Stable JSON form (``status``, ``io``, ``lower_bound``, ``variant``, ``M``, ``wall_s`` first).

        Parameters
        ----------
        with_schedule : bool
            Add the best schedule's own JSON form under ``schedule``.

        Returns
        -------
        dict
        """
        d = {
            "status": self.status,
            "io": self.io,
            "lower_bound": self.lower_bound,
            "variant": self.variant,
            "M": self.M,
            "wall_s": round(self.wall_s, 4),
            "cpu_s": round(self.cpu_s, 4),
            "formulation": self.formulation,
            "model_bound": self.model_bound,
            "cap": self.cap,
            "assumptions": list(self.assumptions),
            "solver_status": self.solver_status,
            "schedule_source": self.schedule_source,
            "bound_source": self.bound_source,
            "hint_io": self.hint_io,
            "symmetry": self.symmetry,
            "ortools_version": self.ortools_version,
            "parameters": self.parameters,
            "message": self.message,
            "dag_hash": self.dag_hash,
            "interrupted": self.interrupted,
        }
        if with_schedule and self.schedule is not None:
            d["schedule"] = self.schedule.to_dict()
        return d

    def finding(self, method: str = "exact:solve") -> Finding:
        """This result as a :class:`~spartition.finding.Finding` of kind ``exact``, named ``method``.

        Its value is the replayed schedule's I/O, its bound the proven lower
        bound; a search stopped by its time limit or by Ctrl-C is ``time_limited``.

        Examples
        --------
        >>> from spartition.families.classic.dag import chain
        >>> from spartition.exact.solve import solve_io
        >>> f = solve_io(chain(3), 2, "oneshot").finding()
        >>> f.upper, f.lower, f.final, f.game
        (2, 2, True, 'oneshot')
        """
        cut = ", stopped by Ctrl-C" if self.interrupted else ""
        limited = self.interrupted or self.status in (Status.FEASIBLE, Status.UNKNOWN)
        return Finding(kind=EXACT, value=self.io, bound=self.lower_bound, status=self.status, method=method,
                       game=self.variant, time_limited=limited,
                       evidence=f"{self.status}{cut}, schedule replayed (from {self.schedule_source})",
                       bound_evidence=f"{self.status}{cut}, the solver's proven bound (from {self.bound_source})")


@dataclass(frozen=True)
class SearchOutcome:
    """What one search of :func:`~spartition.exact.solve.solve_io` found and proved, before its status is decided.

    Attributes
    ----------
    schedule : Schedule or None
        The search's best schedule, replayed (None: it found none).
    io : int or None
        Its replayed I/O.
    source : str
        The method behind it (``solver``, ``maxsat``, ``step-search``, or a hint's name).
    model_bound : int or None
        The bound the search proved on its model.
    closed : bool
        The search proved that nothing cheaper than ``io`` exists in its
        model by itself (RC2's optimum, the step search done, a hint that
        meets the bound); a bound that reaches ``io`` closes it too
        (:meth:`settles`).
    cap, assumptions
        The model's cap and what its exactness rests on.
    solver_status : str
        The engines' own status names.
    parameters : dict
        Every parameter of the run, as the result records them.
    interrupted : bool
        Ctrl-C stopped it.
    used_supplied : bool
        The search read the caller's lower bound (False for the step search and RC2: their proofs stand without it).
    bound_by : str or None
        The engine behind ``model_bound`` when it is not the formulation's CP-SAT search (``maxsat``).
    """

    schedule: Schedule | None = None
    io: int | None = None
    source: str = ""
    model_bound: int | None = None
    closed: bool = False
    cap: dict = field(default_factory=dict)
    assumptions: tuple = ()
    solver_status: str = ""
    parameters: dict = field(default_factory=dict)
    interrupted: bool = False
    used_supplied: bool = True
    bound_by: str | None = None

    def settles(self, io: int | None = None) -> bool:
        """Whether the search proved ``io`` (default its own) optimal in its model: closed, or its bound reaches it."""
        io = self.io if io is None else io
        return self.closed or (self.model_bound is not None and io is not None and self.model_bound >= io)


@dataclass
class Outcome:
    """What one :func:`~spartition.exact.solve.solve_io` call knows before and after its search, to build its result.

    Attributes
    ----------
    start, cpu_start : float
        ``time.perf_counter()`` and ``time.process_time()`` at the call's start.
    base : dict
        ``variant``, ``M`` and ``dag_hash`` of every result of the call.
    options : dict
        The call's options, as recorded.
    proven : int
        The lower bound the tool proved itself before any search (the trivial bound).
    supplied : int or None
        The caller's unchecked lower bound.
    hint_io : int or None
        I/O of the best hint, once known.
    proven_by : str
        The method behind ``proven`` (``trivial`` until a search lifts it).
    """

    start: float
    cpu_start: float
    base: dict
    options: dict
    proven: int
    supplied: int | None
    hint_io: int | None = None
    proven_by: str = "trivial"

    def result(self, **fields) -> SolveResult:
        """A :class:`SolveResult` of this call, timed now."""
        return SolveResult(wall_s=time.perf_counter() - self.start, cpu_s=time.process_time() - self.cpu_start,
                           hint_io=fields.pop("hint_io", self.hint_io), **self.base, **fields)

    def classify(self, found: SearchOutcome, formulation: str, exact: bool, *, symmetry=None,
                 note: str = "") -> SolveResult:
        """The honest status of the best schedule ``found``: the one place a status of :func:`solve_io` is decided.

        ``exact`` says the search's proof holds for the true problem: no
        model ran or the step search did (:data:`EXACT_SEARCHES`), or the
        formulation is exact for the variant within its cap (its record's
        ``proves``); otherwise a closed search is ``OPTIMAL_WITHIN_CAP``. A
        proof that used a supplied bound above the tool's own is
        ``OPTIMAL_GIVEN_BOUND``: the search excluded everything below it.
        ``found.used_supplied`` False says the search never read the
        supplied bound (the step search, the MaxSAT engine), so its proof
        stands without it. ``found.bound_by`` names the engine behind
        ``model_bound`` in ``bound_source`` (default: the formulation).
        """
        io, model_bound, bound_by = found.io, found.model_bound, found.bound_by
        given = found.used_supplied and self.supplied is not None and self.supplied > self.proven
        lb, lb_source = self.proven, self.proven_by
        if exact and model_bound is not None and not given and model_bound > lb:
            lb, lb_source = model_bound, bound_by or formulation
        if io is not None and lb > io:
            raise SpartitionError(f"proven bound {lb} exceeds the I/O {io} of a valid schedule (bug)")
        proof = found.settles()
        if io is None:
            status = Status.UNKNOWN
        elif io <= lb:
            status = Status.OPTIMAL
        elif proof and not exact:
            status = Status.OPTIMAL_WITHIN_CAP
        elif proof:
            status = Status.OPTIMAL_GIVEN_BOUND if given else Status.OPTIMAL
        else:
            status = Status.FEASIBLE
        if status == Status.OPTIMAL and lb < io:
            lb, lb_source = io, bound_by or formulation  # the search closed: nothing cheaper exists
        message = {
            Status.OPTIMAL: "optimal for the true problem",
            Status.OPTIMAL_GIVEN_BOUND: f"optimal if the supplied lower bound {self.supplied} holds; "
                                        f"proven lower bound only {lb}",
            Status.OPTIMAL_WITHIN_CAP: f"optimal among schedules within the cap {found.cap}; "
                                       f"proven lower bound only {lb}",
            Status.FEASIBLE: f"best I/O {io}, proven lower bound {lb}",
            Status.UNKNOWN: "no schedule was found",
        }[status]
        if note:
            message = f"{message} ({note})"
        if found.interrupted:
            message += "; stopped by Ctrl-C"
        assumptions = tuple(found.assumptions)
        if given:
            assumptions += (f"the supplied lower bound {self.supplied} (not checked)",)
        return self.result(status=status, io=io, lower_bound=lb, schedule=found.schedule, formulation=formulation,
                           model_bound=model_bound, cap=found.cap or {}, assumptions=assumptions,
                           solver_status=found.solver_status, schedule_source=found.source, bound_source=lb_source,
                           symmetry=symmetry or {}, parameters=found.parameters or {}, message=message,
                           interrupted=found.interrupted)
