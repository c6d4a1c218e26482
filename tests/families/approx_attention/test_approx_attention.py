"""Tests of the approximate-attention DAG family (spartition.families.approx_attention.dag)."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest

from spartition.families.approx_attention.dag import (
    approx_attention,
    approx_node_count,
    column_order,
    grouped_tiles,
    monomial_coef,
    monomials,
    paper_params,
    parse_column_order,
    reference_output,
    tau,
    u_matrices,
    value_node,
)
from spartition.core.dag import validate_dag
from spartition.core.evaluate import assemble, evaluate
from spartition.core.registry import build

GRID = [(1, 1, 1), (1, 3, 2), (2, 1, 3), (3, 2, 2), (4, 3, 1), (2, 4, 3), (5, 2, 4)]


def _inputs(n, d, seed, bound=1.0):
    rng = np.random.default_rng(seed)
    return {T: rng.uniform(-bound, bound, (n, d)) for T in ("Q", "K", "V")}


def _run(G, n, d, X):
    vals = evaluate(G, X)
    tensor = "O" if G.graph["params"]["normalize"] else "Out"
    return assemble(G, vals, tensor, (n, d))


def test_monomials_hand():
    # degree <= 2 in 2 variables: 1, x0, x0^2, x0 x1, x1, x1^2
    assert monomials(2, 2) == [(), (0,), (0, 0), (0, 1), (1,), (1, 1)]
    assert len(monomials(4, 3)) == tau(4, 3) == 35


def test_tau_closed_form_lemma_d1():
    # Lemma D.1: sum_l C(w + l - 1, l) = C(w + g, g)
    for w in range(1, 6):
        for g in range(0, 5):
            assert sum(math.comb(w + l - 1, l) for l in range(g + 1)) == tau(w, g)


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("n,d,g", GRID)
def test_node_count_closed_form(n, d, g, normalize):
    for shape in ("chain", "tree"):
        G = approx_attention(n, d, g, normalize=normalize, shape=shape)
        assert G.number_of_nodes() == approx_node_count(n, d, g, normalize)
        validate_dag(G)


def test_node_count_hand():
    # n = d = g = 1, r = 2: Q, K, V, U1, U2, R (= H_1_0), C0, P, Out.
    G = approx_attention(1, 1, 1)
    assert sorted(G) == sorted(["Q_0_0", "K_0_0", "V_0_0", "U1_0_1", "U2_0_1", "R_0_1_0", "C0_0", "P_0_0_1", "Out_0_0"])
    # normalised adds Dc, DP, Den, O (W_1 is U2_0_1 itself)
    assert approx_node_count(1, 1, 1, True) == 13


ORDERED = [(n, d, g, o) for n, d, g in GRID for o in ("lex", "graded", f"grouped-{g}", f"grouped-{g + 1}")]


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("n,d,g,order", ORDERED)
def test_dag_equals_numpy_product(n, d, g, normalize, order):
    X = _inputs(n, d, seed=n * 100 + d * 10 + g)
    for shape in ("chain", "tree"):
        G = approx_attention(n, d, g, normalize=normalize, order=order, shape=shape)
        out = _run(G, n, d, X)
        ref = reference_output(X["Q"], X["K"], X["V"], g, normalize)
        np.testing.assert_allclose(out, ref, rtol=1e-12, atol=1e-12)


def test_u_matrices_are_taylor_polynomial():
    X = _inputs(4, 3, seed=7)
    for g in (1, 2, 5):
        U1, U2 = u_matrices(X["Q"], X["K"], g)
        x = X["Q"] @ X["K"].T / math.sqrt(3)
        P = sum(x**l / math.factorial(l) for l in range(g + 1))
        np.testing.assert_allclose(U1 @ U2.T, P, rtol=1e-12)


def _softmax_attention(Q, K, V):
    S = Q @ K.T / math.sqrt(Q.shape[1])
    A = np.exp(S)
    return (A / A.sum(axis=1, keepdims=True)) @ V


@pytest.mark.parametrize("n,d,g", [(1, 1, 4), (3, 1, 5), (4, 2, 4), (3, 3, 5), (6, 2, 6)])
def test_normalised_dag_approximates_softmax(n, d, g):
    # |x| <= B with x = q.k / sqrt(d) and entries in [-1/2, 1/2]: B = sqrt(d) / 4.
    # Taylor: P(x) = e^x (1 + delta), |delta| <= e^{2B} B^{g+1} / (g+1)!; the
    # normalised weights then move by at most a factor 2 delta / (1 - delta).
    X = _inputs(n, d, seed=11 * n + d, bound=0.5)
    G = approx_attention(n, d, g, normalize=True)
    out = _run(G, n, d, X)
    B = math.sqrt(d) / 4
    delta = math.exp(2 * B) * B ** (g + 1) / math.factorial(g + 1)
    bound = 2 * delta / (1 - delta) * np.abs(X["V"]).max()
    err = np.abs(out - _softmax_attention(X["Q"], X["K"], X["V"])).max()
    assert err <= bound
    assert err > 0 or n == 1  # a real approximation, not exp itself (n = 1 is exact: one weight)


def test_structure_hand():
    G = approx_attention(2, 3, 2)
    mons = monomials(3, 2)
    a = mons.index((0, 2))
    node = G.nodes[f"U1_1_{a}"]
    assert node["op"] == "poly" and node["entry"] == ("U1", 1, a)
    assert sorted(G.predecessors(f"U1_1_{a}")) == ["Q_1_0", "Q_1_2"]
    assert node["args"] == ["Q_1_0", "Q_1_2"] and node["powers"] == [1, 1]
    # x0 x2 from (x0 k0 + x1 k1 + x2 k2)^2 / 2!: multinomial 2, Taylor 1/2, scale 1/sqrt(3)^2
    assert node["coef"] == pytest.approx(1 / 3)
    assert G.nodes[f"U2_0_{a}"]["coef"] == 1.0
    # the constant term is one cscale node per value column, shared by all rows
    assert G.nodes["C0_1"]["op"] == "cscale" and G.nodes["C0_1"]["coef"] == 1.0
    assert sorted(G.successors("C0_1")) == ["Out_0_1~1", "Out_1_1~1"]
    assert list(G.predecessors("C0_1")) == ["H_0_1"]
    assert sorted(G.predecessors("H_0_1")) == ["V_0_1", "V_1_1"]
    outputs = sorted(v for v in G if G.out_degree(v) == 0)
    assert outputs == [f"Out_{i}_{c}" for i in range(2) for c in range(3)]


def test_normalised_structure():
    G = approx_attention(3, 2, 2, normalize=True)
    assert G.nodes["Dc"]["op"] == "const" and G.nodes["Dc"]["value"] == 3.0
    assert G.in_degree("Dc") == 0
    assert G.nodes["O_1_0"]["op"] == "div" and G.nodes["O_1_0"]["args"] == ["Out_1_0", "Den_1"]
    assert sorted(v for v in G if G.out_degree(v) == 0) == [f"O_{i}_{c}" for i in range(3) for c in range(2)]
    assert sorted(G.predecessors("W_1")) == ["U2_2_1", "W_1~1"]


def test_chain_follows_column_order():
    for order in ("lex", "graded", "grouped-2"):
        G = approx_attention(1, 3, 2, order=order)
        cols = column_order(3, 2, order)
        assert G.graph["columns"] == cols
        assert sorted(G.predecessors("Out_0_0~1")) == sorted(["C0_0", f"P_0_0_{cols[0]}"])
        assert f"P_0_0_{cols[-1]}" in G.predecessors("Out_0_0")
        for t in range(2, len(cols)):
            assert f"P_0_0_{cols[t - 1]}" in G.predecessors(f"Out_0_0~{t}")


def test_one_term_aliases():
    G = approx_attention(1, 2, 1, normalize=True)
    assert value_node(G, "H_1_0") == "R_0_1_0"
    assert value_node(G, "H_0_1") == "V_0_1"
    assert value_node(G, "W_2") == "U2_0_2"
    assert value_node(G, "Out_0_0") == "Out_0_0"


@pytest.mark.parametrize("d,g,W", [(3, 2, 2), (4, 2, 2), (4, 2, 4), (6, 2, 4), (5, 3, 3), (6, 3, 6), (2, 3, 3), (7, 2, 3)])
def test_grouped_tiles_first_generating_tile(d, g, W):
    q = W // g
    m = math.ceil(d / q)
    tiles = grouped_tiles(d, g, W)
    subsets = list(combinations(range(m), g)) if m > g else [tuple(range(m))]
    assert [t[0] for t in tiles] == subsets
    # brute force: each monomial sits in the lexicographically first subset holding its groups
    mons = monomials(d, g)
    for k, (groups, vars_, cols) in enumerate(tiles):
        assert vars_ == [v for v in range(d) if v // q in groups]
        assert len(cols) >= 1
        assert len(cols) <= tau(len(vars_), g) - 1
        for a in cols:
            need = {v // q for v in mons[a]}
            first = next(t for t, s in enumerate(subsets) if need <= set(s))
            assert first == k
    assert sorted(a for t in tiles for a in t[2]) == list(range(1, len(mons)))
    # paper: a tile is at least (w/g)^g wide when every group is full
    if m > g and d % q == 0:
        assert min(len(t[2]) for t in tiles) >= q**g


def test_coefficients():
    assert monomial_coef((), 4) == 1.0
    assert monomial_coef((1, 1, 1), 1, scaled=False) == pytest.approx(1 / 6)
    assert monomial_coef((0, 1), 4) == pytest.approx(1 / 4)


def test_errors():
    with pytest.raises(ValueError, match="n, d, g >= 1"):
        approx_attention(0, 2, 2)
    with pytest.raises(ValueError, match="unknown column order"):
        approx_attention(2, 2, 2, order="random")
    with pytest.raises(ValueError, match="W >= g"):
        approx_attention(2, 2, 3, order="grouped-2")
    with pytest.raises(ValueError, match="shape"):
        approx_attention(2, 2, 2, shape="star")
    assert parse_column_order("grouped:5", 2) == ("grouped", 5)


def test_registry_and_paper_params():
    G = build("approx-attention", ["n=3", "d=2", "g=3", "normalize=true", "order=grouped-3"])
    assert G.graph["family"] == "approx-attention"
    assert G.number_of_nodes() == approx_node_count(3, 2, 3, True)
    assert paper_params(G) == {"n": 3, "d": 2, "g": 3, "r": 10, "Z_input": 18}
