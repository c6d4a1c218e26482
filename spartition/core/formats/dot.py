"""Graphviz DOT files: export of a DAG (optionally coloured by pebbles or partition classes) and import.

Both directions go through pydot (the optional extra ``dot``: ``pip install
'spartition[dot]'``); its parser reads what Graphviz reads, and errors give
the line and column.

Attribute values are written as DOT strings: a string as itself, any other
value (numbers, lists such as ``entry``, the ``params`` object) as JSON.
Reading decodes a value that is JSON and keeps any other as a string (a
string that would read as JSON is written JSON-quoted), so the node-link ->
DOT -> node-link round trip keeps ids, edges and attributes, and a foreign
file's ``weight=2`` reads as the number 2. Default statements
(``node [shape=box]``) are presentation and are not read as attributes.

A coloured export adds presentation attributes (``style``, ``fillcolor``,
``tooltip``, a graph ``label``) and lists their names in the graph attribute
``spartition_presentation``; reading such a file drops them again.
"""

from __future__ import annotations

import json
import re
import warnings
from importlib import import_module
from pathlib import Path

import networkx as nx

from spartition.core.formats import require_extra
from spartition.errors import InvalidDAG

__all__ = ["CLASS_COLOURS", "STATE_COLOURS", "dot_text", "parse_dot", "read_dot", "write_dot"]

#: Fill colour of a node by its pebbles: red only, blue only, both, none.
STATE_COLOURS = {"red": "#e41a1c", "blue": "#377eb8", "both": "#984ea3", "none": "#ffffff"}
#: Fill colours of partition classes, reused cyclically (ColorBrewer Set3).
CLASS_COLOURS = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                 "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")
PRESENTATION = "spartition_presentation"
_NODE_STYLE = ("style", "fillcolor", "tooltip")
_GRAPH_STYLE = ("label", "labelloc")
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


def _pydot():
    # pydot builds its parser with pyparsing names that newer pyparsing deprecates: not the user's concern
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pydot = require_extra("pydot", "dot", "reading and writing DOT files")
        import_module("pydot.dot_parser")
    return pydot


def _quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _unquote(text: str) -> str:
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        return text
    # DOT escapes: \" and \\ are characters, backslash-newline continues the line; \n is our newline
    escapes = {'"': '"', "\\": "\\", "\n": "", "n": "\n"}
    return re.sub(r'\\(["\\\nn])', lambda m: escapes[m.group(1)], text[1:-1])


def _json_default(value):
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    raise TypeError(f"attribute value {value!r} of type {type(value).__name__} is not JSON-serialisable")


def _encode(value) -> str:
    if isinstance(value, str):
        try:
            json.loads(value)
        except ValueError:
            return _quote(value)
    try:
        return _quote(json.dumps(value, default=_json_default))
    except (TypeError, ValueError) as exc:
        raise InvalidDAG(f"cannot write the DAG as DOT: {exc}") from None


def _decode(raw: str):
    text = _unquote(raw)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _key(name: str) -> str:
    return name if _ID.match(name) else _quote(name)


def _attrs(attrs: dict) -> dict:
    return {_key(str(k)): _encode(v) for k, v in attrs.items()}


def _style(G, state, classes) -> tuple[dict, str | None]:
    """Presentation attributes of each node, and the graph label."""
    if state is None and classes is None:
        return {}, None
    style = {}
    if classes is not None:
        for k, members in enumerate(classes):
            for v in members:
                style[v] = {"style": "filled", "fillcolor": CLASS_COLOURS[k % len(CLASS_COLOURS)],
                            "tooltip": f"class {k}"}
        return style, f"{len(classes)} classes"
    for v in G:
        pebbles = state.get(v, "none")
        if pebbles not in STATE_COLOURS:
            raise ValueError(f"state of node {v!r} is {pebbles!r}; expected one of {', '.join(STATE_COLOURS)}")
        style[v] = {"style": "filled", "fillcolor": STATE_COLOURS[pebbles], "tooltip": pebbles}
    return style, "red: fast memory, blue: slow memory, purple: both"


def dot_text(G: nx.DiGraph, state: dict | None = None, classes=None, title: str | None = None) -> str:
    """``G`` as a DOT digraph, optionally coloured.

    Parameters
    ----------
    G : networkx.DiGraph
        The DAG.
    state : dict, optional
        Node -> ``"red"``, ``"blue"``, ``"both"`` or ``"none"`` (the pebbles of
        a schedule at one step, see :func:`spartition.core.draw.pebble_state`);
        nodes not named are ``"none"``.
    classes : sequence of sequences of node ids, optional
        Partition classes (e.g. ``Partition.classes``), filled by class.
    title : str, optional
        Graph label of a coloured export (prefixed to the colour key).

    Examples
    --------
    >>> from spartition.families.classic import chain
    >>> print(dot_text(chain(2)))
    digraph G {
    family="chain";
    params="{\\"n\\": 2}";
    "c0" [op="input", entry="[\\"c\\", 0]"];
    "c1" [op="scale", entry="[\\"c\\", 1]"];
    "c0" -> "c1";
    }
    <BLANKLINE>
    """
    pydot = _pydot()
    style, label = _style(G, state, classes)
    graph = pydot.Dot(graph_type="digraph")
    for key, value in _attrs(G.graph).items():
        graph.set(key, value)
    if label is not None:
        graph.set("label", _quote(f"{title}: {label}" if title else label))
        graph.set("labelloc", "t")
        graph.set(PRESENTATION, _quote(",".join(_NODE_STYLE + _GRAPH_STYLE)))
    for v, attrs in G.nodes(data=True):
        shown = _attrs(attrs)
        shown.update({k: _quote(x) for k, x in style.get(v, {}).items()})
        graph.add_node(pydot.Node(_quote(v), **shown))
    for u, v, attrs in G.edges(data=True):
        graph.add_edge(pydot.Edge(_quote(u), _quote(v), **_attrs(attrs)))
    return graph.to_string()


def write_dot(G: nx.DiGraph, path, state: dict | None = None, classes=None, title: str | None = None) -> None:
    """Write ``G`` as a DOT file; see :func:`dot_text`."""
    text = dot_text(G, state, classes, title)
    Path(path).write_text(text)


def _parse(text: str, source: str):
    pydot = _pydot()
    from pydot import dot_parser

    parser = getattr(getattr(dot_parser, "GraphParser", None), "parser", None)
    if parser is None:  # pydot before 3 has no GraphParser: no position for errors
        graphs = pydot.graph_from_dot_data(text)
        if graphs is None:
            raise InvalidDAG(f"DOT file {source}: not a DOT graph")
        return graphs
    try:
        return list(parser.parse_string(text, parse_all=True))
    except dot_parser.ParseException as exc:
        raise InvalidDAG(f"DOT file {source}, line {exc.lineno}, column {exc.col}: {exc.msg}") from None


def _walk(graph):
    """The graph and its subgraphs (clusters), depth first."""
    yield graph
    for sub in graph.get_subgraph_list():
        yield from _walk(sub)


def parse_dot(text: str, source: str = "<text>") -> nx.DiGraph:
    """Read a DOT digraph from ``text``; ``source`` names it in error messages.

    Nodes of subgraphs count; a node named only in an edge is a node without
    attributes. Nodes without an ``op`` are left without one
    (:func:`spartition.core.dag.load_dag` gives the defaults).

    Raises
    ------
    InvalidDAG
        On a syntax error (with line and column), no graph or several, an
        undirected graph, or an edge to a subgraph.

    Examples
    --------
    >>> G = parse_dot('digraph { a -> b [w=2]; b [op=add]; "x y" -> b }')
    >>> sorted(G.edges(data=True)), G.nodes["b"]
    ([('a', 'b', {'w': 2}), ('x y', 'b', {})], {'op': 'add'})
    >>> parse_dot("digraph {\\n a -> ;\\n}", "g.dot")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: DOT file g.dot, line 2, column 4: Expected ...
    """
    graphs = _parse(text, source)
    if len(graphs) != 1:
        raise InvalidDAG(f"DOT file {source}: holds {len(graphs)} graphs; a DAG file holds one")
    [top] = graphs
    if top.get_type() != "digraph":
        raise InvalidDAG(f"DOT file {source}: an undirected graph; a DAG file is a 'digraph'")
    graph_attrs = {_unquote(k): _decode(x) for k, x in top.get_attributes().items()}
    dropped = graph_attrs.pop(PRESENTATION, "")
    dropped = set(dropped.split(",")) if isinstance(dropped, str) and dropped else set()
    G = nx.DiGraph()
    G.graph.update({k: x for k, x in graph_attrs.items() if k not in dropped})
    for graph in _walk(top):
        for node in graph.get_node_list():
            name = node.get_name()
            if name in ("node", "edge", "graph"):  # an unquoted keyword: a default statement
                continue
            attrs = {_unquote(k): _decode(x) for k, x in node.get_attributes().items()}
            G.add_node(_unquote(name), **{k: x for k, x in attrs.items() if k not in dropped})
        for edge in graph.get_edge_list():
            ends = (edge.get_source(), edge.get_destination())
            if not all(isinstance(end, str) for end in ends):
                raise InvalidDAG(f"DOT file {source}: an edge to a subgraph ({edge.to_string()[:60]}) is not supported")
            attrs = {_unquote(k): _decode(x) for k, x in edge.get_attributes().items()}
            G.add_edge(*(_unquote(end) for end in ends), **attrs)
    return G


def read_dot(path) -> nx.DiGraph:
    """Read a DOT file; see :func:`parse_dot`.

    Raises
    ------
    InvalidDAG
        If the file cannot be read or is no DOT digraph.
    """
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise InvalidDAG(f"cannot read DAG file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise InvalidDAG(f"cannot read DAG file {path}: not UTF-8 text (byte {exc.start})") from None
    return parse_dot(text, str(path))
