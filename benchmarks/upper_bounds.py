"""Upper bounds on the issue-21 grid: the published schedules at their paper parameters, searched, and improved.

Run: python benchmarks/upper_bounds.py [--family F] [--n N ...] [--d D ...] [--M M ...]
     [--only ALGORITHM] [--time-limit S] [--no-improve] [--json FILE]

For every (family, n, d, M) row and every registered algorithm that applies
(greedy included), three replayed I/Os:

* before -- the generator at its default (paper) parameters;
* search -- :func:`spartition.exact.search.best_schedule` over the
  generator's tile options, and over the compute orders of its best tilings
  at M' in {6, 10, 2M, its smallest M} re-pebbled at M (``retarget_from``, six per M');
* after  -- :func:`spartition.exact.improve.improve_schedule` on the
  searched schedule (same compute order, evictions re-chosen).

and, for scale, the formulas ``n^2 d^2 / M`` and ``n^2 d / sqrt(M)``. Every
number is a replayed schedule's I/O; the formulas are printed, never used.
Each schedule is of the oneshot game, except the approximate-attention
tilings' and ``row-sums-first-forward``'s (recompute game; marked ``(rc)``).
Default grid: attention-forward n in {32, 64}, d in {2, 4}; M in {d, 2d,
4d, d^2, 2 d^2, 4 d^2} (those >= 4); the backward families at n = 32.
Larger rows (n = 128, 256; d = 8) take minutes each: pass them explicitly.
Approximate attention: ``--family approx-attention`` with ``--g``.
"""

from __future__ import annotations

import argparse
import json
import math
import time

from spartition.core.game import replay
from spartition.core.registry import algorithms, build
from spartition.exact.search import best_schedule
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.exact.improve import improve_schedule

DEFAULT_FAMILIES = ("attention-forward", "attention-backward-flash", "attention-backward-weights")
#: Generators added with this benchmark: left out of "today" (the published ones at their paper parameters).
NEW = {"tiled-forward"}


def memories(d: int) -> list[int]:
    """The M of a row: d, 2d, 4d, d^2, 2 d^2, 4 d^2 (at least 4, the smallest that fits every attention DAG here)."""
    return sorted({M for M in (d, 2 * d, 4 * d, d * d, 2 * d * d, 4 * d * d) if M >= 4})


def measure(G, algo, M, time_limit, improve=True, variant="oneshot"):
    """``(before, search, after, options)`` replayed I/Os of one algorithm (None where it does not fit)."""
    try:
        before = replay(G, algo.generate(G, M, variant=variant)).io
    except InfeasibleMemory:
        before = None
    # an algorithm without options (greedy) has one compute order whatever M: nothing to retarget
    smallest = algo.min_memory(G.graph.get("params", {})) if algo.min_memory else 6
    donors = sorted({m for m in (6, 10, 2 * M, smallest) if m != M and m >= smallest}) if algo.search_space else ()
    try:
        found = best_schedule(G, algo, M, variant=variant, retarget_from=donors, retarget_top=6)
    except InfeasibleMemory:
        return before, None, None, None
    after = improve_schedule(G, found.schedule, time_limit=time_limit).after if improve else None
    return before, found.io, after, found.options


def row(family, n, d, M, time_limit, improve=True, g=None, only=None):
    """Every applicable algorithm measured on one instance."""
    t0 = time.perf_counter()
    params = {"n": n, "d": d} if g is None else {"n": n, "d": d, "g": g}
    G = build(family, **params, max_nodes=None)
    out = {"family": family, "n": n, "d": d, "M": M, "nodes": G.number_of_nodes(),
           "n2d2/M": round(n * n * d * d / M), "n2d/sqrtM": round(n * n * d / math.sqrt(M)), "algorithms": {}}
    for name, algo in sorted(algorithms().items()):
        if not algo.applies_to(family) or (only and name not in only):
            continue
        try:
            # the approximate-attention tilings regenerate U1/U2 entries, row-sums-first-forward makes scores twice:
            # recompute variant
            variant = "recompute" if family == "approx-attention" or "oneshot" not in algo.variants else "oneshot"
            out["algorithms"][name if variant == "oneshot" else f"{name} (rc)"] = measure(G, algo, M, time_limit, improve,
                                                                                         variant)
        except InvalidDAG:
            continue
    out["wall_s"] = round(time.perf_counter() - t0, 1)
    return out


def _best(r, k, skip=()):
    vals = [(v[k], name) for name, v in r["algorithms"].items() if v[k] is not None and name not in skip]
    return min(vals) if vals else (None, None)


def print_row(r):
    b, bn = _best(r, 0, NEW)
    s, sn = _best(r, 1)
    a, an = _best(r, 2)
    after = f"{a:,} ({an})" if a is not None else (f"{s:,} ({sn}, search)" if s is not None else "-")
    best = a if a is not None else s
    ratio = f"{b / best:.2f}" if b and best else "-"
    today = f"{b:,} ({bn})" if b is not None else "- (none fits)"
    print(f"| {r['family']} | {r['n']} | {r['d']} | {r['M']} | {r['n2d2/M']:,} | {r['n2d/sqrtM']:,} "
          f"| {today} | {after} | {ratio} | {r['wall_s']} |", flush=True)


def print_details(rows):
    print("\nPer algorithm: before / search / after (replayed I/O; - where the tiling does not fit)\n")
    for r in rows:
        cells = ", ".join(f"{name} {_fmt(v[0])}/{_fmt(v[1])}/{_fmt(v[2])}" for name, v in r["algorithms"].items())
        print(f"- {r['family']} n={r['n']} d={r['d']} M={r['M']}: {cells}")


def _fmt(x):
    return "-" if x is None else f"{x:,}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--family", action="append", help=f"DAG family (repeatable; default {', '.join(DEFAULT_FAMILIES)})")
    p.add_argument("--n", type=int, nargs="+", help="sequence lengths (default 32 64 forward, 32 backward)")
    p.add_argument("--d", type=int, nargs="+", default=[2, 4])
    p.add_argument("--M", type=int, nargs="+", help="memories (default: memories(d))")
    p.add_argument("--g", type=int, default=2, help="approx-attention degree g")
    p.add_argument("--time-limit", type=float, default=20.0, help="seconds per improve (default 20)")
    p.add_argument("--no-improve", action="store_true")
    p.add_argument("--only", action="append", help="measure only this algorithm (repeatable)")
    p.add_argument("--json", help="write the rows here")
    args = p.parse_args(argv)
    rows = []
    print("| family | n | d | M | n^2d^2/M | n^2d/sqrt(M) | today: published, paper parameters | "
          "best after search + improve | today/after | s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for family in args.family or DEFAULT_FAMILIES:
        ns = args.n or ([32, 64] if family == "attention-forward" else [32])
        for n in ns:
            for d in args.d:
                for M in args.M or memories(d):
                    g = args.g if family == "approx-attention" else None
                    r = row(family, n, d, M, args.time_limit, not args.no_improve, g, args.only)
                    rows.append(r)
                    print_row(r)
    print_details(rows)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
