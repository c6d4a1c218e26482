"""Family commands: ``spartition formulas`` lists the published bounds of a family at given parameters and M."""

from __future__ import annotations

import math

from spartition.cli.common import add_json_flag, bounded_int, emit

__all__ = ["register", "parse_pairs"]


def register(sub) -> None:
    """Add the ``formulas`` command to the ``spartition`` parser."""
    p = sub.add_parser(
        "formulas",
        help="evaluate every registered published bound of a family at given parameters and M",
        description="Lists each bound with its value, kind, source and whether (params, M) is in its regime. "
        "Asymptotic bounds (Theta/O/Omega) show the bare expression: their constant is unknown.",
    )
    p.add_argument("family", help="family name, e.g. attention-forward, approx-attention")
    p.add_argument("params", nargs="*", metavar="key=value", help="family parameters, e.g. n=64 d=16 mask=causal")
    p.add_argument("--M", type=bounded_int, required=True, help="fast memory size")
    add_json_flag(p)
    p.set_defaults(func=_formulas)


def _guess(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def parse_pairs(family: str, pairs) -> dict:
    """``["n=4", "d=2"]`` -> typed keyword values, typed by the family builder when it is registered.

    Examples
    --------
    >>> parse_pairs("approx-attention-unregistered", ["n=4", "g=2", "x=0.5", "mask=causal"])
    {'g': 2, 'n': 4, 'x': 0.5, 'mask': 'causal'}
    """
    from spartition.errors import UnknownFamily
    from spartition.core.registry import family as builder_of
    from spartition.core.registry import parse_params

    out = {}
    rest = []
    for pair in pairs:
        if "=" not in pair:
            raise UnknownFamily(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if key in ("r", "g", "degree", "Z_input", "Z_QK"):
            out[key] = _guess(value)
        else:
            rest.append(pair)
    try:
        builder = builder_of(family)
    except UnknownFamily:
        builder = None
    if builder is not None:
        out.update(parse_params(builder, rest, family))
    else:
        out.update({k: _guess(v) for k, v in (pair.split("=", 1) for pair in rest)})
    return out


def _fmt(x) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "n/a"
    return f"{x:.6g}"


def _formulas(args):
    from spartition.study.formulas import evaluate_formulas, paper_params_for

    params = parse_pairs(args.family, args.params)
    paper = paper_params_for(args.family, params)
    rows = evaluate_formulas(args.family, params, args.M)
    data = {"family": args.family, "M": args.M, "paper_params": paper, "formulas": [r.to_dict() for r in rows]}
    shown = ", ".join(f"{k}={v}" for k, v in paper.items() if v is not None)
    lines = [f"{args.family} ({shown}), M={args.M}"]
    lines.append(f"{'name':28s} {'kind':5s} {'value':>12s} {'applies':7s} {'constants':10s} source")
    for r in rows:
        tag = "" if r.constants == "explicit" else " (constant unknown)"
        lines.append(
            f"{r.name:28s} {r.kind:5s} {_fmt(r.value):>12s} {'yes' if r.applies else 'no':7s} "
            f"{r.constants:10s} {r.source}: {r.where}{tag}"
        )
    emit(args, data, "\n".join(lines))
