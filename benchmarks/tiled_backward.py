"""The upper side of the backward sandwich: tiled-backward against flash-backward and greedy, per (n, d, M).

Run: python benchmarks/tiled_backward.py [--n 16,32] [--d 2,4] [--markdown] [--improve S] [--sandwich]

For dense ``attention-backward-flash`` and M in {d, 2d, d^2/2, d^2, 2d^2, 4d^2}
(at least 4) it prints the replayed I/O of

* ``tiled-backward`` at its cheapest searched tiling
  (:func:`spartition.exact.search.best_schedule`), with the tiling;
* ``flash-backward`` at its cheapest searched block size ("-" below its
  ``M >= 7d + 6``);
* ``greedy`` at its defaults;

with ``--improve S``, the cheapest tiled-backward schedule after
:func:`spartition.exact.improve.improve_schedule` (same compute order, loads,
stores and evictions re-chosen, ``S`` seconds); the proven lower bound
``segment-backward-lower``
(:func:`spartition.families.attention.backward.bounds.backward_segment_bound`, oneshot
game) and the ratio of the cheapest of the three to it. With ``--sandwich``
also the ratio of :func:`spartition.study.sandwich.sandwich_row` (every
registered algorithm searched, no re-pebbling). Every upper value is a replay.
"""

from __future__ import annotations

import argparse
import time

from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.exact.search import best_schedule
from spartition.errors import InfeasibleMemory
from spartition.exact.improve import improve_schedule
from spartition.families.attention.backward.bounds import backward_segment_bound
from spartition.study.sandwich import sandwich_row
from spartition.study.tables import render_table


def memories(d: int) -> list[int]:
    """M from d to 4 d^2: d, 2d, d^2/2, d^2, 2 d^2, 4 d^2 (distinct, at least 4)."""
    return sorted({m for m in (d, 2 * d, d * d // 2, d * d, 2 * d * d, 4 * d * d) if m >= 4})


def searched(G, name: str, M: int):
    """``(io, tiling)`` of the cheapest replayed tiling (the schedule's ``meta``), or ``None`` if none fits."""
    try:
        found = best_schedule(G, algorithm(name), M)
    except InfeasibleMemory:
        return None
    return found.io, found.schedule.meta, found.schedule


def tiling_label(options: dict) -> str:
    """``a x b``, then ``keys`` for key blocks outer, then the options that are on (``spill``, ``keep_dq``, ...)."""
    on = [k for k in ("spill", "keep_dq", "keep_ld", "keep_kv", "keep_dkv", "keep_q") if options.get(k)]
    return " ".join([f"{options.get('a')}x{options.get('b')}"] + (["keys"] if options.get("outer") == "keys" else [])
                    + on)


def run(ns, ds, sandwich: bool = False, improve: float = 0.0) -> list[list]:
    rows = []
    for n in ns:
        for d in ds:
            G = build("attention-backward-flash", n=n, d=d)
            for M in memories(d):
                t0 = time.perf_counter()
                tiled = searched(G, "tiled-backward", M)
                flash = searched(G, "flash-backward", M)
                greedy = replay(G, algorithm("greedy").generate(G, M)).io
                lower = backward_segment_bound(n, d, M).value
                improved = improve_schedule(G, tiled[2], time_limit=improve).after if improve and tiled else None
                best = min(x for x in (tiled and tiled[0], improved, flash and flash[0], greedy) if x)
                o = tiled[1] if tiled else {}
                tiling = tiling_label(o)
                row = [n, d, M, lower, tiled[0] if tiled else "-", tiling if tiled else "-"]
                row += [improved if improved is not None else "-"] if improve else []
                row += [flash[0] if flash else "-", greedy, f"{best / lower:.2f}"]
                if sandwich:
                    s = sandwich_row(G, M, improve=False)
                    row.append(f"{s.ratio:.2f} ({s.upper.method.removeprefix('algorithm:')})" if s.ratio else "-")
                row.append(f"{time.perf_counter() - t0:.0f}")
                rows.append(row)
                print(render_table(headers(sandwich, improve), rows[-1:]).splitlines()[-1], flush=True)
    return rows


def headers(sandwich: bool, improve: float = 0.0) -> list[str]:
    return (["n", "d", "M", "segment-backward-lower", "tiled-backward", "tiling"]
            + (["tiled + improve"] if improve else [])
            + ["flash-backward", "greedy", "best / lower"] + (["sandwich_row ratio"] if sandwich else []) + ["s"])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", default="16,32")
    ap.add_argument("--d", default="2,4")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--sandwich", action="store_true", help="also the ratio of sandwich_row (slower)")
    ap.add_argument("--improve", type=float, default=0.0, help="seconds of improve_schedule on the tiled schedule")
    args = ap.parse_args(argv)
    sandwich = args.sandwich
    rows = run([int(x) for x in args.n.split(",")], [int(x) for x in args.d.split(",")], sandwich, args.improve)
    print()
    print(render_table(headers(sandwich, args.improve), rows, markdown=args.markdown))


if __name__ == "__main__":
    main()
