"""Named nodes of the DAG family builders: a node with its op, entry and predecessors, input matrices, paper parameters.

Every built-in family builder adds its nodes through :func:`add_node` (so
node attributes and edge order follow one convention), its input matrices
through :func:`add_inputs`, and records the parameters the papers' bounds
use in the graph attribute ``paper`` (:func:`paper_params`).
"""

from __future__ import annotations

import networkx as nx

__all__ = ["add_inputs", "add_node", "paper_params"]


def add_node(G, name, op, entry, preds=(), **attrs):
    """Add node ``name`` with attributes ``op``, ``entry`` (and ``attrs``) and an edge from each of ``preds``.

    Returns
    -------
    str
        ``name``, so that a builder can write ``terms = [add_node(...) for ...]``.

    Examples
    --------
    >>> G = nx.DiGraph(); G.add_node("a"); G.add_node("b")
    >>> add_node(G, "c", "mul", ("c",), ["a", "b"]), sorted(G.edges)
    ('c', [('a', 'c'), ('b', 'c')])
    """
    G.add_node(name, op=op, entry=entry, **attrs)
    for p in preds:
        G.add_edge(p, name)
    return name


def add_inputs(G, name: str, rows: int, cols: int) -> None:
    """Add the ``rows x cols`` input matrix ``name``: nodes ``{name}_{a}_{b}``, entry ``(name, a, b)``, row-major.

    Examples
    --------
    >>> G = nx.DiGraph(); add_inputs(G, "Q", 1, 2)
    >>> list(G.nodes(data="entry"))
    [('Q_0_0', ('Q', 0, 0)), ('Q_0_1', ('Q', 0, 1))]
    """
    for a in range(rows):
        for b in range(cols):
            add_node(G, f"{name}_{a}_{b}", "input", (name, a, b))


def paper_params(G: nx.DiGraph) -> dict:
    """The parameters the papers' bounds are stated in (graph attribute ``paper``).

    For the attention families ``n, d, r, g, Z_input, Z_QK`` (``r`` and
    ``g`` are ``None`` for exact attention; ``Z_input`` counts the input
    entries, ``Z_QK`` the allowed score entries, i.e. the mask size); for
    ``approx-attention`` ``n, d, g, r, Z_input``.

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> paper_params(build("attention-forward", n=3, d=2, mask="causal"))
    {'n': 3, 'd': 2, 'r': None, 'g': None, 'Z_input': 18, 'Z_QK': 6}
    >>> paper_params(build("approx-attention", n=4, d=3, g=2))
    {'n': 4, 'd': 3, 'g': 2, 'r': 10, 'Z_input': 36}
    """
    return dict(G.graph["paper"])
