"""A study as one self-contained HTML page: tables, figures, statuses, provenance.

The page carries everything inline (CSS, and figures as inline SVG drawn by
matplotlib when it is installed), so it opens offline and can be mailed to a
co-author. Every value keeps the status the text table gives it: a proven
optimum, a time-limited result with its bound and limit, a bound from a
search stopped early (``*``), a ``violated`` verdict; the cells are also
classed by status so that unproven values stand out.
"""

from __future__ import annotations

import html
import io
import math
import platform
import time

from spartition.study.sandwich import row_sandwich
from spartition.study.tables import formula_cells, legend, main_cells, sandwich_cells
from spartition.status import Status

__all__ = ["io_figure", "io_figure_svg", "render_html"]

_CSS = """
body { font-family: system-ui, sans-serif; margin: 2em; color: #222; max-width: 80em; }
h1 { font-size: 1.5em; } h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; } td.text { text-align: left; }
td.proven { background: #e8f5e9; } td.unproven { background: #fff8e1; }
td.violated { background: #ffebee; font-weight: bold; } td.tight { background: #e3f2fd; }
ul.legend { font-size: 0.85em; color: #444; } figure { margin: 1em 0; }
.note { font-size: 0.85em; color: #555; }
"""


def _cell_class(header: str, text: str) -> str:
    if header == "verdict":
        return "violated" if "violated" in text else "tight" if "tight" in text else "text"
    if "(OPTIMAL)" in text:
        return "proven"
    # a status other than OPTIMAL in the cell, or a search stopped early
    unproven = (Status.FEASIBLE, Status.UNKNOWN, Status.OPTIMAL_WITHIN_CAP, Status.OPTIMAL_GIVEN_BOUND)
    if any(status in text for status in unproven) or text.endswith("*"):
        return "unproven"
    return ""


def _table(headers, body) -> str:
    out = ["<table>", "<tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in headers) + "</tr>"]
    for cells in body:
        tds = []
        for h, c in zip(headers, cells):
            cls = _cell_class(h, c)
            tds.append(f'<td class="{cls}">{html.escape(c)}</td>' if cls else f"<td>{html.escape(c)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


def io_figure_svg(rows, title: str = "") -> str:
    """An SVG plot of I/O against M: the optimum, the computed lower bounds, the algorithms.

    A proven optimum is a filled marker; an unproven one is hollow with a bar
    down to its proven bound. Returns ``""`` when matplotlib is not installed
    or there is nothing to plot.
    """
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return ""
    fig = io_figure(rows, title)
    if fig is None:
        return ""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    plt.close(fig)
    svg = buf.getvalue()
    return svg[svg.index("<svg"):]  # drop the XML prologue: the SVG is inline in HTML


def io_figure(rows, title: str = ""):
    """The matplotlib figure of :func:`io_figure_svg` (integer M ticks, the legend beside the axes), or None.

    None when there is nothing to plot; matplotlib must be installed.
    """
    import matplotlib.pyplot as plt
    rows = sorted(rows, key=lambda r: r.M)
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(8.4, 3.6))
    plotted = False
    for name in sorted({m for r in rows for m in r.exact}):
        pts = [(r.M, r.exact[name]) for r in rows if name in r.exact and r.exact[name].value is not None]
        proven = [(M, x.value) for M, x in pts if x.status == Status.OPTIMAL]
        open_ = [(M, x.value, x.bound) for M, x in pts if x.status != Status.OPTIMAL]
        if proven:
            ax.plot(*zip(*proven), "o", color="black", label=f"optimum [{name}], proven")
            plotted = True
        if open_:
            Ms, vals, bnds = zip(*open_)
            lows = [v - (b if b is not None and math.isfinite(b) else 0) for v, b in zip(vals, bnds)]
            ax.errorbar(Ms, vals, yerr=[lows, [0] * len(vals)], fmt="o", mfc="white", color="black",
                        capsize=3, label=f"optimum [{name}], not proven (bar: proven bound)")
            plotted = True
    for kind, source, style in (("lower bound", "bounds", "--"), ("algorithm", "algorithms", "-")):
        for name in sorted({m for r in rows for m in getattr(r, source)}):
            pts = [(r.M, getattr(r, source)[name].value) for r in rows
                   if name in getattr(r, source) and getattr(r, source)[name].value is not None
                   and getattr(r, source)[name].status not in (Status.NOT_APPLICABLE, Status.SKIPPED, Status.ERROR)]
            if pts:
                ax.plot(*zip(*pts), style, marker=".", label=f"{kind}: {name}")
                plotted = True
    if not plotted:
        plt.close(fig)
        return None
    ax.set_xlabel("fast memory M")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # M is a number of pebbles
    ax.set_ylabel("I/O")
    if title:
        ax.set_title(title, fontsize=9)
    # beside the axes, never over the data
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0)
    fig.tight_layout()
    return fig


def _provenance(groups, extra: dict) -> str:
    from spartition import __version__
    from spartition.cpsat import ORTOOLS_VERSION

    facts = {"spartition": __version__, "OR-Tools": ORTOOLS_VERSION, "Python": platform.python_version(),
             "generated (UTC)": time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime()), **extra}
    head = _table(["what", "value"], [[k, str(v)] for k, v in facts.items()])
    runs = []
    for family, params, variant, rows in groups:
        for r in rows:
            for kind in ("exact", "bounds", "algorithms"):
                for name, res in getattr(r, kind).items():
                    tl = "none" if res.time_limit is None else f"{res.time_limit:g} s"
                    runs.append([f"{family} {_params(params)} {variant}", str(r.M), name, res.status,
                                 "yes" if res.proven else "no", tl, res.key.version,
                                 ", ".join(f"{k}={v}" for k, v in sorted(res.key.params.items()))])
    table = _table(["DAG", "M", "method", "status", "final", "time limit", "version", "parameters"], runs)
    return head + "\n<h3>Every stored value</h3>\n" + table


def _params(params: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in params.items())


def render_html(groups, title: str = "spartition report", provenance: dict | None = None,
                figures: bool = True) -> str:
    """The page of one or more studies.

    Parameters
    ----------
    groups : list of (family, params, variant, rows)
        As :func:`spartition.study.studies.rows_from_store` returns them (rows
        are :class:`~spartition.study.verdicts.StudyRow`).
    title : str
    provenance : dict, optional
        Extra facts for the provenance table (e.g. the store path).
    figures : bool
        Draw the I/O-against-M figure of each study (needs matplotlib).

    Returns
    -------
    str
        A complete HTML document with no external resource.

    Examples
    --------
    >>> page = render_html([], title="empty")
    >>> page.startswith("<!DOCTYPE html>") and "<title>empty</title>" in page
    True
    """
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>{html.escape(title)}</title>", f"<style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(title)}</h1>"]
    if not groups:
        parts.append('<p class="note">The results store holds no study.</p>')
    for family, params, variant, rows in groups:
        name = f"{family} {_params(params)}, {variant}"
        parts.append(f'<section class="study"><h2>{html.escape(name)}</h2>')
        svg = io_figure_svg(rows, name) if figures else ""
        if svg:
            parts.append(f'<figure class="io-figure">{svg}<figcaption>I/O against M.</figcaption></figure>')
        elif figures:
            parts.append('<p class="note">No figure: matplotlib is not installed (pip install matplotlib).</p>')
        parts.append(_table(*main_cells(rows)))
        headers, body = formula_cells(rows)
        if headers:
            parts.append("<h3>Published formulas</h3><p class=\"note\">~ constant unknown; . outside the "
                         "formula's regime at that M</p>" + _table(headers, body))
        parts.append("<h3>Sandwich</h3><p class=\"note\">the best proven lower bound and the cheapest replayed "
                     "schedule of the rows above, each with its method</p>"
                     + _table(*sandwich_cells([row_sandwich(r) for r in rows])))
        lines = legend(rows)
        if lines:
            parts.append('<ul class="legend">' + "".join(f"<li>{html.escape(x)}</li>" for x in lines) + "</ul>")
        verdicts = [(r.M, v) for r in rows for v in r.verdicts]
        if verdicts:
            parts.append("<h3>Verdicts</h3><ul>" + "".join(
                f"<li>M = {M}: <b>{html.escape(v.kind)}</b>: {html.escape(v.message)}</li>" for M, v in verdicts)
                + "</ul>")
        parts.append("</section>")
    parts.append('<section class="provenance"><h2>Provenance</h2>')
    parts.append(_provenance(groups, provenance or {}))
    parts.append("</section></body></html>")
    return "\n".join(parts)
