"""Benchmark of the proof engines of the order model: CP-SAT, RC2 MaxSAT, the linear SAT search, and portfolios.

Prints one table, per instance and M: nodes, then for each engine status,
best I/O / proven lower bound, and wall seconds (``*`` marks the engine
behind the bound). Engines, each on one core:

* ``cp-sat``: :func:`spartition.exact.solve.solve_io` with ``engine="cp-sat"``
  and 1 worker (today's one-worker default);
* ``maxsat``: ``engine="maxsat"``: the order model's clauses and PySAT's RC2
  (:mod:`spartition.exact.maxsat`) in one process;
* ``linear``: ``engine="linear"``: the same clauses, the linear search from
  above (:func:`spartition.exact.maxsat.linear_solve`) in one process;
* ``portfolio``: ``engine="portfolio"`` with 2 workers: RC2 and the linear
  search, a process each (``auto``'s choice with two workers);
* ``portfolio-1``: ``engine="portfolio"`` with 1 worker: RC2 beside a
  one-worker CP-SAT on the same core (the two-worker portfolio before the
  linear search);
* ``cubes``: ``engine="cubes"`` with 2 workers: the order model split on 3
  order literals into 8 cubes, RC2 on two cubes at a time
  (:mod:`spartition.exact.cubes`).

Instances (issue 22): attention-forward n=2 d=2 at M = 5, 6; n=2 d=3 at
M = 6 (70 nodes); matmul 3x3x3 (63 nodes) at M = 4 and 8. The default limit
is 60 s per run, so a full run takes at most about 30 minutes.

Usage::

    python benchmarks/maxsat.py                       # the table, 60 s per run
    python benchmarks/maxsat.py --time-limit 20 --only matmul
    python benchmarks/maxsat.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import sys

from spartition.core.registry import build
from spartition.exact.solve import solve_io
from spartition.families.classic.dag import matmul

#: (label, DAG builder, M values).
INSTANCES = (
    ("attention-fwd(n=2,d=2)", lambda: build("attention-forward", n=2, d=2), (5, 6)),
    ("attention-fwd(n=2,d=3)", lambda: build("attention-forward", n=2, d=3), (6,)),
    ("matmul(3,3,3)", lambda: matmul(3, 3, 3), (4, 8)),
)

#: column -> (engine, the workers it is given); the portfolio's two are RC2's and the linear search's processes,
#: the cubes' two RC2 processes.
ENGINES = {"cp-sat": ("cp-sat", 1), "maxsat": ("maxsat", 1), "linear": ("linear", 1),
           "portfolio": ("portfolio", 2), "portfolio-1": ("portfolio", 1), "cubes": ("cubes", 2)}


def run(G, M, engine: str, limit: float, seed: int) -> dict:
    """One solve_io run; its status, I/O, bound, seconds and the sources of both sides."""
    name, workers = ENGINES[engine]
    r = solve_io(G, M, "oneshot", time_limit=limit, workers=workers, seed=seed, engine=name)
    return {"status": r.status, "io": r.io, "bound": r.lower_bound, "seconds": round(r.wall_s, 1),
            "cpu": round(r.cpu_s, 1), "io_from": r.schedule_source, "bound_from": r.bound_source,
            "solver_status": r.solver_status}


def cell(res: dict) -> str:
    status = "OPT" if res["status"] == "OPTIMAL" else res["status"][:4]
    return f"{status} {res['io']}/{res['bound']} ({res['bound_from']}) {res['seconds']:.1f}s"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=60.0, help="seconds per run (default 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="run the instances whose label contains this text")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--engines", default=",".join(ENGINES), help="comma-separated engines (default: all)")
    args = ap.parse_args(argv)
    rows = []
    engines = [e for e in args.engines.split(",") if e]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        ap.error(f"unknown engines {', '.join(unknown)}; valid: {', '.join(ENGINES)}")
    header = f"| instance | nodes | M | {' | '.join(engines)} |"
    print(header)
    print("|" + "---|" * (3 + len(engines)))
    for label, make, Ms in INSTANCES:
        if args.only not in label:
            continue
        G = make()
        for M in Ms:
            row = {"instance": label, "nodes": G.number_of_nodes(), "M": M}
            for engine in engines:
                row[engine] = run(G, M, engine, args.time_limit, args.seed)
            rows.append(row)
            print(f"| {label} | {row['nodes']} | {M} | " + " | ".join(cell(row[e]) for e in engines) + " |",
                  flush=True)
    print(f"\ncells: status io/lower bound (engine behind the bound) wall seconds; limit {args.time_limit:g} s, "
          "one core per worker")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"time_limit": args.time_limit, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
