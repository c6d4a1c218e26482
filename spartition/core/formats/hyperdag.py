"""HyperDAG files, the format of OneStopParallel and its DAG benchmark sets.

A HyperDAG describes a DAG by hyperedges: one per node with successors, whose
first pin is that node (the *source*) and whose other pins are its
successors. Numbers are 0-based indices, as in a MatrixMarket coordinate
file whose rows are hyperedges and whose columns are nodes. Two layouts are
read (the layout is told apart by the number of data lines):

``db`` (HyperdagDB, what OneStopParallel writes today)::

    %% optional comment lines
    M N P                      hyperedges, nodes, pins
    e comm_weight mem_weight   M hyperedge lines
    v work_weight type         N vertex lines
    e v                        P pin lines

``plain`` (the older benchmark files)::

    % optional comment lines
    M N P
    e v                        P pin lines
    v work_weight comm_weight  N node lines

Reading follows OneStopParallel's readers (``file_reader``, and the format
note of its HyperDAG_DB data set): comment lines start with ``%`` (also
between sections, as OneStopParallel writes them), text after ``%`` ends a
data line, weights missing from a line default to 1 (type 0). Weights
become attributes: ``work_weight`` and ``type`` (or ``comm_weight``) of the
node; in the db layout a hyperedge's ``comm_weight`` and ``mem_weight``
belong to its source node (what OneStopParallel does) and its
``comm_weight`` to every DAG edge of the hyperedge too. Node ids are the
indices as strings. A non-source node of type ``t != 0`` gets the ``op``
``"type<t>"``; other ``op`` labels are the defaults of
:func:`spartition.core.dag.load_dag`.

What HyperDAG cannot hold (string ids, ``op``, ``entry``, graph attributes,
non-integer weights) the writer keeps as JSON in comments the format allows:
one line ``% spartition graph {...}`` with the graph attributes, and a
comment closing each data line: ``% {"id": ..., "attrs": {...}}`` on a node
line, ``% {"attrs": {...}}`` on a pin line whose edge has attributes other
than the inherited ones, and ``"unset": [names]`` where a column was written
as the default for an attribute the graph did not have. The reader applies
those comments only in a file with the ``% spartition graph`` line, so a
foreign file's end-of-line notes are ignored. Other readers see a plain
HyperDAG.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from spartition.errors import InvalidDAG

__all__ = ["LAYOUTS", "hyperdag_text", "parse_hyperdag", "read_hyperdag", "write_hyperdag"]

#: The two layouts: HyperdagDB (hyperedge, vertex, pin lines) and plain (pin, node lines).
LAYOUTS = ("db", "plain")
#: Prefix of the comment line holding the graph attributes (and enabling the JSON notes).
GRAPH_NOTE = "% spartition graph "
#: Column attributes per line kind, each with the value a missing column stands for.
_COLUMNS = {
    "hyperedge": (("comm_weight", 1), ("mem_weight", 1)),
    "vertex": (("work_weight", 1), ("type", 0)),
    "plain-node": (("work_weight", 1), ("comm_weight", 1)),
}


@dataclass
class _Line:
    number: int
    values: list
    note: str | None


class _Reader:
    """One file being read: its name, for messages that say where."""

    def __init__(self, source: str):
        self.source = source

    def error(self, number: int | None, message: str) -> InvalidDAG:
        where = f", line {number}" if number else ""
        return InvalidDAG(f"HyperDAG file {self.source}{where}: {message}")

    def lines(self, text: str):
        """(data lines, comment lines) with line numbers; each data line's integers and end note."""
        data, comments = [], []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                continue
            if line.startswith("%"):
                comments.append((number, line))
                continue
            body, _, note = line.partition("%")
            values = []
            for token in body.split():
                if not data and len(values) >= 3:
                    break  # the header: what follows its three counts is the writer's, and ignored
                try:
                    values.append(int(token))
                except ValueError:
                    raise self.error(number, f"{token!r} is not an integer") from None
            data.append(_Line(number, values, note.strip() if _ else None))
        return data, comments

    def note(self, line: _Line, enabled: bool) -> dict:
        if not enabled or not line.note:
            return {}
        try:
            note = json.loads(line.note)
        except ValueError as exc:
            raise self.error(line.number, f"unreadable spartition note {line.note[:40]!r}: {exc}") from None
        if not isinstance(note, dict) or not isinstance(note.get("attrs", {}), dict):
            raise self.error(line.number, "a spartition note must be a JSON object with an 'attrs' object")
        return note

    def index(self, line: _Line, k: int, limit: int, what: str) -> int:
        if len(line.values) <= k:
            raise self.error(line.number, f"expected a {what} index, found {len(line.values)} numbers")
        value = line.values[k]
        if not 0 <= value < limit:
            raise self.error(line.number, f"{what} {value} is out of range 0..{limit - 1}")
        return value

    def columns(self, line: _Line, kind: str, note: dict) -> dict:
        """The column attributes of a hyperedge, vertex or node line (defaults the writer marked unset dropped)."""
        attrs, unset = {}, set(note.get("unset", ()))
        for k, (name, default) in enumerate(_COLUMNS[kind], 1):
            value = line.values[k] if len(line.values) > k else default
            if not (name in unset and value == default):
                attrs[name] = value
        return attrs


def _layout(reader: _Reader, header: _Line, body: list, comments: list) -> str:
    m, n, p = header.values[:3]
    counts = {"plain": n + p, "db": m + n + p}
    db_hint = bool(comments) and comments[0][1].startswith("%%")
    if len(body) == counts["db"] and (counts["db"] != counts["plain"] or db_hint):
        return "db"
    if len(body) == counts["plain"]:
        return "plain"
    expected = (f"{counts['plain']} data lines after the header (nodes + pins, plain layout) "
                f"or {counts['db']} (hyperedges + nodes + pins, HyperdagDB layout)")
    if len(body) < counts["plain"]:
        last = body[-1].number if body else header.number
        raise reader.error(last, f"the file ends after {len(body)} data lines: the header (line {header.number}) "
                                 f"announces {m} hyperedges, {n} nodes and {p} pins, so expected {expected}")
    # past both counts the first extra line is the culprit; between them no line is
    number = body[counts["db"]].number if len(body) > counts["db"] else header.number
    raise reader.error(number, f"{len(body)} data lines after the header (line {header.number}: "
                               f"{m} hyperedges, {n} nodes, {p} pins); expected {expected}")


def _nodes(reader, lines, n, kind, notes_on) -> tuple[list, list]:
    names, attrs, seen = [None] * n, [None] * n, {}
    for line in lines:
        v = reader.index(line, 0, n, "node")
        if v in seen:
            raise reader.error(line.number, f"node {v} is listed twice (first on line {seen[v]})")
        seen[v] = line.number
        note = reader.note(line, notes_on)
        attrs[v] = {**reader.columns(line, kind, note), **note.get("attrs", {})}
        name = note.get("id", str(v))
        if not isinstance(name, str):
            raise reader.error(line.number, f"node id {name!r} in the note is not a string")
        names[v] = name
    if len(set(names)) < n:
        dup = next(x for x in names if names.count(x) > 1)
        raise reader.error(None, f"duplicate node id {dup!r}")
    return names, attrs


def _hyperedges(reader, lines, m, notes_on) -> list:
    weights, seen = [None] * m, {}
    for line in lines:
        e = reader.index(line, 0, m, "hyperedge")
        if e in seen:
            raise reader.error(line.number, f"hyperedge {e} is listed twice (first on line {seen[e]})")
        seen[e] = line.number
        weights[e] = reader.columns(line, "hyperedge", reader.note(line, notes_on))
    return weights


def _pins(reader, lines, m, n, names, hyper, notes_on, G) -> dict:
    """Add the DAG edges of the pins to ``G``; return the line of each edge."""
    source, source_line, owner, where = [None] * m, [None] * m, {}, {}
    for line in lines:
        e, v = reader.index(line, 0, m, "hyperedge"), reader.index(line, 1, n, "node")
        if source[e] is None:
            if v in owner:
                raise reader.error(line.number, f"node {names[v]!r} is already the source of hyperedge {owner[v]} "
                                                f"(line {source_line[owner[v]]}); a node has one hyperedge")
            source[e], source_line[e], owner[v] = v, line.number, e
            if hyper is not None:
                # a weight the note gives (a non-integer one) wins over the column's default
                for key, value in hyper[e].items():
                    G.nodes[names[v]].setdefault(key, value)
            continue
        u = source[e]
        edge = (names[u], names[v])
        if v == u:
            raise reader.error(line.number, f"node {names[v]!r} is the source of hyperedge {e} "
                                            f"(line {source_line[e]}) and cannot be its sink too: a cycle")
        if edge in where:
            raise reader.error(line.number, f"node {names[v]!r} is already a pin of hyperedge {e} (line {where[edge]})")
        inherited = {"comm_weight": hyper[e]["comm_weight"]} if hyper is not None and "comm_weight" in hyper[e] else {}
        note = reader.note(line, notes_on)
        G.add_edge(*edge, **(note["attrs"] if "attrs" in note else inherited))
        where[edge] = line.number
    return where


def parse_hyperdag(text: str, source: str = "<text>") -> nx.DiGraph:
    """Read a HyperDAG (either layout) from ``text``; ``source`` names it in error messages.

    Nodes without an ``op`` are left without one (:func:`spartition.core.dag.load_dag`
    gives the defaults).

    Raises
    ------
    InvalidDAG
        Naming ``source`` and the line: a missing or short header, a
        non-integer, an index out of range, a node or hyperedge listed
        twice, a count of lines that fits neither layout (a truncated file),
        a node that is the source of two hyperedges, a repeated pin, a cycle.

    Examples
    --------
    A sum ``s = a + b`` and its use ``t = s * b`` (plain layout; hyperedge 0 is
    ``a``'s, 1 is ``b``'s, 2 is ``s``'s):

    >>> G = parse_hyperdag('''3 4 7
    ... 0 0
    ... 0 2
    ... 1 1
    ... 1 2
    ... 1 3
    ... 2 2
    ... 2 3
    ... 0 1 1
    ... 1 1 1
    ... 2 1 1
    ... 3 2 1''')
    >>> sorted(G.edges()), G.nodes["3"]["work_weight"]
    ([('0', '2'), ('1', '2'), ('1', '3'), ('2', '3')], 2)
    >>> parse_hyperdag("1 2 2\\n0 0\\n0 x", "t.hdag")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: HyperDAG file t.hdag, line 3: 'x' is not an integer
    """
    reader = _Reader(source)
    data, comments = reader.lines(text)
    if not data or len(data[0].values) < 3 or min(data[0].values[:3]) < 0:
        raise reader.error(data[0].number if data else None,
                           "expected the header 'hyperedges nodes pins' (three integers >= 0)")
    header, body = data[0], data[1:]
    m, n, p = header.values[:3]
    layout = _layout(reader, header, body, comments)
    graph_attrs, notes_on = {}, False
    for number, line in comments:
        if line.startswith(GRAPH_NOTE):
            try:
                graph_attrs = json.loads(line[len(GRAPH_NOTE):])
            except ValueError as exc:
                raise reader.error(number, f"unreadable graph attributes: {exc}") from None
            if not isinstance(graph_attrs, dict):
                raise reader.error(number, "the graph attributes must be a JSON object")
            notes_on = True
    if layout == "db":
        hyper = _hyperedges(reader, body[:m], m, notes_on)
        names, attrs = _nodes(reader, body[m:m + n], n, "vertex", notes_on)
        pins = body[m + n:]
    else:
        hyper = None
        names, attrs = _nodes(reader, body[p:], n, "plain-node", notes_on)
        pins = body[:p]
    G = nx.DiGraph()
    G.graph.update(graph_attrs)
    for name, a in zip(names, attrs):
        G.add_node(name, **a)
    where = _pins(reader, pins, m, n, names, hyper, notes_on, G)
    if not nx.is_directed_acyclic_graph(G):
        cycle = [u for u, _ in nx.find_cycle(G)]
        raise reader.error(where[(cycle[-1], cycle[0])],
                           "the pins make a cycle: " + " -> ".join(cycle + cycle[:1]))
    for name, a in G.nodes(data=True):
        if "op" not in a and a.get("type", 0) != 0 and G.in_degree(name):
            a["op"] = f"type{a['type']}"
    return G


def read_hyperdag(path) -> nx.DiGraph:
    """Read a HyperDAG file (either layout); see :func:`parse_hyperdag`.

    Raises
    ------
    InvalidDAG
        If the file cannot be read or is not a HyperDAG (naming file and line).
    """
    from spartition.core.formats import read_text

    return parse_hyperdag(read_text(path, InvalidDAG, "DAG"), str(path))


def _plain(value):
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    if isinstance(value, (set, frozenset)):
        return sorted(value)
    raise TypeError(f"attribute value {value!r} of type {type(value).__name__} is not JSON-serialisable")


def _json(value) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), default=_plain)
    except (TypeError, ValueError) as exc:
        raise InvalidDAG(f"cannot write the DAG as HyperDAG: {exc}") from None


def _columns(attrs: dict, kind: str) -> tuple[list, dict, list]:
    """Column values, the attributes the columns do not hold, the names written as defaults."""
    values, rest, unset = [], dict(attrs), []
    for name, default in _COLUMNS[kind]:
        value = attrs.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            values.append(value)
            del rest[name]
        else:
            values.append(default)
            if name not in attrs:
                unset.append(name)
    return values, rest, unset


def _data_line(numbers, note: dict | None) -> str:
    text = " ".join(str(x) for x in numbers)
    return f"{text} % {_json(note)}" if note else text


def hyperdag_text(G: nx.DiGraph, layout: str = "db", notes: bool = True) -> str:
    """``G`` as a HyperDAG file: node ``i`` is the ``i``-th node of ``G``.

    Parameters
    ----------
    G : networkx.DiGraph
        The DAG.
    layout : {"db", "plain"}
        HyperdagDB (hyperedge, vertex and pin lines) or the plain layout.
    notes : bool
        Keep ids and attributes in JSON comments (see the module docstring),
        so that reading the file back gives ``G``; without them the file
        holds the structure and integer weights only.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> print(hyperdag_text(chain(2), notes=False))
    %% HyperdagDB format written by spartition
    1 2 2
    0 1 1
    0 1 0
    1 1 0
    0 0
    0 1
    <BLANKLINE>
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown HyperDAG layout {layout!r}; expected one of {LAYOUTS}")
    nodes = list(G)
    index = {v: i for i, v in enumerate(nodes)}
    weighted = {"comm_weight", "mem_weight"} if layout == "db" else set()
    # a set: the loop below asks "v in sources" once per node (a list made the writer quadratic)
    sources = {v for v in nodes if G.out_degree(v) or weighted & G.nodes[v].keys()}
    pins = sum(1 + G.out_degree(v) for v in sources)
    out = ["%% HyperdagDB format written by spartition" if layout == "db"
           else "% HyperDAG (plain layout) written by spartition"]
    if notes:
        out.append(GRAPH_NOTE + _json(G.graph))
    out.append(f"{len(sources)} {len(nodes)} {pins}")
    node_lines, hyper_lines, pin_lines = [], [], []
    for v in nodes:
        attrs = dict(G.nodes[v])
        hyper_cols, hyper_unset = [1, 1], []
        if layout == "db":
            hyper_cols, hyper_rest, hyper_unset = _columns({k: attrs[k] for k in weighted if k in attrs}, "hyperedge")
            attrs = {k: x for k, x in attrs.items() if k not in weighted} | hyper_rest
        values, rest, unset = _columns(attrs, "vertex" if layout == "db" else "plain-node")
        note = {"id": v, "attrs": rest} | ({"unset": unset} if unset else {})
        node_lines.append(_data_line([index[v], *values], note if notes else None))
        if v in sources:
            e = len(hyper_lines)
            hyper_lines.append(_data_line([e, *hyper_cols], {"unset": hyper_unset} if notes and hyper_unset else None))
            inherited = {"comm_weight": hyper_cols[0]} if layout == "db" and "comm_weight" not in hyper_unset else {}
            pin_lines.append(f"{e} {index[v]}")
            for w in G.successors(v):
                a = G.edges[v, w]
                pin_lines.append(_data_line([e, index[w]], {"attrs": a} if notes and a != inherited else None))
    body = hyper_lines + node_lines + pin_lines if layout == "db" else pin_lines + node_lines
    return "\n".join(out + body) + "\n"


def write_hyperdag(G: nx.DiGraph, path, layout: str = "db", notes: bool = True) -> None:
    """Write ``G`` as a HyperDAG file; see :func:`hyperdag_text`."""
    Path(path).write_text(hyperdag_text(G, layout, notes))
