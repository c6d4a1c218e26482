"""Benchmark: RC2's proven bound when the soft literals count every load, or only reloads of inputs.

The order CNF (:func:`spartition.exact.formulations.order_cnf.order_cnf`) has one soft
unit clause per load flag ``L[v, w]``, the first load of an input included,
although its clauses already force that load (an input is loaded at its
first use). This script runs RC2 on two objectives over the same hard
clauses, side by side in the same run, one process (one core) each:

* ``every load``: the CNF as :mod:`spartition.exact.maxsat` solves it;
* ``reloads``: :func:`spartition.exact.formulations.order_cnf.count_reloads_only`
  of it (same optimum, argued in its docstring): each input's forced first
  load moves into the offset and only its reloads are soft.

Prints, per instance and M: the best bound each objective proved within the
limit and when it proved it (or OPT with the optimum). A bound "at 0s" is
the offset alone: under ``reloads`` that is the trivial bound.

Usage::

    python benchmarks/maxsat_objective.py                 # 60 s per run, both objectives side by side
    python benchmarks/maxsat_objective.py --time-limit 120 --only matmul
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import sys
import time
from functools import partial

from spartition.core.dag import compact
from spartition.core.registry import build
from spartition.core.symmetry import symmetry_precedences
from spartition.exact.formulations.order_cnf import count_reloads_only, order_cnf
from spartition.exact.maxsat import rc2_solve
from spartition.families.classic.dag import fft, matmul

#: (label, DAG builder, M values): open frontier targets of docs/exact_frontier.md (builders are partials:
#: each run is a spawned process, which unpickles them).
INSTANCES = (
    ("matmul(3,3,3)", partial(matmul, 3, 3, 3), (4, 5, 6, 7, 8, 10, 12)),
    ("fft(16)", partial(fft, 4), (4, 8, 12)),
    ("attention-fwd(n=3,d=2)", partial(build, "attention-forward", n=3, d=2), (8, 12)),
)
OBJECTIVES = ("every load", "reloads")


def _solve(build_dag, M: int, objective: str, out) -> None:
    c = compact(build_dag())
    oc = order_cnf(c, M, symmetry_pairs=symmetry_precedences(c).pairs)
    if objective == "reloads":
        oc = count_reloads_only(oc)
    start = time.perf_counter()
    out.put(("start", oc.offset, 0.0))
    cost, _ = rc2_solve(oc, lambda b: out.put(("bound", b, time.perf_counter() - start)))
    out.put(("optimum", cost, time.perf_counter() - start))


def race(build_dag, M: int, limit: float) -> dict:
    """Both objectives side by side, a process each, each for ``limit`` seconds after its build."""
    ctx = mp.get_context("spawn")
    runs = {}
    for objective in OBJECTIVES:
        q = ctx.Queue()
        p = ctx.Process(target=_solve, args=(build_dag, M, objective, q), daemon=True)
        p.start()
        runs[objective] = {"proc": p, "queue": q, "bound": None, "at": None, "optimal": False, "began": None}

    def finished(r) -> bool:
        late = r["began"] is not None and time.perf_counter() > r["began"] + limit + 1
        return r["optimal"] or late or not r["proc"].is_alive()

    while not all(finished(r) for r in runs.values()):
        time.sleep(0.2)
        for r in runs.values():
            while not finished(r):
                try:
                    kind, value, at = r["queue"].get_nowait()
                except queue.Empty:
                    break
                if kind == "start":
                    r["bound"], r["at"], r["began"] = value, 0.0, time.perf_counter()
                elif at <= limit and (value > r["bound"] or kind == "optimum"):
                    r["bound"], r["at"], r["optimal"] = value, at, kind == "optimum"
    for r in runs.values():
        r["proc"].kill()
    return runs


def cell(r: dict) -> str:
    if r["bound"] is None:
        return "-"
    return f"{'OPT ' if r['optimal'] else ''}{r['bound']} at {r['at']:.0f}s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--only", default=None, help="run only the instances whose label contains this")
    args = ap.parse_args(argv)
    print(f"| instance | M | {' | '.join(OBJECTIVES)} |")
    print("|---|---|" + "---|" * len(OBJECTIVES))
    for label, build_dag, Ms in INSTANCES:
        if args.only and args.only not in label:
            continue
        for M in Ms:
            res = race(build_dag, M, args.time_limit)
            print(f"| {label} | {M} | {' | '.join(cell(res[o]) for o in OBJECTIVES)} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
