"""Per segment of a partial-game schedule: what the attention counts over marked product edges bound.

:func:`~spartition.families.attention.forward.partial_bounds.forward_partial_capacity`
counts the edges of the ``A V`` products of attention forward,
:func:`~spartition.families.attention.backward.partial_bounds.backward_partial_capacity`
those of the ``P dO`` products of the backward pass: in both a product
multiplies an entry of a score-sized matrix (``A_ij``, ``P_ij``), whose tree
goes back to the rows ``Q_i`` and ``K_j``, by an input, and feeds one sum.
:func:`product_edge_charges` reads a replayed schedule for the tests and
the claims, given which nodes play which part (:class:`EdgeCount`).
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.families.common.partial_segments import partial_segment_index

__all__ = ["BACKWARD_PDO", "EdgeCount", "FORWARD_AV", "product_edge_charges"]


@dataclass(frozen=True)
class EdgeCount:
    """The parts of a count over product edges, by node kind (the first item of a node's ``entry``).

    ``product`` the counted products; ``operand`` the score-sized node they
    read, and ``closure`` the kinds of its tree (itself included), each
    ``entry[1:3] = (i, j)``; ``other`` the input they read; ``trees`` the
    kinds of the sums' trees (product, adds, sum, output), each mapped to
    the positions of its tree's key in ``entry``.
    """

    product: str
    operand: str
    closure: tuple
    other: str
    trees: dict


FORWARD_AV = EdgeCount("AV", "A", ("QK", "S", "A"), "V", {"AV": (1, 3), "T": (1, 2), "O": (1, 2)})
BACKWARD_PDO = EdgeCount("PdO", "P", ("QK", "S", "A", "P"), "dO", {"PdO": (2, 3), "dV": (1, 2)})


def product_edge_charges(G, schedule, S: int, count: EdgeCount) -> list:
    """Per segment of ``S`` loads and saves of a partial-game schedule: the quantities of the count's proof.

    ``edges`` (product edges marked), ``fresh`` and ``p`` (products started
    fresh, or held from before or loaded), ``fresh_whole`` (fresh ones with
    both in-edges marked in the segment), ``v`` (entries of the other input
    they read), ``x`` (the score-sized entries they read), ``closed`` (of
    those, the ones charged or in ``R x Q``: all of them, by the count's
    step 2), ``c``, ``r``, ``q`` (charged pairs, rows of ``Q`` and ``K`` red
    at the start or loaded in full), ``t`` (trees touched), ``met`` (touched
    trees with a node in ``B'``), ``available`` (``|start + loaded|``),
    ``B_shared``, ``a`` and ``b`` (red non-inputs at its ends, none at the
    schedule's end).
    """
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    kind = {v: e[0] for v, e in entry.items() if e}
    score = {v: entry[v][1:3] for v in G if kind.get(v) in count.closure}  # the pair whose tree holds v
    tree = {v: tuple(entry[v][i] for i in count.trees[kind[v]]) for v in G if kind.get(v) in count.trees}
    inputs: dict = {}  # ("Q", i) -> the entries of row i of Q; ("K", j) likewise
    for v, e in entry.items():
        if e and e[0] in ("Q", "K"):
            inputs.setdefault((e[0], e[1]), []).append(v)
    moves = [tuple(m) for m in schedule.moves]
    seg_of = partial_segment_index(moves, S)
    marked_in = {(m[1], m[2]): seg_of[t] for t, m in enumerate(moves) if m[0] == "partial"}
    out, red = [], set()
    steps_of: dict = {}
    for t, k in enumerate(seg_of):
        steps_of.setdefault(k, []).append(t)
    for k in range(seg_of[-1] + 1 if moves else 0):
        start, loaded, saved = set(red), set(), set()
        fresh_start = set()
        edges, fresh, fresh_whole, carried, V, A, touched = 0, 0, 0, set(), set(), set(), set()
        for t in steps_of.get(k, ()):
            move = moves[t]
            if move[0] == "load":
                red.add(move[1])
                loaded.add(move[1])
                fresh_start.discard(move[1])
            elif move[0] in ("save", "store"):
                saved.add(move[1])
            elif move[0] == "delete":
                red.discard(move[1])
                fresh_start.discard(move[1])
            else:
                u, w = move[1], move[2]
                if w not in red:
                    red.add(w)
                    fresh_start.add(w)
                if kind.get(u) == count.product:
                    edges += 1
                    touched.add(tree[u])
                    if u in fresh_start:
                        fresh += 1
                        ins = list(G.predecessors(u))
                        fresh_whole += all(marked_in[x, u] == k for x in ins)
                        V.update(x for x in ins if kind.get(x) == count.other)
                        A.update(score[x] for x in ins if kind.get(x) == count.operand)
                    else:
                        carried.add(u)
        held = start | loaded
        charged = {score[v] for v in held if v in score}
        rows_q = {i for i in range(n) if all(v in held for v in inputs["Q", i])}
        rows_k = {j for j in range(n) if all(v in held for v in inputs["K", j])}
        last = k == seg_of[-1]
        end = set() if last else {v for v in red if G.in_degree(v)}
        shared = held | saved | end
        witnesses = {tree[v] for v in shared if v in tree and kind[v] != count.product}
        out.append({"first": k == 0, "last": last, "edges": edges, "fresh": fresh, "fresh_whole": fresh_whole,
                    "p": len(carried), "v": len(V), "x": len(A),
                    "closed": sum(1 for ij in A if ij in charged or (ij[0] in rows_q and ij[1] in rows_k)),
                    "c": len(charged), "r": len(rows_q), "q": len(rows_k), "t": len(touched),
                    "met": len(touched & witnesses), "available": len(held), "B_shared": len(shared),
                    "a": sum(1 for v in start if G.in_degree(v)), "b": len(end)})
    return out
