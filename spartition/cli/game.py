"""Pebble-game commands: replay, greedy, improve, brute."""

from __future__ import annotations

from spartition.cli.common import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    add_variant_arg,
    bounded_int,
    emit,
    nonnegative_int,
    positive_int,
    positive_seconds,
    read_dag_arg,
    refuse_overwrite,
)

from spartition.settings import GAMES, PARTIAL

__all__ = ["register"]


def register(sub) -> None:
    """Add ``replay``, ``greedy``, ``improve`` and ``brute`` to the ``spartition`` parser."""
    p = sub.add_parser("replay", help="check a schedule against the rules and report its cost")
    add_dag_arg(p)
    p.add_argument("schedule", help="schedule JSON file")
    add_json_flag(p)
    p.set_defaults(func=_replay)

    p = sub.add_parser("greedy", help="furthest-next-use schedule for any feasible M")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    add_variant_arg(p, games=GAMES)
    p.add_argument("-o", "--output", help="write the schedule here")
    add_json_flag(p)
    p.set_defaults(func=_greedy)

    p = sub.add_parser("improve", help="re-choose the loads, stores and evictions of a schedule (same compute order); "
                                       "keep the cheapest that replays")
    add_dag_arg(p)
    p.add_argument("schedule", help="schedule JSON file (valid for the DAG)")
    p.add_argument("--M", type=bounded_int, help="fast memory of the result (default: the schedule's; another M "
                                                 "re-pebbles the schedule's compute order there)")
    p.add_argument("--time-limit", type=positive_seconds, default=60.0, help="seconds (default 60)")
    windows = p.add_mutually_exclusive_group()
    # 0 is refused, not read as "off": a window of no computes re-optimises nothing, so it is a slip
    windows.add_argument("--window", type=positive_int, default=16,
                         help="then re-optimise windows of this many computes by CP-SAT in the time left "
                              "(at least 1; default 16)")
    windows.add_argument("--no-windows", action="store_true", help="skip the CP-SAT windows")
    p.add_argument("-o", "--output", help="write the improved schedule here")
    add_json_flag(p)
    p.set_defaults(func=_improve)

    p = sub.add_parser("brute", help="exact optimum of a tiny DAG by state search")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True)
    add_variant_arg(p, games=GAMES)
    p.add_argument("--method", choices=("moves", "steps"), default="moves",
                   help="moves: every move (the plain search); steps: A* over normal-form steps "
                        "(one compute per step, max-flow heuristic; much faster)")
    p.add_argument("--max-states", type=positive_int, default=5_000_000,
                   help="give up after this many states (default 5,000,000)")
    p.add_argument("--time-limit", type=positive_seconds, default=60.0,
                   help="give up after this many seconds (default 60): an exact search proves or answers nothing")
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


def _improve(args):
    import time

    from spartition.core.dag import compact
    from spartition.core.game import load_schedule, replay, save_schedule
    from spartition.errors import IllegalMove
    from spartition.exact.improve import improve_schedule

    start = time.monotonic()  # --time-limit bounds the command: reading a DAG of 10^5 nodes takes seconds
    refuse_overwrite(args.output, "-o/--output", args.dag, args.schedule)
    c = compact(read_dag_arg(args.dag, args.max_nodes))
    schedule = load_schedule(args.schedule)
    # what follows the passes (a replay, the write) takes about a quarter of what reading took: keep it
    spent = time.monotonic() - start
    try:
        result = improve_schedule(c, schedule, time_limit=args.time_limit - 1.25 * spent, M=args.M,
                                  window=0 if args.no_windows else args.window)
    except IllegalMove as exc:
        raise CheckFailed(f"invalid schedule {args.schedule}: {exc}", {"valid": False, "error": str(exc)}) from None
    # the improved schedule, replayed again here (the input itself was replayed by improve_schedule: its moves
    # at M, or at a larger M where they are as valid)
    out_M, out_io = result.schedule.M, result.after
    if result.method != "input":
        check = replay(c, result.schedule)
        out_M, out_io = check.M, check.io
    if args.output:
        save_schedule(result.schedule, args.output)
    limited = " (stopped by Ctrl-C)" if result.interrupted else " (time limit reached)" if result.time_limited else ""
    moved = f"M = {schedule.M} -> {out_M}" if out_M != schedule.M else f"M = {out_M}"
    emit(args, {**result.to_dict(), "M": out_M, "input_M": schedule.M, "replayed_io": out_io,
                "output": args.output},
         f"I/O {result.before} -> {out_io} at {moved} ({result.method}){limited}")
    return 130 if result.interrupted else 0  # the best so far was reported; the run itself was cut short


def _brute(args):
    from spartition.core.game import replay, save_schedule
    from spartition.exact.brute import BruteResult, brute_force
    from spartition.errors import UsageError
    from spartition.exact.steps import step_search

    refuse_overwrite(args.schedule_out, "--schedule-out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    if args.method == "steps" and args.variant == PARTIAL:
        raise UsageError("--method steps searches the standard game; the partial game has --method moves only")
    if args.method == "steps":
        found = step_search(G, args.M, variant=args.variant, max_states=args.max_states, time_limit=args.time_limit)
        result = BruteResult(found.io, found.schedule, args.M, args.variant, found.states, found.wall_s)
        data = {**result.to_dict(), "method": "step-search"}
    else:
        result = brute_force(G, args.M, args.variant, max_states=args.max_states, time_limit=args.time_limit)
        data = result.to_dict()
    replay(G, result.schedule)
    if args.schedule_out:
        save_schedule(result.schedule, args.schedule_out)
    emit(args, data, f"optimal I/O {result.io} ({args.variant}, M = {args.M}; "
         f"{data['method']}, {result.states} states, {result.wall_s:.2f} s)")
