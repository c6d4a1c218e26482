"""The ``certify``, ``check-proof`` and ``check-certificate`` commands: optima a reader can check.

``certify`` writes a bundle (:mod:`spartition.certify.bundle`) for the
minimum I/O (``--M``), the minimum S-partition (``--partition S``) or the
class capacity (``--capacity X``); ``check-proof`` checks an LRAT proof
against a DIMACS file; ``check-certificate`` verifies a bundle end to end.
The two checkers call no solver; a failed check exits with status 1.
"""

from __future__ import annotations

from spartition.cli.common import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    add_variant_arg,
    elapsed_bar,
    emit,
    nonnegative_int,
    positive_int,
    positive_seconds,
    read_dag_arg,
    refuse_overwrite,
)
from spartition.status import Status

__all__ = ["register"]


def register(sub) -> None:
    """Add ``certify``, ``check-proof`` and ``check-certificate`` to the ``spartition`` parser."""
    p = sub.add_parser("certify", help="certified optimum: witness, CNF for one better, LRAT refutation, in a bundle")
    add_dag_arg(p)
    what = p.add_mutually_exclusive_group(required=True)
    what.add_argument("--M", type=positive_int, help="certify the minimum I/O with M red pebbles")
    what.add_argument("--partition", type=positive_int, metavar="S", help="certify P(S), the minimum S-partition")
    what.add_argument("--capacity", type=positive_int, metavar="X", help="certify U(X), the class capacity")
    add_variant_arg(p, default=None, note=" (with --M)")
    p.add_argument("--horizon", type=nonnegative_int, default=None,
                   help="recompute: cap on loads + stores + computes (default Q + sum pi(v), proven sufficient by "
                        "the compute caps, or 2N + Q when that CNF is too large; at least the N computes plus the "
                        "trivial I/O bound, below which no schedule fits)")
    p.add_argument("--encoding", choices=("time-indexed", "order"), default="time-indexed",
                   help="oneshot: refute the order model's CNF (small and fast; rests on its normal form and "
                        "chain dominance, named in the certificate) instead of the time-indexed one")
    p.add_argument("--weight", default=None, help="capacity: node selector of weight 1 (default: every node)")
    p.add_argument("--convex", action="store_true", help="capacity: convex sets only")
    p.add_argument("--time-limit", type=positive_seconds, default=60.0,
                   help="seconds for the whole command (default 60): CP-SAT's starting witness gets half, the SAT "
                        "refutation and its check the rest; when it runs out nothing is certified or written")
    p.add_argument("-o", "--out", required=True, help="bundle directory, or a .tar.gz archive")
    add_json_flag(p)
    p.set_defaults(func=_certify)

    p = sub.add_parser("check-proof", help="check an LRAT refutation of a DIMACS CNF (no solver involved)")
    p.add_argument("cnf", help="DIMACS CNF file")
    p.add_argument("proof", help="LRAT proof file")
    add_json_flag(p)
    p.set_defaults(func=_check_proof)

    p = sub.add_parser("check-certificate", help="verify a certificate bundle end to end")
    p.add_argument("bundle", help="bundle directory or .tar.gz")
    add_json_flag(p)
    p.set_defaults(func=_check_certificate)


def _certify(args) -> int:
    from spartition.certify.certify import certify_capacity, certify_optimum, certify_partition

    _refuse_flags_of_other_modes(args)
    refuse_overwrite(args.out, "--out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes, family_params=True)
    if args.M is not None:
        variant = args.variant or "oneshot"
        with elapsed_bar("certify", args.time_limit):
            r = certify_optimum(G, args.M, variant, args.out, time_limit=args.time_limit, horizon=args.horizon,
                                encoding=args.encoding)
        status = Status.OPTIMAL if r["horizon_proven"] else Status.OPTIMAL_WITHIN_HORIZON
        what = f"{status}: io = {r['io']} (M = {args.M}, {variant}"
        what += ")" if r["horizon_proven"] else f", horizon {r['horizon']})"
        if r.get("horizon_argument"):
            what += f"\n  {r['horizon_argument']}"
    elif args.partition is not None:
        with elapsed_bar("certify", args.time_limit):
            r = certify_partition(G, args.partition, args.out, time_limit=args.time_limit)
        what = f"OPTIMAL: P({args.partition}) = {r['classes']}"
    else:
        with elapsed_bar("certify", args.time_limit):
            r = certify_capacity(G, args.capacity, args.weight, args.convex, args.out, time_limit=args.time_limit)
        what = f"OPTIMAL: U({args.capacity}) = {r['capacity']}"
    s = r["stats"]
    text = f"{what}; bundle {args.out}"
    if "cnf_clauses" in s:
        text += (f"\n  CNF {s['cnf_vars']} variables, {s['cnf_clauses']} clauses; proof {s['proof_bytes']:,} bytes; "
                 f"solve {s['solve_s']:.2f} s, check {s['check_s']:.2f} s")
    emit(args, {**r, "bundle": str(args.out)}, text)
    return 0


def _refuse_flags_of_other_modes(args) -> None:
    """A flag that does nothing in the chosen mode is a mistake to report, not to ignore."""
    from spartition.errors import UsageError

    mode = "--M" if args.M is not None else "--partition" if args.partition is not None else "--capacity"
    if args.variant is not None and mode != "--M":
        raise UsageError(f"--variant applies to --M, not to {mode}")
    if args.horizon is not None and (mode != "--M" or args.variant != "recompute"):
        raise UsageError("--horizon applies to --M with --variant recompute (a oneshot certificate's horizon "
                         f"N + Q is proven sufficient), not to {mode if mode != '--M' else 'oneshot'}")
    for flag, given in (("--weight", args.weight is not None), ("--convex", args.convex)):
        if given and mode != "--capacity":
            raise UsageError(f"{flag} applies to --capacity, not to {mode}")


def _check_proof(args) -> int:
    from spartition.certify.proof import ProofError, check_lrat

    try:
        rep = check_lrat(args.cnf, args.proof)
    except ProofError as e:
        raise CheckFailed(f"INVALID proof: {e}", {"valid": False, "error": str(e), "kind": "ProofError"}) from None
    emit(args, rep.to_dict(), f"VALID: {args.proof} refutes {args.cnf} ({rep.additions} clauses added, "
                              f"{rep.hints} hints, {rep.wall_s:.2f} s)")
    return 0


def _check_certificate(args) -> int:
    from spartition.certify.bundle import BundleError, check_bundle
    from spartition.certify.cnf import CNFError
    from spartition.certify.proof import ProofError
    from spartition.errors import IllegalMove, InvalidPartition, InvalidSchedule

    try:
        rep = check_bundle(args.bundle)
    except (BundleError, ProofError, CNFError, IllegalMove, InvalidSchedule, InvalidPartition) as e:
        raise CheckFailed(f"INVALID certificate: {e}", {"valid": False, "error": str(e),
                                                         "kind": type(e).__name__}) from None
    emit(args, rep.to_dict(), f"VALID {rep.kind} certificate: {rep.status}: {rep.statement}")
    return 0
