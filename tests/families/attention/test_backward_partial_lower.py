"""The backward pass's segment count of the partial game (spartition.families.attention.backward.partial_bounds).

Every step of its proof on every segment (up to 3M and near the whole I/O)
of the partial game's greedy and of the published backward algorithms
translated edge by edge, on both builds of the sums and both sum shapes;
the bound against those schedules where it exceeds the trivial bound, and
in the partial game's sandwich.
"""

import math

import pytest

from spartition.core.game import replay
from spartition.core.registry import build
from spartition.families.attention.backward import partial_bounds
from spartition.families.attention.backward.partial_bounds import backward_partial_bound, backward_partial_capacity
from spartition.families.attention.forward.partial_bounds import forward_partial_capacity
from spartition.families.attention.partial_claims import partial_schedules, segment_sizes
from spartition.study.formulas import evaluate_formulas, formula_named
from spartition.study.sandwich import sandwich
from tests.families.attention.test_forward_partial_lower import assert_every_edge_step


def test_the_count_is_the_forward_program():
    # dV = P^T dO is T = A V for the partial game: the same program, at the same budgets
    for T, L in ((7, 4), (30, 20), (12, 8)):
        assert backward_partial_capacity(4, 2, T, L) == forward_partial_capacity(4, 2, T, L)
    assert backward_partial_capacity(2, 1, 7, 4) == 4  # four products held into two sums of dV


def assert_every_backward_step(G, schedule, M, S):
    """Steps 1-4 of backward_partial_capacity's proof on each segment (the forward steps, with P dO products); the
    count read through the module at each call (tests/families/attention/test_partial_claims.py mutates it there)."""
    return assert_every_edge_step(G, schedule, M, S, partial_bounds.backward_partial_charges,
                                  lambda: partial_bounds.backward_partial_capacity)


@pytest.mark.parametrize("n,d,sums,shape", [(3, 1, "node", "chain"), (3, 2, "binary", "chain"),
                                            (4, 2, "binary", "tree")])
def test_replayed_partial_schedules_obey_each_step(n, d, sums, shape):
    G = build("attention-backward-flash", n=n, d=d, sums=sums, shape=shape)
    tightest, names = 0.0, set()
    for M in (2, 3, 4, 6, 8):
        for name, s in partial_schedules(G, M).items():
            io = replay(G, s).io
            assert backward_partial_bound(n, d, M).value <= io
            names.add(name)
            tightest = max([tightest] + [assert_every_backward_step(G, s, M, S) for S in segment_sizes(M, io)])
    assert tightest == 1.0 and "partial-greedy" in names


def test_where_the_bound_exceeds_the_trivial_bound_every_schedule_stays_above_it():
    # n = 12, d = 1 at M = 2: 120 against the trivial 8 n d + n = 108
    G = build("attention-backward-flash", n=12, d=1, sums="node")
    assert backward_partial_bound(12, 1, 2).value == 120 > 8 * 12 + 12
    for name, s in partial_schedules(G, 2).items():
        io = replay(G, s).io
        assert io >= 120, name
        assert max(assert_every_backward_step(G, s, 2, S) for S in segment_sizes(2, io)) <= 1.0


@pytest.mark.slow
def test_registered_as_an_explicit_bound_of_the_partial_game_only():
    f = formula_named("segment-backward-partial-lower")
    assert f.kind == "lower" and f.constants == "explicit" and f.variants == ("partial",)
    (v,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 32, "d": 2}, 8) if x.name == f.name]
    assert v.applies and v.value == 1062
    (v,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 8, "d": 2, "mask": "causal"}, 4)
            if x.name == f.name]
    assert not v.applies and math.isnan(v.value)


def test_the_partial_sandwich_takes_it():
    # n = 16, d = 2 at M = 4: 391 against the trivial 8 n d + n = 272
    (row,) = sandwich(build("attention-backward-flash", n=16, d=2), [4], variant="partial")
    assert (row.lower.value, row.lower.method) == (391, "formula:segment-backward-partial-lower")
