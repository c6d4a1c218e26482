"""Closed-form node counts and hand-computed costs of the classic families."""

import pytest

from spartition.families.classic.dag import chain, fft, matmul, pyramid, random_dag, random_layered, reduction, stencil
from spartition.core.bounds import min_feasible_memory, require_memory, trivial_lower_bound
from spartition.exact.brute import brute_force
from spartition.errors import InfeasibleMemory, ParameterError, UnknownFamily
from spartition.core.registry import build, family_names


@pytest.mark.parametrize("n", [2, 3, 7])
def test_chain(n):
    assert chain(n).number_of_nodes() == n


@pytest.mark.parametrize("k", [1, 2, 5, 8])
@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_reduction(k, shape):
    G = reduction(k, shape)
    assert G.number_of_nodes() == 2 * k - 1
    assert sum(1 for v in G if G.out_degree(v) == 0) == 1


def test_reduction_tree_is_balanced():
    G = reduction(8, "tree")
    import networkx as nx

    assert nx.dag_longest_path_length(G) == 3
    assert nx.dag_longest_path_length(reduction(8, "chain")) == 7


@pytest.mark.parametrize("a,b,c", [(1, 1, 1), (2, 2, 2), (2, 3, 4), (3, 1, 2)])
@pytest.mark.parametrize("shape", ["chain", "tree"])
def test_matmul(a, b, c, shape):
    G = matmul(a, b, c, shape)
    assert G.number_of_nodes() == a * b + b * c + a * b * c + a * c * (b - 1)


def test_matmul_order_changes_the_chain():
    G = matmul(1, 3, 1, order="2,0,1")
    assert set(G.predecessors("C_0_0~1")) == {"P_0_0_2", "P_0_0_0"}
    with pytest.raises(ValueError, match="permutation"):
        matmul(1, 3, 1, order="0,0,1")


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_fft(k):
    G = fft(k)
    assert G.number_of_nodes() == (k + 1) * 2**k
    assert G.number_of_edges() == 2 * k * 2**k


@pytest.mark.parametrize("h", [1, 2, 5])
def test_pyramid(h):
    assert pyramid(h).number_of_nodes() == (h + 1) * (h + 2) // 2


@pytest.mark.parametrize("w,t", [(1, 1), (4, 2), (6, 5)])
def test_stencil(w, t):
    assert stencil(w, t).number_of_nodes() == w * (t + 1)


def test_random_families_are_seeded():
    assert random_layered(4, 3, 2, seed=5).number_of_nodes() == 12
    assert list(random_dag(9, seed=4).edges) == list(random_dag(9, seed=4).edges)
    assert max(d for _, d in random_dag(9, 0.9, 2, seed=1).in_degree()) <= 2


def test_known_exact_costs():
    for M in range(2, 6):
        assert brute_force(chain(5), M).io == 2
        assert brute_force(chain(5), M, "recompute").io == 2
    assert brute_force(fft(1), 3).io == 4
    assert brute_force(matmul(1, 1, 1), 3).io == 3
    assert min_feasible_memory(fft(1)) == 3


def test_memory_needed_is_one_plus_in_degree():
    from spartition.core.dag import new_dag

    for k in range(1, 6):
        G = new_dag()
        for i in range(k):
            G.add_edge(f"x{i}", "big")
        assert min_feasible_memory(G) == k + 1
        with pytest.raises(InfeasibleMemory, match=f"M >= {k + 1}"):
            require_memory(G, k)
        assert brute_force(G, k + 1).io == k + 1


def test_trivial_bound_counts_loads_and_stores():
    assert trivial_lower_bound(matmul(2, 2, 2)) == 12
    G = chain(3)
    G.add_node("lonely", op="input")  # isolated: neither loaded nor stored
    assert trivial_lower_bound(G) == 2


def test_registry():
    assert {"chain", "fft", "matmul", "reduction", "pyramid", "stencil"} <= set(family_names())
    assert build("reduction", ["k=4", "shape=tree"]).number_of_nodes() == 7
    with pytest.raises(UnknownFamily, match="unknown DAG family"):
        build("nope")
    with pytest.raises(UnknownFamily, match="has no parameter 'x'"):
        build("chain", ["x=1"])
    with pytest.raises(ParameterError, match="parameter n of chain must be an integer, got 'two'"):
        build("chain", ["n=two"])
    with pytest.raises(ParameterError, match="parameter n of chain is given twice"):
        build("chain", ["n=2", "n=3"])
