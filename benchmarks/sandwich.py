"""The sandwich of dense forward attention: today's ratio and the new one, per (n, d, M).

Run: python benchmarks/sandwich.py [--n 32,64] [--d 2,4,8] [--M 4,8] [--time-limit S] [--markdown] [--backward] [--no-before]
       [--variant recompute|oneshot]

Every *now* column is for the game of ``--variant`` (default ``recompute``, the
standard game the papers state their theorems in; ``oneshot`` adds the bounds
proven for that game only). The *before* columns are valid in both.

For every instance of the grid (M from d to 4 d^2, both sides of M = d^2,
M >= 3) it prints

* **before**: the lower bound the tool derived until now, the larger of
  the trivial ``4 n d`` and ``max_X (X - M)(ceil(n^2 d / U(X)) - 1)`` with
  the Loomis-Whitney application ``U(X) = 2X + X^(3/2)/2`` (a checked
  application, not a theorem for attention), against the cheapest replayed
  schedule of the published algorithms at their default parameters
  (``flash-forward``, ``square-tiling-forward``, ``standard-forward``,
  ``greedy``);
* **now**: :func:`spartition.study.sandwich.sandwich_row`: the best proven
  lower bound of the game (oneshot: the segment count of
  :mod:`spartition.families.attention.forward.bounds`; recompute: those of
  :mod:`spartition.families.attention.forward.recompute_bounds`) against the
  cheapest replayed schedule of every registered algorithm;

and the ratio upper / lower of each. Every upper value is a replayed schedule.

With ``--backward`` the same for ``attention-backward-flash`` (FlashAttention's
backward pass, Li et al.): *before* is the trivial ``8 n d + n`` against
``flash-backward`` and ``greedy`` at their defaults, *now* the segment count
``segment-backward-lower`` against the cheapest replayed schedule.

With ``--approx`` the same for ``approx-attention`` (Papp, Sobczyk &
Zouzias; column order ``lex``) on the Case I and Case III instances of the
claims' constant grid (n = 16, 32; d = 3, 4, 6; g = 1, 2; M = 16 .. 512), in
the game of ``--variant`` (default ``recompute``, the game the paper's
algorithms regenerate ``U1`` and ``U2`` in): *before* is the trivial bound
against the cheapest of the paper's four algorithms at their defaults and
greedy, *now* :func:`sandwich_row`. The case is the paper's
(:func:`spartition.families.approx_attention.formulas.approx_case`).
"""

from __future__ import annotations

import argparse
import math
import time

from spartition.core.game import replay
from spartition.core.registry import DEFAULT_MAX_NODES, algorithm, build
from spartition.errors import IllegalMove, InfeasibleMemory, InvalidDAG
from spartition.families.approx_attention.formulas import approx_case
from spartition.study.claim_quantities import derived_value
from spartition.study.sandwich import sandwich_row
from spartition.study.tables import render_table

PUBLISHED = ("flash-forward", "square-tiling-forward", "standard-forward", "greedy")
PUBLISHED_BACKWARD = ("flash-backward", "greedy")
PUBLISHED_APPROX = ("approx-case-i", "approx-lemma-3.1", "approx-key-lemma", "approx-lemma-3.3", "greedy")
#: the claims' constant grid (spartition.families.approx_attention.constants.CONSTANT_GRID, its Cases I-III part)
APPROX_GRID = {"n": (16, 32), "d": (3, 4, 6), "g": (1, 2), "M": (16, 24, 48, 64, 128, 256, 512)}


def memories(d: int) -> list[int]:
    """M from d to 4 d^2: d, 2d, d^2/2, d^2, 2 d^2, 4 d^2 (distinct, at least 3)."""
    return sorted({m for m in (d, 2 * d, d * d // 2, d * d, 2 * d * d, 4 * d * d) if m >= 3})


def before(G, n: int, d: int, M: int, backward: bool = False) -> tuple:
    if backward:
        lower = 8 * n * d + n
    else:
        lower = max(4 * n * d, derived_value(lambda X: 2 * X + X**1.5 / 2, n * n * d, M, range(M + 1, 12 * M + 1))[0])
    best = None
    for name in PUBLISHED_BACKWARD if backward else PUBLISHED:
        try:
            io = replay(G, algorithm(name).generate(G, M)).io
        except InfeasibleMemory:
            continue
        if best is None or io < best[0]:
            best = (io, name)
    return int(lower), best


def run(ns, ds, time_limit, backward: bool = False, skip_before: bool = False, Ms=None,
        max_nodes: int = DEFAULT_MAX_NODES, variant: str = "recompute") -> list[list]:
    rows = []
    for n in ns:
        for d in ds:
            G = build("attention-backward-flash" if backward else "attention-forward", n=n, d=d, max_nodes=max_nodes)
            for M in memories(d):
                if Ms is not None and M not in Ms:
                    continue
                t0 = time.perf_counter()
                if skip_before:
                    old_lower, old_upper = "-", ("-", "not run")
                else:
                    old_lower, old_upper = before(G, n, d, M, backward)
                if old_upper is None:
                    old_upper = ("-", "none runs")
                row = sandwich_row(G, M, variant, time_limit=time_limit)
                up = row.upper
                old_ratio = f"{old_upper[0] / old_lower:.1f}" if old_upper[0] != "-" else "-"
                rows.append([n, d, M, old_lower, old_upper[0], old_upper[1], old_ratio,
                             row.lower.value, row.lower.method.removeprefix("formula:"), up.value if up else "-",
                             up.method.removeprefix("algorithm:") if up else "-",
                             f"{row.ratio:.1f}" if row.ratio else "-", "yes" if row.time_limited else "",
                             f"{time.perf_counter() - t0:.0f}"])
                print(render_table(HEADERS, rows[-1:]).splitlines()[-1], flush=True)
    return rows


def cheapest_published(G, M: int, names, variant: str = "oneshot"):
    """The cheapest replayed schedule of ``names`` at their defaults: ``(io, name)``, or ``None`` if none runs."""
    best = None
    for name in names:
        try:
            io = replay(G, algorithm(name).generate(G, M, variant=variant) if name.startswith("approx-")
                        else algorithm(name).generate(G, M)).io
        except (InfeasibleMemory, InvalidDAG, IllegalMove):
            continue
        if best is None or io < best[0]:
            best = (io, name)
    return best


def run_approx(ns, cases, time_limit, variant: str) -> list[list]:
    rows = []
    for n in ns:
        for d in APPROX_GRID["d"]:
            for g in APPROX_GRID["g"]:
                G = build("approx-attention", n=n, d=d, g=g)
                p = {"d": d, "g": g, "r": math.comb(d + g, g)}
                for M in APPROX_GRID["M"]:
                    case = approx_case(p, M)
                    if case not in cases:
                        continue
                    t0 = time.perf_counter()
                    old = cheapest_published(G, M, PUBLISHED_APPROX, variant)
                    row = sandwich_row(G, M, variant, time_limit=time_limit)
                    up = row.upper
                    old_lower = row.lowers[0].value  # the trivial bound, the only one before
                    rows.append([n, d, g, p["r"], M, case, old_lower, old[0] if old else "-", old[1] if old else "-",
                                 f"{old[0] / old_lower:.2f}" if old else "-", row.lower.value,
                                 row.lower.method.removeprefix("formula:"), up.value if up else "-",
                                 up.method.removeprefix("algorithm:") if up else "-",
                                 f"{row.ratio:.2f}" if row.ratio else "-", "yes" if row.time_limited else "",
                                 f"{time.perf_counter() - t0:.0f}"])
                    print(render_table(APPROX_HEADERS, rows[-1:]).splitlines()[-1], flush=True)
    return rows


APPROX_HEADERS = ["n", "d", "g", "r", "M", "case", "lower before", "upper before", "by", "ratio before", "lower now",
                  "by", "upper now", "by", "ratio now", "time-limited", "s"]

HEADERS = ["n", "d", "M", "lower before", "upper before", "by", "ratio before", "lower now", "by", "upper now", "by",
           "ratio now", "time-limited", "s"]


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="32,64", help="comma-separated n (default 32,64; the issue's grid adds 128,256)")
    ap.add_argument("--d", default="2,4,8")
    ap.add_argument("--time-limit", type=float, default=None, help="seconds per row for the upper side")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--backward", action="store_true", help="attention-backward-flash instead of attention-forward")
    ap.add_argument("--approx", action="store_true",
                    help="approx-attention on the Case I and III instances of the claims' grid (--n 16,32)")
    ap.add_argument("--cases", default="I,III", help="with --approx: the paper's cases to run (default I,III)")
    ap.add_argument("--variant", default="recompute",
                    help="the game of the *now* columns (default recompute, the papers' own; oneshot for the "
                         "bounds proven for that game only)")
    ap.add_argument("--no-before", action="store_true",
                    help="skip the before columns (their schedules and greedy run without a time limit: slow at n = 256)")
    ap.add_argument("--M", default=None, help="comma-separated M: only these rows of the grid")
    ap.add_argument("--max-nodes", type=int, default=DEFAULT_MAX_NODES,
                    help="the size guard of the DAGs built (n = 256, d = 8 has 2,168,832 nodes)")
    args = ap.parse_args(argv)
    if args.approx:
        ns = [int(x) for x in args.n.split(",")] if args.n != "32,64" else list(APPROX_GRID["n"])
        rows = run_approx(ns, set(args.cases.split(",")), args.time_limit, args.variant)
        print()
        print(render_table(APPROX_HEADERS, rows, markdown=args.markdown))
        return
    rows = run([int(x) for x in args.n.split(",")], [int(x) for x in args.d.split(",")], args.time_limit,
               args.backward, args.no_before, None if args.M is None else {int(x) for x in args.M.split(",")},
               args.max_nodes, args.variant)
    print(f"game: {args.variant}")
    print(render_table(HEADERS, rows, markdown=args.markdown))


if __name__ == "__main__":
    main()
