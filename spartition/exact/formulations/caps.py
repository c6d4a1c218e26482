"""How often an optimal recompute schedule needs to compute each node: the harmless compute caps.

The standard (``recompute``) game allows any number of computes, so a model
with compute events needs a cap on their number, and the cap is harmless only
if some optimal schedule lives within it. This module gives such a cap per
node and proves it.

Definition
----------
For a non-input node ``v``::

    pi(v) = 1 + sum of pi(w) over the successors w of v      (pi(v) = 1 for an output)

(every successor of a node is a non-input, so the sum is over non-inputs).

Theorem
-------
Every recompute schedule ``S`` can be turned into a schedule ``S'`` of no
greater I/O, valid for the same DAG and ``M``, that computes every non-input
``v`` at most ``pi(v)`` times, and whose every computed copy is *used*.
Hence some optimal schedule computes each ``v`` at most ``pi(v)`` times, and a
model that allows ``pi(v)`` computes of each ``v`` (``sum pi`` compute events
in all) cuts off no optimum.

Proof. A *copy* of ``v`` is a maximal interval of moves during which ``v`` is
red; it begins with a compute or a load of ``v``. A copy is *used* if a
successor of ``v`` is computed, or ``v`` is stored, during it.

*Reduction.* Delete from ``S`` the compute that begins an unused copy, and
the delete (if any) that ends it. The result is valid: between the two moves
``v`` is now not red, which no other move needed (nothing computed a
successor, nothing stored ``v``); a later load or compute of ``v`` requires
``v`` not red, and it is not; the red count only dropped; the blue set is
unchanged, so the goal is still met. Computes and deletes cost nothing, so the
I/O is unchanged. Repeat while an unused computed copy exists: every round
removes a compute, so this ends, with a schedule ``S'`` whose computed copies
are all used.

*Counting.* In ``S'`` charge each computed copy of ``v`` to one of its uses:
a store of ``v``, or a compute of a successor ``w`` during the copy. A node
is stored at most once in any schedule (a store needs ``v`` not blue, and
nothing makes a node non-blue). A compute of ``w`` happens while exactly one
copy of ``v`` is red, so it is charged for at most one copy of ``v``. Hence::

    computes(v) <= [v stored] + sum over w in succ(v) of computes(w)
               <= 1 + sum over w in succ(v) of computes(w).

An output has no successor, so its computed copies are all charged to its one
store: ``computes(o) <= 1 = pi(o)``. By induction in reverse topological order,
``computes(v) <= pi(v)`` for every non-input ``v``. QED.

The reduced schedule also satisfies, at each compute of ``v``: the copy is
stored or survives to a later use, which the events model states as a
constraint (:func:`spartition.exact.formulations.events.build_event_model`);
that and the lazy-load/eager-delete normal form compose, because the normal
form only removes loads and trims copies to their uses, which leaves every
computed copy used and adds no compute (apply both, alternately, until
neither changes anything: every round removes a move).

``pi`` grows with the number of paths to the outputs, so on deep DAGs the sum
is large; :func:`harmless_events` is what a model needs, and the caller
decides whether that model is small enough to build.

Examples
--------
>>> from spartition.families.classic.dag import matmul, fft
>>> from spartition.core.dag import compact
>>> c = compact(matmul(2, 2, 2))
>>> sorted(set(compute_caps(c).values())), harmless_events(c)
([1, 2], 20)
>>> harmless_events(compact(fft(3)))
88
"""

from __future__ import annotations

from spartition.core.dag import CompactDAG

__all__ = ["compute_caps", "harmless_events"]


def compute_caps(c: CompactDAG) -> dict:
    """``pi(v)`` for every non-input node: computes some optimal recompute schedule stays within.

    Parameters
    ----------
    c : CompactDAG

    Returns
    -------
    dict
        Non-input node index -> ``pi(v) = 1 + sum of pi over its successors``
        (the module docstring proves the cap harmless).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import compact
    >>> compute_caps(compact(chain(4)))
    {3: 1, 2: 2, 1: 3}
    """
    succs = c.succ_lists()
    pi = {}
    for v in reversed(range(c.n)):  # node indices are topological
        if not c.is_input[v]:
            pi[v] = 1 + sum(pi[w] for w in succs[v])
    return pi


def harmless_events(c: CompactDAG) -> int:
    """The number of compute events, ``sum pi(v)``, within which some optimal recompute schedule lies.

    Parameters
    ----------
    c : CompactDAG

    Returns
    -------
    int
    """
    return sum(compute_caps(c).values())


def reduce_schedule(c: CompactDAG, schedule):
    """``schedule`` with every compute of an unused copy removed, until none is left (the reduction above).

    Parameters
    ----------
    c : CompactDAG
    schedule : Schedule
        A valid schedule of ``c``.

    Returns
    -------
    Schedule
        Valid, of the same I/O, every computed copy used, so within
        :func:`compute_caps` (the module docstring proves all three).
    """
    moves = list(schedule.moves)
    while True:
        drop = _unused_computes(c, moves)
        if not drop:
            break
        moves = [mv for k, mv in enumerate(moves) if k not in drop]
    return type(schedule)(schedule.M, schedule.variant, tuple(moves), meta=dict(schedule.meta or {}))


def _unused_computes(c: CompactDAG, moves) -> set:
    """Indices of the compute starting an unused copy and of the delete ending it."""
    open_copy = {}  # node -> [index of the compute (or None for a load), used]
    drop = set()
    preds = c.pred_lists()

    def close(v, end):
        start, used = open_copy.pop(v)
        if start is not None and not used:
            drop.add(start)
            if end is not None:
                drop.add(end)

    for k, (move, name) in enumerate(moves):
        v = c.index[name]
        if move in ("compute", "load"):
            if move == "compute":
                for u in preds[v]:
                    open_copy[u][1] = True
            open_copy[v] = [k if move == "compute" else None, False]
        elif move == "store":
            open_copy[v][1] = True
        elif move == "delete":
            close(v, k)
    for v in list(open_copy):
        close(v, None)
    return drop
