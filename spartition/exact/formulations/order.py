"""The compute-order CP-SAT model of the oneshot red-blue pebble game (the strongest formulation).

In ``oneshot`` every non-input node is computed exactly once (see
:mod:`spartition.exact.formulations.events`), so a schedule is a total order of the ``N``
computes plus, at each compute, a red set. This model states everything in
terms of the *relative* order of computes, never of a time index:

* ``before(a, b)`` for every pair of non-input nodes (a tournament made
  transitive by forbidding 3-cycles; fixed by ancestry where the DAG decides);
* ``L[v, w]``: node ``v`` is loaded just before the compute of its successor
  ``w``; ``b[v]``: non-input ``v`` is stored (right after its compute);
* ``red(v, e)``: ``v`` is red right after the compute of ``e``, for ``e``
  neither ``v`` nor a successor of ``v`` (those are red by the compute rule).

Call the compute of ``v`` and of its successors the *events of v*. The
normal form of :mod:`spartition.exact.formulations.events` (red runs cut from a use to a use,
lazy loads, eager deletes) says exactly: between two consecutive events of
``v`` (the *gap* before the later one, ``w``), ``v`` is red throughout if it
is not loaded at ``w`` and absent throughout if it is; before the first event
of ``v`` and after the last it is absent; an input is loaded at its first
use. So

    red(v, e) = OR over w in succ(v) of [e in the gap of v before w] AND NOT L[v, w],

and memory reads ``1 + indeg(e) + sum_v red(v, e) <= M`` at every compute
``e``. The objective is ``sum L + sum b``.

Soundness. An optimal schedule in normal form gives a model solution of the
same cost (``L`` = its loads, which happen only at uses; a load at ``w``
means ``v`` was absent in the whole gap before ``w``, and no load with a
non-empty gap means present in the whole gap). Conversely a model solution
decodes (:func:`decode_order`) to the red sets ``S_e = {e} + preds(e) +
{v : red(v, e)}``, replayed as in :func:`spartition.exact.formulations.events.decode_events`;
a node entering ``S`` at ``w`` has ``L[v, w] = 1`` (else it was red in the gap
or the gap is empty), and a loaded non-input has ``b = 1``, so the decoded
schedule is legal and costs at most the objective. The Puget precedences of
:mod:`spartition.core.symmetry` become fixed ``before`` literals and keep an
optimum for the reason given there. A dominance rule (:func:`_add_chain_dominance`,
on by default) computes a unary successor right after its operand when that
operand has a dead operand of its own; its exchange argument, and why it is
compatible with the precedences, are in that function.

Why it is stronger than a time-indexed model: a conflict about which nodes
are live together is learned as a clause over ``before`` literals, which
holds at every time shift, instead of once per time index.

References
----------
J.-W. Hong and H. T. Kung, "I/O complexity: the red-blue pebble game", STOC 1981.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import combinations
from types import MappingProxyType

from ortools.sat.python import cp_model

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule
from spartition.exact.formulations import TUNED_PARAMETERS, Formulation, ModelSpec, model_size
from spartition.exact.formulations.normal_form import normal_form, schedule_from_events, state_from_schedule
from spartition.settings import DEFAULT_VARIANT

__all__ = [
    "FORMULATION",
    "ORDER_PARAMETERS",
    "ORDER_SUBSOLVERS",
    "OrderModel",
    "build_order_model",
    "decode_order",
    "estimate_order_model",
    "order_ancestors",
    "order_hint_from_schedule",
    "unary_chain_pairs",
]


@dataclass
class OrderModel:
    """A built compute-order model and its variables (keys are node indices)."""

    model: cp_model.CpModel
    cdag: CompactDAG
    M: int
    computed: list
    anc: list  # ancestor bitsets
    bvars: dict = field(default_factory=dict)  # (a, b) with a < b -> BoolVar "a before b"
    pos: dict = field(default_factory=dict)
    red: dict = field(default_factory=dict)  # (v, e) -> BoolVar
    L: dict = field(default_factory=dict)  # (v, w) -> BoolVar
    b: dict = field(default_factory=dict)
    gaps: dict = field(default_factory=dict)  # (v, e) -> gap literals (mutually exclusive; OR = v live at e)
    objective: object = None
    stats: dict = field(default_factory=dict)
    _aux: dict = field(default_factory=dict)

    def before(self, a: int, b: int):
        """Literal (or Python bool) "a is computed before b".

        Parameters
        ----------
        a, b : int
            Distinct computed nodes.

        Returns
        -------
        bool or BoolVar
            A Python bool where ancestry decides, else the order literal.
        """
        if self.anc[b] >> a & 1:
            return True
        if self.anc[a] >> b & 1:
            return False
        return self.bvars[a, b] if a < b else ~self.bvars[b, a]

    def variant(self) -> str:
        """The only variant this model states: ``oneshot``."""
        return "oneshot"


def order_ancestors(c: CompactDAG) -> list:
    """The ancestors of every node of ``c`` as an integer bitset (bit ``u`` of entry ``v``: ``u`` precedes ``v``)."""
    preds = c.pred_lists()
    anc = [0] * c.n
    for v in range(c.n):
        for u in preds[v]:
            anc[v] |= anc[u] | (1 << u)
    return anc


def _and(om: OrderModel, lits, name):
    """A literal equal to the conjunction of ``lits`` (Python bools folded), cached."""
    real = []
    for x in lits:
        if x is True:
            continue
        if x is False:
            return False
        real.append(x)
    if not real:
        return True
    if len(real) == 1:
        return real[0]
    key = ("and", tuple(sorted(_lit_key(x) for x in real)))
    if key in om._aux:
        return om._aux[key]
    y = om.model.new_bool_var(name)
    for x in real:
        om.model.add_implication(y, x)
    om.model.add_bool_or([y] + [_neg(x) for x in real])
    om._aux[key] = y
    return y


def _or(om: OrderModel, lits, name):
    real = []
    for x in lits:
        if x is True:
            return True
        if x is False:
            continue
        real.append(x)
    if not real:
        return False
    if len(real) == 1:
        return real[0]
    return _neg(_and(om, [_neg(x) for x in real], name + "_n"))


def _neg(x):
    if x is True:
        return False
    if x is False:
        return True
    return ~x


def _lit_key(x):
    return x.index


def _clause(m: cp_model.CpModel, lits) -> None:
    real = []
    for x in lits:
        if x is True:
            return
        if x is False:
            continue
        real.append(x)
    if not real:
        raise AssertionError("empty clause: the order model is infeasible by construction")
    m.add_bool_or(real)


def _add_order(om: OrderModel) -> None:
    """Pairwise order literals, no 3-cycles (so a total order), and positions."""
    m, comp = om.model, om.computed
    for a, b in combinations(comp, 2):
        if not (om.anc[b] >> a & 1 or om.anc[a] >> b & 1):
            om.bvars[a, b] = m.new_bool_var(f"bef_{a}_{b}")
    for a, b, c in combinations(comp, 3):
        ab, bc, ca = om.before(a, b), om.before(b, c), om.before(c, a)
        _clause(m, [_neg(ab), _neg(bc), _neg(ca)])
        _clause(m, [ab, bc, ca])
    N = len(comp)
    for v in comp:
        p = m.new_int_var(0, N - 1, f"pos_{v}")
        m.add(p == sum(_lin(om.before(u, v)) for u in comp if u != v))
        om.pos[v] = p
    m.add_all_different(list(om.pos.values()))


def _events_of(c: CompactDAG, v: int) -> list:
    ev = c.succs(v).tolist()
    if not c.is_input[v]:
        ev = [v] + ev
    return ev


def _add_red_and_loads(om: OrderModel) -> None:
    """Load flags, store flags, and red(v, e) as the OR over gaps not closed by a load."""
    m, c = om.model, om.cdag
    for v in om.computed:
        om.b[v] = m.new_bool_var(f"b_{v}")
        if c.is_output[v]:
            m.add(om.b[v] == 1)
    for v in range(c.n):
        uses = c.succs(v).tolist()
        if not uses:
            continue
        for w in uses:
            om.L[v, w] = m.new_bool_var(f"L_{v}_{w}")
            if not c.is_input[v]:
                m.add_implication(om.L[v, w], om.b[v])
        if c.is_input[v]:
            for w in uses:  # the first use of an input is a load
                _clause(m, [om.L[v, w]] + [om.before(w2, w) for w2 in uses if w2 != w])
            m.add(sum(om.L[v, w] for w in uses) >= 1)
        evs = set(_events_of(c, v))
        for e in om.computed:
            if e in evs:
                continue
            started = om.before(v, e) if not c.is_input[v] else _or(om, [om.before(w, e) for w in uses], f"st_{v}_{e}")
            if started is False:
                continue
            terms = []
            for w in uses:
                after = om.before(e, w)
                if after is False:
                    continue
                between = [
                    _and(om, [om.before(e, w2), om.before(w2, w)], f"btw_{e}_{w2}_{w}") for w2 in uses if w2 != w
                ]
                gap = _and(om, [after, started] + [_neg(x) for x in between], f"gap_{v}_{w}_{e}")
                if gap is False:
                    continue
                terms.append((w, gap))
            if not terms:
                continue
            r = m.new_bool_var(f"red_{v}_{e}")
            om.red[v, e] = r
            om.gaps[v, e] = [gap for _, gap in terms]
            for w, gap in terms:
                # gap and not loaded -> red ; red and gap -> not loaded
                _clause(m, [_neg(gap), om.L[v, w], r])
                _clause(m, [_neg(gap), _neg(r), ~om.L[v, w]])
            _clause(m, [~r] + [gap for _, gap in terms])


def _add_memory_limit(om: OrderModel) -> None:
    """At every compute e: e, its predecessors and the other red nodes fit in M."""
    c = om.cdag
    by_event = {}
    for (v, e), r in om.red.items():
        by_event.setdefault(e, []).append(r)
    indeg = c.in_degree()
    for e in om.computed:
        cap = om.M - 1 - int(indeg[e])
        lits = by_event.get(e, [])
        if cap < 0:
            raise AssertionError("memory check must precede model building")
        if len(lits) > cap:
            om.model.add(sum(lits) <= cap)


def _lin(x):
    return int(x) if isinstance(x, bool) else x


def _add_overflow_bounds(om: OrderModel, trivial: int) -> None:
    """At each compute, every live node that is not red costs I/O beyond the trivial bound.

    A node ``v`` is *live* at compute ``e`` when ``e`` lies in one of its gaps
    (the gaps are disjoint, so live = sum of the gap literals). A live input
    that is not red is loaded again later (a load beyond its first); a live
    non-input that is not red is stored (it is not an output: it has a use)
    and loaded again. Distinct nodes give distinct moves, so

        objective >= trivial + sum_v (live - red) + sum_{v non-input} (live - red)

    and, since at most ``cap(e)`` of them are red,
    ``sum_v (live - red) >= sum_v live - cap(e)``. Valid for every ``e``
    separately; it ties the order literals to the cost without going
    through the load flags.
    """
    c = om.cdag
    by_event = {}
    for (v, e), gl in om.gaps.items():
        by_event.setdefault(e, []).append((v, gl))
    indeg = c.in_degree()
    for e, items in by_event.items():
        cap = om.M - 1 - int(indeg[e])
        live_all = sum(_lin(g) for _, gl in items for g in gl)
        extra_nonin = sum(_lin(g) for v, gl in items if not c.is_input[v] for g in gl) - sum(
            om.red[v, e] for v, _ in items if not c.is_input[v]
        )
        om.model.add(om.objective >= trivial + live_all - cap + extra_nonin)


def _add_symmetry(om: OrderModel, pairs) -> None:
    for w, u in pairs:
        lit = om.before(w, u)
        if lit is False:
            raise AssertionError(f"symmetry precedence {w} < {u} contradicts the DAG")
        if lit is not True:
            om.model.add(lit == 1)


def unary_chain_pairs(c: CompactDAG) -> list:
    """The pairs the chain dominance rule (:func:`_add_chain_dominance`) puts next to each other.

    Pairs ``(u, w)``: ``w`` is the only successor of ``u``, ``u`` the only predecessor of ``w``,
    ``u`` is a non-input, non-output node with an operand whose only use is ``u``."""
    out = []
    for u in range(c.n):
        if c.is_input[u] or c.is_output[u]:
            continue
        su = c.succs(u)
        if len(su) != 1:
            continue
        w = int(su[0])
        dead = any(len(c.succs(int(p))) == 1 for p in c.preds(u))
        if len(c.preds(w)) == 1 and dead:
            out.append((u, w))
    return out


def _add_chain_dominance(om: OrderModel) -> None:
    """Compute ``w`` immediately after ``u`` for every unary chain pair (:func:`unary_chain_pairs`).

    Dominance (oneshot). Take any schedule and a pair ``(u, w)``: ``u`` has the
    single use ``w``, ``w`` the single operand ``u``, ``u`` is neither input
    nor output, and some operand ``p`` of ``u`` has ``u`` as its only use.
    Move the compute of ``w`` to right after the compute of ``u`` (before any
    other move). Memory at the new compute: the red set ``R_u`` of the
    compute of ``u`` (at most ``M`` nodes, containing ``u`` and ``p``) minus
    ``p`` (dead: no use left, and stored already if it is an output) plus
    ``w``: at most ``M``. (Without the dead operand this fails: the other
    nodes of ``R_u`` may all be needed later, and ``w`` would be one too
    many.) Between the new and the old compute time of ``w``
    replace ``u`` by ``w`` in every red set (``u`` has no other use): counts
    do not change. If ``u`` was stored and reloaded for ``w`` (cost 2), store
    ``w`` right after its compute and reload it where ``u`` was reloaded
    (cost at most 2; ``u`` is no output so its store is dropped). At the old
    compute time nothing is computed. From then on the schedule is unchanged.
    So the cost does not grow. Applied pair by pair in reverse topological
    order of ``w`` (a moved node carries the nodes already attached behind it
    as a block, which keeps earlier pairs adjacent), every pair becomes
    adjacent in some optimal schedule.

    Symmetry. An automorphism maps unary chain pairs to unary chain pairs, so
    the set of optimal schedules obeying this rule is closed under the
    automorphism group and contains the lex-leader of each of its orbits:
    the Puget precedences of :mod:`spartition.core.symmetry` remain valid with it.

    "Immediately after" is stated on the order literals: every other compute
    ``x`` is before ``u`` iff it is before ``w``.
    """
    m = om.model
    for u, w in unary_chain_pairs(om.cdag):
        for x in om.computed:
            if x in (u, w):
                continue
            a, b = om.before(x, u), om.before(x, w)
            if isinstance(a, bool) and isinstance(b, bool):
                if a != b:
                    raise AssertionError(f"chain dominance {u}->{w} contradicts the DAG at {x}")
                continue
            m.add(_lin(a) == _lin(b))


def build_order_model(
    c: CompactDAG,
    M: int,
    *,
    symmetry_pairs=(),
    lower_bound=None,
    upper_bound=None,
    overflow_bounds=False,
    dominance=True,
) -> OrderModel:
    """Build the compute-order model of ``c`` (oneshot) with ``M`` red pebbles.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    symmetry_pairs : iterable of (int, int)
        Puget precedences (:func:`spartition.core.symmetry.symmetry_precedences`).
    lower_bound, upper_bound : int, optional
        Proven bounds added on the objective.
    overflow_bounds : bool
        Add the redundant per-compute overflow bounds (:func:`_add_overflow_bounds`).

    Returns
    -------
    OrderModel

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> om = build_order_model(compact(fft(1)), 3)
    >>> len(om.bvars), len(om.L)
    (1, 4)
    """
    comp = [v for v in range(c.n) if not c.is_input[v]]
    om = OrderModel(model=cp_model.CpModel(), cdag=c, M=M, computed=comp, anc=order_ancestors(c))
    _add_order(om)
    _add_red_and_loads(om)
    _add_memory_limit(om)
    _add_symmetry(om, symmetry_pairs)
    if dominance:
        _add_chain_dominance(om)
    obj = sum(om.L.values()) + sum(om.b.values())
    om.objective = obj
    if overflow_bounds:
        _add_overflow_bounds(om, trivial_lower_bound(c))
    if lower_bound:
        om.model.add(obj >= lower_bound)
    if upper_bound is not None:
        om.model.add(obj <= upper_bound)
    om.model.minimize(obj)
    om.stats = {"order_vars": len(om.bvars), "red_vars": len(om.red), "aux_vars": len(om._aux)}
    return om


def order_hint_from_schedule(om: OrderModel, schedule: Schedule) -> int | None:
    """Set a hint from the normal form of a oneshot schedule.

    The normal form is :func:`spartition.exact.formulations.normal_form.normal_form`.

    The order, position, red, load and store variables are hinted; the
    auxiliary conjunctions are left to CP-SAT's hint completion.

    Parameters
    ----------
    om : OrderModel
    schedule : Schedule
        A valid schedule of the model's DAG (replayed before).

    Returns
    -------
    int or None
        The model cost of the hint, or None (and no hint set) when the
        schedule does not fit the model (not a oneshot schedule of every computed node).
    """
    c = om.cdag
    order, states, store_event = state_from_schedule(c, schedule)
    if len(order) != len(om.computed) or len(set(order)) != len(order):
        return None
    red = normal_form(c, order, states)
    at = {v: t for t, v in enumerate(order)}
    m = om.model
    m.clear_hints()
    for (a, b), x in om.bvars.items():
        m.add_hint(x, at[a] < at[b])
    for v, p in om.pos.items():
        m.add_hint(p, at[v])
    cost = 0
    for (v, e), r in om.red.items():
        m.add_hint(r, v in red[at[e]])
    for (v, w), ld in om.L.items():
        t = at[w]
        val = t == 0 or v not in red[t - 1]
        if not c.is_input[v] and at[v] == t - 1:
            val = False
        cost += val
        m.add_hint(ld, val)
    for v, b in om.b.items():
        val = v in store_event
        cost += val
        m.add_hint(b, val)
    return int(cost)


def decode_order(om: OrderModel, value, meta=None) -> Schedule:
    """Turn solver values into a :class:`Schedule`: the compute order from the positions, red sets from ``red``.

    Parameters
    ----------
    om : OrderModel
        The built model the solution belongs to.
    value : callable
        Reads the solution value of a variable (``solver.value``).
    meta : dict, optional
        Stored as the schedule's ``meta`` (e.g. ``{"method": "cp-sat/order"}``).

    Returns
    -------
    Schedule
        Checked by :func:`spartition.core.game.replay` before anything trusts it.
    """
    c = om.cdag
    order = sorted(om.computed, key=lambda v: value(om.pos[v]))
    red_at = []
    for e in order:
        s = {e} | set(c.preds(e).tolist())
        red_at.append(s)
    at = {v: t for t, v in enumerate(order)}
    for (v, e), r in om.red.items():
        if value(r):
            red_at[at[e]].add(v)
    store_events = {at[v] for v, b in om.b.items() if value(b)}
    return schedule_from_events(c, om.M, "oneshot", order, red_at, store_events, meta)


# --------------------------------------------------------------------------- the registry record

#: CP-SAT settings of the order model: its objective is a sum of Boolean load/store flags, and
#: core-based search (unsatisfiable cores over the objective literals, as in MaxSAT) lifts the
#: lower bound where plain branch and bound stalls at the root bound (attention-forward n=2,
#: d=2: M=4 and M=6 proven optimal in seconds instead of open after 900 s).
ORDER_PARAMETERS = MappingProxyType({**TUNED_PARAMETERS, "optimize_with_core": True})
#: Core search runs in one worker (CP-SAT's default two-worker portfolio runs no core search).
#: With two workers CP-SAT gives ``core`` the one full thread and runs its interleaved
#: subsolvers (feasibility jump, local search, LNS) on the other; ``default_lp`` gets a full
#: thread only from three workers on (as CP-SAT 9.15's search log shows).
ORDER_SUBSOLVERS = ("core", "default_lp")


def estimate_order_model(c: CompactDAG, variant: str = DEFAULT_VARIANT, events: int | None = None,
                         upper: int | None = None) -> dict:
    """The estimated size of the order model, before it is built.

    About ``N^3 / 2`` constraints (a red set per compute over the nodes in
    flight, ``N`` computed nodes), about 6 us and 300 bytes each to build,
    measured on exact attention, d = 2 (``benchmarks/exact_io.py
    --estimate``); see :func:`spartition.exact.formulations.estimate_model`.

    Parameters
    ----------
    c : CompactDAG
    variant : str
    events : int, optional
        Compute events (unused: always ``N``).
    upper : int, optional
        I/O of a known schedule (unused).

    Returns
    -------
    dict
        As :func:`spartition.exact.formulations.model_size` returns it.
    """
    N = int((~c.is_input).sum())
    return model_size("order", variant, N ** 3 / 2, 6e-6, 300)


def _build(spec: ModelSpec) -> OrderModel:
    return build_order_model(spec.cdag, spec.M, symmetry_pairs=spec.pairs, lower_bound=spec.lower,
                             upper_bound=spec.upper)


def _cap(spec: ModelSpec) -> dict:
    return {"events": spec.events, "harmless": True}


#: The order formulation, as :func:`spartition.exact.solve.solve_io` uses it (the default for oneshot).
FORMULATION = Formulation(
    name="order",
    summary="pairwise compute order, loads per (node, use), red sets only at computes; no horizon",
    variants=("oneshot",),
    exact_for=("oneshot",),
    default_for=("oneshot",),
    build=_build,
    decode=decode_order,
    cap=_cap,
    assumptions={
        "oneshot": (
            "oneshot: every non-input node is computed exactly once, so N compute events and no horizon",
            "normal form: a node is red only from a use (or its compute) to a later use; loads happen "
            "just before a use; stores right after the compute; every optimum has such a form",
            "symmetry: DAG automorphisms map schedules to schedules of equal cost; Puget precedences "
            "on the first-compute order keep the lexicographically least optimum",
            "chain dominance: a unary chain pair (u, w), u with a dead operand, is computed back to back; "
            "some optimum does so (the exchange argument in spartition.exact.formulations.order)",
        ),
    },
    estimate=estimate_order_model,
    hint=order_hint_from_schedule,
    parameters=ORDER_PARAMETERS,
    parallel_parameters=MappingProxyType({"subsolvers": ORDER_SUBSOLVERS}),
    symmetry=True,
    bounded=True,
    engines=("cp-sat", "maxsat"),
)
