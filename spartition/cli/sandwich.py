"""``spartition sandwich``: per M, the best proven lower bound and the best replayed schedule, and their ratio."""

from __future__ import annotations

import sys

from spartition.cli.common import (
    EXIT_INTERRUPTED,
    add_dag_arg,
    add_json_flag,
    add_variant_arg,
    emit,
    memories,
    positive_seconds,
    read_dag_arg,
    refuse_overwrite,
    time_left,
)
from spartition.settings import GAMES

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``sandwich`` command to the ``spartition`` parser."""
    p = sub.add_parser(
        "sandwich", help="per M: the best proven lower bound, the best replayed schedule and upper / lower",
        description="Each side names its method and what certifies it: a lower bound is the trivial bound, a "
        "registered explicit formula proven for the game asked (its proof in its docstring) or, with "
        "--partition-bounds, an S-partition bound; an upper bound is a registered algorithm's schedule, replayed.")
    add_dag_arg(p)
    p.add_argument("--M", type=memories, required=True, help="memories, e.g. 4,8,16 or 4..16")
    add_variant_arg(p, games=GAMES, note="; a bound proven only for another game is left out; partial: published "
                    "algorithms' oneshot schedules translated edge by edge, and the partial game's greedy")
    p.add_argument("--time-limit", type=positive_seconds, default=None,
                   help="seconds for the whole command (candidates not reached are listed as skipped)")
    p.add_argument("--partition-bounds", action="store_true", help="also run the CP-SAT S-partition bounds (small DAGs)")
    p.add_argument("--schedule-out", metavar="FILE",
                   help="write each row's upper-side schedule (replayed; its meta names the method and the "
                        "generator's parameters) here; with several M the name must hold {M}, e.g. s-{M}.json")
    add_json_flag(p)
    p.set_defaults(func=_sandwich)


def _sandwich(args) -> int:
    from spartition.errors import UsageError
    from spartition.study.sandwich import INTERRUPTED_NOTE, sandwich
    from spartition.study.tables import render_table, sandwich_cells

    outputs = {}
    if args.schedule_out:
        if len(args.M) > 1 and "{M}" not in args.schedule_out:
            raise UsageError(f"--schedule-out {args.schedule_out}: with {len(args.M)} memories the name must hold "
                             "{M} (one schedule per M), e.g. s-{M}.json")
        outputs = {M: args.schedule_out.replace("{M}", str(M)) for M in args.M}
        for path in outputs.values():
            refuse_overwrite(path, "--schedule-out", args.dag)
    G = read_dag_arg(args.dag, args.max_nodes)
    bar = _Bar(len(args.M))
    done, interrupted = [], False
    try:
        rows = sandwich(G, args.M, args.variant, time_left(args), args.partition_bounds, progress=bar.tick,
                        found=done)
    except KeyboardInterrupt:
        if not done:
            raise
        # Ctrl-C: the rows finished before it stand, the row it cut holds what it had (each side proven or
        # replayed); the rest were not computed
        rows, interrupted = done, True
    finally:
        bar.close()
    written = {}
    if outputs:
        from spartition.core.game import save_schedule

        for r in rows:
            if r.schedule is not None:
                save_schedule(r.schedule, outputs[r.M])
                written[r.M] = outputs[r.M]
    text = render_table(*sandwich_cells(rows))
    # what did not run is half the answer: a missing upper side or a trivial lower one must say why
    for r in rows:
        if r.skipped:
            text += f"\nskipped at M = {r.M}:" + "".join(f"\n  {s}" for s in r.skipped)
    for M, path in written.items():
        text += f"\nschedule at M = {M} -> {path}"
    if interrupted:
        missing = [M for M in args.M if M not in {r.M for r in rows}]
        cut = [r.M for r in rows if INTERRUPTED_NOTE in r.skipped]
        finished = [r.M for r in rows if r.M not in cut]
        said = [f"the rows at M = {finished} were finished before it"] if finished else []
        said += [f"the row at M = {M} holds what it had (the bounds evaluated and the schedules replayed by then)"
                 for M in cut]
        said += [f"not computed: M = {missing}"] if missing else []
        text += f"\nstopped by Ctrl-C: {'; '.join(said)}"
    emit(args, {"dag": G.graph.get("family") or args.dag, "params": G.graph.get("params"), "variant": args.variant,
                "rows": [{**r.to_dict(), "schedule_out": written.get(r.M)} for r in rows],
                "interrupted": interrupted}, text)
    return EXIT_INTERRUPTED if interrupted else 0


class _Bar:
    """A tqdm bar on stderr on a terminal, silent when piped."""

    def __init__(self, total: int):
        from tqdm import tqdm

        self.bar = tqdm(total=total, desc="sandwich", unit="M", file=sys.stderr, disable=not sys.stderr.isatty())

    def tick(self, M) -> None:
        self.bar.set_postfix_str(f"M={M} done")
        self.bar.update(1)

    def close(self) -> None:
        self.bar.close()
