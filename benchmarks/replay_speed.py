"""Replay throughput: moves per second of spartition.core.game.replay on large greedy schedules.

Run: python benchmarks/replay_speed.py [--quick]

Prints one table: DAG, nodes, M, moves, seconds to generate the greedy
schedule, seconds to replay it, replayed moves per second. The target is at
least one million moves per second.
"""

from __future__ import annotations

import argparse
import time

from spartition.core.dag import compact
from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import build


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller DAGs")
    args = ap.parse_args(argv)
    cases = [("fft", {"k": 10 if args.quick else 15}, 16), ("stencil", {"width": 200 if args.quick else 1000,
             "steps": 100 if args.quick else 400}, 8), ("matmul", {"a": 12 if args.quick else 32,
             "b": 12 if args.quick else 32, "c": 12 if args.quick else 32}, 32)]
    print(f"{'dag':28s} {'nodes':>9s} {'M':>4s} {'moves':>10s} {'gen_s':>7s} {'replay_s':>9s} {'moves/s':>12s}")
    for name, params, M in cases:
        G = build(name, **params)
        c = compact(G)
        t0 = time.perf_counter()
        s = greedy_schedule(c, M)
        t1 = time.perf_counter()
        r = replay(c, s)
        t2 = time.perf_counter()
        label = name + "(" + ",".join(f"{k}={v}" for k, v in params.items()) + ")"
        print(f"{label:28s} {c.n:9d} {M:4d} {r.moves:10d} {t1 - t0:7.2f} {t2 - t1:9.2f} {r.moves / (t2 - t1):12,.0f}")


if __name__ == "__main__":
    main()
