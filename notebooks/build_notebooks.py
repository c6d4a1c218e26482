"""Write the research notebooks of ``notebooks/`` (without outputs) from the cell sources below.

Run ``python notebooks/build_notebooks.py`` after editing a notebook here; the
``.ipynb`` files are generated, never edited by hand. Every notebook starts
with the same parameter cell (``FAST``, ``FIGURES``, ``STORE``, overridable
through the environment variables ``SPARTITION_NB_FAST``,
``SPARTITION_NB_FIGURES`` and ``SPARTITION_STORE``) and the same setup cell
(plot and findings helpers, the results store, study helpers); the findings
are Markdown generated from computed values.
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent

PARAMETERS = '''\
# Parameters (the test harness overrides them through the environment)
FAST = False     # True: tiny grids and short solver time limits (CI)
FIGURES = None   # a folder where every figure is also saved as PNG, or None
STORE = None     # the results store (SQLite file); None: spartition's default store

import os

FAST = os.environ.get("SPARTITION_NB_FAST", str(FAST)).strip().lower() in ("1", "true", "yes")
FIGURES = os.environ.get("SPARTITION_NB_FIGURES") or FIGURES
STORE = os.environ.get("SPARTITION_STORE") or STORE'''

SETUP = '''\
import math
import time

import matplotlib

if FAST or FIGURES:
    matplotlib.use("Agg")  # headless: figures are saved, not shown
import matplotlib.pyplot as plt
from IPython.display import Markdown, display

from spartition.study.store import open_store
from spartition.study.studies import StudySpec, compare
from spartition.study.tables import render_rows

store = open_store(STORE)
T0 = time.perf_counter()
print(f"results store: {store.path} ({store.count()} rows before this run); FAST = {FAST}")


def show(fig, name):
    """Display ``fig``; also save it as ``FIGURES/name.png`` when FIGURES is set."""
    fig.tight_layout()
    if FIGURES:
        os.makedirs(FIGURES, exist_ok=True)
        fig.savefig(os.path.join(FIGURES, f"{name}.png"), dpi=90)
    if matplotlib.get_backend().lower() == "agg":
        plt.close(fig)
    else:
        plt.show()


def say(*lines):
    """Display findings: Markdown built from computed values."""
    display(Markdown("\\n".join(lines)))


def fmt(x, digits=3):
    """A number for the text: integers as such, else ``digits`` significant digits."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.{digits}g}"


def span(values, digits=3):
    """``"a to b"`` (or just ``"a"`` when every value is the same)."""
    lo, hi = min(values), max(values)
    return fmt(lo, digits) if fmt(lo, digits) == fmt(hi, digits) else f"{fmt(lo, digits)} to {fmt(hi, digits)}"


def study(family, params, Ms, time_limit, bound_time_limit, variant="oneshot", exact=("cpsat",), bounds=True,
          algorithms=None):
    """Run (or read from the store) one study: exact optimum, lower bounds, algorithms at every M."""
    spec = StudySpec(family, dict(params), Ms=tuple(Ms) if Ms is not None else None, variant=variant,
                     exact=tuple(exact), bounds=bounds, algorithms=algorithms, time_limit=time_limit,
                     bound_time_limit=bound_time_limit, workers=1)
    s = compare(spec, store=store)
    for line in s.failed:
        print("FAILED:", line)
    print(f"{family} {params}: {s.computed} tasks computed, {s.cached} read from the store, {s.wall_s:.1f} s")
    return s


def value(row, kind, name):
    """The value of a stored result in ``row`` (kind: exact / bounds / algorithms), None if absent."""
    r = getattr(row, kind).get(name)
    if r is None or r.value is None or r.status in ("NOT_APPLICABLE", "INVALID", "INFEASIBLE", "UNKNOWN"):
        return None
    return r.value


def formula_value(row, name, in_regime=True):
    """A registered formula at ``row``'s M (None outside its regime when ``in_regime``)."""
    for f in row.formulas:
        if f.name == name and math.isfinite(f.value) and (f.applies or not in_regime):
            return f.value
    return None


BOUND_STYLE = {"trivial": ("trivial bound", ":", "0.5"), "hong-kung": ("Hong-Kung M(P(2M)-1)", "--", "tab:red"),
               "x-partition": ("X-partition bound", "-.", "tab:orange"), "capacity": ("capacity bound", "--", "tab:pink")}


def plot_small(ax, s, algorithms, title):
    """Exact optimum (hollow with a bar down to the proven bound when unproven), bounds and algorithms against M."""
    Ms = [r.M for r in s.rows]
    for name, (label, ls, color) in BOUND_STYLE.items():
        ys = [value(r, "bounds", name) for r in s.rows]
        if any(y is not None for y in ys):
            ax.plot(Ms, [math.nan if y is None else y for y in ys], ls, color=color, label=label)
    for k, name in enumerate(algorithms):
        ys = [value(r, "algorithms", name) for r in s.rows]
        if any(y is not None for y in ys):
            ax.plot(Ms, [math.nan if y is None else y for y in ys], "-", marker="osD^v<>"[k % 7], ms=4, label=name)
    for r in s.rows:
        e = r.exact.get("cpsat") or r.exact.get("brute")
        if e is None or e.value is None:
            continue
        if e.status == "OPTIMAL":
            ax.plot([r.M], [e.value], "ks", ms=7)
        else:
            ax.plot([r.M], [e.value], "ks", ms=7, mfc="none")
            if e.bound is not None:
                ax.vlines(r.M, e.bound, e.value, colors="k", lw=1)
    ax.plot([], [], "ks", label="exact optimum (hollow: unproven, bar to bound)")
    ax.set_xlabel("fast memory M")
    ax.set_ylabel("I/O")
    ax.set_title(title)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))  # M is an integer
    ax.legend(fontsize=6, framealpha=0.7)


def small_findings(s, algorithms):
    """Findings of a small study, as Markdown lines computed from its rows."""
    rows = s.rows
    proven = [r for r in rows if r.optimum is not None]
    out = [f"- {s.spec.family} {s.spec.params}, M = {rows[0].M}..{rows[-1].M}: optimum proven at "
           f"{len(proven)} of {len(rows)} memories"
           + (f" ({', '.join(f'M={r.M}: {fmt(r.optimum)}' for r in proven)})" if proven else "") + "."]
    unproven = [r for r in rows if r.optimum is None and r.exact]
    for r in unproven:
        e = next(iter(r.exact.values()))
        algs = [f"{name} {fmt(value(r, 'algorithms', name))}" for name in algorithms
                if value(r, "algorithms", name) is not None]
        out.append(f"  - M = {r.M}: not proven within {fmt(e.time_limit)} s: optimum in "
                   f"[{fmt(e.bound)}, {fmt(e.value)}] ({e.status})" + (f"; I/O of {', '.join(algs)}." if algs else "."))
    for name in ("hong-kung", "capacity", "x-partition", "trivial"):
        pairs = [(value(r, "bounds", name), r.optimum) for r in proven]
        pairs = [(b, o) for b, o in pairs if b is not None and o]
        if pairs:
            fr = [b / o for b, o in pairs]
            out.append(f"- {name} bound / optimum: {span(fr, 2)} over the {len(fr)} proven memories.")
    for name in algorithms:
        pairs = [(r.M, value(r, "algorithms", name), r.optimum) for r in proven]
        pairs = [(M, a, o) for M, a, o in pairs if a is not None and o]
        if pairs:
            fr = [a / o for _, a, o in pairs]
            at = [M for M, a, o in pairs if a == o]
            out.append(f"- {name} / optimum: {span(fr)} at M in "
                       f"{[M for M, _, _ in pairs]}" + (f"; optimal at M = {at}" if at else "") + ".")
        elif all(value(r, "algorithms", name) is None for r in rows):
            out.append(f"- {name} does not fit in any M of the grid.")
    bad = s.violated
    out.append(f"- Verdicts: {len(bad)} violated" + (": " + "; ".join(f"M={M}: {v.message}" for M, v in bad) if bad else "")
               + f", tight at M = {[r.M for r in rows if any(v.kind == 'tight' for v in r.verdicts)]}.")
    return out'''

FOOTER = '''\
say(f"Notebook finished in {time.perf_counter() - T0:.0f} s; the store now holds {store.count()} rows ({store.path}).")
store.close()'''


def notebook(title: str, intro: str, cells: list) -> nbformat.NotebookNode:
    """A notebook: title and intro, the parameter and setup cells, then ``cells`` (("md"|"code", source))."""
    nb = new_notebook()
    nb.cells.append(new_markdown_cell(f"# {title}\n\n{intro}"))
    nb.cells.append(new_code_cell(PARAMETERS, metadata={"tags": ["parameters"]}))
    nb.cells.append(new_code_cell(SETUP))
    for kind, src in cells:
        src = src.strip("\n")
        nb.cells.append(new_markdown_cell(src) if kind == "md" else new_code_cell(src))
    nb.cells.append(new_code_cell(FOOTER))
    for k, cell in enumerate(nb.cells):
        cell.id = f"cell-{k:02d}"  # nbformat draws random ids: fixed ones keep a rebuild free of noise in the diff
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    return nb


def _load_sources() -> dict:
    sys.path.insert(0, str(HERE))
    import nb_sources  # the cell sources, one list per notebook

    return nb_sources.NOTEBOOKS


def main() -> None:
    for name, (title, intro, cells) in _load_sources().items():
        nb = notebook(title, intro, cells)
        nbformat.validate(nb)
        path = HERE / f"{name}.ipynb"
        nbformat.write(nb, path)
        print(f"wrote {path.relative_to(HERE.parent)} ({len(nb.cells)} cells)")


if __name__ == "__main__":
    main()
