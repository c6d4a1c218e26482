"""The oneshot frontier targets of issue 22, at one time limit: the portfolio of solve_io on two cores.

Runs ``solve_io(G, M, "oneshot", engine=ENGINE, workers=2, time_limit=T)`` (``auto``: RC2 and the
linear search, the step search taking RC2's core where RC2 stalls at the trivial bound) on

* attention-forward n=2 d=3 (70 nodes), matmul 3x3x3 (63), fft 16 points
  (80): every M from the smallest feasible one up to the first M whose proven
  optimum is the trivial bound (from there on every larger M has the same
  optimum: more red pebbles never cost I/O, and the trivial bound holds at
  every M);
* attention-forward n=3 d=2 (99 nodes) at M = 8 and 12;
* with ``--hyperdag-dir DIR``: every HyperDAG file of DIR (OneStopParallel's
  ``data/spaa/tiny``, not shipped) at the smallest feasible M and twice it.

Each finished run is appended at once to the ``--jsonl`` file, and a run
already there (same label, M, limit and engine) is not repeated, so an
interrupted run resumes where it stopped. The table it prints: status, best
replayed I/O / proven lower bound, the engine behind each side, wall
seconds.

Usage::

    python benchmarks/frontier.py --time-limit 120 --jsonl frontier120.jsonl
    python benchmarks/frontier.py --time-limit 600 --only matmul --jsonl frontier600.jsonl
    python benchmarks/frontier.py --time-limit 120 --hyperdag-dir DIR --only instance_ --jsonl osp.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import ortools

from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
from spartition.core.dag import load_dag
from spartition.core.registry import build
from spartition.exact.solve import solve_io
from spartition.families.classic.dag import fft, matmul

#: (label, DAG builder, explicit M values or None for "every M up to the trivial optimum").
TARGETS = (
    ("attention-fwd(n=2,d=3)", lambda: build("attention-forward", n=2, d=3), None),
    ("matmul(3,3,3)", lambda: matmul(3, 3, 3), None),
    ("fft(16)", lambda: fft(4), None),
    ("attention-fwd(n=3,d=2)", lambda: build("attention-forward", n=3, d=2), (8, 12)),
)


def hyperdag_targets(folder: str) -> list:
    """One target per HyperDAG file: the smallest feasible M and twice it (the ``.hdag`` when a stem has both)."""
    files = {}
    for path in sorted(Path(folder).iterdir()):
        if path.suffix in (".hdag", ".lhdag") and (path.stem not in files or path.suffix == ".hdag"):
            files[path.stem] = path
    out = []
    for stem, path in sorted(files.items()):
        G = load_dag(str(path))
        M0 = min_feasible_memory(G)
        out.append((stem, lambda G=G: G, (M0, 2 * M0)))
    return out


def run(G, M: int, limit: float, engine: str, seed: int) -> dict:
    """One solve_io run: status, both sides, the engines behind them, seconds."""
    r = solve_io(G, M, "oneshot", time_limit=limit, workers=2, seed=seed, engine=engine)
    return {"status": r.status, "io": r.io, "bound": r.lower_bound, "io_from": r.schedule_source,
            "bound_from": r.bound_source, "seconds": round(r.wall_s, 1), "cpu": round(r.cpu_s, 1)}


def cell(row: dict) -> str:
    status = "OPTIMAL" if row["status"] == "OPTIMAL" else row["status"]
    if row["status"] == "OPTIMAL":
        return f"{status} {row['io']} ({row['bound_from']}), {row['seconds']:.0f} s"
    return f"{status} {row['io']} / {row['bound']} ({row['io_from']} / {row['bound_from']}), {row['seconds']:.0f} s"


def load_done(path: str | None) -> dict:
    done = {}
    if path and Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                done[(row["instance"], row["M"], row["time_limit"], row["engine"])] = row
    return done


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per run (default 120)")
    ap.add_argument("--engine", default="auto", help="solve_io engine (default auto: the portfolio on 2 workers)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", default="", help="|-separated substrings of the labels to run")
    ap.add_argument("--hyperdag-dir", metavar="DIR", help="also every HyperDAG file of DIR at M = min and 2 min")
    ap.add_argument("--max-M", type=int, default=32, help="stop the every-M sweeps here (default 32)")
    ap.add_argument("--M", default="", help="comma-separated M: run only these (default: each target's own)")
    ap.add_argument("--jsonl", help="append each run here; runs already in it are not repeated")
    args = ap.parse_args(argv)
    targets = list(TARGETS) + (hyperdag_targets(args.hyperdag_dir) if args.hyperdag_dir else [])
    wanted = [s for s in args.only.split("|") if s]
    done = load_done(args.jsonl)
    print(f"| instance | nodes | trivial | M | result (limit {args.time_limit:g} s, engine {args.engine}, 2 workers) |")
    print("|---|---|---|---|---|")
    only_M = {int(x) for x in args.M.split(",") if x}
    for label, make, Ms in targets:
        if wanted and not any(s in label for s in wanted):
            continue
        G = make()
        trivial = trivial_lower_bound(G)
        M = min_feasible_memory(G)
        for M in (Ms if Ms is not None else range(M, args.max_M + 1)):
            if only_M and M not in only_M:
                continue
            key = (label, M, args.time_limit, args.engine)
            row = done.get(key)
            if row is None:
                row = {"instance": label, "nodes": G.number_of_nodes(), "trivial": trivial, "M": M,
                       "time_limit": args.time_limit, "engine": args.engine, "seed": args.seed,
                       "ortools": ortools.__version__, **run(G, M, args.time_limit, args.engine, args.seed)}
                if args.jsonl:
                    with open(args.jsonl, "a") as fh:
                        fh.write(json.dumps(row) + "\n")
            print(f"| {label} | {row['nodes']} | {trivial} | {M} | {cell(row)} |", flush=True)
            if Ms is None and row["status"] == "OPTIMAL" and row["io"] == trivial:
                break  # every larger M has this optimum
    return 0


if __name__ == "__main__":
    sys.exit(main())
