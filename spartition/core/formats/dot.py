"""Graphviz DOT files: export of a DAG (optionally coloured by pebbles or partition classes) and import.

Reading follows Graphviz's own grammar (https://graphviz.org/doc/info/lang.html)
with a small parser here, so no extra package is needed and the graph is the
one Graphviz draws:

- a port or compass point is not part of a node's name: ``a:p1:n -> b:s`` is
  the edge ``a -> b``;
- an attribute list separates its entries by ``,`` or ``;`` (OneStopParallel
  writes ``0 [work_weight="5";comm_weight="4";]``), and several lists may follow
  one another; statements may be separated by ``;`` or nothing;
- IDs are names, numerals, double-quoted strings (joined by ``+``) and HTML
  strings ``<...>``; keywords are case-insensitive; ``//``, ``/* */`` and
  ``#`` lines are comments;
- an edge to a subgraph ``a -> {b c}`` is an edge to each of its nodes;
- a node of a subgraph is a node of the graph; subgraphs nest at most
  :data:`MAX_DEPTH` deep (a deeper file is refused, not a crash);
- an edge written twice is refused (a DAG has one edge per pair) unless the
  graph is ``strict``, where Graphviz merges them too.

Attribute values are written as DOT strings: a string as itself, any other
value (numbers, lists such as ``entry``, the ``params`` object) as JSON.
Reading decodes a value that is JSON and keeps any other as a string (a
string that would read as JSON is written JSON-quoted), so the node-link ->
DOT -> node-link round trip keeps ids, edges and attributes, and a foreign
file's ``weight=2`` (or OneStopParallel's ``work_weight="5"``) reads as the
number 2. Top-level ``key=value`` and ``graph [...]`` statements are graph
attributes; default statements (``node [shape=box]``, ``edge [...]``) and
attributes of subgraphs are presentation and are not read.

A coloured export adds presentation attributes (``style``, ``fillcolor``,
``tooltip``, a graph ``label``) and lists their names in the graph attribute
``spartition_presentation``; reading such a file drops them again.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import networkx as nx

from spartition.errors import InvalidDAG

__all__ = ["CLASS_COLOURS", "MAX_DEPTH", "STATE_COLOURS", "dot_text", "parse_dot", "read_dot", "write_dot"]

#: Fill colour of a node by its pebbles: red only, blue only, both, none.
STATE_COLOURS = {"red": "#e41a1c", "blue": "#377eb8", "both": "#984ea3", "none": "#ffffff"}
#: Fill colours of partition classes, reused cyclically (ColorBrewer Set3).
CLASS_COLOURS = ("#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
                 "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f")
PRESENTATION = "spartition_presentation"
_NODE_STYLE = ("style", "fillcolor", "tooltip")
_GRAPH_STYLE = ("label", "labelloc")
_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
#: How deep subgraphs may nest in a file that is read.
MAX_DEPTH = 100


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
    >>> from spartition.families.classic.dag import chain
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
    style, label = _style(G, state, classes)
    graph = dict(_attrs(G.graph))
    if label is not None:
        graph["label"] = _quote(f"{title}: {label}" if title else label)
        graph["labelloc"] = "t"
        graph[PRESENTATION] = _quote(",".join(_NODE_STYLE + _GRAPH_STYLE))
    lines = ["digraph G {"] + [f"{k}={x};" for k, x in graph.items()]
    for v, attrs in G.nodes(data=True):
        shown = _attrs(attrs)
        shown.update({k: _quote(x) for k, x in style.get(v, {}).items()})
        lines.append(f"{_quote(str(v))}{_attr_list(shown)};")
    for u, v, attrs in G.edges(data=True):
        lines.append(f"{_quote(str(u))} -> {_quote(str(v))}{_attr_list(_attrs(attrs))};")
    return "\n".join(lines + ["}", ""])


def _attr_list(shown: dict) -> str:
    return " [" + ", ".join(f"{k}={x}" for k, x in shown.items()) + "]" if shown else ""


def write_dot(G: nx.DiGraph, path, state: dict | None = None, classes=None, title: str | None = None) -> None:
    """Write ``G`` as a DOT file; see :func:`dot_text`."""
    text = dot_text(G, state, classes, title)
    Path(path).write_text(text)


_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<comment>//[^\n]*|/\*.*?\*/|(?<![^\n])\#[^\n]*)
  | (?P<op>->|--|[{}\[\];,=:+])
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>-?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?))
  | (?P<name>[A-Za-z_\u0080-\U0010ffff][A-Za-z0-9_\u0080-\U0010ffff]*)
""", re.VERBOSE | re.DOTALL)
_KEYWORDS = ("strict", "graph", "digraph", "node", "edge", "subgraph")


class _Tokens:
    """The tokens of a DOT text, each ``(kind, text, offset)``; ``kind`` is an operator, ``id``, a keyword or ``end``."""

    def __init__(self, text: str, source: str):
        self.text, self.source, self.items, self.at = text, source, [], 0
        pos = 0
        while pos < len(text):
            if text[pos] == "<":
                pos = self._html(pos)
                continue
            m = _TOKEN.match(text, pos)
            if m is None:
                what = "an unterminated string" if text[pos] == '"' else (
                    "an unterminated comment" if text.startswith("/*", pos) else repr(text[pos]))
                raise self.error(pos, f"unexpected {what}")
            kind = m.lastgroup
            if kind in ("string", "number", "name"):
                word = m.group().lower()
                self.items.append((word if kind == "name" and word in _KEYWORDS else "id", m.group(), pos))
            elif kind == "op":
                self.items.append((m.group(), m.group(), pos))
            pos = m.end()
        # a few end tokens, so that looking ahead never runs past the list
        self.items += [("end", "the end of the file", len(text))] * 3

    def _html(self, pos: int) -> int:
        depth, i = 0, pos
        while i < len(self.text):
            depth += {"<": 1, ">": -1}.get(self.text[i], 0)
            i += 1
            if depth == 0:
                self.items.append(("id", self.text[pos:i], pos))
                return i
        raise self.error(pos, "unexpected an unterminated HTML string")

    def line(self, offset: int) -> int:
        return self.text.count("\n", 0, offset) + 1

    def error(self, offset: int, message: str) -> InvalidDAG:
        column = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
        return InvalidDAG(f"DOT file {self.source}, line {self.line(offset)}, column {column}: {message}")

    def peek(self, ahead: int = 0) -> str:
        return self.items[self.at + ahead][0]

    def take(self, *kinds: str) -> tuple:
        kind, text, offset = self.items[self.at]
        if kinds and kind not in kinds:
            wanted = " or ".join("a name or quoted string" if k == "id" else repr(k) for k in kinds)
            raise self.error(offset, f"expected {wanted}, got {text if kind == 'end' else repr(text)}")
        if kind != "end":  # the end is never passed
            self.at += 1
        return kind, text, offset


def _id_text(raw: str) -> str:
    """The characters an ID token stands for: quotes and escapes removed, an HTML string without its brackets."""
    if raw.startswith("<"):
        return raw[1:-1]
    if raw.startswith('"') and "\\" not in raw:
        return raw[1:-1]
    return _unquote(raw)


class _Reader:
    """Graphviz's DOT grammar, read into a DiGraph; the state of one graph while it is parsed."""

    def __init__(self, tokens: _Tokens):
        self.tokens = tokens
        self.G = nx.DiGraph()
        self.strict = False
        self.edge_at = {}

    def graph(self) -> nx.DiGraph:
        t = self.tokens
        if t.peek() == "strict":
            t.take()
            self.strict = True
        kind, _, offset = t.take("digraph", "graph")
        if kind == "graph":
            raise InvalidDAG(f"DOT file {t.source}: an undirected graph; a DAG file is a 'digraph'")
        if t.peek() == "id":
            t.take()
        t.take("{")
        self.statements(0)
        t.take("}")
        return self.G

    def value(self) -> str:
        _, raw, _ = self.tokens.take("id")
        parts = [raw]
        while self.tokens.peek() == "+" and raw.startswith('"'):
            self.tokens.take()
            parts.append(self.tokens.take("id")[1])
        return "".join(_id_text(p) for p in parts)

    def statements(self, depth: int) -> list:
        """Read statements up to the closing brace; the nodes they name, in order."""
        named = []
        while self.tokens.peek() not in ("}", "end"):
            named += self.statement(depth)
            if self.tokens.peek() == ";":
                self.tokens.take()
        return named

    def statement(self, depth: int) -> list:
        t = self.tokens
        kind = t.peek()
        if kind in ("graph", "node", "edge"):
            t.take()
            attrs = self.attributes(required=True)
            if kind == "graph" and depth == 0:
                self.G.graph.update(attrs)
            return []  # defaults of nodes and edges, attributes of subgraphs: presentation
        if kind == "id" and t.peek(1) == "=":
            key = self.value()
            t.take("=")
            value = _decode_text(self.value())
            if depth == 0:
                self.G.graph[key] = value
            return []
        first = self.operand(depth)
        if t.peek() not in ("->", "--"):
            if first[0] == "node":
                self.G.add_node(first[1][0])
                self.G.nodes[first[1][0]].update(self.attributes())
            return first[1]
        ends = [first]
        while t.peek() in ("->", "--"):
            op, text, offset = t.take()
            if op == "--":
                raise t.error(offset, "'--' in a digraph; its edges are written '->'")
            ends.append(self.operand(depth))
        attrs = self.attributes()
        for (_, tails, _), (_, heads, where) in zip(ends, ends[1:]):
            for u in tails:
                for v in heads:
                    self.edge(u, v, attrs, where)
        return [v for _, names, _ in ends for v in names]

    def operand(self, depth: int) -> tuple:
        """A node ID (its port dropped) or a subgraph: ``(kind, nodes, offset)``."""
        t = self.tokens
        offset = t.items[t.at][2]
        if t.peek() in ("subgraph", "{"):
            if depth >= MAX_DEPTH:
                raise t.error(offset, f"subgraphs nested more than {MAX_DEPTH} deep")
            if t.take()[0] == "subgraph" and t.peek() == "id":
                t.take()
            if t.items[t.at - 1][0] != "{":
                t.take("{")
            named = self.statements(depth + 1)
            t.take("}")
            for v in named:
                self.G.add_node(v)
            return "subgraph", list(dict.fromkeys(named)), offset
        name = self.value()
        for _ in range(2):  # a port, then a compass point: where an edge attaches, not part of the name
            if t.peek() != ":":
                break
            t.take()
            self.value()
        self.G.add_node(name)
        return "node", [name], offset

    def attributes(self, required: bool = False) -> dict:
        """One or more ``[key=value, ...]`` lists (entries separated by ``,`` or ``;``), merged."""
        t = self.tokens
        attrs = {}
        if required:
            t.take("[")
        elif t.peek() != "[":
            return attrs
        else:
            t.take()
        while True:
            while t.peek() != "]":
                key = self.value()
                if t.peek() == "=":
                    t.take()
                    attrs[key] = _decode_text(self.value())
                else:
                    attrs[key] = True  # Graphviz reads a bare name as name=true
                if t.peek() in (",", ";"):
                    t.take()
            t.take("]")
            if t.peek() != "[":
                return attrs
            t.take()

    def edge(self, u: str, v: str, attrs: dict, offset: int) -> None:
        if self.G.has_edge(u, v) and not self.strict:
            line = self.tokens.line(offset)
            raise InvalidDAG(
                f"DOT file {self.tokens.source}, line {line}: the edge {u} -> {v} is written twice (first on line "
                f"{self.tokens.line(self.edge_at[u, v])}); a DAG has one edge per pair (a 'strict digraph' merges them)")
        self.edge_at.setdefault((u, v), offset)
        self.G.add_edge(u, v)
        self.G.edges[u, v].update(attrs)


def _decode_text(text: str):
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_dot(text: str, source: str = "<text>") -> nx.DiGraph:
    """Read a DOT digraph from ``text``; ``source`` names it in error messages.

    The grammar is Graphviz's (see the module docstring): ports are not part
    of names, attribute entries may be separated by ``;``, nodes of subgraphs
    count, and a node named only in an edge is a node without attributes.
    Nodes without an ``op`` are left without one
    (:func:`spartition.core.dag.load_dag` gives the defaults).

    Raises
    ------
    InvalidDAG
        On a syntax error (with line and column), no graph or several, an
        undirected graph, an edge written twice in a graph that is not
        ``strict``, or subgraphs nested deeper than :data:`MAX_DEPTH`.

    Examples
    --------
    >>> G = parse_dot('digraph { a -> b [w=2]; b [op=add]; "x y" -> b }')
    >>> sorted(G.edges(data=True)), G.nodes["b"]
    ([('a', 'b', {'w': 2}), ('x y', 'b', {})], {'op': 'add'})
    >>> sorted(parse_dot("digraph { a:p1 -> b:s; a:n -> c; b -> d; c -> d }").edges)
    [('a', 'b'), ('a', 'c'), ('b', 'd'), ('c', 'd')]
    >>> parse_dot('digraph G {\\n0 [work_weight="5";comm_weight="4";];\\n0->1\\n}').nodes["0"]
    {'work_weight': 5, 'comm_weight': 4}
    >>> parse_dot("digraph {\\n a -> ;\\n}", "g.dot")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: DOT file g.dot, line 2, column 7: expected a name or quoted string, got ';'
    """
    tokens = _Tokens(text, source)
    graphs = []
    while tokens.peek() != "end" or not graphs:
        graphs.append(_Reader(tokens).graph())
    if len(graphs) != 1:
        raise InvalidDAG(f"DOT file {source}: holds {len(graphs)} graphs; a DAG file holds one")
    [G] = graphs
    dropped = G.graph.pop(PRESENTATION, "")
    dropped = set(dropped.split(",")) if isinstance(dropped, str) and dropped else set()
    for k in dropped:
        G.graph.pop(k, None)
        for v in G:
            G.nodes[v].pop(k, None)
    return G


def read_dot(path) -> nx.DiGraph:
    """Read a DOT file; see :func:`parse_dot`.

    Raises
    ------
    InvalidDAG
        If the file cannot be read or is no DOT digraph.
    """
    from spartition.core.formats import read_text

    return parse_dot(read_text(path, InvalidDAG, "DAG"), str(path))
