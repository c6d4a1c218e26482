"""The partial game's edge-partition lower bound: hand values, and never above the exact optimum (the engine's
search, itself checked against an independent one) on 200 seeded random DAGs and small family instances."""

import pytest

from spartition.core.registry import build
from spartition.errors import SpartitionError
from spartition.exact.brute import brute_force
from spartition.partition.partial_edges import min_edge_partition, partial_edge_partition_bound
from spartition.study.sandwich import sandwich_row
from tests.exact.test_partial_brute import fan_in, random_instances


def test_hand_values_of_the_partition_count():
    # a chain: one class, each source is the previous target (its in-edge in the class) but the input
    assert min_edge_partition(build("chain", n=5), 1) == 1
    # k inputs into one node: one class needs the k inputs in D; with S < k a class holds at most S - 1 new
    # sources once the target holds a partial value (it joins D), the first class S sources
    assert min_edge_partition(fan_in(4), 4) == 1
    assert min_edge_partition(fan_in(4), 2) == 3  # {x0, x1}, then {x2} + y, then {x3} + y
    with pytest.raises(SpartitionError, match="no 1-edge partition"):
        min_edge_partition(fan_in(2), 1)


def test_hand_values_of_the_bound():
    # fan_in(4) at M = 2: k = 1 gives P(3) - 1 = 2 - 1 ({x0, x1, x2}, then {x3} + y), k = 2 gives P(4) = 1: bound 1
    assert partial_edge_partition_bound(fan_in(4), 2) == 1
    assert partial_edge_partition_bound(build("fft", k=1), 2) == 0
    assert partial_edge_partition_bound(build("pyramid", h=3), 2) == 2


def test_too_many_edges_is_refused():
    with pytest.raises(SpartitionError, match="at most 13 edges"):
        min_edge_partition(build("fft", k=2), 4)


def test_never_above_the_exact_optimum_on_200_random_dags():
    checked = 0
    for seed, G, M in random_instances(200):
        assert partial_edge_partition_bound(G, M) <= brute_force(G, M, "partial").io, (seed, M)
        checked += 1
    assert checked == 200


@pytest.mark.parametrize("family, params, M, optimum", [
    ("pyramid", dict(h=3), 2, 11), ("pyramid", dict(h=3), 3, 7),
    ("matmul", dict(a=1, b=2, c=2), 2, 13), ("matmul", dict(a=1, b=2, c=2), 3, 9),
])
def test_never_above_the_optimum_on_family_instances(family, params, M, optimum):
    G = build(family, **params)
    assert brute_force(G, M, "partial").io == optimum
    assert partial_edge_partition_bound(G, M) <= optimum


def test_sandwich_uses_it_with_partition_bounds():
    row = sandwich_row(build("pyramid", h=3), 2, "partial", partition_bounds=True)
    methods = {s.method: s.value for s in row.lowers}
    assert methods["bound:partial-edge-partition"] == 2 and methods["trivial"] == 5
    assert row.lower.value <= row.upper.value
