"""The exact matrix-product decomposition of the class capacity against CP-SAT and by hand."""

import numpy as np
import pytest

from spartition.families.classic.dag import fft, matmul
from spartition.cli.main import main as cli_main
from spartition.core.dag import compact
from spartition.partition.lower_bounds import io_lower_bounds
from spartition.partition.brute import brute_class_capacity
from spartition.partition.capacity import class_capacity
from spartition.partition.sets import restricted_dag
from spartition.partition.weights import node_weights
from spartition.partition.product import (
    _Evaluator,
    column_multisets,
    component_options,
    covered_table,
    lagrangian_bounds,
    product_capacity,
)
from spartition.partition.product_shape import product_structure
from spartition.core.registry import build

QK = "op=mul,tensor=QK"


def _attention(n, d, **kw):
    G = build("attention-forward", n=n, d=d, **kw)
    # with d = 1 the dot product is its single product (a sum of one term is that term)
    return G, [v for v in G if v.startswith("S_" if d > 1 else "QK_")]


@pytest.mark.parametrize("n,d,shape,Xs", [
    (2, 1, "chain", (1, 2, 3)),
    (3, 1, "chain", (2, 4)),
    (2, 2, "chain", (2, 3, 5)),
    (3, 2, "chain", (3, 5, 8)),
    (2, 3, "chain", (3, 6)),
    (2, 4, "tree", (4, 9)),
    (3, 3, "tree", (5,)),
])
@pytest.mark.parametrize("convex", [True, False])
def test_decomposition_equals_cp_sat_relaxation(n, d, shape, Xs, convex):
    """Same relaxation, two independent solvers: the values must agree exactly."""
    G, keep = _attention(n, d, shape=shape)
    for X in Xs:
        a = product_capacity(G, X, weight=QK, restrict=keep, convex=convex)
        b = class_capacity(G, X, weight=QK, convex=convex, restrict=keep, workers=1, time_limit=60)
        assert b.status == "RELAXED"
        assert (a.status, a.upper_bound) == ("RELAXED", b.upper_bound), (n, d, shape, X, convex)


@pytest.mark.parametrize("X,expected", [(5, 5), (9, 12), (12, 18), (17, 33), (32, 64)])
def test_attention_d4_values(X, expected):
    """n = 4, d = 4: the values CP-SAT proves on the same relaxation (32: all 64 products)."""
    G, keep = _attention(4, 4)
    res = product_capacity(G, X, weight=QK, restrict=keep)
    assert res.upper_bound == expected
    assert len(res.parameters["relaxed_set"]) >= expected


def test_n8_d4_at_x17():
    """The benchmark's big instance (1,184 nodes): U(17) <= 33 of the 256 products."""
    G, keep = _attention(8, 4)
    res = product_capacity(G, 17, weight=QK, restrict=keep)
    assert (res.status, res.upper_bound, res.total_weight) == ("RELAXED", 33, 256)
    assert res.parameters["column_multisets"] == 6367


def test_n8_d4_at_x32():
    G, keep = _attention(8, 4)
    res = product_capacity(G, 32, weight=QK, restrict=keep)
    assert res.upper_bound == 85
    assert (res.parameters["column_multisets"], res.parameters["transpose_symmetry"]) == (274592, True)


@pytest.mark.slow
def test_full_dag_capped_by_the_relaxation():
    """n = 4, d = 4: the capped full-DAG search finds a set of the relaxation's weight, so U is proven."""
    G, keep = _attention(4, 4)
    res = class_capacity(G, 17, weight=QK, convex=True, relaxation=keep, workers=2, time_limit=120)
    assert (res.status, res.capacity, res.upper_bound, res.parameters["relaxation_bound"]) == ("OPTIMAL", 33, 33, 33)
    assert len(res.nodes) >= 33 and len(res.dominator) <= 17
    with pytest.raises(ValueError, match="not both"):
        class_capacity(G, 17, weight=QK, restrict=keep, relaxation=keep)


@pytest.mark.slow
def test_n8_d4_capacity_proven():
    """The issue's target: U(17) = 33 and U(32) = 85 of the 256 Q K^T products, proven (about a minute each)."""
    G, keep = _attention(8, 4)
    for X, U in ((17, 33), (32, 85)):
        res = class_capacity(G, X, weight=QK, convex=True, relaxation=keep, workers=2, time_limit=600)
        assert res.capacity <= U <= res.upper_bound
        assert (res.status == "OPTIMAL") == (res.capacity == res.upper_bound)
        if res.wall_s < 0.9 * 600:  # a run that stopped before its limit proved its value (a slow machine may not)
            assert (res.status, res.capacity) == ("OPTIMAL", U)


@pytest.mark.parametrize("a,b,c", [(2, 2, 2), (2, 3, 2), (3, 2, 2), (2, 2, 3), (3, 2, 3)])
def test_whole_matrix_product_is_exact(a, b, c):
    """Without restrict the whole DAG is the product: the result is U itself, equal to CP-SAT's."""
    G = matmul(a, b, c)
    for X in (2, 3, 5, 7):
        p = product_capacity(G, X, weight="op=mul")
        q = class_capacity(G, X, weight="op=mul", convex=True, workers=1, time_limit=60)
        assert q.status == "OPTIMAL"
        assert (p.status, p.capacity, p.upper_bound) == ("OPTIMAL", q.capacity, q.capacity)
        assert sum(1 for v in p.nodes if v.startswith("M_") or G.nodes[v]["op"] == "mul") == p.capacity
        assert len(p.dominator) <= X


@pytest.mark.parametrize("abc", [(1, 2, 2), (2, 2, 1), (2, 1, 2), (1, 1, 3)])
@pytest.mark.parametrize("convex", [True, False])
def test_whole_matrix_product_against_brute_force(abc, convex):
    G = matmul(*abc)
    for X in (1, 2, 3, 4):
        assert product_capacity(G, X, weight="op=mul", convex=convex).capacity == \
            brute_class_capacity(G, X, weight="op=mul", convex=convex)


def _chain_options(d, X=9):
    G, keep = _attention(2, d)
    full = compact(G)
    w = np.array([node_weights(G, QK)[v] for v in full.names])
    sub, wsub, exempt = restricted_dag(full, w, keep)
    ps = product_structure(sub, wsub, exempt)
    return ps, component_options(ps, X, convex=True)


def test_component_options_by_hand():
    """d = 2: products p0, p1 (positions 0, 1) and their sum s (position 2, an exit, not counted in P3)."""
    ps, opts = _chain_options(2)
    assert ps.size == 3 and ps.exempt == [False, False, True]
    pts = {c: [p[:3] for p in o] for c, o in opts.items()}
    # nothing shielded: one product in D is a one-node class; both products in D take the whole chain
    assert pts[0b000] == [(0, 0, 0), (1, 1, 1), (2, 0, 2)]
    # p0 shielded: {p0} for free (counted in P3), or p1 in D and the whole chain with no counted node
    assert pts[0b001] == [(0, 0, 0), (0, 1, 1), (1, 0, 2)]
    # both shielded: the whole chain, nothing counted
    assert pts[0b011] == [(0, 0, 2)]


def test_covered_table_is_the_and_of_masks():
    ps, _ = _chain_options(4)
    cov = covered_table(ps)
    products = [v for v in range(ps.size) if ps.row_slots[v]]
    for R in range(16):
        for C in range(16):
            shielded = [ps.row_slots[v][0] for v in products if cov[R, C] >> v & 1]
            assert sorted(shielded) == [s for s in range(4) if (R & C) >> s & 1]


def test_column_multisets_count():
    # multisets of 3 masks over 4 (C(6, 3) = 20); with at most 2 ones in total: {000}, {001}, {002},
    # {011}, {022}, {012}, {003} (mask 3 has two ones)
    assert len(column_multisets(4, 3, 6)) == 20
    Y = column_multisets(4, 3, 2)
    sizes = Y @ np.array([0, 1, 1, 2])
    assert len(Y) == 7 and sizes.max() == 2 and (Y.sum(axis=1) == 3).all()


@pytest.mark.parametrize("n,d,X", [(3, 3, 7), (3, 4, 11), (4, 2, 6)])
def test_lagrangian_bounds_never_cut_a_better_multiset(n, d, X):
    """Every multiset's bound is at least its exact value; the pruned search finds the exhaustive maximum."""
    G, keep = _attention(n, d)
    full = compact(G)
    w = np.array([node_weights(G, QK)[v] for v in full.names])
    sub, wsub, exempt = restricted_dag(full, w, keep)
    ps = product_structure(sub, wsub, exempt)
    opts = component_options(ps, X, convex=True)
    cov = covered_table(ps)
    Y = column_multisets(cov.shape[1], n, X)
    bounds = lagrangian_bounds(Y, cov, opts, X, n, np.arange(0, 3.01, 0.5), np.arange(0, 4.01, 0.5))
    ev = _Evaluator(cov, opts, X, n)
    exact = np.array([ev.value(y) for y in Y])
    assert (bounds >= exact - 1e-9).all()
    assert product_capacity(G, X, weight=QK, restrict=keep).upper_bound == exact.max()


def test_not_a_product_is_refused():
    G, keep = _attention(3, 2, mask="causal")
    with pytest.raises(ValueError, match="share no component"):
        product_capacity(G, 4, weight=QK, restrict=keep)
    with pytest.raises(ValueError, match="not 2"):
        F = fft(2)
        product_capacity(F, 3, weight={v: 1 for v in F if F.in_degree(v)})
    with pytest.raises(ValueError, match="fed by 1 input groups"):  # a single dot product: no rows vs columns
        product_capacity(matmul(1, 3, 1), 3, weight="op=mul")
    with pytest.raises(ValueError, match="has weight"):
        product_capacity(matmul(2, 2, 2), 3)
    with pytest.raises(ValueError, match="X = 0"):
        product_capacity(matmul(2, 2, 2), 0, weight="op=mul")
    with pytest.raises(ValueError, match="method='cp-sat'"):
        class_capacity(matmul(2, 2, 2), 3, weight="op=mul", method="product", relaxation=["C_0_0"])
    with pytest.raises(ValueError, match="unknown capacity method"):
        class_capacity(matmul(2, 2, 2), 3, method="dp")


def test_class_capacity_and_bounds_route_to_the_decomposition():
    G, keep = _attention(2, 2)
    res = class_capacity(G, 5, weight=QK, restrict=keep, method="product")
    assert (res.status, res.upper_bound, res.parameters["method"]) == ("RELAXED", 5, "product-dp")
    cap = {b.method: b for b in io_lower_bounds(G, 4, xs=[7], weight=QK, methods=("capacity",), restrict=keep,
                                                capacity_method="product")}["capacity"]
    # U(7) <= 7 of the 8 products: P(7) >= 2 and (7 - 4) * (2 - 1) = 3
    assert (cap.value, cap.status, cap.proven) == (3, "RELAXED", False)
    assert cap.parameters["per_X"][0]["U"] == 7


def test_cli_capacity_with_restrict(capsys):
    code = cli_main(["capacity", "attention-forward:n=2,d=2", "--X", "5", "--weight", QK, "--convex",
                     "--restrict", "S_*", "--method", "product", "--json"])
    out = capsys.readouterr().out
    assert code == 0 and '"upper_bound": 5' in out and '"status": "RELAXED"' in out
    assert cli_main(["capacity", "attention-forward:n=2,d=2", "--X", "5", "--restrict", "nothing*"]) == 2
    assert "match no node" in capsys.readouterr().err
    code = cli_main(["capacity", "attention-forward:n=3,d=2", "--X", "5", "--weight", QK, "--convex",
                     "--cap-by", "S_*"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("OPTIMAL: best class weight 5, proven upper bound U = 5")
