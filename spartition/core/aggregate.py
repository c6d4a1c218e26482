"""Sums as single nodes: every chain or tree of binary ``add`` nodes contracted into one node with many in-edges.

The partial game (docs/definitions.md section 2.1) aggregates a node's
in-edges in any order; played on a DAG whose sums are binary trees, it is
held to the order the tree fixes. :func:`aggregate_sums` removes that order,
so any family's DAG can be played with each sum as one node.
"""

from __future__ import annotations

import networkx as nx

from spartition.core.dag import topological_order, validate_dag

__all__ = ["SUM_OP", "aggregate_sums"]

#: The ``op`` of a sum contracted into one node.
SUM_OP = "sum"


def aggregate_sums(G: nx.DiGraph, op: str = "add") -> nx.DiGraph:
    """The DAG with every tree of binary ``op`` nodes contracted into its root, an ``op = "sum"`` node.

    An ``add`` node whose only successor is an ``add`` node is a partial sum
    inside one summation: it is removed and its operands become operands of
    the node it feeds, repeatedly, up to the root of the tree (an ``add``
    node with another successor, several successors or none). The root
    keeps its name and attributes, its ``op`` becomes ``"sum"``, and its
    predecessors are the leaves of the tree. An ``add`` read by two nodes, or
    by a node that is not an ``add``, is a value of its own and stays a root.

    Parameters
    ----------
    G : networkx.DiGraph
        A CDAG (string ids).
    op : str
        The label of the binary additions to contract.

    Returns
    -------
    networkx.DiGraph
        A new DAG: the nodes of ``G`` but the contracted ones, in the same
        order, with their attributes; graph attributes copied, and
        ``sums = "node"`` recorded.

    Notes
    -----
    O(|V| + |E|). A sum of k terms becomes one node with k in-edges, so a
    matrix product ``a x b`` by ``b x c`` keeps ``ab + bc + abc`` nodes and
    has ``ac`` sums instead of ``ac(b - 1)`` adds (b >= 2). A leaf that
    reaches one tree along two paths (``x + (x + y)``) gives one edge: a
    DAG has one edge per pair.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul, reduction
    >>> H = aggregate_sums(reduction(5, "tree"))
    >>> H.number_of_nodes(), max(d for _, d in H.in_degree()), H.graph["sums"]
    (6, 5, 'node')
    >>> aggregate_sums(matmul(2, 3, 2)).number_of_nodes()
    28

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854 (a sum aggregated
    in any order).
    """
    validate_dag(G)

    def is_add(v):
        return G.nodes[v].get("op") == op

    root = {}
    for v in reversed(topological_order(G)):
        succ = list(G.successors(v))
        inner = is_add(v) and len(succ) == 1 and is_add(succ[0])
        root[v] = root[succ[0]] if inner else v
    H = nx.DiGraph()
    H.graph.update(G.graph)
    H.graph["sums"] = "node"
    for v, data in G.nodes(data=True):
        if root[v] == v:
            H.add_node(v, **data)
            if is_add(v):
                H.nodes[v]["op"] = SUM_OP
    for u, v in G.edges:
        if root[u] == u:
            H.add_edge(u, root[v])
    return H
