"""The compute-event CP-SAT model of the red-blue pebble game (the tuned formulation).

Instead of one time step per move, the model has one *event* per compute:
event ``t`` computes one node ``pi_t``, and the state recorded at event ``t``
is the red set ``S_t`` right after that compute. Loads, stores and deletes
happen between events and are counted, not scheduled.

Variables (``v`` a node, ``t`` an event):

* ``x[v, t]``: event ``t`` computes ``v`` (one node per event);
* ``r[v, t]``: ``v`` is red right after event ``t``;
* ``l[v, t]``: ``v`` is loaded just before event ``t``;
* ``b[v]`` (oneshot) / ``st[v, t]`` (recompute): ``v`` is stored, right after
  the compute that made it red.

Objective: loads + stores.

Soundness (oneshot)
-------------------
There is no horizon to choose: in ``oneshot`` every non-input node is computed
exactly once (each non-input reaches a non-input output, which must be
stored, hence computed; a compute needs its non-input predecessors computed),
so a schedule has exactly ``N`` = #non-inputs computes and the model has
exactly ``N`` events.

*Every schedule maps to a model solution of no greater cost.* Let ``pi`` be
its compute order and ``S_t`` the red set right after the t-th compute.
Set ``x``, ``r`` from them, ``b[v] = 1`` iff ``v`` is ever stored. A node in
``S_t`` but not in ``S_(t-1)`` and other than ``pi_t`` was loaded in between
(red sets grow only by loads and computes), so model loads <= schedule loads;
a non-input is loaded only if blue, i.e. stored before; ``|S_t| <= M``;
predecessors of ``pi_t`` are in ``S_t``. Then apply the *normal form*: cut
every maximal run of events during which ``v`` stays red down to the part
from its first to its last *use* (an event computing a successor of ``v``),
keeping the compute event at the start of a run that begins with a compute,
and drop runs without use that begin with a load. This only removes red
pebbles and loads, so it keeps feasibility and does not raise the cost. A
normal-form solution satisfies the two dominance rules of the model:

* lazy load: ``v`` becomes red at ``t`` only if ``t`` computes ``v`` or a
  successor of ``v`` (``r[v,t] <= r[v,t-1] + x[v,t] + use[v,t]``);
* eager delete: ``v`` red at ``t`` and neither computed nor used at ``t``
  stays red at ``t + 1`` (``r[v,t] <= r[v,t+1] + x[v,t] + use[v,t]``, with
  ``r[v,N] = 0``), so a red node is always on its way to a use.

*Every model solution decodes to a valid schedule of the same cost* (see
:func:`decode_events`): before event ``t`` delete ``S_(t-1) - S_t``, load
``S_t - S_(t-1) - {pi_t}``, compute ``pi_t``, store it if ``b = 1``. Red
count never exceeds ``max(|S_(t-1) & S_t|, |S_t|) <= M``; a loaded non-input
was computed (``r[v,t] <= computed by t``) and stored right after its
compute (``l <= b``); each node is stored at most once and inputs never.
Hence the model's optimum is the true oneshot optimum.

Symmetry: the Puget precedences of :mod:`spartition.core.symmetry` hold for the
lexicographically least member (under DAG automorphisms) of the orbit of any
normal-form optimum; the normal form is automorphism-invariant, so dominance
and symmetry constraints together keep an optimum.

Recompute
---------
The same events, ``E`` of them (a cap), each computing at most one node (idle
events only at the end), every non-input computed at least once, a compute
only of a node that is not red. A node is stored at most once, WLOG right
after a compute that made it red (before the store it is not blue, so the
red run containing the store began with a compute). Loads need a store at an
earlier event. The dominance and symmetry arguments carry over (symmetry on
first-compute events, which are pairwise distinct).

Each node ``v`` is computed at most ``pi(v)`` times and every computed copy
is used (stored, or red at the next event and so, by the eager-delete rule,
on its way to a use): :mod:`spartition.exact.formulations.caps` proves that
some optimal schedule is of this kind, and that the reduction composes with
the normal form and the symmetry precedences (it is defined without naming
nodes, so automorphism-invariant). With ``E >= sum pi(v)`` events
(:func:`~spartition.exact.formulations.caps.harmless_events`, the default of
:mod:`spartition.exact.solve` when it is at most ten times ``N``) the cap is
harmless and the model is exact for recompute (``cap["harmless"]``); with
fewer it is exact only *within the cap* ``E``, and
:mod:`spartition.exact.solve` labels its optimum accordingly.

References
----------
J.-W. Hong and H. T. Kung, "I/O complexity: the red-blue pebble game", STOC 1981.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule
from spartition.exact.formulations import TUNED_PARAMETERS, Formulation, ModelSpec, model_size
from spartition.exact.formulations.caps import compute_caps, harmless_events, reduce_schedule
from spartition.exact.formulations.normal_form import normal_form, schedule_from_events, state_from_schedule
from spartition.settings import DEFAULT_VARIANT

__all__ = [
    "FORMULATION",
    "EventModel",
    "build_event_model",
    "decode_events",
    "estimate_event_model",
    "event_hint_from_schedule",
    "node_windows",
    "schedule_from_events",
]


@dataclass
class EventModel:
    """A built compute-event model and its variables (keys are node indices)."""

    model: cp_model.CpModel
    cdag: CompactDAG
    M: int
    variant: str
    events: int
    computed: list  # non-input nodes
    x: dict = field(default_factory=dict)  # (v, t) -> BoolVar
    r: dict = field(default_factory=dict)  # (v, t) -> BoolVar
    l: dict = field(default_factory=dict)  # (v, t) -> BoolVar
    b: dict = field(default_factory=dict)  # v -> BoolVar (oneshot)
    st: dict = field(default_factory=dict)  # (v, t) -> BoolVar (recompute)
    pos: dict = field(default_factory=dict)  # v -> IntVar (oneshot)
    first: dict = field(default_factory=dict)  # (v, t) -> BoolVar "computed by t" (recompute)
    caps: dict = field(default_factory=dict)  # v -> most computes of v (recompute; formulations.caps)
    objective: object = None
    stats: dict = field(default_factory=dict)


def node_windows(c: CompactDAG) -> tuple[dict, dict]:
    """Earliest and latest event of each non-input node in any oneshot compute order.

    ``lo[v]`` = number of non-input ancestors, ``hi[v]`` = N - 1 - number of
    descendants (all descendants are non-inputs).

    Parameters
    ----------
    c : CompactDAG

    Returns
    -------
    lo, hi : dict
        Non-input node -> its earliest and latest event.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import compact
    >>> node_windows(compact(chain(4)))
    ({1: 0, 2: 1, 3: 2}, {1: 0, 2: 1, 3: 2})
    """
    preds, succs = c.pred_lists(), c.succ_lists()
    is_input = c.is_input.tolist()
    anc = [0] * c.n
    for v in range(c.n):  # topological order
        for u in preds[v]:
            anc[v] |= anc[u] | (0 if is_input[u] else 1 << u)
    desc = [0] * c.n
    for v in reversed(range(c.n)):
        for w in succs[v]:
            desc[v] |= desc[w] | (1 << w)
    comp = [v for v in range(c.n) if not is_input[v]]
    N = len(comp)
    lo = {v: anc[v].bit_count() for v in comp}
    hi = {v: N - 1 - desc[v].bit_count() for v in comp}
    return lo, hi


# --------------------------------------------------------------------------- building


def _add_compute_assignment(em: EventModel, lo, hi) -> None:
    """Oneshot: each non-input computed at exactly one event, one compute per event."""
    m = em.model
    per_event = [[] for _ in range(em.events)]
    for v in em.computed:
        lits = []
        for t in range(lo[v], hi[v] + 1):
            x = m.new_bool_var(f"x_{v}_{t}")
            em.x[v, t] = x
            lits.append(x)
            per_event[t].append(x)
        m.add_exactly_one(lits)
        p = m.new_int_var(lo[v], hi[v], f"pos_{v}")
        m.add(p == sum(t * em.x[v, t] for t in range(lo[v], hi[v] + 1)))
        em.pos[v] = p
    for t, lits in enumerate(per_event):
        m.add_exactly_one(lits)
    m.add_all_different(list(em.pos.values()))


def _add_precedences(em: EventModel) -> None:
    """Oneshot: a node is computed after its non-input predecessors."""
    c = em.cdag
    for v in em.computed:
        for u in c.preds(v).tolist():
            if not c.is_input[u]:
                em.model.add(em.pos[u] + 1 <= em.pos[v])


def _uses(em: EventModel, v: int, t: int) -> list:
    return [em.x[w, t] for w in em.cdag.succs(v).tolist() if (w, t) in em.x]


def _red_range(em: EventModel, v: int, lo, hi) -> range:
    c = em.cdag
    succ = c.succs(v).tolist()
    if em.variant == "recompute":
        return range(em.events) if succ or not c.is_input[v] else range(0)
    if c.is_input[v]:
        if not succ:
            return range(0)
        return range(min(lo[w] for w in succ), max(hi[w] for w in succ) + 1)
    last = max(hi[w] for w in succ) if succ else hi[v]
    return range(lo[v], last + 1)


def _add_red_state(em: EventModel, lo, hi) -> None:
    """Red variables, compute preconditions and the two dominance rules (lazy load, eager delete)."""
    m, c = em.model, em.cdag
    for v in range(c.n):
        for t in _red_range(em, v, lo, hi):
            em.r[v, t] = m.new_bool_var(f"r_{v}_{t}")
    for v in range(c.n):
        span = _red_range(em, v, lo, hi)
        for t in span:
            r = em.r[v, t]
            use = _uses(em, v, t)
            xv = em.x.get((v, t), 0)
            if use:  # compute precondition: predecessors red at the event
                m.add(sum(use) <= r)
            if not isinstance(xv, int):
                m.add_implication(xv, r)
            prev = em.r.get((v, t - 1), 0)
            nxt = em.r.get((v, t + 1), 0)
            m.add(r <= prev + xv + sum(use))  # lazy load (red only appears at a compute or use)
            m.add(r <= nxt + xv + sum(use))  # eager delete (red only to reach a use)
            if em.variant == "oneshot" and not c.is_input[v]:
                m.add(r <= sum(em.x[v, s] for s in range(lo[v], min(t, hi[v]) + 1)))


def _add_load_indicators(em: EventModel, require_stored) -> None:
    """One load flag per (node, event) where the node turns red for a use, not by a compute.

    ``require_stored(v, t, load)`` adds the variant's rule that a non-input
    node can be loaded only once it is in slow memory.
    """
    m, c = em.model, em.cdag
    for (v, t), r in em.r.items():
        use = _uses(em, v, t)
        if not use:
            continue
        prev = em.r.get((v, t - 1), 0)
        xv = em.x.get((v, t), 0)
        ld = m.new_bool_var(f"l_{v}_{t}")
        em.l[v, t] = ld
        m.add(ld >= r - prev - xv)
        m.add_implication(ld, r)
        if not isinstance(prev, int):
            m.add_implication(ld, ~prev)
        m.add(ld <= sum(use))
        if not c.is_input[v]:
            require_stored(v, t, ld)


def _add_loads_oneshot(em: EventModel) -> None:
    """Load indicators and the single store flag of each non-input node."""
    m, c = em.model, em.cdag
    for v in em.computed:
        em.b[v] = m.new_bool_var(f"b_{v}")
        if c.is_output[v]:
            m.add(em.b[v] == 1)
    _add_load_indicators(em, lambda v, t, ld: m.add_implication(ld, em.b[v]))


def _add_memory_limit(em: EventModel) -> None:
    """At most M red pebbles at every event (the red set right after the compute)."""
    per_event = [[] for _ in range(em.events)]
    for (v, t), r in em.r.items():
        per_event[t].append(r)
    for t, lits in enumerate(per_event):
        if len(lits) > em.M:
            em.model.add(sum(lits) <= em.M)


def _add_redundant_bounds(em: EventModel) -> None:
    """Every input with a successor is loaded at least once (lifts the LP bound to the trivial bound)."""
    c = em.cdag
    loads_of = {}
    for (v, t), ld in em.l.items():
        loads_of.setdefault(v, []).append(ld)
    for v in range(c.n):
        if c.is_input[v] and len(c.succs(v)):
            em.model.add(sum(loads_of[v]) >= 1)
    # redundant (the compute rule implies it), stated for the LP: the red set holds the node and its operands
    indeg = c.in_degree()
    for t in range(em.events):
        reds = [r for (v, s), r in em.r.items() if s == t]
        need = [(int(indeg[v]) + 1) * x for (v, s), x in em.x.items() if s == t]
        if need:
            em.model.add(sum(reds) >= sum(need))


def _add_symmetry_oneshot(em: EventModel, pairs) -> None:
    """Puget precedences ``pos(w) < pos(u)`` (see :mod:`spartition.core.symmetry`)."""
    for w, u in pairs:
        em.model.add(em.pos[w] < em.pos[u])


def _set_objective(em: EventModel, lower_bound: int | None, upper_bound: int | None) -> None:
    stores = list(em.b.values()) + list(em.st.values())
    obj = sum(em.l.values()) + sum(stores)
    em.objective = obj
    if lower_bound:
        em.model.add(obj >= lower_bound)
    if upper_bound is not None:
        em.model.add(obj <= upper_bound)
    em.model.minimize(obj)


# recompute ------------------------------------------------------------------


def _add_compute_slots_recompute(em: EventModel) -> None:
    """At most one compute per event, idle events last, every non-input computed at least once."""
    m, c = em.model, em.cdag
    E = em.events
    active = []
    for t in range(E):
        lits = []
        for v in em.computed:
            x = m.new_bool_var(f"x_{v}_{t}")
            em.x[v, t] = x
            lits.append(x)
        a = m.new_bool_var(f"active_{t}")
        m.add(sum(lits) == a)
        active.append(a)
    for t in range(E - 1):
        m.add_implication(active[t + 1], active[t])
    for v in em.computed:
        m.add_bool_or([em.x[v, t] for t in range(E)])
        if em.caps and em.caps[v] < E:
            m.add(sum(em.x[v, t] for t in range(E)) <= em.caps[v])
        # first[v, t]: v computed at some event <= t
        for t in range(E):
            f = m.new_bool_var(f"f_{v}_{t}")
            em.first[v, t] = f
            prev = em.first.get((v, t - 1), 0)
            m.add(f >= em.x[v, t])
            if t:
                m.add_implication(prev, f)
            m.add(f <= prev + em.x[v, t])
    for v in em.computed:
        for u in c.preds(v).tolist():
            if not c.is_input[u]:
                for t in range(E):  # first compute of v after the first compute of u
                    m.add(em.first[v, t] <= em.first.get((u, t - 1), 0))


def _add_red_rules_recompute(em: EventModel) -> None:
    """A compute only of a non-red node; red non-inputs exist only once computed."""
    m = em.model
    for v in em.computed:
        for t in range(em.events):
            prev = em.r.get((v, t - 1), 0)
            if not isinstance(prev, int):
                m.add_bool_or([~em.x[v, t], ~prev])
            m.add_implication(em.r[v, t], em.first[v, t])


def _add_loads_recompute(em: EventModel) -> None:
    """Loads need a store at an earlier event; each node stored at most once, right after a compute."""
    m, c = em.model, em.cdag
    for v in em.computed:
        sts = []
        for t in range(em.events):
            s = m.new_bool_var(f"st_{v}_{t}")
            m.add_implication(s, em.x[v, t])
            em.st[v, t] = s
            sts.append(s)
        if c.is_output[v]:
            m.add_exactly_one(sts)
        else:
            m.add_at_most_one(sts)
    _add_load_indicators(em, lambda v, t, ld: m.add(ld <= sum(em.st[v, s] for s in range(t))))
    for v in em.computed:  # a reduced schedule uses every computed copy (formulations.caps)
        for t in range(em.events):
            m.add(em.x[v, t] <= em.st[v, t] + em.r.get((v, t + 1), 0))


def _add_symmetry_recompute(em: EventModel, pairs) -> None:
    """Puget precedences on first-compute events: ``first(u) by t`` implies ``first(w) by t - 1``."""
    for w, u in pairs:
        for t in range(em.events):
            em.model.add(em.first[u, t] <= em.first.get((w, t - 1), 0))


def build_event_model(
    c: CompactDAG,
    M: int,
    variant: str = DEFAULT_VARIANT,
    *,
    events: int | None = None,
    symmetry_pairs=(),
    lower_bound: int | None = None,
    upper_bound: int | None = None,
) -> EventModel:
    """Build the compute-event model of ``c`` with ``M`` red pebbles.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory size (the caller checks feasibility).
    variant : {"oneshot", "recompute"}
    events : int, optional
        Recompute only: number of compute events (the cap). Oneshot always
        uses exactly the number of non-input nodes.
    symmetry_pairs : iterable of (int, int)
        Precedences from :func:`spartition.core.symmetry.symmetry_precedences`.
    lower_bound, upper_bound : int, optional
        Proven bounds on the optimum added on the objective (an upper bound
        from a known schedule prunes nothing optimal).

    Returns
    -------
    EventModel

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> from spartition.core.dag import compact
    >>> em = build_event_model(compact(chain(3)), 2)
    >>> em.events, len(em.x)
    (2, 2)
    """
    comp = [v for v in range(c.n) if not c.is_input[v]]
    if variant == "oneshot":
        E = len(comp)
    else:
        E = int(events) if events is not None else 2 * len(comp)
        if E < len(comp):
            raise ValueError(f"recompute needs at least {len(comp)} events, got {E}")
    em = EventModel(model=cp_model.CpModel(), cdag=c, M=M, variant=variant, events=E, computed=comp)
    if variant == "recompute":
        em.caps = compute_caps(c)
    if variant == "oneshot":
        lo, hi = node_windows(c)
        _add_compute_assignment(em, lo, hi)
        _add_precedences(em)
        _add_red_state(em, lo, hi)
        _add_loads_oneshot(em)
        _add_symmetry_oneshot(em, symmetry_pairs)
    else:
        lo = {v: 0 for v in comp}
        hi = {v: E - 1 for v in comp}
        _add_compute_slots_recompute(em)
        _add_red_state(em, lo, hi)
        _add_red_rules_recompute(em)
        _add_loads_recompute(em)
        _add_symmetry_recompute(em, symmetry_pairs)
    _add_memory_limit(em)
    _add_redundant_bounds(em)
    _set_objective(em, lower_bound, upper_bound)
    em.stats = {"events": E, "bool_vars": len(em.x) + len(em.r) + len(em.l) + len(em.b) + len(em.st) + len(em.first)}
    return em


# --------------------------------------------------------------------------- hints and decoding


def event_hint_from_schedule(em: EventModel, schedule: Schedule) -> int | None:
    """Set a complete solution hint from a schedule valid for ``em``; return its model cost.

    Every variable of the model gets a value, taken from the schedule's
    normal form (:func:`normal_form`), so the hint is a complete solution.

    Parameters
    ----------
    em : EventModel
    schedule : Schedule
        A valid schedule of the model's DAG (replayed before).

    Returns
    -------
    int or None
        The model cost of the hint, or None (and no hint set) when the
        schedule does not fit the model (more computes than events, or recomputes in a oneshot model).
    """
    c = em.cdag
    if em.variant == "recompute":
        schedule = reduce_schedule(c, schedule)  # the model holds reduced schedules only
    order, states, store_event = state_from_schedule(c, schedule)
    if any(order.count(v) > k for v, k in em.caps.items()):
        return None
    if len(order) > em.events or (em.variant == "oneshot" and len(set(order)) != len(order)):
        return None
    red = normal_form(c, order, states)
    E = em.events
    while len(red) < E:
        red.append(set())
    m = em.model
    m.clear_hints()
    pi = order + [None] * (E - len(order))
    for (v, t), x in em.x.items():
        m.add_hint(x, pi[t] == v)
    for (v, t), r in em.r.items():
        m.add_hint(r, v in red[t])
    cost = 0
    for (v, t), ld in em.l.items():
        val = v in red[t] and (t == 0 or v not in red[t - 1]) and pi[t] != v
        cost += val
        m.add_hint(ld, val)
    for v, b in em.b.items():
        val = v in store_event
        cost += val
        m.add_hint(b, val)
    if em.variant == "oneshot":
        for v, p in em.pos.items():
            m.add_hint(p, order.index(v))
    else:
        for (v, t), s in em.st.items():
            val = store_event.get(v) == t
            cost += val
            m.add_hint(s, val)
        seen = set()
        firsts = {}
        for t in range(E):
            if pi[t] is not None:
                seen.add(pi[t])
            firsts[t] = set(seen)
        for (v, t), f in em.first.items():
            m.add_hint(f, v in firsts[t])
    return int(cost)


def decode_events(em: EventModel, value, meta=None) -> Schedule:
    """Turn solver values into a :class:`Schedule` (see :func:`schedule_from_events`).

    Parameters
    ----------
    em : EventModel
        The built model the solution belongs to.
    value : callable
        Reads the solution value of a variable (``solver.value``).
    meta : dict, optional
        Stored as the schedule's ``meta`` (e.g. ``{"method": "cp-sat/events"}``).

    Returns
    -------
    Schedule
        Checked by :func:`spartition.core.game.replay` before anything trusts it.
    """
    E = em.events
    pi = [None] * E
    for (v, t), x in em.x.items():
        if value(x):
            pi[t] = v
    red_at = [set() for _ in range(E)]
    for (v, t), r in em.r.items():
        if value(r):
            red_at[t].add(v)
    if em.variant == "oneshot":
        store_events = {int(value(em.pos[v])) for v, b in em.b.items() if value(b)}
    else:
        store_events = {t for (v, t), s in em.st.items() if value(s)}
    k = pi.index(None) if None in pi else E
    return schedule_from_events(em.cdag, em.M, em.variant, pi[:k], red_at[:k], store_events, meta)


# --------------------------------------------------------------------------- the registry record


def estimate_event_model(c: CompactDAG, variant: str, events: int, upper: int | None = None) -> dict:
    """The estimated size of the events model with ``events`` compute events, before it is built.

    About ``5 N E`` constraints (``N`` computed nodes; a red, load and
    memory row per node and event), about 30 us and 400 bytes each to build,
    measured on exact attention, d = 2 (``benchmarks/exact_io.py
    --estimate``); see :func:`spartition.exact.formulations.estimate_model`. For
    recompute, a load at event ``t`` needs a store flag among the ``t``
    events before it: ``N E^2 / 2`` more terms, about 4 us each (CPU time
    measured: attention-forward n=2 d=2, ``E = 246``, 5.8 s; matmul 3x3x3,
    ``E = 99``, 1.8 s; fft 8 points, ``E = 88``, 0.8 s), which the ``5 N E``
    count alone put at 1.3, 0.7 and 0.3 s.

    Examples
    --------
    >>> from spartition.core.dag import as_compact
    >>> from spartition.core.registry import build
    >>> c = as_compact(build("attention-forward", n=2, d=2))
    >>> estimate_event_model(c, "recompute", 246)["build_seconds"]
    5.686

    Parameters
    ----------
    c : CompactDAG
    variant : str
    events : int, optional
        Compute events (the cap for recompute, ``N`` for oneshot).
    upper : int, optional
        I/O of a known schedule (unused).

    Returns
    -------
    dict
        As :func:`spartition.exact.formulations.model_size` returns it.
    """
    N = int((~c.is_input).sum())
    constraints = 5 * N * events
    seconds_each = 3e-5
    if variant == "recompute":  # N E^2 / 2 prefix-sum terms spread over the 5 N E constraints: E / 10 each
        seconds_each += 4e-6 * events / 10
    return model_size("events", variant, constraints, seconds_each, 400)


def _build(spec: ModelSpec) -> EventModel:
    return build_event_model(spec.cdag, spec.M, spec.variant, events=spec.events, symmetry_pairs=spec.pairs,
                             lower_bound=spec.lower, upper_bound=spec.upper)


def _cap(spec: ModelSpec) -> dict:
    harmless = spec.variant == "oneshot" or spec.events >= harmless_events(spec.cdag)
    return {"events": spec.events, "harmless": harmless}


#: The events formulation, as :func:`spartition.exact.solve.solve_io` uses it (the default for recompute).
FORMULATION = Formulation(
    name="events",
    summary="one time index per compute event; red sets at the events",
    variants=("oneshot", "recompute"),
    exact_for=("oneshot",),
    default_for=("recompute",),
    build=_build,
    decode=decode_events,
    cap=_cap,
    assumptions={
        "oneshot": (
            "oneshot: exactly N compute events (N = non-input nodes): no horizon to choose",
            "normal form as in the order model (lazy loads, eager deletes, store after compute)",
            "symmetry: Puget precedences on compute events",
        ),
        "recompute": (
            "recompute: at most E compute events and pi(v) computes of each v (formulations.caps); "
            "exact when E >= sum pi (cap['harmless']), else optimal only within the cap",
            "normal form (lazy loads, eager deletes, one store right after a compute)",
            "symmetry: Puget precedences on first-compute events",
        ),
    },
    estimate=estimate_event_model,
    hint=event_hint_from_schedule,
    parameters=TUNED_PARAMETERS,
    symmetry=True,
    bounded=True,
)
