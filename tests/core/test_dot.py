"""DOT files: round trips, colouring by pebbles and classes, files written by Graphviz, networkx and OneStopParallel, errors."""

import json
import re
import sys
from pathlib import Path

import networkx as nx
import pytest

from spartition.cli.main import main
from spartition.core.dag import GENERIC_OP, dag_to_json, load_dag, new_dag, save_dag
from spartition.core.formats.dot import MAX_DEPTH, STATE_COLOURS, dot_text, parse_dot
from spartition.core.registry import build, family_names
from spartition.errors import InvalidDAG

# every family that builds with its defaults (the file family needs a path)
BUILDABLE = [n for n in family_names() if n != "file"]

DATA = Path(__file__).resolve().parents[1] / "data" / "dot"


def canonical(G):
    data = dag_to_json(G)
    return (json.dumps(data["nodes"], sort_keys=True),
            sorted(json.dumps(e, sort_keys=True) for e in data["edges"]),
            json.dumps(data["graph"], sort_keys=True))


@pytest.mark.parametrize("name", BUILDABLE)
def test_node_link_dot_node_link_keeps_everything(tmp_path, name):
    G = build(name, [])
    path = tmp_path / f"{name}.dot"
    save_dag(G, path)
    H = load_dag(path)
    assert canonical(H) == canonical(G)
    assert list(H) == list(G)


def awkward():
    """Ids that are DOT keywords or need escapes, and values of every JSON type, strings that look like JSON."""
    G = new_dag("hand", {"note": 'say "hi"', "k": [1, 2], "flag": True})
    names = ["node", "edge", 'a"b', "x\\y", "two\nlines", "1.5", "-3", "é"]
    G.add_node(names[0], op="input", entry=("A", 0))
    for prev, v in zip(names, names[1:]):
        G.add_node(v, op="add", text="3", empty="", none=None, num=2.5, flag=False, back="end\\")
        G.add_edge(prev, v, w=1, label="true")
    return G


def test_awkward_ids_and_values_round_trip(tmp_path):
    G = awkward()
    path = tmp_path / "g.gv"
    save_dag(G, path)
    assert canonical(load_dag(path)) == canonical(G)


def test_coloured_export_reads_back_as_the_dag(tmp_path):
    G = build("fft", [])
    v0, v1, *_ = list(G)
    text = dot_text(G, state={v0: "red", v1: "both"}, title="step 3")
    assert f'fillcolor="{STATE_COLOURS["red"]}"' in text and f'fillcolor="{STATE_COLOURS["both"]}"' in text
    assert f'fillcolor="{STATE_COLOURS["none"]}"' in text and "step 3: red" in text
    assert canonical(parse_dot(text)) == canonical(G)
    classes = [list(G)[:2], list(G)[2:]]
    text = dot_text(G, classes=classes)
    assert text.count('tooltip="class 0"') == 2 and text.count('tooltip="class 1"') == 2
    (tmp_path / "c.dot").write_text(text)
    assert canonical(load_dag(tmp_path / "c.dot")) == canonical(G)
    with pytest.raises(ValueError, match="state of node .* is 'green'"):
        dot_text(G, state={v0: "green"})


FOREIGN = """\
/* a file from another tool */
strict digraph "kernel" {
  rankdir=LR;
  node [shape=box];
  subgraph cluster_in { a; b [weight=2]; }
  a -> s; b -> s;  // a sum
  s -> t [label="x"];
  a -> t;
}
"""


def test_foreign_dot_file(tmp_path):
    path = tmp_path / "k.dot"
    path.write_text(FOREIGN)
    G = load_dag(path)
    assert sorted(G.edges) == [("a", "s"), ("a", "t"), ("b", "s"), ("s", "t")]
    assert G.nodes["b"] == {"weight": 2, "op": "input"} and G.nodes["s"]["op"] == GENERIC_OP
    assert G.edges["s", "t"] == {"label": "x"}
    assert G.graph == {"rankdir": "LR", "params": {}}


@pytest.mark.parametrize("text, message", [
    ("digraph {\n  a -> b;\n  c -> ;\n}\n", "line 3, column 8: expected a name or quoted string, got ';'"),
    ("digraph { a -> b; a -> b }", "line 1: the edge a -> b is written twice (first on line 1)"),
    ("digraph { a -- b }", "'--' in a digraph"),
    ('digraph { "a -> b }', "line 1, column 11: unexpected an unterminated string"),
    ("digraph { a /* b -> c }", "unexpected an unterminated comment"),
    ("digraph { a -> b ", "expected '}', got the end of the file"),
    ("graph { a -- b }", "an undirected graph"),
    ("digraph { a } digraph { b }", "holds 2 graphs"),
    ("digraph { a -> b -> a }", "graph has a cycle: a -> b -> a"),
    ("", "line 1"),
])
def test_bad_dot_files(tmp_path, text, message):
    path = tmp_path / "bad.dot"
    path.write_text(text)
    with pytest.raises(InvalidDAG, match=re.escape(message)) as info:
        load_dag(path)
    assert str(path) in str(info.value) and message in str(info.value)


def test_without_pydot_dot_files_are_read_and_written(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pydot", None)  # makes `import pydot` fail: the format does not need it
    G = build("fft", ["k=1"])
    save_dag(G, tmp_path / "g.dot")
    assert canonical(load_dag(tmp_path / "g.dot")) == canonical(G)
    (tmp_path / "h.dot").write_text("digraph { a -> b }")
    assert main(["info", str(tmp_path / "h.dot")]) == 0


# Graphviz's own counts (gvpr nNodes, nEdges) of the sample files, and their edges
SAMPLES = {
    "graphviz_canon_kernel.gv": (7, [("a", "b c"), ("a", "d"), ("b c", "e"), ("d", "g"), ("d", "h"),
                                     ("e", "f"), ("f", "g")]),
    "graphviz_canon_diamond_ports.gv": (4, [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d")]),
    "networkx_write_dot.dot": (4, [("0", "2"), ("1", "2"), ("2", "3")]),
    "onestopparallel_graph.dot": (4, [("0", "2"), ("0", "3"), ("1", "2"), ("2", "3")]),
    "onestopparallel_coloured.dot": (3, [("0", "1"), ("0", "2"), ("1", "2")]),
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_files_of_other_writers_read_as_graphviz_reads_them(name):
    # written by `dot -Tcanon`, networkx.nx_pydot.write_dot and OneStopParallel's DotFileWriter
    G = load_dag(DATA / name)
    nodes, edges = SAMPLES[name]
    assert G.number_of_nodes() == nodes and sorted(G.edges) == edges


def test_attributes_of_other_writers():
    G = load_dag(DATA / "onestopparallel_graph.dot")
    assert G.nodes["0"] == {"work_weight": 5, "comm_weight": 4, "mem_weight": 1, "type": 0, "op": "input"}
    assert G.edges["0", "2"] == {"comm_weight": 4}
    H = load_dag(DATA / "onestopparallel_coloured.dot")
    assert H.nodes["2"]["proc"] == "(0,1)" and H.nodes["2"]["cs"] == "[(1,2,3);(0,1,1)]"
    assert H.nodes["0"]["fillcolor"] == "lightcoral"
    K = load_dag(DATA / "graphviz_canon_kernel.gv")
    assert K.graph["rankdir"] == "LR" and K.nodes["b c"]["label"] == "<b>b</b> c"
    assert K.edges["d", "h"] == {"w": 3} and K.nodes["a"]["weight"] == 2
    X = load_dag(DATA / "networkx_write_dot.dot")
    assert X.nodes["0"] == {"op": "input", "weight": 3} and X.nodes["2"]["label"] == "sum of 0, 1"
    assert X.edges["0", "2"] == {"comm_weight": 1}


def test_graphviz_canonical_form_of_an_export_is_the_same_dag():
    # tests/data/dot/graphviz_canon_fft2.gv is `dot -Tcanon` of save_dag(build("fft", ["k=2"]), ...)
    G = build("fft", ["k=2"])
    H = load_dag(DATA / "graphviz_canon_fft2.gv")
    nodes, edges, graph = canonical(H)
    assert sorted(json.loads(nodes), key=str) == sorted(json.loads(canonical(G)[0]), key=str)
    assert (edges, graph) == canonical(G)[1:]


def test_ports_do_not_change_the_answer(tmp_path, capsys):
    # read as 6 nodes this diamond had "OPTIMAL 5" at M = 3; Graphviz's graph is the 4-node diamond, optimum 2
    path = tmp_path / "d.dot"
    path.write_text("digraph { a:p1 -> b:s; a:n -> c; b -> d; c -> d }")
    assert main(["solve", str(path), "--M", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["status"], out["io"]) == ("OPTIMAL", 2)


def test_grammar_corners():
    G = parse_dot('STRICT DiGraph { a -> {b; c} -> d; "x" + "y" -> a; e:n:s; f [filled] [w=1, v=2;] '
                  '\n# a preprocessor line\n g; a -> b }')
    assert sorted(G.edges) == [("a", "b"), ("a", "c"), ("b", "d"), ("c", "d"), ("xy", "a")]
    assert G.nodes["f"] == {"filled": True, "w": 1, "v": 2} and "e" in G and "g" in G
    assert "#" not in "".join(G)


def test_deep_nesting_is_refused_not_a_crash():
    deep = "digraph { " + "{ " * (MAX_DEPTH + 1) + "a" + " }" * (MAX_DEPTH + 1) + " }"
    with pytest.raises(InvalidDAG, match=f"subgraphs nested more than {MAX_DEPTH} deep"):
        parse_dot(deep)
    ok = "digraph { " + "{ " * MAX_DEPTH + "a -> b" + " }" * MAX_DEPTH + " }"
    assert list(parse_dot(ok).edges) == [("a", "b")]
    with pytest.raises(InvalidDAG, match="subgraphs nested"):
        parse_dot("digraph { " + "{ " * 100000 + " }")


def test_cli_builds_and_reads_dot(tmp_path, capsys):
    path = tmp_path / "mm.dot"
    assert main(["build", "matmul", "a=2", "b=1", "c=2", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["family"] == "matmul" and info["nodes"] == build("matmul", ["a=2", "b=1", "c=2"]).number_of_nodes()
