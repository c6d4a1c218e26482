"""The certify encoders against exhaustive truth: cardinality by enumeration, pebbling by brute force."""

from itertools import product

import pytest

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import pysat  # noqa: F401, E402

from spartition.certify.cardinality import at_least, at_most
from spartition.certify.cnf import CNF, CNFError, read_dimacs
from spartition.certify.encoding import decode_schedule, default_horizon, pebbling_cnf
from spartition.certify.sat import solve_cnf
from spartition.core.bounds import min_feasible_memory
from spartition.core.game import replay
from spartition.exact.brute import brute_force
from spartition.families.classic.dag import fft, random_dag


def _count_models(n, build):
    count = 0
    for bits in product([False, True], repeat=n):
        f = CNF(num_vars=n)
        build(f, list(range(1, n + 1)))
        for i, b in enumerate(bits, 1):
            f.add(i if b else -i)
        count += solve_cnf(f).satisfiable
    return count


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_at_most_and_at_least_count_exactly_the_right_assignments(n):
    from math import comb

    for k in range(0, n + 2):
        assert _count_models(n, lambda f, xs: at_most(f, xs, k)) == sum(comb(n, j) for j in range(min(k, n) + 1))
        assert _count_models(n, lambda f, xs: at_least(f, xs, k)) == sum(comb(n, j) for j in range(k, n + 1))


def test_cnf_writes_no_unit_clause_and_round_trips():
    f = CNF()
    a, b = f.new_var(), f.new_var()
    f.add(a)
    f.add(-a, b)
    f.add(-b)
    assert all(len(c) >= 2 for c in f.clauses)
    assert not solve_cnf(f).satisfiable
    g = read_dimacs(f.to_dimacs(), is_text=True)
    assert g.clauses == f.clauses and g.num_vars == f.num_vars and g.digest() == f.digest()
    with pytest.raises(CNFError, match="tautological"):
        f.add(a, -a)
    with pytest.raises(CNFError, match="announces 3 clauses"):
        read_dimacs("p cnf 2 3\n1 2 0\n-1 0\n", is_text=True)


def _instances(count):
    for seed in range(count):
        G = random_dag(3 + seed % 4, 0.4 + 0.05 * (seed % 4), 2, seed=seed)
        m0 = max(min_feasible_memory(G), 1)
        for M in range(m0, m0 + 2):
            yield seed, G, M


def _check_budgets(G, M, variant, seed):
    opt = brute_force(G, M, variant).io
    for budget in range(0, opt + 2):
        p = pebbling_cnf(G, M, variant, budget)
        out = solve_cnf(p.cnf)
        assert out.satisfiable == (opt <= budget), (seed, M, variant, budget, opt)
        if out.satisfiable:
            s = decode_schedule(p, out.model)
            r = replay(G, s)  # raises on an illegal move
            assert r.io <= budget and s.variant == variant
            assert sum(m[0] != "delete" for m in s.moves) <= p.horizon


def test_oneshot_cnf_is_satisfiable_exactly_when_the_brute_force_optimum_fits():
    # The oneshot horizon N + Q is proven sufficient: this must hold on every DAG.
    for seed, G, M in _instances(40):
        _check_budgets(G, M, "oneshot", seed)


def test_recompute_cnf_matches_brute_force_on_tiny_dags():
    # Soundness (a model is a schedule within budget) holds always; that the
    # default horizon Q + sum pi is enough is encoding.proven_horizon's theorem.
    for seed, G, M in _instances(24):
        _check_budgets(G, M, "recompute", seed)


def test_recompute_horizon_is_a_cap_that_can_bind():
    # With too few steps the CNF is unsatisfiable although a schedule exists:
    # the certificate must say "within the horizon" for recompute.
    G = fft(1)
    opt = brute_force(G, 3, "recompute").io
    assert solve_cnf(pebbling_cnf(G, 3, "recompute", opt).cnf).satisfiable
    assert not solve_cnf(pebbling_cnf(G, 3, "recompute", opt, horizon=opt + 1).cnf).satisfiable
    assert default_horizon(G, "oneshot", opt) == 2 + opt
    assert default_horizon(G, "recompute", opt) == 4 + opt
