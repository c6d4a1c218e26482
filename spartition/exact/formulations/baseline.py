"""The plain time-indexed CP-SAT model of the red-blue pebble game (the baseline formulation).

One step per non-delete move, frame axioms per node and step, deletions
implicit, at most M red after every step. Kept for comparison and tests;
:mod:`spartition.exact.formulations.order` is the model to use.

Step ``t`` (1..T) first deletes any red nodes (implicitly), then makes at most
one move: a load, a store or a compute. Variables ``red[v,t]``,
``blue[v,t]``, ``load[v,t]``, ``store[v,t]``, ``comp[v,t]``:

* ``red[v,t] <= red[v,t-1] + load[v,t] + comp[v,t]`` (red only by load/compute),
  ``load[v,t] <= red[v,t]``, ``comp[v,t] <= red[v,t]`` (and then counted in memory);
* ``load[v,t] <= blue[v,t-1]``, ``load[v,t] <= 1 - red[v,t-1]``;
* ``store[v,t] <= red[v,t]``, ``blue[v,t] = blue[v,t-1] + store[v,t]``;
* ``comp[v,t] <= red[u,t]`` for predecessors ``u``, ``comp[v,t] <= 1 - red[v,t-1]``;
* ``sum_v red[v,t] <= M``; oneshot: ``sum_t comp[v,t] <= 1``;
* ``blue[v,T] = 1`` for outputs; objective ``sum load + sum store``.

Horizon (oneshot): an optimal schedule makes ``N`` computes (``N`` = number of
non-inputs, each computed exactly once) and at most ``U`` loads and stores,
where ``U`` is the I/O of any known valid schedule (the optimum is at most
``U``). Deletes take no step, so ``T = N + U`` steps hold some optimal
schedule and the horizon cuts off no optimum. For recompute the same ``T``
is only a cap (the number of computes of an optimal recompute schedule has
no known polynomial bound): the optimum is optimal within that cap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule
from spartition.exact.formulations import Formulation, ModelSpec, model_size

__all__ = ["FORMULATION", "BaselineModel", "build_baseline_model", "decode_baseline", "estimate_baseline_model"]


@dataclass
class BaselineModel:
    """A built time-indexed model: variables keyed by (node, step)."""

    model: cp_model.CpModel
    cdag: CompactDAG
    M: int
    variant: str
    horizon: int
    red: dict = field(default_factory=dict)
    blue: dict = field(default_factory=dict)
    load: dict = field(default_factory=dict)
    store: dict = field(default_factory=dict)
    comp: dict = field(default_factory=dict)
    objective: object = None


def _add_state_vars(bm: BaselineModel) -> None:
    m, c, T = bm.model, bm.cdag, bm.horizon
    for v in range(c.n):
        for t in range(1, T + 1):
            bm.red[v, t] = m.new_bool_var(f"red_{v}_{t}")
            bm.blue[v, t] = m.new_bool_var(f"blue_{v}_{t}")
            bm.load[v, t] = m.new_bool_var(f"load_{v}_{t}")
            if not c.is_input[v]:
                bm.store[v, t] = m.new_bool_var(f"store_{v}_{t}")
                bm.comp[v, t] = m.new_bool_var(f"comp_{v}_{t}")


def _prev(d, v, t, initial):
    return d[v, t - 1] if t > 1 else initial


def _add_frame_axioms(bm: BaselineModel) -> None:
    """Red appears only by load or compute; blue only by store (inputs start blue)."""
    m, c, T = bm.model, bm.cdag, bm.horizon
    for v in range(c.n):
        blue0 = 1 if c.is_input[v] else 0
        for t in range(1, T + 1):
            red_prev = _prev(bm.red, v, t, 0)
            blue_prev = _prev(bm.blue, v, t, blue0)
            comp = bm.comp.get((v, t), 0)
            store = bm.store.get((v, t), 0)
            m.add(bm.red[v, t] <= red_prev + bm.load[v, t] + comp)
            m.add(bm.blue[v, t] == blue_prev + store)
            m.add(bm.load[v, t] <= blue_prev)
            m.add(bm.load[v, t] <= 1 - red_prev)
            m.add(bm.load[v, t] <= bm.red[v, t])  # the moved node is red after the step
            if not c.is_input[v]:
                m.add(store <= bm.red[v, t])
                m.add(comp <= 1 - red_prev)
                m.add(comp <= bm.red[v, t])
                for u in c.preds(v).tolist():
                    m.add(comp <= bm.red[u, t])


def _add_one_move_per_step(bm: BaselineModel) -> None:
    m, c, T = bm.model, bm.cdag, bm.horizon
    for t in range(1, T + 1):
        moves = [bm.load[v, t] for v in range(c.n)]
        moves += [bm.store[v, t] for v in range(c.n) if (v, t) in bm.store]
        moves += [bm.comp[v, t] for v in range(c.n) if (v, t) in bm.comp]
        m.add_at_most_one(moves)


def _add_memory_limit(bm: BaselineModel) -> None:
    for t in range(1, bm.horizon + 1):
        bm.model.add(sum(bm.red[v, t] for v in range(bm.cdag.n)) <= bm.M)


def _add_goal(bm: BaselineModel) -> None:
    c, T = bm.cdag, bm.horizon
    for v in range(c.n):
        if c.is_output[v] and not c.is_input[v]:
            bm.model.add(bm.blue[v, T] == 1)
        if bm.variant == "oneshot" and not c.is_input[v]:
            bm.model.add_at_most_one([bm.comp[v, t] for t in range(1, T + 1)])


def build_baseline_model(c: CompactDAG, M: int, variant: str, horizon: int) -> BaselineModel:
    """Build the plain time-indexed model with ``horizon`` steps.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    variant : {"oneshot", "recompute"}
    horizon : int
        Steps ``T``; ``N + U`` holds an optimal oneshot schedule (module docstring).

    Returns
    -------
    BaselineModel

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import compact
    >>> build_baseline_model(compact(chain(3)), 2, "oneshot", 4).horizon
    4
    """
    bm = BaselineModel(model=cp_model.CpModel(), cdag=c, M=M, variant=variant, horizon=horizon)
    _add_state_vars(bm)
    _add_frame_axioms(bm)
    _add_one_move_per_step(bm)
    _add_memory_limit(bm)
    _add_goal(bm)
    bm.objective = sum(bm.load.values()) + sum(bm.store.values())
    bm.model.minimize(bm.objective)
    return bm


def decode_baseline(bm: BaselineModel, value, meta=None) -> Schedule:
    """The schedule of a solution: at each step the implicit deletes, then the move.

    Parameters
    ----------
    bm : BaselineModel
        The built model the solution belongs to.
    value : callable
        Reads the solution value of a variable (``solver.value``).
    meta : dict, optional
        Stored as the schedule's ``meta`` (e.g. ``{"method": "cp-sat/baseline"}``).

    Returns
    -------
    Schedule
        Checked by :func:`spartition.core.game.replay` before anything trusts it.
    """
    c, names = bm.cdag, bm.cdag.names
    moves, red = [], set()
    for t in range(1, bm.horizon + 1):
        now = {v for v in range(c.n) if value(bm.red[v, t])}
        for u in sorted(red - now):
            moves.append(("delete", names[u]))
        red &= now
        for v in range(c.n):
            if value(bm.load[v, t]):
                moves.append(("load", names[v]))
                red.add(v)
            elif (v, t) in bm.comp and value(bm.comp[v, t]):
                moves.append(("compute", names[v]))
                red.add(v)
            elif (v, t) in bm.store and value(bm.store[v, t]):
                moves.append(("store", names[v]))
        for u in sorted(red - now):  # made red by the move but not kept (a wasted move)
            moves.append(("delete", names[u]))
        red &= now
    for u in sorted(red):
        moves.append(("delete", names[u]))
    return Schedule(bm.M, bm.variant, tuple(moves), meta=dict(meta or {}))


# --------------------------------------------------------------------------- the registry record


def estimate_baseline_model(c: CompactDAG, variant: str, events: int | None = None, upper: int | None = None) -> dict:
    """The estimated size of the baseline model with horizon ``N + upper``, before it is built.

    About ``6 T (n + |E|)`` constraints for ``T`` steps (frame axioms per
    node and per edge at every step), about 10 us and 300 bytes each;
    without ``upper`` the horizon is taken as ``2 N``. See
    :func:`spartition.exact.formulations.estimate_model`.

    Parameters
    ----------
    c : CompactDAG
    variant : str
    events : int, optional
        Compute events (unused: the horizon sets the size).
    upper : int, optional
        I/O of a known schedule; the horizon is ``N + upper``.

    Returns
    -------
    dict
        As :func:`spartition.exact.formulations.model_size` returns it.
    """
    N = int((~c.is_input).sum())
    T = N + int(upper or N)
    return model_size("baseline", variant, 6 * T * (c.n + len(c.pred_idx)), 1e-5, 300)


def _build(spec: ModelSpec) -> BaselineModel:
    return build_baseline_model(spec.cdag, spec.M, spec.variant, _horizon(spec))


def _horizon(spec: ModelSpec) -> int:
    return spec.computed + spec.upper


def _cap(spec: ModelSpec) -> dict:
    return {"horizon": _horizon(spec), "harmless": spec.variant == "oneshot"}


#: The baseline formulation: kept to be measured against, so no hint, symmetry, tuning or shortcut.
FORMULATION = Formulation(
    name="baseline",
    summary="plain frame axioms, one step per move, horizon N + U",
    variants=("oneshot", "recompute"),
    exact_for=("oneshot",),
    default_for=(),
    build=_build,
    decode=decode_baseline,
    cap=_cap,
    assumptions={
        "oneshot": ("horizon N + U steps (U = I/O of a known schedule) holds an optimal schedule",),
        "recompute": ("horizon N + U steps is a cap: optimal only within it",),
    },
    estimate=estimate_baseline_model,
    needs_upper=True,
    always_solve=True,
)
