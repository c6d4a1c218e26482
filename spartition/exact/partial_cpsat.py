"""Exact optimal I/O of the partial-computation game by CP-SAT: a time-indexed model, one move per step.

The rules are those of :mod:`spartition.core.partial` (docs/definitions.md
section 2.1); the model only translates them, and its decoded schedule is
checked by :func:`spartition.core.game.replay`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.core.partial import edge_index, require_partial_memory
from spartition.core.partial_greedy import partial_greedy_schedule
from spartition.cpsat import ORTOOLS_VERSION, new_solver, parameters_dict, proven_bound, status_name
from spartition.settings import DEFAULT_SEED, DEFAULT_WORKERS, PARTIAL, check_seed, check_time_limit, check_workers
from spartition.status import Status

__all__ = ["ASSUMPTIONS", "PartialSolveResult", "partial_horizon", "solve_partial"]

#: What the model assumes, each with why it loses no optimum.
ASSUMPTIONS = (
    "one move per step, at most T steps, idle steps only at the end",
    "T = |E| + s + 2U - g, U the I/O of a replayed schedule, s the nodes with an in-edge, g the outputs to save: "
    "a schedule of I/O Q has |E| partial computes, L loads, Q - L >= g saves and at most L + s deletes (each "
    "removes a pebble placed by a load or by the one fresh start of a node), so some optimal schedule fits",
    "deletes only when fast memory is full, and a save is followed by a delete of the node, unless it saves a "
    "complete output: the reductions of spartition.exact.partial_search, argued there",
    "two consecutive moves that commute come in index order (loads; partial computes of (u1, v1) then (u2, v2) "
    "commute unless v1 = u2: neither changes the other's rule, and the red count after both is the same)",
)


@dataclass(frozen=True)
class PartialSolveResult:
    """The outcome of :func:`solve_partial`, with what produced it."""

    status: Status
    io: int | None
    lower_bound: int | None
    schedule: Schedule | None
    M: int
    horizon: int
    schedule_source: str
    wall_s: float
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """Stable JSON form (``method``, ``status``, ``io`` first; no schedule)."""
        return {"method": "partial-cp-sat", "status": self.status, "io": self.io, "lower_bound": self.lower_bound,
                "M": self.M, "variant": PARTIAL, "horizon": self.horizon, "assumptions": list(ASSUMPTIONS),
                "schedule_source": self.schedule_source, "wall_s": round(self.wall_s, 4),
                "solver": f"ortools {ORTOOLS_VERSION}", "parameters": self.parameters}


def partial_horizon(dag, io_upper: int) -> int:
    """The number of steps that some optimal schedule fits in, given a schedule of I/O ``io_upper`` (see ASSUMPTIONS).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> partial_horizon(chain(3), 2)
    7
    """
    c = as_compact(dag)
    goal = int((c.is_output & ~c.is_input).sum())
    return len(c.pred_idx) + int((c.in_degree() > 0).sum()) + 2 * io_upper - goal


class _Model:
    """The CP-SAT variables of the game, per node (or edge) and step; states 0..T, moves 1..T."""

    def __init__(self, c, M, T):
        self.c, self.M, self.T = c, M, T
        self.model = cp_model.CpModel()
        self.edges = sorted(edge_index(c).items(), key=lambda item: item[1])
        new = self.model.new_bool_var
        n, m, steps = c.n, len(self.edges), range(T + 1)
        self.red = [[new(f"r{v}_{t}") for t in steps] for v in range(n)]
        self.blue = [[new(f"b{v}_{t}") for t in steps] for v in range(n)]
        self.marked = [[new(f"m{e}_{t}") for t in steps] for e in range(m)]
        moves = range(1, T + 1)
        self.load = [{t: new(f"load{v}_{t}") for t in moves} for v in range(n)]
        self.save = [{t: new(f"save{v}_{t}") for t in moves} for v in range(n)]
        self.delete = [{t: new(f"del{v}_{t}") for t in moves} for v in range(n)]
        self.pc = [{t: new(f"pc{e}_{t}") for t in moves} for e in range(m)]
        self.busy = {t: new(f"busy{t}") for t in moves}
        self.in_edges = [[] for _ in range(n)]
        self.out_edges = [[] for _ in range(n)]
        for (u, v), e in self.edges:
            self.in_edges[v].append(e)
            self.out_edges[u].append(e)


def _add_one_move_per_step(x: _Model) -> None:
    for t in range(1, x.T + 1):
        moves = [x.load[v][t] for v in range(x.c.n)] + [x.save[v][t] for v in range(x.c.n)]
        moves += [x.delete[v][t] for v in range(x.c.n)] + [x.pc[e][t] for e in range(len(x.edges))]
        x.model.add(sum(moves) == x.busy[t])
        if t > 1:
            x.model.add_implication(x.busy[t], x.busy[t - 1])  # idle steps only at the end


def _add_frame_axioms(x: _Model) -> None:
    """Red, blue and marked change only by the move of the step that names them."""
    add = x.model.add
    for v in range(x.c.n):
        for t in range(1, x.T + 1):
            r0, r1, b0, b1 = x.red[v][t - 1], x.red[v][t], x.blue[v][t - 1], x.blue[v][t]
            into = [x.pc[e][t] for e in x.in_edges[v]]
            add(r1 <= r0 + x.load[v][t] + sum(into))
            add(r1 >= r0 - x.delete[v][t])
            add(r1 + x.delete[v][t] <= 1)
            add(r1 >= x.load[v][t])
            add(b1 <= b0 + x.save[v][t])
            add(b1 >= b0 - sum(into))
            add(b1 >= x.save[v][t])
            for p in into:
                add(r1 >= p)
                add(b1 + p <= 1)  # the stale blue copy is dropped
    for e in range(len(x.edges)):
        for t in range(1, x.T + 1):
            add(x.marked[e][t] == x.marked[e][t - 1] + x.pc[e][t])


def _add_preconditions(x: _Model) -> None:
    """Each move's rule, read on the state before it."""
    add = x.model.add
    for v in range(x.c.n):
        for t in range(1, x.T + 1):
            r0, b0 = x.red[v][t - 1], x.blue[v][t - 1]
            add(x.load[v][t] <= b0)
            add(x.load[v][t] + r0 <= 1)
            add(x.save[v][t] <= r0)
            add(x.save[v][t] + b0 <= 1)
            add(x.delete[v][t] <= r0)
            for e in x.out_edges[v]:  # light, or every out-edge marked
                add(x.delete[v][t] <= b0 + x.marked[e][t - 1])
    for (u, v), e in x.edges:
        for t in range(1, x.T + 1):
            p = x.pc[e][t]
            add(p <= x.red[u][t - 1])
            for f in x.in_edges[u]:  # the source is complete
                add(p <= x.marked[f][t - 1])
            for f in x.in_edges[v]:  # the target is red, or starts afresh
                add(p <= x.red[v][t - 1] + 1 - x.marked[f][t - 1])


def _add_memory_limit(x: _Model) -> None:
    for t in range(x.T + 1):
        x.model.add(sum(x.red[v][t] for v in range(x.c.n)) <= x.M)


def _add_normal_form(x: _Model) -> None:
    """Deletes at full memory only; a save right before a delete of the node, or of a complete output."""
    add, n = x.model.add, x.c.n
    for t in range(1, x.T + 1):
        add(sum(x.red[v][t - 1] for v in range(n)) >= x.M * sum(x.delete[v][t] for v in range(n)))
        for v in range(n):
            then = x.delete[v][t + 1] if t < x.T else 0
            if x.c.is_output[v] and not x.c.is_input[v]:
                for f in x.in_edges[v]:
                    add(x.save[v][t] <= then + x.marked[f][t - 1])
            else:
                add(x.save[v][t] <= then)
    for e in range(len(x.edges)):
        add(sum(x.pc[e].values()) == 1)  # implied by the goal; it helps the search
    # implied too: an input with a successor is loaded, an output saved; they give the search the trivial bound
    for v in range(n):
        if x.c.is_input[v] and x.out_edges[v]:
            add(sum(x.load[v].values()) >= 1)
        if x.c.is_output[v] and not x.c.is_input[v]:
            add(sum(x.save[v].values()) >= 1)


def _add_symmetry_breaking(x: _Model) -> None:
    """Two consecutive moves that commute are taken in index order: loads, and partial computes of edges
    (u1, v1) then (u2, v2) unless v1 = u2 (the first may complete the second's source)."""
    add, n, src = x.model.add, x.c.n, {e: u for (u, _), e in x.edges}
    for t in range(1, x.T):
        for v in range(1, n):
            add(x.load[v][t] + sum(x.load[w][t + 1] for w in range(v)) <= 1)
        for (_, v), e in x.edges:
            later = [x.pc[f][t + 1] for f in range(e) if src[f] != v]
            if later:
                add(x.pc[e][t] + sum(later) <= 1)


def _add_start_and_goal(x: _Model) -> None:
    c, T, add = x.c, x.T, x.model.add
    for v in range(c.n):
        add(x.red[v][0] == 0)
        add(x.blue[v][0] == int(c.is_input[v]))
        if c.is_output[v] and not c.is_input[v]:
            add(x.blue[v][T] == 1)
    for e in range(len(x.edges)):
        add(x.marked[e][0] == 0)
        add(x.marked[e][T] == 1)


def _normal_form(c, schedule: Schedule) -> Schedule:
    """The same play in the model's normal form, never dearer: deletes kept pending until memory is full, saves
    postponed to the delete they serve, commuting neighbours in index order (the arguments of ASSUMPTIONS)."""
    names, index, M = c.names, c.index, schedule.M
    out, red, pending, owed = [], set(), [], set()

    def make_room():
        if len(red) == M:
            p = pending.pop(0)
            if p in owed:
                out.append(("save", p))
                owed.discard(p)
            out.append(("delete", p))
            red.discard(p)

    complete_outputs = _completions(c, schedule)
    for t, move in enumerate(schedule.moves):
        kind, v = {"store": "save"}.get(move[0], move[0]), move[-1]
        if kind == "delete":
            pending.append(v)
        elif kind == "save":
            (out.append(move) if t in complete_outputs else owed.add(v))
        elif v in pending and kind == "load":
            pending.remove(v)
        else:
            if v not in red:
                make_room()
                red.add(v)
            owed.discard(v)  # an update makes a postponed save useless
            out.append(move)
    return Schedule(M, PARTIAL, _sorted_neighbours(out, index, c), meta=dict(schedule.meta))


def _completions(c, schedule) -> set:
    """The steps that save an output already complete."""
    left = c.in_degree().tolist()
    steps = set()
    for t, move in enumerate(schedule.moves):
        if move[0] == "partial":
            left[c.index[move[2]]] -= 1
        elif move[0] in ("save", "store") and c.is_output[c.index[move[1]]] and not left[c.index[move[1]]]:
            steps.add(t)
    return steps


def _sorted_neighbours(moves, index, c) -> tuple:
    edge = edge_index(c)

    def key(m):
        return edge[(index[m[1]], index[m[2]])] if m[0] == "partial" else index[m[1]]

    moves, swapped = list(moves), True
    while swapped:
        swapped = False
        for i in range(len(moves) - 1):
            a, b = moves[i], moves[i + 1]
            if a[0] == b[0] == "load" or (a[0] == b[0] == "partial" and a[2] != b[1]):
                if key(a) > key(b):
                    moves[i], moves[i + 1], swapped = b, a, True
    return tuple(moves)


def _add_hint(x: _Model, schedule: Schedule) -> None:
    """Hint every variable with a replayed schedule of at most T moves: its moves and the states they lead to."""
    index, edge, n = x.c.index, dict(x.edges), x.c.n
    red, blue, marked = [0] * n, [int(b) for b in x.c.is_input], [0] * len(x.edges)
    table = {"load": x.load, "save": x.save, "delete": x.delete, "partial": x.pc}
    moves = schedule.moves
    for t in range(x.T + 1):
        if t:
            kind = {"store": "save"}.get(moves[t - 1][0], moves[t - 1][0]) if t <= len(moves) else None
            i = edge[(index[moves[t - 1][1]], index[moves[t - 1][2]])] if kind == "partial" else \
                index[moves[t - 1][1]] if kind else None
            for name, per in table.items():
                for k, steps in enumerate(per):
                    x.model.add_hint(steps[t], name == kind and k == i)
            x.model.add_hint(x.busy[t], kind is not None)
            _step(x, kind, i, red, blue, marked)
        for v in range(n):
            x.model.add_hint(x.red[v][t], red[v])
            x.model.add_hint(x.blue[v][t], blue[v])
        for e in range(len(x.edges)):
            x.model.add_hint(x.marked[e][t], marked[e])


def _step(x: _Model, kind, i, red, blue, marked) -> None:
    if kind == "load":
        red[i] = 1
    elif kind == "save":
        blue[i] = 1
    elif kind == "delete":
        red[i] = 0
    elif kind == "partial":
        v = x.edges[i][0][1]
        red[v], blue[v], marked[i] = 1, 0, 1


def _decode(x: _Model, solver) -> Schedule:
    names, moves = x.c.names, []
    for t in range(1, x.T + 1):
        for kind, per in (("load", x.load), ("save", x.save), ("delete", x.delete)):
            moves += [(kind, names[v]) for v in range(x.c.n) if solver.value(per[v][t])]
        for (u, v), e in x.edges:
            if solver.value(x.pc[e][t]):
                moves.append(("partial", names[u], names[v]))
    return Schedule(x.M, PARTIAL, tuple(moves), meta={"method": "partial-cp-sat"})


def solve_partial(dag, M: int, *, time_limit: float = 60.0, workers: int = DEFAULT_WORKERS,
                  seed: int = DEFAULT_SEED) -> PartialSolveResult:
    """The minimum I/O of the partial game by CP-SAT, with its proof status.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        At least 2 if the DAG has an edge.
    time_limit : float
        Seconds of search.
    workers, seed : int
        CP-SAT workers and random seed.

    Returns
    -------
    PartialSolveResult
        ``OPTIMAL`` when the search closed (the horizon loses no optimum,
        see :data:`ASSUMPTIONS`), else ``FEASIBLE`` with the proven lower
        bound; the schedule is replayed before it is returned (the solver's,
        or the greedy hint's if the solver found none better).

    Notes
    -----
    States ``red[v, t]``, ``blue[v, t]``, ``marked[e, t]`` for t = 0..T and one
    move per step t = 1..T (load, save, delete of a node, partial compute of
    an edge, or idle). A red node is light when it is blue too, dark
    otherwise, as in the checker. The greedy schedule
    (:func:`spartition.core.partial_greedy.partial_greedy_schedule`) gives
    the horizon and the hint.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> r = solve_partial(fft(1), 2, time_limit=20)
    >>> r.status, r.io, r.lower_bound
    ('OPTIMAL', 5, 5)

    References
    ----------
    A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
    the red-blue pebble game", SPAA 2025, arXiv:2506.10854.
    """
    check_time_limit(time_limit, allow_none=False)
    check_workers(workers)
    check_seed(seed)
    start = time.perf_counter()
    c = as_compact(dag)
    require_partial_memory(c, M)
    greedy = partial_greedy_schedule(c, M)
    upper = replay(c, greedy).io
    x = _Model(c, M, partial_horizon(c, upper))
    for step in (_add_one_move_per_step, _add_frame_axioms, _add_preconditions, _add_memory_limit,
                 _add_normal_form, _add_symmetry_breaking, _add_start_and_goal):
        step(x)
    io = sum(x.load[v][t] + x.save[v][t] for v in range(c.n) for t in range(1, x.T + 1))
    # the trivial bound stated on the objective itself: one worker proves nothing above an objective's own domain
    x.model.add_linear_constraint(io, trivial_lower_bound(c), upper)
    x.model.minimize(io)
    hint = _normal_form(c, greedy)
    if replay(c, hint).io <= upper and len(hint.moves) <= x.T:  # both hold by the arguments of ASSUMPTIONS
        _add_hint(x, hint)
    solver = new_solver(time_limit, workers, seed)
    code = solver.solve(x.model)
    schedule, source = greedy, "greedy"
    if code in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        decoded = _decode(x, solver)
        if replay(c, decoded).io <= upper:
            schedule, source = decoded, "solver"
    found = replay(c, schedule).io
    bound = proven_bound(solver, code, "min", found=found)
    status = Status.OPTIMAL if bound is not None and bound == found else Status.FEASIBLE
    return PartialSolveResult(status=status, io=found, lower_bound=bound, schedule=schedule, M=M, horizon=x.T,
                              schedule_source=source, wall_s=time.perf_counter() - start,
                              parameters={**parameters_dict(solver), "cp_sat_status": status_name(code)})
