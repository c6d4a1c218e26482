"""DOT files: round trips, colouring by pebbles and classes, foreign files, errors, the missing extra."""

import json
import re
import sys

import networkx as nx
import pytest

from spartition.cli.main import main
from spartition.core.dag import GENERIC_OP, dag_to_json, load_dag, new_dag, save_dag
from spartition.core.formats import MissingExtra
from spartition.core.formats.dot import STATE_COLOURS, dot_text, parse_dot
from spartition.core.registry import build, family_names
from spartition.errors import InvalidDAG

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import pydot  # noqa: F401, E402


def canonical(G):
    data = dag_to_json(G)
    return (json.dumps(data["nodes"], sort_keys=True),
            sorted(json.dumps(e, sort_keys=True) for e in data["edges"]),
            json.dumps(data["graph"], sort_keys=True))


@pytest.mark.parametrize("name", family_names())
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
    ("digraph {\n  a -> b;\n  c -> ;\n}\n", "line 3, column 5"),
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


def test_without_pydot_the_error_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "pydot", None)  # makes `import pydot` fail
    with pytest.raises(MissingExtra, match=r"pip install 'spartition\[dot\]'"):
        save_dag(nx.DiGraph(), tmp_path / "g.dot")
    (tmp_path / "h.dot").write_text("digraph { a -> b }")
    code = main(["info", str(tmp_path / "h.dot")])
    assert code == 2


def test_cli_builds_and_reads_dot(tmp_path, capsys):
    path = tmp_path / "mm.dot"
    assert main(["build", "matmul", "a=2", "b=1", "c=2", "-o", str(path)]) == 0
    capsys.readouterr()
    assert main(["info", str(path), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["family"] == "matmul" and info["nodes"] == build("matmul", ["a=2", "b=1", "c=2"]).number_of_nodes()
