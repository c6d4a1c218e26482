"""What each segment of a replayed forward schedule charges, step by step of :mod:`spartition.families.attention.forward.bounds`.

:func:`segment_charges` reads a replayed schedule of the ``attention-forward`` DAG segment by segment (``S`` I/O
moves each) and returns the quantities the oneshot counts bound, so the tests and the ``segments`` claim set check
every step of the proofs on real schedules.
"""

from __future__ import annotations

from spartition.families.common.schedule_segments import shared_charges, split_segments

__all__ = ["segment_charges"]


def segment_charges(G, schedule, S: int) -> list[dict]:
    """Per segment of ``S`` I/O moves of a schedule: the quantities the proof of :func:`segment_capacity` bounds.

    The check of the proof on real schedules: for each segment, the
    products computed, the inputs read (``q, k, v``), the charged and closed
    pairs, the rows and columns with a closed pair, the fully read ``V``
    columns, the ``T`` trees of closed rows that meet ``B``, and ``|B|``
    (step 9: without the nodes red at its end for the segment that ends the
    schedule); the tests assert steps 1-9 and ``products <= F(M, S)`` on
    each, with the budgets of the first and the last segment.

    Parameters
    ----------
    G : networkx.DiGraph
        A dense ``attention-forward`` DAG.
    schedule : Schedule
        A valid oneshot schedule (replay it first: this walks it without checking).
    S : int
        I/O moves per segment.

    Returns
    -------
    list of dict
        One per segment, in order (``first`` and ``last`` mark the segments
        that start and end the schedule).
    """
    owner = {v: _tree_of(G.nodes[v].get("entry")) for v in G}
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    members: dict = {}
    for v, t in owner.items():
        if t:
            members.setdefault(t, []).append(v)
    segments = split_segments(G, schedule, S, entry)
    n = G.graph["params"]["n"]
    return [_charges(seg, entry, owner, members, n, k == 0, k == len(segments) - 1) for k, seg in enumerate(segments)]


def _tree_of(e):
    """The tree a node belongs to in the proof: ``("pair", i, j)`` (Tree(i, j), A_ij), ``("T", i, c)`` (with O_ic), ``("l", i)``."""
    if not e:
        return None
    if e[0] in ("QK", "S", "A"):
        return ("pair", e[1], e[2])
    if e[0] == "AV":
        return ("T", e[1], e[3])
    if e[0] == "T":
        return ("T", e[1], e[2])
    if e[0] == "l":
        return ("l", e[1])
    if e[0] == "O":  # step 5's Tree'(T_ic) holds the output O_ic
        return ("T", e[1], e[2])
    return None


def _charges(seg, entry, owner, members, n: int, first: bool, last: bool) -> dict:
    # step 9: the segment that ends the schedule needs no node red at its end
    B = seg["start"] | seg["io"] | (set() if last else seg["end"])
    shared = shared_charges(seg, last)
    done = seg["computed"]
    products = [v for v in done if entry[v][:1] == ("QK",)]
    av = [v for v in done if entry[v][:1] == ("AV",)]
    a_read = {(entry[v][1], entry[v][2]) for v in av}
    pairs = {(entry[v][1], entry[v][2]) for v in products}
    met = {owner[b] for b in B if owner.get(b)}
    # step 10's active pairs: a node of the pair's tree computed here, or A_ij read here (by AV or by the row sum)
    active = pairs | seg["a_read"] | {t[1:] for t in (owner.get(v) for v in done) if t and t[0] == "pair"}
    charged = {p for p in pairs if ("pair", *p) in met}
    closed = pairs - charged
    read = seg["read"]
    counts = {t: sum(1 for v in read if entry[v][0] == t) for t in "QKV"}
    per_col: dict = {}
    for v in read:
        if entry[v][0] == "V":
            per_col[entry[v][2]] = per_col.get(entry[v][2], 0) + 1
    rows = {i for i, _ in closed}
    touched = {("T", entry[v][1], entry[v][3]) for v in av}
    t_trees = [t for t in members if t[0] == "T" and t[1] in rows]
    t_whole = [t for t in t_trees if t not in met and all(v in done for v in members[t])]
    full = {i for i in rows if all((i, j) in active for j in range(n))}
    l_trees = [("l", i) for i in rows if ("l", i) in members]
    return {"first": first, "last": last, "products": len(products), "q": counts["Q"], "k": counts["K"], "v": counts["V"],
            "charged": len(charged), "closed": len(closed), "closed_rows": len(rows),
            "closed_cols": len({j for _, j in closed}), "full_cols": sum(1 for k in per_col.values() if k == n),
            "t_met": sum(1 for t in t_trees if t in met), "t_whole": len(t_whole),
            "t_neither": sum(1 for t in t_trees if t not in met and t not in t_whole),
            "B": len(B), "start_or_loaded": len(seg["start"] | seg["loaded"]),
            "closed_whole": all(all(v in done for v in members[("pair", *p)]) for p in closed),
            # steps 6-8
            "av": len(av), "alpha": len(a_read), "active_met": sum(1 for p in active if ("pair", *p) in met),
            "active_unmet_closed": all(p in closed and all(v in done for v in members[("pair", *p)])
                                       for p in active if ("pair", *p) not in met),
            "touched": len(touched), "touched_met": sum(1 for t in touched if t in met),
            "touched_whole": sum(1 for t in touched if t not in met and all(v in done for v in members[t])),
            # step 10
            "full_rows": len(full), "l_met": sum(1 for t in l_trees if t in met),
            "l_whole_not_full": sum(1 for t in l_trees if t not in met and t[1] not in full),
            "t_whole_not_full": sum(1 for t in t_whole if t[1] not in full),
            "t_met_not_full": sum(1 for t in t_trees if t in met and t[1] not in full),
            "full_active_met": sum(1 for i in full for j in range(n) if (i, j) not in closed and ("pair", i, j) in met),
            "full_fewest_open": min((sum(1 for j in range(n) if (i, j) not in closed) for i in full), default=n),
            **shared}
