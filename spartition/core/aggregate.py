"""Sums as single nodes: every chain or tree of binary ``add`` nodes contracted into one node with many in-edges.

The partial game (docs/definitions.md section 2.1) aggregates a node's
in-edges in any order; played on a DAG whose sums are binary trees, it is
held to the order the tree fixes. :func:`aggregate_sums` removes that order,
so any family's DAG can be played with each sum as one node.
"""

from __future__ import annotations

import networkx as nx

from spartition.core.dag import topological_order, validate_dag

__all__ = ["SUM_OP", "aggregate_sums", "chain_schedule_to_aggregated", "sum_roots"]

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

    root = sum_roots(G, op)
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


def sum_roots(G: nx.DiGraph, op: str = "add") -> dict:
    """``{v: the node v is contracted into by aggregate_sums}``: itself, or the root of its tree of adds.

    Examples
    --------
    >>> from spartition.families.classic.dag import reduction
    >>> sorted(set(sum_roots(reduction(3)).values()))
    ['s', 'x0', 'x1', 'x2']
    """
    root = {}
    for v in reversed(topological_order(G)):
        succ = list(G.successors(v))
        inner = G.nodes[v].get("op") == op and len(succ) == 1 and G.nodes[succ[0]].get("op") == op
        root[v] = root[succ[0]] if inner else v
    return root


def chain_schedule_to_aggregated(G: nx.DiGraph, schedule, op: str = "add"):
    """A oneshot schedule of ``G`` played in the partial game on ``aggregate_sums(G)``: never more I/O.

    Every node of ``G`` stands for the node it is contracted into
    (:func:`sum_roots`): a partial sum ``s~k`` of a chain is the sum node
    ``s`` holding its first k + 1 terms. ``compute v`` becomes the partial
    computes, into v's root, of v's operands that are not in v's own tree;
    ``store`` becomes ``save``; a load, save or delete is kept only when the
    root's pebbles change (a root stays red while any node standing for it
    is red, and a save of a root already saved since its last change is
    dropped).

    Parameters
    ----------
    G : networkx.DiGraph
        A DAG whose sums are chains (``shape="chain"``).
    schedule : Schedule
        A valid oneshot schedule of ``G``.

    Returns
    -------
    Schedule
        Variant ``"partial"`` on ``aggregate_sums(G)``, same M; the caller
        replays it (:func:`spartition.core.game.replay`).

    Notes
    -----
    Valid for chains: computing ``s~(k+1)`` needs ``s~k`` red, so the sum
    node is red when each term is aggregated, as the partial game asks of a
    node with marked in-edges. In a balanced tree two partial sums of one
    tree live apart, which one node cannot hold: the replay then refuses the
    translation. Fast memory holds no more: several red nodes of ``G`` map
    to one red node, never the reverse. The I/O is at most the schedule's,
    lower where a load or store of a partial sum finds its sum node
    already in that state.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> from spartition.exact.brute import brute_force
    >>> from spartition.core.game import replay
    >>> G = matmul(1, 3, 1)
    >>> best = brute_force(G, 3, "oneshot")
    >>> best.io, replay(aggregate_sums(G), chain_schedule_to_aggregated(G, best.schedule)).io
    (11, 11)

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    from spartition.core.game import Schedule
    from spartition.settings import PARTIAL

    root = sum_roots(G, op)
    members = {}  # root -> nodes of G standing for it that are red now
    dirty = set()  # roots changed since their last save
    moves = []
    for move, node in schedule.moves:
        r = root[node]
        if move == "compute":
            for u in G.predecessors(node):
                if root[u] != r:
                    moves.append(("partial", root[u], r))
            members.setdefault(r, set()).add(node)
            dirty.add(r)
        elif move == "load":
            if not members.get(r):
                moves.append(("load", r))
            members.setdefault(r, set()).add(node)
        elif move == "store":
            if r in dirty:
                moves.append(("save", r))
                dirty.discard(r)
        elif move == "delete":
            held = members.get(r, set())
            held.discard(node)
            if not held:
                moves.append(("delete", r))
        else:
            moves.append((move, node))
    return Schedule(schedule.M, PARTIAL, tuple(moves), meta={**schedule.meta, "converted_from": "oneshot",
                                                             "sums": "node"})
