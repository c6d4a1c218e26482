"""The segment count of dense attention backward (spartition.families.attention.backward.bounds.backward_segment_capacity).

As for the forward count (tests/families/attention/test_forward_segment_bound.py): the optimiser against a
plain enumeration of the proof's integer program, every step of the proof on
every segment of replayed and exact-optimal schedules, and the derived bound
against a proven optimum and every replayed schedule.
"""

import math
import random

import pytest

from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.families.common.segments import segments_needed, shared_budgets
from spartition.families.attention.backward.bounds import (
    backward_joint_segment_capacity,
    backward_segment_bound,
    backward_segment_capacity,
    backward_segment_charges,
)
from spartition.study.formulas import evaluate_formulas, formula_named


def budgets(M, S, start=True, end=True):
    return M * (start + end) + S, M * start + S


def charged(s, c, d):
    return min(s / 2 * math.sqrt(c), d * c, (s / 2) ** 2)


def enumerated_capacity(n, d, M, S, start=True, end=True):
    """The program of backward_segment_capacity's proof, every integer point tried (c at every value too)."""
    (T, L), best = budgets(M, S, start, end), 0.0
    for r in range(0, n + 1):
        for p in range(0, n + 1):
            for s1 in range(d * (r + p), L + 1):
                for s2 in range(d * (r + p), L - s1 + 1):
                    for c in range(0, T - s1 - s2 + 1):
                        best = max(best, charged(s1, c, d) + charged(s2, c, d) + 2 * d * r * p)
    return math.floor(best + 1e-6)


def test_a_hand_counted_capacity():
    # n = 2, d = 1, M = 3, S = 1: T = 7, L = 4. s1 = s2 = 2 leave c = 3: min(1 * sqrt(3), 3, 1) = 1 of each kind;
    # with them one closed pair (r = p = 1 needs s1, s2 >= 2) adds 2 d = 2: 4 in all
    assert backward_segment_capacity(2, 1, 3, 1) == 4 == enumerated_capacity(2, 1, 3, 1)


def test_the_optimiser_finds_the_programs_maximum():
    rng = random.Random(5)
    for _ in range(40):
        n, d = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3])
        M, S = rng.randint(3, 8), rng.randint(1, 12)
        start, end = rng.random() < 0.5, rng.random() < 0.5
        assert backward_segment_capacity(n, d, M, S, start, end) == enumerated_capacity(n, d, M, S, start, end), \
            (n, d, M, S, start, end)


def schedules(G, M):
    out = {"greedy": greedy_schedule(G, M), "tiled-backward": algorithm("tiled-backward").generate(G, M)}
    for name in ("flash-backward", "materialised-backward"):
        try:
            out[name] = algorithm(name).generate(G, M)
        except InfeasibleMemory:
            pass
    try:  # FlashAttention's loop order: the rows stream past one resident key (K, V, dK, dV kept)
        out["tiled-backward, keys outer"] = algorithm("tiled-backward").generate(
            G, M, a=1, b=1, spill=False, outer="keys", keep_kv=True, keep_dkv=True, keep_q=True)
    except InfeasibleMemory:
        pass
    return out


def assert_every_step(G, schedule, M, S):
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    segments = backward_segment_charges(G, schedule, S)
    assert sum(c["qk"] for c in segments) == sum(c["dov"] for c in segments) == n * n * d  # oneshot: once each
    assert segments[0]["first"] and segments[-1]["last"]
    for c in segments:
        T, L = budgets(M, S, not c["first"], not c["last"])  # step 9
        inputs = c["q"] + c["k"] + c["o"] + c["v"]
        assert inputs <= c["start_or_loaded"] <= L  # step 1
        assert inputs + c["charged"] <= c["B"] <= T  # steps 1, 3: disjoint charges in B
        assert c["closed_whole"]  # step 4
        assert c["closed"] <= c["closed_rows"] * c["closed_cols"]
        assert d * c["closed_rows"] <= min(c["q"], c["o"]) and d * c["closed_cols"] <= min(c["k"], c["v"])
        # step 3's Loomis-Whitney counts of the charged pairs' products
        assert c["qk_charged"] <= min(math.sqrt(c["q"] * c["k"] * c["charged"]), d * c["charged"]) + 1e-9
        assert c["dov_charged"] <= min(math.sqrt(c["o"] * c["v"] * c["charged"]), d * c["charged"]) + 1e-9
        # step 12: with the closed pairs, every product in one Loomis-Whitney count
        pairs = c["charged"] + c["closed"]
        assert c["qk"] <= min(math.sqrt(c["q"] * c["k"] * pairs), d * pairs, c["q"] * c["k"]) + 1e-9
        assert c["dov"] <= min(math.sqrt(c["o"] * c["v"] * pairs), d * pairs, c["o"] * c["v"]) + 1e-9
        assert c["qk"] + c["dov"] <= backward_segment_capacity(n, d, M, S, not c["first"], not c["last"]), c
        # step 11: the budgets of the red non-inputs at the segment's two boundaries
        T11, L11 = shared_budgets(M, S, c["a"], c["b"], not c["first"], not c["last"])
        assert inputs <= c["inputs_available"] <= L11 and inputs + c["charged"] <= c["B_shared"] <= T11
        assert c["qk"] + c["dov"] <= backward_segment_capacity(n, d, M, S, budgets=(T11, L11)), c
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    assert all(x["b"] == y["a"] <= M for x, y in zip(segments, segments[1:]))  # one boundary, two segments
    return segments


@pytest.mark.parametrize("n,d,M", [pytest.param(4, 2, 6, marks=pytest.mark.slow), (4, 2, 20), (6, 2, 24), (4, 1, 13)])
def test_every_segment_of_the_replayed_schedules_obeys_each_step(n, d, M):
    G = build("attention-backward-flash", n=n, d=d)
    closed = 0
    for sch in schedules(G, M).values():
        replay(G, sch)
        for S in sorted({1, max(1, M // 2), M, 2 * M, 4 * M, backward_segment_bound(n, d, M).S}):
            closed += sum(c["closed"] for c in assert_every_step(G, sch, M, S))
    if M >= 13:  # flash-backward runs: its segments close pairs, so step 4 is checked where it says something
        assert closed > 0


def test_an_exact_optimum_obeys_each_step_and_the_bound():
    from spartition.exact.solve import solve_io

    G = build("attention-backward-flash", n=2, d=1)
    r = solve_io(G, 3, "oneshot", time_limit=120, workers=1)
    assert r.status == "OPTIMAL" and r.io == 65  # docs/exact_frontier.md
    for S in range(1, 8):
        assert_every_step(G, r.schedule, 3, S)
        assert_every_joint_step(G, r.schedule, 3, S)
    assert backward_segment_bound(2, 1, 3).value <= 65


@pytest.mark.parametrize("n,d,M", [(16, 2, 4), (32, 2, 4), (32, 2, 8)])
def test_the_bound_says_more_than_the_trivial_one_and_no_schedule_beats_it(n, d, M):
    G = build("attention-backward-flash", n=n, d=d)
    b = backward_segment_bound(n, d, M)
    assert b.value > 8 * n * d + n  # informative
    assert b.value == b.S * (b.segments - 1)
    W = n * n * d * (5 if b.weight == "all" else 2)
    apart = segments_needed(W, b.capacity, b.first, b.last, b.whole)  # step 9's h, from the same four counts
    assert b.segments >= apart if b.shared else b.segments == apart  # step 11 never needs fewer segments
    for name, sch in schedules(G, M).items():
        assert replay(G, sch).io >= b.value, name


def test_registered_as_an_explicit_oneshot_bound_for_dense_dags_only():
    f = formula_named("segment-backward-lower")
    assert f.kind == "lower" and f.constants == "explicit" and f.variants == ("oneshot",)
    (v,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 32, "d": 2}, 4) if x.name == f.name]
    # steps 8 and 11 lifted the bound of steps 1-7 (3,262) to 4,290 with the joint count read on cells; its exact
    # maximum (29 products a middle segment, not 36) needs 354 segments of 13 I/O moves: 13 (354 - 1) = 4,589
    assert v.applies and v.value == backward_segment_bound(32, 2, 4).value == 4589
    b = backward_segment_bound(32, 2, 4)
    assert (b.S, b.segments, b.weight, b.capacity) == (13, 354, "all", 29)
    (m,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 8, "d": 2, "mask": "causal"}, 4)
            if x.name == f.name]
    assert not m.applies


def enumerated_joint_capacity(n, d, M, S, start=True, end=True):
    """The program of backward_joint_segment_capacity's proof (steps 1-8), every integer point tried."""
    (T, L), best = budgets(M, S, start, end), 0.0
    for r in range(0, n + 1):
        for p in range(0, n + 1):
            for s1 in range(d * (r + p), L + 1):
                for s2 in range(d * (r + p), L - s1 - r + 1):  # step 8: the l_i read too
                    for c in range(0, T - s1 - s2 - 2 * r - d * (r + 2 * p) + 1):  # step 8: t >= d (r + 2p)
                        alpha = c + r * p
                        t = T - s1 - s2 - c - 2 * r
                        consumer = min(math.sqrt(alpha * (s1 + s2 - d * p) * t), 3 * d * alpha)  # step 7: without V
                        qk, dov = (min(charged(x, c, d) + d * r * p, charged(x, c + r * p, d)) for x in (s1, s2))
                        best = max(best, qk + dov + consumer)
    return math.floor(best + 1e-6)


def test_the_joint_count_is_the_exact_maximum_of_its_program():
    rng = random.Random(13)
    for _ in range(30):
        n, d = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3])
        M, S = rng.randint(3, 6), rng.randint(1, 8)
        start, end = rng.random() < 0.5, rng.random() < 0.5
        exact = enumerated_joint_capacity(n, d, M, S, start, end)
        assert backward_joint_segment_capacity(n, d, M, S, start, end) == exact, (n, d, M, S, start, end)


def test_the_consumer_count_leaves_out_the_v_reads_of_closed_columns():
    # n = 4, d = 2, M = 8, S = 16 (T = 32, L = 24): with q + k + o <= s1 + s2 (V counted) the program reaches 59;
    # v >= d p (step 4) takes the closed columns' V reads out of step 7 and the best point moves to p = 0: 56
    assert enumerated_joint_capacity(4, 2, 8, 16) == backward_joint_segment_capacity(4, 2, 8, 16) == 56
    assert backward_joint_segment_capacity(4, 4, 16, 16) == 103  # 105 with V counted


def assert_every_joint_step(G, schedule, M, S):
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    segments = backward_segment_charges(G, schedule, S)
    assert sum(sum(c["consumer"].values()) for c in segments) == 3 * n * n * d  # oneshot: once each
    for c in segments:
        T, L = budgets(M, S, not c["first"], not c["last"])
        inputs = c["q"] + c["k"] + c["o"] + c["v"]
        assert c["active_unmet_closed"] and c["alpha"] <= c["active_met"] + c["closed_rows"] * c["closed_cols"]  # 5
        # step 6: every touched consumer tree meets B (its root is an output, stored or red at the end)
        assert c["touched_neither"] == 0 and sum(c["touched_whole"].values()) == 0
        assert c["touched_met"] == sum(c["touched"].values())
        # step 8: closed rows touch d trees of dQ, closed columns d of dK and of dV; two row charges each
        d_rows, d_cols = d * c["closed_rows"], d * c["closed_cols"]
        assert c["touched"]["dSK"] >= d_rows and min(c["touched"]["dSQ"], c["touched"]["PdO"]) >= d_cols
        assert c["row_charges"] == 2 * c["closed_rows"]
        assert inputs + c["active_met"] + c["touched_met"] + c["row_charges"] <= c["B"] <= T  # disjoint charges
        lw = {"PdO": c["o"], "dSK": c["k"], "dSQ": c["q"]}
        for kind, x in lw.items():  # step 7, each kind
            assert c["consumer"][kind] <= math.sqrt(c["alpha"] * x * c["touched"][kind]) + 1e-9, (kind, c)
        # and together (Cauchy-Schwarz), with q + k + o at most s1 + s2 - d p: the V reads left out
        reads = inputs - d_cols
        assert sum(lw.values()) <= reads and c["v"] >= d_cols
        assert sum(c["consumer"].values()) <= math.sqrt(c["alpha"] * reads * c["touched_met"]) + 1e-9, c
        total = c["qk"] + c["dov"] + sum(c["consumer"].values())
        assert total <= backward_joint_segment_capacity(n, d, M, S, not c["first"], not c["last"]), c
        T11, L11 = shared_budgets(M, S, c["a"], c["b"], not c["first"], not c["last"])  # step 11
        assert inputs + c["active_met"] + c["touched_met"] + c["row_charges"] <= c["B_shared"] <= T11
        assert total <= backward_joint_segment_capacity(n, d, M, S, budgets=(T11, L11)), c
    return segments


@pytest.mark.parametrize("n,d,M", [(4, 2, 6), pytest.param(4, 2, 20, marks=pytest.mark.slow),
                                   pytest.param(4, 1, 13, marks=pytest.mark.slow),
                                   pytest.param(6, 2, 24, marks=pytest.mark.slow)])
def test_every_segment_of_the_replayed_schedules_obeys_each_joint_step(n, d, M):
    G = build("attention-backward-flash", n=n, d=d)
    for sch in schedules(G, M).values():
        io = replay(G, sch).io
        # up to one segment for the whole schedule, where every consumer tree is computed whole and still meets B
        for S in sorted({1, max(1, M // 2), M, 2 * M, 4 * M, io}):
            assert_every_joint_step(G, sch, M, S)


def test_the_backward_count_is_not_searched_above_its_compute_cap():
    from spartition.families.attention.formulas import BACKWARD_SEGMENT_MAX_M

    assert BACKWARD_SEGMENT_MAX_M == 256
    v = {f.name: f for f in evaluate_formulas("attention-backward-flash", {"n": 64, "d": 16}, 1000)}
    assert not v["segment-backward-lower"].applies and math.isnan(v["segment-backward-lower"].value)
    assert v["trivial-backward-flash"].value == 8 * 64 * 16 + 64  # the other bounds still evaluate


def test_the_count_of_all_five_products_is_searched_up_to_m_d_of_512():
    at, above = backward_segment_bound(2, 64, 8), backward_segment_bound(2, 64, 9)
    assert (at.weight, at.value, above.weight, above.value) == ("all", 410, "QK+dOV", 259)
