"""Family commands: ``spartition formulas`` lists the published bounds of a family at given parameters and M."""

from __future__ import annotations


from spartition.cli.common import add_json_flag, bounded_int, emit, is_dag_file
from spartition.errors import UsageError
from spartition.study.numbers import format_number

__all__ = ["register", "parse_pairs"]


def register(sub) -> None:
    """Add the ``formulas`` command to the ``spartition`` parser."""
    p = sub.add_parser(
        "formulas",
        help="evaluate every registered published bound of a family at given parameters and M",
        description="Lists each bound with its value, kind, source and whether (params, M) is in its regime. "
        "Asymptotic bounds (Theta/O/Omega) show the bare expression: their constant is unknown.",
    )
    p.add_argument("family", help="a family with registered formulas (see 'spartition families'), or a DAG file "
                   "that records its family and parameters (as 'spartition build -o' writes it)")
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


def _typed(text: str, kind, key: str, family: str):
    """``text`` as the ``kind`` a family registered for paper parameter ``key``."""
    from spartition.errors import ParameterError

    try:
        return kind(text)
    except ValueError:
        what = {int: "an integer", float: "a number"}.get(kind, kind.__name__)
        raise ParameterError(f"parameter {key} of {family} must be {what}, got {text!r}") from None


def parse_pairs(family: str, pairs) -> dict:
    """``["n=4", "d=2"]`` -> typed keyword values, typed by the family's registered parameters.

    A key the family's formula registration accepts as a paper parameter
    (:attr:`~spartition.study.formulas.FamilyBounds.given`, e.g. ``Z_QK``)
    takes the type registered there; every other key must be a parameter of
    the family's builder and is typed like its default. For a name that is
    no registered family, numbers are read as numbers and the rest as text.

    Raises
    ------
    UnknownFamily
        On a parameter the family does not have.
    ParameterError
        On a pair without ``=`` or a value of the wrong type.

    Examples
    --------
    >>> parse_pairs("attention-forward", ["n=4", "Z_QK=7", "mask=causal"])
    {'Z_QK': 7, 'n': 4, 'mask': 'causal'}
    >>> parse_pairs("no-such-family", ["n=4", "x=0.5", "mask=causal"])
    {'n': 4, 'x': 0.5, 'mask': 'causal'}
    """
    from spartition.core.registry import family as builder_of
    from spartition.core.registry import parse_params
    from spartition.errors import ParameterError, UnknownFamily
    from spartition.study.formulas import family_bounds

    try:
        builder = builder_of(family)
    except UnknownFamily:
        builder = None
    try:
        given = family_bounds(family).given
    except UnknownFamily:  # no formulas: the builder's parameters only
        given = {}
    out, rest = {}, []
    for pair in pairs:
        if "=" not in pair:
            raise ParameterError(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if key in given:
            out[key] = _typed(value, given[key], key, family)
        elif builder is None:
            out[key] = _guess(value)
        else:
            rest.append(pair)
    if builder is not None:
        out.update(parse_params(builder, rest, family))
    return out


def _formulas(args):
    from spartition.study.formulas import evaluate_formulas, paper_params_for

    if is_dag_file(args.family):
        args.family, params = _recorded_family(args.family, args.params)
    else:
        params = parse_pairs(args.family, args.params)
    paper = paper_params_for(args.family, params)
    rows = evaluate_formulas(args.family, params, args.M)
    data = {"family": args.family, "M": args.M, "paper_params": paper, "formulas": [r.to_dict() for r in rows]}
    shown = ", ".join(f"{k}={v}" for k, v in paper.items() if v is not None)
    lines = [f"{args.family} ({shown}), M={args.M}"]
    lines.append(f"{'name':28s} {'kind':5s} {'value':>12s} {'applies':7s} {'constants':10s} {'games':17s} source")
    for r in rows:
        tag = "" if r.constants == "explicit" else " (constant unknown)"
        lines.append(
            f"{r.name:28s} {r.kind:5s} {format_number(r.value, 6, 'n/a'):>12s} {'yes' if r.applies else 'no':7s} "
            f"{r.constants:10s} {','.join(r.games):17s} {r.source}: {r.where}{tag}"
        )
    emit(args, data, "\n".join(lines))


def _recorded_family(path: str, pairs) -> tuple:
    """(family, parameters) a DAG file records (``spartition build`` writes them); formulas are stated for families."""
    from spartition.core.dag import load_dag
    from spartition.core.registry import family_params

    if pairs:
        raise UsageError("a DAG file takes no parameters: its family and parameters are read from it")
    G = load_dag(path)
    name = G.graph.get("family")
    if not name:
        raise UsageError(f"DAG file {path} names no family (graph attribute 'family'): the published formulas are "
                         "stated for families; give FAMILY key=value... instead")
    return name, family_params(G, f"DAG file {path}")
