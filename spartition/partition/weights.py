"""What a partition bound counts: the DAG without isolated nodes, and the weight of every node.

Isolated nodes (input and output at once) cost no I/O and never hold a red
pebble, so every partition quantity is computed on the DAG without them
(docs/definitions.md section 3): :func:`partitioned_dag`. A class capacity
counts a weight per node, unit by default or chosen by a selector such as
``"op=mul,tensor=QK"`` (:func:`node_weights`).
"""

from __future__ import annotations

import networkx as nx

from spartition.core.dag import CompactDAG, compact, strip_isolated, to_networkx

__all__ = ["node_weights", "parse_selector", "partitioned_dag", "weight_label"]


def partitioned_dag(dag) -> tuple:
    """The DAG that partitions are computed on: without isolated nodes, in both forms.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG

    Returns
    -------
    (CompactDAG, networkx.DiGraph or None)
        The compact form without isolated nodes, and its networkx form: the
        stripped copy of a networkx ``dag`` (graph attributes kept), the
        rebuilt graph of a CompactDAG that had isolated nodes, or None for a
        CompactDAG without any (it is returned as it is, not rebuilt).

    Examples
    --------
    >>> G = nx.DiGraph([("a", "b")])
    >>> G.add_node("z")
    >>> cdag, H = partitioned_dag(G)
    >>> cdag.names, sorted(H)
    (('a', 'b'), ['a', 'b'])
    """
    if isinstance(dag, CompactDAG):
        isolated = dag.isolated()
        if not isolated.any():
            return dag, None
        G = to_networkx(dag, isolated)
        return compact(G), G
    H = strip_isolated(dag)
    return compact(H), H


def weight_label(weight) -> str:
    """How a capacity result names its weight: ``"unit"``, the selector itself, or the type of a dict or callable.

    Parameters
    ----------
    weight : None, str, dict or callable

    Returns
    -------
    str

    Examples
    --------
    >>> weight_label(None), weight_label("op=mul"), weight_label({"a": 1})
    ('unit', 'op=mul', 'dict')
    """
    return "unit" if weight is None else weight if isinstance(weight, str) else type(weight).__name__


def parse_selector(text: str) -> dict:
    """Parse ``"op=mul,tensor=QK"`` into ``{"op": {"mul"}, "tensor": {"QK"}}``.

    Keys: ``op`` (the node's op label), ``tensor`` (the first item of its
    ``entry``), or any other node attribute (compared as a string). A value
    may list alternatives with ``|``: ``op=mul|add``.

    Parameters
    ----------
    text : str

    Returns
    -------
    dict
        key -> set of accepted values.

    Raises
    ------
    ValueError
        On an item without ``=``.

    Examples
    --------
    >>> sel = parse_selector("op=mul|add, tensor=QK")
    >>> sorted(sel["op"]), sel["tensor"]
    (['add', 'mul'], {'QK'})
    """
    sel = {}
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue
        if "=" not in item:
            raise ValueError(f"weight selector item {item!r} is not key=value")
        key, value = item.split("=", 1)
        sel.setdefault(key.strip(), set()).update(x.strip() for x in value.split("|"))
    return sel


def _value(attrs: dict, key: str):
    """The node's value for a selector key, as a string (``tensor``: the first item of ``entry``), or None."""
    if key == "tensor":
        entry = attrs.get("entry")
        return str(entry[0]) if isinstance(entry, (tuple, list)) and entry else None
    got = attrs.get(key)
    return None if got is None else str(got)


def _matches(attrs: dict, sel: dict) -> bool:
    return all(_value(attrs, key) in values for key, values in sel.items())


def _values_seen(dag, sel: dict) -> str:
    """What the selector's keys take in ``dag``, to show beside a selector that matches nothing."""
    parts = []
    for key in sel:
        seen = set()
        for _, attrs in dag.nodes(data=True):
            value = _value(attrs, key)
            if value is not None:
                seen.add(str(value))
        shown = ", ".join(sorted(seen)[:8]) + (", ..." if len(seen) > 8 else "")
        parts.append(f"{key} takes {shown}" if seen else f"no node has {key!r}")
    return "; ".join(parts)


def node_weights(dag, weight=None) -> dict:
    """The weight of every node: 1 everywhere (``None``), by selector string, dict or callable.

    Parameters
    ----------
    dag : networkx.DiGraph
    weight : None, str, dict or callable
        ``None``: unit weight. ``str``: a selector (:func:`parse_selector`),
        weight 1 on matching nodes and 0 elsewhere. ``dict``: node -> int
        (missing nodes 0). ``callable(node, attrs) -> int``.

    Returns
    -------
    dict
        node -> non-negative int.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> w = node_weights(matmul(1, 1, 2), "op=mul")
    >>> sorted(v for v in w if w[v])
    ['P_0_0_0', 'P_0_1_0']
    """
    if weight is None:
        out = {v: 1 for v in dag}
    elif isinstance(weight, str):
        sel = parse_selector(weight)
        out = {v: int(_matches(dag.nodes[v], sel)) for v in dag}
        if dag.number_of_nodes() and not any(out.values()):  # a typo would silently give U = 0
            raise ValueError(f"weight selector {weight!r} matches no node of the DAG ({_values_seen(dag, sel)})")
    elif isinstance(weight, dict):
        out = {v: int(weight.get(v, 0)) for v in dag}
    elif callable(weight):
        out = {v: int(weight(v, dag.nodes[v])) for v in dag}
    else:
        raise ValueError(f"weight must be None, a selector string, a dict or a callable, got {type(weight).__name__}")
    bad = [v for v, x in out.items() if x < 0]
    if bad:
        raise ValueError(f"negative weight on node {bad[0]!r}")
    return out
