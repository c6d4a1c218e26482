"""Automorphisms of a CDAG and the symmetry-breaking precedences they justify.

A graph automorphism of a CDAG maps inputs to inputs and outputs to outputs,
so it maps every pebbling schedule to one of the same cost (rename each move's
node). An exact I/O model may therefore keep, of each orbit of schedules, only
one representative. This module finds the representative's constraints.

Let ``w_1, w_2, ...`` be a fixed order of the non-input nodes and ``pos(v)``
the step at which ``v`` is first computed (distinct nodes have distinct
first-compute steps: one compute per step). For the position vector
``X = (pos(w_1), pos(w_2), ...)``, an automorphism ``g`` maps a schedule with
vector ``X`` to one whose vector is ``X o g^-1``. Because positions are
pairwise distinct, ``X <=lex X o g^-1`` reduces to the single precedence
``pos(w) < pos(g^-1(w))`` where ``w`` is the first node of the order that ``g``
moves. Over the whole group this gives, for every ``i``,

    pos(w_i) < pos(u)  for every u != w_i in the orbit of w_i under G_(i-1),

where ``G_(i-1)`` is the pointwise stabilizer of ``w_1..w_(i-1)``. The
lexicographically least vector of any orbit satisfies all of them at once, so
adding any subset of these precedences never removes every optimal schedule.
This is Puget's reduction of lex-leader constraints for injective variables.

Orbits are found exactly, by colour refinement plus an isomorphism search
(VF2++ from networkx) for each candidate image; every precedence returned is
backed by an explicit automorphism, and a time budget only makes the set
smaller, never unsound.

References
----------
J.-F. Puget, "Breaking symmetries in all different problems", IJCAI 2005.
J.-W. Hong and H. T. Kung, "I/O complexity: the red-blue pebble game", STOC 1981.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import networkx as nx

from spartition.core.dag import CompactDAG, as_compact, compact

__all__ = ["SymmetryBreaking", "find_automorphism", "refine_colors", "symmetry_precedences"]


@dataclass(frozen=True)
class SymmetryBreaking:
    """Precedences ``(w, u)``: node ``w`` is first computed before node ``u``.

    Attributes
    ----------
    pairs : tuple of (int, int)
        Node indices of the CompactDAG.
    order : tuple of int
        The lex order of non-input nodes the pairs were derived from.
    orbits : tuple of int
        Size of the stabilizer orbit of each ``w_i`` examined (1 = fixed).
    complete : bool
        False when the time budget stopped the search early (the pairs are
        then a sound subset).
    group_order : int
        Order of the automorphism group restricted to the examined levels
        (product of the orbit sizes; the full group order when complete).
    wall_s : float
        Time spent.
    """

    pairs: tuple
    order: tuple
    orbits: tuple
    complete: bool
    group_order: int
    wall_s: float
    generators: tuple = field(default=(), compare=False)

    def to_dict(self) -> dict:
        return {
            "precedences": len(self.pairs),
            "group_order": self.group_order,
            "complete": self.complete,
            "wall_s": round(self.wall_s, 4),
        }


def refine_colors(c: CompactDAG, fixed=()) -> list[int]:
    """Stable colour refinement (1-dimensional Weisfeiler-Leman) of a DAG.

    The initial colour of a node is (input?, output?, in-degree, out-degree);
    each node of ``fixed`` gets a colour of its own. Refinement repeats
    "colour := (colour, multiset of predecessor colours, multiset of
    successor colours)" until the number of colours stops growing. Colours
    are preserved by every automorphism that fixes ``fixed`` pointwise.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> len(set(refine_colors(compact(fft(1)))))
    2
    """
    preds, succs = c.pred_lists(), c.succ_lists()
    fixed_rank = {v: k for k, v in enumerate(fixed)}
    col = [
        (fixed_rank.get(v, -1), bool(c.is_input[v]), bool(c.is_output[v]), len(preds[v]), len(succs[v]))
        for v in range(c.n)
    ]
    col = _relabel(col)
    count = len(set(col))
    while True:
        sig = [
            (col[v], tuple(sorted(col[u] for u in preds[v])), tuple(sorted(col[w] for w in succs[v])))
            for v in range(c.n)
        ]
        new = _relabel(sig)
        new_count = len(set(new))
        col = new
        if new_count == count:
            return col
        count = new_count


def _relabel(keys) -> list[int]:
    table = {k: i for i, k in enumerate(sorted(set(keys)))}
    return [table[k] for k in keys]


def _labelled(c: CompactDAG, colors) -> nx.DiGraph:
    H = nx.DiGraph()
    for v in range(c.n):
        H.add_node(v, c=colors[v])
    for v, ws in enumerate(c.succ_lists()):
        for w in ws:
            H.add_edge(v, w)
    return H


def find_automorphism(c: CompactDAG, fixed, w: int, u: int, colors=None, deadline: float | None = None):
    """An automorphism fixing ``fixed`` pointwise and mapping ``w`` to ``u``, or None.

    Parameters
    ----------
    c : CompactDAG
    fixed : sequence of int
        Nodes the automorphism must fix.
    w, u : int
        Required image ``g(w) = u``.
    colors : list of int, optional
        :func:`refine_colors` of ``c`` with ``fixed`` individualised (computed
        if not given).
    deadline : float, optional
        A ``time.perf_counter()`` value: the search gives up there and
        returns None (one search where the colours do not separate a
        non-automorphic pair can take exponential time: minutes on the FFT
        of 32 points).

    Returns
    -------
    dict or None
        The automorphism as a node-index mapping, checked edge by edge.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> c = compact(fft(1))
    >>> g = find_automorphism(c, [], c.index["F1_0"], c.index["F1_1"])
    >>> g[c.index["F0_0"]] == c.index["F0_0"], g[c.index["F1_0"]] == c.index["F1_1"]
    (True, True)
    """
    if colors is None:
        colors = refine_colors(c, fixed)
    if colors[w] != colors[u]:
        return None
    special = max(colors) + 1
    c1 = list(colors)
    c2 = list(colors)
    c1[w] = special
    c2[u] = special
    g = _isomorphism_until(deadline, _labelled(c, c1), _labelled(c, c2))
    if g is None:
        return None
    _check_automorphism(c, g)
    return g


class _OutOfTime(BaseException):
    """Raised inside the isomorphism search at its deadline (a BaseException: no ``except Exception`` swallows it)."""


#: Python calls between two looks at the clock during an isomorphism search.
CLOCK_EVERY_CALLS = 1024


def _isomorphism_until(deadline: float | None, G1, G2):
    """``networkx.vf2pp_isomorphism`` of the coloured graphs, or None once ``deadline`` passes.

    Two independent stops, since either alone was seen to miss the deadline
    in some runs: a trace function that looks at the clock every
    :data:`CLOCK_EVERY_CALLS` Python calls (networkx's VF2++ is pure Python),
    and, in the main thread, a real-time timer whose signal handler raises.
    Either unwinds the search; the previous tracer and SIGALRM handler are
    restored.
    """
    if deadline is None:
        return nx.vf2pp_isomorphism(G1, G2, node_label="c")
    import signal
    import threading

    calls = 0
    armed = [True]
    rung = [False]

    def watch(frame, event, arg):
        nonlocal calls
        calls += 1
        if armed[0] and (rung[0] or (calls % CLOCK_EVERY_CALLS == 0 and time.perf_counter() > deadline)):
            raise _OutOfTime
        return None

    def on_alarm(signum, frame):
        # the raise is lost when the signal lands in a finalizer (Python prints
        # "Exception ignored"); the flag lets the tracer raise at the next call
        rung[0] = True
        if armed[0]:
            raise _OutOfTime

    timer = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    previous = {"trace": sys.gettrace(), "alarm": None}

    def restore():  # idempotent: run again if the stop landed inside the first run
        armed[0] = False
        sys.settrace(previous["trace"])
        if timer:
            signal.setitimer(signal.ITIMER_REAL, 0)
            if previous["alarm"] is not None:
                signal.signal(signal.SIGALRM, previous["alarm"])

    try:
        try:
            if timer:
                previous["alarm"] = signal.signal(signal.SIGALRM, on_alarm)
                signal.setitimer(signal.ITIMER_REAL, max(deadline - time.perf_counter(), 1e-3))
            sys.settrace(watch)
            return nx.vf2pp_isomorphism(G1, G2, node_label="c")
        finally:
            restore()
    except _OutOfTime:
        restore()
        return None


def _check_automorphism(c: CompactDAG, g) -> None:
    succs = c.succ_lists()
    edges = {(v, w) for v in range(c.n) for w in succs[v]}
    if sorted(g.values()) != list(range(c.n)) or any((g[v], g[w]) not in edges for v, w in edges):
        raise AssertionError("isomorphism search returned a map that is not an automorphism")


def symmetry_precedences(dag, order=None, time_budget: float = 10.0) -> SymmetryBreaking:
    """Puget precedences from the stabilizer chain of the DAG's automorphism group.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    order : sequence of int, optional
        Lex order of the non-input nodes (indices of the CompactDAG); default
        the topological order. A solver that is given a hint schedule should
        pass the hint's compute order: the hint then satisfies every
        precedence (``w_i`` is computed before everything not yet fixed).
    time_budget : float
        Seconds after which the search stops; the pairs found so far remain
        valid.

    Returns
    -------
    SymmetryBreaking

    Notes
    -----
    For level ``i`` the orbit of ``w_i`` under the stabilizer of
    ``w_1..w_(i-1)`` is grown from the automorphisms found: candidates are
    nodes with the same refined colour, and each candidate not already in the
    orbit costs one isomorphism search; every automorphism found is applied to
    the orbit so far (orbit closure). The search stops when the refined
    colouring is discrete (the stabilizer is trivial).

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> sb = symmetry_precedences(matmul(2, 2, 2))
    >>> sb.group_order, sb.complete
    (16, True)
    """
    start = time.perf_counter()
    c = as_compact(dag)
    if order is None:
        order = [v for v in range(c.n) if not c.is_input[v]]
    order = [int(v) for v in order]
    pairs, orbits, gens = [], [], []
    fixed: list[int] = []
    complete = True
    group_order = 1
    for w in order:
        if time.perf_counter() - start > time_budget:
            complete = False
            break
        colors = refine_colors(c, fixed)
        if len(set(colors)) == c.n:
            break  # discrete: only the identity fixes `fixed`
        orbit = [w]
        in_orbit = {w}
        level_gens = []
        for u in order:
            if u in in_orbit or u in fixed or colors[u] != colors[w]:
                continue
            if time.perf_counter() - start > time_budget:
                complete = False
                break
            g = find_automorphism(c, fixed, w, u, colors, deadline=start + time_budget)
            if g is None:
                continue
            level_gens.append(g)
            # close the orbit under every automorphism of this level found so far
            k = 0
            while k < len(orbit):
                x = orbit[k]
                for h in level_gens:
                    y = h[x]
                    if y not in in_orbit:
                        in_orbit.add(y)
                        orbit.append(y)
                k += 1
        gens.extend(level_gens)
        orbits.append(len(orbit))
        group_order *= len(orbit)
        pairs.extend((w, u) for u in orbit if u != w)
        if not complete:
            break
        fixed.append(w)
    return SymmetryBreaking(
        pairs=tuple(pairs),
        order=tuple(order),
        orbits=tuple(orbits),
        complete=complete,
        group_order=group_order,
        wall_s=time.perf_counter() - start,
        generators=tuple(gens),
    )
