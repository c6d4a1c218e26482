"""The CDAG model: node-link JSON, validation errors, compact form, content hash."""

import json
import re

import networkx as nx
import numpy as np
import pytest

from spartition.families.classic.dag import chain, fft, matmul
from spartition.core.dag import compact, dag_from_json, dag_hash, dag_to_json, load_dag, save_dag
from spartition.errors import InvalidDAG


def test_round_trip_keeps_attributes(tmp_path):
    G = matmul(2, 2, 2, shape="tree")
    path = tmp_path / "mm.json"
    save_dag(G, path)
    data = json.loads(path.read_text())
    assert "edges" in data and "links" not in data
    H = load_dag(path)
    assert H.graph["family"] == "matmul" and H.graph["params"]["shape"] == "tree"
    assert H.nodes["P_0_1_1"] == {"op": "mul", "entry": ("P", 0, 1, 1)}
    assert set(H.edges) == set(G.edges)
    assert dag_hash(H) == dag_hash(G)


def test_foreign_file_with_links_and_no_attributes():
    data = {"directed": True, "nodes": [{"id": 1}, {"id": 2}, {"id": "x"}],
            "links": [{"source": 1, "target": 2}, {"source": "x", "target": 2}]}
    G = dag_from_json(data)
    assert sorted(G) == ["1", "2", "x"]
    assert G.nodes["1"]["op"] == "input" and G.nodes["2"]["op"] == "op"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"},
                                                         {"source": "b", "target": "a"}]}, "cycle"),
        ({"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "a"}]}, "self-loop on node 'a'"),
        ({"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "zz"}]}, "unknown node 'zz'"),
        ({"nodes": [{"id": "a"}, {"id": "a"}], "edges": []}, "duplicate node id 'a'"),
        ({"edges": []}, "not node-link data"),
        ({"nodes": [{"name": "a"}]}, "node #0 has no 'id'"),
    ],
)
def test_invalid_graphs_are_named(data, message):
    with pytest.raises(InvalidDAG, match=message):
        dag_from_json(data)


def test_cycle_message_names_the_cycle():
    data = {"nodes": [{"id": v} for v in "abc"],
            "edges": [{"source": "a", "target": "b"}, {"source": "b", "target": "c"},
                      {"source": "c", "target": "b"}]}
    with pytest.raises(InvalidDAG, match="b -> c -> b|c -> b -> c") as err:
        dag_from_json(data)
    assert "b -> c -> b" in str(err.value) or "c -> b -> c" in str(err.value)


def test_unreadable_json(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text("{nodes: ")
    with pytest.raises(InvalidDAG, match="unreadable JSON"):
        load_dag(path)
    with pytest.raises(InvalidDAG, match="cannot read"):
        load_dag(tmp_path / "missing.json")


def test_compact_form_is_topological_csr():
    G = fft(2)
    c = compact(G)
    assert c.n == 12 and len(c.pred_idx) == 16 == len(c.succ_idx)
    for i in range(c.n):
        assert all(p < i for p in c.preds(i))  # topological numbering
        assert sorted(c.names[p] for p in c.preds(i)) == sorted(G.predecessors(c.names[i]))
        assert sorted(c.names[s] for s in c.succs(i)) == sorted(G.successors(c.names[i]))
    assert c.is_input.sum() == 4 and c.is_output.sum() == 4
    np.testing.assert_array_equal(c.in_degree(), [0] * 4 + [2] * 8)


def test_hash_ignores_insertion_order_but_not_structure():
    G = chain(4)
    H = nx.DiGraph()
    for v in reversed(list(G)):
        H.add_node(v, **G.nodes[v])
    H.add_edges_from(reversed(list(G.edges)))
    assert dag_hash(G) == dag_hash(H)
    H.nodes["c3"]["op"] = "exp"
    assert dag_hash(G) != dag_hash(H)


def test_to_json_is_plain_json():
    text = json.dumps(dag_to_json(matmul(1, 2, 1)))
    assert '"entry": ["P", 0, 0, 1]' in text


def test_compact_reorders_a_graph_inserted_out_of_order():
    G = fft(2)
    H = nx.DiGraph()
    H.add_nodes_from(reversed(list(G)))
    H.add_edges_from(G.edges)
    c = compact(H)
    # Kahn's order with ties broken by insertion position: F1_3 needs only F0_3 and F0_2
    assert c.names[:3] == ("F0_3", "F0_2", "F1_3")
    for i in range(c.n):
        assert all(p < i for p in c.preds(i))
    with pytest.raises(InvalidDAG, match="cycle"):
        H.add_edge("F2_0", "F0_0")
        compact(H)
