"""The CP-SAT model of the partial game: its decoded schedules replayed, its optima equal to the exact search's on
seeded random DAGs, its horizon argued in ASSUMPTIONS."""

import networkx as nx
import pytest

from spartition.core.game import replay
from spartition.core.registry import build
from spartition.exact.brute import brute_force
from spartition.exact.partial_cpsat import ASSUMPTIONS, partial_horizon, solve_partial


def tiny_instances(count, offset=0):
    """(seed, DAG, M): random DAGs of 3 to 5 nodes at M = 2 and 3."""
    for seed in range(offset, offset + count):
        yield seed, build("random-dag", n=3 + seed % 3, p=0.5, indeg=2, seed=500 + seed), 2 + seed % 2


def check_against_the_search(instances, time_limit):
    proven = 0
    for seed, G, M in instances:
        r = solve_partial(G, M, time_limit=time_limit)
        best = brute_force(G, M, "partial").io
        assert replay(G, r.schedule).io == r.io >= best, seed
        assert r.lower_bound is None or r.lower_bound <= best, seed
        if r.status == "OPTIMAL":
            assert r.io == best == r.lower_bound, (seed, M)
            proven += 1
    return proven


def test_hand_values():
    assert solve_partial(build("chain", n=4), 2, time_limit=20).io == 2
    r = solve_partial(build("fft", k=1), 2, time_limit=20)
    assert (r.status, r.io, r.schedule_source) == ("OPTIMAL", 5, "solver")
    fan = nx.DiGraph([("x0", "y"), ("x1", "y"), ("x2", "y")])
    r = solve_partial(fan, 2, time_limit=20)
    assert (r.status, r.io) == ("OPTIMAL", 4)
    d = r.to_dict()
    # 3 edges + 1 node with in-edges + 2 * (greedy's 4) - 1 output
    assert (d["method"], d["assumptions"], d["horizon"]) == ("partial-cp-sat", list(ASSUMPTIONS), 11)


@pytest.mark.slow
def test_partial_computation_beats_the_standard_game_on_a_binary_sum_tree():
    r = solve_partial(build("reduction", k=4, shape="tree"), 3, time_limit=120)
    assert (r.status, r.io) == ("OPTIMAL", 5)


def test_the_horizon():
    # 2 edges + 2 nodes with an in-edge + 2 * 2 - 1 output
    assert partial_horizon(build("chain", n=3), 2) == 7


def test_matches_the_search_on_20_random_dags():
    assert check_against_the_search(tiny_instances(20), time_limit=30) == 20


@pytest.mark.slow
def test_matches_the_search_on_200_random_dags():
    assert check_against_the_search(tiny_instances(200, offset=20), time_limit=60) >= 195
