"""The one place a SAT solver is called: CaDiCaL 1.9.5 from PySAT, with LRAT output.

PySAT (``python-sat``, extra ``certify``) bundles CaDiCaL. Its ``with_proof``
flag gives a DRAT proof only; CaDiCaL itself writes LRAT when its ``lrat``
option is set before the proof tracer is attached, and text when ``binary``
is off. PySAT attaches the tracer in its constructor, so this module creates
the solver without a proof, sets the two options, and attaches the tracer
itself through the same extension call PySAT uses
(``pysolvers.cadical195_tracepr``). Original clauses are numbered 1, 2, ...
in the order they are added, which is the order of the DIMACS file, so the
proof's clause ids refer to the file's clauses.

A search with a deadline runs in a child process killed at the deadline
(:class:`spartition.exact.child.ChildSearch`): CaDiCaL cannot be stopped from
Python inside a call, and one call of 1,000 conflicts on a CNF of 10^6
clauses took 13 s. Without a deadline it runs here, in slices.

Nothing this module reports is trusted: a refutation counts only after
:func:`spartition.certify.proof.check_lrat` accepted its proof, and a model
only after the schedule or partition decoded from it was checked.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from spartition.certify.cnf import CNF
from spartition.errors import SpartitionError

__all__ = ["SolveOutcome", "solve_cnf", "tool_versions"]

SOLVER = "cadical195"


def _pysat():
    try:
        import pysolvers
        from pysat.solvers import Cadical195
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise SpartitionError(
            "certify needs PySAT: pip install 'spartition[certify]' (package python-sat)"
        ) from e
    return Cadical195, pysolvers


def tool_versions() -> dict:
    """The versions of the tools a certificate depends on."""
    import importlib.metadata as md
    import platform

    out = {"python": platform.python_version(), "solver": "CaDiCaL 1.9.5 (PySAT cadical195)"}
    for pkg in ("python-sat", "ortools", "spartition"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = None
    return out


#: Conflicts of the first slice of a search with a deadline; a slice shorter than
#: SLICE_SECONDS doubles the next one, so the clock is read a few times a second.
FIRST_SLICE_CONFLICTS = 1_000
SLICE_SECONDS = 0.25


@dataclass
class SolveOutcome:
    """What the solver said: ``satisfiable``, a ``model`` (set of true variables) when it is, wall-clock seconds (``wall_s``).

    ``satisfiable`` is None when the deadline came first (no answer, no proof).
    """

    satisfiable: bool | None
    model: frozenset | None
    wall_s: float


def solve_cnf(f: CNF, proof_path=None, deadline: float | None = None) -> SolveOutcome:
    """Solve ``f`` with CaDiCaL; with ``proof_path``, write an LRAT proof (text) there.

    Parameters
    ----------
    f : CNF
    proof_path : path, optional
        Where the LRAT proof goes; meaningful when the answer is UNSAT.
    deadline : float, optional
        A ``time.perf_counter()`` value: the search runs in a child process,
        ended at the deadline or at Ctrl-C (which raises here). Without one
        it runs in this process, in slices of conflicts (CaDiCaL keeps its
        state and its proof between them), so that a Ctrl-C that PySAT's
        own handler does not catch is seen between two slices.

    Returns
    -------
    SolveOutcome

    Examples
    --------
    >>> import time
    >>> f = CNF(num_vars=1, clauses=[(1,), (-1,)])
    >>> solve_cnf(f).satisfiable, solve_cnf(f, deadline=time.perf_counter() + 5).satisfiable
    (False, False)
    >>> solve_cnf(f, deadline=time.perf_counter() - 1).satisfiable is None
    True
    """
    if deadline is not None:
        return _solve_in_child(f, proof_path, deadline)
    Cadical195, pysolvers = _pysat()
    s = Cadical195()
    handle = None
    try:
        if proof_path is not None:
            s.configure({"lrat": 1, "binary": 0})
            handle = open(proof_path, "w+b")
            # What Cadical195(with_proof=True) does, after the options above.
            s.prfile = handle
            s.prfp = pysolvers.cadical195_tracepr(s.cadical, handle)
        start = time.perf_counter()
        for c in f.clauses:
            s.add_clause(c)
        try:
            # in slices: a Ctrl-C that PySAT's handler misses (one sent by a thread of this process, which cannot
            # run during a call) is seen only between two calls (an unlimited solve of PHP(10) held it for 53 s)
            sat = _solve_by_slices(s, math.inf)
        except pysolvers.error as exc:
            if "keyboard interrupt" in str(exc).lower():  # PySAT's own SIGINT handler stopped the search
                raise KeyboardInterrupt from None
            raise
        seconds = time.perf_counter() - start
        model = frozenset(x for x in s.get_model() if x > 0) if sat else None
    finally:
        # delete() flushes and closes the tracer before the file is closed.
        s.delete()
        if handle is not None and not handle.closed:
            handle.close()
    if sat is None:
        return SolveOutcome(None, None, seconds)
    if proof_path is not None and not Path(proof_path).exists():  # pragma: no cover
        raise SpartitionError(f"the solver wrote no proof at {proof_path}")
    return SolveOutcome(sat, model, seconds)


def _solve_by_slices(solver, deadline: float) -> bool | None:
    """``solver.solve()`` in conflict-limited slices until an answer or ``deadline``; None at the deadline.

    A slice is not started when the last one, as long again, would end past
    the deadline: on a CNF of 10^6 clauses 1,000 conflicts took 0.6, 2.8,
    then 13 s (CaDiCaL cannot be stopped inside a slice), and the third ran
    a 10 s certify to 23 s.
    """
    budget = FIRST_SLICE_CONFLICTS
    last = 0.0
    while time.perf_counter() + last < deadline:
        began = time.perf_counter()
        solver.conf_budget(budget)
        answer = solver.solve_limited()
        if answer is not None:
            return bool(answer)
        last = time.perf_counter() - began
        if last < SLICE_SECONDS:
            budget *= 2
    return None


def _solve_in_child(f: CNF, proof_path, deadline: float) -> SolveOutcome:
    """:func:`solve_cnf` in a child process that writes the proof and sends the answer; killed at ``deadline``."""
    from spartition.exact.child import ChildSearch

    start = time.perf_counter()
    if start >= deadline:
        return SolveOutcome(None, None, 0.0)
    _pysat()  # a missing PySAT is reported here, as in this process
    child = ChildSearch("spartition.certify.sat", (f.num_vars, f.clauses, None if proof_path is None
                                                  else str(proof_path)))
    msg = None
    try:
        while msg is None and time.perf_counter() < deadline:
            if child.conn.poll(min(max(deadline - time.perf_counter(), 0.0), 0.1)):
                msg = child.conn.recv()
            elif not child.alive and not child.conn.poll():
                raise SpartitionError("the SAT solver's process ended without an answer (out of memory?)")
    except EOFError:
        raise SpartitionError("the SAT solver's process ended without an answer (out of memory?)") from None
    finally:
        child.end({})
    if msg is None:
        return SolveOutcome(None, None, time.perf_counter() - start)
    if msg[0] == "error":
        raise SpartitionError(f"the SAT solver failed: {msg[1]}")
    return SolveOutcome(msg[1], msg[2], time.perf_counter() - start)


def _serve(fd_in: int, fd_out: int) -> None:
    """The child process of :func:`solve_cnf` with a deadline: solve, close the proof, send the answer."""
    from spartition.exact.child import child_connections

    (num_vars, clauses, proof_path), conn = child_connections(fd_in, fd_out)
    try:
        out = solve_cnf(CNF(num_vars=num_vars, clauses=clauses), proof_path)
        conn.send(("answer", out.satisfiable, out.model))
    except Exception as exc:  # noqa: BLE001 - the parent raises it
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    conn.close()


if __name__ == "__main__":  # the child of _solve_in_child
    _serve(int(sys.argv[1]), int(sys.argv[2]))
