"""The partial-computation red-blue pebble game (PRBP): its rules, its feasibility, and replay.

A node's value is aggregated from its in-edges one edge at a time
(docs/definitions.md section 2.1; Papp, Sobczyk & Yzelman, SPAA 2025). A red
pebble is *light* (equal to the node's blue copy) or *dark* (changed since);
light plus dark is at most M.

============  ===========================================================  ====
move          allowed when                                                 cost
============  ===========================================================  ====
load v        v is blue and not red; v becomes light red                   1
partial u v   (u, v) is an unmarked edge; u is complete and red; v is      0
              red, or v has no pebble and none of its in-edges is
              marked; v becomes dark red (its blue copy, now stale, is
              dropped) and the edge is marked
save v        v is dark red; v becomes light red and blue                  1
delete v      v is light red, or dark red with every out-edge marked       0
============  ===========================================================  ====

A node is *complete* when all its in-edges are marked (an input always is).
Start: blue on the inputs, nothing red, no edge marked. End: every edge
marked and every output (sink) blue. ``store`` is read as ``save``.

How the tool reads the paper, where it leaves a choice:

- One-shot: each edge is marked once; marking it again is illegal.
- A partly aggregated value lives only in its pebbles: a node without a red
  pebble receives a partial compute only while none of its in-edges is
  marked (it starts afresh). A node whose partial value is only blue must be
  loaded first; one whose partial value was deleted can never be finished.
- Light implies blue and dark implies not blue, so the colour of a red
  pebble is read off the blue set; an input's pebble is always light.
- Deleting a dark sink is legal (its out-edges are vacuously all marked),
  but the sink then never becomes blue: the end check names it.
- Useless moves are illegal, as in the other games: loading a red node,
  saving a light one.
- Isolated nodes (input and output at once) cost nothing. Any DAG with an
  edge is pebblable with M >= 2; a DAG without edges needs no pebble.

References
----------
A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
the red-blue pebble game", SPAA 2025, arXiv:2506.10854 (v2).
"""

from __future__ import annotations

from spartition.core.dag import CompactDAG, as_compact
from spartition.errors import IllegalMove, InfeasibleMemory

__all__ = [
    "PARTIAL_MOVES",
    "check_partial_moves",
    "edge_index",
    "min_partial_memory",
    "require_partial_memory",
]

#: The moves of the partial game; ``store`` is accepted as a synonym of ``save``.
PARTIAL_MOVES = ("load", "partial", "save", "delete")
_SYNONYMS = {"store": "save"}


def edge_index(c: CompactDAG) -> dict:
    """Edge ids of a compact DAG: ``{(u, v): e}``, edges numbered by target, then source (the CSR order).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> sorted(edge_index(compact(fft(1))).values())
    [0, 1, 2, 3]
    """
    ptr, idx = c.pred_ptr.tolist(), c.pred_idx.tolist()
    return {(idx[e], v): e for v in range(c.n) for e in range(ptr[v], ptr[v + 1])}


def min_partial_memory(dag) -> int:
    """The smallest M for which the partial game can be won: 2 if ``dag`` has an edge, else 0.

    Two pebbles suffice for any DAG: aggregate each node's in-edges in
    topological order, one complete (loaded) source and the target red at a
    time, saving the target whenever it leaves fast memory.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, matmul
    >>> min_partial_memory(fft(1)), min_partial_memory(matmul(2, 2, 2))
    (2, 2)
    """
    return 2 if len(as_compact(dag).pred_idx) else 0


def require_partial_memory(dag, M: int) -> None:
    """Raise :class:`InfeasibleMemory` if the partial game on ``dag`` cannot be won with M red pebbles.

    The message names an edge, whose two ends must be red together.
    """
    c = as_compact(dag)
    if M < min_partial_memory(c):
        v = next(v for v in range(c.n) if len(c.preds(v)))
        u = int(c.preds(v)[0])
        raise InfeasibleMemory(f"M = {M} is too small for the partial game: edge ({c.names[u]!r}, {c.names[v]!r}) "
                               "needs both ends red, so every pebbling needs M >= 2")


class _Board:
    """The state of a replay, by node index: red, blue, marked edges, marked in- and out-edges per node."""

    def __init__(self, c: CompactDAG):
        self.c = c
        self.edge = edge_index(c)
        self.red = [False] * c.n
        self.blue = c.is_input.tolist()
        self.marked = bytearray(len(self.edge))
        self.marked_in = [0] * c.n
        self.marked_out = [0] * c.n
        self.indeg = c.in_degree().tolist()
        self.outdeg = c.out_degree().tolist()
        self.n_red = 0

    def complete(self, v: int) -> bool:
        return self.marked_in[v] == self.indeg[v]

    def first_unmarked(self, v: int, out: bool) -> str:
        """Name an unmarked in-edge (out-edge with ``out``) of ``v``, for a message."""
        c = self.c
        for w in (c.succs(v) if out else c.preds(v)).tolist():
            e = self.edge[(v, w) if out else (w, v)]
            if not self.marked[e]:
                a, b = (c.names[v], c.names[w]) if out else (c.names[w], c.names[v])
                return f"({a!r}, {b!r})"
        return ""


def _parse(board: _Board, t: int, move) -> tuple:
    """``(kind, u, v)`` with node indices (``u`` is None but for a partial compute), or :class:`IllegalMove`."""
    if not isinstance(move, (list, tuple)) or not move:
        raise IllegalMove(t, None, None, f"a move is [move, node] or ['partial', u, v], got {move!r}")
    kind = _SYNONYMS.get(move[0], move[0])
    names = tuple(move[1:])
    shown = names[0] if len(names) == 1 else names
    if kind not in PARTIAL_MOVES:
        raise IllegalMove(t, move[0], shown, f"unknown move {move[0]!r}; expected one of {PARTIAL_MOVES}")
    if len(names) != (2 if kind == "partial" else 1):
        raise IllegalMove(t, move[0], shown, "a partial compute names an edge ['partial', u, v], every other move "
                                             "one node")
    index = board.c.index
    for name in names:
        if name not in index:
            raise IllegalMove(t, move[0], shown, f"unknown node {name!r}")
    if kind == "partial":
        u, v = index[names[0]], index[names[1]]
        if (u, v) not in board.edge:
            raise IllegalMove(t, move[0], shown, f"({names[0]!r}, {names[1]!r}) is not an edge")
        return kind, u, v
    return kind, None, index[names[0]]


def _rule_broken(board: _Board, kind: str, u, v: int, M: int) -> str | None:
    """The rule the move breaks in the current state, or None if it is legal."""
    red, blue, names = board.red, board.blue, board.c.names
    if kind == "load":
        if not blue[v]:
            return "load of a node not in slow memory"
        if red[v]:
            return "load of a node already in fast memory"
    elif kind == "save":
        if not red[v]:
            return "save of a node not in fast memory"
        if blue[v]:
            return "save of a light node (its fast and slow copies are equal)"
    elif kind == "delete":
        if not red[v]:
            return "delete of a node not in fast memory"
        if not blue[v] and board.marked_out[v] < board.outdeg[v]:
            return (f"delete of a dark node whose value is still needed: out-edge {board.first_unmarked(v, True)} "
                    "is unmarked (save it first)")
    else:
        if board.marked[board.edge[(u, v)]]:
            return "edge already marked (each edge is computed once)"
        if not board.complete(u):
            return f"source {names[u]!r} is not complete: in-edge {board.first_unmarked(u, False)} is unmarked"
        if not red[u]:
            return f"source {names[u]!r} is not in fast memory"
        if not red[v] and board.marked_in[v]:
            where = "only in slow memory (load it first)" if blue[v] else "lost (it was deleted)"
            return f"target {names[v]!r} is not red and has marked in-edges: its partial value is {where}"
    if kind in ("load", "partial") and not red[v] and board.n_red + 1 > M:
        return f"more than M = {M} red pebbles"
    return None


def _apply(board: _Board, kind: str, u, v: int) -> None:
    if kind == "load":
        board.red[v] = True
        board.n_red += 1
    elif kind == "save":
        board.blue[v] = True
    elif kind == "delete":
        board.red[v] = False
        board.n_red -= 1
    else:
        if not board.red[v]:
            board.red[v] = True
            board.n_red += 1
        board.blue[v] = False  # the blue copy is stale once v changes
        board.marked[board.edge[(u, v)]] = 1
        board.marked_in[v] += 1
        board.marked_out[u] += 1


def _end_check(board: _Board, T: int) -> None:
    c = board.c
    unmarked = [v for v in range(c.n) if not board.complete(v)]
    if unmarked:
        edges = [board.first_unmarked(v, False) for v in unmarked[:3]]
        more = f" and edges into {len(unmarked) - 3} more nodes" if len(unmarked) > 3 else ""
        raise IllegalMove(T, None, None, f"edges not marked at the end: {', '.join(edges)}{more}")
    unfinished = [c.names[v] for v in range(c.n) if c.is_output[v] and not board.blue[v]]
    if unfinished:
        more = f" and {len(unfinished) - 5} more" if len(unfinished) > 5 else ""
        raise IllegalMove(T, None, None, f"outputs not in slow memory at the end: {unfinished[:5]}{more}")


def check_partial_moves(dag, M: int, moves) -> dict:
    """Check moves of the partial game one by one; return what they cost.

    :func:`spartition.core.game.replay` calls this for a schedule of variant
    ``"partial"`` and wraps the counts in a ``ReplayResult``.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The CDAG; a node with k in-edges aggregates them one at a time.
    M : int
        Fast memory: light plus dark red pebbles.
    moves : sequence
        ``["load", v]``, ``["partial", u, v]``, ``["save", v]`` (or
        ``["store", v]``) and ``["delete", v]``.

    Returns
    -------
    dict
        ``loads``, ``stores`` (the saves), ``computes`` (the partial
        computes), ``peak_red`` and ``moves`` (their number).

    Raises
    ------
    IllegalMove
        At the first move that breaks a rule, naming the step (from 0), the
        move, the node (the edge ``(u, v)`` of a partial compute) and the
        rule; or at the end, naming unmarked edges or outputs not blue.

    Notes
    -----
    A plain step-by-step replay, O(T + |E|) for T moves. The rules are
    those of the module docstring.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> moves = [("load", "c0"), ("partial", "c0", "c1"), ("delete", "c0"),
    ...          ("partial", "c1", "c2"), ("delete", "c1"), ("save", "c2")]
    >>> check_partial_moves(chain(3), 2, moves)["stores"]
    1
    >>> check_partial_moves(chain(3), 2, [("partial", "c1", "c2")])
    Traceback (most recent call last):
    ...
    spartition.errors.IllegalMove: step 0: partial ('c1', 'c2'): source 'c1' is not complete: in-edge ('c0', 'c1') is unmarked

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854, section 3 (the game).
    """
    board = _Board(as_compact(dag))
    counts = {"load": 0, "partial": 0, "save": 0, "delete": 0}
    peak = 0
    for t, move in enumerate(moves):
        kind, u, v = _parse(board, t, move)
        rule = _rule_broken(board, kind, u, v, M)
        if rule is not None:
            shown = (board.c.names[u], board.c.names[v]) if kind == "partial" else board.c.names[v]
            raise IllegalMove(t, move[0], shown, rule)
        _apply(board, kind, u, v)
        counts[kind] += 1
        peak = max(peak, board.n_red)
    _end_check(board, len(moves))
    return {"loads": counts["load"], "stores": counts["save"], "computes": counts["partial"], "peak_red": peak,
            "moves": len(moves)}
