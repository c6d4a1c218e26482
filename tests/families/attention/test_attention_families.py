"""Attention DAG families: node counts in closed form, naming, masks, and that they compute attention."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from spartition.families.attention.forward.dag import attention_forward, forward_node_count, paper_params, value_node
from spartition.families.attention.backward.dag import (
    attention_backward_flash,
    attention_backward_weights,
    flash_backward_node_count,
    weights_backward_node_count,
)
from spartition.families.attention.masks import MASKS, mask_pairs, mask_rows
from spartition.families.classic.matmul_chain import matmul_chain, matmul_chain_node_count
from spartition.core.dag import dag_from_json, dag_to_json, inputs, outputs
from spartition.core.evaluate import assemble, evaluate
from spartition.core.registry import build

MASK_KW = {"window": 1, "block": 2, "density": 0.4, "seed": 3}
SIZES = [(1, 1), (1, 3), (2, 1), (3, 2), (4, 3)]


# ---------------------------------------------------------------- masks


def test_mask_sizes_by_hand():
    assert len(mask_pairs(4, "none")) == 16
    assert len(mask_pairs(4, "causal")) == 10
    assert len(mask_pairs(4, "window", window=1)) == 10  # 4 + 2 * 3
    assert len(mask_pairs(5, "block", block=2)) == 4 + 4 + 1
    assert mask_pairs(3, "window", window=0) == {(0, 0), (1, 1), (2, 2)}


@pytest.mark.parametrize("mask", MASKS)
def test_every_mask_keeps_the_diagonal(mask):
    for n in (1, 2, 5):
        pairs = mask_pairs(n, mask, **MASK_KW)
        assert all((i, i) in pairs for i in range(n))
        assert all(0 <= i < n and 0 <= j < n for i, j in pairs)


def test_random_mask_is_seeded_and_density_extremes():
    assert mask_pairs(6, "random", density=0.5, seed=1) == mask_pairs(6, "random", density=0.5, seed=1)
    assert mask_pairs(6, "random", density=0.5, seed=1) != mask_pairs(6, "random", density=0.5, seed=2)
    assert len(mask_pairs(5, "random", density=0.0)) == 5
    assert len(mask_pairs(5, "random", density=1.0)) == 25


def test_bad_masks_raise():
    with pytest.raises(ValueError, match="unknown mask 'diagonal'; expected one of"):
        mask_pairs(3, "diagonal")
    with pytest.raises(ValueError, match="block mask needs block >= 1, got 0"):
        mask_pairs(3, "block", block=0)
    with pytest.raises(ValueError, match="a mask needs n >= 1, got n=0"):
        mask_pairs(0)


# ---------------------------------------------------------------- node counts


@pytest.mark.parametrize("shape", ["chain", "tree"])
@pytest.mark.parametrize("n,d", list(itertools.product(range(1, 5), range(1, 5))))
def test_forward_dense_count_is_3nd_4n2d_n2(n, d, shape):
    G = attention_forward(n, d, shape=shape)
    assert G.number_of_nodes() == 3 * n * d + 4 * n * n * d + n * n
    assert len(inputs(G)) == 3 * n * d
    assert sorted(outputs(G)) == sorted(f"O_{i}_{c}" for i in range(n) for c in range(d))


def test_forward_count_does_not_depend_on_order():
    base = attention_forward(3, 3).number_of_nodes()
    assert attention_forward(3, 3, order="2,0,1", jorder="1,2,0", shape="tree").number_of_nodes() == base


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_masked_counts(mask, shape):
    for n, d in SIZES:
        z = len(mask_pairs(n, mask, **MASK_KW))
        G = attention_forward(n, d, shape=shape, mask=mask, **MASK_KW)
        assert G.number_of_nodes() == forward_node_count(n, d, z) == 3 * n * d + 4 * z * d + z
        F = attention_backward_flash(n, d, shape=shape, mask=mask, **MASK_KW)
        assert F.number_of_nodes() == flash_backward_node_count(n, d, z) == 10 * z * d + 2 * z + 4 * n * d
        W = attention_backward_weights(n, d, shape=shape, mask=mask, **MASK_KW)
        assert W.number_of_nodes() == weights_backward_node_count(n, d, z)
        assert W.number_of_nodes() == 8 * z * d + 5 * z + 6 * n * d * d + n * d + d * d - n


def test_backward_dense_counts_by_hand():
    # n = d = 1: flash has 6 inputs + QK A P dOO dOV dPD dS PdO dSK dSQ = 16 nodes.
    assert attention_backward_flash(1, 1).number_of_nodes() == 16
    # weights: 6 inputs + A1X LA2 u r f A3Y fh c ch p1 sf p pA2 A1R = 20 nodes.
    assert attention_backward_weights(1, 1).number_of_nodes() == 20
    for n, d in [(2, 2), (3, 2), (2, 4)]:
        assert attention_backward_flash(n, d).number_of_nodes() == 10 * n * n * d + 2 * n * n + 4 * n * d
        assert attention_backward_weights(n, d).number_of_nodes() == 8 * n * n * d + 5 * n * n + 6 * n * d * d + n * d + d * d - n


def test_matmul_chain_counts():
    assert matmul_chain("2,2,2").number_of_nodes() == 20  # same as classic matmul(2, 2, 2)
    for dims in ["1,2,2,1", "3,2,2,3", "2,3,1,4", "2,1,2"]:
        assert matmul_chain(dims).number_of_nodes() == matmul_chain_node_count(dims)


# ---------------------------------------------------------------- naming


def test_forward_naming_is_the_fixed_one():
    G = attention_forward(2, 2)
    for name, op in [("Q_1_0", "input"), ("K_0_1", "input"), ("V_1_1", "input"), ("QK_0_1_1", "mul"),
                     ("S_0_1", "add"), ("A_1_0", "exp"), ("l_1", "add"), ("r_0", "recip"),
                     ("AV_1_0_1", "mul"), ("T_0_1", "add"), ("O_1_1", "scale")]:
        assert G.nodes[name]["op"] == op, name
    assert G.nodes["QK_0_1_1"]["entry"] == ("QK", 0, 1, 1)
    assert set(G.predecessors("S_0_1")) == {"QK_0_1_0", "QK_0_1_1"}
    assert set(G.predecessors("O_1_1")) == {"r_1", "T_1_1"}
    assert set(G.predecessors("AV_1_0_1")) == {"A_1_0", "V_0_1"}


def test_forward_chain_order_is_respected():
    G = attention_forward(1, 3, order="2,0,1")
    # chain: S~1 = QK_l2 + QK_l0, S = S~1 + QK_l1
    assert set(G.predecessors("S_0_0~1")) == {"QK_0_0_2", "QK_0_0_0"}
    assert set(G.predecessors("S_0_0")) == {"S_0_0~1", "QK_0_0_1"}
    H = attention_forward(3, 1, jorder="2,1,0")
    assert set(H.predecessors("l_0~1")) == {"A_0_2", "A_0_1"}


def test_aliases_for_one_term_sums():
    G = attention_forward(1, 1)
    assert value_node(G, "S_0_0") == "QK_0_0_0"
    assert value_node(G, "l_0") == "A_0_0"
    assert value_node(G, "T_0_0") == "AV_0_0_0"
    H = attention_forward(3, 2, mask="window", window=0)
    assert value_node(H, "l_2") == "A_2_2" and "S_2_2" in H


def test_masked_forward_has_only_allowed_scores():
    G = attention_forward(4, 2, mask="causal")
    assert "A_2_1" in G and "A_1_2" not in G and "QK_1_3_0" not in G
    assert set(G.predecessors("l_1")) == {"A_1_0", "A_1_1"}


def test_backward_naming():
    F = attention_backward_flash(2, 2)
    for name, op in [("l_0", "input"), ("dO_1_0", "input"), ("O_0_1", "input"), ("P_0_1", "div"),
                     ("dOO_0_1", "mul"), ("D_1", "add"), ("dOV_0_1_1", "mul"), ("dP_0_1", "add"),
                     ("dPD_0_1", "sub"), ("dS_0_1", "mul"), ("PdO_1_0_1", "mul"), ("dV_0_1", "add"),
                     ("dSK_1_0_1", "mul"), ("dQ_1_1", "add"), ("dSQ_0_1_0", "mul"), ("dK_1_0", "add")]:
        assert F.nodes[name]["op"] == op, name
    assert F.nodes["P_0_1"]["args"] == ["A_0_1", "l_0"]
    assert F.nodes["dPD_0_1"]["args"] == ["dP_0_1", "D_0"]
    assert sorted(outputs(F)) == sorted([f"d{t}_{a}_{b}" for t in "QKV" for a in range(2) for b in range(2)])
    W = attention_backward_weights(2, 2)
    for name, op in [("A1X_0_1_0", "mul"), ("L_0_1", "add"), ("LA2_0_1_1", "mul"), ("S_1_0", "add"),
                     ("u_0_1", "exp"), ("l_0", "add"), ("r_1", "recip"), ("f_0_1", "scale"),
                     ("A3Y_1_0_1", "mul"), ("h_1_0", "add"), ("fh_0_1_0", "mul"), ("z_0_1", "add"),
                     ("c_0_1", "sub"), ("ch_0_1_1", "mul"), ("q_0_1", "add"), ("p1_0_1", "mul"),
                     ("s_1", "add"), ("sf_0_1", "mul"), ("p_0_1", "sub"), ("pA2_0_1_1", "mul"),
                     ("R_1_0", "add"), ("A1R_1_0_1", "mul"), ("G_0_1", "add")]:
        assert W.nodes[name]["op"] == op, name
    assert W.nodes["c_0_1"]["args"] == ["z_0_1", "E_0_1"]
    assert W.nodes["p_1_0"]["args"] == ["p1_1_0", "sf_1_0"]
    assert set(W.predecessors("A1X_0_1_0")) == {"A1_0_0", "X_0_1"}
    assert set(W.predecessors("A1R_1_0_1")) == {"A1_1_0", "R_1_1"}


def test_paper_params_and_registry():
    G = build("attention-forward", ["n=3", "d=2", "mask=causal"])
    assert G.graph["family"] == "attention-forward"
    assert paper_params(G) == {"n": 3, "d": 2, "r": None, "g": None, "Z_input": 18, "Z_QK": 6}
    F = build("attention-backward-flash", ["n=2", "d=3"])
    assert paper_params(F)["Z_input"] == 5 * 6 + 2 and paper_params(F)["Z_QK"] == 4
    W = build("attention-backward-weights", ["n=2", "d=3", "mask=window", "window=0"])
    assert paper_params(W)["Z_input"] == 4 * 6 + 2 * 9 and paper_params(W)["Z_QK"] == 2
    assert build("matmul-chain", ["dims=2,3,2"]).number_of_nodes() == matmul_chain_node_count("2,3,2")


def test_bad_parameters_raise():
    with pytest.raises(ValueError, match="attention needs n >= 1 and d >= 1, got n=0, d=2"):
        attention_forward(0, 2)
    with pytest.raises(ValueError, match="unknown summation shape 'zigzag'"):
        attention_forward(2, 2, shape="zigzag")
    with pytest.raises(ValueError, match=r"^order must be a comma-separated permutation of 0\.\.1, got '0,0'"):
        attention_forward(2, 2, order="0,0")
    with pytest.raises(ValueError, match=r"iorder must be a comma-separated permutation of 0\.\.1, got '1'"):
        attention_backward_flash(2, 2, iorder="1")
    with pytest.raises(ValueError, match="dims must list at least three positive sizes"):
        matmul_chain("2,2")


# ---------------------------------------------------------------- numerics


def _masked_softmax(S, pairs):
    n = S.shape[0]
    keep = np.zeros((n, n), dtype=bool)
    for i, j in pairs:
        keep[i, j] = True
    A = np.where(keep, np.exp(np.where(keep, S, 0.0)), 0.0)
    return A, A.sum(axis=1)


def _forward_ref(Q, K, V, pairs):
    A, l = _masked_softmax(Q @ K.T, pairs)
    return (A / l[:, None]) @ V, l


CASES = [(1, 1, "none"), (1, 3, "none"), (3, 1, "none"), (3, 2, "none"), (4, 3, "causal"),
         (5, 2, "window"), (5, 2, "block"), (6, 2, "random")]


@pytest.mark.parametrize("shape", ["chain", "tree"])
@pytest.mark.parametrize("n,d,mask", CASES)
def test_forward_equals_softmax_attention(n, d, mask, shape):
    rng = np.random.default_rng(10 * n + d)
    Q, K, V = (rng.normal(size=(n, d)) * 0.7 for _ in range(3))
    G = attention_forward(n, d, shape=shape, mask=mask, order=",".join(map(str, range(d)[::-1])), **MASK_KW)
    val = evaluate(G, {"Q": Q, "K": K, "V": V})
    O_ref, l_ref = _forward_ref(Q, K, V, mask_pairs(n, mask, **MASK_KW))
    np.testing.assert_allclose(assemble(G, val, "O"), O_ref, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(assemble(G, val, "l"), l_ref, rtol=1e-12)
    if mask == "none":
        np.testing.assert_allclose(assemble(G, val, "S"), Q @ K.T, atol=1e-12)


def _flash_ref(Q, K, V, dO, pairs):
    A, l = _masked_softmax(Q @ K.T, pairs)
    P = A / l[:, None]
    O = P @ V
    dV = P.T @ dO
    dP = dO @ V.T
    D = (dO * O).sum(axis=1)
    dS = P * (dP - D[:, None])
    return O, l, dS @ K, dS.T @ Q, dV


@pytest.mark.parametrize("n,d,mask", CASES)
def test_flash_backward_equals_standard_formulas(n, d, mask):
    rng = np.random.default_rng(7 * n + d)
    Q, K, V, dO = (rng.normal(size=(n, d)) * 0.7 for _ in range(4))
    pairs = mask_pairs(n, mask, **MASK_KW)
    O, l, dQ, dK, dV = _flash_ref(Q, K, V, dO, pairs)
    G = attention_backward_flash(n, d, mask=mask, shape="tree" if n % 2 else "chain", **MASK_KW)
    val = evaluate(G, {"Q": Q, "K": K, "V": V, "O": O, "dO": dO, "l": l})
    np.testing.assert_allclose(assemble(G, val, "dQ", (n, d)), dQ, atol=1e-12)
    np.testing.assert_allclose(assemble(G, val, "dK", (n, d)), dK, atol=1e-12)
    np.testing.assert_allclose(assemble(G, val, "dV", (n, d)), dV, atol=1e-12)


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_flash_backward_is_the_gradient(mask):
    """dQ, dK, dV are the gradients of <dO, attention(Q, K, V)> (central differences)."""
    n, d = 4, 3
    rng = np.random.default_rng(5)
    Q, K, V, dO = (rng.normal(size=(n, d)) * 0.6 for _ in range(4))
    pairs = mask_pairs(n, mask)
    O, l, *_ = _flash_ref(Q, K, V, dO, pairs)
    G = attention_backward_flash(n, d, mask=mask)
    val = evaluate(G, {"Q": Q, "K": K, "V": V, "O": O, "dO": dO, "l": l})
    mats = {"Q": Q, "K": K, "V": V}
    eps = 1e-6
    for t in "QKV":
        num = np.zeros((n, d))
        for a in range(n):
            for b in range(d):
                plus = {k: m.copy() for k, m in mats.items()}
                minus = {k: m.copy() for k, m in mats.items()}
                plus[t][a, b] += eps
                minus[t][a, b] -= eps
                fp = (dO * _forward_ref(plus["Q"], plus["K"], plus["V"], pairs)[0]).sum()
                fm = (dO * _forward_ref(minus["Q"], minus["K"], minus["V"], pairs)[0]).sum()
                num[a, b] = (fp - fm) / (2 * eps)
        np.testing.assert_allclose(assemble(G, val, f"d{t}", (n, d)), num, atol=1e-7)


def _loss(A1, A2, A3, E, X, Y, pairs):
    A, l = _masked_softmax(A1 @ X @ A2.T, pairs)
    f = A / l[:, None]
    return 0.5 * ((f @ (A3 @ Y) - E) ** 2).sum()


def _grad_ref(A1, A2, A3, E, X, Y, pairs):
    A, l = _masked_softmax(A1 @ X @ A2.T, pairs)
    f = A / l[:, None]
    h = A3 @ Y
    c = f @ h - E
    q = c @ h.T
    p1 = f * q
    p = p1 - p1.sum(axis=1)[:, None] * f
    return A1.T @ p @ A2


@pytest.mark.parametrize("n,d,mask", CASES)
def test_weight_gradient_equals_analytic_and_finite_differences(n, d, mask):
    rng = np.random.default_rng(3 * n + d)
    A1, A2, A3, E = (rng.normal(size=(n, d)) * 0.6 for _ in range(4))
    X, Y = (rng.normal(size=(d, d)) * 0.6 for _ in range(2))
    pairs = mask_pairs(n, mask, **MASK_KW)
    G = attention_backward_weights(n, d, mask=mask, shape="tree" if d % 2 else "chain", **MASK_KW)
    val = evaluate(G, {"A1": A1, "A2": A2, "A3": A3, "E": E, "X": X, "Y": Y})
    got = assemble(G, val, "G", (d, d))
    np.testing.assert_allclose(got, _grad_ref(A1, A2, A3, E, X, Y, pairs), atol=1e-12)
    eps = 1e-6
    num = np.zeros((d, d))
    for m in range(d):
        for k in range(d):
            Xp, Xm = X.copy(), X.copy()
            Xp[m, k] += eps
            Xm[m, k] -= eps
            num[m, k] = (_loss(A1, A2, A3, E, Xp, Y, pairs) - _loss(A1, A2, A3, E, Xm, Y, pairs)) / (2 * eps)
    np.testing.assert_allclose(got, num, atol=1e-7)


def test_matmul_chain_computes_the_product():
    rng = np.random.default_rng(2)
    n, d = 3, 2
    A1, X, A2 = rng.normal(size=(n, d)), rng.normal(size=(d, d)), rng.normal(size=(n, d))
    G = matmul_chain(f"{n},{d},{d},{n}", shape="tree")
    val = evaluate(G, {"M1": A1, "M2": X, "M3": A2.T})
    np.testing.assert_allclose(assemble(G, val, "C3"), A1 @ X @ A2.T, atol=1e-12)
    H = matmul_chain("2,1,3,1")  # inner dimension 1: C2 entries are aliases of products
    B = [rng.normal(size=s) for s in [(2, 1), (1, 3), (3, 1)]]
    v = evaluate(H, {"M1": B[0], "M2": B[1], "M3": B[2]})
    np.testing.assert_allclose(assemble(H, v, "C2"), B[0] @ B[1], atol=1e-12)
    np.testing.assert_allclose(assemble(H, v, "C3"), B[0] @ B[1] @ B[2], atol=1e-12)


def test_families_survive_json_round_trip():
    rng = np.random.default_rng(0)
    n, d = 3, 2
    for G in (attention_forward(n, d, mask="causal"), attention_backward_flash(n, d), attention_backward_weights(n, d)):
        H = dag_from_json(dag_to_json(G))
        data = {t: rng.normal(size=(n, d)) * 0.5 for t in ("Q", "K", "V", "O", "dO", "A1", "A2", "A3", "E")}
        data.update({"X": rng.normal(size=(d, d)), "Y": rng.normal(size=(d, d)), "l": rng.uniform(1, 2, size=n)})
        a, b = evaluate(G, data), evaluate(H, data)
        assert a == b
        assert H.graph["paper"] == G.graph["paper"]


def test_mask_rows_match_dag_row_sums():
    pairs = mask_pairs(6, "random", density=0.3, seed=9)
    G = attention_forward(6, 1, mask="random", density=0.3, seed=9)
    for i, row in enumerate(mask_rows(6, pairs)):
        node = value_node(G, f"l_{i}")
        if len(row) == 1:
            assert node == f"A_{i}_{row[0]}"
        else:
            assert node == f"l_{i}"
