"""The oneshot step search (:mod:`spartition.exact.steps`) in a child process: an engine of the portfolio.

:class:`StepSearchRun` runs :func:`spartition.exact.steps.step_search` with
``variant="oneshot"`` in a fresh interpreter, as
:class:`spartition.exact.maxsat.MaxSATRun` runs RC2, so that the portfolio
(:mod:`spartition.exact.portfolio`) can run it beside the MaxSAT engines and
stop it at once. It reports once, at its end: the optimum when the search
finished, else the least bound left in its queue at its own time limit (a
proven bound of the true oneshot game: the search is exhaustive over the
normal form of :mod:`spartition.exact.steps` and its heuristic admissible).

Why it belongs beside the MaxSAT engines: its work grows with the number of
states whose bound stays below the best schedule, so it is strongest where
the best schedule is close to the trivial bound (loose memory), where RC2's
cores stall at the trivial bound (docs/exact_frontier.md measures both).
"""

from __future__ import annotations

import time

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule
from spartition.exact.child import ChildSearch, child_connections
from spartition.exact.maxsat import MaxSATOutcome
from spartition.status import Status

__all__ = ["ONESHOT_STEP_ASSUMPTIONS", "STEP_RUN_STATES", "StepSearchRun"]

#: States the child stores at most (about 4 GB: some 500 bytes a state, measured on matmul 3x3x3).
STEP_RUN_STATES = 8_000_000

#: What a oneshot step-search result rests on (each item proven in :mod:`spartition.exact.steps`).
ONESHOT_STEP_ASSUMPTIONS = (
    "oneshot: exhaustive A* over normal-form steps (store right after compute, lazy loads, eager deletes)",
    "one state per orbit of the DAG's automorphisms (an automorphism maps schedules to schedules of equal cost)",
    "heuristic: outputs not yet computed + live nodes not red (admissible and consistent)",
)


def _serve(fd_in: int, fd_out: int) -> None:
    """The child process: read the job, search, send the result (``python -m spartition.exact.step_run``)."""
    import resource

    from spartition.exact.steps import step_search

    (c, M, upper, ends_at, max_states), conn = child_connections(fd_in, fd_out)
    seconds = int(ends_at - time.time())
    resource.setrlimit(resource.RLIMIT_CPU, (max(seconds, 0) + 31, max(seconds, 0) + 32))
    found = step_search(c, M, variant="oneshot", upper=upper, max_states=max_states,
                        time_limit=max(ends_at - time.time(), 0.05))
    conn.send(("result", found.io, found.lower_bound, found.schedule, found.complete,
               {"states": found.states, "expanded": found.expanded, "search_s": round(found.wall_s, 3)}))
    conn.close()


class StepSearchRun:
    """The oneshot step search of ``c`` at ``M`` in a child process, ending before a wall-clock deadline.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    upper : Schedule
        A replayed oneshot schedule at ``M``: the search drops every state
        whose bound reaches its I/O, and returns it if nothing is cheaper.
    seconds : float
        The search stops this many seconds from now (start-up included),
        reporting the least bound left in its queue.
    max_states : int
        States stored at most (:data:`STEP_RUN_STATES`).

    Attributes
    ----------
    status : str
        ``RUNNING``, then ``OPTIMAL`` (the search finished), ``TIME_LIMIT``
        (it reported its open bound), ``STOPPED``/``INTERRUPTED``/``BOUND_MET``
        (ended by the caller before it reported) or ``FAILED``.
    lower_bound, io : int or None
    schedule : Schedule or None
        Not yet replayed by the caller.
    stats : dict

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> from spartition.core.greedy import greedy_schedule
    >>> c = compact(fft(2))
    >>> run = StepSearchRun(c, 3, greedy_schedule(c, 3, "oneshot"), 60.0)
    >>> while not run.done:
    ...     run.poll()
    >>> run.status, run.lower_bound
    ('OPTIMAL', 14)
    """

    def __init__(self, c: CompactDAG, M: int, upper: Schedule, seconds: float, max_states: int = STEP_RUN_STATES):
        self._child = ChildSearch("spartition.exact.step_run", (c, M, upper, time.time() + seconds, max_states))
        self._conn = self._child.conn
        self.status, self.lower_bound, self.schedule, self.io = "RUNNING", None, None, None
        self.stats = {"solver": "step-search/oneshot", "max_states": max_states}

    @property
    def done(self) -> bool:
        """The run has ended."""
        return self.status != "RUNNING"

    def poll(self) -> None:
        """Read the result if the child has sent it."""
        if self.done:
            return
        if self._conn.poll():
            try:
                _, io, bound, schedule, complete, stats = self._conn.recv()
            except EOFError:
                self._finish(Status.FAILED)
                return
            self.io, self.lower_bound, self.schedule = io, bound, schedule
            self.stats.update(stats)
            self._finish(Status.OPTIMAL if complete else Status.TIME_LIMIT)
        elif not self._child.alive:
            self._finish(Status.FAILED)

    def stop(self, status: str = Status.STOPPED) -> None:
        """End the child now (a result it has sent is kept)."""
        self.poll()
        if not self.done:
            self._finish(status)

    def outcome(self) -> MaxSATOutcome:
        """What the run has found (the record the portfolio reads from every engine run)."""
        return MaxSATOutcome(self.status, self.lower_bound, self.schedule, dict(self.stats), self.io)

    def _finish(self, status: str) -> None:
        self.status = status
        self._child.end(self.stats, failed=status == Status.FAILED)


if __name__ == "__main__":  # the child of StepSearchRun
    import sys

    _serve(int(sys.argv[1]), int(sys.argv[2]))
