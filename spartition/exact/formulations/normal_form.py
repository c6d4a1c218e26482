"""Schedules as compute events and back: the states of a schedule at its computes, their normal form,
and the moves that realise given red sets.

Shared by the compute-event model (:mod:`spartition.exact.formulations.events`)
and the compute-order model (:mod:`spartition.exact.formulations.order`), which
both state a schedule by its red set right after each compute. The normal
form and why it keeps an optimum (lazy loads, eager deletes) are argued in
the module docstring of :mod:`spartition.exact.formulations.events`.
"""

from __future__ import annotations

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule

__all__ = ["normal_form", "schedule_from_events", "state_from_schedule"]


def state_from_schedule(c: CompactDAG, schedule: Schedule):
    """The states of ``schedule`` at its computes.

    Parameters
    ----------
    c : CompactDAG
    schedule : Schedule
        A valid schedule of ``c`` (replayed before).

    Returns
    -------
    order : list of int
        The computed node of each compute event, in order.
    states : list of set
        The red set right after each compute.
    store_event : dict
        Node -> the event whose compute its (last) store follows.
    """
    order, states, store_event = [], [], {}
    red = set()
    last_compute = {}
    for move, name in schedule.moves:
        v = c.index[name]
        if move in ("load", "compute"):
            red.add(v)
            if move == "compute":
                last_compute[v] = len(order)
                order.append(v)
                states.append(set(red))
        elif move == "delete":
            red.discard(v)
        elif move == "store":
            store_event[v] = last_compute[v]
    return order, states, store_event


def normal_form(c: CompactDAG, order, states):
    """The red sets of the normal form: every red run cut to its uses (the model's dominance rules).

    Parameters
    ----------
    c : CompactDAG
    order, states : list
        As :func:`state_from_schedule` returns them.

    Returns
    -------
    list of set
        The red set at each event, in normal form (lazy loads, eager
        deletes; :mod:`spartition.exact.formulations.events` argues why it
        keeps every schedule's cost and feasibility).
    """
    E = len(order)
    used = [set(c.preds(v).tolist()) for v in order]
    red = [set() for _ in range(E)]
    for v in range(c.n):
        t = 0
        while t < E:
            if v not in states[t]:
                t += 1
                continue
            start = t
            while t < E and v in states[t]:
                t += 1
            run = range(start, t)
            uses = [s for s in run if v in used[s]]
            computed_at_start = order[start] == v
            if uses:
                a = start if computed_at_start else uses[0]
                e = uses[-1]
            elif computed_at_start:
                a = e = start
            else:
                continue
            for s in range(a, e + 1):
                red[s].add(v)
    return red


def schedule_from_events(c: CompactDAG, M: int, variant: str, order, red_at, store_events, meta=None) -> Schedule:
    """The moves realising a compute order with given red sets after each compute.

    Before event ``t``: delete the red nodes not in ``red_at[t]``, load the
    nodes of ``red_at[t]`` that are not red (other than ``order[t]``),
    compute ``order[t]``, and store it if ``t`` is in ``store_events``. At
    the end every red node is deleted. The result is checked by replay, not
    trusted.

    Parameters
    ----------
    c : CompactDAG
    M : int
    variant : {"oneshot", "recompute"}
    order : list of int
        The node computed at each event.
    red_at : list of set
        The red set right after each event's compute.
    store_events : set of int
        The events whose computed node is stored right after.
    meta : dict, optional
        The schedule's ``meta``.

    Returns
    -------
    Schedule
    """
    names = c.names
    moves = []
    red: set = set()
    for t, v in enumerate(order):
        target = red_at[t]
        for u in sorted(red - target):
            moves.append(("delete", names[u]))
        red &= target
        for u in sorted(target - red - {v}):
            moves.append(("load", names[u]))
            red.add(u)
        moves.append(("compute", names[v]))
        red.add(v)
        if t in store_events:
            moves.append(("store", names[v]))
    for u in sorted(red):
        moves.append(("delete", names[u]))
    return Schedule(M, variant, tuple(moves), meta=dict(meta or {}))
