"""Claims for CI: statements over a grid of instances, checked against computed values.

A :class:`Claim` says ``lhs RELATION rhs`` for every instance (family
parameters x memories M) of a grid, where each side is a :class:`Quantity`:
the exact optimum, a computed lower bound, an algorithm's replayed I/O, a
registered formula times a constant, a class capacity, or any expression of
the parameters. Example: "the optimum of the forward DAG is at least the
Saha-Ye lower-bound formula with constant 1/4" is
``Claim(..., lhs=optimum(), relation=">=", rhs=formula("sy-lower", c=0.25))``.

Each side evaluates to an interval ``[lo, hi]`` that surely contains the true
value: a proven optimum is a point, a time-limited one is
``[proven bound, incumbent]``, a capacity is ``[best set found, proven upper
bound]``. ``lhs >= rhs`` *holds* when ``lhs.lo >= rhs.hi``, *fails* when
``lhs.hi < rhs.lo``, and is *undecided* otherwise; so nothing unproven
decides a claim. Computed values are read from and written to the results
store, so a test suite re-run costs nothing.

:func:`assert_claim` raises :class:`ClaimFailed` (an ``AssertionError``)
with a message naming the instance and the numbers; the pytest plugin
(:mod:`spartition.study.pytest_plugin`) gives it a session-wide store.

Golden files (:func:`spartition.study.golden.regress`) record the proven
values of a grid and report every change.
"""

from __future__ import annotations

import json
import math
import operator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Callable

from spartition.errors import InvalidClaim
from spartition.settings import DEFAULT_VARIANT
from spartition.study.capacity_rows import capacity_row, weight_key
from spartition.study.numbers import format_number
from spartition.study.store import canonical_json, stored_or_computed
from spartition.study.tasks import (
    Task,
    build_dag,
    exact_available,
    expand_grid,
    family_dag_hash,
    run_task,
)
from spartition.status import Status

__all__ = [
    "ClaimContext",
    "Interval",
    "Quantity",
    "Claim",
    "ClaimCheck",
    "ClaimReport",
    "ClaimFailed",
    "optimum",
    "lower_bound",
    "algorithm",
    "formula",
    "capacity",
    "expr",
    "informative",
    "io_known",
    "replace_rhs",
    "show_number",
    "check_claim",
    "assert_claim",
]

_RELATIONS = {">=": operator.ge, "<=": operator.le, "==": operator.eq}


class ClaimFailed(AssertionError):
    """A claim failed (or was undecided where that was not allowed) on some instance."""


@dataclass(frozen=True)
class Interval:
    """A value known to lie in ``[lo, hi]``, with how it was obtained."""

    lo: float
    hi: float
    text: str
    #: What realises the value at an end that can refute a claim: the schedule
    #: achieving ``hi`` of an I/O, the set achieving ``lo`` of a capacity.
    witness: str = ""

    @classmethod
    def point(cls, x, text: str, witness: str = "") -> "Interval":
        return cls(float(x), float(x), text, witness)

    @classmethod
    def optimum(cls, found, text: str) -> "Interval":
        """What a :class:`~spartition.finding.Finding` says of the optimum: [its proven bound, its schedule's I/O]."""
        lo, hi = found.lower, found.upper
        return cls(0.0 if lo is None else float(lo), math.inf if hi is None else float(hi), text)

    def show(self) -> str:
        if self.lo == self.hi:
            return f"{show_number(self.lo)} ({self.text})"
        return f"[{show_number(self.lo)}, {show_number(self.hi)}] ({self.text})"


def show_number(x) -> str:
    """A number as the claim reports print it: :func:`format_number` to 6 significant digits."""
    return format_number(x, 6, "nan")


class ClaimContext:
    """The instance a quantity is evaluated at (family, parameters, M): computes (or reads from the store) the values a claim needs at one instance."""

    def __init__(self, family, params, M, variant, store, settings):
        self.family, self.params, self.M, self.variant = family, dict(params), M, variant
        self.store, self.settings = store, settings
        self._G = None

    @property
    def dag(self):
        if self._G is None:
            self._G = build_dag(self.family, self.params)
        return self._G

    @property
    def paper(self) -> dict:
        """The papers' parameters (``n, d, r, g, Z_input, Z_QK``), else the builder's parameters."""
        from spartition.errors import UnknownFamily
        from spartition.study.formulas import paper_params_for

        try:
            return paper_params_for(self.family, self.params)
        except UnknownFamily:
            return {**self.dag.graph.get("params", {}), **self.params}

    def run(self, task: Task) -> dict:
        """Rows of ``task`` by method, from the store when it has them."""
        keys = task.keys(family_dag_hash(self.family, self.params))
        rows = stored_or_computed(self.store, [(k, task.effective_limit(k.method)) for k in keys],
                                  lambda: run_task(task))
        return {r.key.method: r for r in rows}

    def task(self, kind, name, time_limit=None, options=()):
        s = self.settings
        return Task(self.family, tuple(sorted(self.params.items())), self.M, self.variant, kind, name,
                    time_limit, s.get("workers", 1), s.get("seed", 0), options)


@dataclass(frozen=True)
class Quantity:
    """One side of a claim: ``evaluate(ctx) -> Interval`` (or None: not defined here), with a name."""

    text: str
    evaluate: Callable = field(repr=False, compare=False)
    #: ``known(ctx) -> Interval`` or None: the range this quantity is known to
    #: lie in *without computing it* (the trivial bound of an optimum, the total
    #: weight of a capacity), which decides whether a claim on it is informative.
    known: Callable | None = field(default=None, repr=False, compare=False)

    def times(self, c: float) -> "Quantity":
        """This quantity scaled by ``c >= 0``."""
        if c < 0:
            raise ValueError("scale a quantity by a non-negative constant")

        def ev(ctx):
            v = self.evaluate(ctx)
            return None if v is None else Interval(c * v.lo, c * v.hi, v.text, v.witness)

        def kn(ctx):
            v = self.known(ctx) if self.known is not None else None
            return None if v is None else Interval(c * v.lo, c * v.hi, v.text)

        return Quantity(f"{show_number(c)} * {self.text}", ev, kn if self.known is not None else None)


def optimum(method: str | None = None) -> Quantity:
    """The optimal I/O: a point when proven, else ``[proven bound, incumbent]``.

    ``method``: ``cpsat`` or ``brute`` (default: the claim's setting, CP-SAT
    when available, else brute force).
    """

    def ev(ctx):
        name = method or ctx.settings.get("exact") or ("cpsat" if exact_available("cpsat") else "brute")
        if name == "cpsat" and not exact_available("cpsat"):
            name = "brute"
        opts = (("max_states", ctx.settings.get("max_states", 2_000_000)),) if name == "brute" else ()
        tl = None if name == "brute" else ctx.settings.get("time_limit", 30.0)
        r = ctx.run(ctx.task("exact", name, tl, opts))[f"exact:{name}"]
        found = r.finding()
        if found.status == Status.INFEASIBLE:
            return None
        if found.status == Status.OPTIMAL:
            return Interval.optimum(found, f"optimum, {name} OPTIMAL")
        tl_text = f", time limit {show_number(r.time_limit)} s" if r.time_limit is not None else ""
        return Interval.optimum(found, f"optimum, {name} {found.status}{tl_text}")

    return Quantity(f"optimum[{method or 'exact'}]", ev, io_known)


def io_known(ctx) -> Interval:
    """What is known of any I/O of the DAG without computing it: ``[trivial bound, naive schedule]``.

    The trivial bound (docs/definitions.md section 2) is below every
    schedule; the naive schedule (each non-input node in topological order:
    load its predecessors, compute, store, delete all) costs at most
    ``sum over non-inputs of (in-degree + 1)``, so the optimum is at most that.
    """
    trivial, naive = _io_ends(ctx.family, canonical_json(ctx.params))
    return Interval(float(trivial), float(naive), "trivial bound .. naive schedule")


@lru_cache(maxsize=64)
def _io_ends(family: str, params_json: str) -> tuple:
    """``(trivial bound, naive schedule's I/O)`` of a family's DAG: they do not depend on M, so once per DAG."""
    from spartition.core.bounds import trivial_lower_bound

    G = build_dag(family, json.loads(params_json))
    naive = sum(k + 1 for _, k in G.in_degree() if k > 0)
    return trivial_lower_bound(G), naive


def lower_bound(method: str) -> Quantity:
    """A computed lower bound (``trivial``, ``hong-kung``, ``x-partition``, ``capacity``): its value."""

    def ev(ctx):
        opts = (("methods", (method,)),)
        r = ctx.run(ctx.task("bounds", "all", ctx.settings.get("bound_time_limit", 20.0), opts))[f"bound:{method}"]
        found = r.finding()
        return Interval.point(found.lower, f"lower bound {method}, "
                              f"{'search stopped early' if found.time_limited else 'proven'}")

    return Quantity(f"lower bound {method}", ev)


def algorithm(name: str) -> Quantity:
    """The replayed I/O of registered algorithm ``name`` (undefined where M is below its minimum)."""

    def ev(ctx):
        r = ctx.run(ctx.task("algorithm", name))[f"algorithm:{name}"]
        found = r.finding()
        if found.upper is None:
            if found.status == Status.NOT_APPLICABLE:
                return None
            raise ClaimFailed(f"algorithm {name} at {ctx.family} {ctx.params} M={ctx.M}: {r.status} {r.record.get('error')}")
        return Interval.point(found.upper, f"{name} replayed", f"schedule {name}")

    return Quantity(f"I/O of {name}", ev, io_known)


def formula(name: str, c: float = 1.0, in_regime: bool = True) -> Quantity:
    """``c`` times registered formula ``name`` (undefined outside its regime when ``in_regime``)."""
    from spartition.study.formulas import evaluate_formula, formula_named, paper_params_for

    f = formula_named(name)

    def ev(ctx):
        v = evaluate_formula(f, paper_params_for(ctx.family, ctx.params), ctx.M, ctx.family)
        if (in_regime and not v.applies) or not math.isfinite(v.value):
            return None
        return Interval.point(c * v.value, f"{'' if c == 1 else show_number(c) + ' * '}{name} = {f.expression}, {f.source}")

    return Quantity(f"{'' if c == 1 else show_number(c) + ' * '}{name}", ev)


def capacity(X: Callable | int, weight=None, convex: bool = False) -> Quantity:
    """The class capacity U(X): most weight in one set with P2, P3 for X (``[found, proven upper bound]``).

    ``X`` is an int or ``X(params, M)``; ``weight`` a selector (see
    :func:`spartition.partition.weights.node_weights`).
    """

    def ev(ctx):
        x = int(X(ctx.paper, ctx.M) if callable(X) else X)
        return _capacity(ctx, x, weight, convex)

    def kn(ctx):
        from spartition.partition.weights import node_weights

        return Interval(0.0, float(sum(node_weights(ctx.dag, weight).values())), "0 .. total weight w(V)")

    return Quantity(f"capacity U(X) of {weight or 'all nodes'}", ev, kn)


def _capacity(ctx, X, weight, convex) -> Interval:
    from spartition.partition.weights import node_weights

    wmap = node_weights(ctx.dag, weight)
    row = capacity_row(ctx, X, wmap, weight_key(wmap), "cp-sat", None, convex)
    text = f"capacity U({X}), {row.status}"
    return Interval(row.value, row.bound, text) if row.value != row.bound else Interval.point(row.value, text)


def expr(fn: Callable, text: str) -> Quantity:
    """Any expression ``fn(p, M)`` of the paper parameters ``p`` and ``M`` (None: undefined there)."""

    def ev(ctx):
        v = _call_users(fn, ctx.paper, ctx.M, what=f"expression {text!r}")
        return None if v is None else Interval.point(v, text)

    return Quantity(text, ev)


def _call_users(fn: Callable, *args, what: str):
    """``fn(*args)``, where ``fn`` is a claim author's code: what it raises is their mistake, not a bug of ours."""
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - any error of the author's function is reported as theirs
        raise InvalidClaim(f"{what} raised {type(exc).__name__}: {exc}") from exc


@dataclass(frozen=True)
class Claim:
    """A statement ``lhs relation rhs`` over a grid of instances.

    Attributes
    ----------
    name : str
    statement : str
        What the paper says, in words.
    source : str
        Paper, theorem or lemma.
    family : str
    grid : dict or list of dict
        Parameter name -> list of values (the cartesian product is taken; a
        list of such dicts is the union of their products).
    lhs, rhs : Quantity
    relation : {">=", "<=", "=="}
    Ms : tuple, callable or None
        Memories; ``Ms(params) -> list``; None: the whole range
        (:func:`spartition.study.studies.default_memories`).
    variant : str
    settings : dict
        ``time_limit``, ``bound_time_limit``, ``workers``, ``seed``, ``exact``.
    regime : str
        The conditions the statement's proof needs, in words (empty: every instance).
    in_regime : callable or None
        ``in_regime(p, M) -> bool`` on the paper parameters; an instance outside
        is still checked, and a failure there is a *finding* (the statement is
        false where its proof does not reach), not a failure of the claim.
    known : Quantity or None
        The range the left side is known to lie in without the claim (default:
        ``lhs.known``); see :func:`informative`.
    sanity : bool
        A sanity check (e.g. Hong-Kung's lemma against an optimum): it may
        have no informative instance without being reported as checking nothing.
    """

    name: str
    statement: str
    source: str
    family: str
    grid: dict
    lhs: Quantity
    relation: str
    rhs: Quantity
    Ms: tuple | Callable | None = None
    variant: str = DEFAULT_VARIANT
    settings: dict = field(default_factory=dict)
    regime: str = ""
    in_regime: Callable | None = field(default=None, repr=False, compare=False)
    known: Quantity | None = field(default=None, repr=False, compare=False)
    sanity: bool = False

    def __post_init__(self):
        if self.relation not in _RELATIONS:
            raise ValueError(f"claim {self.name!r}: relation must be one of {sorted(_RELATIONS)}")

    def instances(self):
        """``(params, M)`` pairs of the grid."""
        from spartition.study.tasks import default_memories

        for p in expand_grid(self.grid):
            if callable(self.Ms):
                Ms = self.Ms(p)
            elif self.Ms is None:
                Ms = default_memories(build_dag(self.family, p), self.variant)
            else:
                Ms = self.Ms
            for M in Ms:
                yield p, int(M)


@dataclass(frozen=True)
class ClaimCheck:
    """The claim at one instance: ``outcome`` is holds / fails / undecided / skipped."""

    family: str
    params: dict
    M: int
    outcome: str
    lhs: Interval | None
    rhs: Interval | None
    message: str
    informative: bool | None = None
    in_regime: bool = True
    witness: str = ""

    def instance(self) -> str:
        return f"{self.family} " + " ".join(f"{k}={v}" for k, v in self.params.items()) + f" M={self.M}"

    def to_dict(self) -> dict:
        def iv(x):
            return None if x is None else {"lo": x.lo, "hi": x.hi, "text": x.text}

        return {"family": self.family, "params": dict(self.params), "M": self.M, "outcome": self.outcome,
                "lhs": iv(self.lhs), "rhs": iv(self.rhs), "message": self.message,
                "informative": self.informative, "in_regime": self.in_regime, "witness": self.witness}


@dataclass(frozen=True)
class ClaimReport:
    """Every instance check of one claim."""

    claim: Claim
    checks: tuple

    def by(self, outcome: str, in_regime: bool | None = None) -> list:
        """The checks with ``outcome`` (only those inside / outside the regime when ``in_regime`` is given)."""
        return [c for c in self.checks if c.outcome == outcome and (in_regime is None or c.in_regime == in_regime)]

    @property
    def holds(self) -> bool:
        """True when no instance fails or is undecided (and some instance was checked)."""
        return bool(self.by("holds")) and not self.by("fails") and not self.by("undecided")

    @property
    def informative(self) -> list:
        """The checks that could have failed (:func:`informative`)."""
        return [c for c in self.checks if c.informative]

    @property
    def vacuous(self) -> list:
        """The evaluated checks that could not have failed."""
        return [c for c in self.checks if c.informative is False]

    @property
    def verdict(self) -> str:
        """``fails`` (an instance in the regime fails), ``checks nothing`` (no informative instance and
        not a sanity check), ``outside regime`` (every informative instance lies outside the regime),
        ``undecided`` (no informative instance in the regime is decided), else ``holds``. Failures outside the regime are findings, reported beside the verdict."""
        if self.by("fails", in_regime=True):
            return "fails"
        if not self.informative and not self.claim.sanity:
            return "checks nothing"
        inside = [c for c in self.informative if c.in_regime] or ([] if not self.claim.sanity else self.checks)
        if not inside:
            return "outside regime"
        if not any(c.outcome == "holds" for c in inside):
            return "undecided"
        return "holds"

    def counts(self) -> dict:
        """Instances by outcome, informative and vacuous, and failures outside the regime."""
        out = {k: len(self.by(k)) for k in ("holds", "fails", "undecided", "skipped")}
        out.update(informative=len(self.informative), vacuous=len(self.vacuous),
                   fails_outside_regime=len(self.by("fails", in_regime=False)),
                   informative_holds=sum(c.outcome == "holds" for c in self.informative))
        return out

    def to_dict(self) -> dict:
        c = self.claim
        return {"claim": c.name, "statement": c.statement, "source": c.source, "regime": c.regime,
                "family": c.family, "grid": c.grid if isinstance(c.grid, (list, tuple)) else [c.grid], "sanity": c.sanity,
                "verdict": self.verdict, "counts": self.counts(), "holds": self.holds,
                "witnesses": [{"instance": k.instance(), "in_regime": k.in_regime, "witness": k.witness,
                               "message": k.message} for k in self.by("fails")],
                "checks": [k.to_dict() for k in self.checks]}


def _decide(lhs: Interval, rel: str, rhs: Interval, tol: float = 1e-9) -> str:
    if rel == ">=":
        if lhs.lo >= rhs.hi - tol:
            return "holds"
        return "fails" if lhs.hi < rhs.lo - tol else "undecided"
    if rel == "<=":
        return _decide(rhs, ">=", lhs, tol)
    if lhs.lo == lhs.hi == rhs.lo == rhs.hi:
        return "holds"
    return "fails" if lhs.hi < rhs.lo - tol or lhs.lo > rhs.hi + tol else "undecided"


def replace_rhs(claim: Claim, rhs: Quantity, **changes) -> Claim:
    """``claim`` with another right side (e.g. its constant changed), and any other fields changed."""
    from dataclasses import replace

    return replace(claim, rhs=rhs, **changes)


def informative(known: Interval | None, rel: str, rhs: Interval, tol: float = 1e-9) -> bool:
    """Whether ``lhs rel rhs`` could have failed given only what is ``known`` of ``lhs`` without the claim.

    The rule: ``lhs >= rhs`` is informative where ``rhs`` exceeds the lower end
    of what is known (``optimum >= f`` says nothing where ``f`` is at most the
    trivial bound, or another bound proven independently); ``lhs <= rhs``
    where ``rhs`` is below the upper end (``U <= count`` says nothing where
    the count is at least the total weight; ``I/O <= c f`` nothing where
    ``c f`` is at least the naive schedule's I/O, an upper bound on the
    optimum known without any algorithm); ``==`` unless the value is known.
    Nothing known (None) is the whole real line: informative.

    Examples
    --------
    >>> informative(Interval(96, 500, "trivial .. naive"), ">=", Interval.point(80, "f"))
    False
    >>> informative(Interval(0, 70, "0 .. w(V)"), "<=", Interval.point(54, "count"))
    True
    """
    if known is None:
        return True
    if rel == ">=":
        return rhs.hi > known.lo + tol
    if rel == "<=":
        return rhs.lo < known.hi - tol
    return known.lo != known.hi


def _witness(outcome: str, rel: str, lhs: Interval, rhs: Interval) -> str:
    """The value that refutes a failing claim: the left side's realisation (a schedule, a set), else its text."""
    if outcome != "fails":
        return ""
    # the left side is the measured one: its realisation (schedule, class) is what contradicts the statement
    return lhs.witness or lhs.text


def check_claim(claim: Claim, store=None, progress=None, **settings) -> ClaimReport:
    """Evaluate ``claim`` on every instance of its grid (``settings`` override the claim's).

    Examples
    --------
    >>> c = Claim("chain", "a chain costs 2", "docs/definitions.md section 2", "chain", {"n": [3, 4]},
    ...           optimum("brute"), "==", expr(lambda p, M: 2, "2"), Ms=(2,))
    >>> [(ck.params["n"], ck.outcome) for ck in check_claim(c).checks]
    [(3, 'holds'), (4, 'holds')]
    """
    s = {**claim.settings, **settings}
    checks = []
    for params, M in claim.instances():
        ctx = ClaimContext(claim.family, params, M, claim.variant, store, s)
        try:
            inside = True if claim.in_regime is None else bool(
                _call_users(claim.in_regime, ctx.paper, M, what="the regime test"))
            rhs = claim.rhs.evaluate(ctx)
            lhs = None if rhs is None else claim.lhs.evaluate(ctx)
        except InvalidClaim as exc:
            where = ", ".join(f"{k}={v}" for k, v in params.items())
            raise InvalidClaim(f"claim {claim.name!r} at {where}, M={M}: {exc}") from exc.__cause__
        if progress is not None:
            progress()
        if lhs is None or rhs is None:
            what = claim.lhs.text if lhs is None else claim.rhs.text
            checks.append(ClaimCheck(claim.family, params, M, "skipped", lhs, rhs, f"{what} is not defined here",
                                     None, inside))
            continue
        known_q = claim.known or claim.lhs
        known = known_q.known(ctx) if known_q.known is not None else None
        if claim.known is not None and claim.known.known is None:
            known = claim.known.evaluate(ctx)
        outcome = _decide(lhs, claim.relation, rhs)
        msg = f"{claim.lhs.text} = {lhs.show()} {claim.relation} {claim.rhs.text} = {rhs.show()}: {outcome}"
        if not inside:
            msg += " (outside the regime: a finding)" if outcome == "fails" else " (outside the regime)"
        checks.append(ClaimCheck(claim.family, params, M, outcome, lhs, rhs, msg,
                                 informative(known, claim.relation, rhs), inside,
                                 _witness(outcome, claim.relation, lhs, rhs)))
    return ClaimReport(claim, tuple(checks))


def assert_claim(claim: Claim, store=None, allow_undecided: bool = False, **settings) -> ClaimReport:
    """Check ``claim``; raise :class:`ClaimFailed` naming each failing instance and its numbers.

    Raises
    ------
    ClaimFailed
        If some instance inside the claim's regime fails, or is undecided and
        ``allow_undecided`` is False, or no instance could be checked at all,
        or no instance is informative (:func:`informative`) and the claim is
        not a sanity check. Failures outside the regime are findings and do
        not raise; the report lists them.
    """
    report = check_claim(claim, store, **settings)
    bad = report.by("fails", in_regime=True) + ([] if allow_undecided else report.by("undecided", in_regime=True))
    decided = report.by("holds") or report.by("fails") or (allow_undecided and report.by("undecided"))
    if bad or not decided or report.verdict == "checks nothing":
        lines = [f"claim {claim.name!r} ({claim.source}): {claim.statement}"]
        lines += [f"  {c.outcome} at {c.instance()}: {c.message}" + (f" [witness: {c.witness}]" if c.witness else "")
                  for c in bad]
        if not decided and not bad:
            lines.append("  no instance of the grid could be checked (all skipped)")
        elif not bad:
            lines.append(f"  checks nothing: none of its {len(report.checks)} instances is informative")
        raise ClaimFailed("\n".join(lines))
    return report
