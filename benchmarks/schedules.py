"""Published attention algorithms as schedules: I/O against M, and generation/replay at scale.

Run: python benchmarks/schedules.py [--quick] [--skip-scale] [--json FILE]

1. Table of replayed I/O against M on attention-forward n = 64, d = 8
   (136,704 nodes) for the standard algorithm, square tiling, FlashAttention
   and the greedy baseline; every replayed I/O is checked against the
   generator's closed form. The crossover of square tiling and
   FlashAttention sits near M = d^2 (Saha & Ye).
2. The same comparison for the backward pass from the closed forms only
   (FlashAttention backward against Li et al.'s Algorithm 6, n = 64, d = 8).
3. Scale: attention-forward n = 128, d = 16 (1,071,104 nodes): seconds to
   build the networkx DAG, to compact it, and, per algorithm, to generate
   the schedule and to replay it.
"""

from __future__ import annotations

import argparse
import json
import time

from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.backward.flash import flash_backward_io
from spartition.families.attention.backward.li_small_cache import li_small_cache_backward_io
from spartition.families.attention.forward.flash import flash_blocks, flash_forward, flash_forward_io
from spartition.families.attention.forward.square_tiling import square_tile, square_tiling_forward, square_tiling_forward_io
from spartition.families.attention.forward.standard import standard_forward, standard_forward_io
from spartition.core.dag import compact
from spartition.errors import InfeasibleMemory
from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule

FORWARD = {
    "standard": (standard_forward, standard_forward_io),
    "square": (square_tiling_forward, square_tiling_forward_io),
    "flash": (flash_forward, flash_forward_io),
}


def io_table(n, d, Ms, greedy=True):
    """Replayed I/O of every forward algorithm at each M (None where its tiling does not fit)."""
    t0 = time.perf_counter()
    G = attention_forward(n, d)
    c = compact(G)
    print(f"attention-forward n={n} d={d}: {c.n} nodes, built+compacted in {time.perf_counter() - t0:.1f} s")
    rows = []
    for M in Ms:
        row = {"M": M}
        for name, (gen, formula) in FORWARD.items():
            try:
                s = gen(G, M)
            except InfeasibleMemory:
                row[name] = None
                continue
            r = replay(c, s)
            expected = formula(G.graph["params"], M)
            if r.io != expected:
                raise AssertionError(f"{name} at M={M}: replayed {r.io} != closed form {expected}")
            row[name] = r.io
        if greedy:
            row["greedy"] = replay(c, greedy_schedule(c, M)).io
        row["b"] = square_tile(M)
        row["B_c"] = flash_blocks(d, M)[0] if M >= 4 * d + 4 else None
        rows.append(row)
    cols = ["standard", "square", "flash"] + (["greedy"] if greedy else [])
    print(f"{'M':>6} {'M/d^2':>6} {'b':>3} {'B_c':>4} " + " ".join(f"{k:>10}" for k in cols) + "  best")
    for row in rows:
        vals = {k: row[k] for k in ("square", "flash") if row.get(k) is not None}
        best = min(vals, key=vals.get) if vals else "-"
        cells = " ".join(f"{row[k] if row.get(k) is not None else '-':>10}" for k in cols)
        print(f"{row['M']:>6} {row['M'] / d**2:>6.2f} {row['b']:>3} {row['B_c'] or '-':>4} {cells}  {best}")
    return rows


def backward_table(n, d, Ms):
    """Closed-form I/O of FlashAttention backward and Li et al.'s Algorithm 6 (dense)."""
    params = {"n": n, "d": d}
    rows = []
    print(f"\nbackward, closed forms, n={n} d={d}")
    print(f"{'M':>6} {'M/d^2':>6} {'flash-backward':>15} {'li-alg6':>10}")
    for M in Ms:
        try:
            fb = flash_backward_io(params, M)
        except InfeasibleMemory:
            fb = None
        li = li_small_cache_backward_io(params, M)
        rows.append({"M": M, "flash-backward": fb, "li-small-cache-backward": li})
        print(f"{M:>6} {M / d**2:>6.2f} {fb if fb is not None else '-':>15} {li:>10}")
    return rows


def scale(n, d, cases):
    """Seconds to build, compact, generate and replay at scale."""
    t0 = time.perf_counter()
    G = attention_forward(n, d)
    t1 = time.perf_counter()
    c = compact(G)
    t2 = time.perf_counter()
    out = {"n": n, "d": d, "nodes": c.n, "build_s": round(t1 - t0, 2), "compact_s": round(t2 - t1, 2), "runs": []}
    print(f"\nscale: attention-forward n={n} d={d}: {c.n} nodes; build {t1 - t0:.1f} s, compact {t2 - t1:.1f} s")
    print(f"{'algorithm':>10} {'M':>6} {'moves':>9} {'io':>9} {'gen_s':>7} {'replay_s':>9} {'gen+replay_s':>13}")
    for name, M in cases:
        gen, formula = FORWARD[name]
        a = time.perf_counter()
        s = gen(G, M)
        b = time.perf_counter()
        r = replay(c, s)
        e = time.perf_counter()
        assert r.io == formula(G.graph["params"], M)
        out["runs"].append({"algorithm": name, "M": M, "moves": r.moves, "io": r.io,
                            "generate_s": round(b - a, 2), "replay_s": round(e - b, 2)})
        print(f"{name:>10} {M:>6} {r.moves:>9} {r.io:>9} {b - a:>7.2f} {e - b:>9.2f} {e - a:>13.2f}")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="n = 32, d = 8 for the table; no greedy")
    ap.add_argument("--skip-scale", action="store_true", help="skip the million-node runs")
    ap.add_argument("--json", help="write all results here")
    args = ap.parse_args(argv)
    d = 8
    n = 32 if args.quick else 64
    Ms = [6, 8, 16, 24, 36, 48, 64, 96, 128, 192, 256, 384, 512, 1024, 2048]
    results = {"forward": io_table(n, d, Ms, greedy=not args.quick), "backward": backward_table(n, d, Ms)}
    if not args.skip_scale:
        results["scale"] = scale(128, 16, [("flash", 1024), ("flash", 256), ("square", 64)])
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(results, fh, indent=2)


if __name__ == "__main__":
    main()
