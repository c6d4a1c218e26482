"""spartition.core.evaluate: the op table, JSON-safe operands, errors, and assembly of tensors."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
import pytest

from spartition.families.attention.forward.dag import attention_forward
from spartition.families.classic.dag import chain, matmul, reduction
from spartition.core.dag import dag_from_json, dag_to_json
from spartition.errors import InvalidDAG, SpartitionError
from spartition.core.evaluate import OPS, assemble, evaluate, evaluate_array


def _dag(nodes, edges):
    G = nx.DiGraph()
    for name, attrs in nodes:
        G.add_node(name, **attrs)
    G.add_edges_from(edges)
    return G


def _small():
    """x = 2, y = 3, z = 5 and one node of every non-input op."""
    nodes = [
        ("x", {"op": "input", "entry": ("u", 0)}),
        ("y", {"op": "input", "entry": ("u", 1)}),
        ("z", {"op": "input", "entry": ("w", 1, 0)}),
        ("k", {"op": "const", "value": 0.5}),
        ("add", {"op": "add"}),
        ("mul", {"op": "mul"}),
        ("scale", {"op": "scale"}),
        ("exp", {"op": "exp"}),
        ("recip", {"op": "recip"}),
        ("sub", {"op": "sub", "args": ["y", "x"]}),
        ("subr", {"op": "sub", "args": ["x", "y"]}),
        ("div", {"op": "div", "args": ["z", "x"]}),
        ("cscale", {"op": "cscale", "coef": -3.0}),
        ("poly", {"op": "poly", "args": ["x", "y", "z"], "powers": [2, 0, 1], "coef": 0.25}),
        ("polyk", {"op": "poly", "args": ["k", "x"], "powers": [1, 3]}),
        ("deep", {"op": "add"}),
    ]
    edges = [
        ("x", "add"), ("y", "add"), ("z", "add"),
        ("x", "mul"), ("y", "mul"), ("z", "mul"),
        ("x", "scale"), ("z", "scale"),
        ("x", "exp"), ("y", "recip"),
        ("x", "sub"), ("y", "sub"), ("x", "subr"), ("y", "subr"),
        ("x", "div"), ("z", "div"), ("z", "cscale"),
        ("x", "poly"), ("y", "poly"), ("z", "poly"),
        ("k", "polyk"), ("x", "polyk"),
        ("add", "deep"), ("div", "deep"),
    ]
    return _dag(nodes, edges)


INPUTS = {"u": np.array([2.0, 3.0]), "w": np.array([[0.0], [5.0]])}


def test_every_op_by_hand():
    val = evaluate(_small(), INPUTS)
    assert val["x"] == 2.0 and val["y"] == 3.0 and val["z"] == 5.0 and val["k"] == 0.5
    assert val["add"] == 10.0
    assert val["mul"] == 30.0
    assert val["scale"] == 10.0
    assert val["exp"] == pytest.approx(math.exp(2.0))
    assert val["recip"] == pytest.approx(1 / 3)
    assert val["sub"] == 1.0 and val["subr"] == -1.0
    assert val["div"] == 2.5
    assert val["cscale"] == -15.0
    assert val["poly"] == 0.25 * 4 * 1 * 5
    assert val["polyk"] == 0.5 * 8
    assert val["deep"] == 12.5
    assert set(OPS) >= {"input", "add", "mul", "scale", "exp", "recip", "sub", "div", "cscale", "poly", "const"}


def test_args_survive_json():
    G = _small()
    H = dag_from_json(dag_to_json(G))
    assert evaluate(H, INPUTS) == evaluate(G, INPUTS)


def test_classic_families():
    assert evaluate(reduction(4, "tree"), {"x": np.array([1.0, 2.0, 3.0, 4.0])})["s"] == 10.0
    assert evaluate(chain(3), {"c": np.array([7.0])})["c2"] == 7.0  # scale of one pred is the identity
    A, B = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    G = matmul(2, 3, 4, shape="tree")
    np.testing.assert_array_equal(assemble(G, evaluate(G, {"A": A, "B": B}), "C"), A @ B)


def test_unknown_op_names_the_node():
    G = _dag([("a", {"op": "input", "entry": ("u", 0)}), ("b", {"op": "sqrt"})], [("a", "b")])
    with pytest.raises(InvalidDAG, match="'b'.*sqrt"):
        evaluate(G, INPUTS)


def test_missing_tensor_and_bad_index():
    G = _dag([("a", {"op": "input", "entry": ("Q", 0, 0)}), ("b", {"op": "exp"})], [("a", "b")])
    with pytest.raises(SpartitionError, match="'a'.*'Q'"):
        evaluate(G, INPUTS)
    with pytest.raises(SpartitionError, match="out of range"):
        evaluate(G, {"Q": np.zeros((0, 1))})
    with pytest.raises(SpartitionError, match="2 indices"):
        evaluate(G, {"Q": np.zeros(3)})


def test_operand_errors():
    G = _dag([("a", {"op": "input", "entry": ("u", 0)}), ("b", {"op": "input", "entry": ("u", 1)}),
              ("s", {"op": "sub"})], [("a", "s"), ("b", "s")])
    with pytest.raises(InvalidDAG, match="'s'.*args"):
        evaluate(G, INPUTS)
    G.nodes["s"]["args"] = ["a", "c"]
    with pytest.raises(InvalidDAG, match="'c'.*not a predecessor"):
        evaluate(G, INPUTS)
    E = _dag([("a", {"op": "input", "entry": ("u", 0)}), ("b", {"op": "input", "entry": ("u", 1)}),
              ("e", {"op": "exp"})], [("a", "e"), ("b", "e")])
    with pytest.raises(InvalidDAG, match="'e'.*exactly one"):
        evaluate(E, INPUTS)
    P = _dag([("a", {"op": "input", "entry": ("u", 0)}), ("b", {"op": "input", "entry": ("u", 1)}),
              ("p", {"op": "poly", "args": ["a"], "powers": [1]})], [("a", "p"), ("b", "p")])
    with pytest.raises(InvalidDAG, match="'p'.*every predecessor"):
        evaluate(P, INPUTS)


def test_evaluate_array_order_is_topological():
    c, vals = evaluate_array(reduction(3), {"x": np.array([1.0, 2.0, 4.0])})
    assert vals[c.index["s"]] == 7.0 and c.names.index("s") == len(c.names) - 1


def test_assemble_shapes_fill_and_errors():
    G = attention_forward(3, 1, mask="causal")
    rng = np.random.default_rng(1)
    val = evaluate(G, {t: rng.normal(size=(3, 1)) for t in "QKV"})
    A = assemble(G, val, "A", fill=0.0)
    assert A.shape == (3, 3) and A[0, 1] == 0.0 and A[0, 2] == 0.0 and A[1, 0] > 0
    S = assemble(G, val, "S", (3, 3), fill=-np.inf)  # d = 1: S read through the aliases
    assert S[0, 0] == val["QK_0_0_0"] and S[0, 1] == -np.inf
    with pytest.raises(SpartitionError, match="'nope'"):
        assemble(G, val, "nope")


def test_a_few_thousand_nodes():
    G = attention_forward(12, 6)
    assert G.number_of_nodes() == 3 * 72 + 4 * 144 * 6 + 144
    rng = np.random.default_rng(0)
    Q, K, V = (rng.normal(size=(12, 6)) * 0.3 for _ in range(3))
    O = assemble(G, evaluate(G, {"Q": Q, "K": K, "V": V}), "O")
    A = np.exp(Q @ K.T)
    np.testing.assert_allclose(O, (A / A.sum(1, keepdims=True)) @ V, atol=1e-12)
