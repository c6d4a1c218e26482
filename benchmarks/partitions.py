"""Minimum 2M-partitions and class capacities by CP-SAT on small DAG families.

Run: python benchmarks/partitions.py [--time-limit 120] [--workers 2] [--big 300] [--big-relaxed] [--big-only] [--curve] [--quick]

Prints one table. For each DAG and M: the minimum 2M-partition (status, P
found, proven lower bound, seconds) and the class capacity U(2M) of the
family's "internal" nodes (the products for matrix product and attention,
unit weight otherwise; convex classes), with status, best set found, proven
upper bound and seconds. ``--big S`` adds a second table: the capacity of
the Q K^T products in the exact-attention DAGs with d = 4 and n = 4 (320
nodes) or n = 8 (1184 nodes) for M = d^2 = 16, X = M + 1 and X = 2M, by
CP-SAT on the full DAG (a set found, time limit S seconds) and by the exact
matrix-product decomposition of the ``restrict`` relaxation (the sub-DAG
ending at the S nodes; its maximum is a proven upper bound on U), then by
CP-SAT on the full DAG with the objective capped at that bound (time limit
S seconds): when it finds a set of that weight, U is proven.
``--big-relaxed`` first runs the CP-SAT-only alternatives for comparison:
the full DAG uncapped, and the same relaxation with row/column symmetry
breaking and the product-layer cuts. ``--curve`` prints the relaxation's
U(X) of the n = 8 DAG for X = M+1..4M and the best capacity bound over X.

Targets: P(2M) proven for every DAG here (each within 2 minutes); the big
capacity proven within 10 minutes for some M >= d^2.
"""

from __future__ import annotations

import argparse
import time

from spartition.errors import UnknownFamily
from spartition.partition.capacity import class_capacity
from spartition.partition.minimum import min_partition
from spartition.core.registry import build


def cases(quick: bool):
    rows = [
        ("matmul", {"a": 2, "b": 2, "c": 2}, range(3, 9), "op=mul"),
        ("fft", {"k": 3}, range(3, 7), None),
        ("reduction", {"k": 8, "shape": "tree"}, range(2, 6), None),
        ("reduction", {"k": 16, "shape": "tree"}, range(2, 6), None),
        ("attention-forward", {"n": 2, "d": 1}, range(3, 9), "op=mul,tensor=QK"),
        ("attention-forward", {"n": 2, "d": 2}, range(3, 9), "op=mul,tensor=QK"),
    ]
    if quick:
        rows = [(f, p, list(Ms)[:2], w) for f, p, Ms, w in rows]
    return rows


def _label(name, params):
    return name + "(" + ",".join(str(v) for v in params.values()) + ")"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--time-limit", type=float, default=120.0, help="seconds per CP-SAT run")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--big", type=float, default=0.0, help="also run the n=8, d=4 attention capacity (seconds)")
    ap.add_argument("--big-relaxed", action="store_true",
                    help="--big runs solve the restricted relaxation (upper bound on U only)")
    ap.add_argument("--quick", action="store_true", help="two values of M per DAG")
    ap.add_argument("--big-only", action="store_true", help="skip the table of small DAGs")
    ap.add_argument("--curve", action="store_true",
                    help="the relaxation's U(X) for n=8, d=4 over X = M+1..4M and the capacity bound it gives")
    args = ap.parse_args(argv)
    head = (f"{'dag':26s} {'nodes':>5s} {'M':>3s} {'S=X':>4s} | {'P status':9s} {'P':>3s} {'P_lb':>4s} {'P_s':>7s} | "
            f"{'weight':18s} {'U status':9s} {'U_found':>7s} {'U_ub':>5s} {'U_s':>7s}")
    if not args.big_only:
        print(head)
        print("-" * len(head))
    for name, params, Ms, weight in ([] if args.big_only else cases(args.quick)):
        try:
            G = build(name, **params)
        except UnknownFamily:
            print(f"{_label(name, params):26s} (family not registered: skipped)")
            continue
        n = G.number_of_nodes()
        for M in Ms:
            S = 2 * M
            p = min_partition(G, S, time_limit=args.time_limit, workers=args.workers)
            c = class_capacity(G, S, weight=weight, convex=True, time_limit=args.time_limit, workers=args.workers)
            print(f"{_label(name, params):26s} {n:5d} {M:3d} {S:4d} | {p.status:9s} {p.num_classes:3d} "
                  f"{p.lower_bound:4d} {p.wall_s:7.2f} | {c.weight:18s} {c.status:9s} {c.capacity:7d} "
                  f"{c.upper_bound:5d} {c.wall_s:7.2f}", flush=True)
    if args.big > 0:
        big(args)
    if args.curve:
        curve()


def curve(n: int = 8, d: int = 4, M: int = 16):
    """U(X) <= the relaxation's maximum for every X in M+1..4M, and (X - M)(ceil(w / U) - 1) from it."""
    from spartition.partition.product import product_capacity

    G = build("attention-forward", n=n, d=d)
    keep = [v for v in G if v.startswith("S_")]
    print(f"\nattention-forward n={n}, d={d}, M={M}: capacity bound from the exact relaxation "
          f"(product decomposition), weight = Q K^T products")
    head = f"{'X':>3s} {'U_ub':>5s} {'P(X)>=':>6s} {'bound':>6s} {'s':>6s}"
    print(head)
    print("-" * len(head))
    best = (0, None)
    for X in range(M + 1, 4 * M + 1):
        r = product_capacity(G, X, weight="op=mul,tensor=QK", restrict=keep)
        P = -(-r.total_weight // r.upper_bound)
        value = (X - M) * (P - 1)
        best = max(best, (value, X))
        print(f"{X:3d} {r.upper_bound:5d} {P:6d} {value:6d} {r.wall_s:6.2f}", flush=True)
    print(f"best capacity bound: {best[0]} at X = {best[1]}")


def big(args):
    """U(X) of the Q K^T products of exact attention, d = 4: a set of the full DAG vs the relaxation's maximum."""
    if not args.big_only:
        print()
    head = (f"{'dag':26s} {'nodes':>5s} {'M':>3s} {'X':>3s} | {'method':34s} {'status':16s} {'U_found':>7s} "
            f"{'U_ub':>5s} {'s':>7s}")
    print(head)
    print("-" * len(head))
    M = 16
    for n, d, X in ((4, 4, M + 1), (8, 4, M + 1), (8, 4, 2 * M)):
        params = {"n": n, "d": d}
        try:
            G = build("attention-forward", **params)
        except UnknownFamily:
            print("attention-forward: family not registered: skipped")
            return
        keep = [v for v in G if v.startswith("S_")]
        label = f"{_label('attention-forward', params):26s} {G.number_of_nodes():5d} {M:3d} {X:3d} | "
        runs = []
        if args.big_relaxed:
            runs += [("cp-sat, full DAG", {}),
                     ("cp-sat, relaxation (+sym, cuts)", {"restrict": keep, "symmetry": "rows+cols", "layer_cuts": True})]
        runs += [("product decomposition, relaxation", {"restrict": keep, "method": "product"}),
                 ("cp-sat, full DAG capped by it", {"relaxation": keep})]
        found, upper = 0, None
        for what, extra in runs:
            t0 = time.perf_counter()
            c = class_capacity(G, X, weight="op=mul,tensor=QK", convex=True, time_limit=args.big,
                               workers=args.workers, **extra)
            found = max(found, c.capacity)
            upper = c.upper_bound if upper is None else min(upper, c.upper_bound)
            print(f"{label}{what:34s} {c.status:16s} {c.capacity:7d} {c.upper_bound:5d} "
                  f"{time.perf_counter() - t0:7.2f}", flush=True)
        status = "U PROVEN" if found == upper else "U BOUNDED"
        P = -(-c.total_weight // upper)
        print(f"{label}{'combined':34s} {status:16s} {found:7d} {upper:5d} {'':7s}  "
              f"P(X) >= ceil({c.total_weight}/{upper}) = {P}; Q >= (X - M)(P - 1) = {(X - M) * (P - 1)}",
              flush=True)

if __name__ == "__main__":
    main()
