"""Pebble-game commands: replay, greedy, brute."""

from __future__ import annotations

from spartition.cli.common import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    bounded_int,
    emit,
    positive_int,
    read_dag_arg,
    refuse_overwrite,
)
from spartition.core.game import VARIANTS

__all__ = ["register"]


def register(sub) -> None:
    """Add ``replay``, ``greedy`` and ``brute`` to the ``spartition`` parser."""
    p = sub.add_parser("replay", help="check a schedule against the rules and report its cost")
    add_dag_arg(p)
    p.add_argument("schedule", help="schedule JSON file")
    add_json_flag(p)
    p.set_defaults(func=_replay)

    p = sub.add_parser("greedy", help="furthest-next-use schedule for any feasible M")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    p.add_argument("--variant", choices=VARIANTS, default="oneshot")
    p.add_argument("-o", "--output", help="write the schedule here")
    add_json_flag(p)
    p.set_defaults(func=_greedy)

    p = sub.add_parser("brute", help="exact optimum of a tiny DAG by state search")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    p.add_argument("--variant", choices=VARIANTS, default="oneshot")
    p.add_argument("--method", choices=("moves", "steps"), default="moves",
                   help="moves: every move (the plain search); steps: A* over normal-form steps "
                        "(one compute per step, max-flow heuristic; much faster)")
    p.add_argument("--max-states", type=positive_int, default=5_000_000)
    p.add_argument("--schedule-out", help="write the optimal schedule here")
    add_json_flag(p)
    p.set_defaults(func=_brute)


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
    from spartition.core.game import replay, save_schedule
    from spartition.exact.brute import BruteResult, brute_force
    from spartition.exact.steps import step_search

    refuse_overwrite(args.schedule_out, "--schedule-out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    if args.method == "steps":
        found = step_search(G, args.M, variant=args.variant, max_states=args.max_states)
        result = BruteResult(found.io, found.schedule, args.M, args.variant, found.states, found.wall_s)
        data = {**result.to_dict(), "method": "step-search"}
    else:
        result = brute_force(G, args.M, args.variant, max_states=args.max_states)
        data = result.to_dict()
    replay(G, result.schedule)
    if args.schedule_out:
        save_schedule(result.schedule, args.schedule_out)
    emit(args, data, f"optimal I/O {result.io} ({args.variant}, M = {args.M}; "
         f"{data['method']}, {result.states} states, {result.wall_s:.2f} s)")
