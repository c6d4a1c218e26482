"""Published I/O bounds as records, evaluated at a family's paper parameters and a memory size M.

The engine part of the formulas: the :class:`Formula` record, its
evaluation (:func:`evaluate_formula`, :class:`FormulaValue`) and the lookup
of what the families register. The papers' statements themselves (their
regimes, constants and sources) live with the families: a family registers
one :class:`FamilyBounds` under the entry-point group ``spartition.formulas``
(its name the family's), holding its formulas and the function that turns
builder parameters into the paper parameters (``n, d, r, g, Z_input,
Z_QK`` for the attention families) without building the DAG.

A formula is a function of those parameters and ``M``, tagged with its
source (paper, theorem or lemma), its kind (``lower`` or ``upper``), whether
its constants are ``explicit`` in the paper or only ``asymptotic``
(Theta/O/Omega: the function is then the bare expression and its constant is
unknown), and the regime where it holds.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from functools import cache
from typing import Callable

from spartition.core.registry import family as builder_of
from spartition.core.registry import FORMULAS
from spartition.errors import UnknownFamily
from spartition.finding import Finding
from spartition.status import Status

__all__ = [
    "FamilyBounds",
    "Formula",
    "FormulaValue",
    "all_formulas",
    "evaluate_formula",
    "evaluate_formulas",
    "family_bounds",
    "formula_families",
    "formula_named",
    "formulas_for",
    "paper_params_for",
    "paper_params_of",
]

#: The parameters the papers state their bounds in, in the order they are shown.
KINDS = ("lower", "upper")
CONSTANTS = ("explicit", "asymptotic")


# ---------------------------------------------------------------- the records


@dataclass(frozen=True, kw_only=True)
class Formula:
    """One published bound, a function of the paper parameters and M.

    Built by keyword only, so two of its strings (``source`` and ``where``)
    cannot be swapped by position.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"sy-flash-upper"``.
    families : tuple of str
        DAG families it is stated for.
    kind : {"lower", "upper"}
        Lower or upper bound on the optimal I/O.
    expression : str
        The bound as written (``M`` the fast memory).
    source : str
        The paper.
    where : str
        Theorem, lemma or proof in the paper.
    constants : {"explicit", "asymptotic"}
        ``asymptotic``: only the order is stated, the value is the bare
        expression and the hidden constant is unknown.
    regime : str
        Where it holds, as stated, and the project's concrete reading.
    func : callable
        ``func(p, M) -> float``.
    holds : callable
        ``holds(p, M) -> bool``: whether ``(p, M)`` is in the regime.
    capacity : callable or None
        For explicit lower bounds from an S-partition proof: ``U(p, M)``, the
        proof's bound on the weighted nodes of one 2M-partition class.
    detail : tuple of (str, str)
        Explicit constants of the proof (tile sizes, counts).
    variants : tuple of str
        The games it is proven for (``oneshot``, ``recompute``, ``partial``); a
        lower bound proven for the oneshot game only says nothing of the
        recompute optimum, and neither game's bounds say anything of the
        partial game's unless proven for it.
    notes : callable or None
        ``notes(p, M) -> tuple of str``, read after ``func``: what its last
        evaluation at ``(p, M)`` left out (e.g. a search cut by its time
        limit, ``"...: time limit"``); the value stays valid, the notes say
        it may be weaker than the formula's full search.
    """

    name: str
    families: tuple
    kind: str
    expression: str
    source: str
    where: str
    constants: str
    regime: str
    func: Callable = field(repr=False, compare=False)
    holds: Callable = field(repr=False, compare=False)
    capacity: Callable | None = field(default=None, repr=False, compare=False)
    detail: tuple = ()
    variants: tuple = ("oneshot", "recompute")
    notes: Callable | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        if self.kind not in KINDS or self.constants not in CONSTANTS:
            raise ValueError(f"formula {self.name!r}: bad kind {self.kind!r} or constants {self.constants!r}")
        if not self.variants or set(self.variants) - {"oneshot", "recompute", "partial"}:
            raise ValueError(f"formula {self.name!r}: variants must be among oneshot, recompute, partial, "
                             f"got {self.variants!r}")

    def to_dict(self) -> dict:
        """The stable JSON form (without the callables)."""
        return {
            "name": self.name, "families": list(self.families), "kind": self.kind,
            "expression": self.expression, "source": self.source, "where": self.where,
            "constants": self.constants, "regime": self.regime, "detail": dict(self.detail),
            "variants": list(self.variants),
        }


@dataclass(frozen=True)
class FormulaValue:
    """A formula evaluated at given parameters and M.

    ``value`` is ``nan`` where the expression is undefined there (e.g. no
    admissible tile width); ``applies`` says whether ``(params, M)`` lies in
    the formula's regime; ``capacity`` is the per-class count ``U`` of
    explicit partition bounds (else None); ``notes`` what the evaluation
    left out (:attr:`Formula.notes`); ``games`` the games it is proven for
    (:attr:`Formula.variants`).
    """

    name: str
    family: str
    kind: str
    value: float
    applies: bool
    constants: str
    source: str
    where: str
    regime: str
    expression: str
    M: int
    params: dict
    capacity: float | None = None
    notes: tuple = ()
    games: tuple = ()

    def to_dict(self) -> dict:
        """JSON form; a non-finite value becomes None."""
        def num(x):
            return None if x is None or not math.isfinite(x) else x

        return {
            "name": self.name, "family": self.family, "kind": self.kind, "value": num(self.value),
            "applies": self.applies, "constants": self.constants, "source": self.source,
            "where": self.where, "regime": self.regime, "expression": self.expression,
            "M": self.M, "params": dict(self.params), "capacity": num(self.capacity), "games": list(self.games),
            **({"notes": list(self.notes)} if self.notes else {}),
        }

    def finding(self, game: str) -> Finding | None:
        """The lower bound this value proves in ``game``, as a :class:`~spartition.finding.Finding`, else None.

        Only an explicit lower formula proven for ``game``, in its regime and
        finite, proves one: its value rounded down to an integer (an I/O
        count is one), the theorem named as the evidence.
        """
        if not (self.kind == "lower" and self.constants == "explicit" and self.applies and game in self.games
                and math.isfinite(self.value)):
            return None
        return Finding(value=math.floor(self.value + 1e-9), method=f"formula:{self.name}", status=Status.CLOSED_FORM,
                       evidence=f"theorem: {self.where} ({self.source})", game=game)


@dataclass(frozen=True)
class FamilyBounds:
    """What a family registers under ``spartition.formulas``: its published bounds and its paper parameters.

    Attributes
    ----------
    family : str
        The family (the entry point's name).
    formulas : tuple of Formula
        The bounds stated for it, in the order they are shown.
    paper_params : callable
        ``paper_params(params) -> dict`` of the paper parameters, from the
        builder parameters (defaults filled in, plus any given paper
        parameters); raises KeyError naming a missing parameter.
    given : dict
        Paper parameters that may be given instead of computed, name ->
        type (e.g. ``{"Z_QK": int}``); given ones override the computed.
    paper_keys : tuple of str
        The names of the paper parameters a builder writes into its DAG
        (graph attribute ``paper``, :func:`paper_params_of`); empty: whatever it writes.
    """

    family: str
    formulas: tuple
    paper_params: Callable = field(repr=False, compare=False)
    given: dict = field(default_factory=dict)
    paper_keys: tuple = ()

    def __post_init__(self):
        stray = [f.name for f in self.formulas if self.family not in f.families]
        if stray:
            raise ValueError(f"formulas {stray} registered for {self.family!r} are not stated for it")


# ---------------------------------------------------------------- lookup


@cache
def _registrations() -> dict:
    return {name: FORMULAS[name] for name in sorted(FORMULAS)}


def formula_families() -> list[str]:
    """Families with at least one registered formula, sorted.

    Examples
    --------
    >>> from spartition.core.registry import FORMULAS
    >>> [f for f in formula_families() if FORMULAS.package(f) == "spartition"]
    ['approx-attention', 'attention-backward-flash', 'attention-backward-weights', 'attention-forward', 'fft', 'matmul']
    """
    return sorted(name for name, reg in _registrations().items() if reg.formulas)


def family_bounds(family: str) -> FamilyBounds:
    """The registration of ``family`` under ``spartition.formulas``.

    Raises
    ------
    UnknownFamily
        If no formula is registered for ``family`` (the message lists the families that have some).
    """
    reg = _registrations().get(family) if isinstance(family, str) else None
    if reg is None or not reg.formulas:
        raise UnknownFamily(f"no bounds registered for family {family!r}; families with bounds: {', '.join(formula_families())}")
    return reg


def formulas_for(family: str) -> list[Formula]:
    """The formulas stated for ``family``, in registry order.

    Raises
    ------
    UnknownFamily
        If no formula is registered for ``family``.

    Examples
    --------
    >>> names = [f.name for f in formulas_for("attention-backward-flash")]
    >>> names[:4]
    ['li-flash-backward-upper', 'li-sparse-lower', 'segment-backward-lower', 'trivial-backward-flash']
    >>> names[4:]
    ['segment-backward-consumer-lower', 'segment-backward-recompute-lower', 'segment-backward-partial-lower']
    """
    return list(family_bounds(family).formulas)


def all_formulas() -> tuple:
    """Every registered formula once (a formula stated for several families is one record), by family.

    Examples
    --------
    >>> names = [f.name for f in all_formulas()]
    >>> len(names) == len(set(names)), "sy-flash-upper" in names
    (True, True)
    """
    seen = {}
    for family in formula_families():
        for f in family_bounds(family).formulas:
            seen.setdefault(f.name, f)
    return tuple(seen.values())


def formula_named(name: str) -> Formula:
    """The registered formula ``name``.

    Raises
    ------
    UnknownFamily
        If no family registers a formula of that name; the message lists the registered names.

    Examples
    --------
    >>> formula_named("sy-flash-upper").expression
    'n^2 d^2 / M'
    """
    known = all_formulas()
    for f in known:
        if f.name == name:
            return f
    raise UnknownFamily(f"unknown formula {name!r}; registered: {', '.join(sorted(f.name for f in known))}")


def _builder_defaults(family: str) -> dict:
    try:
        sig = inspect.signature(builder_of(family))
    except UnknownFamily:  # bounds may be registered for a family that has no builder
        return {}
    return {k: v.default for k, v in sig.parameters.items() if v.default is not inspect.Parameter.empty}


def paper_params_for(family: str, params: dict | None = None) -> dict:
    """The paper parameters of ``family`` from its builder parameters, by the family's registration.

    Builder defaults fill missing keys when the family is registered; the
    registration computes the rest (:attr:`FamilyBounds.paper_params`). Keys
    of :attr:`FamilyBounds.given` present in ``params`` override the
    computed ones. No DAG is built.

    Raises
    ------
    UnknownFamily
        If the family has no formulas or a required parameter is missing.

    Examples
    --------
    >>> paper_params_for("attention-forward", {"n": 4, "d": 2, "mask": "causal"})
    {'n': 4, 'd': 2, 'r': None, 'g': None, 'Z_input': 24, 'Z_QK': 10}
    >>> paper_params_for("approx-attention", {"n": 8, "d": 3, "g": 2})["r"]
    10
    """
    reg = family_bounds(family)
    params = params or {}
    merged = {**_builder_defaults(family), **params}
    try:
        out = reg.paper_params(merged)
    except KeyError as exc:
        raise UnknownFamily(f"{family} needs parameter {exc.args[0]!r} to evaluate its bounds") from None
    for key in reg.given:
        if key in params and key in out:
            out[key] = int(params[key])
    return out


def paper_params_of(G) -> dict:
    """The paper parameters a builder wrote into the DAG (graph attribute ``paper``), every key its family registers.

    A key the family's registration names (:attr:`FamilyBounds.paper_keys`)
    and the DAG does not hold is None; a DAG of a family without formulas
    gives its ``paper`` attribute as it is.

    Examples
    --------
    >>> from spartition.core.registry import build
    >>> paper_params_of(build("attention-forward", n=3, d=2, mask="causal"))
    {'n': 3, 'd': 2, 'r': None, 'g': None, 'Z_input': 18, 'Z_QK': 6}
    """
    paper = G.graph.get("paper") or {}
    family = G.graph.get("family")
    keys = FORMULAS[family].paper_keys if family in FORMULAS else ()
    return {k: paper.get(k) for k in keys} if keys else dict(paper)


# ---------------------------------------------------------------- evaluation


def evaluate_formula(formula: Formula, params: dict, M: int, family: str | None = None) -> FormulaValue:
    """Evaluate ``formula`` at paper parameters ``params`` and memory ``M``.

    Raises
    ------
    ValueError
        If ``M < 1``.

    Examples
    --------
    >>> f = formulas_for("attention-forward")[2]
    >>> v = evaluate_formula(f, {"n": 8, "d": 2, "Z_QK": 64}, 4)
    >>> f.name, v.value, v.applies
    ('sy-flash-upper', 64.0, True)
    """
    if M < 1:
        raise ValueError(f"M must be >= 1, got {M}")
    try:
        value = float(formula.func(params, M))
    except (ZeroDivisionError, ValueError, OverflowError):
        value = math.nan
    try:
        applies = bool(formula.holds(params, M))
    except (ZeroDivisionError, ValueError, OverflowError):
        applies = False
    capacity = float(formula.capacity(params, M)) if formula.capacity is not None else None
    return FormulaValue(
        name=formula.name, family=family or formula.families[0], kind=formula.kind, value=value,
        applies=applies and not math.isnan(value), constants=formula.constants, source=formula.source,
        where=formula.where, regime=formula.regime, expression=formula.expression, M=M,
        params=dict(params), capacity=capacity,
        notes=tuple(formula.notes(params, M)) if formula.notes is not None else (), games=tuple(formula.variants),
    )


def evaluate_formulas(family: str, params: dict, M: int) -> list[FormulaValue]:
    """Every formula of ``family`` evaluated at builder ``params`` (see :func:`paper_params_for`) and ``M``.

    Examples
    --------
    >>> rows = evaluate_formulas("attention-forward", {"n": 16, "d": 4}, 64)
    >>> {v.name: v.value for v in rows if v.name in ("sy-flash-upper", "sy-tiling-upper")}
    {'sy-flash-upper': 64.0, 'sy-tiling-upper': 128.0}
    """
    p = paper_params_for(family, params)
    return [evaluate_formula(f, p, M, family) for f in formulas_for(family)]
