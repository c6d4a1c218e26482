"""Computational DAGs: the node-link JSON format, validation, and the compact integer form.

A CDAG is a networkx ``DiGraph`` whose node ids are strings. Node attributes
``op`` (operation label) and ``entry`` (the tensor entry, a tuple such as
``("S", 0, 1)``); graph attributes ``family`` and ``params`` remember what
built it. Inputs are exactly the sources; outputs are the sinks and every node
marked with the attribute ``output`` set to ``True`` (a value another pass reads,
e.g. the forward output of a layer that the backward pass uses), which must end
in slow memory like a sink (docs/definitions.md section 1).

Inside hot loops every checker and solver uses :class:`CompactDAG`, an
integer form in topological order with CSR predecessor/successor arrays.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import numpy as np

from spartition.core.formats import read_text  # re-exported: the files of every format are read through it
from spartition.errors import InvalidDAG

__all__ = [
    "GENERIC_OP",
    "CompactDAG",
    "DAG_FORMATS",
    "dag_file",
    "as_compact",
    "compact",
    "dag_format",
    "dag_from_json",
    "dag_hash",
    "dag_to_json",
    "inputs",
    "load_dag",
    "marked_output",
    "new_dag",
    "outputs",
    "read_json",
    "read_text",
    "save_dag",
    "strip_isolated",
    "to_networkx",
    "topological_order",
    "validate_dag",
]

#: op label given to non-source nodes of DAG files that carry no ``op``.
GENERIC_OP = "op"

#: DAG file formats, each with the extensions that select it (any other extension reads as JSON).
#: ``hdag`` writes the HyperdagDB layout, ``hdag-plain`` the plain one (OneStopParallel's legacy
#: ``.lhdag``); both read either layout.
DAG_FORMATS = {"json": (".json",), "hdag": (".hdag",), "hdag-plain": (".lhdag",), "dot": (".dot", ".gv")}


def new_dag(family: str | None = None, params: dict | None = None) -> nx.DiGraph:
    """Return an empty CDAG that remembers the family and parameters that built it."""
    G = nx.DiGraph()
    if family is not None:
        G.graph["family"] = family
    G.graph["params"] = dict(params or {})
    return G


def inputs(G: nx.DiGraph) -> list[str]:
    """The inputs of ``G``: its sources, in node order."""
    # the adjacency view, not in_degree(v) per node: a 10^5-node DAG in milliseconds
    return [v for v, preds in G.pred.items() if not preds]


def marked_output(G: nx.DiGraph, v) -> bool:
    """Whether node ``v`` of ``G`` carries ``output: true``, the mark that makes any node an output.

    Raises
    ------
    InvalidDAG
        When the attribute is not a boolean (``"yes"``, ``1``): the mark is read one way only.

    Examples
    --------
    >>> G = nx.DiGraph([("x", "y"), ("y", "z")]); G.nodes["y"]["output"] = True
    >>> marked_output(G, "y"), marked_output(G, "z")
    (True, False)
    """
    mark = G.nodes[v].get("output", False)
    if not isinstance(mark, (bool, np.bool_)):
        raise InvalidDAG(f"node {v!r}: attribute 'output' must be true or false, got {mark!r}")
    return bool(mark)


def outputs(G: nx.DiGraph) -> list[str]:
    """The outputs of ``G``, in node order: its sinks and the nodes marked ``output: true``.

    A marked input is an input (already in slow memory), never an output to store.

    Examples
    --------
    >>> G = nx.DiGraph([("x", "y"), ("y", "z")]); G.nodes["y"]["output"] = True
    >>> outputs(G)
    ['y', 'z']
    """
    return [v for v, succs in G.succ.items() if not succs or (G.pred[v] and marked_output(G, v))]


def strip_isolated(G: nx.DiGraph) -> nx.DiGraph:
    """Return a copy of ``G`` without isolated nodes (input and output at once).

    Partition bounds are computed on this graph (docs/definitions.md section 3): an
    isolated node costs no I/O and never holds a red pebble.
    """
    H = G.copy()
    H.remove_nodes_from([v for v in G if G.degree(v) == 0])
    return H


def validate_dag(G: nx.DiGraph) -> None:
    """Raise :class:`InvalidDAG` unless ``G`` is a directed acyclic graph with string ids.

    The message of a cyclic graph names one cycle.
    """
    if not isinstance(G, nx.DiGraph) or G.is_multigraph():
        raise InvalidDAG(f"expected a networkx DiGraph, got {type(G).__name__}")
    for v in G:
        if not isinstance(v, str):
            raise InvalidDAG(_non_string_id(v))
    for v in G:
        if G.has_edge(v, v):
            raise InvalidDAG(f"graph has a cycle: self-loop on node {v!r}")
    if not nx.is_directed_acyclic_graph(G):
        cycle = [u for u, _ in nx.find_cycle(G)]
        raise InvalidDAG("graph has a cycle: " + " -> ".join(cycle + cycle[:1]))


def topological_order(G: nx.DiGraph) -> list[str]:
    """A deterministic topological order: Kahn's algorithm, ties broken by insertion order."""
    position = {v: i for i, v in enumerate(G)}
    indeg = {v: G.in_degree(v) for v in G}
    heap = [position[v] for v in G if indeg[v] == 0]
    heapq.heapify(heap)
    nodes = list(G)
    order = []
    while heap:
        v = nodes[heapq.heappop(heap)]
        order.append(v)
        for w in G.successors(v):
            indeg[w] -= 1
            if indeg[w] == 0:
                heapq.heappush(heap, position[w])
    if len(order) != len(nodes):
        validate_dag(G)  # names a cycle
    return order


@dataclass(frozen=True, eq=False)
class CompactDAG:
    """Integer form of a CDAG, nodes numbered in topological order.

    Attributes
    ----------
    names : tuple of str
        ``names[i]`` is the id of node ``i``.
    index : dict
        Inverse of ``names``.
    pred_ptr, pred_idx : numpy arrays
        CSR predecessors: node ``i``'s predecessors are
        ``pred_idx[pred_ptr[i]:pred_ptr[i + 1]]`` (sorted ascending).
    succ_ptr, succ_idx : numpy arrays
        CSR successors, likewise.
    is_input, is_output : numpy bool arrays
        Sources; outputs: sinks and non-source nodes marked ``output: true``
        (:func:`outputs`). A node is isolated when it is a source and a sink
        (:meth:`isolated`), not when it is an input and an output.
    ops : tuple of str
        The ``op`` label of each node.
    """

    names: tuple
    index: dict
    pred_ptr: np.ndarray
    pred_idx: np.ndarray
    succ_ptr: np.ndarray
    succ_idx: np.ndarray
    is_input: np.ndarray
    is_output: np.ndarray
    ops: tuple

    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.names)

    def preds(self, i: int) -> np.ndarray:
        """Predecessors of node ``i``."""
        return self.pred_idx[self.pred_ptr[i] : self.pred_ptr[i + 1]]

    def succs(self, i: int) -> np.ndarray:
        """Successors of node ``i``."""
        return self.succ_idx[self.succ_ptr[i] : self.succ_ptr[i + 1]]

    def in_degree(self) -> np.ndarray:
        """In-degree of every node."""
        return np.diff(self.pred_ptr)

    def out_degree(self) -> np.ndarray:
        """Out-degree of every node."""
        return np.diff(self.succ_ptr)

    def isolated(self) -> np.ndarray:
        """Nodes without any edge (input and output at once, never pebbled)."""
        return self.is_input & (np.diff(self.succ_ptr) == 0)

    def pred_lists(self) -> list[list[int]]:
        """Predecessors as plain Python lists (fast to iterate in pure-Python loops)."""
        p, q = self.pred_ptr.tolist(), self.pred_idx.tolist()
        return [q[p[i] : p[i + 1]] for i in range(self.n)]

    def succ_lists(self) -> list[list[int]]:
        """Successors as plain Python lists."""
        p, q = self.succ_ptr.tolist(), self.succ_idx.tolist()
        return [q[p[i] : p[i + 1]] for i in range(self.n)]


def _csr(n: int, src: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((dst, src))
    counts = np.bincount(src, minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, dst[order].astype(np.int32)


def _non_string_id(v) -> str:
    # ids are strings everywhere (files, schedules, results): the owner of the graph knows what its ids mean
    kind = type(v).__name__
    return (f"node id {v!r} is {'an' if kind[0] in 'aeiou' else 'a'} {kind}, not a string: spartition names nodes "
            "by strings; relabel the graph first, e.g. G = networkx.relabel_nodes(G, str)")


def compact(G: nx.DiGraph) -> CompactDAG:
    """Return the :class:`CompactDAG` of ``G``.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> c = compact(chain(3))
    >>> c.names, c.preds(2).tolist(), bool(c.is_input[0]), bool(c.is_output[2])
    (('c0', 'c1', 'c2'), [1], True, True)
    """
    nodes = list(G)
    for v in nodes:
        if not isinstance(v, str):
            raise InvalidDAG(_non_string_id(v))
    n, m = len(nodes), G.number_of_edges()
    position = {v: i for i, v in enumerate(nodes)}
    if m:
        us, vs = zip(*G.edges)
        src = np.fromiter(map(position.__getitem__, us), dtype=np.int64, count=m)
        dst = np.fromiter(map(position.__getitem__, vs), dtype=np.int64, count=m)
    else:
        src = dst = np.zeros(0, dtype=np.int64)
    if np.all(src < dst):
        # Insertion order is already topological (so G is acyclic), and it is
        # exactly what topological_order would return: keep it.
        names, index = tuple(nodes), position
    else:
        validate_dag(G)
        names = tuple(topological_order(G))
        index = {v: i for i, v in enumerate(names)}
        rank = np.fromiter((index[v] for v in nodes), dtype=np.int64, count=n)
        src, dst = rank[src], rank[dst]
    pred_ptr, pred_idx = _csr(n, dst, src)
    succ_ptr, succ_idx = _csr(n, src, dst)
    ops = tuple(G.nodes[v].get("op", GENERIC_OP) for v in names)
    is_input = np.diff(pred_ptr) == 0
    is_output = np.diff(succ_ptr) == 0
    for v in _marked(G):
        is_output[index[v]] |= not is_input[index[v]]
    return CompactDAG(
        names=names,
        index=index,
        pred_ptr=pred_ptr,
        pred_idx=pred_idx,
        succ_ptr=succ_ptr,
        succ_idx=succ_idx,
        is_input=is_input,
        is_output=is_output,
        ops=ops,
    )


def _marked(G: nx.DiGraph) -> list[str]:
    """The non-sink nodes marked ``output: true`` (a marked sink is an output anyway)."""
    return [v for v, succs in G.succ.items() if succs and "output" in G.nodes[v] and marked_output(G, v)]


def as_compact(dag) -> CompactDAG:
    """``dag`` in compact form: a CompactDAG as it is, a networkx DAG compacted.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> c = as_compact(chain(3))
    >>> as_compact(c) is c, c.n
    (True, 3)
    """
    return dag if isinstance(dag, CompactDAG) else compact(dag)


def to_networkx(dag: CompactDAG, drop=None) -> nx.DiGraph:
    """The networkx form of a CompactDAG (ids and ``op``), without the nodes flagged in ``drop``.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> sorted(to_networkx(compact(chain(3))).edges())
    [('c0', 'c1'), ('c1', 'c2')]
    """
    G = nx.DiGraph()
    sinks = dag.out_degree() == 0
    for v in range(dag.n):
        if drop is None or not drop[v]:
            G.add_node(dag.names[v], op=dag.ops[v])
            if dag.is_output[v] and not sinks[v]:
                G.nodes[dag.names[v]]["output"] = True  # an output beyond the sinks keeps its mark
    for v in range(dag.n):
        if drop is not None and drop[v]:
            continue
        for w in dag.succs(v):
            if drop is None or not drop[int(w)]:
                G.add_edge(dag.names[v], dag.names[int(w)])
    return G


def _jsonable(value):
    if isinstance(value, tuple):
        return [_jsonable(x) for x in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(x) for k, x in value.items()}
    if isinstance(value, list):
        return [_jsonable(x) for x in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def dag_to_json(G: nx.DiGraph) -> dict:
    """The node-link form of ``G`` (``edges`` key), ready for ``json.dump``."""
    data = nx.node_link_data(G, edges="edges")
    return _jsonable(data)


def _short(value, width: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def _node_id(value, where: str) -> str:
    # bool is an int to Python, but `true` is no node id a user means
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        # a list is how json writes a tuple id, the usual way networkx graphs name entries: give the fix
        hint = ("; a tuple id such as ('A', 0, 1) is written as a list: relabel the graph before saving it, "
                "G = networkx.relabel_nodes(G, str)") if isinstance(value, list) else ""
        raise InvalidDAG(f"{where}: node id {_short(value)} is not a string or a number{hint}")
    return str(value)


def dag_from_json(data) -> nx.DiGraph:
    """Build a CDAG from node-link data (a dict), validating it.

    Accepts the ``edges`` key and the older ``links`` key, node ids that are
    JSON strings or numbers (converted to strings) and nodes without attributes (the
    ``op`` then defaults to ``"input"`` on sources and ``GENERIC_OP`` elsewhere).
    Edge attributes (every key but ``source`` and ``target``) are kept.

    Raises
    ------
    InvalidDAG
        On duplicate ids, ids that are not strings or numbers, edges naming
        unknown nodes, an edge listed twice, data marked undirected
        (``"directed": false``) or a multigraph, cycles, a ``graph`` or
        ``graph.params`` that is not an object, or a malformed layout.

    Examples
    --------
    >>> G = dag_from_json({"nodes": [{"id": 0}, {"id": 3}], "edges": [{"source": 0, "target": 3, "comm_weight": 1}]})
    >>> list(G.edges(data=True))
    [('0', '3', {'comm_weight': 1})]
    """
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), list):
        raise InvalidDAG("not node-link data: expected an object with a 'nodes' list")
    key = "edges" if "edges" in data else "links" if "links" in data else None
    edges = data.get(key, []) if key else []
    if not isinstance(edges, list):
        raise InvalidDAG(f"'{key}' must be a list")
    graph = data.get("graph")
    if graph is not None and not isinstance(graph, dict):
        raise InvalidDAG(f"'graph' must be an object of graph attributes, got {type(graph).__name__} {_short(graph)}")
    # a DAG is directed and has one edge per pair: other graphs are not read as some DAG they are not
    if data.get("directed", True) is not True:
        raise InvalidDAG("node-link data marked \"directed\": false is an undirected graph; a DAG is directed")
    if data.get("multigraph", False) is not False:
        raise InvalidDAG("node-link data marked \"multigraph\": true; a DAG has at most one edge per pair of nodes")
    G = nx.DiGraph()
    G.graph.update(graph or {})
    if G.graph.get("params") is None:
        G.graph["params"] = {}
    elif not isinstance(G.graph["params"], dict):
        params = G.graph["params"]
        raise InvalidDAG(f"'graph.params' must be an object, got {type(params).__name__} {_short(params)}")
    for k, node in enumerate(data["nodes"]):
        if not isinstance(node, dict) or "id" not in node:
            raise InvalidDAG(f"node #{k} has no 'id'")
        v = _node_id(node["id"], f"node #{k}")
        if v in G:
            raise InvalidDAG(f"duplicate node id {v!r}")
        attrs = {a: x for a, x in node.items() if a != "id"}
        if isinstance(attrs.get("entry"), list):
            attrs["entry"] = tuple(attrs["entry"])
        G.add_node(v, **attrs)
    for k, edge in enumerate(edges):
        if not isinstance(edge, dict) or "source" not in edge or "target" not in edge:
            raise InvalidDAG(f"edge #{k} needs 'source' and 'target'")
        u = _node_id(edge["source"], f"edge #{k} source")
        v = _node_id(edge["target"], f"edge #{k} target")
        for end in (u, v):
            if end not in G:
                raise InvalidDAG(f"edge #{k} ({u!r} -> {v!r}) names unknown node {end!r}")
        if G.has_edge(u, v):
            raise InvalidDAG(f"edge #{k} ({u!r} -> {v!r}) is listed twice; a DAG has one edge per pair of nodes")
        G.add_edge(u, v, **{a: x for a, x in edge.items() if a not in ("source", "target")})
    validate_dag(G)
    _default_ops(G)
    return G


def _default_ops(G: nx.DiGraph) -> None:
    for v in G:
        if "op" not in G.nodes[v]:
            G.nodes[v]["op"] = "input" if G.in_degree(v) == 0 else GENERIC_OP


def dag_format(path, format: str | None = None) -> str:
    """The format of a DAG file: ``format`` if given (checked), else the one its extension selects.

    Examples
    --------
    >>> dag_format("mm.hdag"), dag_format("g.gv"), dag_format("g.txt"), dag_format("g.txt", "hdag-plain")
    ('hdag', 'dot', 'json', 'hdag-plain')
    >>> dag_format("bicgstab.lhdag")
    'hdag-plain'
    """
    if format is not None:
        if format not in DAG_FORMATS:
            raise InvalidDAG(f"unknown DAG file format {format!r}; expected one of {', '.join(DAG_FORMATS)}")
        return format
    suffix = Path(path).suffix.lower()
    return next((name for name, exts in DAG_FORMATS.items() if suffix in exts), "json")


def _read_other(path, fmt: str) -> nx.DiGraph:
    # deferred: most files are JSON, and the format modules are only needed for the others
    if fmt == "dot":
        from spartition.core.formats.dot import read_dot

        G = read_dot(path)
    else:
        from spartition.core.formats.hyperdag import read_hyperdag

        G = read_hyperdag(path)
    # the same checks and defaults as node-link data, so every format yields the same kind of CDAG
    try:
        validate_dag(G)
        params = G.graph.setdefault("params", {})
        if not isinstance(params, dict):
            raise InvalidDAG(f"'graph.params' must be an object, got {type(params).__name__} {_short(params)}")
    except InvalidDAG as exc:
        raise InvalidDAG(f"DAG file {path}: {exc}") from None
    for v, attrs in G.nodes(data=True):
        if isinstance(attrs.get("entry"), list):
            attrs["entry"] = tuple(attrs["entry"])
    _default_ops(G)
    return G


def load_dag(path, format: str | None = None) -> nx.DiGraph:
    """Read a CDAG from a file: node-link JSON, HyperDAG (``.hdag``) or DOT (``.dot``, ``.gv``).

    Parameters
    ----------
    path : str or Path
        The file.
    format : str, optional
        One of :data:`DAG_FORMATS`; by default the extension decides (JSON
        unless it names another format).

    Raises
    ------
    InvalidDAG
        If the file is missing or unreadable in its format (naming the file,
        and the line where the format has lines), or does not describe a DAG.
    """
    fmt = dag_format(path, format)
    if fmt != "json":
        return _read_other(path, fmt)
    data = read_json(path, InvalidDAG, "DAG")
    try:
        return dag_from_json(data)
    except InvalidDAG as exc:
        raise InvalidDAG(f"DAG file {path}: {exc}") from None


def dag_file(path: str, sha256: str = "") -> nx.DiGraph:
    """A DAG read from a file, as a family (``file``): what ``spartition compare FILE`` studies.

    The study's key holds the file's path and the hash of the DAG it held,
    so results stored for one content never answer for another.

    Parameters
    ----------
    path : str
        The file, in any format of :func:`load_dag`.
    sha256 : str
        The :func:`dag_hash` the file must still have ("": any).

    Raises
    ------
    InvalidDAG
        If the file is unreadable, or its DAG no longer has hash ``sha256``.

    Examples
    --------
    >>> import tempfile, os
    >>> from spartition.families.classic.dag import chain
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> save_dag(chain(3), path)
    >>> G = dag_file(path)
    >>> G.graph["family"], G.graph["params"]["sha256"] == dag_hash(chain(3)), len(G)
    ('file', True, 3)
    """
    if not path:
        raise InvalidDAG("the file family needs path=FILE")
    G = load_dag(path)
    found = dag_hash(G)
    if sha256 and found != sha256:
        raise InvalidDAG(f"DAG file {path} changed: its DAG has hash {found[:12]}..., the study is of "
                         f"{sha256[:12]}...; study it again under its new content")
    G.graph["family"] = "file"
    G.graph["params"] = {"path": str(path), "sha256": found}
    return G


def read_json(path, error: type[Exception], what: str):
    """The parsed JSON of a file; an unreadable file or bad JSON raises ``error`` naming the file.

    Examples
    --------
    >>> from spartition.errors import InvalidDAG
    >>> read_json("/nonexistent.json", InvalidDAG, "DAG")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: cannot read DAG file /nonexistent.json: No such file or directory
    """
    text = read_text(path, error, what)
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"unreadable JSON in {path}: {exc}") from exc
    except RecursionError:
        raise error(f"unreadable JSON in {path}: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's digit limit
        raise error(f"unreadable JSON in {path}: {exc}") from None


def save_dag(G: nx.DiGraph, path, format: str | None = None) -> None:
    """Write ``G`` as node-link JSON, HyperDAG or DOT, by ``format`` or else by extension (see :func:`load_dag`).

    Every format keeps the ids, edges and attributes: :func:`load_dag` reads
    the file back as ``G``.
    """
    fmt = dag_format(path, format)
    if fmt == "dot":
        from spartition.core.formats.dot import write_dot

        write_dot(G, path)
    elif fmt.startswith("hdag"):
        from spartition.core.formats.hyperdag import write_hyperdag

        write_hyperdag(G, path, layout="plain" if fmt == "hdag-plain" else "db")
    else:
        Path(path).write_text(json.dumps(dag_to_json(G)) + "\n")


def dag_hash(G: nx.DiGraph) -> str:
    """A stable content hash (hex sha256) of the nodes, their ops, and the edges.

    Independent of insertion order, of the graph attributes and of the node attributes
    other than ``op`` and the ``output`` mark of a non-sink, so the same computation built
    twice, or read back from a file, hashes the same.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> dag_hash(chain(3)) == dag_hash(chain(3)) != dag_hash(chain(4))
    True
    """
    nodes = sorted((v, str(G.nodes[v].get("op", GENERIC_OP))) for v in G)
    edges = sorted((u, v) for u, v in G.edges)
    # outputs beyond the sinks change the game, so they change the hash; a DAG without them
    # keeps the hash it always had (stored results stay keyed as they were)
    marked = sorted(v for v in _marked(G) if G.pred[v])
    blob = json.dumps([nodes, edges, marked] if marked else [nodes, edges], separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()
