"""A paper's claim set: its checkable statements, the constants its asymptotic formulas allow, one report.

A :class:`ClaimSet` bundles the claims of one paper (each with its source,
the regime its proof needs, and a grid chosen so that most instances are
informative), the slower claims of bigger grids (``big``), and the
:class:`ConstantStudy` rows that bound the hidden constant of each
asymptotic formula from data. Claim sets are found through the entry-point
group ``spartition.claims`` (:data:`CLAIMS_GROUP`): the three papers' sets
ship with the package, and a user's package registers its own beside them
(or a Python file defining ``CLAIMS`` is loaded directly).

:func:`run_claimset` checks everything, reusing the results store, and
returns a :class:`ClaimSetReport` whose rows :func:`render_text` and
:func:`render_markdown` print.

How to read a row (docs/definitions.md section 3 for the bounds):

* *informative / vacuous*: an instance is informative when the statement
  could have failed there given only what is known without it
  (:func:`spartition.study.claims.informative`);
* *verdict*: ``fails`` (some instance inside the regime fails; the witness is
  the schedule or class that refutes it), ``checks nothing`` (no informative
  instance), ``undecided`` (informative instances exist but none is decided
  inside the regime), ``holds``; failures outside the regime are *findings*,
  listed with their witness;
* *constant interval* (constant studies): for a lower bound ``f``, the claim
  ``optimum >= c f`` holds on the grid for ``c <= c_confirmed`` (proven
  bounds) and is false for ``c > c_refuted`` (replayed schedules); for an
  upper bound, the range of ``I/O / f`` of each algorithm. Each interval
  names its game (:attr:`ConstantStudy.variant`): its proven bounds are
  proven for that game and its schedules replayed in it.
"""

from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from typing import Callable

from spartition.errors import UsageError
from spartition.settings import DEFAULT_VARIANT
from spartition.study.claims import ClaimContext, ClaimReport, check_claim, show_number
from spartition.study.tasks import expand_grid

__all__ = [
    "CLAIMS_GROUP",
    "ClaimSet",
    "ClaimSetReport",
    "ConstantStudy",
    "claimset_names",
    "load_claimset",
    "render_markdown",
    "render_text",
    "report_json",
    "run_claimset",
    "run_constants",
    "set_problems",
]

#: Entry-point group of claim sets: name -> a :class:`ClaimSet` (or a callable returning one).
CLAIMS_GROUP = "spartition.claims"


@dataclass(frozen=True)
class ConstantStudy:
    """The constants an asymptotic formula allows on a grid.

    Attributes
    ----------
    formula : str
        A registered formula (:func:`spartition.study.formulas.formula_named`).
    family : str
    grid : dict or list of dict
        Builder parameters (as in :class:`~spartition.study.claims.Claim`).
    Ms : callable
        ``Ms(params) -> list of M``.
    algorithms : tuple of str
        Replayed algorithms (the upper side, and the refuting side of a lower bound).
    lower : tuple of Quantity
        Proven lower bounds beside the trivial one.
    params_for : callable or None
        The DAG each algorithm runs on (:func:`spartition.study.claim_quantities.schedule_io`).
    variant : str
    search : bool
        Each algorithm's tile options searched, its cheapest replayed schedule
        used (the sandwich's search), not its defaults: for a lower formula,
        whose constant any schedule refutes; an upper formula's constant is
        the published algorithm's, at its own tiles.
    """

    formula: str
    family: str
    grid: object
    Ms: Callable
    algorithms: tuple
    lower: tuple = ()
    params_for: Callable | None = None
    variant: str = DEFAULT_VARIANT
    search: bool = False


@dataclass(frozen=True)
class ClaimSet:
    """One paper's checkable statements (``claims``), bigger grids (``big``) and constant studies."""

    name: str
    paper: str
    claims: tuple
    big: tuple = ()
    constants: tuple = ()
    big_constants: tuple = ()
    notes: str = ""


@dataclass
class ClaimSetReport:
    """Reports of every claim and the constant rows of one run."""

    claimset: ClaimSet
    reports: list
    constants: list = field(default_factory=list)

    def rows(self) -> list:
        """One dict per claim: statement, source, regime, grid, counts, verdict, witness."""
        out = []
        for rep in self.reports:
            d = rep.to_dict()
            d["witness"] = _witness_text(rep)
            d.pop("checks")
            out.append(d)
        return out

    def to_dict(self) -> dict:
        return {"claimset": self.claimset.name, "paper": self.claimset.paper, "claims": self.rows(),
                "constants": self.constants,
                "informative": sum(len(r.informative) for r in self.reports)}


def set_problems(report: ClaimSetReport, strict: bool = False) -> list:
    """Why a claim-set run should not pass: one message per claim or constant study, empty when it passes.

    Always: a claim that ``fails`` inside its regime or ``checks nothing``, and a
    constant study whose interval contradicts itself (a lower-bound constant
    confirmed above the one a replayed schedule refutes, which only a wrong
    bound or schedule can produce). With ``strict`` (for CI) also a claim no
    instance of which is decided (every one undecided or skipped) and a
    constant study with no instance.

    Examples
    --------
    >>> from spartition.study.claims import Claim, check_claim, expr
    >>> c = Claim("c", "1 <= 2", "here", "chain", {"n": [3]}, expr(lambda p, M: 1, "1"), "<=",
    ...           expr(lambda p, M: None, "undefined"), Ms=(2,), sanity=True)
    >>> rep = ClaimSetReport(ClaimSet("s", "paper", (c,)), [check_claim(c)])
    >>> set_problems(rep), set_problems(rep, strict=True)
    ([], ["claim 'c': no instance decided (1 undecided or skipped)"])
    """
    out = []
    for rep in report.reports:
        v = rep.verdict
        if v in ("fails", "checks nothing"):
            why = "fails inside its regime" if v == "fails" else "checks nothing (no informative instance)"
            out.append(f"claim {rep.claim.name!r}: {why}")
        elif strict and not rep.by("holds") and not rep.by("fails"):
            out.append(f"claim {rep.claim.name!r}: no instance decided ({len(rep.checks)} undecided or skipped)")
    for c in report.constants:
        lo, hi = c.get("c_confirmed"), c.get("c_refuted")
        if lo is not None and hi is not None and lo > hi * (1 + 1e-9):
            out.append(f"constant of {c['formula']}: confirmed {show_number(lo)} (at {c['c_confirmed_at']}) above "
                       f"the {show_number(hi)} a schedule refutes (at {c['c_refuted_at']})")
        if strict and not c["instances"]:
            out.append(f"constant of {c['formula']}: no instance of its grid lies in its regime")
    return out


def claimset_names() -> list:
    """The names registered under :data:`CLAIMS_GROUP` (:data:`spartition.core.registry.CLAIM_SETS`)."""
    from spartition.core.registry import CLAIM_SETS

    return CLAIM_SETS.names()


def load_claimset(name_or_file: str) -> ClaimSet:
    """The claim set registered as ``name_or_file``, or the ``CLAIMS`` of a Python file of that path.

    Raises
    ------
    KeyError
        Naming the registered sets when neither exists.
    """
    from pathlib import Path

    from spartition.core.registry import CLAIM_SETS

    if name_or_file in CLAIM_SETS:
        obj = CLAIM_SETS[name_or_file]
        return obj() if callable(obj) else obj
    path = Path(name_or_file)
    if path.suffix == ".py" and path.is_file():
        import importlib.util

        spec = importlib.util.spec_from_file_location(f"_claims_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(mod)
        except SyntaxError as exc:
            raise UsageError(f"{path}, line {exc.lineno}: syntax error: {exc.msg}") from None
        except SystemExit as exc:  # sys.exit(3) in the file passed for this tool's internal-error status
            raise UsageError(f"importing {path} called sys.exit({exc.code!r})") from None
        except Exception as exc:  # noqa: BLE001 - the user's file: its error is the message
            raise UsageError(f"importing {path} raised {type(exc).__name__}: {exc}") from None
        obj = getattr(mod, "CLAIMS", None)
        if obj is None:
            raise KeyError(f"{path} defines no CLAIMS")
        if callable(obj) and not isinstance(obj, ClaimSet):
            try:
                obj = obj()
            except SystemExit as exc:
                raise UsageError(f"CLAIMS() of {path} called sys.exit({exc.code!r})") from None
            except Exception as exc:  # noqa: BLE001
                raise UsageError(f"CLAIMS() of {path} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(obj, ClaimSet):
            raise UsageError(f"CLAIMS of {path} must be a ClaimSet (or a function returning one), "
                             f"got {type(obj).__name__}")
        return obj
    if path.suffix == ".py":  # a file was meant: say what is wrong with it, not that no set has that name
        raise KeyError(f"claims file {path} does not exist" if not path.exists() else f"claims file {path} is not a file")
    raise KeyError(f"no claim set {name_or_file!r}; registered: {', '.join(claimset_names())} (or a .py file)")


def _progress(total: int, label: str):
    """A tqdm bar on a terminal, nothing otherwise; returns (tick, close)."""
    if not sys.stderr.isatty():
        return (lambda: None), (lambda: None)
    from tqdm import tqdm

    bar = tqdm(total=total, desc=label, leave=False, file=sys.stderr)
    return (lambda: bar.update(1)), bar.close


def run_claimset(cs: ClaimSet, store=None, big: bool = False, progress: bool = True, fail_fast: bool = False,
                 **settings) -> ClaimSetReport:
    """Check every claim of ``cs`` (and its ``big`` ones when asked) and run its constant studies.

    With ``fail_fast`` the run stops after the first claim that fails or
    checks nothing (the report then holds the claims checked so far and no
    constants): the exit status of ``spartition claims -x`` is known there.
    """
    claims = list(cs.claims) + (list(cs.big) if big else [])
    total = sum(sum(1 for _ in c.instances()) for c in claims)
    tick, close = _progress(total, f"claims {cs.name}") if progress else ((lambda: None), (lambda: None))
    reports = []
    try:
        for c in claims:
            reports.append(check_claim(c, store, progress=tick, **settings))
            if fail_fast and reports[-1].verdict in ("fails", "checks nothing"):
                return ClaimSetReport(cs, reports, [])
    finally:
        close()
    studies = list(cs.constants) + (list(cs.big_constants) if big else [])
    return ClaimSetReport(cs, reports, [run_constants(s, store, **settings) for s in studies])


def run_constants(study: ConstantStudy, store=None, **settings) -> dict:
    """The constant interval of ``study`` (see the module docstring), with the instances that set it."""
    from spartition.study.claim_quantities import schedule_io
    from spartition.study.claims import io_known
    from spartition.study.formulas import evaluate_formula, formula_named, paper_params_for

    f = formula_named(study.formula)
    lows, highs, ratios, beyond, n = [], [], {a: [] for a in study.algorithms}, 0, 0
    for params in expand_grid(study.grid):
        for M in study.Ms(params):
            v = evaluate_formula(f, paper_params_for(study.family, params), M, study.family)
            if not v.applies or not math.isfinite(v.value) or v.value <= 0:
                continue
            ctx = ClaimContext(study.family, params, M, study.variant, store, settings)
            n += 1
            known = io_known(ctx)
            beyond += v.value > known.lo
            inst = " ".join(f"{k}={x}" for k, x in params.items()) + f" M={M}"
            lo = known.lo
            for q in study.lower:
                iv = q.evaluate(ctx)
                if iv is not None:
                    lo = max(lo, iv.lo)
            best, by = math.inf, None
            for a in study.algorithms:
                io, _ = schedule_io(ctx, a, study.params_for, study.search)
                if io is not None:
                    ratios[a].append((io / v.value, inst))
                    best, by = min((best, by), (io, a))
            lows.append((lo / v.value, inst))
            if math.isfinite(best):
                highs.append((best / v.value, inst + f" by {by}" + (" (tiles searched)" if study.search else "")))
    out = {"formula": f.name, "kind": f.kind, "expression": f.expression, "where": f.where, "regime": f.regime,
           "instances": n, "beyond_trivial": beyond, "variant": study.variant}
    if f.kind == "lower":
        out["c_confirmed"] = min(lows)[0] if lows else None
        out["c_confirmed_at"] = min(lows)[1] if lows else None
        out["c_refuted"] = min(highs)[0] if highs else None
        out["c_refuted_at"] = min(highs)[1] if highs else None
    else:
        out["ratios"] = {a: (min(r)[0], max(r)[0], len(r)) for a, r in ratios.items() if r}
    return out


def _grid_text(grid) -> str:
    grids = grid if isinstance(grid, (list, tuple)) else [grid]
    return " | ".join(",".join(f"{k}={'/'.join(map(str, v))}" for k, v in sorted(g.items())) for g in grids)


#: How a report names the game a constant interval is stated for.
GAME_NAMES = {"recompute": "standard game, with recomputation", "oneshot": "oneshot game"}


def _constant_text(c: dict) -> str:
    game = GAME_NAMES.get(c.get("variant"), c.get("variant"))
    return _interval_text(c) + (f" [{game}]" if game else "")


def _interval_text(c: dict) -> str:
    if c["kind"] == "lower":
        lo = "-" if c["c_confirmed"] is None else show_number(round(c["c_confirmed"], 4))
        hi = "-" if c["c_refuted"] is None else show_number(round(c["c_refuted"], 4))
        return f"c in [{lo}, {hi}] (confirmed at {c['c_confirmed_at']}; refuted above at {c['c_refuted_at']})"
    return "; ".join(f"{a}: {show_number(round(lo, 3))}..{show_number(round(hi, 3))} ({k})"
                     for a, (lo, hi, k) in c["ratios"].items()) or "no algorithm in its regime"


def _witness_text(rep: ClaimReport) -> str:
    """The first failure of ``rep`` (inside the regime first): where, the two numbers compared, and the witness.

    Without the numbers a reader of the text or Markdown report could not
    tell by how much a claim fails (the JSON checks hold them too).
    """
    first = next(iter(rep.by("fails", in_regime=True) or rep.by("fails")), None)
    if first is None:
        return ""
    numbers = f"{rep.claim.lhs.text} = {first.lhs.show()} {rep.claim.relation} {rep.claim.rhs.text} = {first.rhs.show()}"
    extra = first.witness and first.witness != first.lhs.text  # the schedule or class, when there is one
    return f"{first.instance()}: {numbers}" + (f"; witness {first.witness}" if extra else "")


def _claim_row(rep: ClaimReport) -> list:
    c, k = rep.claim, rep.counts()
    witness = _witness_text(rep)
    findings = f"{k['fails_outside_regime']} outside regime" if k["fails_outside_regime"] else ""
    return [c.name, c.statement, c.source, c.regime or "every instance", _grid_text(c.grid),
            f"{k['informative']}/{k['vacuous']}", f"{k['holds']}/{k['fails']}/{k['undecided']}",
            rep.verdict + ("; findings: " + findings if findings else ""), witness]


_HEADER = ["claim", "statement", "source", "regime", "grid", "informative/vacuous", "holds/fails/undecided",
           "verdict", "witness of a failure"]


def render_text(report: ClaimSetReport) -> str:
    """The report as plain text: one block per claim, then the constant rows."""
    lines = [f"claim set {report.claimset.name}: {report.claimset.paper}"]
    for rep in report.reports:
        row = _claim_row(rep)
        lines.append(f"- {row[0]} [{row[7]}] {row[1]}")
        lines.append(f"    source: {row[2]}; regime: {row[3]}")
        lines.append(f"    grid: {row[4]}; informative/vacuous {row[5]}; holds/fails/undecided {row[6]}")
        if row[8]:
            lines.append(f"    witness: {row[8]}")
    for c in report.constants:
        lines.append(f"- constant of {c['formula']} ({c['kind']}, {c['expression']}; {c['where']}): "
                     f"{_constant_text(c)}; {c['instances']} instances, {c['beyond_trivial']} beyond the trivial bound")
    lines.append(f"informative instances in all: {sum(len(r.informative) for r in report.reports)}")
    return "\n".join(lines)


def render_markdown(report: ClaimSetReport) -> str:
    """The report as Markdown tables (claims, then constants), fit for a paper's appendix."""

    def cell(x):
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = [f"### {report.claimset.paper}", "", "| " + " | ".join(_HEADER) + " |",
           "|" + "---|" * len(_HEADER)]
    out += ["| " + " | ".join(cell(x) for x in _claim_row(rep)) + " |" for rep in report.reports]
    if report.constants:
        out += ["", "| formula | kind | expression | source | constant interval / algorithm ratios | instances (beyond trivial) |",
                "|---|---|---|---|---|---|"]
        out += [f"| {cell(c['formula'])} | {c['kind']} | {cell(c['expression'])} | {cell(c['where'])} | "
                f"{cell(_constant_text(c))} | {c['instances']} ({c['beyond_trivial']}) |" for c in report.constants]
    out.append("")
    out.append(f"Informative instances in all: {sum(len(r.informative) for r in report.reports)}.")
    return "\n".join(out)


def report_json(report: ClaimSetReport) -> str:
    """The report as one JSON object."""
    return json.dumps(report.to_dict(), default=str)
