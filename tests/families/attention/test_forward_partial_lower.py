"""Dense attention forward's segment count of the partial game (spartition.families.attention.forward.partial_bounds).

The count's program against a plain enumeration, hand-counted values, every
step of its proof on every segment (every S, or up to 3M and near the whole
I/O) of exact partial-game
optima, of the partial game's greedy and of the published algorithms
translated edge by edge, on both builds of the sums and both sum shapes,
and the bound against those schedules and in the partial game's sandwich.
"""

import math
import random

import pytest

from spartition.core.game import replay
from spartition.core.registry import build
from spartition.exact.partial_brute import partial_search
from spartition.families.attention.forward import partial_bounds
from spartition.families.attention.forward.partial_bounds import forward_partial_bound, forward_partial_capacity
from spartition.families.attention.partial_claims import (
    enumerated_forward_partial_count,
    partial_schedules,
    segment_sizes,
)
from spartition.families.common.partial_segments import partial_budgets
from spartition.study.formulas import evaluate_formulas, formula_named
from spartition.study.sandwich import sandwich


def test_the_count_is_the_maximum_of_its_program():
    rng = random.Random(2)
    for _ in range(150):
        n, d = rng.randint(1, 4), rng.randint(1, 3)
        T, L = rng.randint(0, 30), rng.randint(0, 20)
        assert forward_partial_capacity(n, d, T, L) == enumerated_forward_partial_count(n, d, T, L), (n, d, T, L)


def test_hand_counted_capacities():
    # n = 2, d = 1, T = 3, L = 2: two products held (p = 2) into one touched sum (t = 1): min(2 * 1, 2) = 2; a fresh
    # product needs an A entry (a charged pair, or a row of Q and one of K: budget 2), an entry of V and a sum: 4 > 3
    assert forward_partial_capacity(2, 1, 3, 2) == 2
    # T = 7, L = 4: four products held into two sums: min(2 * 2, 4) = 4
    assert forward_partial_capacity(2, 1, 7, 4) == 4
    # n = 4, d = 1, T = 9, L = 6: rows of Q and K in full (r = q = 2, budget 4) give x = 4 entries of A; with v = 2
    # entries of V and t = 3 sums: min(sqrt(4 * 2 * 3), 4 * 2, 1 * 4, 4 * 2) = 4 fresh products; held products give
    # no more (p = 6 into t = 2 sums: min(8, 6) = 6 is more): the maximum is 6
    assert forward_partial_capacity(4, 1, 9, 6) == enumerated_forward_partial_count(4, 1, 9, 6) == 6


@pytest.mark.parametrize("n,d,M,S,h,value", [(32, 2, 8, 18, 60, 1062), (16, 2, 8, 17, 17, 272),
                                             (64, 4, 16, 66, 94, 6138), (4, 2, 2, 7, 5, 28)])
def test_pinned_bounds_and_their_segment_counts(n, d, M, S, h, value):
    bound = forward_partial_bound(n, d, M)
    assert (bound.value, bound.S, bound.segments, bound.weight, bound.shared) == (value, S, h, "AV-edges", True)
    assert value == S * (h - 1)


def assert_every_edge_step(G, schedule, M, S, charges, capacity_of):
    """Steps 1-4 of an attention count over product edges (forward_partial_capacity's proof) on each segment of a
    valid partial schedule; the tightest ratio of a segment's edges to its count."""
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    segments = charges(G, schedule, S)
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M
    total, tightest = 0, 0.0
    for seg in segments:
        T, L = partial_budgets(M, S, seg["a"], seg["b"], not seg["first"], not seg["last"])
        held = d * (seg["r"] + seg["q"]) + seg["c"] + seg["v"] + seg["p"]
        assert seg["fresh_whole"] == seg["fresh"]  # step 1
        assert seg["closed"] == seg["x"] <= min(n * n, seg["c"] + seg["r"] * seg["q"])  # step 2
        assert seg["met"] == seg["t"]  # step 3
        assert held <= seg["available"] <= L and held + seg["t"] <= seg["B_shared"] <= T  # step 4
        assert seg["fresh"] <= math.sqrt(seg["x"] * seg["v"] * seg["t"]) + 1e-9
        assert seg["edges"] == seg["fresh"] + seg["p"] and seg["edges"] <= n * seg["t"]
        capacity = capacity_of()(n, d, T, L)
        assert seg["edges"] <= capacity, seg
        tightest = max(tightest, seg["edges"] / capacity if capacity else 0.0)
        total += seg["edges"]
    assert total == n * n * d  # every counted product edge is marked once
    return tightest


def assert_every_forward_step(G, schedule, M, S):
    """:func:`assert_every_edge_step` of the A V products; the count read through the module at each call
    (tests/families/attention/test_partial_claims.py mutates it there)."""
    return assert_every_edge_step(G, schedule, M, S, partial_bounds.forward_partial_charges,
                                  lambda: partial_bounds.forward_partial_capacity)


OPTIMA = {4: 11, 5: 10, 6: 9, 7: 8}  # attention-forward n = 2, d = 1 in the partial game (docs/findings.md's table)


@pytest.mark.parametrize("sums", ["node", "binary"])
def test_exact_partial_optima_obey_each_step_and_the_bound(sums):
    G = build("attention-forward", n=2, d=1, sums=sums)
    for M, opt in OPTIMA.items():
        r = partial_search(G, M)
        assert r.io == opt and replay(G, r.schedule).io == opt
        assert forward_partial_bound(2, 1, M).value <= opt
        assert max(assert_every_forward_step(G, r.schedule, M, S) for S in range(1, opt + 1)) == 1.0


@pytest.mark.parametrize("n,d,sums,shape", [(4, 2, "node", "chain"), (4, 2, "binary", "chain"),
                                            (4, 2, "binary", "tree"), (5, 1, "binary", "tree"),
                                            (6, 2, "node", "chain")])
def test_replayed_partial_schedules_obey_each_step_and_the_bound(n, d, sums, shape):
    G = build("attention-forward", n=n, d=d, sums=sums, shape=shape)
    tightest, informative, names = 0.0, 0, set()
    for M in (2, 3, 4, 6, 8):
        bound = forward_partial_bound(n, d, M).value
        informative += bound > 4 * n * d
        for name, s in partial_schedules(G, M).items():
            io = replay(G, s).io
            assert s.variant == "partial" and bound <= io, (name, M)
            names.add(name)
            tightest = max([tightest] + [assert_every_forward_step(G, s, M, S) for S in segment_sizes(M, io)])
    assert tightest == 1.0 and "partial-greedy" in names
    assert informative or n < 6  # above the trivial bound 4 n d from n = 6 (56 against 48 at M = 2)


def test_registered_as_an_explicit_bound_of_the_partial_game_only():
    f = formula_named("segment-forward-partial-lower")
    assert f.kind == "lower" and f.constants == "explicit" and f.variants == ("partial",)
    (v,) = [x for x in evaluate_formulas("attention-forward", {"n": 32, "d": 2, "sums": "node"}, 8) if x.name == f.name]
    assert v.applies and v.value == 1062
    (v,) = [x for x in evaluate_formulas("attention-forward", {"n": 8, "d": 2, "mask": "causal"}, 4)
            if x.name == f.name]
    assert not v.applies and math.isnan(v.value)  # masked: the count is for the dense DAG


@pytest.mark.slow
def test_the_partial_sandwich_takes_it_and_the_standard_games_do_not():
    G = build("attention-forward", n=16, d=2)
    (row,) = sandwich(G, [8], variant="partial")
    assert (row.lower.value, row.lower.method) == (272, "formula:segment-forward-partial-lower")
    (row,) = sandwich(G, [8], variant="oneshot")
    assert "formula:segment-forward-partial-lower" not in {s.method for s in row.lowers}


def test_the_formulas_are_not_evaluated_above_their_compute_cap():
    # n = 64, d = 16 at M = 1000: M d > 1024, the table would not end in minutes; the value is nan, not searched
    from spartition.study.formulas import evaluate_formula, paper_params_for

    for name, family, params, M in (("segment-forward-partial-lower", "attention-forward", {"n": 64, "d": 16}, 1000),
                                    ("segment-backward-partial-lower", "attention-backward-flash", {"n": 64, "d": 16},
                                     1000),
                                    ("segment-matmul-partial-lower", "matmul", {"a": 64, "b": 64, "c": 64}, 256)):
        v = evaluate_formula(formula_named(name), paper_params_for(family, params), M, family)
        assert not v.applies and math.isnan(v.value), name
