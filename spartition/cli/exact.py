"""The ``spartition solve`` command: exact optimal I/O with CP-SAT."""

from __future__ import annotations

from spartition.cli.common import (
    add_dag_arg,
    add_json_flag,
    add_variant_arg,
    bounded_int,
    elapsed_bar,
    emit,
    nonnegative_int,
    positive_int,
    positive_seconds,
    read_dag_arg,
    refuse_overwrite,
    seed,
)
from spartition.errors import UsageError
from spartition.exact.formulations import FORMULATIONS
from spartition.settings import DEFAULT_CUBE_DEPTH, ENGINES, GAMES, PARTIAL
from spartition.status import Status

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``solve`` command to the ``spartition`` parser."""
    p = sub.add_parser("solve", help="exact optimal I/O of a DAG by CP-SAT, with proof status and bound")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True, help="fast memory size (red pebbles)")
    add_variant_arg(p, games=GAMES, note="; partial: the exact state search where it is small, else the "
                    "partial game's CP-SAT model (the options of the standard game's models do not apply)")
    p.add_argument("--time-limit", type=positive_seconds, default=60.0, help="seconds for the solver (default 60)")
    p.add_argument("--workers", type=positive_int, default=1,
                   help="workers (default 1); oneshot with 2 or more: CP-SAT on all but one beside RC2 MaxSAT")
    p.add_argument("--seed", type=seed, default=0, help="CP-SAT random seed, 32-bit (default 0)")
    p.add_argument(
        "--deterministic-time", type=positive_seconds, default=None, help="CP-SAT deterministic time limit (reproducible runs)"
    )
    p.add_argument(
        "--formulation", choices=("auto", *FORMULATIONS), default="auto",
        help="CP-SAT model (default: order for oneshot, events for recompute)",
    )
    p.add_argument(
        "--engine", choices=ENGINES, default="auto",
        help="who solves the order model: CP-SAT, RC2 MaxSAT (needs python-sat), the linear SAT search from "
             "above, a portfolio of them (two workers: RC2 and the linear search; three or more: CP-SAT too), or "
             "RC2 on 2^K cubes of the model, --workers at a time (default: the portfolio with --workers >= 2, "
             "CP-SAT alone with one worker)",
    )
    p.add_argument("--cube-depth", type=int, choices=range(1, 11), default=None, metavar="K",
                   help=f"--engine cubes: split on K order literals, 2^K cubes (1 to 10, default {DEFAULT_CUBE_DEPTH})")
    p.add_argument("--recompute-events", type=nonnegative_int, default=None, help="recompute: cap on compute events")
    p.add_argument("--lower-bound", type=bounded_int, default=None, help="a proven lower bound to give the solver")
    p.add_argument("--no-symmetry", action="store_true", help="do not add symmetry-breaking precedences")
    p.add_argument("--no-hint", action="store_true", help="do not hint the solver with known schedules")
    p.add_argument("--schedule-out", help="write the best schedule found here (JSON)")
    add_json_flag(p)
    p.set_defaults(func=_solve)


def _solve(args) -> int:
    from spartition.core.game import save_schedule
    from spartition.exact.solve import solve_io

    if args.cube_depth is not None and args.engine != "cubes":
        # silently ignored, it let a user believe the cubes ran
        raise UsageError(f"--cube-depth applies to --engine cubes, not to --engine {args.engine}")
    if args.variant == PARTIAL:
        # refused by name: silently ignored, they let a user believe the standard game's models ran
        given = [flag for flag, on in (("--formulation", args.formulation != "auto"), ("--engine", args.engine != "auto"),
                                       ("--recompute-events", args.recompute_events is not None),
                                       ("--lower-bound", args.lower_bound is not None),
                                       ("--deterministic-time", args.deterministic_time is not None),
                                       ("--no-symmetry", args.no_symmetry), ("--no-hint", args.no_hint)) if on]
        if given:
            raise UsageError(f"{', '.join(given)}: not for --variant partial (its own state search and CP-SAT model)")
    refuse_overwrite(args.schedule_out, "--schedule-out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes, family_params=True)
    with elapsed_bar("solve", args.time_limit):
        r = solve_io(
            G,
            args.M,
            args.variant,
            time_limit=args.time_limit,
            workers=args.workers,
            seed=args.seed,
            deterministic_time=args.deterministic_time,
            formulation=args.formulation,
            engine=args.engine,
            cube_depth=DEFAULT_CUBE_DEPTH if args.cube_depth is None else args.cube_depth,
            recompute_events=args.recompute_events,
            lower_bound=args.lower_bound,
            symmetry=not args.no_symmetry,
            hint=None if args.no_hint else "auto",
        )
    if args.schedule_out and r.schedule is not None:
        save_schedule(r.schedule, args.schedule_out)
    if r.status == Status.INFEASIBLE:
        text = f"INFEASIBLE: {r.message}"
    else:
        text = (
            f"{r.status}: io = {r.io}, lower bound = {r.lower_bound} "
            f"(M = {r.M}, {r.variant}, {_method(r.formulation)}, {r.wall_s:.2f} s)"
        )
        if r.status != Status.OPTIMAL:
            text += f"\n  {r.message}"
        if r.io is not None:
            text += f"\n  schedule from: {r.schedule_source}; lower bound from: {r.bound_source}"
    emit(args, r.to_dict(), text)
    if r.interrupted:
        return 130  # the best result so far was reported; the run itself was cut short
    return 2 if r.status == Status.INFEASIBLE else 0


def _method(formulation: str) -> str:
    """What answered, in words: "none" is no model at all (a schedule met the bound, or none was built)."""
    if formulation == "none":
        return "no model solved"
    if formulation == "step-search":
        return "exhaustive step search"
    if formulation == "partial-search":
        return "exhaustive state search of the partial game"
    if formulation == "partial-cp-sat":
        return "the partial game's CP-SAT model"
    return f"{formulation} model"
