"""Rendering of study rows: a terminal table, Markdown, CSV (JSON is ``Study.to_dict``).

A small local renderer (no dependency): columns are padded to their widest
cell, numbers right-aligned. A study renders as a main table (optimum,
computed lower bounds, algorithms, ratios, verdict), a formula table (the
registered formulas, ``~`` marking an asymptotic expression whose constant
is unknown, ``.`` a formula outside its regime at that M), a legend with the
provenance of each column, and the verdict messages.
"""

from __future__ import annotations

import csv
import io
import json
import math

from spartition.study.numbers import format_number
from spartition.study.tasks import SKIPPED
from spartition.study.verdicts import StudyRow, format_exact
from spartition.status import Status

__all__ = ["FORMATS", "formula_cells", "legend", "main_cells", "render_rows", "render_table", "rows_to_csv",
           "sandwich_cells"]

FORMATS = ("text", "markdown", "csv", "json")


def render_table(headers, rows, markdown: bool = False) -> str:
    """A padded text table (or a Markdown pipe table) of string cells.

    Examples
    --------
    >>> print(render_table(["M", "io"], [["3", "24"], ["10", "8"]]))
    M   io
    --  --
     3  24
    10   8
    """
    cells = [[str(c) for c in r] for r in rows]
    if markdown:
        esc = [[c.replace("|", "\\|") for c in r] for r in [list(headers), *cells]]
        lines = ["| " + " | ".join(esc[0]) + " |", "|" + "|".join("---" for _ in headers) + "|"]
        lines += ["| " + " | ".join(r) + " |" for r in esc[1:]]
        return "\n".join(lines)
    widths = [max(len(str(h)), *(len(r[k]) for r in cells)) if cells else len(str(h)) for k, h in enumerate(headers)]

    def numeric(s):
        return s[:1].isdigit() or s[:1] in "-~" and s[1:2].isdigit()

    out = ["  ".join(str(h).ljust(w) for h, w in zip(headers, widths)).rstrip(),
           "  ".join("-" * w for w in widths)]
    for r in cells:
        out.append("  ".join(c.rjust(w) if numeric(c) and " " not in c else c.ljust(w)
                             for c, w in zip(r, widths)).rstrip())
    return "\n".join(out)


def _columns(rows):
    exact, bounds, algs, forms = [], [], [], []
    for r in rows:
        exact += [m for m in r.exact if m not in exact]
        bounds += [m for m in r.bounds if m not in bounds]
        algs += [a for a in r.algorithms if a not in algs]
        forms += [f.name for f in r.formulas if f.applies and f.name not in forms]
    from spartition.partition.lower_bounds import METHODS

    bounds = [m for m in METHODS if m in bounds] + [m for m in bounds if m not in METHODS]
    return exact, bounds, algs, forms


def _bound_cell(r) -> str:
    if r is None:
        return "?"
    if r.status == SKIPPED:
        return "skipped"
    s = format_number(r.value)
    X = r.record.get("parameters", {}).get("X")
    if X is not None and r.value:  # the methods that search over X say which X gave the bound
        s += f" (X={X})"
    return s if r.proven else s + "*"


def _alg_cell(r) -> str:
    if r is None:
        return "?"
    if r.status == Status.VALID:
        return format_number(r.value)
    if r.status == Status.NOT_APPLICABLE:
        return "n/a"
    if r.status == SKIPPED:
        return "skipped"
    return r.status


def _verdict_cell(row: StudyRow) -> str:
    kinds = [v.kind for v in row.verdicts]
    if not kinds:
        if row.exact and all(r.status == Status.INFEASIBLE for r in row.exact.values()):
            return "(M infeasible)"
        return "-" if row.optimum is not None else "(no proven optimum)"
    parts = []
    for k in ("violated", "invalid", "mismatch", "tight"):
        c = kinds.count(k)
        if c:
            parts.append(k if c == 1 else f"{k} x{c}")
    return ", ".join(parts)


def _ratio(row: StudyRow):
    vals = [v for k, v in row.ratios.items() if k.endswith("/opt") and k[:-4] in row.algorithms]
    return (format_number(min(vals)) if vals else "-"), format_number(row.ratios.get("opt/lower"))


def main_cells(rows) -> tuple[list, list]:
    """(headers, rows of string cells) of the main table: optimum, lower bounds, algorithms, ratios, verdict."""
    exact, bounds, algs, _ = _columns(rows)
    headers = ["M"] + [f"optimum [{m}]" for m in exact] + [f"LB {b}" for b in bounds] + algs + [
        "best alg/opt", "opt/LB", "verdict"]
    body = []
    for row in rows:
        cells = [str(row.M)]
        cells += [format_exact(row.exact[m]) if m in row.exact else "?" for m in exact]
        cells += [_bound_cell(row.bounds.get(b)) for b in bounds]
        cells += [_alg_cell(row.algorithms.get(a)) for a in algs]
        cells += [*_ratio(row), _verdict_cell(row)]
        body.append(cells)
    return headers, body


def formula_cells(rows) -> tuple[list, list]:
    """(headers, rows of string cells) of the formula table; empty headers when no formula applies."""
    _, _, _, forms = _columns(rows)
    if not forms:
        return [], []
    body = []
    for row in rows:
        by = {f.name: f for f in row.formulas}
        cells = [str(row.M)]
        for name in forms:
            f = by.get(name)
            if f is None or not f.applies:
                cells.append(".")
            else:
                cells.append(("~" if f.constants == "asymptotic" else "") + format_number(f.value))
        body.append(cells)
    return ["M"] + forms, body


def sandwich_cells(sandwich_rows) -> tuple[list, list]:
    """(headers, rows of string cells) of a sandwich table: each side's value and method, and upper / lower.

    Examples
    --------
    >>> from spartition.study.sandwich import SandwichRow, Side
    >>> row = SandwichRow(4, "oneshot", Side(value=10, method="trivial"), Side(kind="upper", value=25, method="algorithm:greedy"),
    ...                   time_limited=True)
    >>> print(render_table(*sandwich_cells([row])))
    M  lower  lower method  upper  upper method      upper / lower  time-limited
    -  -----  ------------  -----  ----------------  -------------  ------------
    4     10  trivial          25  algorithm:greedy           2.50  yes
    """
    body = [[str(r.M), str(r.lower.value), r.lower.method, str(r.upper.value) if r.upper else "-",
             r.upper.method if r.upper else "-", f"{r.ratio:.2f}" if r.ratio else "-",
             "yes" if r.time_limited else ""] for r in sandwich_rows]
    return ["M", "lower", "lower method", "upper", "upper method", "upper / lower", "time-limited"], body


def _sandwich_table(rows, markdown):
    from spartition.study.sandwich import row_sandwich

    return render_table(*sandwich_cells([row_sandwich(r) for r in rows]), markdown)


def _main_table(rows, markdown):
    return render_table(*main_cells(rows), markdown)


def _formula_table(rows, markdown):
    headers, body = formula_cells(rows)
    return render_table(headers, body, markdown) if headers else ""


def legend(rows) -> list[str]:
    """One line per column and formula: where its values come from."""
    exact, bounds, algs, forms = _columns(rows)
    lines = []
    for m in exact:
        lines.append(f"optimum [{m}]: " + {"cpsat": "CP-SAT (spartition.exact.solve.solve_io), certificate schedule replayed",
                                           "brute": "A* state search (spartition.exact.brute), certificate schedule replayed"}.get(m, m))
    from spartition.partition.lower_bounds import BOUND_METHODS

    for b in bounds:
        lines.append(f"LB {b}: {BOUND_METHODS[b].description if b in BOUND_METHODS else b}")
    if any(not r.proven for row in rows for r in row.bounds.values()):
        lines.append("*: a search stopped early; the value is the solver's proven bound (valid, maybe not the method's best)")
    for a in algs:
        src = next((r.record.get("source") for row in rows if (r := row.algorithms.get(a)) is not None), "")
        lines.append(f"{a}: replayed schedule I/O; {src}")
    if any(r.status == Status.NOT_APPLICABLE for row in rows for r in row.algorithms.values()):
        lines.append("n/a: the algorithm does not run there (M below its smallest, or a DAG it cannot follow; "
                     "the reason is in --json)")
    seen = set()
    for row in rows:
        for f in row.formulas:
            if f.name in forms and f.name not in seen:
                seen.add(f.name)
                const = "constant unknown (~)" if f.constants == "asymptotic" else "explicit constants"
                lines.append(f"{f.name}: {f.kind} bound {f.expression}; {const}; {f.source}, {f.where}; regime: {f.regime}")
    return lines


def render_rows(rows, fmt: str = "text", title: str = "", notes=()) -> str:
    """Render study rows as ``text``, ``markdown``, ``csv`` or ``json``."""
    rows = list(rows)
    if fmt == "json":
        return json.dumps([r.to_dict() for r in rows], indent=2, default=str)
    if fmt == "csv":
        return rows_to_csv(rows)
    md = fmt == "markdown"
    parts = []
    if title:
        parts.append(f"## {title}" if md else title)
    parts.append(_main_table(rows, md))
    ft = _formula_table(rows, md)
    if ft:
        head = ("### Published formulas\n\n(~ constant unknown, . outside regime)\n" if md
                else "Published formulas (~ constant unknown, . outside regime):")
        parts.append(head + "\n" + ft)
    head = ("### Sandwich\n\n(the best proven lower bound and the cheapest replayed schedule of the rows above)\n" if md
            else "Sandwich (the best proven lower bound and the cheapest replayed schedule of the rows above):")
    parts.append(head + "\n" + _sandwich_table(rows, md))
    lines = legend(rows)
    if lines:
        parts.append(("### Columns\n\n" if md else "Columns:\n") + "\n".join(("- " if md else "  ") + line for line in lines))
    messages = [(row.M, v) for row in rows for v in row.verdicts]
    if messages:
        parts.append(("### Verdicts\n\n" if md else "Verdicts:\n")
                     + "\n".join(("- " if md else "  ") + f"M = {M}: {v.kind}: {v.message}" for M, v in messages))
    tail = []
    missing = [(row.M, m) for row in rows for m in row.missing]
    if missing:
        tail.append("not computed: " + ", ".join(f"M = {M} {m}" for M, m in missing))
    tail += [f"note: {n}" for n in notes]
    if tail:
        parts.append("\n".join(("- " if md else "  ") + t for t in tail))
    return "\n\n".join(parts)


def rows_to_csv(rows) -> str:
    """One CSV line per row, every value in its own column (statuses beside values)."""
    rows = list(rows)
    exact, bounds, algs, _ = _columns(rows)
    forms = []
    for r in rows:
        forms += [f.name for f in r.formulas if f.name not in forms]
    headers = ["family", "params", "variant", "M", "dag_hash"]
    for m in exact:
        headers += [f"exact:{m}", f"exact:{m}:status", f"exact:{m}:bound", f"exact:{m}:time_limit"]
    for b in bounds:
        headers += [f"bound:{b}", f"bound:{b}:proven"]
    for a in algs:
        headers += [f"algorithm:{a}", f"algorithm:{a}:status"]
    for f in forms:
        headers += [f"formula:{f}", f"formula:{f}:applies"]
    headers += ["verdicts", "ratios"]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(headers)
    for row in rows:
        line = [row.family, json.dumps(row.params, sort_keys=True), row.variant, row.M, row.dag_hash]
        for m in exact:
            r = row.exact.get(m)
            line += [None, None, None, None] if r is None else [r.value, r.status, r.bound, r.time_limit]
        for b in bounds:
            r = row.bounds.get(b)
            line += [None, None] if r is None else [r.value, r.proven]
        for a in algs:
            r = row.algorithms.get(a)
            line += [None, None] if r is None else [r.value, r.status]
        by = {f.name: f for f in row.formulas}
        for f in forms:
            fv = by.get(f)
            line += [None, None] if fv is None else [fv.value if math.isfinite(fv.value) else None, fv.applies]
        line += ["; ".join(f"{v.kind}: {v.message}" for v in row.verdicts), json.dumps(row.ratios, sort_keys=True)]
        w.writerow(["" if x is None else x for x in line])
    return buf.getvalue()
