"""Benchmark: the partial game's optimum against the standard games', per family small instance and M.

Per instance and M, four columns, each from a replayed schedule:

* ``partial/sum``: the partial game on the DAG with every sum one node
  (:func:`spartition.core.aggregate.aggregate_sums`), by the exact search
  (:func:`spartition.exact.brute.brute_force`, ``variant="partial"``);
* ``partial/bin``: the partial game on the family's DAG as built (binary
  ``add`` trees), likewise (the same DAG, and value, where every sum has
  two terms);
* ``recompute`` and ``oneshot``: the standard games on the binary DAG, by
  :func:`spartition.exact.solve.solve_io`.

A proven optimum prints as a number; otherwise the cell is ``<=U`` with U
the I/O of the best replayed schedule and where it comes from (in the
partial columns where the search gave up: the partial greedy, or the
oneshot schedule translated move for move; in the standard ones the
solver's incumbent, its status and proven bound); ``-`` is an infeasible M
(the standard game needs M >= 1 + max in-degree). The last column is
partial/bin over recompute where both are proven.

With ``--sandwich`` it prints instead the sandwich in the partial game
(:func:`spartition.study.sandwich.sandwich`, ``variant="partial"``) on the
issue-21 grid, attention-forward n = 32, 64, d = 2, 4: the lower side (the
partial game's trivial bound, the only bound proven for it there) and the
upper side (the cheapest of the partial greedy and every published
algorithm's oneshot schedule translated edge by edge, each replayed in the
partial game), with the method behind each.

Usage::

    python benchmarks/partial_game.py                       # 60 s per search
    python benchmarks/partial_game.py --time-limit 20 --only fft
    python benchmarks/partial_game.py --only "matmul 2x2x2" --M 2 --time-limit 1200 --max-states 150000000
    python benchmarks/partial_game.py --sandwich --time-limit 120
    python benchmarks/partial_game.py --sandwich --sums node --only "n=32"
"""

from __future__ import annotations

import argparse
import sys
import time

from spartition.core.aggregate import aggregate_sums
from spartition.core.bounds import min_feasible_memory
from spartition.core.game import replay
from spartition.core.partial_greedy import oneshot_to_partial, partial_greedy_schedule
from spartition.core.registry import build
from spartition.errors import SpartitionError
from spartition.exact.brute import brute_force
from spartition.exact.solve import solve_io

#: (label, family, parameters, memories)
INSTANCES = (
    ("fft k=1", "fft", dict(k=1), (2, 3)),
    ("fft k=2", "fft", dict(k=2), (2, 3, 4, 5, 6)),
    ("reduction k=4 tree", "reduction", dict(k=4, shape="tree"), (2, 3, 4)),
    ("matmul 2x2x2", "matmul", dict(a=2, b=2, c=2), (2, 3, 4, 5, 6, 8)),
    ("matmul 2x3x1", "matmul", dict(a=2, b=3, c=1), (2, 3, 4, 5)),
    ("attention-forward n=2 d=1", "attention-forward", dict(n=2, d=1), (2, 3, 4, 5, 6, 7, 8)),
    ("approx-attention n=2 d=1 g=1", "approx-attention", dict(n=2, d=1, g=1), (2, 3, 4, 5, 6)),
    ("approx-attention n=2 d=1 g=2", "approx-attention", dict(n=2, d=1, g=2), (3, 4, 5, 6)),
    ("attention-backward-flash n=2 d=1", "attention-backward-flash", dict(n=2, d=1), (3, 4, 6)),
)


def partial_cell(G, M, time_limit, oneshot=None, max_states=5_000_000):
    """(text, proven value or None): the exact partial optimum, or, if the search gives up, the cheaper of the
    greedy and the translated oneshot schedule (``oneshot``, of the same DAG), replayed."""
    try:
        r = brute_force(G, M, "partial", max_states=max_states, time_limit=time_limit)
    except SpartitionError:
        best = (replay(G, partial_greedy_schedule(G, M)).io, "greedy")
        if oneshot is not None:
            best = min(best, (replay(G, oneshot_to_partial(G, oneshot)).io, "oneshot"))
        return f"<={best[0]} ({best[1]})", None
    assert replay(G, r.schedule).io == r.io
    return str(r.io), r.io


def standard_cell(G, M, variant, time_limit):
    """(text, proven value or None, replayed schedule or None)."""
    if M < min_feasible_memory(G):
        return "-", None, None
    r = solve_io(G, M, variant, time_limit=time_limit)
    if r.schedule is not None:
        assert replay(G, r.schedule).io == r.io
    if r.status == "OPTIMAL":
        return str(r.io), r.io, r.schedule
    return f"<={r.io} ({r.status}, >={r.lower_bound})", None, r.schedule


#: (n, d, memories) of the sandwich grid (issue 21's forward instances)
SANDWICH_GRID = ((32, 2, (4, 8, 16, 32, 64)), (32, 4, (4, 8, 16, 32, 64)), (64, 2, (4, 8, 16, 32, 64)),
                 (64, 4, (4, 8, 16, 32, 64)))


def sandwich_rows(time_limit: float, only: str = "", sums: str = "binary") -> None:
    """Print the partial game's sandwich on :data:`SANDWICH_GRID`, one line per (n, d, M), on the DAG built with
    ``sums`` (``node``: every sum one node; the published schedules run on the binary build and are played on it)."""
    from spartition.study.sandwich import sandwich

    head = f"{'instance':33} {'M':>3} {'lower':>6} {'lower method':40} {'upper':>6} {'ratio':>5} upper method"
    print(head)
    print("-" * len(head))
    for n, d, Ms in SANDWICH_GRID:
        label = f"attention-forward n={n} d={d}" + (" sums=node" if sums == "node" else "")
        if only not in label:
            continue
        G = build("attention-forward", n=n, d=d, sums=sums)
        for M in Ms:
            start = time.perf_counter()
            (row,) = sandwich(G, [M], "partial", time_limit=time_limit)
            assert replay(G, row.schedule).io == row.upper.value and row.schedule.variant == "partial"
            cut = ", time-limited" if row.time_limited else ""
            print(f"{label:33} {M:>3} {row.lower.value:>6} {row.lower.method:40} {row.upper.value:>6} "
                  f"{row.upper.value / row.lower.value:>5.2f} {row.upper.method}  "
                  f"({time.perf_counter() - start:.0f} s{cut})", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per search (default 60)")
    ap.add_argument("--only", default="", help="run the instances whose label contains this text")
    ap.add_argument("--M", default="", help="comma-separated M: only these memories of each instance")
    ap.add_argument("--max-states", type=int, default=5_000_000,
                    help="states the partial game's exact search may visit (default 5,000,000; the M = 2 rows "
                         "need more, and a longer --time-limit)")
    ap.add_argument("--partial-only", action="store_true",
                    help="only the partial game's exact searches (the standard games' columns are not solved: "
                         "with a long --time-limit they would take as long again)")
    ap.add_argument("--sandwich", action="store_true", help="the partial game's sandwich on the forward grid")
    ap.add_argument("--sums", choices=("binary", "node"), default="binary", help="--sandwich: how sums are built")
    args = ap.parse_args(argv)
    if args.sandwich:
        sandwich_rows(args.time_limit, args.only, args.sums)
        return 0
    head = f"{'instance':34} {'M':>3} {'partial/sum':>12} {'partial/bin':>12} {'recompute':>12} {'oneshot':>12} ratio"
    print(head)
    print("-" * len(head))
    for label, family, params, Ms in INSTANCES:
        if args.only not in label:
            continue
        G = build(family, **params)
        H = aggregate_sums(G)
        for M in Ms:
            if args.M and str(M) not in args.M.split(","):
                continue
            start = time.perf_counter()
            if args.partial_only:
                (rec, r), (one, one_schedule) = ("not run", None), ("not run", None)
            else:
                rec, r, _ = standard_cell(G, M, "recompute", args.time_limit)
                one, _, one_schedule = standard_cell(G, M, "oneshot", args.time_limit)
            # where every sum has two terms the two DAGs are one (only the op labels differ)
            same = set(H.edges) == set(G.edges)
            agg, a = partial_cell(H, M, args.time_limit, one_schedule if same else None, args.max_states)
            binary, b = (agg, a) if same else partial_cell(G, M, args.time_limit, one_schedule, args.max_states)
            ratio = f"{b / r:.2f}" if b is not None and r else ""
            print(f"{label:34} {M:>3} {agg:>12} {binary:>12} {rec:>12} {one:>12} {ratio:>5}"
                  f"  ({time.perf_counter() - start:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
