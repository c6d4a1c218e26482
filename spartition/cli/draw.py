"""The ``draw`` command: pictures of a schedule or a DAG (PNG, SVG, PDF), or a coloured DOT file."""

from __future__ import annotations

import argparse

from spartition.cli.common import (
    CheckFailed,
    add_dag_arg,
    add_json_flag,
    emit,
    nonnegative_int,
    read_dag_arg,
    refuse_overwrite,
)
from spartition.errors import IllegalMove, UsageError

__all__ = ["register"]

_PICTURES = (".png", ".svg", ".pdf")
_DOT = (".dot", ".gv")


def _size(text: str) -> tuple[int, int]:
    """argparse type: ``WIDTHxHEIGHT`` in pixels, each 100..10000."""
    width, _, height = text.lower().partition("x")
    try:
        size = int(width), int(height)
    except ValueError:
        size = None
    if size is None or not all(100 <= s <= 10_000 for s in size):
        raise argparse.ArgumentTypeError(f"must be WIDTHxHEIGHT in pixels, each 100..10000, got {text!r}")
    return size


def register(sub) -> None:
    """Add ``draw`` to the ``spartition`` parser."""
    from spartition.core.dag import DAG_FORMATS

    p = sub.add_parser("draw", help="draw a schedule's timeline or a small DAG (PNG, SVG, PDF), or write coloured DOT",
                       description="With a SCHEDULE: the red pebbles in use against M, loads and stores marked, "
                       "and the I/O so far (--kind timeline, the default), or the DAG coloured by when each node is "
                       "computed (--kind layered). Without: the DAG in layers, coloured by op or by --partition. "
                       "-o FILE.dot writes DOT instead, coloured by the pebbles after --step moves or by --partition.")
    add_dag_arg(p)
    p.add_argument("schedule", nargs="?", help="schedule JSON file")
    p.add_argument("-o", "--output", required=True, help="FILE.png, .svg or .pdf (matplotlib), or FILE.dot / .gv")
    p.add_argument("--kind", choices=("timeline", "layered"),
                   help="picture of a schedule: timeline (default) or layered; without a schedule: layered")
    p.add_argument("--partition", metavar="CERT", help="colour the nodes by the classes of this partition certificate")
    p.add_argument("--step", type=nonnegative_int,
                   help="DOT output: colour by the pebbles after this many moves (default: all)")
    p.add_argument("--size", type=_size, help="WIDTHxHEIGHT in pixels (default 900x500 timeline, 800x600 layered)")
    p.add_argument("--format", choices=tuple(DAG_FORMATS), help="format of the DAG file (default: by extension)")
    add_json_flag(p)
    p.set_defaults(func=_draw)


def _inputs(args):
    from spartition.core.dag import load_dag
    from spartition.core.game import load_schedule

    G = load_dag(args.dag, args.format) if args.format else read_dag_arg(args.dag, args.max_nodes)
    schedule = load_schedule(args.schedule) if args.schedule else None
    classes = None
    if args.partition:
        from spartition.partition.certificate import load_partition

        classes = load_partition(args.partition).classes
        seen = {}
        for k, cls in enumerate(classes):
            for v in cls:
                if v not in G:
                    raise UsageError(f"--partition {args.partition}: class {k} names node {v!r}, "
                                     f"which is not in the DAG {args.dag}")
                if v in seen:
                    raise UsageError(f"--partition {args.partition}: node {v!r} is in classes {seen[v]} and {k}")
                seen[v] = k
    return G, schedule, classes


def _draw(args):
    # first: whatever else is wrong, the message of a path that is an input says so
    refuse_overwrite(args.output, "-o/--output", args.dag, args.schedule, args.partition)
    out = args.output.lower()
    if not out.endswith(_PICTURES + _DOT):
        raise UsageError(f"-o/--output {args.output}: the extension must be one of {', '.join(_PICTURES + _DOT)}")
    if args.kind == "timeline" and not args.schedule:
        raise UsageError("--kind timeline needs a SCHEDULE")
    if args.step is not None and not (args.schedule and out.endswith(_DOT)):
        raise UsageError("--step colours a DOT export (-o FILE.dot) by a SCHEDULE's pebbles")
    G, schedule, classes = _inputs(args)
    data = {"output": args.output, "nodes": G.number_of_nodes()}
    try:
        if out.endswith(_DOT):
            data.update(_dot(args, G, schedule, classes))
        else:
            data.update(_picture(args, G, schedule, classes))
    except IllegalMove as exc:  # a checked object that is invalid: exit 1, as replay and improve say
        raise CheckFailed(f"invalid schedule {args.schedule}: {exc}",
                          {"valid": False, "error": str(exc), "step": exc.step}) from None
    emit(args, data, f"{data['kind']} -> {args.output}")


def _dot(args, G, schedule, classes) -> dict:
    from spartition.core.draw import pebble_state
    from spartition.core.formats.dot import write_dot

    state = title = None
    if schedule is not None and classes is None:
        step = len(schedule.moves) if args.step is None else args.step
        state, title = pebble_state(G, schedule, step), f"after {step} of {len(schedule.moves)} moves"
    write_dot(G, args.output, state=state, classes=classes, title=title)
    return {"kind": "dot", "coloured_by": "partition" if classes is not None else "pebbles" if state else None}


def _picture(args, G, schedule, classes) -> dict:
    from spartition.core.draw import draw_layered, draw_timeline, save_figure, timeline

    kind = args.kind or ("timeline" if schedule is not None else "layered")
    if kind == "timeline":
        size = args.size or (900, 500)
        fig = draw_timeline(G, schedule, size)
        result = timeline(G, schedule)["result"]
        extra = {"peak_red": result.peak_red, "io": result.io, "M": schedule.M}
    else:
        size = args.size or (800, 600)
        fig = draw_layered(G, size, schedule=schedule, classes=classes)
        extra = {"coloured_by": "partition" if classes is not None else "compute step" if schedule else "op"}
    save_figure(fig, args.output)
    return {"kind": kind, "width": size[0], "height": size[1], **extra}
