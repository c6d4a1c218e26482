"""The matrix-product segment count valid with recomputation (spartition.families.classic.recompute_bounds), step by step.

The count's program against a plain enumeration, hand-counted values, every
step of its proof on every segment of exact recompute optima (the step
search), of greedy, blocked and recomputing schedules, and the bound against
exact optima and every replayed schedule where it says more than the trivial
bound.
"""

import math
import random

import pytest

from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.core.recomputing import recomputing_schedule
from spartition.core.registry import build
from spartition.exact.steps import step_search
from spartition.families.classic.blocked import blocked_matmul
from spartition.families.classic.recompute_bounds import matmul_segment_bound, matmul_segment_capacity, matmul_segment_charges
from spartition.families.common.segments import shared_budgets
from spartition.study.formulas import evaluate_formulas, formula_named


def enumerated_capacity(a, b, c, T, L):
    """The program of matmul_segment_capacity's proof, every integer point (x, y, z) tried."""
    best = 0.0
    for x in range(0, a * b + 1):
        for y in range(0, b * c + 1):
            for z in range(0, a * c + 1):
                if x + y <= L and x + y + z <= T:
                    best = max(best, min(math.sqrt(x * y * z), b * z, x * y, c * x, a * y))
    return math.floor(best + 1e-9)


def enumerated_segments(W, count, M):
    """Step 11's least h, every boundary sequence x_1 .. x_(h-1) in 0..M tried."""
    if count(False, False, 0, 0) >= W:
        return 1
    best = {x: count(False, True, 0, x) for x in range(M + 1)}
    for h in range(2, 2000):
        if max(best[x] + count(True, False, x, 0) for x in range(M + 1)) >= W:
            return h
        best = {y: max(best[x] + count(True, True, x, y) for x in range(M + 1)) for y in range(M + 1)}
    return 0


def test_the_count_is_the_maximum_of_its_program():
    rng = random.Random(3)
    for _ in range(150):
        a, b, c = rng.randint(1, 5), rng.randint(1, 5), rng.randint(1, 5)
        T, L = rng.randint(0, 40), rng.randint(0, 30)
        assert matmul_segment_capacity(a, b, c, T, L) == enumerated_capacity(a, b, c, T, L), (a, b, c, T, L)


def test_hand_counted_capacities():
    # 8 x 8 x 8, a middle segment at M = 4, S = 4 (T = 12, L = 8): x = y = 4 entries and z = 4 sums give
    # sqrt(4 * 4 * 4) = 8; x = y = 3, z = 6: sqrt(54) = 7.3; x = 5, y = 3, z = 4: sqrt(60) = 7.7
    assert matmul_segment_capacity(8, 8, 8, 12, 8) == 8
    # 2 x 2 x 2 with T = 7, L = 4: x = y = 2, z = 3: min(sqrt(12), 6, 4, 4, 4) = 3.46
    assert matmul_segment_capacity(2, 2, 2, 7, 4) == 3
    # a segment that starts the schedule reads only what it loads: S = 2 loads, no product needs fewer than 2 inputs
    # and a sum: T = S + b = 2 + b, L = 2: x = y = 1, z = b = 1 (T = 3) gives one product
    assert matmul_segment_capacity(8, 8, 8, *shared_budgets(4, 2, 0, 1, start=False)) == 1
    assert matmul_segment_capacity(8, 8, 8, *shared_budgets(4, 2, 0, 0, start=False)) == 0


@pytest.mark.parametrize("a,b,c,M,S,h,value", [(8, 8, 8, 4, 6, 65, 384), (8, 8, 8, 8, 17, 17, 272),
                                               (4, 4, 4, 3, 7, 9, 56), (16, 16, 16, 4, 6, 513, 3072)])
def test_pinned_bounds_and_their_segment_counts(a, b, c, M, S, h, value):
    bound = matmul_segment_bound(a, b, c, M)
    assert (bound.value, bound.S, bound.segments, bound.weight, bound.shared) == (value, S, h, "P", True)
    assert value == S * (h - 1)  # S (h - 1), not S h: the last segment may hold fewer than S I/O moves

    def count(start, end, x, y):
        return enumerated_capacity(a, b, c, *shared_budgets(M, S, x, y, start, end)) if a * b * c <= 64 else \
            matmul_segment_capacity(a, b, c, *shared_budgets(M, S, x, y, start, end))

    assert enumerated_segments(a * b * c, count, M) == h  # cells are exact at M <= 8


def assert_every_step(G, schedule, M, S):
    """Steps 1-4 of matmul_segment_capacity's proof on each segment of a valid schedule; returns the products counted."""
    a, b, c = (G.graph["params"][k] for k in "abc")
    segments = matmul_segment_charges(G, schedule, S)
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M
    total = 0
    for seg in segments:
        T, L = shared_budgets(M, S, seg["a"], seg["b"], not seg["first"], not seg["last"])
        assert seg["x"] + seg["y"] <= seg["inputs_available"] <= L  # step 1
        assert seg["met"] == seg["z"]  # step 3: every touched sum has a node in B'
        assert seg["x"] + seg["y"] + seg["z"] <= seg["B_shared"] <= T
        assert seg["products"] <= math.sqrt(seg["x"] * seg["y"] * seg["z"]) + 1e-9  # step 4
        assert seg["products"] <= matmul_segment_capacity(a, b, c, T, L), seg
        total += seg["products"]
    assert total >= a * b * c  # every product has a designated event in some segment
    return total


# exact recompute optima by the step search (each M where the DAG is pebblable up to the trivial bound's M)
OPTIMA = {(2, 2, 1): {3: 13, 4: 9, 5: 8, 6: 8, 7: 8, 8: 8, 9: 8},
          (1, 2, 2): {3: 13, 4: 9, 5: 8, 6: 8, 7: 8, 8: 8, 9: 8},
          (2, 2, 2): {3: 25, 4: 17, 5: 14, 6: 13, 7: 12, 8: 12, 9: 12, 10: 12, 11: 12, 12: 12, 13: 12}}


@pytest.mark.parametrize("shape", sorted(OPTIMA))
def test_exact_recompute_optima_obey_each_step_and_the_bound(shape):
    G = build("matmul", a=shape[0], b=shape[1], c=shape[2])
    for M, opt in OPTIMA[shape].items():
        r = step_search(G, M, variant="recompute")
        assert r.complete and r.io == opt and replay(G, r.schedule).io == opt
        assert matmul_segment_bound(*shape, M).value <= opt
        for S in range(1, opt + 1):
            assert_every_step(G, r.schedule, M, S)


def blocked_schedule(G, M):
    """The blocked product (spartition.families.classic.blocked) with square t x t tiles, t the largest with
    t^2 + t + 3 <= M (a oneshot schedule, valid in both games)."""
    t = max(s for s in range(1, M) if s * s + s + 3 <= M)
    return blocked_matmul(G, M, "recompute", rows=t, cols=t)


def schedules(G, M):
    out = {"greedy": greedy_schedule(G, M, "recompute")}
    out.update({f"recomputing-{seed}": recomputing_schedule(G, M, seed=seed) for seed in range(2)})
    out["recomputing-ordered"] = recomputing_schedule(G, M, seed=0, shuffle=False)
    if M >= 5:
        out["blocked"] = blocked_schedule(G, M)
    return out


@pytest.mark.parametrize("shape,Ms", [((4, 4, 4), (3, 4, 5)), ((4, 6, 3), (3, 5)),
                                      pytest.param((8, 8, 8), (3, 4, 6, 9, 16), marks=pytest.mark.slow)])
def test_replayed_schedules_obey_each_step_and_the_bound(shape, Ms):
    G = build("matmul", a=shape[0], b=shape[1], c=shape[2])
    trivial = shape[0] * shape[1] + shape[1] * shape[2] + shape[0] * shape[2]
    informative = 0
    for M in Ms:
        bound = matmul_segment_bound(*shape, M)
        informative += bound.value > trivial
        for name, s in schedules(G, M).items():
            io = replay(G, s).io
            assert bound.value <= io, (name, M)
            for S in sorted({1, M, 2 * M, bound.S}):
                assert_every_step(G, s, M, S)
    assert informative  # the bound exceeds the trivial one somewhere: the check can fail


def test_the_recomputing_schedules_recompute_products():
    from spartition.partition.designation import designate

    G = build("matmul", a=4, b=4, c=4)
    s = recomputing_schedule(G, 4, seed=0)
    assert any(v.startswith("P_") for v in designate(G, s).computed_twice())
    assert sum(seg["products"] for seg in matmul_segment_charges(G, s, 4)) >= 64


def test_the_blocked_schedule_is_within_three_times_the_bound():
    # the blocked product at M = 16 (t = 3): 8 (8 * 3 + 8 * 3) + 64 = 448 loads and stores; the bound 200
    G = build("matmul", a=8, b=8, c=8)
    assert replay(G, blocked_schedule(G, 16)).io == 448
    assert matmul_segment_bound(8, 8, 8, 16).value == 200


def test_registered_as_an_explicit_bound_of_both_games():
    f = formula_named("segment-matmul-lower")
    assert f.kind == "lower" and f.constants == "explicit" and set(f.variants) == {"oneshot", "recompute"}
    (v,) = [x for x in evaluate_formulas("matmul", {"a": 8, "b": 8, "c": 8}, 4) if x.name == f.name]
    assert v.applies and v.value == 384
