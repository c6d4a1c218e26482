"""The matrix product's segment count of the partial game (spartition.families.classic.partial_bounds), step by step.

The count's program against a plain enumeration, hand-counted values, every
step of its proof on every segment of exact partial-game optima (the state
search), of the partial game's greedy and of translated blocked schedules,
on both builds of the sums, and the bound against those schedules and the
sandwich of the partial game.
"""

import math
import random

import pytest

from spartition.core.game import replay
from spartition.core.partial_greedy import oneshot_to_partial, partial_greedy_schedule
from spartition.core.registry import build
from spartition.exact.partial_brute import partial_search
from spartition.families.classic import partial_bounds
from spartition.families.classic.partial_bounds import (
    matmul_partial_bound,
    matmul_partial_capacity,
    matmul_partial_charges,
)
from spartition.families.common.partial_segments import partial_budgets
from spartition.study.formulas import evaluate_formulas, formula_named
from spartition.study.sandwich import sandwich


def enumerated_capacity(a, b, c, T, L):
    """The program of matmul_partial_capacity's proof, every integer point (x, y, z, p) tried."""
    best = 0.0
    for x in range(0, a * b + 1):
        for y in range(0, b * c + 1):
            for z in range(0, a * c + 1):
                for p in range(0, max(0, L - x - y) + 1):
                    if x + y + p <= L and x + y + p + z <= T:
                        best = max(best, min(b * z, p + min(math.sqrt(x * y * z), x * y, c * x, a * y)))
    return math.floor(best + 1e-9)


def test_the_count_is_the_maximum_of_its_program():
    rng = random.Random(5)
    for _ in range(150):
        a, b, c = rng.randint(1, 4), rng.randint(1, 4), rng.randint(1, 4)
        T, L = rng.randint(0, 30), rng.randint(0, 20)
        assert matmul_partial_capacity(a, b, c, T, L) == enumerated_capacity(a, b, c, T, L), (a, b, c, T, L)


def test_hand_counted_capacities():
    # 8 x 8 x 8, a middle segment at M = 4, S = 4 (T = 12, L = 8): x = y = 4, z = 4 give sqrt(64) = 8 fresh products
    assert matmul_partial_capacity(8, 8, 8, 12, 8) == 8
    # 2 x 2 x 2, T = 7, L = 4: four products held (p = 4) and two sums touched (z = 2) mark min(2 * 2, 4) = 4 edges;
    # reading x = y = 2 entries instead gives only sqrt(2 * 2 * 3) = 3.46
    assert matmul_partial_capacity(2, 2, 2, 7, 4) == 4
    # a segment that starts the schedule with S = 2 I/O moves (T = 2 + b, L = 2): the program lets it load two
    # products (p = 2) into one sum kept red (b = 1), though nothing is blue yet to load; with b = 0 the sum takes one
    # of the two budget units: one product
    assert matmul_partial_capacity(8, 8, 8, *partial_budgets(4, 2, 0, 1, start=False)) == 2
    assert matmul_partial_capacity(8, 8, 8, *partial_budgets(4, 2, 0, 0, start=False)) == 1


def test_the_budgets_do_not_shrink_with_the_products_held_at_the_start():
    # a product red at the start is a red non-input, yet counts among the L it may use: L = M + S whatever a is
    assert partial_budgets(8, 5, 3, 2) == partial_budgets(8, 5, 0, 2) == (15, 13)


@pytest.mark.parametrize("a,b,c,M,S,h,value", [(8, 8, 8, 4, 14, 28, 378), (8, 8, 8, 16, 52, 5, 208),
                                               (4, 4, 4, 2, 7, 9, 56), (16, 16, 16, 16, 64, 24, 1472)])
def test_pinned_bounds_and_their_segment_counts(a, b, c, M, S, h, value):
    bound = matmul_partial_bound(a, b, c, M)
    assert (bound.value, bound.S, bound.segments, bound.weight, bound.shared) == (value, S, h, "P-edges", True)
    assert value == S * (h - 1)  # S (h - 1), not S h: the last segment may hold fewer than S I/O moves


def assert_every_step(G, schedule, M, S):
    """Steps 1-3 of matmul_partial_capacity's proof on each segment of a valid partial schedule; the tightest ratio."""
    a, b, c = (G.graph["params"][k] for k in "abc")
    segments = matmul_partial_charges(G, schedule, S)
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M
    total, tightest = 0, 0.0
    for seg in segments:
        T, L = partial_budgets(M, S, seg["a"], seg["b"], not seg["first"], not seg["last"])
        assert seg["fresh_whole"] == seg["fresh"]  # step 1: a fresh product's two in-edges are marked in the segment
        assert seg["x"] + seg["y"] + seg["p"] <= seg["available"] <= L  # step 1
        assert seg["met"] == seg["z"]  # step 2: every touched sum has an add or sum node in B'
        assert seg["x"] + seg["y"] + seg["p"] + seg["z"] <= seg["B_shared"] <= T
        assert seg["fresh"] <= math.sqrt(seg["x"] * seg["y"] * seg["z"]) + 1e-9  # step 3
        assert seg["edges"] <= seg["fresh"] + seg["p"] and seg["edges"] <= b * seg["z"]
        # read through the module: tests/families/attention/test_partial_claims.py mutates it there
        capacity = partial_bounds.matmul_partial_capacity(a, b, c, T, L)
        assert seg["edges"] <= capacity, seg
        tightest = max(tightest, seg["edges"] / capacity if capacity else 0.0)
        total += seg["edges"]
    assert total == a * b * c  # every product edge is marked once, in some segment
    return tightest


# exact partial-game optima (the state search; docs/findings.md's table has the same values)
OPTIMA = [((2, 2, 2), "node", {3: 17, 4: 14, 5: 13, 6: 12}),
          pytest.param((2, 3, 1), "node", {2: 20, 3: 13, 4: 11}, marks=pytest.mark.slow),
          ((2, 3, 1), "binary", {3: 14, 4: 11}),
          pytest.param((1, 3, 2), "node", {2: 20, 3: 13}, marks=pytest.mark.slow)]  # the transpose of (2, 3, 1)


@pytest.mark.parametrize("shape,sums,optima", OPTIMA)
def test_exact_partial_optima_obey_each_step_and_the_bound(shape, sums, optima):
    G = build("matmul", a=shape[0], b=shape[1], c=shape[2], sums=sums)
    for M, opt in optima.items():
        r = partial_search(G, M)
        assert r.io == opt and replay(G, r.schedule).io == opt
        assert matmul_partial_bound(*shape, M).value <= opt
        # every segment length: at some S a segment marks exactly its count, so a count 10% lower fails here
        assert max(assert_every_step(G, r.schedule, M, S) for S in range(1, opt + 1)) == 1.0


def blocked_partial(G, M):
    """The blocked product of the oneshot game (C in t x t tiles held red, t^2 + t + 3 <= M), played in the partial
    game: on the binary build, translated edge by edge."""
    from tests.families.classic.test_matmul_recompute_lower import blocked_schedule

    return oneshot_to_partial(G, blocked_schedule(G, M))


@pytest.mark.parametrize("shape", [(4, 4, 4), (3, 5, 2)])
@pytest.mark.parametrize("sums", ["node", "binary"])
def test_replayed_partial_schedules_obey_each_step_and_the_bound(shape, sums):
    G = build("matmul", a=shape[0], b=shape[1], c=shape[2], sums=sums)
    tightest = 0.0
    for M in (2, 3, 4, 6, 8):
        found = {"partial-greedy": partial_greedy_schedule(G, M)}
        if M >= 5 and sums == "binary":
            found["blocked"] = blocked_partial(G, M)
        for name, s in found.items():
            assert s.variant == "partial"
            io = replay(G, s).io
            assert matmul_partial_bound(*shape, M).value <= io, (name, M)
            tightest = max([tightest] + [assert_every_step(G, s, M, S) for S in sorted({1, 2, M, 2 * M, 3 * M})])
    assert tightest == 1.0


@pytest.mark.slow
def test_the_schedules_checked_save_and_reload_partial_values():
    # the per-segment checks meet values aggregated across segments: sums and products saved half-way, loaded back
    def reloaded(G, schedule, prefix):
        return [m[1] for m in schedule.moves if m[0] == "load" and m[1].startswith(prefix)]

    G = build("matmul", a=4, b=4, c=4, sums="binary")
    assert len(reloaded(G, partial_greedy_schedule(G, 2), "C_")) == 32
    G = build("matmul", a=4, b=4, c=4, sums="node")
    assert len(reloaded(G, partial_greedy_schedule(G, 2), "P_")) == 64
    G = build("matmul", a=2, b=3, c=1, sums="node")
    assert reloaded(G, partial_search(G, 2).schedule, "C_") == ["C_0_0", "C_1_0"]


def test_the_bound_exceeds_the_trivial_bound_where_it_is_checked():
    # 4 x 4 x 4: trivial 48; the bound is informative at M = 2, 3, 4 (the greedy's 272, 208, 176 stay above it)
    assert [matmul_partial_bound(4, 4, 4, M).value for M in (2, 3, 4)] == [56, 55, 52]


def test_registered_as_an_explicit_bound_of_the_partial_game_only():
    f = formula_named("segment-matmul-partial-lower")
    assert f.kind == "lower" and f.constants == "explicit" and f.variants == ("partial",)
    (v,) = [x for x in evaluate_formulas("matmul", {"a": 8, "b": 8, "c": 8, "sums": "node"}, 4) if x.name == f.name]
    assert v.applies and v.value == 378
    (v,) = [x for x in evaluate_formulas("matmul", {"a": 8, "b": 1, "c": 8}, 4) if x.name == f.name]
    assert not v.applies and math.isnan(v.value)  # b = 1: no product edge into a sum


@pytest.mark.parametrize("sums", ["node", "binary"])
def test_the_partial_sandwich_takes_it_and_the_standard_games_do_not(sums):
    G = build("matmul", a=8, b=8, c=8, sums=sums)
    (row,) = sandwich(G, [4], variant="partial")
    assert (row.lower.value, row.lower.method) == (378, "formula:segment-matmul-partial-lower")
    if sums == "binary":
        for variant in ("oneshot", "recompute"):
            (row,) = sandwich(G, [4], variant=variant)
            assert "formula:segment-matmul-partial-lower" not in {s.method for s in row.lowers}
