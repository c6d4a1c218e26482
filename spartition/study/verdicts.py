"""Study rows and their verdicts: everything known at one M, set side by side and judged.

:func:`assemble_row` gathers the stored results of one M (exact, bounds,
algorithms) with the registered formulas (:mod:`spartition.study.formulas`)
into a :class:`StudyRow`; :func:`verdicts` judges it.

Verdicts
--------
``violated``
    A bug or a false published claim: a computed lower bound (valid even
    when a search stopped early) above a certified upper bound (the I/O of
    a replayed schedule); an algorithm's I/O below a proven optimum; two
    exact methods proving different optima; an explicit-constant published
    lower bound, in its regime, above a certified upper bound; an
    explicit-constant published upper bound, in its regime, below a proven
    lower bound. Asymptotic formulas (constant unknown) are never claims a
    number can violate.
``tight``
    A computed lower bound equals the proven optimum and an algorithm
    attains it.
``mismatch``
    An algorithm's replayed I/O differs from the closed form its generator
    documents (``io_formula``).
``invalid``
    A certificate schedule rejected by replay.

Nothing unproven is called optimal: an exact row whose search stopped
early is shown with its status, incumbent, proven bound and time limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from spartition.errors import UnknownFamily
from spartition.finding import LOWER
from spartition.study.numbers import format_number
from spartition.study.store import StoredResult
from spartition.study.tasks import EXACT_METHODS, SKIPPED
from spartition.status import Status

__all__ = ["Verdict", "StudyRow", "assemble_row", "format_exact", "verdicts"]


@dataclass(frozen=True)
class Verdict:
    """One verdict on a row: ``kind`` in violated / tight / mismatch / invalid, and why."""

    kind: str
    message: str

    def to_dict(self) -> dict:
        return {"kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class StudyRow:
    """Everything known at one M: stored results by method, formulas, verdicts, ratios."""

    family: str
    params: dict
    M: int
    variant: str
    dag_hash: str
    exact: dict  # method name -> StoredResult
    bounds: dict  # bound method -> StoredResult
    algorithms: dict  # algorithm name -> StoredResult
    formulas: tuple  # FormulaValue
    verdicts: tuple = ()
    ratios: dict = field(default_factory=dict)
    missing: tuple = ()

    @property
    def optimum(self) -> float | None:
        """The proven optimum (an OPTIMAL exact row), else None."""
        for r in self.exact.values():
            if r.status == Status.OPTIMAL and r.value is not None:
                return r.value
        return None

    def findings(self) -> list:
        """Every stored row of the row as a :class:`~spartition.finding.Finding` (bounds, exact, algorithms)."""
        return [r.finding() for r in [*self.bounds.values(), *self.exact.values(), *self.algorithms.values()]]

    @property
    def upper(self) -> float | None:
        """The best certified upper bound: the least I/O of a replayed schedule."""
        vals = [f.upper for f in self.findings() if f.upper is not None]
        return min(vals) if vals else None

    @property
    def lower(self) -> float | None:
        """The best valid lower bound: computed bounds and the exact solvers' proven bounds."""
        vals = [f.lower for f in self.findings() if f.lower is not None]
        return max(vals) if vals else None

    def to_dict(self) -> dict:
        def cell(r):
            return {"status": r.status, "value": r.value, "bound": r.bound, "proven": r.proven,
                    "time_limit": r.time_limit, "wall_s": r.wall_s, "record": r.record}

        return {
            "family": self.family, "params": dict(self.params), "M": self.M, "variant": self.variant,
            "dag_hash": self.dag_hash, "optimum": self.optimum, "upper": self.upper, "lower": self.lower,
            "exact": {k: cell(v) for k, v in self.exact.items()},
            "bounds": {k: cell(v) for k, v in self.bounds.items()},
            "algorithms": {k: cell(v) for k, v in self.algorithms.items()},
            "formulas": [f.to_dict() for f in self.formulas],
            "verdicts": [v.to_dict() for v in self.verdicts], "ratios": dict(self.ratios),
            "missing": list(self.missing),
        }


def format_exact(r: StoredResult) -> str:
    """An exact cell with its status, e.g. ``"31 (FEASIBLE, bound 27, time limit 10 s)"``.

    Examples
    --------
    >>> from spartition.study.store import ResultKey
    >>> k = ResultKey("h", 3, "oneshot", "exact:cpsat")
    >>> format_exact(StoredResult(k, "FEASIBLE", 31.0, 27.0, False, 10.0, 10.1, {}))
    '31 (FEASIBLE, bound 27, time limit 10 s)'
    >>> format_exact(StoredResult(k, "OPTIMAL", 24.0, 24.0, True, 10.0, 1.2, {}))
    '24 (OPTIMAL)'
    """
    if r.status == Status.OPTIMAL:
        return f"{format_number(r.value)} (OPTIMAL)"
    if r.status == Status.INFEASIBLE:
        return "infeasible M (INFEASIBLE)"
    if r.status == SKIPPED:
        return "skipped (model too large; see the notes)"
    parts = [r.status]
    if r.bound is not None:
        parts.append(f"bound {format_number(r.bound)}")
    if r.time_limit is not None:
        parts.append(f"time limit {format_number(r.time_limit)} s")
    if r.record.get("error") and r.status not in (Status.FEASIBLE,):
        parts.append(str(r.record["error"])[:60])
    return f"{format_number(r.value)} ({', '.join(parts)})"


def verdicts(row: StudyRow) -> tuple[tuple, dict]:
    """The verdicts and ratios of ``row`` (see the module docstring).

    Returns
    -------
    (tuple of Verdict, dict)
        Verdicts, and ratios ``"<what>/opt"`` of every algorithm and
        applicable formula to the proven optimum, and ``"opt/lower"``.
    """
    out = []
    opt = row.optimum
    ub = row.upper
    # the schedule named for the upper side: an algorithm's before an exact solver's
    by_method = {f.method: f for f in [*(r.finding() for r in row.algorithms.values()),
                                       *(r.finding() for r in row.exact.values())]}
    ub_who = next((m.partition(":")[2] for m, f in by_method.items() if ub is not None and f.upper == ub), None)
    # exact methods agree
    proven = {m: r.value for m, r in row.exact.items() if r.status == Status.OPTIMAL}
    if len(set(proven.values())) > 1:
        out.append(Verdict("violated", "exact methods prove different optima: "
                           + ", ".join(f"{m} = {format_number(v)}" for m, v in proven.items()) + " (a bug)"))
    for m, r in row.exact.items():
        if r.status == Status.INVALID:
            out.append(Verdict("invalid", f"exact:{m} certificate rejected: {r.record.get('check')}"))
    # every proven lower bound (a bound method's, an exact solver's) against certified upper bounds
    for f in row.findings():
        if ub is not None and f.lower is not None and f.lower > ub:
            what = (f"lower bound {f.method.partition(':')[2]} =" if f.kind == LOWER
                    else f"{f.method} proven bound")
            out.append(Verdict("violated", f"{what} {format_number(f.lower)} > {format_number(ub)} = I/O of {ub_who} "
                               "(a bug)"))
    # algorithms
    for name, r in row.algorithms.items():
        if r.status == Status.INVALID:
            out.append(Verdict("invalid", f"{name}: schedule rejected by replay: {r.record.get('error')}"))
            continue
        if r.status != Status.VALID:
            continue
        if opt is not None and r.value < opt:
            out.append(Verdict("violated", f"{name} I/O {format_number(r.value)} < proven optimum {format_number(opt)} (a bug)"))
        f = r.record.get("io_formula")
        if f is not None and f != r.value:
            out.append(Verdict("mismatch", f"{name}: replayed I/O {format_number(r.value)} != its closed form {f}"))
    # explicit-constant formulas in their regime
    lb = row.lower
    for fv in row.formulas:
        if not fv.applies or fv.constants != "explicit" or not math.isfinite(fv.value):
            continue
        if not _claimed_in(fv.name, row.variant):  # e.g. a standard-game bound says nothing of the partial game
            continue
        if fv.kind == "lower" and ub is not None and fv.value > ub:
            out.append(Verdict("violated", f"formula {fv.name} ({fv.source}, {fv.where}) = {format_number(fv.value)} "
                               f"> {format_number(ub)} = I/O of {ub_who}: the published lower bound fails here"))
        if fv.kind == "upper" and lb is not None and fv.value < lb:
            out.append(Verdict("violated", f"formula {fv.name} ({fv.source}, {fv.where}) = {format_number(fv.value)} "
                               f"< {format_number(lb)} = proven lower bound: the published upper bound fails here"))
    # tight
    if opt is not None:
        lbs = [m for m, r in row.bounds.items() if r.value == opt and r.proven]
        algs = [name for name, r in row.algorithms.items() if r.status == Status.VALID and r.value == opt]
        if lbs and algs:
            out.append(Verdict("tight", f"{' = '.join(lbs)} = optimum = {' = '.join(algs)} = {format_number(opt)}"))
    ratios = {}
    if opt:
        for name, r in row.algorithms.items():
            if r.status == Status.VALID:
                ratios[f"{name}/opt"] = round(r.value / opt, 4)
        for fv in row.formulas:
            if fv.applies and math.isfinite(fv.value):
                ratios[f"{fv.name}/opt"] = round(fv.value / opt, 4)
        best_lb = max((r.value for r in row.bounds.values() if r.value is not None), default=None)
        if best_lb:
            ratios["opt/lower"] = round(opt / best_lb, 4)
    return tuple(out), ratios


def _claimed_in(name: str, variant: str) -> bool:
    """Whether the formula ``name`` is stated for the game ``variant`` (:attr:`Formula.variants`)."""
    from spartition.study.formulas import formula_named

    try:
        return variant in formula_named(name).variants
    except UnknownFamily:  # a formula value of a stored row whose plug-in is gone: checked as before
        return True


def _formula_values(family: str, params: dict, M: int) -> tuple:
    from spartition.study.formulas import evaluate_formulas

    try:
        return tuple(evaluate_formulas(family, params, M))
    except (UnknownFamily, KeyError, ValueError):
        return ()


def assemble_row(family: str, params: dict, M: int, variant: str, results, dag_hash: str = "",
                 missing=()) -> StudyRow:
    """A :class:`StudyRow` from stored results (any order) at one M, with formulas and verdicts."""
    exact, bounds, algs = {}, {}, {}
    for r in results:
        kind, _, name = r.key.method.partition(":")
        {"exact": exact, "bound": bounds, "algorithm": algs}.get(kind, {})[name] = r
    from spartition.partition.lower_bounds import METHODS as order

    bounds = {m: bounds[m] for m in order if m in bounds} | {m: r for m, r in bounds.items() if m not in order}
    rank = {m: k for k, m in enumerate(EXACT_METHODS)}
    exact = dict(sorted(exact.items(), key=lambda kv: (rank.get(kv[0], len(rank)), kv[0])))
    row = StudyRow(family, dict(params), M, variant, dag_hash, exact, bounds, dict(sorted(algs.items())),
                   _formula_values(family, params, M), missing=tuple(missing))
    v, ratios = verdicts(row)
    return replace(row, verdicts=v, ratios=ratios)
