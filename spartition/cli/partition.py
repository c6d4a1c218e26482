"""S-partition commands: check-partition, partition, capacity, bounds."""

from __future__ import annotations

import fnmatch

from spartition.cli.common import (
    EXIT_INTERRUPTED,
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    bounded_int,
    elapsed_bar,
    emit,
    positive_int,
    positive_seconds,
    read_dag_arg,
    refuse_overwrite,
    seed,
    time_left,
)
from spartition.settings import DEFAULT_WORKERS
from spartition.status import Status

__all__ = ["register"]


def register(sub) -> None:
    """Add the S-partition commands to the ``spartition`` parser."""
    p = sub.add_parser("check-partition", help="check an S-partition certificate (P1-P4)")
    add_dag_arg(p)
    p.add_argument("cert", help="partition certificate JSON file")
    p.add_argument("--S", type=bounded_int, default=None, help="S to check against (default: the certificate's)")
    add_json_flag(p)
    p.set_defaults(func=_check)

    p = sub.add_parser("partition", help="minimum S-partition by CP-SAT, with a proven lower bound on P(S)")
    add_dag_arg(p)
    p.add_argument("--S", type=bounded_int, required=True)
    _solver_flags(p)
    p.add_argument("-o", "--output", help="write the partition certificate here")
    add_json_flag(p)
    p.set_defaults(func=_partition)

    p = sub.add_parser("capacity", help="maximum weight of one class with P2 and P3 for X")
    add_dag_arg(p)
    p.add_argument("--X", type=bounded_int, required=True)
    p.add_argument("--weight", default=None, help="node selector, e.g. 'op=mul,tensor=QK' (default: every node)")
    p.add_argument("--convex", action="store_true", help="also require a convex class")
    _relaxation_flags(p)
    p.add_argument("--cap-by", default=None, metavar="PATTERNS",
                   help="search the full DAG with the objective capped by the exact product-decomposition "
                        "relaxation ending at these nodes: a set reaching the cap proves U")
    _solver_flags(p)
    add_json_flag(p)
    p.set_defaults(func=_capacity)

    p = sub.add_parser("bounds", help="I/O lower bounds (trivial, Hong-Kung, X-partition, capacity) with provenance")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    p.add_argument("--X", type=bounded_int, nargs="+", default=None, help="X values to search (default M+1..)")
    p.add_argument("--weight", default=None, help="node selector of the capacity bound")
    p.add_argument("--no-convex", action="store_true", help="do not require convex classes in the capacity")
    _relaxation_flags(p)
    _solver_flags(p)
    add_json_flag(p)
    p.set_defaults(func=_bounds)


def _relaxation_flags(p) -> None:
    p.add_argument("--restrict", default=None, metavar="PATTERNS",
                   help="solve the capacity on the relaxation ending at the nodes matching these comma-separated "
                        "shell patterns, e.g. 'S_*' (an upper bound on U)")
    p.add_argument("--method", choices=("cp-sat", "product"), default="cp-sat",
                   help="capacity solver: CP-SAT, or the exact matrix-product decomposition")


def _match_nodes(G, patterns):
    """Node ids of G matching any of the comma-separated shell patterns (None passes through)."""
    if patterns is None:
        return None
    pats = [p.strip() for p in patterns.split(",") if p.strip()]
    nodes = [v for v in G if any(fnmatch.fnmatchcase(str(v), p) for p in pats)]
    if not nodes:
        raise ValueError(f"node patterns {patterns!r} match no node")
    return nodes


def _solver_flags(p) -> None:
    p.add_argument("--time-limit", type=positive_seconds, default=60.0, help="seconds for the whole command (default 60)")
    p.add_argument("--workers", type=positive_int, default=DEFAULT_WORKERS,
                   help=f"CP-SAT workers (default {DEFAULT_WORKERS})")
    p.add_argument("--seed", type=seed, default=0, help="CP-SAT random seed, 32-bit (default 0)")


def _check(args):
    from spartition.partition.certificate import check_partition, load_partition

    G = read_dag_arg(args.dag, args.max_nodes)
    part = load_partition(args.cert)
    rep = check_partition(G, part, args.S)
    data = rep.to_dict()
    lines = [f"class {c.index}: {c.size} nodes, dominator {c.dominator_size}, minimum set {c.min_set_size}"
             for c in rep.classes]
    lines += [f"note: {x}" for x in rep.notes]
    if not rep.valid:
        text = "\n".join(p.message for p in rep.problems)
        if not getattr(args, "json", False):
            print("\n".join(lines))
        raise CheckFailed(f"not a valid {rep.S}-partition:\n{text}", data)
    emit(args, data, "\n".join(lines + [f"valid {rep.S}-partition with {rep.num_classes} classes"]))


def _partition(args):
    from spartition.partition.certificate import save_partition
    from spartition.partition.minimum import min_partition

    refuse_overwrite(args.output, "-o/--output", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    with elapsed_bar("partition", args.time_limit):
        res = min_partition(G, args.S, time_limit=time_left(args), workers=args.workers, seed=args.seed)
    if args.output and res.partition is not None:
        save_partition(res.partition, args.output)
    data = res.to_dict()
    data["output"] = args.output
    what = "P(S) =" if res.status == Status.OPTIMAL else "best partition found:"
    found = f"{what} {res.num_classes} classes" if res.partition is not None else "no partition found"
    text = (f"{res.status}: {found} (S = {res.S}, {res.nodes} nodes); "
            f"proven lower bound {res.lower_bound}; {res.wall_s:.2f} s")
    if "skipped" in res.parameters:
        text += f" ({res.parameters['skipped']})"
    if args.output:
        text += f" -> {args.output}"
    emit(args, data, text)


def _capacity(args):
    from spartition.partition.capacity import class_capacity

    G = read_dag_arg(args.dag, args.max_nodes)
    with elapsed_bar("capacity", args.time_limit):
        res = class_capacity(G, args.X, weight=args.weight, convex=args.convex, time_limit=args.time_limit,
                             workers=args.workers, seed=args.seed, restrict=_match_nodes(G, args.restrict),
                             method=args.method, relaxation=_match_nodes(G, args.cap_by))
    what = (f"the relaxation's maximum is {res.parameters.get('relaxed_capacity')}, "
            if res.status.startswith(Status.RELAXED) else f"best class weight {res.capacity}, ")
    text = (f"{res.status}: {what}proven upper bound U = {res.upper_bound} "
            f"(X = {res.X}, weight {res.weight}, w(V) = {res.total_weight}); {res.wall_s:.2f} s")
    emit(args, res.to_dict(), text)


def _bounds(args):
    from spartition.core.bounds import require_memory
    from spartition.core.dag import compact
    from spartition.partition.lower_bounds import io_lower_bounds

    G = read_dag_arg(args.dag, args.max_nodes)
    # like solve: no pebbling fits below the smallest feasible M, so no bound on its I/O means anything
    require_memory(compact(G), args.M)
    found = []
    try:
        with elapsed_bar("bounds", args.time_limit):
            bounds = io_lower_bounds(G, args.M, xs=args.X, weight=args.weight, convex=not args.no_convex,
                                     time_limit=time_left(args), workers=args.workers, seed=args.seed,
                                     restrict=_match_nodes(G, args.restrict), capacity_method=args.method,
                                     found=found)
        interrupted = False
    except KeyboardInterrupt:
        if not found:
            raise
        # Ctrl-C: the bounds finished before it are proven all the same (the trivial one always is)
        bounds, interrupted = tuple(found), True
    best = max(b.value for b in bounds)
    data = {"M": args.M, "best": best, "bounds": [b.to_dict() for b in bounds], "interrupted": interrupted}
    lines = []
    for b in bounds:
        extra = f" X={b.parameters['X']}" if b.parameters.get("X") is not None else ""
        if "sums" in b.parameters:  # the pair-sum bound: what it counted, or why it is the trivial one
            extra = (f" ({b.parameters['sums']} pair sums on {b.parameters['inputs']} inputs)"
                     if b.parameters["applies"] else " (M > 4: the trivial bound)")
        flag = ("proven" if b.proven else "from the relaxation's maximum (an upper bound on U)"
                if b.status == Status.RELAXED else "from solver bound (not proven optimal)")
        lines.append(f"{b.method:12s} {b.value:8d}  {b.status:12s} {flag}{extra}")
    lines.append(f"best lower bound: {best}")
    if interrupted:
        lines.append("stopped by Ctrl-C: the bounds above were finished before it; the others were not computed")
    emit(args, data, "\n".join(lines))
    return EXIT_INTERRUPTED if interrupted else 0
