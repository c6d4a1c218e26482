"""Benchmark of exact optimal I/O: the new solver vs today's formulation vs plain baseline vs brute force.

Prints one table (all methods in the same run) with, per instance and M:
nodes, M, and for each method status / io / bound / seconds, plus the
speed-up ratio (today's seconds / new seconds; ``>`` when today's formulation
hit its limit, so the true speed-up is larger). Methods:

* ``new``: :func:`spartition.exact.solve.solve_io` as it is now
  (``formulation="auto"``: for recompute the exact step search of
  :mod:`spartition.exact.steps`, then the events model with the harmless cap);
* ``today``: the formulation before issue 15 -- for recompute the events
  model with ``2 N`` events (a cap, OPTIMAL_WITHIN_CAP at best); for oneshot
  the order model, the same as ``new`` (the column is skipped);
* ``baseline``: the plain frame-axiom model;
* ``brute``: the move-by-move state search of :mod:`spartition.exact.brute`.

Instances (``--variant oneshot``): matrix product (2,2,2), M = 3..8; FFT on 8
points, M = 3..6; exact-attention forward n=2, d=1 and n=2, d=2. Recompute
(``--variant recompute``): matrix product (2,2,2), attention-forward n=2
d=1, FFT on 8 points. Without a list of M, every M from the smallest
feasible to the first M whose optimum is the trivial bound.

Brute force runs in a child process killed after ``--brute-limit`` seconds.
``--largest`` adds a second table: bigger members of each family, tuned
model only, to find the largest instances proven optimal.

Real benchmark DAGs (``--hyperdag-dir DIR``, either variant): one more
instance per HyperDAG file in ``DIR`` (``*.hdag`` and ``*.lhdag``, either
layout; when a stem has both, the ``.hdag``), labelled by the file stem, at
M = the smallest feasible (``1 +`` max in-degree) and twice that; ``--only``
selects among them like among the others, and the label column widens to
fit the stems. The set meant is the "tiny" set of OneStopParallel
(github.com/Algebraic-Programming/OneStopParallel, folder
``data/spaa/tiny``): 16 HyperDAG_DB instances (CG, bicgstab, exp, kNN,
k-means, pregel, spmv; 40 to 78 nodes) from the HyperDAG_DB benchmark of
Papp, Anegg, Karanasiou and Yzelman, "Efficient Multi-Processor Scheduling
in Increasingly Realistic Models", SPAA 2024 (doi 10.1145/3626183.3659972),
a multiprocessor DAG-scheduling paper. The files are not shipped with this
repository (we do not redistribute them): fetch them from there into a
folder of your own. In that folder ``.lhdag`` is
OneStopParallel's name for the legacy (plain) layout, but some of its
versions hold the HyperdagDB layout under either extension; the reader
tells the layouts apart by their line counts, so both read.

Usage::

    python benchmarks/exact_io.py                  # full run (long)
    python benchmarks/exact_io.py --quick          # small limits
    python benchmarks/exact_io.py --variant recompute --workers 2 --time-limit 600 --today-limit 120
    python benchmarks/exact_io.py --time-limit 60 --baseline-limit 20 --brute-limit 60 --json out.json
    python benchmarks/exact_io.py --hyperdag-dir ~/osp-tiny --only spmv_N6 --time-limit 60 --brute-limit 0
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import sys
import time
from pathlib import Path

from spartition.families.classic.dag import fft, matmul
from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
from spartition.core.dag import load_dag
from spartition.errors import InvalidDAG
from spartition.core.registry import build
from spartition.exact.solve import solve_io


def _brute_child(G, M, variant, queue):
    from spartition.exact.brute import brute_force

    t = time.perf_counter()
    r = brute_force(G, M, variant, max_states=None)
    queue.put({"status": "OPTIMAL", "io": r.io, "bound": r.io, "seconds": time.perf_counter() - t})


def run_brute(G, M, variant, limit):
    """Brute force in a child process; TIMEOUT after ``limit`` seconds."""
    if limit <= 0:
        return {"status": "SKIPPED", "io": None, "bound": None, "seconds": 0.0}
    queue = mp.Queue()
    p = mp.Process(target=_brute_child, args=(G, M, variant, queue))
    t = time.perf_counter()
    p.start()
    p.join(limit)
    if p.is_alive():
        p.terminate()
        p.join()
        return {"status": "TIMEOUT", "io": None, "bound": None, "seconds": time.perf_counter() - t}
    try:
        return queue.get(timeout=5)
    except Exception:  # child died (e.g. out of memory)
        return {"status": "ERROR", "io": None, "bound": None, "seconds": time.perf_counter() - t}


def run_solver(G, M, variant, formulation, limit, workers, seed, **kw):
    r = solve_io(G, M, variant, time_limit=limit, workers=workers, seed=seed, formulation=formulation, **kw)
    return {"status": r.status, "io": r.io, "bound": r.lower_bound, "seconds": r.wall_s, "cpu": r.cpu_s,
            "io_from": r.schedule_source, "bound_from": r.bound_source}


#: The HyperDAG files ``--hyperdag-dir`` takes, the preferred first when one stem has both.
HYPERDAG_SUFFIXES = (".hdag", ".lhdag")
#: The least width of the label column (the family labels fit).
LABEL_WIDTH = 24


def family_instances(args):
    """(label, G, list of M or None for 'until trivial bound') of the built-in families."""
    if args.variant == "recompute":
        out = [("matmul(2,2,2)", matmul(2, 2, 2), None),
               ("attention-fwd(n=2,d=1)", build("attention-forward", n=2, d=1), None),
               ("fft(8 points)", fft(3), None)]
        if args.quick:
            out = out[:1] + [(out[1][0], out[1][1], [4, 5])]
        return out
    out = [
        ("matmul(2,2,2)", matmul(2, 2, 2), list(range(3, 9))),
        ("fft(8 points)", fft(3), list(range(3, 7))),
    ]
    for d in (1, 2):
        try:
            G = build("attention-forward", n=2, d=d)
        except Exception:  # family not registered: not expected in this repository
            raise SystemExit("attention-forward family is not registered") from None
        out.append((f"attention-fwd(n=2,d={d})", G, None))
    if args.quick:
        out = [(lab, G, Ms[:3] if Ms else None) for lab, G, Ms in out]
    return out


def hyperdag_instances(directory):
    """(file stem, G, [M0, 2 M0]) per HyperDAG file in ``directory``, M0 the smallest feasible M.

    Files ending in one of :data:`HYPERDAG_SUFFIXES` count, one per stem
    (``.hdag`` over ``.lhdag``); either layout reads whatever the extension.
    """
    folder = Path(directory).expanduser()
    if not folder.is_dir():
        raise SystemExit(f"--hyperdag-dir {directory}: not a directory")
    chosen = {}
    for suffix in reversed(HYPERDAG_SUFFIXES):  # the preferred suffix comes last and wins
        chosen.update({path.stem: path for path in folder.glob(f"*{suffix}") if path.is_file()})
    if not chosen:
        raise SystemExit(f"--hyperdag-dir {directory}: no {' or '.join(HYPERDAG_SUFFIXES)} file there")
    out = []
    for stem in sorted(chosen):
        try:
            G = load_dag(chosen[stem], "hdag")
        except InvalidDAG as exc:
            raise SystemExit(f"--hyperdag-dir: {exc}") from None
        m0 = min_feasible_memory(G)
        out.append((stem, G, sorted({m0, 2 * m0})))
    return out


def instances(args):
    """(label, G, list of M or None for 'until trivial bound'): the families, then ``--hyperdag-dir``."""
    out = family_instances(args)
    if args.hyperdag_dir:
        out += hyperdag_instances(args.hyperdag_dir)
    return out


def _cell(res):
    if res is None:
        return "-"
    io = "-" if res["io"] is None else res["io"]
    bd = "-" if res["bound"] is None else res["bound"]
    return f"{res['status'][:8]:<8} {io!s:>4} {bd!s:>4} {res['seconds']:7.2f}"


def measure(G, M, args) -> dict:
    """Every method on ``G`` at ``M``: the row's cells (new, today, baseline, brute, speed-up)."""
    tuned = run_solver(G, M, args.variant, "auto", args.time_limit, args.workers, args.seed)
    today = None
    if args.variant == "recompute":
        N = sum(1 for v in G if G.in_degree(v))
        today = run_solver(G, M, args.variant, "events", args.today_limit, args.workers, args.seed,
                           recompute_events=2 * N)
    base = None
    if not args.no_baseline:
        base = run_solver(G, M, args.variant, "baseline", args.baseline_limit, args.workers, args.seed)
    brute_limit = args.brute_limit if G.number_of_nodes() <= args.brute_max_nodes else 0
    brute = run_brute(G, M, args.variant, brute_limit)
    ratio = ""
    if today is not None and tuned["seconds"] > 0:
        ratio = f"{today['seconds'] / tuned['seconds']:.1f}"
        if today["status"] != "OPTIMAL" and tuned["status"] == "OPTIMAL":
            ratio = ">" + ratio  # today's formulation stopped without the proof
    return {"nodes": G.number_of_nodes(), "M": M, "tuned": tuned, "today": today,
            "baseline": base, "brute": brute, "ratio": ratio}


def run_table(args, only, rows) -> None:
    """The main table: every selected instance at its M (or from the smallest M to the trivial bound)."""
    selected = [(label, G, Ms) for label, G, Ms in instances(args) if not only or any(s in label for s in only)]
    w = max([LABEL_WIDTH] + [len(label) for label, _, _ in selected])
    header = (
        f"{'instance':<{w}} {'nodes':>5} {'M':>3} | {'new: status io bound s':<30} | {'today: status io bound s':<30} | "
        f"{'baseline: status io bound s':<30} | {'brute: status io bound s':<30} | speed-up | new cpu s"
    )
    print(header)
    print("-" * len(header))
    for label, G, Ms in selected:
        trivial = trivial_lower_bound(G)
        M = min_feasible_memory(G)
        todo = list(Ms) if Ms else None
        while True:
            if todo is not None:
                if not todo:
                    break
                M = todo.pop(0)
            row = {"instance": label, **measure(G, M, args)}
            rows.append(row)
            tuned = row["tuned"]
            print(
                f"{label:<{w}} {row['nodes']:>5} {M:>3} | {_cell(tuned):<30} | {_cell(row['today']):<30} | "
                f"{_cell(row['baseline']):<30} | {_cell(row['brute']):<30} | {row['ratio']:>8} | {tuned['cpu']:.2f}",
                flush=True,
            )
            if todo is None:
                if tuned["status"] == "OPTIMAL" and tuned["io"] == trivial:
                    break
                M += 1
                if M > G.number_of_nodes():
                    break


def run_largest(args, only, rows) -> None:
    """The ``--largest`` table: bigger family members, tuned model only."""
    print()
    print(f"{'larger instance':<24} {'nodes':>5} {'M':>3} | tuned: status io bound s")
    bigger = [
        ("matmul(2,2,3)", matmul(2, 2, 3)),
        ("matmul(3,2,2)", matmul(3, 2, 2)),
        ("matmul(2,3,2)", matmul(2, 3, 2)),
        ("matmul(3,3,3)", matmul(3, 3, 3)),
        ("fft(16 points)", fft(4)),
        ("attention-fwd(n=3,d=1)", build("attention-forward", n=3, d=1)),
        ("attention-fwd(n=2,d=3)", build("attention-forward", n=2, d=3)),
    ]
    for label, G in bigger:
        if only and not any(s in label for s in only):
            continue
        m0 = min_feasible_memory(G)
        for M in (m0, m0 + 1, m0 + 3):
            tuned = run_solver(G, M, args.variant, "auto", args.time_limit, args.workers, args.seed)
            rows.append({"instance": label, "nodes": G.number_of_nodes(), "M": M, "tuned": tuned, "largest": True})
            print(f"{label:<24} {G.number_of_nodes():>5} {M:>3} | {_cell(tuned)} (cpu {tuned['cpu']:.2f})", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--time-limit", type=float, default=600.0, help="tuned model, seconds per instance")
    ap.add_argument("--today-limit", type=float, default=120.0, help="today's formulation, seconds per instance")
    ap.add_argument("--baseline-limit", type=float, default=60.0, help="baseline model, seconds per instance")
    ap.add_argument("--brute-limit", type=float, default=300.0, help="brute force, seconds (0: skip)")
    ap.add_argument("--brute-max-nodes", type=int, default=40, help="skip brute force on larger DAGs")
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--variant", choices=("oneshot", "recompute"), default="oneshot")
    ap.add_argument("--quick", action="store_true", help="tuned 20 s, baseline 10 s, brute 20 s, fewer M")
    ap.add_argument("--only", default="", help="|-separated substrings of instance labels to run")
    ap.add_argument("--no-baseline", action="store_true")
    ap.add_argument("--largest", action="store_true", help="also try bigger family members (tuned only)")
    ap.add_argument("--hyperdag-dir", metavar="DIR",
                    help="also one instance per .hdag/.lhdag file in DIR (label: file stem; M: smallest feasible "
                         "and twice that), e.g. OneStopParallel's data/spaa/tiny (not shipped)")
    ap.add_argument("--json", help="write all rows as JSON here")
    args = ap.parse_args(argv)
    if args.quick:
        args.time_limit, args.today_limit, args.baseline_limit, args.brute_limit = 20.0, 10.0, 10.0, 20.0

    rows = []
    only = [s for s in args.only.split("|") if s]
    run_table(args, only, rows)
    if args.largest:
        run_largest(args, only, rows)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"argv": sys.argv[1:], "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
