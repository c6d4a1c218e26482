"""The S-partition certificate and its checker (P1-P4, minimum dominators, minimum sets)."""

import json

import networkx as nx
import pytest

from spartition.families.classic.dag import chain, fft, matmul, reduction
from spartition.errors import InvalidPartition
from spartition.partition.certificate import (
    Partition,
    check_partition,
    load_partition,
    min_dominator,
    minimum_set,
    save_partition,
)


def fork():
    """x -> y, x -> z: one input with two successors."""
    G = nx.DiGraph()
    G.add_node("x", op="input")
    G.add_node("y", op="op")
    G.add_node("z", op="op")
    G.add_edges_from([("x", "y"), ("x", "z")])
    return G


# --- minimum dominators and minimum sets, hand-computed -------------------------------


def test_dominators_matmul111():
    G = matmul(1, 1, 1)
    assert min_dominator(G, ["P_0_0_0"]) == ("P_0_0_0",)
    # inputs inside a class must be in D themselves
    assert sorted(min_dominator(G, ["A_0_0", "B_0_0", "P_0_0_0"])) == ["A_0_0", "B_0_0"]
    assert min_dominator(G, ["A_0_0"]) == ("A_0_0",)
    assert minimum_set(G, ["A_0_0", "B_0_0", "P_0_0_0"]) == ("P_0_0_0",)
    assert minimum_set(G, ["A_0_0", "B_0_0"]) == ("A_0_0", "B_0_0")


def test_dominators_fft2():
    G = fft(1)
    assert len(min_dominator(G, ["F1_0", "F1_1"])) == 2
    assert len(min_dominator(G, ["F0_0", "F0_1", "F1_0", "F1_1"])) == 2
    assert min_dominator(G, ["F1_0"]) == ("F1_0",)


def test_dominators_fft4():
    G = fft(2)
    # F2_0 <- F1_0, F1_2 ; F2_1 <- F1_1, F1_3: the two outputs are a cut of each other's size
    assert len(min_dominator(G, ["F2_0", "F2_1"])) == 2
    assert len(min_dominator(G, ["F2_0", "F2_1", "F2_2", "F2_3"])) == 4
    # one output depends on all four inputs but is itself a cut of size 1
    assert len(min_dominator(G, ["F2_0", "F1_0", "F1_2"])) == 2


def test_dominators_chain_and_tree():
    G = chain(6)
    for cls in (["c5"], ["c2", "c3", "c4"], [f"c{i}" for i in range(6)], ["c0", "c5"]):
        assert len(min_dominator(G, cls)) == 1
    assert minimum_set(G, ["c0", "c5"]) == ("c0", "c5")
    T = reduction(4, "tree")
    # the whole tree needs all 4 leaves; the root alone needs 1; the two level-0 sums need 2
    assert len(min_dominator(T, list(T))) == 4
    assert len(min_dominator(T, ["s"])) == 1
    level0 = [v for v in T if v.startswith("s~L0")]
    assert len(level0) == 2 and len(min_dominator(T, level0)) == 2


# --- valid partitions ---------------------------------------------------------------------


def test_accepts_valid_matmul111():
    G = matmul(1, 1, 1)
    rep = check_partition(G, Partition(2, [["A_0_0", "B_0_0", "P_0_0_0"]]))
    assert rep.valid and rep.problems == ()
    assert rep.dominator_sizes == (2,) and rep.min_set_sizes == (1,)
    rep = check_partition(G, Partition(1, [["A_0_0"], ["B_0_0"], ["P_0_0_0"]]))
    assert rep.valid and rep.dominator_sizes == (1, 1, 1)


def test_accepts_valid_fft_and_chain():
    G = fft(1)
    p = Partition(2, [["F0_0", "F0_1"], ["F1_0", "F1_1"]], dominators=[["F0_0", "F0_1"], ["F0_0", "F0_1"]])
    rep = check_partition(G, p)
    assert rep.valid
    assert all(c.given_dominator_ok for c in rep.classes)
    assert check_partition(chain(5), Partition(1, [[f"c{i}" for i in range(5)]])).valid
    # the S argument overrides the certificate's S
    assert not check_partition(G, p, S=1).valid


def test_accepts_matmul222_by_output():
    G = matmul(2, 2, 2)
    classes = [[f"A_{i}_{k}" for i in range(2) for k in range(2)] + [f"B_{k}_{j}" for k in range(2) for j in range(2)]]
    for i in range(2):
        for j in range(2):
            classes.append([f"P_{i}_{j}_0", f"P_{i}_{j}_1", f"C_{i}_{j}"])
    rep = check_partition(G, Partition(8, classes))
    assert rep.valid
    assert rep.dominator_sizes == (8, 2, 2, 2, 2) and rep.min_set_sizes == (8, 1, 1, 1, 1)


# --- violations ---------------------------------------------------------------------------


def test_rejects_p1():
    G = chain(3)
    rep = check_partition(G, Partition(1, [["c0"], ["c1"]]))
    assert not rep.valid
    assert [p.rule for p in rep.problems] == ["P1"] and "c2" in rep.problems[0].message
    rep = check_partition(G, Partition(1, [["c0", "c1"], ["c1", "c2"]]))
    (p,) = rep.problems
    assert p.rule == "P1" and p.cls == 1 and p.nodes == ("c1",)
    assert "class 0 and again in class 1" in p.message
    rep = check_partition(G, Partition(1, [["c0", "c1", "c2", "zz"]]))
    assert rep.problems[0].rule == "P1" and "zz" in rep.problems[0].message and "class 0" in rep.problems[0].message
    rep = check_partition(G, Partition(1, [["c0", "c1", "c2"], []]))
    assert rep.problems[0].message == "P1: class 1 is empty"


def test_rejects_p2_only():
    G = matmul(1, 1, 1)
    rep = check_partition(G, Partition(1, [["A_0_0", "B_0_0", "P_0_0_0"]]))
    (p,) = rep.problems
    assert p.rule == "P2" and p.cls == 0
    assert "class 0" in p.message and "A_0_0" in p.message and "2 nodes > S = 1" in p.message
    assert rep.min_set_sizes == (1,)


def test_rejects_p3_only():
    G = fork()
    rep = check_partition(G, Partition(1, [["x"], ["y", "z"]]))
    (p,) = rep.problems
    assert p.rule == "P3" and p.cls == 1 and set(p.nodes) == {"y", "z"}
    assert p.message == "P3: class 1 has a minimum set {y, z} of 2 nodes > S = 1"
    assert rep.dominator_sizes == (1, 1)


def test_rejects_p4_cycle():
    G = chain(3)
    rep = check_partition(G, Partition(1, [["c0", "c2"], ["c1"]]))
    assert [p.rule for p in rep.problems] == ["P3", "P4"]  # {c0, c2} also has two minimal nodes
    p4 = rep.problems[1]
    assert "c1 -> c2" in p4.message and "c0 -> c1" in p4.message
    assert "classes 0 -> 1 -> 0" in p4.message or "classes 1 -> 0 -> 1" in p4.message
    rep = check_partition(G, Partition(2, [["c0", "c2"], ["c1"]]))
    assert [p.rule for p in rep.problems] == ["P4"]


def test_out_of_order_but_acyclic_is_a_note():
    G = chain(3)
    rep = check_partition(G, Partition(1, [["c1", "c2"], ["c0"]]))
    assert rep.valid and rep.problems == ()
    assert "not listed in a topological order" in rep.notes[0] and "[1, 0]" in rep.notes[0]


def test_rejects_wrong_given_dominator():
    G = fft(1)
    p = Partition(2, [["F0_0", "F0_1"], ["F1_0", "F1_1"]], dominators=[["F0_0", "F0_1"], ["F0_0"]])
    rep = check_partition(G, p)
    (prob,) = rep.problems
    assert prob.rule == "P2" and prob.cls == 1
    assert "F0_1 -> F1_" in prob.message
    assert rep.classes[1].given_dominator_ok is False and rep.classes[0].given_dominator_ok is True
    # too large a given dominator, although a small one exists
    p = Partition(1, [["F0_0"], ["F0_1"], ["F1_0"], ["F1_1"]], dominators=[["F0_0"], ["F0_1"], ["F0_0", "F0_1"], ["F1_1"]])
    rep = check_partition(G, p)
    (prob,) = rep.problems
    assert prob.rule == "P2" and prob.cls == 2 and "2 nodes > S = 1" in prob.message
    # an input inside the class must be in the given dominator
    p = Partition(3, [["F0_0", "F0_1", "F1_0"], ["F1_1"]], dominators=[["F1_0", "F0_1"], ["F1_1"]])
    (prob,) = check_partition(G, p).problems
    assert prob.cls == 0 and "F0_0" in prob.message


def test_isolated_nodes():
    G = chain(3)
    G.add_node("iso", op="input")
    rep = check_partition(G, Partition(1, [["c0", "c1", "c2"]]))
    assert rep.valid and "iso" in rep.notes[0]
    rep = check_partition(G, Partition(1, [["c0", "c1", "c2", "iso"]]))
    assert [p.rule for p in rep.problems] == ["P2", "P3"]
    assert check_partition(G, Partition(2, [["c0", "c1", "c2", "iso"]])).valid


# --- the file format ----------------------------------------------------------------------


def test_roundtrip(tmp_path):
    p = Partition(4, [["a", "b"], ["c"]], dominators=[["a"], ["b"]], meta={"by": "hand"})
    path = tmp_path / "cert.json"
    save_partition(p, path)
    q = load_partition(path)
    assert q == p and q.meta == {"by": "hand"}
    assert json.loads(path.read_text())["classes"] == [["a", "b"], ["c"]]


@pytest.mark.parametrize(
    "text, words",
    [
        ("{not json", "unreadable JSON"),
        ("[1, 2]", "JSON object"),
        ('{"classes": [["a"]]}', "'S'"),
        ('{"S": 2}', "'classes'"),
        ('{"S": -1, "classes": []}', "non-negative"),
        ('{"S": "4", "classes": []}', "non-negative integer"),
        ('{"S": 2, "classes": ["a"]}', "classes[0]"),
        ('{"S": 2, "classes": [[null]]}', "not a node id"),
        ('{"S": 2, "classes": [["a"]], "dominators": [["a"], ["b"]]}', "2 sets but there are 1 classes"),
    ],
)
def test_malformed(tmp_path, text, words):
    path = tmp_path / "cert.json"
    path.write_text(text)
    with pytest.raises(InvalidPartition, match=words.replace("[", r"\[").replace("]", r"\]")):
        load_partition(path)


def test_missing_file(tmp_path):
    with pytest.raises(InvalidPartition, match="cannot read"):
        load_partition(tmp_path / "nope.json")
