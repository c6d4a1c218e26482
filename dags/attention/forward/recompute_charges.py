"""What each segment of a replayed forward schedule charges, step by step of the counts valid with recomputation.

:func:`forward_recompute_charges` reads a replayed schedule of a dense ``attention-forward`` DAG (any game)
segment by segment over its designated compute events (:mod:`spartition.partition.designation`) and returns the
quantities :mod:`spartition.families.attention.forward.recompute_bounds` bounds, so the tests and the
``segments`` claim set check every step of the proofs on schedules that really recompute.
"""

from __future__ import annotations

from spartition.partition.designation import designate, designated_segments

__all__ = ["forward_recompute_charges"]


def _pair_or_row(e):
    """``("pair", i, j)`` for the nodes of Pair(i, j), ``("row", i)`` for those of R_i, None for inputs."""
    if e[:1] in (("QK",), ("S",), ("A",)):
        return ("pair", e[1], e[2])
    if e[:1] in (("l",), ("r",), ("AV",), ("T",), ("O",)):
        return ("row", e[1])
    return None


def _tree_of(e):
    """``(i, c)`` for the nodes of Tree'(T_ic) (its A V products, adds and O_ic), else None."""
    if e[:1] == ("AV",):
        return (e[1], e[3])
    if e[:1] in (("T",), ("O",)):
        return (e[1], e[2])
    return None


def forward_recompute_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` I/O moves: the quantities the proofs of the forward counts bound.

    For the tests, on any valid schedule of a dense ``attention-forward`` DAG
    (either game). :func:`forward_recompute_capacity`: ``products`` (distinct
    ``QK`` nodes with a designated event in the segment), ``q``, ``k`` (entries
    read by those events), ``charged`` and ``closed`` pairs, ``closed_rows``
    and ``closed_cols``, ``rows_met`` (closed rows whose ``R_i`` meets ``B'``),
    ``closed_whole`` (every closed pair has all ``d`` products designated in
    the segment), ``B_shared``, ``inputs_available``, ``a`` and ``b``.
    :func:`forward_recompute_joint_capacity`: ``av`` (distinct ``AV`` nodes
    with a designated event), ``v``, ``alpha`` (pairs whose ``A_ij`` those
    events read), ``a_read_closed`` (each such pair meets ``B'`` or is
    closed), ``pairs_met`` (step 7's ``c``), ``touched`` and ``touched_met``
    (trees of ``T_ic`` with a designated product, and those meeting ``B'``),
    ``row_nodes`` (nodes of the ``R_i`` in ``B'``: step 7's ``t``).
    """
    d = designate(G, schedule)
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    dim = G.graph["params"]["d"]
    out = []
    for seg in designated_segments(d, schedule, S):
        prods = {v for v in seg.nodes if entry[v][:1] == ("QK",)}
        reads = {u for e in seg.events if entry[d.nodes[e]][:1] == ("QK",) for u, _ in d.operands[e]}
        av_reads = {u for e in seg.events if entry[d.nodes[e]][:1] == ("AV",) for u, _ in d.operands[e]}
        end = frozenset() if seg.last else {v for v in seg.end if G.in_degree(v)}
        shared = seg.start | seg.loaded | seg.stored | end
        met = {_pair_or_row(entry[v]) for v in shared}
        pairs = {entry[v][1:3] for v in prods}
        charged = {x for x in pairs if ("pair", *x) in met}
        closed = pairs - charged
        rows = {i for i, _ in closed}
        per_pair: dict = {}
        for v in prods:
            per_pair[entry[v][1:3]] = per_pair.get(entry[v][1:3], 0) + 1
        a_pairs = {entry[u][1:3] for u in av_reads if entry[u][:1] == ("A",)}
        touched = {_tree_of(entry[v]) for v in seg.nodes if entry[v][:1] == ("AV",)}
        trees_met = {_tree_of(entry[v]) for v in shared}
        out.append({"first": seg.first, "last": seg.last, "products": len(prods),
                    "q": sum(1 for u in reads if entry[u][:1] == ("Q",)),
                    "k": sum(1 for u in reads if entry[u][:1] == ("K",)),
                    "charged": len(charged), "closed": len(closed), "closed_rows": len(rows),
                    "closed_cols": len({j for _, j in closed}), "rows_met": sum(1 for i in rows if ("row", i) in met),
                    "closed_whole": all(per_pair[x] == dim for x in closed), "B_shared": len(shared),
                    "inputs_available": sum(1 for v in seg.start | seg.loaded if not G.in_degree(v)),
                    "a": sum(1 for v in seg.start if G.in_degree(v)), "b": len(end),
                    "av": sum(1 for v in seg.nodes if entry[v][:1] == ("AV",)),
                    "v": sum(1 for u in av_reads if entry[u][:1] == ("V",)), "alpha": len(a_pairs),
                    "a_read_closed": all(x in closed for x in a_pairs if ("pair", *x) not in met),
                    "pairs_met": sum(1 for x in pairs | a_pairs if ("pair", *x) in met),
                    "touched": len(touched), "touched_met": len(touched & trees_met),
                    "row_nodes": sum(1 for v in shared if (_pair_or_row(entry[v]) or ("",))[0] == "row")})
    return out
