"""certify within its time limit: a SAT search with a deadline ends at it (and at Ctrl-C), whatever one call into
CaDiCaL takes; an order CNF that cannot be built in time is not begun.

CaDiCaL cannot be stopped from Python inside a call; a call of 1,000 conflicts
on a CNF of 10^6 clauses took 13 s. With a deadline the search runs in a child
process that is killed at the deadline or at Ctrl-C.
"""

import os
import subprocess
import sys
import time

import pytest
from pysat.examples.genhard import PHP

from spartition.certify import sat
from spartition.certify.cnf import CNF


def pigeonhole(n: int) -> CNF:
    """PHP(n): unsatisfiable, and minutes of search for CaDiCaL at n = 11."""
    php = PHP(n)
    return CNF(num_vars=php.nv, clauses=[tuple(c) for c in php.clauses])


def test_a_search_ends_at_its_deadline_even_inside_one_long_call(monkeypatch, tmp_path):
    # one call that does not end by itself before the deadline, as a slice of 1,000 conflicts on 10^6 clauses
    monkeypatch.setattr(sat, "FIRST_SLICE_CONFLICTS", 10**9)
    began = time.perf_counter()
    out = sat.solve_cnf(pigeonhole(11), tmp_path / "p.lrat", deadline=began + 1.0)
    assert out.satisfiable is None and out.model is None
    assert time.perf_counter() - began < 3.0


def test_a_search_with_a_deadline_answers_as_one_without(tmp_path):
    from spartition.certify.proof import check_lrat

    f = pigeonhole(5)
    far = time.perf_counter() + 600
    here, there = sat.solve_cnf(f), sat.solve_cnf(f, tmp_path / "p.lrat", deadline=far)
    assert here.satisfiable is there.satisfiable is False
    assert check_lrat(f, tmp_path / "p.lrat").additions > 0  # the child's proof, closed before its answer
    one = CNF(num_vars=2, clauses=[(1, 2), (-1,)])
    assert sat.solve_cnf(one, deadline=far).model == sat.solve_cnf(one).model == frozenset({2})


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_ends_a_search_with_a_deadline_at_once():
    script = (
        "import os, signal, threading, time\n"
        "from pysat.examples.genhard import PHP\n"
        "from spartition.certify.cnf import CNF\n"
        "from spartition.certify.sat import solve_cnf\n"
        "signal.signal(signal.SIGINT, signal.default_int_handler)  # even where the suite runs with it ignored\n"
        "php = PHP(11)\n"
        "f = CNF(num_vars=php.nv, clauses=[tuple(c) for c in php.clauses])\n"
        "threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT)).start()\n"
        "began = time.perf_counter()\n"
        "try:\n"
        "    print('finished', solve_cnf(f, deadline=began + 600).satisfiable)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', time.perf_counter() - began)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    said, seconds = out.stdout.split()
    # the signal at 1 s; the search alone runs for minutes (a loaded machine may take a few seconds to end the child)
    assert said == "interrupted" and 1.0 <= float(seconds) < 10.0, out.stdout + out.stderr


def test_an_order_cnf_too_slow_to_build_is_refused_before_the_witness(monkeypatch):
    # certify fft:k=6 --M 8 --time-limit 10 --encoding order built 21 million clauses for 130 s (4.6 GB)
    from spartition.certify.certify import certify_optimum
    from spartition.core.registry import build
    from spartition.errors import TimeLimitReached
    from spartition.exact import solve

    monkeypatch.setattr(solve, "solve_io", lambda *a, **k: pytest.fail("the witness was searched for"))
    with pytest.raises(TimeLimitReached, match=r"the CNF refuting one better schedule at M = 8 \(about [\d,]+ "
                                               r"literals\) would take about \d+\.\d s to build, 5\.0 s are left"):
        certify_optimum(build("fft", k=6), 8, encoding="order", time_limit=10)


def test_an_order_cnf_too_slow_to_build_is_refused_before_it_is_built():
    # from a given schedule, no witness: fft k = 5 (about 4 * 10^6 literals) took 7 s to build at a 2 s limit
    from spartition.certify.certify import certify_optimum
    from spartition.core.greedy import greedy_schedule
    from spartition.core.registry import build
    from spartition.errors import TimeLimitReached

    G = build("fft", k=5)
    began = time.perf_counter()
    with pytest.raises(TimeLimitReached, match=r"the CNF refuting I/O <= \d+ at M = 4 \(about [\d,]+ literals\)"):
        certify_optimum(G, 4, schedule=greedy_schedule(G, 4, "oneshot"), encoding="order", time_limit=2)
    assert time.perf_counter() - began < 2.0
