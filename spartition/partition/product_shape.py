"""The matrix-product shape of a restricted sub-DAG: rows, columns and identical components.

:func:`~spartition.partition.product.product_capacity` decomposes the
``restrict`` relaxation of a class capacity when the restricted DAG, with its
inputs removed, falls into components (one per output entry: its products
and its sum), each fed by one "row" group of inputs and one "column" group,
every (row, column) pair owning exactly one component and all components
alike. :func:`product_structure` recognises that shape or says which part
breaks it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from spartition.core.dag import CompactDAG

__all__ = ["MAX_COMPONENT_NODES", "ProductStructure", "product_structure"]

#: Largest component whose subsets :func:`~spartition.partition.product.component_options` enumerates.
MAX_COMPONENT_NODES = 12


@dataclass(frozen=True)
class ProductStructure:
    """Rows, columns and components of a restricted matrix-product sub-DAG.

    Attributes
    ----------
    rows, cols : list of list of int
        Input groups (compact indices, in slot order) of each row and column.
    components : dict
        ``(row, col) -> list of int``: the component's nodes in topological order.
    local_preds : list of tuple of int
        For each position of a component, the positions of its predecessors
        inside the component (the same for every component).
    row_slots, col_slots : list of tuple of int
        For each position, the slots of its row-side and column-side input
        predecessors.
    weight, exempt : list
        Weight and P3 exemption (exit of the restriction) per position.
    """

    rows: list
    cols: list
    components: dict
    local_preds: list
    row_slots: list
    col_slots: list
    weight: list
    exempt: list

    @property
    def size(self) -> int:
        return len(self.local_preds)


def _components(cdag: CompactDAG, inputs: np.ndarray) -> list:
    parent = list(range(cdag.n))

    def find(v):
        while parent[v] != v:
            parent[v] = parent[parent[v]]
            v = parent[v]
        return v

    for v in range(cdag.n):
        if inputs[v]:
            continue
        for u in cdag.preds(v):
            if not inputs[int(u)]:
                parent[find(int(u))] = find(v)
    groups: dict = {}
    for v in range(cdag.n):
        if not inputs[v]:
            groups.setdefault(find(v), []).append(v)
    return list(groups.values())


def product_structure(cdag: CompactDAG, w: np.ndarray, exempt: np.ndarray) -> ProductStructure:
    """Recognise the matrix-product shape of a restricted DAG, or say why not.

    Parameters
    ----------
    cdag : CompactDAG
        The restricted DAG (ancestors of the kept nodes).
    w : numpy.ndarray
        Node weights (inputs must weigh 0).
    exempt : numpy.ndarray of bool
        Nodes not counted in P3 (the exits of the restriction).

    Returns
    -------
    ProductStructure

    Raises
    ------
    ValueError
        Naming the first node or pair that breaks the shape.
    """
    inputs = np.array([len(cdag.preds(v)) == 0 for v in range(cdag.n)], dtype=bool)
    heavy = [cdag.names[v] for v in np.flatnonzero(inputs & (w > 0))]
    if heavy:
        raise ValueError(f"input {heavy[0]!r} has weight: the decomposition leaves inputs out of the set")
    comps = _components(cdag, inputs)
    comp_of = {v: k for k, comp in enumerate(comps) for v in comp}
    feeds: dict = {}
    for v in np.flatnonzero(inputs):
        feeds[int(v)] = frozenset(comp_of[int(t)] for t in cdag.succs(v))
    groups: dict = {}
    for v, fed in feeds.items():
        groups.setdefault(fed, []).append(v)
    group_list = sorted(groups.values(), key=min)
    group_of = {v: g for g, members in enumerate(group_list) for v in members}
    comp_groups = []
    for k, comp in enumerate(comps):
        gs = sorted({group_of[int(u)] for v in comp for u in cdag.preds(v) if inputs[int(u)]})
        if len(gs) != 2:
            raise ValueError(f"component of {cdag.names[comp[-1]]!r} is fed by {len(gs)} input groups, not 2 "
                             "(a row and a column): not a matrix-product shape")
        comp_groups.append(gs)
    side = _two_colour(comp_groups, len(group_list))
    rows = [g for g in range(len(group_list)) if side[g] == 0]
    cols = [g for g in range(len(group_list)) if side[g] == 1]
    row_pos = {g: i for i, g in enumerate(rows)}
    col_pos = {g: j for j, g in enumerate(cols)}
    components = {}
    for k, (a, b) in enumerate(comp_groups):
        key = (row_pos[a], col_pos[b]) if side[a] == 0 else (row_pos[b], col_pos[a])
        if key in components:
            raise ValueError(f"row {key[0]} and column {key[1]} share two components: not a matrix-product shape")
        components[key] = sorted(comps[k])
    missing = [(i, j) for i in range(len(rows)) for j in range(len(cols)) if (i, j) not in components]
    if missing:
        i, j = missing[0]
        raise ValueError(f"row {cdag.names[group_list[rows[i]][0]]!r} and column "
                         f"{cdag.names[group_list[cols[j]][0]]!r} share no component: the decomposition "
                         "needs every (row, column) pair (no mask)")
    rows_in = [sorted(group_list[g]) for g in rows]
    cols_in = [sorted(group_list[g]) for g in cols]
    signature = _common_signature(cdag, w, exempt, inputs, components, rows_in, cols_in)
    if len(signature) > MAX_COMPONENT_NODES:
        raise ValueError(f"components have {len(signature)} nodes; at most {MAX_COMPONENT_NODES} are enumerated")
    if len({len(r) for r in rows_in}) > 1 or len({len(c) for c in cols_in}) > 1:
        raise ValueError("rows (or columns) have different numbers of inputs")
    return ProductStructure(rows_in, cols_in, components, [s[0] for s in signature], [s[1] for s in signature],
                            [s[2] for s in signature], [s[3] for s in signature], [s[4] for s in signature])


def _two_colour(comp_groups: list, n_groups: int) -> dict:
    """Side 0 (rows) or 1 (columns) of every input group: a row group only shares components with column groups."""
    side = {0: 0}
    stack = [0]
    adjacent: dict = {}
    for a, b in comp_groups:
        adjacent.setdefault(a, set()).add(b)
        adjacent.setdefault(b, set()).add(a)
    while stack:
        g = stack.pop()
        for h in adjacent.get(g, ()):
            if h not in side:
                side[h] = 1 - side[g]
                stack.append(h)
            elif side[h] == side[g]:
                raise ValueError("input groups are not bipartite: not a matrix-product shape")
    if len(side) != n_groups:
        raise ValueError("the restricted DAG has several unconnected parts: restrict to one product")
    return side


def _common_signature(cdag: CompactDAG, w, exempt, inputs, components: dict, rows_in: list, cols_in: list) -> tuple:
    """The shape every component shares (per position: local predecessors, row and column slots, weight, exemption).

    Raises ValueError naming two components that differ.
    """
    slot = {v: s for group in rows_in + cols_in for s, v in enumerate(group)}
    signature = None
    first = None
    for key, comp in sorted(components.items()):
        pos = {v: p for p, v in enumerate(comp)}
        i, j = key
        rset, cset = set(rows_in[i]), set(cols_in[j])
        sig = []
        for v in comp:
            ps = [int(u) for u in cdag.preds(v)]
            sig.append((
                tuple(sorted(pos[u] for u in ps if not inputs[u])),
                tuple(sorted(slot[u] for u in ps if u in rset)),
                tuple(sorted(slot[u] for u in ps if u in cset)),
                int(w[v]),
                bool(exempt[v]),
            ))
        sig = tuple(sig)
        if signature is None:
            signature, first = sig, comp
        elif sig != signature:
            raise ValueError(f"components of {cdag.names[first[-1]]!r} and {cdag.names[comp[-1]]!r} differ: "
                             "the decomposition needs identical entries")
    return signature
