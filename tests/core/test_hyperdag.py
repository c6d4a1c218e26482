"""HyperDAG files: both layouts read as the intended DAG, round trips, errors naming file and line, the CLI."""

import json
import re

import pytest

from spartition.cli.main import main
from spartition.core.dag import GENERIC_OP, dag_to_json, load_dag, save_dag
from spartition.core.formats.hyperdag import hyperdag_text, parse_hyperdag
from spartition.core.registry import build, family_names
from spartition.errors import InvalidDAG

# every family that builds with its defaults (the file family needs a path)
BUILDABLE = [n for n in family_names() if n != "file"]


def canonical(G):
    """Nodes in order with attributes, edges as a set, graph attributes: what a round trip must keep."""
    data = dag_to_json(G)
    return (json.dumps(data["nodes"], sort_keys=True),
            sorted(json.dumps(e, sort_keys=True) for e in data["edges"]),
            json.dumps(data["graph"], sort_keys=True))


@pytest.mark.parametrize("layout", ["hdag", "hdag-plain"])
@pytest.mark.parametrize("name", BUILDABLE)
def test_node_link_hyperdag_node_link_keeps_everything(tmp_path, name, layout):
    G = build(name, [])
    path = tmp_path / f"{name}.hdag"
    save_dag(G, path, format=layout)
    H = load_dag(path)  # the reader tells the layouts apart by itself
    assert canonical(H) == canonical(G)
    again = tmp_path / "again.hdag"
    save_dag(H, again, format=layout)
    assert again.read_text() == path.read_text()


# s = a + b + c (one multi-operand sum: a node with three predecessors), t = a * s.
# Hyperedge 0 is a's (a -> s, t: one source, several sinks), 1 is b's, 2 is c's, 3 is s's.
PLAIN = """\
% a multi-operand sum, written by hand
4 5 9
0 0
0 3
0 4
1 1
1 3
2 2
2 3
3 3
3 4
0 1 4
1 1 4
2 1 4
3 3 8
4 2 8
"""

DB = """\
%% HyperdagDB format, by hand
% with comments between the sections, as OneStopParallel writes them
4 5 9
%% Hyperedges: ID comm_weight mem_weight
0 4 2
1 4 2
2 4 2 % a note of another tool, ignored
3 8 1
%% Vertices: ID work_weight type
0 1 0
1 1 0
2 1 0
3 3 1
4 2 0
%% Pins: HyperedgeID NodeID
3 3
3 4
0 0
0 3
0 4
1 1
1 3
2 2
2 3
"""

EDGES = [("0", "3"), ("0", "4"), ("1", "3"), ("2", "3"), ("3", "4")]


def test_plain_layout_by_hand(tmp_path):
    path = tmp_path / "sum.hdag"
    path.write_text(PLAIN)
    G = load_dag(path)
    assert list(G) == ["0", "1", "2", "3", "4"]
    assert sorted(G.edges) == EDGES
    assert sorted(G.predecessors("3")) == ["0", "1", "2"]
    assert [G.nodes[v]["op"] for v in G] == ["input", "input", "input", GENERIC_OP, GENERIC_OP]
    assert G.nodes["3"] == {"work_weight": 3, "comm_weight": 8, "op": GENERIC_OP}
    assert G.graph == {"params": {}}


def test_a_header_with_trailing_text_reads(tmp_path):
    # the format lets readers ignore what follows the three counts of the header
    assert "\n4 5 9\n" in PLAIN
    path = tmp_path / "sum.hdag"
    for tail in (" hyperedges, nodes and pins of a sum", " 17 extra"):
        path.write_text(PLAIN.replace("\n4 5 9\n", f"\n4 5 9{tail}\n"))
        assert sorted(load_dag(path).edges) == EDGES


def test_db_layout_by_hand(tmp_path):
    path = tmp_path / "sum.hdag"
    path.write_text(DB)
    G = load_dag(path)
    assert sorted(G.edges) == EDGES
    # a hyperedge's weights are its source's, and its communication weight is on each of its edges
    assert G.nodes["0"] == {"work_weight": 1, "type": 0, "comm_weight": 4, "mem_weight": 2, "op": "input"}
    assert G.nodes["3"] == {"work_weight": 3, "type": 1, "comm_weight": 8, "mem_weight": 1, "op": "type1"}
    assert G.nodes["4"] == {"work_weight": 2, "type": 0, "op": GENERIC_OP}
    assert G.edges["0", "4"] == {"comm_weight": 4} and G.edges["3", "4"] == {"comm_weight": 8}
    # and the weights survive a round trip through either layout's writer
    for layout in ("db", "plain"):
        H = parse_hyperdag(hyperdag_text(G, layout))
        H.graph.setdefault("params", {})
        assert canonical(H) == canonical(G), layout


def test_lhdag_files_read_in_either_layout(tmp_path):
    # OneStopParallel names its legacy (plain) layout .lhdag, yet some of its files hold the
    # HyperdagDB layout under that name: with the format given, the line count picks the layout
    for name, text in (("legacy.lhdag", PLAIN), ("db.lhdag", DB)):
        path = tmp_path / name
        path.write_text(text)
        for G in (load_dag(path, "hdag"), load_dag(path)):  # the extension alone selects HyperDAG
            assert sorted(G.edges) == EDGES, name
            assert G.nodes["3"]["work_weight"] == 3, name


def test_without_notes_the_structure_and_weights_remain():
    G = parse_hyperdag(DB)
    H = parse_hyperdag(hyperdag_text(G, "db", notes=False))
    assert sorted(H.edges) == EDGES
    assert dict(H.nodes(data=True)) == dict(G.nodes(data=True))


def test_family_file_reads_with_indices_without_notes():
    G = build("fft", [])
    text = hyperdag_text(G, "plain", notes=False)
    assert "{" not in text  # numbers only, for any HyperDAG reader
    H = parse_hyperdag(text)
    names = list(G)
    assert sorted(H.edges) == sorted((str(names.index(u)), str(names.index(v))) for u, v in G.edges)


BAD = [
    ("", None, "expected the header"),
    ("% only a comment\n", None, "expected the header"),
    ("2 3\n", 1, "expected the header"),
    ("1 2 2\n0 0\n0 1.5\n0 1 1\n1 1 1\n", 3, "'1.5' is not an integer"),
    ("1 2 2\n0 0\n0 1\n0 1 1\n", 4, "the file ends after 3 data lines"),
    ("1 2 2\n0 0\n0 1\n0 1 1\n1 1 1\n1 1 1\n0 0\n", 7, "6 data lines after the header"),
    ("1 2 2\n0 0\n0 5\n0 1 1\n1 1 1\n", 3, "node 5 is out of range 0..1"),
    ("1 2 2\n0 0\n3 1\n0 1 1\n1 1 1\n", 3, "hyperedge 3 is out of range 0..0"),
    ("1 2 2\n0 0\n0 1\n0 1 1\n0 1 1\n", 5, "node 0 is listed twice (first on line 4)"),
    ("2 2 4\n0 0\n0 1\n1 1\n1 0\n0 1 1\n1 1 1\n", 5, "the pins make a cycle: 0 -> 1 -> 0"),
    ("1 2 3\n0 0\n0 1\n0 0\n0 1 1\n1 1 1\n", 4, "cannot be its sink too"),
    ("1 2 3\n0 0\n0 1\n0 1\n0 1 1\n1 1 1\n", 4, "already a pin of hyperedge 0 (line 3)"),
    ("2 3 4\n0 0\n0 1\n1 0\n1 2\n0 1 1\n1 1 1\n2 1 1\n", 4, "already the source of hyperedge 0"),
    ("2 2 3\n0 1 1\n0 1 1\n0 1 0\n1 1 0\n0 0\n0 1\n1 1\n", 3, "hyperedge 0 is listed twice (first on line 2)"),
    ("% spartition graph [1]\n1 2 2\n0 0\n0 1\n0 1 1\n1 1 1\n", 1, "must be a JSON object"),
    ("% spartition graph {}\n1 2 2\n0 0\n0 1\n0 1 1 % {bad\n1 1 1\n", 5, "unreadable spartition note"),
]


@pytest.mark.parametrize("text, line, message", BAD)
def test_bad_files_name_file_and_line(tmp_path, text, line, message):
    path = tmp_path / "bad.hdag"
    path.write_text(text)
    where = f"HyperDAG file {path}" + (f", line {line}:" if line else ":")
    with pytest.raises(InvalidDAG, match=re.escape(message)) as info:
        load_dag(path)
    assert where in str(info.value)
    assert message in str(info.value)


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(InvalidDAG, match="cannot read DAG file .*nope.hdag"):
        load_dag(tmp_path / "nope.hdag")
    (tmp_path / "bin.hdag").write_bytes(b"\xff\xfe\x00")
    with pytest.raises(InvalidDAG, match="not UTF-8"):
        load_dag(tmp_path / "bin.hdag")


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_reads_writes_and_solves_hyperdag(tmp_path, capsys):
    path = tmp_path / "sum.hdag"
    path.write_text(PLAIN)
    code, out, _ = run(capsys, "info", path, "--json")
    assert code == 0 and json.loads(out)["nodes"] == 5 and json.loads(out)["max_in_degree"] == 3
    code, out, _ = run(capsys, "solve", path, "--M", 4, "--json")
    data = json.loads(out)
    assert code == 0 and data["status"] == "OPTIMAL"
    # 3 input loads + 1 output store, no spill at M = 4
    assert data["io"] == 4
    db = tmp_path / "sum-db.hdag"
    db.write_text(DB)
    code, out, _ = run(capsys, "solve", db, "--M", 4, "--json")
    assert code == 0 and json.loads(out)["io"] == 4
    built = tmp_path / "fft.hdag"
    assert run(capsys, "build", "fft", "k=1", "-o", built)[0] == 0
    assert built.read_text().startswith("%% HyperdagDB")
    code, out, _ = run(capsys, "info", built, "--json")
    assert code == 0 and json.loads(out)["family"] == "fft"


def test_cli_bad_hyperdag_exits_2_with_the_line(tmp_path, capsys):
    path = tmp_path / "bad.hdag"
    path.write_text("1 2 2\n0 0\n0 x\n0 1 1\n1 1 1\n")
    code, out, err = run(capsys, "info", path)
    assert code == 2
    assert f"HyperDAG file {path}, line 3: 'x' is not an integer" in err
    assert "Traceback" not in err
