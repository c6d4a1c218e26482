"""Certified optima and partitions for the issue-17 targets: CNF size, proof size, solve and check times.

Run: ``timeout 3000 python benchmarks/certify.py [--quick] [--only NAME] [--encoding order]``.
With ``--encoding order`` the oneshot optima are refuted on the order CNF
(:mod:`spartition.certify.order_encoding`) instead of the time-indexed one,
and attention n=2 d=2 (48 nodes) joins the list.
One instance at a time, one thread (CaDiCaL and the checker are sequential;
CP-SAT's starting witness uses one worker). Bundles go to a temporary
directory and are re-checked with :func:`spartition.certify.bundle.check_bundle`.
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

from spartition.certify.bundle import check_bundle
from spartition.certify.certify import certify_optimum, certify_partition
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.classic.dag import fft, matmul, reduction

DAGS = {
    "matmul 2x2x2": matmul(2, 2, 2),
    "attention n=2 d=1": attention_forward(2, 1),
    "fft 4 points": fft(2),
    "reduction 8 leaves": reduction(8, shape="tree"),
    "attention n=2 d=2": attention_forward(2, 2),
}
OPTIMA = [
    *(("matmul 2x2x2", M, "oneshot") for M in range(3, 13)),
    *(("attention n=2 d=1", M, "oneshot") for M in range(4, 9)),
    *(("fft 4 points", M, "oneshot") for M in range(3, 7)),
    *(("reduction 8 leaves", M, "oneshot") for M in range(3, 5)),
    *(("matmul 2x2x2", M, "recompute") for M in range(3, 6)),
    *(("fft 4 points", M, "recompute") for M in range(3, 5)),
]
#: Oneshot optima only the order CNF reaches in reasonable time.
ORDER_OPTIMA = [("attention n=2 d=2", M, "oneshot") for M in range(3, 10)]
PARTITIONS = [("matmul 2x2x2", 6), ("matmul 2x2x2", 8), ("attention n=2 d=1", 8), ("attention n=2 d=1", 10),
              ("fft 4 points", 6), ("reduction 8 leaves", 6)]


def _row(cells):
    print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default=None, help="substring of the DAG names to run")
    ap.add_argument("--partitions-only", action="store_true")
    ap.add_argument("--encoding", choices=("time-indexed", "order"), default="time-indexed",
                    help="the CNF refuted for the oneshot optima (order: no recompute rows, no partitions)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp())
    _row(["instance", "claim", "CNF vars", "CNF clauses", "proof MB", "solve s", "check s", "bundle check s"])
    _row(["---"] * 8)
    jobs = [] if args.partitions_only else [("opt", *j) for j in OPTIMA]
    if args.encoding == "order":
        jobs = [j for j in jobs if j[3] == "oneshot"] + [("opt", *j) for j in ORDER_OPTIMA]
    else:
        jobs += [("part", *j) for j in PARTITIONS]
    for kind, name, *rest in jobs:
        if args.only and args.only not in name:
            continue
        out = tmp / f"b{len(list(tmp.iterdir()))}"
        if kind == "opt":
            M, variant = rest
            r = certify_optimum(DAGS[name], M, variant, out, encoding=args.encoding)
            label = f"{name}, M = {M}, {variant}"
            claim = f"Q* = {r['io']}" + ("" if r["horizon_proven"] else f" (horizon {r['horizon']})")
        else:
            (S,) = rest
            r = certify_partition(DAGS[name], S, out)
            label = f"{name}, S = {S}"
            claim = f"P({S}) = {r['classes']}"
        t = time.perf_counter()
        check_bundle(out)
        t = time.perf_counter() - t
        s = r["stats"]
        if "cnf_vars" in s:
            _row([label, claim, s["cnf_vars"], s["cnf_clauses"], f"{s['proof_bytes'] / 1e6:.1f}",
                  s["solve_s"], s["check_s"], f"{t:.2f}"])
        else:
            _row([label, claim, "-", "-", "-", "-", "-", f"{t:.2f}"])
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
