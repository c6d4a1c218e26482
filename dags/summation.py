"""Sums as trees of binary ``add`` nodes, in a chosen shape and order (REFERENCE section 4)."""

from __future__ import annotations

__all__ = ["SHAPES", "add_sum", "sum_node_count"]

SHAPES = ("chain", "tree")


def sum_node_count(k: int) -> int:
    """Number of ``add`` nodes in a sum of ``k`` terms: ``k - 1`` (0 for one term)."""
    return max(k - 1, 0)


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
    if shape not in SHAPES:
        raise ValueError(f"unknown summation shape {shape!r}; expected one of {SHAPES}")
    terms = list(terms)
    if not terms:
        raise ValueError(f"empty sum for {name!r}")
    if len(terms) == 1:
        return terms[0]
    k = len(terms)
    if shape == "chain":
        acc = terms[0]
        for t in range(1, k):
            node = name if t == k - 1 else f"{name}~{t}"
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
    k = len(terms)
    return [terms[0]] + [name if t == k - 1 else f"{name}~{t}" for t in range(1, k)]
