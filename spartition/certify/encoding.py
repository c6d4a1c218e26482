"""The pebbling CNF: "a schedule of this DAG with M red pebbles and I/O <= Q exists".

Deliberately simple and separate from the CP-SAT models of
:mod:`spartition.exact`: a time-indexed state encoding with frame axioms, no
symmetry breaking, no dominance rule, no normal form.

Steps
-----
Step ``t = 1 .. T`` takes the state after step ``t - 1`` to the state after
step ``t``: first any set of red nodes is deleted, then at most one move
(load, store or compute) is made. Deletes cost nothing and only shrink the
red set, so grouping each non-delete move of a game schedule with the
deletes before it loses nothing: ``T`` counts the loads, stores and
computes, never the deletes.

Variables (``v`` a node, ``t`` a step): ``r[v, t]`` v is red after step t,
``b[v, t]`` v is blue after step t (non-inputs; inputs are always blue),
``l[v, t]``, ``s[v, t]`` (non-inputs), ``c[v, t]`` (non-inputs): the move of
step t loads, stores, computes v; oneshot ``k[v, t]``: v was computed at
step t or before; ``io[t]``: step t is a load or store.

Clauses, for every step t and node v (state 0: nothing red, only inputs blue)

1. ``r[v,t] -> r[v,t-1] or l[v,t] or c[v,t]``: red appears only by a load or compute;
2. ``l[v,t] -> r[v,t]``, ``c[v,t] -> r[v,t]``, ``s[v,t] -> r[v,t]``;
3. ``l[v,t] -> b[v,t-1]`` (load needs blue), ``s[v,t] -> not b[v,t-1]`` (no useless store);
4. ``b[v,t] <-> b[v,t-1] or s[v,t]``: blue appears only by a store and stays;
5. ``c[v,t] -> r[u,t]`` for every predecessor u;
6. at most one of the moves of step t;
7. at most M of ``r[., t]``;
8. oneshot: ``c[v,t] -> k[v,t]``, ``k[v,t-1] -> k[v,t]``, ``c[v,t] -> not k[v,t-1]``;
9. ``l[v,t] -> io[t]``, ``s[v,t] -> io[t]``; at most Q of ``io[.]``;
10. ``b[v,T]`` for every output that is not an input;
11. implied counts (``count_levels`` = K, default 2): per node, ``g[v,j]``
    forced true once v has been loaded j times (j = 1 .. K), and ``h[v]``
    once v has been stored; at most Q of all the ``g`` and ``h``.

Cardinalities (6, 7, 9, 11) are sequential counters
(:mod:`spartition.certify.cardinality`).

Clause 11 adds no restriction: the j-th load of v, for distinct (v, j), and
the store of v, for distinct v, are distinct steps (one move per step), so
in every model with its counters at their meaning, the true ``g`` and ``h``
number at most the loads and stores, at most Q by 9; counters are only
forced upwards, so that assignment exists. It is there because the solver
cannot count across time steps by resolution: with clause 9 alone, refuting
I/O <= 11 for matmul 2x2x2 at M = 8 (12 inputs and outputs, each needing one
I/O) did not finish in minutes, a pigeonhole argument; with clause 11 it
takes 0.4 s. The brute-force tests run with it.

Why it is exact (docs/definitions.md section 2)
-----------------------------------------------
*A model gives a schedule.* At step t delete every node of
``R(t-1) - R(t)``, and also the moved node if the move is a load or compute
of a node red at t-1; then make the move. Deletes are legal (the nodes are
red). A load or compute of v: by 1 and 6 every other node red after step t
was red before, so the red set after the deletes, R', is
``R(t-1) & R(t) - {v}`` and the move yields exactly R(t); v is not in R' (a
legal load or compute), a load finds v blue (3), a compute finds every
predecessor u (u != v) red after step t by 5, hence before it by 1 and 6,
hence in R'; oneshot, 8 says no earlier step computed v. A store of v: no
load or compute at t, so ``R(t) <= R(t-1)``, v is in R' = R(t) by 2 and not
blue by 3. The red count shrinks during deletes and is ``|R(t)| <= M`` after
the move (7). Blue sets follow 4, the outputs end blue (10), and the I/O is
the number of steps with a load or store, at most Q by 9 and 6.

*A schedule gives a model*, if its non-delete moves number at most T: make
each non-delete move, with the deletes since the previous one, a step, drop
the trailing deletes, pad with empty steps, and give every variable its
meaning; each clause states a rule of the game or a definition.

Horizon
-------
:func:`proven_horizon` gives, for each variant, a ``T`` within which every
schedule with I/O <= Q has one of no greater I/O, so that with it the CNF is
satisfiable exactly when a schedule with I/O <= Q exists:

``oneshot``: a schedule with I/O <= Q computes each of the N non-input nodes
at most once, so it has at most ``T = N + Q`` non-delete moves. Nothing else
is assumed.

``recompute``: ``T = Q + sum pi(v)``, by the harmless compute caps
``pi(v)`` of :mod:`spartition.exact.formulations.caps` (the proof is in
:func:`proven_horizon`). When that CNF is too large to build, a caller may
give a smaller horizon (:func:`default_horizon` is ``2 N + Q``); the CNF
then says "a schedule with I/O <= Q and at most T loads, stores and
computes exists", and its refutation certifies optimality *within that
horizon* only, which the certificate states.
"""

from __future__ import annotations

from dataclasses import dataclass

from spartition.certify.cardinality import at_most, at_most_one
from spartition.certify.cnf import CNF
from spartition.core.dag import CompactDAG, as_compact, dag_hash, to_networkx
from spartition.core.game import Schedule
from spartition.exact.formulations.caps import harmless_events
from spartition.settings import check_variant

__all__ = ["ENCODER_VERSION", "PebblingCNF", "default_horizon", "decode_schedule", "pebbling_cnf",
           "proven_horizon"]

#: Bumped whenever the clauses written for an instance change; stored in certificates.
ENCODER_VERSION = "pebbling-1"


@dataclass
class PebblingCNF:
    """The CNF with the variable tables needed to decode a model into a schedule."""

    cnf: CNF
    cdag: CompactDAG
    M: int
    variant: str
    budget: int
    horizon: int
    red: list
    load: list
    store: list
    compute: list

    @property
    def exact(self) -> bool:
        """True when the horizon is proven sufficient (:func:`proven_horizon`), for either variant."""
        return self.horizon >= proven_horizon(self.cdag, self.variant, self.budget)


def default_horizon(dag, variant: str, budget: int) -> int:
    """``N + Q`` for oneshot (proven sufficient), ``2 N + Q`` for recompute (a stated cap, not proven).

    The recompute value is the fallback for DAGs whose :func:`proven_horizon`
    makes a CNF too large to build.
    """
    c = as_compact(dag)
    N = int((~c.is_input).sum())
    return N + budget if variant == "oneshot" else 2 * N + budget


def proven_horizon(dag, variant: str, budget: int) -> int:
    """Steps ``T`` within which every schedule with I/O <= ``budget`` has an equivalent the CNF admits.

    ``N + Q`` for oneshot; ``Q + sum pi(v)`` for recompute, with ``pi`` the
    harmless compute caps (:func:`spartition.exact.formulations.caps.compute_caps`).
    A CNF of any horizon ``>= T`` is satisfiable exactly when a schedule of
    the variant with ``M`` red pebbles and I/O <= ``budget`` exists, so its
    refutation proves a lower bound for the unbounded game.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    variant : {"oneshot", "recompute"}
    budget : int
        Q, the I/O allowed.

    Returns
    -------
    int

    Notes
    -----
    *Theorem (recompute).* Let ``S`` be a recompute schedule of the DAG with
    ``M`` red pebbles and I/O <= Q. Then some schedule ``S'`` of the same DAG
    and ``M``, with I/O(S') = I/O(S), has at most ``Q + sum pi(v)`` loads,
    stores and computes, and so is a model of :func:`pebbling_cnf` with any
    horizon ``T >= Q + sum pi``.

    *Proof.* Let ``S'`` be ``S`` reduced as in the caps theorem
    (:mod:`spartition.exact.formulations.caps`,
    :func:`~spartition.exact.formulations.caps.reduce_schedule`): the
    computes beginning unused copies, and the deletes ending them, are
    dropped until none is left. By that theorem ``S'`` is a valid schedule
    of the same DAG and ``M``, its I/O equals that of ``S`` (only computes
    and deletes, which cost nothing, were dropped), and it computes each
    non-input ``v`` at most ``pi(v)`` times. Its loads and stores number
    ``I/O(S') <= Q`` and its computes at most ``sum pi(v)``, so its
    non-delete moves number at most ``Q + sum pi(v)``.

    The time-indexed CNF assumes no normal form: a step holds any set of
    deletes followed by at most one load, store or compute, so deletes take
    no step of their own and need no bound. By "a schedule gives a model"
    (module docstring) every valid schedule with at most ``T`` non-delete
    moves and I/O <= Q is a model: each non-delete move, with the deletes
    since the previous one, is a step, trailing deletes are dropped and
    empty steps pad the rest (an empty step keeps the state, which every
    clause allows). ``S'`` is a valid schedule, so nothing further has to
    compose with the caps reduction. Hence if the CNF for budget Q and
    horizon ``T >= Q + sum pi`` is unsatisfiable, no recompute schedule with
    I/O <= Q exists. QED.

    The oneshot bound is the same count with each node computed at most
    once (``N`` computes), without any reduction.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, matmul
    >>> proven_horizon(fft(1), "recompute", 3), proven_horizon(matmul(2, 2, 2), "recompute", 16)
    (5, 36)
    >>> proven_horizon(fft(1), "oneshot", 3)
    5
    """
    check_variant(variant)
    c = as_compact(dag)
    if variant == "oneshot":
        return int((~c.is_input).sum()) + budget
    return budget + harmless_events(c)


def _per_node_counts(f: CNF, c: CompactDAG, T: int, load, store, levels: int) -> list:
    """Literals whose number of true ones is at most the I/O (clause 11).

    For each node v, ``ge[j]`` (j < levels) is forced true once v has been
    loaded j + 1 times; ``st`` once v has been stored. Loads of distinct
    nodes, and the j-th loads of one node for distinct j, are distinct steps,
    so the true ones among them never outnumber the loads and stores.
    """
    out = []
    for v in range(c.n):
        ge = [None] * levels
        for t in range(1, T + 1):
            l = load[v][t]
            nxt = [f.new_var() for _ in range(levels)]
            f.add(-l, nxt[0])
            for j in range(levels):
                if ge[j] is not None:
                    f.add(-ge[j], nxt[j])
                    if j + 1 < levels:
                        f.add(-l, -ge[j], nxt[j + 1])
            ge = nxt
        if T:
            out += ge
        if not c.is_input[v] and T:
            st = f.new_var()
            for t in range(1, T + 1):
                f.add(-store[v][t], st)
            out.append(st)
    return out


def pebbling_cnf(dag, M: int, variant: str, budget: int, horizon: int | None = None,
                 count_levels: int = 2) -> PebblingCNF:
    """The CNF "a ``variant`` schedule with ``M`` red pebbles and I/O <= ``budget`` exists".

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Red pebbles.
    variant : {"oneshot", "recompute"}
    budget : int
        Q, the I/O allowed (at least 0).
    horizon : int, optional
        Steps T (loads, stores and computes); default :func:`proven_horizon`.

    Returns
    -------
    PebblingCNF

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.certify.sat import solve_cnf
    >>> [solve_cnf(pebbling_cnf(fft(1), 3, "oneshot", q).cnf).satisfiable for q in (3, 4)]
    [False, True]
    """
    check_variant(variant)
    if budget < 0 or M < 0:
        raise ValueError("M and the budget must be non-negative")
    c = as_compact(dag)
    n = c.n
    T = proven_horizon(c, variant, budget) if horizon is None else horizon
    preds = c.pred_lists()
    is_input = c.is_input.tolist()
    f = CNF()
    f.comments += [
        f"spartition {ENCODER_VERSION}: a {variant} schedule with M = {M} and I/O <= {budget} "
        f"in at most {T} loads, stores and computes",
        f"dag sha256 {dag_hash(to_networkx(c))}",
    ]
    new = f.new_var
    red = [[None] * (T + 1) for _ in range(n)]
    blue = [[None] * (T + 1) for _ in range(n)]
    load = [[None] * (T + 1) for _ in range(n)]
    store = [[None] * (T + 1) for _ in range(n)]
    comp = [[None] * (T + 1) for _ in range(n)]
    done = [[None] * (T + 1) for _ in range(n)]
    io = [None] * (T + 1)
    for v in range(n):
        if not is_input[v]:
            blue[v][0] = new()
            f.add(-blue[v][0])
    for t in range(1, T + 1):
        io[t] = new()
        for v in range(n):
            red[v][t] = new()
            load[v][t] = new()
            if not is_input[v]:
                blue[v][t], store[v][t], comp[v][t] = new(), new(), new()
                if variant == "oneshot":
                    done[v][t] = new()
    for t in range(1, T + 1):
        moves = []
        for v in range(n):
            r, l, s, k = red[v][t], load[v][t], store[v][t], comp[v][t]
            before = [red[v][t - 1]] if t > 1 else []  # nothing is red at step 0
            f.add(-r, *before, l, *([k] if k else []))  # 1
            f.add(-l, r)  # 2
            f.add(-l, io[t])  # 9
            moves.append(l)
            if is_input[v]:
                continue
            f.add(-k, r)  # 2
            f.add(-s, r)  # 2
            f.add(-l, blue[v][t - 1])  # 3
            f.add(-s, -blue[v][t - 1])  # 3
            f.add(-blue[v][t - 1], blue[v][t])  # 4
            f.add(-s, blue[v][t])  # 4
            f.add(-blue[v][t], blue[v][t - 1], s)  # 4
            for u in preds[v]:
                f.add(-k, red[u][t])  # 5
            f.add(-s, io[t])  # 9
            moves += [s, k]
            if variant == "oneshot":
                f.add(-k, done[v][t])  # 8
                if t > 1:
                    f.add(-done[v][t - 1], done[v][t])  # 8
                    f.add(-k, -done[v][t - 1])  # 8
        at_most_one(f, moves)  # 6
        at_most(f, [red[v][t] for v in range(n)], M)  # 7
    at_most(f, io[1:], budget)  # 9
    if count_levels:
        at_most(f, _per_node_counts(f, c, T, load, store, count_levels), budget)  # 11
    for v in range(n):
        if c.is_output[v] and not is_input[v]:
            f.add(blue[v][T] if T > 0 else blue[v][0])  # 10
    return PebblingCNF(f, c, M, variant, budget, T, red, load, store, comp)


def decode_schedule(p: PebblingCNF, model) -> Schedule:
    """The schedule a model of ``p.cnf`` describes (module docstring: "a model gives a schedule").

    ``model`` is the set of true variables. The schedule is not checked here;
    callers replay it.
    """
    c, T = p.cdag, p.horizon
    true = set(model)
    moves = []
    red_prev = set()
    for t in range(1, T + 1):
        red_now = {v for v in range(c.n) if p.red[v][t] in true}
        move = None
        for v in range(c.n):
            for kind, table in (("load", p.load), ("store", p.store), ("compute", p.compute)):
                if table[v][t] is not None and table[v][t] in true:
                    move = (kind, v)
        gone = red_prev - red_now
        if move and move[0] != "store" and move[1] in red_prev:
            gone.add(move[1])
        moves += [("delete", c.names[u]) for u in sorted(gone)]
        if move:
            moves.append((move[0], c.names[move[1]]))
        red_prev = red_now
    return Schedule(p.M, p.variant, tuple(moves), meta={"method": "certify-cnf", "horizon": T})
