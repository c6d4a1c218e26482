"""The order model as unweighted MaxSAT, solved by PySAT's core-guided RC2: a second proof engine.

The clauses are those of :func:`spartition.exact.formulations.order_cnf.order_cnf`,
the compute-order model of :mod:`spartition.exact.formulations.order`
written clause for clause, with one soft unit clause per load or store
literal; a MaxSAT optimum is the order model's optimum and a model decodes
(:func:`~spartition.exact.formulations.order_cnf.decode_order_cnf`) into a
schedule that is replayed before anything trusts it.

:func:`solve_order_maxsat` runs RC2 (``adapt``, ``exhaust``, ``minz``,
``trim=5``, on CaDiCaL 1.9.5 where the installed PySAT has it, else
Glucose 4) in a child process, so that a time limit or Ctrl-C ends it at
once; :class:`MaxSATRun` is the same run without blocking, as the engines
of :func:`spartition.exact.solve.solve_io` (:mod:`spartition.exact.portfolio`)
use it.

Why the bound of an unfinished run is proven
--------------------------------------------
RC2 implements OLL with soft cardinality constraints (Morgado et al.
2014): it asks the SAT oracle for a model of the hard clauses with every
soft clause assumed; an UNSAT answer yields a core,
a set of soft literals (or totalizer outputs) not all satisfiable together,
so every model of the hard clauses falsifies at least one of them. RC2 adds
the core's weight (here 1) to ``cost`` and replaces the core by a totalizer
over its relaxation literals that allows one falsified literal for free.
The invariant, for every assignment ``X`` of the hard clauses (and the
totalizers at their meaning): ``original_cost(X) >= cost + current_cost(X)``
with ``current_cost(X) >= 0``, so ``cost`` is a lower bound on the optimum
after every processed core. The variants used keep it: core exhaustion
(``exhaust``) raises a totalizer's bound, and ``cost`` with it, only after
another UNSAT answer; core trimming and minimisation (``trim``, ``minz``)
only shrink a core, which still is one (a minimisation call cut short by its
conflict budget keeps the literal); ``adapt`` finds at-most-one groups of
``k`` soft literals among the hard clauses, of which ``k - 1`` are falsified
in every model, and adds ``k - 1``. With unit weights there is no
stratification, so no hardening from an upper bound ever cuts a model.
Since the model's optimum is the true oneshot optimum (the reductions keep
a representative of every optimum, and every model decodes to a schedule of
no greater cost), a bound on the model is a bound on the true problem. The
bound read here is ``cost`` after a core is fully processed, reported by the
child; the child is killed, never interrupted (an interrupted oracle call
answers None, which RC2's core exhaustion would read as UNSAT).

References
----------
A. Morgado, C. Dodaro and J. Marques-Silva, "Core-guided MaxSAT with soft
cardinality constraints", CP 2014. A. Ignatiev, A. Morgado and
J. Marques-Silva, "RC2: an efficient MaxSAT solver", JSAT 11, 2019.
"""

from __future__ import annotations

import signal
import time
from dataclasses import dataclass
from types import MappingProxyType

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule, replay
from spartition.errors import SpartitionError
from spartition.exact.child import ChildSearch, child_connections
from spartition.exact.formulations.order_cnf import OrderCNF, decode_order_cnf, order_cnf
from spartition.status import Status

__all__ = [
    "RC2_SETTINGS",
    "MaxSATOutcome",
    "add_cube",
    "linear_solve",
    "MaxSATRun",
    "maxsat_available",
    "rc2_solve",
    "rc2_solver_name",
    "solve_order_maxsat",
]

#: RC2's settings (its defaults are slow on these instances, by its author's word): at-most-one
#: detection, core exhaustion, core minimisation, and up to 5 rounds of core trimming.
RC2_SETTINGS = MappingProxyType({"adapt": True, "exhaust": True, "minz": True, "trim": 5})


def maxsat_available() -> bool:
    """Whether PySAT (the ``certify`` extra, package ``python-sat``) is installed."""
    try:
        import pysat.examples.rc2  # noqa: F401
    except ImportError:
        return False
    return True


def rc2_solver_name() -> str:
    """The SAT oracle RC2 runs on: ``cd19`` (CaDiCaL 1.9.5) where PySAT has it, else ``g4`` (Glucose 4)."""
    from pysat.solvers import SolverNames

    return "cd19" if "cd19" in getattr(SolverNames, "cadical195", ()) else "g4"


# --------------------------------------------------------------------------- running RC2


def rc2_solve(oc: OrderCNF, on_bound=None) -> tuple:
    """Solve ``oc`` with RC2 in this process, to the end (no time limit: :class:`MaxSATRun` has one).

    Parameters
    ----------
    oc : OrderCNF
    on_bound : callable, optional
        Called with each proven lower bound on the objective (offset
        included), after every fully processed core or at-most-one group.

    Returns
    -------
    (int, list of int) or (None, None)
        The optimum of the objective and a model reaching it, or ``(None,
        None)`` when the hard clauses have no model.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> rc2_solve(order_cnf(compact(fft(1)), 3))[0]
    4
    """
    from pysat.examples.rc2 import RC2
    from pysat.formula import WCNF

    wcnf = WCNF()
    wcnf.nv = oc.num_vars
    wcnf.hard = oc.hard
    wcnf.soft = [[x] for x in oc.soft]
    wcnf.wght = [1] * len(oc.soft)
    wcnf.topw = len(oc.soft) + 1

    class Reporting(RC2):
        """RC2 that reports its cost after each fully processed core (a proven bound, module docstring)."""

        def process_core(self):
            super().process_core()
            if on_bound is not None:
                on_bound(self.cost + oc.offset)

        def process_am1(self, am1):
            super().process_am1(am1)
            if on_bound is not None:
                on_bound(self.cost + oc.offset)

    with Reporting(wcnf, solver=rc2_solver_name(), **RC2_SETTINGS) as rc2:
        model = rc2.compute()
        if model is None:
            return None, None
        return rc2.cost + oc.offset, model


def linear_solve(oc: OrderCNF, upper: int | None = None, on_model=None) -> tuple:
    """Solve ``oc`` by linear search from above (SAT-UNSAT): each SAT call asks for a cheaper model.

    The clauses of ``oc`` get one incremental totalizer over the load and
    store literals (Bailleux and Boufkhad 2003; PySAT's ``ITotalizer``); a
    call with the totalizer's output ``> k`` assumed false asks for a model
    of cost at most ``offset + k``. Starting from ``upper`` (the cost of a
    schedule known elsewhere) it asks for ``upper - 1``, then one below each
    model it gets, until a call answers UNSAT.

    Why the answer is the optimum: the last UNSAT call says that no model of
    the hard clauses costs less than the current ``U``, and a schedule of
    cost ``U`` exists (the last model, or the one behind ``upper``). The
    model's optimum is the oneshot optimum (module docstring), so ``U`` is.
    No bound is proven before that last call: an unfinished run proves
    nothing, its models are schedules only. A budget below ``offset`` (the
    forced output stores) is refuted without a call.

    Parameters
    ----------
    oc : OrderCNF
    upper : int, optional
        The I/O of a replayed schedule of the same DAG and ``M``; without it
        the first call has no budget.
    on_model : callable, optional
        Called with ``(cost, model)`` for every model found, each cheaper
        than the last. It may return the replayed I/O of the model's decoded
        schedule: a model that loads or stores more than its schedule needs
        costs more than that schedule, and the next call then asks for less
        than the schedule.

    Returns
    -------
    (int, list of int or None) or (None, None)
        The optimum and the last model found (None when none beat
        ``upper``: the schedule behind ``upper`` is optimal), or ``(None,
        None)`` when the hard clauses have no model.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> linear_solve(order_cnf(compact(fft(1)), 3))[0]
    4
    >>> linear_solve(order_cnf(compact(fft(1)), 3), upper=4)    # nothing cheaper than 4: optimal, no model
    (4, None)
    """
    from pysat.card import ITotalizer
    from pysat.solvers import Solver

    lits = [-x for x in oc.soft]  # true when the load or store is made
    top = len(lits) + oc.offset + 1  # above every model's cost: the first call has no budget
    U = top if upper is None else min(upper, top)
    best = None
    if U - 1 < oc.offset:
        return U, None
    tot = ITotalizer(lits, ubound=min(U - 1 - oc.offset, len(lits)), top_id=oc.num_vars)
    with Solver(name=rc2_solver_name(), bootstrap_with=oc.hard + tot.cnf.clauses) as sat:
        while U - 1 >= oc.offset:
            k = U - 1 - oc.offset
            if not sat.solve(assumptions=[-tot.rhs[k]] if k < len(lits) else []):
                break
            model = sat.get_model()
            value = set(model)
            U = oc.offset + sum(1 for x in oc.soft if x not in value)
            best = model
            replayed = None if on_model is None else on_model(U, model)
            if replayed is not None and replayed < U:
                U = replayed
    if U == top:
        return None, None
    return U, best


def _serve(fd_in: int, fd_out: int) -> None:
    """The child process: read the job, build, solve, report each proven bound, then the optimum.

    Run as ``python -m spartition.exact.maxsat FD_IN FD_OUT`` by :class:`MaxSATRun`
    (:class:`spartition.exact.child.ChildSearch`).
    """
    import resource

    (c, M, pairs, dominance, cpu_limit, cube, method, upper), conn = child_connections(fd_in, fd_out)
    # the kernel ends the run if the parent could not (it kills it at its deadline)
    resource.setrlimit(resource.RLIMIT_CPU, (int(cpu_limit) + 1, int(cpu_limit) + 2))
    oc = order_cnf(c, M, symmetry_pairs=pairs, dominance=dominance)
    conn.send(("built", oc.stats))
    start = time.perf_counter()
    cores = [0]
    if not add_cube(oc, cube):
        conn.send(("infeasible", 0, 0.0))
        conn.close()
        return

    def report(bound):
        cores[0] += 1
        conn.send(("bound", bound, cores[0]))

    def report_model(cost, model):  # each model of the linear search is a schedule, sent at once
        cores[0] += 1
        schedule = decode_order_cnf(oc, model, meta={"method": "maxsat-linear/order"})
        io = replay(c, schedule).io  # at most the model's cost; the parent replays it again
        conn.send(("schedule", io, cores[0], schedule))
        return io

    if method == "linear":
        cost, _ = linear_solve(oc, upper, report_model)
        model = None  # its last model was sent as it was found
    else:
        cost, model = rc2_solve(oc, report)
    seconds = round(time.perf_counter() - start, 3)
    if cost is None:
        conn.send(("infeasible", cores[0], seconds))
    else:
        schedule = None if model is None else decode_order_cnf(oc, model, meta={"method": "maxsat/order"})
        conn.send(("optimum", cost, cores[0], schedule, seconds))
    conn.close()


@dataclass
class MaxSATOutcome:
    """What a MaxSAT run of the order model found.

    Attributes
    ----------
    status : str
        ``OPTIMAL`` (RC2 finished: ``lower_bound`` is the model's optimum and
        ``schedule`` a model of it), ``TIME_LIMIT``, ``BOUND_MET`` (stopped
        once the bound reached a given value), ``INTERRUPTED`` (Ctrl-C),
        ``STOPPED`` (by the caller: another engine settled it), ``INFEASIBLE`` (no model: an empty cube, else a bug, as the
        caller checks ``M`` first) or ``FAILED`` (the process ended without
        an answer, e.g. out of memory).
    lower_bound : int or None
        The last bound the core-guided search proved (module docstring),
        None before the first.
    schedule : Schedule or None
        The decoded optimum (RC2), or the cheapest model found so far (the
        linear search), not yet replayed.
    stats : dict
        CNF sizes and build time, the solver and its settings, ``bound_steps`` (cores and
        at-most-one groups processed, or models found), seconds.
    io : int or None
        The cost the solver gives ``schedule`` (its replay must agree).
    """

    status: str
    lower_bound: int | None
    schedule: Schedule | None
    stats: dict
    io: int | None = None


def add_cube(oc: OrderCNF, cube) -> bool:
    """Restrict ``oc`` to the schedules that compute ``a`` before ``b`` for every pair of ``cube``.

    Parameters
    ----------
    oc : OrderCNF
    cube : iterable of (int, int)
        Node indices ``(a, b)``: ``a`` is computed before ``b``.

    Returns
    -------
    bool
        False when ancestry already puts some ``b`` before its ``a`` (no
        schedule lies in the cube); else True, with one hard unit clause
        added per pair the DAG does not decide.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> oc = order_cnf(compact(fft(1)), 3)
    >>> add_cube(oc, [(2, 3)]), rc2_solve(oc)[0]
    (True, 4)
    """
    for a, b in cube:
        lit = oc.before(a, b)
        if lit is False:
            return False
        if lit is not True:
            oc.hard.append([lit])
    return True


class MaxSATRun:
    """One RC2 run of the order model in a child process, polled without blocking.

    Parameters
    ----------
    c : CompactDAG
    M : int
    symmetry_pairs : iterable of (int, int)
    dominance : bool
    cpu_limit : float
        CPU seconds after which the kernel ends the child.
    cube : iterable of (int, int)
        Solve only the schedules computing ``a`` before ``b`` for each pair
        (:func:`add_cube`; one cube of :mod:`spartition.exact.cubes`). A cube
        may hold no schedule: the run then ends ``INFEASIBLE``.
    method : {"rc2", "linear"}
        RC2's core-guided search (bounds from below, :func:`rc2_solve`) or
        the linear search from above (schedules, and the optimum at its
        last call, :func:`linear_solve`).
    upper : int, optional
        ``linear``: the I/O of a schedule known elsewhere, where the search starts.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> run = MaxSATRun(compact(fft(1)), 3)
    >>> out = run.wait(60.0)
    >>> out.status, out.lower_bound
    ('OPTIMAL', 4)
    """

    def __init__(self, c: CompactDAG, M: int, symmetry_pairs=(), dominance: bool = True,
                 cpu_limit: float = 3600.0, cube=(), method: str = "rc2", upper: int | None = None):
        if method not in ("rc2", "linear"):
            raise ValueError(f"unknown MaxSAT method {method!r}; expected 'rc2' or 'linear'")
        self._child = ChildSearch("spartition.exact.maxsat",
                                  (c, M, tuple(symmetry_pairs), dominance, cpu_limit, tuple(cube), method, upper))
        self._conn = self._child.conn
        self.lower_bound = None
        self.schedule = None
        self.io = None
        self.status = "RUNNING"
        self.stats = ({"solver": f"rc2/{rc2_solver_name()}", **RC2_SETTINGS} if method == "rc2" else
                      {"solver": f"linear/{rc2_solver_name()}", "encoding": "incremental totalizer"})
        self.stats["bound_steps"] = 0

    @property
    def done(self) -> bool:
        """The run has ended (optimum found, infeasible, stopped or failed)."""
        return self.status != "RUNNING"

    def poll(self) -> None:
        """Read every message the child has sent so far."""
        while not self.done and self._conn.poll():
            try:
                msg = self._conn.recv()
            except EOFError:
                self._finish(Status.FAILED)
                break
            if msg[0] == "built":
                self.stats.update({f"cnf_{k}": v for k, v in msg[1].items()})
            elif msg[0] == "bound":
                self.lower_bound, self.stats["bound_steps"] = msg[1], msg[2]
            elif msg[0] == "schedule":
                self.io, self.stats["bound_steps"], self.schedule = msg[1], msg[2], msg[3]
            elif msg[0] == "optimum":
                self.lower_bound, self.stats["bound_steps"] = msg[1], msg[2]
                if msg[3] is not None:
                    self.schedule, self.io = msg[3], msg[1]
                self.stats["rc2_s"] = msg[4]
                self._finish(Status.OPTIMAL)
            elif msg[0] == "infeasible":
                self.stats["rc2_s"] = msg[2]
                self._finish(Status.INFEASIBLE)
        if not self.done and not self._child.alive and not self._conn.poll():
            self._finish(Status.FAILED)

    def stop(self, status: str = Status.STOPPED) -> None:
        """End the child now (the bound read so far stays proven)."""
        self.poll()
        if not self.done:
            self._finish(status)

    def wait(self, seconds: float, interrupt=None) -> MaxSATOutcome:
        """Poll until the run ends, ``seconds`` have passed or ``interrupt`` is set.

        Parameters
        ----------
        seconds : float
        interrupt : :class:`spartition.cpsat.Interrupt`, optional
            Checked every 50 ms (set by a Ctrl-C handler); the run is stopped
            with status ``INTERRUPTED``.

        Returns
        -------
        MaxSATOutcome
        """
        deadline = time.perf_counter() + seconds
        while not self.done:
            self.poll()
            if self.done:
                break
            if interrupt is not None and interrupt:
                self.stop(Status.INTERRUPTED)
            elif time.perf_counter() >= deadline:
                self.stop(Status.TIME_LIMIT)
            else:
                time.sleep(0.05)
        return self.outcome()

    def outcome(self) -> MaxSATOutcome:
        """What the run has found so far."""
        return MaxSATOutcome(self.status, self.lower_bound, self.schedule, dict(self.stats), self.io)

    def _finish(self, status: str) -> None:
        self.status = status
        self._child.end(self.stats, failed=status == Status.FAILED)


def solve_order_maxsat(c: CompactDAG, M: int, *, symmetry_pairs=(), dominance: bool = True,
                       time_limit: float = 60.0) -> MaxSATOutcome:
    """Solve the order model of ``c`` at ``M`` with RC2 within ``time_limit`` seconds; Ctrl-C stops it.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    symmetry_pairs : iterable of (int, int)
    dominance : bool
    time_limit : float
        Wall-clock seconds, the child's start and build included.

    Returns
    -------
    MaxSATOutcome
        On Ctrl-C the status is ``INTERRUPTED`` with the bound proven by then.
    """
    from spartition.cpsat import Interrupt

    if not maxsat_available():
        raise SpartitionError("the MaxSAT engine needs PySAT: pip install 'spartition[certify]' (package python-sat)")
    import threading

    run = MaxSATRun(c, M, symmetry_pairs, dominance, cpu_limit=time_limit + 30)
    seen = Interrupt()
    main = threading.current_thread() is threading.main_thread()
    if main:
        def on_sigint(signum, frame):
            seen.seen = True
        previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        return run.wait(time_limit, seen)
    finally:
        run.stop()
        if main:  # a handler installed outside Python reads back as None: restore the default then
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)


if __name__ == "__main__":  # the child of MaxSATRun
    import sys

    _serve(int(sys.argv[1]), int(sys.argv[2]))
