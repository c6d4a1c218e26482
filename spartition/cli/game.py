"""Foundation commands: build, info, replay, greedy, brute."""

from __future__ import annotations

from spartition.cli.main import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    bounded_int,
    emit,
    positive_int,
    read_dag_arg,
    refuse_overwrite,
)

__all__ = ["register"]


def register(sub) -> None:
    """Add the foundation commands to the ``spartition`` parser."""
    p = sub.add_parser("build", help="build a DAG family and write it as node-link JSON")
    p.add_argument("family", help="family name (see 'spartition families')")
    p.add_argument("params", nargs="*", metavar="key=value")
    p.add_argument("-o", "--output", help="write the DAG here (default: print a summary)")
    _max_nodes_flag(p)
    add_json_flag(p)
    p.set_defaults(func=_build)

    p = sub.add_parser("families", help="list the registered DAG families")
    add_json_flag(p)
    p.set_defaults(func=_families)

    p = sub.add_parser("info", help="summary of a DAG: sizes, smallest feasible M, trivial bound")
    add_dag_arg(p)
    add_json_flag(p)
    p.set_defaults(func=_info)

    p = sub.add_parser("replay", help="check a schedule against the rules and report its cost")
    add_dag_arg(p)
    p.add_argument("schedule", help="schedule JSON file")
    add_json_flag(p)
    p.set_defaults(func=_replay)

    p = sub.add_parser("greedy", help="furthest-next-use schedule for any feasible M")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    p.add_argument("--variant", choices=("oneshot", "recompute"), default="oneshot")
    p.add_argument("-o", "--output", help="write the schedule here")
    add_json_flag(p)
    p.set_defaults(func=_greedy)

    p = sub.add_parser("brute", help="exact optimum of a tiny DAG by state search")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    p.add_argument("--variant", choices=("oneshot", "recompute"), default="oneshot")
    p.add_argument("--max-states", type=positive_int, default=5_000_000)
    p.add_argument("--schedule-out", help="write the optimal schedule here")
    add_json_flag(p)
    p.set_defaults(func=_brute)


def _max_nodes_flag(p) -> None:
    from spartition.core.registry import DEFAULT_MAX_NODES

    p.add_argument("--max-nodes", type=positive_int, default=DEFAULT_MAX_NODES,
                   help=f"refuse to build a DAG of more nodes (default {DEFAULT_MAX_NODES:,})")


def _build(args):
    from spartition.core.dag import save_dag
    from spartition.core.registry import build

    G = build(args.family, args.params, max_nodes=args.max_nodes)
    if args.output:
        save_dag(G, args.output)
    data = {"family": args.family, "params": G.graph.get("params", {}), "nodes": G.number_of_nodes(),
            "edges": G.number_of_edges(), "output": args.output}
    emit(args, data, f"{args.family} {G.graph.get('params', {})}: {data['nodes']} nodes, {data['edges']} edges"
         + (f" -> {args.output}" if args.output else ""))


def _families(args):
    from spartition.core.registry import family, family_names

    rows = {name: (family(name).__doc__ or "").strip().splitlines()[0] for name in family_names()}
    emit(args, rows, "\n".join(f"{name:28s} {doc}" for name, doc in rows.items()))


def dag_info(G) -> dict:
    """The summary printed by ``spartition info``."""
    from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
    from spartition.core.dag import compact, dag_hash

    c = compact(G)
    indeg = c.in_degree()
    return {
        "family": G.graph.get("family"),
        "params": G.graph.get("params", {}),
        "nodes": c.n,
        "edges": int(len(c.pred_idx)),
        "inputs": int(c.is_input.sum()),
        "outputs": int(c.is_output.sum()),
        "isolated": int((c.is_input & c.is_output).sum()),
        "max_in_degree": int(indeg.max()) if c.n else 0,
        "min_feasible_M": min_feasible_memory(c),
        "trivial_lower_bound": trivial_lower_bound(c),
        "hash": dag_hash(G),
    }


def _info(args):
    info = dag_info(read_dag_arg(args.dag, args.max_nodes))
    emit(args, info, "\n".join(f"{k:20s} {v}" for k, v in info.items()))


def _replay(args):
    from spartition.errors import IllegalMove
    from spartition.core.game import load_schedule, replay

    G = read_dag_arg(args.dag, args.max_nodes)
    schedule = load_schedule(args.schedule)
    try:
        result = replay(G, schedule)
    except IllegalMove as exc:
        payload = {"valid": False, "io": None, "loads": None, "stores": None, "computes": None,
                   "peak_red": None, "error": str(exc), "step": exc.step}
        raise CheckFailed(f"invalid schedule: {exc}", payload) from None
    data = {"valid": True, **result.to_dict(), "error": None}
    emit(args, data, f"valid: I/O {result.io} ({result.loads} loads, {result.stores} stores), "
         f"{result.computes} computes, peak {result.peak_red} red of M = {result.M}")


def _greedy(args):
    from spartition.core.game import replay, save_schedule
    from spartition.core.greedy import greedy_schedule

    refuse_overwrite(args.output, "-o/--output", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    schedule = greedy_schedule(G, args.M, args.variant)
    result = replay(G, schedule)
    if args.output:
        save_schedule(schedule, args.output)
    emit(args, {"method": "greedy", **result.to_dict()}, f"greedy: I/O {result.io} at M = {args.M}")


def _brute(args):
    from spartition.exact.brute import brute_force
    from spartition.core.game import replay, save_schedule

    refuse_overwrite(args.schedule_out, "--schedule-out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    result = brute_force(G, args.M, args.variant, max_states=args.max_states)
    replay(G, result.schedule)
    if args.schedule_out:
        save_schedule(result.schedule, args.schedule_out)
    emit(args, result.to_dict(), f"optimal I/O {result.io} ({args.variant}, M = {args.M}; "
         f"{result.states} states, {result.wall_s:.2f} s)")
