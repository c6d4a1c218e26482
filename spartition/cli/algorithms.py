"""Commands ``schedule`` and ``algorithms``: published upper-bound algorithms as replayable schedules.

``spartition schedule ALGORITHM DAG --M N`` runs a registered generator on
the DAG (its graph attributes ``family`` and ``params`` say what it is),
replays the schedule, and reports its I/O next to the generator's closed
form; ``spartition algorithms [FAMILY]`` lists the generators that apply.
"""

from __future__ import annotations

from spartition.cli.common import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    add_variant_arg,
    bounded_int,
    emit,
    read_dag_arg,
    refuse_overwrite,
)
from spartition.settings import GAMES, PARTIAL

__all__ = ["register"]


def register(sub) -> None:
    """Add ``schedule`` and ``algorithms`` to the ``spartition`` parser."""
    p = sub.add_parser("schedule", help="generate a published algorithm's schedule for a DAG, replay it, report its I/O")
    p.add_argument("algorithm", help="registered algorithm (see 'spartition algorithms')")
    add_dag_arg(p)
    p.add_argument("--M", type=bounded_int, required=True, help="fast memory size")
    add_variant_arg(p, games=GAMES, note="; partial: the oneshot schedule translated edge by edge (same I/O)")
    p.add_argument("-o", "--output", help="write the schedule here (JSON)")
    add_json_flag(p)
    p.set_defaults(func=_schedule)

    p = sub.add_parser("algorithms", help="list the schedule generators that apply to a DAG family")
    p.add_argument("family", nargs="?", help="family name (default: every algorithm)")
    add_json_flag(p)
    p.set_defaults(func=_algorithms)


def _schedule(args):
    from spartition.errors import UnknownFamily
    from spartition.core.game import replay, save_schedule

    from spartition.core.registry import algorithm

    algo = algorithm(args.algorithm)
    refuse_overwrite(args.output, "-o/--output", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes, family_params=True)
    family = G.graph.get("family")
    if family is not None and not algo.applies_to(family):
        raise UnknownFamily(
            f"algorithm {algo.name!r} does not apply to family {family!r} (it runs on {', '.join(algo.families)})"
        )
    if family is None and not algo.applies_to("*"):
        # its tiling reads the family parameters, which a DAG without graph.family lacks
        raise UnknownFamily(
            f"algorithm {algo.name!r} runs on DAGs of {', '.join(algo.families)}, but this DAG names no family "
            "(graph.family)"
        )
    if args.variant == PARTIAL:
        from spartition.core.partial_greedy import algorithm_partial_schedule

        schedule = algorithm_partial_schedule(algo, G, args.M)
    else:
        schedule = algo.schedule(G, args.M, args.variant)
    result = replay(G, schedule)
    formula = algo.io_formula(G.graph.get("params", {}), args.M) if algo.io_formula and family else None
    if args.output:
        save_schedule(schedule, args.output)
    extra = {k: v for k, v in schedule.meta.items() if k not in ("method", "io_formula")}
    data = {
        "algorithm": algo.name,
        "family": family,
        "params": G.graph.get("params", {}),
        "M": args.M,
        "variant": args.variant,
        "io": result.io,
        "loads": result.loads,
        "stores": result.stores,
        "moves": result.moves,
        "peak_red": result.peak_red,
        "io_formula": formula,
        "tiles": extra,
        "source": algo.source,
        "output": args.output,
    }
    text = (
        f"{algo.name} on {family or 'DAG'} with M = {args.M}: I/O {result.io} "
        f"({result.loads} loads, {result.stores} stores), {result.moves} moves, peak {result.peak_red} red"
    )
    if formula is not None:
        text += f"; closed form {formula}"
    if extra:
        text += "; " + ", ".join(f"{k} = {v}" for k, v in extra.items())
    if formula is not None and formula != result.io:
        raise CheckFailed(f"{algo.name}: replayed I/O {result.io} differs from its closed form {formula}", data)
    emit(args, data, text)
    return 0


def _algorithms(args):
    from spartition.core.registry import algorithms, family

    if args.family is not None:
        family(args.family)  # an unknown family is an error that lists the known ones

    rows = [
        {"name": a.name, "families": list(a.families), "games": list(a.variants), "closed_form": a.io_formula is not None,
         "source": a.source}
        for a in algorithms().values()
        if args.family is None or a.applies_to(args.family)
    ]
    # the partial game plays the oneshot schedules, translated: a recompute-only algorithm says so here
    text = "\n".join(f"{r['name']:<26} {'/'.join(r['families']):<28} {'/'.join(r['games']):<18} {r['source']}"
                     for r in rows)
    emit(args, {"family": args.family, "algorithms": rows}, text or f"no algorithm applies to {args.family!r}")
    return 0
