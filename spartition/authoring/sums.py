"""Sums as trees of binary ``add`` nodes, in a chosen shape and order (docs/definitions.md section 4)."""

from __future__ import annotations

__all__ = [
    "SHAPES",
    "SUMS",
    "check_sums",
    "sums_saved",
    "with_sums",
    "add_named_sum",
    "add_sum",
    "chain_name",
    "chain_prefixes",
    "check_shape",
    "sum_node_count",
    "value_node",
]

SHAPES = ("chain", "tree")
#: How a family builds its sums: ``binary`` (trees of ``add`` nodes, the default) or ``node`` (one node per sum).
SUMS = ("binary", "node")


def check_sums(sums: str) -> None:
    """Raise ``ValueError`` unless ``sums`` is one of :data:`SUMS`.

    Examples
    --------
    >>> check_sums("node")
    >>> check_sums("tree")
    Traceback (most recent call last):
    ...
    ValueError: unknown sums 'tree'; expected one of ('binary', 'node')
    """
    if sums not in SUMS:
        raise ValueError(f"unknown sums {sums!r}; expected one of {SUMS}")


def with_sums(G, sums: str):
    """``G`` as built (``sums="binary"``), or with every sum one node (``sums="node"``).

    ``node`` returns :func:`spartition.core.aggregate.aggregate_sums` of
    ``G`` (each tree of binary ``add`` nodes contracted into its root, op
    ``sum``, its in-edges the sum's terms), with ``sums: "node"`` added to
    the graph's ``params`` so that the DAG rebuilds from them; ``binary``
    leaves ``G`` and its ``params`` untouched (the default build is the
    same DAG as before the parameter existed).

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> H = build("matmul", a=1, b=3, c=1, sums="node")
    >>> H.number_of_nodes(), sorted(H.predecessors("C_0_0")), H.graph["params"]["sums"]
    (10, ['P_0_0_0', 'P_0_0_1', 'P_0_0_2'], 'node')

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854 (a sum aggregated
    in any order).
    """
    check_sums(sums)
    if sums == "binary":
        return G
    from spartition.core.aggregate import aggregate_sums

    H = aggregate_sums(G)
    H.graph["params"] = {**G.graph.get("params", {}), "sums": "node"}
    return H


def sums_saved(sizes) -> int:
    """Nodes a DAG loses when each of its sums becomes one node: ``sum(max(k - 2, 0))`` over the sums' sizes ``k``.

    A sum of k >= 2 terms is k - 1 ``add`` nodes as a chain or a tree, and
    one node aggregated; a one-term sum has no node either way.

    Examples
    --------
    >>> sums_saved([1, 2, 3, 5])
    4
    """
    return sum(max(int(k) - 2, 0) for k in sizes)


def sum_node_count(k: int) -> int:
    """Number of ``add`` nodes in a sum of ``k`` terms: ``k - 1`` (0 for one term)."""
    return max(k - 1, 0)


def check_shape(shape: str) -> None:
    """Raise ``ValueError`` unless ``shape`` is one of :data:`SHAPES`.

    Examples
    --------
    >>> check_shape("tree")
    >>> check_shape("star")
    Traceback (most recent call last):
    ...
    ValueError: unknown summation shape 'star'; expected one of ('chain', 'tree')
    """
    if shape not in SHAPES:
        raise ValueError(f"unknown summation shape {shape!r}; expected one of {SHAPES}")


def chain_name(name: str, first: str, t: int, k: int) -> str:
    """The node holding the first ``t + 1`` terms of the chain sum ``name`` of ``k`` terms.

    ``first`` is the name of the first term (the running value after one
    term); then come ``name~1``, ``name~2``, ... and ``name`` itself for the
    whole sum, as :func:`add_sum` names them.

    Examples
    --------
    >>> [chain_name("s", "a", t, 3) for t in range(3)]
    ['a', 's~1', 's']
    """
    if t == 0:
        return first
    return name if t == k - 1 else f"{name}~{t}"


def add_sum(G, terms, name, entry, shape="chain", op="add"):
    """Add the sum of ``terms`` (existing nodes, in summation order) to ``G``; return its node.

    The final node is named ``name`` with ``entry``; partial sums of a chain
    are ``{name}~1, {name}~2, ...`` (``name~t`` holds the first ``t + 1``
    terms); inner nodes of a tree are ``{name}~L{level}_{pos}``. A sum of one
    term is that term (no node is added).

    Parameters
    ----------
    shape : {"chain", "tree"}
        ``chain`` is left-deep in the given order; ``tree`` pairs neighbours
        level by level (an odd one out is carried up).
    """
    check_shape(shape)
    terms = list(terms)
    if not terms:
        raise ValueError(f"empty sum for {name!r}")
    if len(terms) == 1:
        return terms[0]
    k = len(terms)
    if shape == "chain":
        acc = terms[0]
        for t in range(1, k):
            node = chain_name(name, acc, t, k)
            G.add_node(node, op=op, entry=entry if t == k - 1 else (*entry, "partial", t))
            G.add_edge(acc, node)
            G.add_edge(terms[t], node)
            acc = node
        return acc
    level, layer = 0, terms
    while len(layer) > 1:
        nxt = []
        for p in range(0, len(layer) - 1, 2):
            last = len(layer) == 2
            node = name if last else f"{name}~L{level}_{p // 2}"
            G.add_node(node, op=op, entry=entry if last else (*entry, "partial", level, p // 2))
            G.add_edge(layer[p], node)
            G.add_edge(layer[p + 1], node)
            nxt.append(node)
        if len(layer) % 2:
            nxt.append(layer[-1])
        layer, level = nxt, level + 1
    return layer[0]


def chain_prefixes(name, terms):
    """Names of the running values of a ``chain`` sum built by :func:`add_sum`.

    ``prefixes[t]`` is the node holding the sum of ``terms[:t + 1]``:
    ``terms[0]`` first, then ``name~1``, ``name~2``, ..., and ``name`` for
    the whole sum. An algorithm that accumulates a chain computes
    ``prefixes[t]`` from ``prefixes[t - 1]`` and ``terms[t]``.

    Examples
    --------
    >>> chain_prefixes("s", ["a", "b", "c"])
    ['a', 's~1', 's']
    """
    return [chain_name(name, terms[0], t, len(terms)) for t in range(len(terms))]


def add_named_sum(G, terms, name, entry, shape="chain"):
    """:func:`add_sum`, recording the stand-in when the sum is a single existing term.

    A sum of one term adds no node; the graph attribute ``aliases`` then maps
    ``name`` to ``{"node": term, "entry": list(entry)}`` so that
    :func:`value_node` resolves ``name``.

    Examples
    --------
    >>> import networkx as nx
    >>> G = nx.DiGraph(); G.add_node("x")
    >>> add_named_sum(G, ["x"], "s", ("s",)), G.graph["aliases"]
    ('x', {'s': {'node': 'x', 'entry': ['s']}})
    """
    node = add_sum(G, terms, name, entry, shape)
    if node != name:
        G.graph.setdefault("aliases", {})[name] = {"node": node, "entry": list(entry)}
    return node


def value_node(G, name: str) -> str:
    """The node holding the value named ``name`` (resolving one-term sums, see :func:`add_named_sum`).

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> G = build("attention-forward", n=1, d=1)
    >>> value_node(G, "S_0_0"), value_node(G, "l_0"), value_node(G, "O_0_0")
    ('QK_0_0_0', 'A_0_0', 'O_0_0')
    >>> G = build("approx-attention", n=1, d=1, g=1)
    >>> value_node(G, "H_1_0"), value_node(G, "H_0_0"), value_node(G, "Out_0_0")
    ('R_0_1_0', 'V_0_0', 'Out_0_0')
    """
    alias = G.graph.get("aliases", {}).get(name)
    return alias["node"] if alias else name
