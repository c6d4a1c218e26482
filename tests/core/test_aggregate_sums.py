"""Sums as single nodes: node counts in closed form, the same DAG whatever the summation shape, and what is not
a sum left alone."""

import networkx as nx
import pytest

from spartition.core.aggregate import aggregate_sums
from spartition.core.dag import compact
from spartition.core.registry import build


@pytest.mark.parametrize("a, b, c", [(1, 1, 1), (2, 2, 2), (2, 3, 4), (3, 5, 2)])
def test_matmul_counts(a, b, c):
    # products and inputs stay; the ac(b - 1) adds become ac sums of b terms (a sum of one term is the product)
    H = aggregate_sums(build("matmul", a=a, b=b, c=c))
    sums = a * c if b >= 2 else 0
    assert H.number_of_nodes() == a * b + b * c + a * b * c + sums
    assert H.number_of_edges() == 2 * a * b * c + (a * b * c if b >= 2 else 0)
    assert sorted(d for v, d in H.in_degree() if H.nodes[v]["op"] == "sum") == [b] * sums


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (1, 2), (2, 2), (3, 2), (4, 3)])
def test_attention_forward_counts(n, d):
    # binary sums: 3nd + 4n^2 d + n^2 nodes. As nodes: S_ij is one sum of d products (the product itself if d = 1),
    # l_i one sum of n terms, T_ij one sum of n products (the term itself if n = 1):
    # 3nd + n^2 d + n^2 [d >= 2] + n^2 (exp) + n [n >= 2] + n (recip) + n^2 d + nd [n >= 2] + nd (O);
    # 5nd + 2n^2 d + 2n^2 + 2n when n, d >= 2.
    G = build("attention-forward", n=n, d=d)
    assert G.number_of_nodes() == 3 * n * d + 4 * n * n * d + n * n
    H = aggregate_sums(G)
    expected = 3 * n * d + 2 * n * n * d + n * n * (d >= 2) + n * n + n * (n >= 2) + n + n * d * (n >= 2) + n * d
    assert H.number_of_nodes() == expected
    if n >= 2 and d >= 2:
        assert expected == 5 * n * d + 2 * n * n * d + 2 * n * n + 2 * n


@pytest.mark.parametrize("k", [2, 3, 7])
def test_chain_and_tree_give_the_same_sum(k):
    chain, tree = (aggregate_sums(build("reduction", k=k, shape=s)) for s in ("chain", "tree"))
    assert chain.number_of_nodes() == tree.number_of_nodes() == k + 1
    assert sorted(d for _, d in chain.in_degree()) == [0] * k + [k]
    assert {u for u, _ in chain.edges} == {u for u, _ in tree.edges} == {f"x{i}" for i in range(k)}
    mm = [aggregate_sums(build("matmul", a=2, b=4, c=2, shape=s)) for s in ("chain", "tree")]
    assert set(mm[0].edges) == set(mm[1].edges)


def test_an_add_read_twice_is_a_value_of_its_own():
    G = nx.DiGraph()
    for v, op in [("x", "input"), ("y", "input"), ("z", "input"), ("a", "add"), ("b", "add"), ("m", "mul"),
                  ("c", "add")]:
        G.add_node(v, op=op)
    G.add_edges_from([("x", "a"), ("y", "a"), ("a", "b"), ("z", "b"), ("a", "m"), ("z", "m"), ("b", "c"),
                      ("m", "c")])
    H = aggregate_sums(G)
    # a feeds b and m: kept; b's only reader c is an add: b goes into c, whose operands become a, z, m
    assert list(H) == ["x", "y", "z", "a", "m", "c"]
    assert set(H.predecessors("c")) == {"a", "z", "m"} and H.nodes["a"]["op"] == H.nodes["c"]["op"] == "sum"
    assert H.nodes["m"]["op"] == "mul" and G.nodes["c"]["op"] == "add"  # the input graph is untouched


@pytest.mark.parametrize("family, params", [("attention-backward-flash", dict(n=2, d=2)),
                                            ("approx-attention", {}), ("fft", dict(k=2))])
def test_every_family_dag_contracts_to_a_dag_without_inner_adds(family, params):
    G = build(family, **params)
    H = aggregate_sums(G)
    compact(H)  # a valid DAG, its order still topological
    assert not any(H.nodes[v]["op"] == "add" for v in H)
    adds = [v for v in G if G.nodes[v]["op"] == "add"]
    roots = [v for v in adds if not (G.out_degree(v) == 1 and G.nodes[next(iter(G.successors(v)))]["op"] == "add")]
    assert sorted(v for v in H if H.nodes[v]["op"] == "sum") == sorted(roots)
    assert H.number_of_nodes() == G.number_of_nodes() - len(adds) + len(roots)
