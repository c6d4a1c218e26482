"""DAG commands: families, build, info, convert."""

from __future__ import annotations

from spartition.cli.common import add_dag_arg, add_json_flag, emit, positive_int, read_dag_arg, refuse_overwrite

__all__ = ["dag_info", "register"]


def register(sub) -> None:
    """Add ``build``, ``families`` and ``info`` to the ``spartition`` parser."""
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

    from spartition.core.dag import DAG_FORMATS

    formats = ", ".join(f"{name} ({' '.join(exts)})" for name, exts in DAG_FORMATS.items())
    p = sub.add_parser("convert", help="read a DAG in one file format and write it in another",
                       description=f"Formats: {formats}. By default each file's extension decides. "
                                   "Ids, edges and node attributes are kept; the written file reads back "
                                   "as the same DAG (same hash).")
    add_dag_arg(p)
    p.add_argument("output", help="the file to write (never the input)")
    p.add_argument("--from", dest="from_format", choices=list(DAG_FORMATS), help="format of the input file")
    p.add_argument("--to", dest="to_format", choices=list(DAG_FORMATS), help="format of the output file")
    add_json_flag(p)
    p.set_defaults(func=_convert)


def _max_nodes_flag(p) -> None:
    from spartition.core.registry import DEFAULT_MAX_NODES

    p.add_argument("--max-nodes", type=positive_int, default=DEFAULT_MAX_NODES,
                   help=f"refuse to build a DAG of more nodes (default {DEFAULT_MAX_NODES:,})")


def _build(args):
    from spartition.core.dag import save_dag
    from spartition.core.registry import build

    refuse_overwrite(args.output, "-o/--output")
    G = build(args.family, args.params, max_nodes=args.max_nodes)
    if args.output:
        save_dag(G, args.output)
    data = {"family": args.family, "params": G.graph.get("params", {}), "nodes": G.number_of_nodes(),
            "edges": G.number_of_edges(), "output": args.output}
    emit(args, data, f"{args.family} {G.graph.get('params', {})}: {data['nodes']} nodes, {data['edges']} edges"
         + (f" -> {args.output}" if args.output else ""))


def family_parameters(builder) -> dict:
    """A family builder's parameters, name -> default (``None`` for a required one), in order.

    Examples
    --------
    >>> from spartition.core.registry import family
    >>> family_parameters(family("fft"))
    {'k': 1}
    """
    import inspect

    return {name: (None if p.default is inspect.Parameter.empty else p.default)
            for name, p in inspect.signature(builder).parameters.items()
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}


def _families(args):
    from spartition.core.registry import family, family_names

    rows = {}
    for name in family_names():
        builder = family(name)
        rows[name] = {"doc": (builder.__doc__ or "").strip().splitlines()[0],
                      "parameters": family_parameters(builder)}

    def shown(params: dict) -> str:
        # the names a user types, with the value taken when the parameter is left out
        def value(v):
            return str(v).lower() if isinstance(v, bool) else ("''" if v == "" else str(v))
        return ", ".join(k if v is None else f"{k}={value(v)}" for k, v in params.items()) or "none"

    emit(args, rows, "\n".join(f"{name:28s} {row['doc']}\n{'':28s} parameters: {shown(row['parameters'])}"
                                for name, row in rows.items()))


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


def _convert(args):
    from spartition.core.dag import dag_format, dag_hash, load_dag, save_dag

    refuse_overwrite(args.output, "OUTPUT", args.dag)
    G = load_dag(args.dag, args.from_format) if args.from_format else read_dag_arg(args.dag, args.max_nodes)
    fmt = dag_format(args.output, args.to_format)
    save_dag(G, args.output, fmt)
    data = {"input": args.dag, "output": args.output, "format": fmt, "nodes": G.number_of_nodes(),
            "edges": G.number_of_edges(), "hash": dag_hash(G)}
    emit(args, data, f"{args.dag} -> {args.output} ({fmt}): {data['nodes']} nodes, {data['edges']} edges")
