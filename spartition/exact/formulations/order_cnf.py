"""The compute-order model of the oneshot game as unweighted MaxSAT clauses (the input of RC2).

:func:`order_cnf` writes the compute-order model of
:mod:`spartition.exact.formulations.order` clause for clause: the same order
literals (a tournament with no 3-cycle, fixed by ancestry where the DAG
decides), the same load flags ``L[v, w]``, store flags ``b[v]``, gap
conjunctions and red literals ``red(v, e)``, the same memory limit at every
compute (a sequential counter, :func:`pysat.card.CardEnc.atmost`), the same
Puget precedences and the same chain dominance rule
(``unary_chain_pairs``). The objective ``sum L + sum b`` becomes one soft
unit clause ``(not x)`` of weight 1 per load or store literal; the stores
of outputs are forced and counted as a constant offset. The soundness and
exactness arguments of the model (normal form, symmetry, dominance) are
those of :mod:`spartition.exact.formulations.order`; nothing is added here
but the translation, so a MaxSAT optimum is the order model's optimum and a
model decodes (:func:`decode_order_cnf`) into a schedule that is replayed
before anything trusts it.

The clauses are solved by :mod:`spartition.exact.maxsat` (RC2) and, with an
I/O budget, refuted by :mod:`spartition.certify.order_encoding`. They are
added in a fixed order (loads and red literals node by node), so the same
DAG, ``M`` and options give the same CNF, variable for variable.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from itertools import combinations

from spartition.core.dag import CompactDAG
from spartition.core.game import Schedule
from spartition.errors import SpartitionError
from spartition.exact.formulations import model_size
from spartition.exact.formulations.normal_form import schedule_from_events
from spartition.exact.formulations.order import order_ancestors, unary_chain_pairs
from spartition.settings import DEFAULT_VARIANT

__all__ = ["OrderCNF", "count_reloads_only", "decode_order_cnf", "estimate_order_cnf", "order_cnf"]


@dataclass
class OrderCNF:
    """The order model of one DAG and ``M`` as hard clauses and soft unit literals.

    Attributes
    ----------
    cdag : CompactDAG
    M : int
    num_vars : int
    hard : list of list of int
        DIMACS clauses.
    soft : list of int
        Literals that are true when a load or store is *not* made (each a
        soft unit clause of weight 1).
    offset : int
        Cost the clauses do not carry: the stores of the outputs.
    computed : list of int
    anc : list of int
        Ancestor bitsets (:func:`spartition.exact.formulations.order.order_ancestors`).
    order : dict
        ``(a, b)``, ``a < b`` -> the variable "a is computed before b"
        (incomparable pairs only).
    red, load, store : dict
        ``(v, e)``, ``(v, w)`` and ``v`` -> variable (``store`` holds
        ``True`` for outputs).
    stats : dict
        Sizes and the build time.
    """

    cdag: CompactDAG
    M: int
    num_vars: int
    hard: list
    soft: list
    offset: int
    computed: list
    anc: list
    order: dict = field(default_factory=dict)
    red: dict = field(default_factory=dict)
    load: dict = field(default_factory=dict)
    store: dict = field(default_factory=dict)
    stats: dict = field(default_factory=dict)

    def before(self, a: int, b: int):
        """``True``/``False`` where ancestry decides, else the literal "a is computed before b"."""
        if self.anc[b] >> a & 1:
            return True
        if self.anc[a] >> b & 1:
            return False
        return self.order[a, b] if a < b else -self.order[b, a]


class _Clauses:
    """Variables, clauses and cached conjunctions, with Python bools folded as constants."""

    def __init__(self):
        self.num_vars = 0
        self.hard = []
        self.conj = {}

    def var(self) -> int:
        self.num_vars += 1
        return self.num_vars

    def clause(self, lits) -> None:
        real = []
        for x in lits:
            if x is True:
                return
            if x is not False:
                real.append(x)
        if not real:
            raise AssertionError("empty clause: the order model is infeasible by construction")
        self.hard.append(real)

    def conjunction(self, lits):
        """A literal equal to the AND of ``lits`` (folded, cached by its literal set)."""
        real = []
        for x in lits:
            if x is False:
                return False
            if x is not True:
                real.append(x)
        if not real:
            return True
        if len(real) == 1:
            return real[0]
        key = tuple(sorted(real))
        y = self.conj.get(key)
        if y is None:
            y = self.conj[key] = self.var()
            self.hard.extend([-y, x] for x in real)
            self.hard.append([y] + [-x for x in real])
        return y

    def disjunction(self, lits):
        neg = [_neg(x) for x in lits]
        return _neg(self.conjunction(neg))


def _neg(x):
    if x is True:
        return False
    if x is False:
        return True
    return -x


def order_cnf(c: CompactDAG, M: int, *, symmetry_pairs=(), dominance: bool = True) -> OrderCNF:
    """The order model of ``c`` with ``M`` red pebbles as MaxSAT clauses (oneshot).

    The clauses follow :func:`spartition.exact.formulations.order.build_order_model`
    (without its optional redundant overflow bounds and objective bounds),
    built directly as integer lists, one constraint family per step: the
    compute order, the stores, per node its loads and red literals, the
    memory limit at every compute, the symmetry precedences and the chain
    dominance rule.

    Parameters
    ----------
    c : CompactDAG
    M : int
        Fast memory (the caller checks it is feasible).
    symmetry_pairs : iterable of (int, int)
        Puget precedences (:func:`spartition.core.symmetry.symmetry_precedences`).
    dominance : bool
        State the chain dominance rule of the order model.

    Returns
    -------
    OrderCNF

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> oc = order_cnf(compact(fft(1)), 3)
    >>> len(oc.order), len(oc.load), oc.offset
    (1, 4, 2)
    """
    start = time.perf_counter()
    f = _Clauses()
    comp = [v for v in range(c.n) if not c.is_input[v]]
    oc = OrderCNF(cdag=c, M=M, num_vars=0, hard=f.hard, soft=[], offset=0, computed=comp, anc=order_ancestors(c))
    bef = _add_compute_order(f, oc)
    is_input = c.is_input.tolist()
    _add_stores(f, oc, c.is_output.tolist())
    red_at = {}  # compute e -> the red literals red(v, e)
    for v in range(c.n):
        uses = c.succs(v).tolist()
        if uses:  # variables and clauses node by node: the numbering is part of the CNF
            _add_loads(f, oc, bef, v, uses, is_input[v])
            _add_red(f, oc, bef, v, uses, is_input[v], red_at)
    _add_memory_limits(f, oc, red_at)
    _add_precedences(f, bef, symmetry_pairs)
    if dominance:
        _add_chain_dominance(f, oc, bef)
    oc.soft = [-x for x in oc.load.values()] + [-x for x in oc.store.values() if x is not True]
    oc.num_vars = f.num_vars
    oc.stats = {"vars": f.num_vars, "hard": len(f.hard), "soft": len(oc.soft), "order_vars": len(oc.order),
                "red_vars": len(oc.red), "aux_vars": len(f.conj), "build_s": round(time.perf_counter() - start, 3)}
    return oc


def _add_compute_order(f: _Clauses, oc: OrderCNF) -> dict:
    """The order literals of incomparable pairs and no 3-cycle; returns ``(a, b)`` -> "a before b"."""
    comp, anc = oc.computed, oc.anc
    for a, b in combinations(comp, 2):
        if not (anc[b] >> a & 1 or anc[a] >> b & 1):
            oc.order[a, b] = f.var()
    bef = {}
    for a in comp:
        for b in comp:
            if a != b:
                bef[a, b] = oc.before(a, b)
    for a, b, x in combinations(comp, 3):  # no 3-cycle: with a tournament, a total order
        ab, bx, xa = bef[a, b], bef[b, x], bef[x, a]
        f.clause((_neg(ab), _neg(bx), _neg(xa)))
        f.clause((ab, bx, xa))
    return bef


def _add_stores(f: _Clauses, oc: OrderCNF, is_output: list) -> None:
    """A store literal per computed node; an output's store is forced, counted in the offset."""
    for v in oc.computed:
        oc.store[v] = True if is_output[v] else f.var()
    oc.offset = sum(1 for v in oc.computed if is_output[v])


def _add_loads(f: _Clauses, oc: OrderCNF, bef: dict, v: int, uses: list, is_input: bool) -> None:
    """The load literals ``L[v, w]`` of ``v``: only a stored node is loaded, an input's first use loads it."""
    for w in uses:
        oc.load[v, w] = f.var()
        if not is_input:
            f.clause((-oc.load[v, w], oc.store[v]))
    if is_input:
        for w in uses:  # the first use of an input is a load
            f.clause([oc.load[v, w]] + [bef[w2, w] for w2 in uses if w2 != w])
        f.clause([oc.load[v, w] for w in uses])


def _add_red(f: _Clauses, oc: OrderCNF, bef: dict, v: int, uses: list, is_input: bool, red_at: dict) -> None:
    """The red literals ``red(v, e)``: red in the gap before a use not loaded at, absent in a gap it is loaded at."""
    events = set(uses) | ({v} if not is_input else set())
    for e in oc.computed:
        if e in events:
            continue
        started = bef[v, e] if not is_input else f.disjunction([bef[w, e] for w in uses])
        if started is False:
            continue
        terms = []
        for w in uses:
            after = bef[e, w]
            if after is False:
                continue
            between = [f.conjunction((bef[e, w2], bef[w2, w])) for w2 in uses if w2 != w]
            gap = f.conjunction([after, started] + [_neg(x) for x in between])
            if gap is not False:
                terms.append((w, gap))
        if not terms:
            continue
        r = oc.red[v, e] = f.var()
        red_at.setdefault(e, []).append(r)
        for w, gap in terms:  # gap and not loaded -> red; red and gap -> not loaded
            f.clause((_neg(gap), oc.load[v, w], r))
            f.clause((_neg(gap), -r, -oc.load[v, w]))
        f.clause([-r] + [gap for _, gap in terms])


def _add_memory_limits(f: _Clauses, oc: OrderCNF, red_at: dict) -> None:
    """At every compute ``e``: at most ``M - 1 - indeg(e)`` red literals (a sequential counter)."""
    from pysat.card import CardEnc, EncType

    indeg = oc.cdag.in_degree()
    for e in oc.computed:
        cap = oc.M - 1 - int(indeg[e])
        if cap < 0:
            raise AssertionError("memory check must precede model building")
        lits = red_at.get(e, [])
        if len(lits) > cap:
            enc = CardEnc.atmost(lits=lits, bound=cap, top_id=f.num_vars, encoding=EncType.seqcounter)
            f.num_vars = max(f.num_vars, enc.nv)
            f.hard.extend(enc.clauses)


def _add_precedences(f: _Clauses, bef: dict, symmetry_pairs) -> None:
    """The Puget precedences as unit clauses "w before u"."""
    for w, u in symmetry_pairs:
        lit = bef[w, u]
        if lit is False:
            raise AssertionError(f"symmetry precedence {w} < {u} contradicts the DAG")
        f.clause((lit,))


def _add_chain_dominance(f: _Clauses, oc: OrderCNF, bef: dict) -> None:
    """Chain dominance: ``w`` is computed right after ``u``, so every other compute is before both or after both."""
    for u, w in unary_chain_pairs(oc.cdag):
        for x in oc.computed:
            if x in (u, w):
                continue
            a, b = bef[x, u], bef[x, w]
            if isinstance(a, bool) and isinstance(b, bool):
                if a != b:
                    raise AssertionError(f"chain dominance {u}->{w} contradicts the DAG at {x}")
                continue
            f.clause((_neg(a), b))
            f.clause((a, _neg(b)))


def count_reloads_only(oc: OrderCNF) -> OrderCNF:
    """``oc`` with the same optimum, whose soft literals leave out the forced first load of each input.

    For each input ``v`` and use ``w`` that is not the first use in every
    order, a fresh literal ``R[v, w]`` with the clause ``L[v, w] and not
    first(v, w) -> R[v, w]``, where ``first(v, w)`` is the conjunction of
    "``w`` before ``w'``" over the other uses ``w'`` of ``v``. The soft
    clauses become ``not R[v, w]`` for the inputs and stay ``not L[v, w]``,
    ``not b[v]`` for the non-inputs; each input with a use adds 1 to the
    offset.

    Same optimum. Every model of ``oc`` loads an input at its first use (a
    clause of :func:`order_cnf`), so it loads ``v`` exactly ``1 + #{w :
    L[v, w] and not first(v, w)}`` times: with each ``R`` set to that
    conjunction it is a model of the new clauses of the same cost.
    Conversely a model of the new clauses satisfies every clause of ``oc``
    and costs at least its ``oc`` cost (``R`` is bounded only from below).
    So the optima agree, every bound proved on the new clauses bounds the
    oneshot optimum, and a model decodes (:func:`decode_order_cnf`) into a
    schedule costing at most its new cost. Only the cores a core-guided
    solver meets change: under ``oc`` its first cores are the forced loads
    (benchmarks/maxsat_objective.py measures the two against each other).

    Parameters
    ----------
    oc : OrderCNF

    Returns
    -------
    OrderCNF
        A new record: ``hard`` extended, ``soft``, ``offset`` and ``num_vars``
        replaced; ``oc`` is left as it was.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> from spartition.core.dag import compact
    >>> oc = order_cnf(compact(matmul(2, 2, 2)), 4)
    >>> re = count_reloads_only(oc)
    >>> oc.offset, re.offset  # the outputs' stores; and the inputs' first loads
    (4, 12)
    >>> from spartition.exact.maxsat import rc2_solve
    >>> rc2_solve(oc)[0], rc2_solve(re)[0]  # the brute force's optimum (tests/data/matmul222_optima.json)
    (17, 17)
    """
    c = oc.cdag
    nv, hard, soft, offset = oc.num_vars, list(oc.hard), [], oc.offset
    for v in range(c.n):
        uses = c.succs(v).tolist()
        if not c.is_input[v] or not uses:
            continue
        offset += 1
        for w in uses:
            others = [oc.before(w, w2) for w2 in uses if w2 != w]
            if False in others:
                first = False
            else:
                others = [x for x in others if x is not True]
                if not others:
                    continue  # the first use in every order: the forced load, never a reload
                nv += 1
                first = nv
                hard.extend([-first, x] for x in others)
                hard.append([first] + [-x for x in others])
            nv += 1
            hard.append([-oc.load[v, w], nv] if first is False else [-oc.load[v, w], first, nv])
            soft.append(-nv)
    soft += [-x for (v, _), x in oc.load.items() if not c.is_input[v]]
    soft += [-x for x in oc.store.values() if x is not True]
    stats = {**oc.stats, "vars": nv, "hard": len(hard), "soft": len(soft)}
    return replace(oc, num_vars=nv, hard=hard, soft=soft, offset=offset, stats=stats)


def decode_order_cnf(oc: OrderCNF, model, meta=None) -> Schedule:
    """The schedule a model of ``oc`` describes: the order from the order literals, red sets from ``red``.

    Parameters
    ----------
    oc : OrderCNF
    model : iterable of int
        The literals of a satisfying assignment (positive = true).
    meta : dict, optional
        The schedule's ``meta``.

    Returns
    -------
    Schedule
        Checked by :func:`spartition.core.game.replay` before anything trusts it.
    """
    true = {x for x in model if x > 0}

    def value(lit):
        if isinstance(lit, bool):
            return lit
        return (lit in true) if lit > 0 else (-lit not in true)

    c = oc.cdag
    earlier = {v: sum(value(oc.before(u, v)) for u in oc.computed if u != v) for v in oc.computed}
    order = sorted(oc.computed, key=lambda v: earlier[v])
    if sorted(earlier.values()) != list(range(len(order))):
        raise SpartitionError("a MaxSAT model of the order CNF is no total order (encoding bug)")
    at = {v: t for t, v in enumerate(order)}
    red_at = [{e} | set(c.preds(e).tolist()) for e in order]
    for (v, e), r in oc.red.items():
        if value(r):
            red_at[at[e]].add(v)
    stores = {at[v] for v, b in oc.store.items() if value(b)}
    return schedule_from_events(c, oc.M, "oneshot", order, red_at, stores, meta)


def estimate_order_cnf(c: CompactDAG, variant: str = DEFAULT_VARIANT, events: int | None = None,
                       upper: int | None = None) -> dict:
    """The estimated size of :func:`order_cnf`, before it is built.

    About ``N^3 / 2`` clauses (``N`` computed nodes), about 4 us and 200
    bytes each, measured on attention-forward n=2 d=3 at M = 6 (80,608
    clauses in 0.2-0.4 s).

    Parameters
    ----------
    c : CompactDAG
    variant, events, upper
        Unused (the signature of a formulation's ``estimate``).

    Returns
    -------
    dict
        As :func:`spartition.exact.formulations.model_size` returns it.
    """
    N = int((~c.is_input).sum())
    return model_size("order-cnf", "oneshot", N ** 3 / 2, 4e-6, 200)

