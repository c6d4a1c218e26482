"""What each segment of a replayed backward schedule charges, step by step of the counts valid with recomputation.

:func:`backward_recompute_charges` reads a replayed schedule of the ``attention-backward-flash`` DAG (any game)
segment by segment over its designated compute events (:mod:`spartition.partition.designation`) and returns the
quantities :mod:`spartition.families.attention.backward.recompute_bounds` bounds, so the tests and the
``segments`` claim set check every step of the proof on schedules that really recompute.
"""

from __future__ import annotations

from spartition.partition.designation import designate, designated_segments

__all__ = ["backward_recompute_charges"]


_PAIR = ("QK", "S", "A", "P", "dOV", "dP", "dPD", "dS")


_CONSUMER = {"PdO": ("dV", 2, 3), "dSK": ("dQ", 1, 3), "dSQ": ("dK", 2, 3)}


def _tree(e):
    """The consumer tree of a node: ``("dV", j, c)``, ``("dQ", i, l)`` or ``("dK", j, l)``; None elsewhere."""
    if e[:1] and e[0] in _CONSUMER:
        name, x, y = _CONSUMER[e[0]]
        return (name, e[x], e[y])
    if e[:1] and e[0] in ("dV", "dQ", "dK"):
        return (e[0], e[1], e[2])
    return None


def backward_recompute_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` I/O moves: the quantities the proofs of the backward counts bound.

    For the tests, on any valid schedule of a dense ``attention-backward-flash``
    DAG (either game). Per segment: ``qk``, ``dov`` and ``consumer`` (distinct
    products with a designated event in it), ``q, k, o, v`` (entries read by
    designated product events), ``pairs_met`` (pairs with such a product, or
    whose ``P`` or ``dS`` a designated consumer reads, with a node in ``B'``),
    ``closed_qk`` / ``closed_dov`` (pairs with a product of that kind and no
    node in ``B'``), their rows and columns (``rows_qk``, ``cols_qk``,
    ``rows_dov``, ``cols_dov``), ``closed_whole`` (every closed pair has all
    ``d`` products of its kind designated in the segment), ``qk_pairs`` and
    ``dov_pairs`` (pairs with a product of each kind), ``t`` (consumer-tree
    nodes in ``B'``), ``t_lines`` (rows with a ``dQ`` node and columns with a
    ``dV`` or ``dK`` node in ``B'``), ``closed_covered`` (every closed pair
    has its row or column among them), ``touched`` and ``touched_met``
    (consumer trees with a designated event, and those meeting ``B'``),
    ``alpha`` (pairs whose ``P`` or ``dS`` a designated consumer reads),
    ``alpha_ok`` (each meets ``B'`` or is QK-closed), ``alpha_p`` and ``alpha_ds``
    (pairs whose ``P``, whose ``dS`` such an event reads), ``alpha_ds_ok``
    (each of the latter meets ``B'`` or is dOV-closed), ``dov_in_qk`` and
    ``rows_dov_in_qk`` (every dOV-closed pair, and row, is a QK-closed one),
    ``qk_only`` and ``qk_only_cols`` (QK-closed pairs that are not
    dOV-closed, and their columns), ``qk_only_in_dv`` (each such column has
    a ``dV`` tree node in ``B'``), ``qk_only_rows_read_do`` (each QK-closed
    row without a dOV-closed pair has an entry of ``dO`` read), ``rows_qk_l`` (QK-closed
    rows whose ``l_i`` is red at the start or loaded), ``rows_dov_d``
    (dOV-closed rows with a node of ``D_i``'s tree or an ``O_ic`` in ``B'``), ``B_shared``,
    ``inputs_available``, ``a`` and ``b``.
    """
    des = designate(G, schedule)
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    dim = G.graph["params"]["d"]
    products = ("QK", "dOV", *_CONSUMER)
    out = []
    for seg in designated_segments(des, schedule, S):
        kinds = {"QK": {}, "dOV": {}}
        for v in seg.nodes:
            if entry[v][:1] in (("QK",), ("dOV",)):
                per = kinds[entry[v][0]]
                per[entry[v][1:3]] = per.get(entry[v][1:3], 0) + 1
        prod_events = [e for e in seg.events if entry[des.nodes[e]][:1] and entry[des.nodes[e]][0] in products]
        reads = {u for e in prod_events for u, _ in des.operands[e]}
        read = {"P": set(), "dS": set()}  # pairs whose P / dS a designated consumer event reads
        for e in prod_events:
            if entry[des.nodes[e]][0] in _CONSUMER:
                for u, _ in des.operands[e]:
                    if entry[u][:1] in (("P",), ("dS",)):
                        read[entry[u][0]].add(entry[u][1:3])
        read_pairs = read["P"] | read["dS"]
        end = frozenset() if seg.last else {v for v in seg.end if G.in_degree(v)}
        shared = seg.start | seg.loaded | seg.stored | end
        met = {entry[v][1:3] for v in shared if entry[v][:1] and entry[v][0] in _PAIR}
        pairs = set(kinds["QK"]) | set(kinds["dOV"])
        closed = {kind: {x for x in per if x not in met} for kind, per in kinds.items()}
        count = {t: sum(1 for u in reads if entry[u][:1] == (t,)) for t in ("Q", "K", "dO", "V")}
        trees_met = [x for x in (_tree(entry[v]) for v in shared) if x]
        rows_met = {x[1] for x in trees_met if x[0] == "dQ"}
        cols_met = {x[1] for x in trees_met if x[0] in ("dV", "dK")}
        dv_cols_met = {x[1] for x in trees_met if x[0] == "dV"}
        do_rows = {entry[u][1] for u in reads if entry[u][:1] == ("dO",)}
        touched = {_tree(entry[v]) for v in seg.nodes if entry[v][:1] and entry[v][0] in _CONSUMER}
        inputs_in = {entry[u][:2] for u in seg.start | seg.loaded if not G.in_degree(u)}
        d_rows = {entry[v][1] for v in shared if entry[v][:1] in (("D",), ("dOO",), ("O",))}
        out.append({"first": seg.first, "last": seg.last,
                    "qk": sum(kinds["QK"].values()), "dov": sum(kinds["dOV"].values()),
                    "consumer": sum(1 for v in seg.nodes if entry[v][:1] and entry[v][0] in _CONSUMER),
                    "q": count["Q"], "k": count["K"], "o": count["dO"], "v": count["V"],
                    "pairs_met": sum(1 for x in pairs | read_pairs if x in met),
                    "closed_qk": len(closed["QK"]), "closed_dov": len(closed["dOV"]),
                    "rows_qk": len({i for i, _ in closed["QK"]}), "cols_qk": len({j for _, j in closed["QK"]}),
                    "rows_dov": len({i for i, _ in closed["dOV"]}), "cols_dov": len({j for _, j in closed["dOV"]}),
                    "closed_whole": all(kinds[kind][x] == dim for kind, xs in closed.items() for x in xs),
                    "qk_pairs": len(kinds["QK"]), "dov_pairs": len(kinds["dOV"]),
                    "t": len(trees_met), "t_lines": len(rows_met) + len(cols_met),
                    "closed_covered": all(i in rows_met or j in cols_met for xs in closed.values() for i, j in xs),
                    "touched": len(touched), "touched_met": len(touched & set(trees_met)),
                    "alpha": len(read_pairs), "alpha_ok": all(x in met or x in closed["QK"] for x in read_pairs),
                    "alpha_p": len(read["P"]), "alpha_ds": len(read["dS"]),
                    "alpha_ds_ok": all(x in met or x in closed["dOV"] for x in read["dS"]),
                    "dov_in_qk": closed["dOV"] <= closed["QK"],
                    "qk_only": len(closed["QK"] - closed["dOV"]),
                    "qk_only_cols": len({j for _, j in closed["QK"] - closed["dOV"]}),
                    "qk_only_in_dv": all(j in dv_cols_met for _, j in closed["QK"] - closed["dOV"]),
                    "qk_only_rows_read_do": all(i in do_rows for i in {i for i, _ in closed["QK"]}
                                                - {i for i, _ in closed["dOV"]}),
                    "rows_dov_in_qk": {i for i, _ in closed["dOV"]} <= {i for i, _ in closed["QK"]},
                    "rows_qk_l": sum(1 for i in {i for i, _ in closed["QK"]} if ("l", i) in inputs_in),
                    "rows_dov_d": sum(1 for i in {i for i, _ in closed["dOV"]} if i in d_rows),
                    "B_shared": len(shared),
                    "inputs_available": sum(1 for u in seg.start | seg.loaded if not G.in_degree(u)),
                    "a": sum(1 for u in seg.start if G.in_degree(u)), "b": len(end)})
    return out
