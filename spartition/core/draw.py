"""Pictures of DAGs and schedules: the red-pebble timeline of a schedule, and a layered drawing of a small DAG.

The numbers come from the move list and are checked against
:func:`spartition.core.game.replay` (the timeline's maximum is the replay's
``peak_red``, its last I/O the replay's I/O). matplotlib, the optional extra
``plot`` (``pip install 'spartition[plot]'``), is imported only to draw.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import networkx as nx

from spartition.core.dag import as_compact, topological_order
from spartition.core.formats import require_extra
from spartition.core.game import Schedule, replay, require_standard
from spartition.core.registry import family
from spartition.errors import SpartitionError, UsageError

__all__ = [
    "LAYERED_MAX_NODES",
    "compute_steps",
    "dag_label",
    "draw_layered",
    "draw_timeline",
    "layers",
    "pebble_state",
    "save_figure",
    "timeline",
]

#: Largest DAG a layered drawing accepts: past a few hundred nodes no label or edge can be read.
LAYERED_MAX_NODES = 300
#: Above this many edges a layered drawing shows them as plain lines (arrowheads would hide the nodes).
_ARROWS_MAX_EDGES = 600
_DPI = 100


def pebble_state(dag, schedule: Schedule, step: int | None = None) -> dict:
    """The pebbles of every node after the first ``step`` moves (all moves by default).

    The whole schedule is replayed first, so an illegal one raises
    :class:`~spartition.errors.IllegalMove` whatever the step.

    Returns
    -------
    dict
        Node -> ``"red"``, ``"blue"``, ``"both"`` or ``"none"``.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> s = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("delete", "c0"),
    ...                             ("compute", "c2"), ("store", "c2")])
    >>> pebble_state(chain(3), s, 2)
    {'c0': 'both', 'c1': 'red', 'c2': 'none'}
    """
    require_standard(schedule, "the drawing")
    cdag = as_compact(dag)
    replay(cdag, schedule)
    T = len(schedule.moves)
    step = T if step is None else step
    if not 0 <= step <= T:
        raise UsageError(f"step {step} is outside the schedule's 0..{T} moves")
    red = set()
    blue = {v for v, is_input in zip(cdag.names, cdag.is_input) if is_input}
    for move, node in schedule.moves[:step]:
        if move in ("load", "compute"):
            red.add(node)
        elif move == "delete":
            red.discard(node)
        else:
            blue.add(node)
    names = {(True, True): "both", (True, False): "red", (False, True): "blue", (False, False): "none"}
    return {v: names[v in red, v in blue] for v in cdag.names}


def timeline(dag, schedule: Schedule) -> dict:
    """Red pebbles in use and I/O so far after each move, and the steps of the loads and stores.

    Returns
    -------
    dict
        ``red`` and ``io``: lists of ``len(moves) + 1`` counts (index ``t`` is
        after ``t`` moves); ``loads``, ``stores``: the 1-based ``t`` after which
        each load or store is done; ``result``: the :class:`ReplayResult`.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> s = Schedule(2, "oneshot", [("load", "c0"), ("compute", "c1"), ("delete", "c0"),
    ...                             ("compute", "c2"), ("store", "c2")])
    >>> t = timeline(chain(3), s)
    >>> t["red"], t["io"], t["loads"], t["stores"]
    ([0, 1, 2, 1, 2, 2], [0, 1, 1, 1, 1, 2], [1], [5])
    """
    require_standard(schedule, "the drawing")
    result = replay(dag, schedule)
    red, io, loads, stores = [0], [0], [], []
    for t, (move, _) in enumerate(schedule.moves, 1):
        red.append(red[-1] + (move in ("load", "compute")) - (move == "delete"))
        io.append(io[-1] + (move in ("load", "store")))
        (loads if move == "load" else stores if move == "store" else []).append(t)
    # the picture must show what replay certifies: a mismatch is a bug here, not a bad schedule
    if max(red) != result.peak_red or io[-1] != result.io:
        raise AssertionError(f"timeline (peak {max(red)}, I/O {io[-1]}) disagrees with replay "
                             f"(peak {result.peak_red}, I/O {result.io})")
    return {"red": red, "io": io, "loads": loads, "stores": stores, "result": result}


def compute_steps(schedule: Schedule) -> dict:
    """Node -> the 0-based index of its first compute move.

    Examples
    --------
    >>> compute_steps(Schedule(2, "oneshot", [("load", "a"), ("compute", "b"), ("compute", "c")]))
    {'b': 1, 'c': 2}
    """
    require_standard(schedule, "the drawing")
    steps = {}
    for t, (move, node) in enumerate(schedule.moves):
        if move == "compute":
            steps.setdefault(node, t)
    return steps


def layers(G: nx.DiGraph) -> dict:
    """Node -> its layer: 0 for the inputs, else one more than its deepest predecessor.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> sorted(set(layers(fft(1)).values()))
    [0, 1]
    """
    depth = {}
    for v in topological_order(G):
        depth[v] = 1 + max((depth[u] for u in G.predecessors(v)), default=-1)
    return depth


def _pyplot():
    matplotlib = require_extra("matplotlib", "plot", "drawing")
    matplotlib.use("Agg")  # files only: no display needed, none opened
    import matplotlib.pyplot as plt

    return plt


def dag_label(dag) -> str:
    """How a picture names its DAG: the family and its parameters when the graph records them, else "DAG".

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> dag_label(fft(2))
    'fft k=2'
    """
    graph = getattr(dag, "graph", None) or {}
    name = graph.get("family")
    if not name:
        return "DAG"
    params = graph.get("params") or {}
    return " ".join([str(name)] + [f"{k}={v}" for k, v in params.items() if k in _shown_params(str(name), params)])


def _shown_params(name: str, params: dict) -> set:
    """The leading size parameters of the builder (int defaults), and every other one set to a non-default value."""
    try:
        signature = inspect.signature(family(name))
    except (SpartitionError, TypeError, ValueError):  # not a registered builder: show everything
        return set(params)
    shown, leading = set(), True
    for key, p in signature.parameters.items():
        default = p.default
        leading = leading and (default is inspect.Parameter.empty or type(default) is int)
        if leading or key not in params or params[key] != default:
            shown.add(key)
    return shown | (set(params) - set(signature.parameters))


def _figure(size):
    width, height = size
    plt = _pyplot()
    return plt, width / _DPI, height / _DPI


def draw_timeline(dag, schedule: Schedule, size=(900, 500), title: str | None = None):
    """The red pebbles in use against M over the moves, loads and stores marked, and the I/O so far.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
        The DAG.
    schedule : Schedule
        A valid schedule (replayed first).
    size : (int, int)
        Width and height in pixels.
    title : str, optional
        Title above the plot.

    Returns
    -------
    matplotlib.figure.Figure
        Its first axes' first line is the red-pebble count (so its maximum is
        the replay's ``peak_red``).
    """
    data = timeline(dag, schedule)
    result = data["result"]
    plt, w, h = _figure(size)
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(w, h), dpi=_DPI,
                                      gridspec_kw={"height_ratios": [3, 1.4]})
    steps = range(len(data["red"]))
    top.step(steps, data["red"], where="post", color="#e41a1c", lw=1.2, label="red pebbles in use")
    top.axhline(schedule.M, color="black", ls="--", lw=1, label=f"M = {schedule.M}")
    for moves, marker, colour, label in ((data["loads"], "v", "#377eb8", "load"),
                                         (data["stores"], "^", "#4daf4a", "store")):
        if moves:
            top.scatter(moves, [data["red"][t] for t in moves], marker=marker, s=18, color=colour,
                        zorder=3, label=f"{label} ({len(moves)})")
    # headroom above M holds the legend, so it never covers the curve (which stays at or below M)
    top.set_ylim(0, schedule.M * 1.3 + 1.5)
    top.set_ylabel("red pebbles")
    top.legend(loc="upper center", fontsize="small", ncol=4, frameon=False)
    top.set_title(title or f"{dag_label(dag)}, {schedule.variant} schedule, M = {schedule.M}: I/O {result.io}, "
                           f"peak {result.peak_red} red pebbles, {result.moves} moves", fontsize="medium")
    bottom.step(steps, data["io"], where="post", color="#377eb8", lw=1.2)
    bottom.set_ylabel("I/O so far")
    bottom.set_xlabel("move")
    bottom.set_xlim(0, max(1, len(data["red"]) - 1))
    fig.tight_layout()
    return fig


def _positions(G, depth) -> dict:
    """x, y of each node: layers top to bottom, each ordered by its predecessors' mean x (fewer crossings)."""
    by_layer = {}
    for v in G:
        by_layer.setdefault(depth[v], []).append(v)
    pos = {}
    for d in sorted(by_layer):
        nodes = by_layer[d]
        if d:
            mean = {v: sum(pos[u][0] for u in G.predecessors(v)) / G.in_degree(v) for v in nodes}
            nodes = sorted(nodes, key=mean.__getitem__)
        k = len(nodes)
        for i, v in enumerate(nodes):
            pos[v] = ((i + 0.5) / k, -d)
    return pos


def _colours(G, schedule, classes):
    """(colour value of each node, colormap name, legend title, categorical?)."""
    if classes is not None:
        owner = {v: k for k, members in enumerate(classes) for v in members}
        missing = [v for v in G if v not in owner]
        if missing:
            raise UsageError(f"the partition leaves {len(missing)} nodes out of every class, e.g. {missing[0]!r}")
        return [owner[v] for v in G], "tab20", "partition class", True
    if schedule is not None:
        steps = compute_steps(schedule)
        return [steps.get(v, -1) for v in G], "viridis", "computed at move", False
    ops = sorted({str(G.nodes[v].get("op")) for v in G})
    return [ops.index(str(G.nodes[v].get("op"))) for v in G], "tab10", "op", True


def draw_layered(G: nx.DiGraph, size=(800, 600), schedule: Schedule | None = None, classes=None,
                 title: str | None = None):
    """A layered drawing of a small DAG, inputs on top, nodes coloured.

    Colours: by partition class (``classes``, e.g. ``Partition.classes``),
    else by the move that first computes the node (``schedule``, replayed
    first; inputs grey), else by ``op``.

    Raises
    ------
    UsageError
        If ``G`` has more than :data:`LAYERED_MAX_NODES` nodes (no one can
        read such a drawing), or the classes miss a node.
    """
    if G.number_of_nodes() > LAYERED_MAX_NODES:
        raise UsageError(f"a layered drawing of {G.number_of_nodes():,} nodes would be unreadable "
                         f"(at most {LAYERED_MAX_NODES}): draw a schedule's timeline instead, "
                         "or export DOT (-o FILE.dot) for Graphviz")
    if schedule is not None:
        replay(G, schedule)
    depth = layers(G)
    pos = _positions(G, depth)
    values, cmap, legend, categorical = _colours(G, schedule, classes)
    plt, w, h = _figure(size)
    from matplotlib.collections import LineCollection

    fig, ax = plt.subplots(figsize=(w, h), dpi=_DPI)
    dot_area = max(12, 2400 / max(1, len(G)))  # points^2
    if G.number_of_edges() <= _ARROWS_MAX_EDGES:
        # arrowheads say which way data flows; stopped short of the dots so the heads stay visible
        for u, v in G.edges:
            ax.annotate("", xy=pos[v], xytext=pos[u], zorder=1,
                        arrowprops={"arrowstyle": "-|>", "color": "#888888", "lw": 0.6, "mutation_scale": 7,
                                    "shrinkA": dot_area ** 0.5 / 2, "shrinkB": dot_area ** 0.5 / 2 + 1})
    else:
        ax.add_collection(LineCollection([(pos[u], pos[v]) for u, v in G.edges], colors="#999999",
                                         linewidths=0.6, zorder=1))
    xs, ys = zip(*(pos[v] for v in G)) if len(G) else ((), ())
    shown = [x if x >= 0 else float("nan") for x in values]
    # NaN (an input, never computed) is drawn grey
    dots = ax.scatter(xs, ys, c=shown, cmap=plt.get_cmap(cmap).with_extremes(bad="#cccccc"),
                      s=dot_area, zorder=2, edgecolors="black", linewidths=0.4,
                      plotnonfinite=True)
    if len(G) <= 60:
        label_size = 9 if len(G) <= 20 else 8 if len(G) <= 40 else 7
        for v in G:
            ax.annotate(v, pos[v], fontsize=label_size, ha="center", va="bottom", xytext=(0, 5),
                        textcoords="offset points")
    if categorical and len(set(values)) <= 20:
        names = classes is None and sorted({str(G.nodes[v].get("op")) for v in G})
        for k in sorted(set(values)):
            ax.scatter([], [], color=dots.cmap(dots.norm(k)), label=names[k] if names else f"class {k}")
        ax.legend(title=legend, fontsize="x-small", loc="upper left", bbox_to_anchor=(1, 1))
    elif len(G):
        fig.colorbar(dots, ax=ax, label=legend)
    ax.set_xticks([])
    ax.set_ylabel("layer")
    ax.set_yticks(sorted({-d for d in depth.values()}), [str(d) for d in sorted(set(depth.values()), reverse=True)])
    ax.set_xlim(-0.02, 1.02)
    ax.set_title(title or f"{dag_label(G)}: {len(G)} nodes, {G.number_of_edges()} edges")
    fig.tight_layout()
    return fig


def save_figure(fig, path) -> None:
    """Write a figure (PNG, SVG or PDF by extension) at its own size in pixels, and close it."""
    plt = _pyplot()
    try:
        fig.savefig(Path(path), dpi=_DPI)
    finally:
        plt.close(fig)
