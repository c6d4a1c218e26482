"""``sums="node"``: the families whose sums are chains or trees built with every sum one node, their closed-form
node counts against the build, the binary default unchanged, and the partial game played on them."""

import itertools

import pytest

from spartition.core.aggregate import aggregate_sums
from spartition.core.dag import dag_hash
from spartition.core.game import replay
from spartition.core.partial_greedy import partial_greedy_schedule
from spartition.core.registry import build, family_node_count, rebuild
from spartition.exact.brute import brute_force

GRID = {
    "matmul": [dict(a=a, b=b, c=c) for a, b, c in itertools.product((1, 2), (1, 2, 3, 5), (1, 3))],
    "attention-forward": [dict(n=n, d=d) for n in (1, 2, 3, 5) for d in (1, 2, 4)]
    + [dict(n=5, d=3, mask=m) for m in ("causal", "window", "block", "random")],
    "attention-backward-flash": [dict(n=n, d=d) for n in (1, 2, 3, 4) for d in (1, 2, 3)]
    + [dict(n=5, d=3, mask=m) for m in ("causal", "window", "random")],
    "attention-backward-weights": [dict(n=n, d=d) for n in (1, 2, 3, 4) for d in (1, 2, 3)]
    + [dict(n=5, d=3, mask=m) for m in ("causal", "window", "random")],
    "approx-attention": [dict(n=n, d=d, g=g, normalize=z) for n in (1, 2, 4) for d in (1, 2, 3) for g in (1, 2)
                         for z in (False, True)],
}
CASES = [(f, p) for f, ps in GRID.items() for p in ps]


@pytest.mark.parametrize("family, params", CASES, ids=[f"{f}-{p}" for f, p in CASES])
def test_node_count_closed_form_and_one_node_per_sum(family, params):
    binary = build(family, **params)
    H = build(family, **params, sums="node")
    assert H.number_of_nodes() == family_node_count(family, **params, sums="node")
    assert family_node_count(family, **params) == binary.number_of_nodes()
    # the same DAG as contracting the binary build; no add is left, and every sum node has its terms as in-edges
    assert dag_hash(H) == dag_hash(aggregate_sums(binary))
    assert not any(d.get("op") == "add" for _, d in H.nodes(data=True))
    assert H.graph["params"]["sums"] == "node" and "sums" not in binary.graph["params"]
    assert dag_hash(rebuild(H)) == dag_hash(H)


def test_hand_counted_sizes():
    # matmul 2x3x2: 6 + 6 + 12 products + 4 sums of 3 = 28 (binary: 4 x 2 adds, 32)
    assert build("matmul", a=2, b=3, c=2, sums="node").number_of_nodes() == 28
    assert build("matmul", a=2, b=3, c=2).number_of_nodes() == 32
    # attention forward n=3, d=3 dense: 27 inputs, 27 QK, 9 S, 9 A, 3 l, 3 r, 27 AV, 9 T, 9 O = 123
    H = build("attention-forward", n=3, d=3, sums="node")
    assert H.number_of_nodes() == 123
    assert sorted(H.predecessors("l_0")) == ["A_0_0", "A_0_1", "A_0_2"] and H.nodes["l_0"]["op"] == "sum"
    assert sorted(H.predecessors("S_1_2")) == [f"QK_1_2_{t}" for t in range(3)]


def test_the_weight_gradient_sums_counted_by_hand():
    # n = 3, d = 4 dense: L, h (12 sums of 4 terms each), S, q (9 each, 4 terms) save 2 nodes a sum: 84; l, s
    # (3 each) and z, R (12 each) over 3 rows save 1: 30; the 16 outputs G over 3 rows save 1: 16. 130 in all
    binary = build("attention-backward-weights", n=3, d=4)
    H = build("attention-backward-weights", n=3, d=4, sums="node")
    assert binary.number_of_nodes() - H.number_of_nodes() == 84 + 30 + 16
    assert sorted(H.predecessors("G_1_2")) == [f"A1R_{i}_1_2" for i in range(3)] and H.nodes["G_1_2"]["op"] == "sum"


def test_the_default_build_is_unchanged():
    for family, params in [("matmul", {}), ("attention-forward", dict(n=3, d=2)), ("approx-attention", {}),
                           ("attention-backward-flash", {}), ("attention-backward-weights", dict(n=3, d=3))]:
        assert dag_hash(build(family, **params)) == dag_hash(build(family, **params, sums="binary"))


def test_unknown_sums_is_refused():
    with pytest.raises(Exception, match="unknown sums"):
        build("matmul", sums="tree")


def test_the_partial_game_on_a_matmul_with_sums_as_nodes():
    # matmul 1x3x1 with C one node. M = 3: each P_k aggregates A_k and B_k (2 pebbles) beside C, then P_k into C:
    # 6 loads + 1 save = 7, the trivial bound. M = 2: P_k and its operand fill memory, so C is saved and loaded
    # again between products: 6 + 2 x (1 save + 1 load) + 1 = 11. The binary chain gives the same here (b = 3).
    H = build("matmul", a=1, b=3, c=1, sums="node")
    assert [brute_force(H, M, "partial").io for M in (2, 3)] == [11, 7]
    assert [brute_force(build("matmul", a=1, b=3, c=1), M, "partial").io for M in (2, 3)] == [11, 7]
    assert replay(H, partial_greedy_schedule(H, 3)).io >= 7
