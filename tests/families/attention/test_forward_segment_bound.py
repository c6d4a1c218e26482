"""The segment count of dense forward attention (spartition.families.attention.forward.bounds): each step of its proof, on real schedules.

The bound is a theorem proved in the docstring of ``segment_capacity``; these
tests check the optimiser against a plain enumeration of the same integer
program, every step of the proof on every segment of replayed schedules
(published, greedy and exact optima), and the derived bound against exact
optima and every replayed schedule where it says more than the trivial bound.
"""

import math
import random

import numpy as np
import pytest

from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.families.attention.forward.bounds import JOINT_SEGMENT_MAX_MD, forward_segment_bound, joint_segment_capacity, segment_capacity
from spartition.families.attention.forward.charges import segment_charges
from spartition.families.common.segments import segments_needed, shared_bound, shared_budgets, shared_segments_needed
from spartition.study.formulas import evaluate_formulas, formula_named

PUBLISHED = ("flash-forward", "square-tiling-forward", "standard-forward", "tiled-forward")


def budgets(M, S, start=True, end=True):
    """Step 9's budgets: |B| <= T, inputs read <= L (2M + S and M + S for a middle segment)."""
    return M * (start + end) + S, M * start + S


def enumerated_capacity(n, d, M, S, start=True, end=True):
    """The program of segment_capacity's proof, every integer point tried."""
    (T, L), best = budgets(M, S, start, end), 0.0
    for u in (0,):  # step 5: every T tree of a closed row meets B, none is a whole column's
        for r in range(0, min(n, L // d) + 1):
            for p in range(0, min(n, L // d) + 1):
                v = max(d * p, n * u)
                for w in range(0, r + 1) if n >= 2 else (None,):  # step 10's full rows
                    rows = r * (d - u) if w is None else (r - w) * (d + 1) + w * (d - u)
                    apart = together = -1.0  # steps 3 and 4; step 12: each at its own best s
                    for s in range(d * (r + p), L - v + 1):
                        c = T - s - v - rows
                        if c >= 0 and (w is None or c >= w * (n - p)):
                            apart = max(apart, charged(s, c, d) + d * r * p)
                            together = max(together, charged(s, c + r * p, d))
                    best = max(best, min(apart, together))
    return math.floor(best + 1e-6)


def charged(s, c, d):
    """Loomis-Whitney on s = q + k inputs and c pairs, d products a pair."""
    return min(s / 2 * math.sqrt(c), d * c, (s / 2) ** 2)


def enumerated_joint_capacity(n, d, M, S, start=True, end=True):
    """The program of joint_segment_capacity's proof (steps 1-9), every integer point tried."""
    (T, L), best = budgets(M, S, start, end), 0.0
    for u in (0,):  # step 7: every touched T tree meets B
        for r in range(0, min(n, L // d) + 1):
            for p in range(0, min(n, L // d) + 1):
                for v in range(max(d * p, n * u), L + 1):
                    for w in range(0, r + 1) if n >= 2 else (None,):  # step 10's full rows
                        rows = r * (d - u) if w is None else (r - w) * (d + 1) + w * (d - u)
                        sums = 0 if w is None else r - w
                        for s in range(d * (r + p), L - v + 1):
                            for c in range(w * (n - p) if w else 0, T - s - v - rows + 1):
                                qk = min(charged(s, c, d) + d * r * p, charged(s, c + r * p, d))  # 3-4, 12
                                alpha, t = c + r * p, T - s - v - c - sums + (c + r * p) // n * u
                                av = min(math.sqrt(alpha * v * t), d * alpha, n * v)
                                best = max(best, qk + av)
    return math.floor(best + 1e-6)


def test_the_joint_count_is_the_exact_maximum_of_its_program():
    rng = random.Random(11)
    for _ in range(30):
        n, d = rng.choice([1, 2, 4, 8, 32]), rng.choice([1, 2, 3])
        M, S = rng.randint(3, 6), rng.randint(1, 8)
        start, end = rng.random() < 0.5, rng.random() < 0.5
        exact = enumerated_joint_capacity(n, d, M, S, start, end)
        assert joint_segment_capacity(n, d, M, S, start, end) == exact, (n, d, M, S, start, end)


def test_a_hand_counted_capacity():
    # n = 2, d = 1, M = 3, S = 1: T = 7, L = 4; u = r = p = 0 and s = q + k = 4 leave c = 3 charged pairs:
    # min(2 sqrt(3), 1 * 3, 2^2) = 3; one closed pair (r = p = 1, v = 1) in a row that is not full (step 10: d + 1 = 2
    # charges for its T tree and row sum) leaves s = 3, c = 1: min(1.5, 1, 2.25) + 1 = 2; in a full row (its T tree
    # still a charge, step 5; c >= n - p = 1) s = 3, c = 2: min(2.1, 2, 2.25) + 1 = 3
    assert segment_capacity(2, 1, 3, 1) == 3 == enumerated_capacity(2, 1, 3, 1)


def test_the_optimiser_finds_the_programs_maximum():
    rng = random.Random(7)
    for _ in range(120):
        n, d = rng.choice([1, 2, 3, 4, 8, 16, 32]), rng.choice([1, 2, 3, 4])
        M, S = rng.randint(3, 16), rng.randint(1, 30)
        assert segment_capacity(n, d, M, S) == enumerated_capacity(n, d, M, S), (n, d, M, S)
        start, end = rng.random() < 0.5, rng.random() < 0.5
        assert segment_capacity(n, d, M, S, start, end) == enumerated_capacity(n, d, M, S, start, end), \
            (n, d, M, S, start, end)


def test_the_first_and_last_segments_budgets_by_hand():
    # n = 2, d = 1, M = 3, S = 1 starting the schedule: T = M + S = 4, L = S = 1: q + k <= 1, no product;
    # ending it: T = 4, L = 4: s = 4 leaves no charge (c = 0), s = 3 one (min(1.5, 1, 2.25) = 1), so 1
    assert segment_capacity(2, 1, 3, 1, start=False) == 0 == enumerated_capacity(2, 1, 3, 1, start=False)
    assert segment_capacity(2, 1, 3, 1, end=False) == 1 == enumerated_capacity(2, 1, 3, 1, end=False)
    assert segment_capacity(2, 1, 3, 1) == 3


def test_segments_needed_by_hand():
    # middle segments 30 each, first 10, last 20, a lone segment 25
    assert [segments_needed(W, 30, 10, 20, 25) for W in (25, 26, 30, 31, 60, 61, 100)] == [1, 2, 2, 3, 3, 4, 5]
    assert segments_needed(50, 0, 10, 20, 25) == 0  # no schedule has such segments: the bound says nothing
    # never fewer than ceil(W / F) when the ends count at most F each (the earlier count's h)
    for W in range(1, 200):
        assert segments_needed(W, 30, 10, 20, 25) >= -(-W // 30)


def schedules(G, M):
    out = {"greedy": greedy_schedule(G, M)}
    for name in PUBLISHED:
        try:
            out[name] = algorithm(name).generate(G, M)
        except InfeasibleMemory:
            continue
    return out


def assert_every_step(G, schedule, M, S):
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    F, Fj = segment_capacity(n, d, M, S), joint_segment_capacity(n, d, M, S)
    segments = segment_charges(G, schedule, S)
    assert sum(c["products"] for c in segments) == sum(c["av"] for c in segments) == n * n * d  # oneshot: once each
    assert segments[0]["first"] and segments[-1]["last"] and sum(c["first"] + c["last"] for c in segments) == 2
    for c in segments:
        inputs = c["q"] + c["k"] + c["v"]
        T, L = budgets(M, S, not c["first"], not c["last"])  # step 9
        assert inputs <= c["start_or_loaded"] <= L  # step 1
        assert c["B"] <= T
        assert c["closed_whole"]  # step 4: a closed pair's tree and A_ij are computed in the segment
        assert c["closed"] <= c["closed_rows"] * c["closed_cols"]
        assert d * c["closed_rows"] <= c["q"] and d * c["closed_cols"] <= min(c["k"], c["v"])
        # step 12: charged and closed pairs in one Loomis-Whitney count
        pairs = c["charged"] + c["closed"]
        assert c["products"] <= min(math.sqrt(c["q"] * c["k"] * pairs), d * pairs, c["q"] * c["k"]) + 1e-9
        # step 5: every T tree (with its output O_ic) of a closed row meets B
        assert c["t_neither"] == 0 and c["t_whole"] == 0 and c["t_met"] == d * c["closed_rows"]
        assert inputs + c["charged"] + c["t_met"] <= c["B"]  # steps 1, 3, 5: disjoint charges in B
        assert c["products"] <= F, (c, F)
        assert c["products"] <= segment_capacity(n, d, M, S, not c["first"], not c["last"]), c
        # steps 6-8: the A_ij read, the T trees touched, the joint count
        assert c["active_unmet_closed"] and c["alpha"] <= c["active_met"] + c["closed_rows"] * c["closed_cols"]
        assert c["touched"] == c["touched_met"] + c["touched_whole"]
        assert c["touched_whole"] == 0  # step 7: every touched T tree meets B
        assert inputs + c["active_met"] + c["touched_met"] + c["l_met"] <= c["B"]
        assert c["av"] <= math.sqrt(c["alpha"] * c["v"] * c["touched"]) + 1e-9
        # step 10: whole row sums and T trees only in full rows, d + 1 charges per other closed row, disjoint
        open_rows = c["closed_rows"] - c["full_rows"]
        assert c["l_whole_not_full"] == 0 and c["t_whole_not_full"] == 0
        assert c["t_met_not_full"] == d * open_rows and c["l_met"] >= open_rows
        assert c["full_fewest_open"] >= n - c["closed_cols"]
        assert c["full_rows"] * (n - c["closed_cols"]) <= c["full_active_met"] <= c["active_met"]
        assert inputs + c["active_met"] + c["t_met"] + c["l_met"] <= c["B"]
        assert c["products"] + c["av"] <= Fj, (c, Fj)
        assert c["products"] + c["av"] <= joint_segment_capacity(n, d, M, S, not c["first"], not c["last"]), c
        assert_shared_step(c, M, S, inputs, (c["charged"] + c["t_met"], c["active_met"] + c["t_met"] + c["l_met"]),
                           lambda TL: segment_capacity(n, d, M, S, budgets=TL) >= c["products"]
                           and joint_segment_capacity(n, d, M, S, budgets=TL) >= c["products"] + c["av"])
    assert_boundaries_shared(segments, M)
    return max(c["products"] for c in segments), F


def assert_shared_step(c, M, S, inputs, charges, counts_hold):
    """Step 11 on one segment: its boundaries' red non-inputs a, b give budgets that hold inputs, charges, products."""
    T, L = shared_budgets(M, S, c["a"], c["b"], not c["first"], not c["last"])
    assert inputs <= c["inputs_available"] <= L  # at most M - a inputs red at the start
    assert max(inputs + x for x in charges) <= c["B_shared"] <= T  # every charge is a non-input of B'
    assert counts_hold((T, L)), c


def assert_boundaries_shared(segments, M):
    """The non-inputs red at the end of a segment are the ones red at the start of the next (x_k of step 11)."""
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M


@pytest.mark.parametrize("n,d,M", [(8, 2, 4), pytest.param(4, 4, 8, marks=pytest.mark.slow),
                                   pytest.param(8, 2, 8, marks=pytest.mark.slow),
                                   pytest.param(6, 3, 9, marks=pytest.mark.slow),
                                   pytest.param(16, 4, 8, marks=pytest.mark.slow),
                                   pytest.param(16, 4, 16, marks=pytest.mark.slow)])
def test_every_segment_of_the_replayed_schedules_obeys_each_step(n, d, M):
    G = build("attention-forward", n=n, d=d)
    b = forward_segment_bound(n, d, M)
    for name, sch in schedules(G, M).items():
        assert replay(G, sch).computes == G.number_of_nodes() - 3 * n * d  # valid (replay raises otherwise) and oneshot
        for S in sorted({1, max(1, M // 2), M, 2 * M, b.S}):
            assert_every_step(G, sch, M, S)


@pytest.mark.parametrize("n,d,M", [pytest.param(8, 2, 12, marks=pytest.mark.slow), (6, 2, 16),
                                   pytest.param(8, 1, 8, marks=pytest.mark.slow)])
def test_closed_pairs_full_and_other_rows_occur_and_obey_each_step(n, d, M):
    # at M well above d the segments of flash-forward, tiled-forward and greedy close pairs: steps 4, 5 and 10 are
    # checked on segments where they say something (rows that are full and rows that are not, row sums met)
    G = build("attention-forward", n=n, d=d)
    seen = {"closed": 0, "full": 0, "open": 0, "l_met": 0}
    for sch in schedules(G, M).values():
        for S in (M // 2, M, 2 * M, 4 * M):
            assert_every_step(G, sch, M, S)
            for c in segment_charges(G, sch, S):
                seen["closed"] += c["closed"]
                seen["full"] += c["full_rows"]
                seen["open"] += c["closed_rows"] - c["full_rows"]
                seen["l_met"] += c["l_met"]
    assert min(seen.values()) > 0, seen


def test_exact_optima_obey_each_step_and_the_bound():
    from spartition.exact.solve import solve_io

    for n, d, M, opt in ((2, 1, 3, 24), (2, 1, 4, 15)):
        G = build("attention-forward", n=n, d=d)
        r = solve_io(G, M, "oneshot", time_limit=60, workers=1)
        assert r.status == "OPTIMAL" and r.io == opt
        for S in range(1, 2 * M + 1):
            worst, F = assert_every_step(G, r.schedule, M, S)
            assert worst <= F
        assert forward_segment_bound(n, d, M).value <= opt


@pytest.mark.parametrize("n,d,M", [(8, 2, 3), (16, 2, 4), (16, 4, 8), pytest.param(16, 4, 16, marks=pytest.mark.slow),
                                   (32, 2, 4)])
def test_the_bound_says_more_than_the_trivial_one_and_no_schedule_beats_it(n, d, M):
    G = build("attention-forward", n=n, d=d)
    b = forward_segment_bound(n, d, M)
    assert b.value > 4 * n * d  # informative
    W = n * n * d * (2 if b.weight == "QK+AV" else 1)
    apart = segments_needed(W, b.capacity, b.first, b.last, b.whole)  # step 9's h, from the same four counts
    assert b.value == b.S * (b.segments - 1) and (b.segments > apart if b.shared else b.segments == apart)
    assert max(b.first, b.last) <= b.capacity and b.whole <= min(b.first, b.last)
    assert b.segments >= -(-W // b.capacity)  # at least the earlier count's ceil(W / F)
    for name, sch in schedules(G, M).items():
        assert replay(G, sch).io >= b.value, name


def test_registered_as_an_explicit_oneshot_bound_for_dense_dags_only():
    f = formula_named("segment-forward-lower")
    assert f.kind == "lower" and f.constants == "explicit" and f.variants == ("oneshot",)
    (v,) = [x for x in evaluate_formulas("attention-forward", {"n": 32, "d": 2}, 4) if x.name == f.name]
    # step 12 lifts the bound of steps 1-10 (2,238 at S = 6) to 2,651 (11 (242 - 1)); step 11 then to 2,835:
    # 9 (316 - 1) at S = 9, where 2,520 (8 (316 - 1)) without step 12
    assert v.applies and v.value == forward_segment_bound(32, 2, 4).value == 2835
    b = forward_segment_bound(32, 2, 4)
    assert b.shared and (b.S, b.segments) == (9, 316)
    (m,) = [x for x in evaluate_formulas("attention-forward", {"n": 8, "d": 2, "mask": "causal"}, 4) if x.name == f.name]
    assert not m.applies


# oneshot optima proven OPTIMAL by solve_io(G, M, "oneshot", engine="maxsat", workers=1) (docs/findings.md)
PROVEN_OPTIMA = {(2, 1, 3): 24, (2, 1, 4): 15, (2, 1, 5): 11, (2, 1, 6): 10, (2, 2, 3): 52, (2, 2, 4): 36,
                 (2, 2, 5): 24, (2, 2, 6): 22, (2, 2, 7): 20, (2, 2, 8): 17, (3, 1, 3): 57, (3, 1, 4): 33,
                 (3, 1, 6): 21, (2, 3, 8): 28, (2, 3, 9): 26, (2, 3, 10): 25,
                 # the portfolio at 120 s (docs/exact_frontier.md, issue 22's targets)
                 (2, 3, 3): 79, (2, 3, 4): 56, (2, 3, 5): 40, (2, 3, 6): 35, (2, 3, 7): 32, (2, 3, 11): 24}


def test_the_bound_never_exceeds_a_proven_optimum():
    for (n, d, M), opt in PROVEN_OPTIMA.items():
        b = forward_segment_bound(n, d, M)
        assert 4 * n * d <= opt and b.value <= opt, (n, d, M, b, opt)


def enumerated_shared_segments(W, count, M):
    """Step 11's least h, every boundary sequence x_1 .. x_(h-1) in 0..M tried (no cells)."""
    if count(False, False, 0, 0) >= W:
        return 1
    best = {x: count(False, True, 0, x) for x in range(M + 1)}  # best sum ending at boundary x
    for h in range(2, 60):
        if max(best[x] + count(True, False, x, 0) for x in range(M + 1)) >= W:
            return h
        best = {y: max(best[x] + count(True, True, x, y) for x in range(M + 1)) for y in range(M + 1)}
    return 0


def random_boundary_count(rng, M):
    """A count non-increasing in a and non-decreasing in b, as the budgets of step 11 make the real ones."""
    base = {(s, e): rng.randint(1 if s and e else 0, 9) for s in (False, True) for e in (False, True)}
    fall = sorted((rng.randint(0, 6) for _ in range(M + 1)), reverse=True)  # in a
    rise = sorted(rng.randint(0, 6) for _ in range(M + 1))  # in b
    return lambda start, end, a, b: base[start, end] + min(fall[a] if start else 6, rise[b] if end else 6)


def test_shared_segments_needed_against_every_boundary_sequence():
    # exact with one cell per value; with coarse cells never above the truth (a weaker, still valid h)
    rng = random.Random(11)
    for _ in range(80):
        M, W = rng.randint(1, 6), rng.randint(1, 150)
        count = random_boundary_count(rng, M)
        exact = enumerated_shared_segments(W, count, M)
        assert shared_segments_needed(W, count, M, cells=M) == exact, (W, M)
        assert shared_segments_needed(W, count, M, cells=2) <= exact


def test_step_11_by_hand():
    # n = 2, d = 1: a middle segment with S = 1 whose start holds M = 3 red non-inputs reads only its one load
    # (L = 1): no closed pair (needs Q_i, K_j, V_j), and one charged pair's product needs 2 inputs: nothing
    assert shared_budgets(3, 1, 3, 0) == (4, 1)
    assert segment_capacity(2, 1, 3, 1, budgets=(4, 1)) == 0
    # with no red non-input at its start, it may read M + S = 4 inputs: step 9's count, 3 with b = 3
    assert shared_budgets(3, 1, 0, 3) == (7, 4) and segment_capacity(2, 1, 3, 1, budgets=(7, 4)) == 3
    assert segment_capacity(2, 1, 3, 1, budgets=(7, 4)) == segment_capacity(2, 1, 3, 1)


@pytest.mark.parametrize("n,d,M,S,h", [(16, 2, 8, 14, 30), (32, 2, 4, 9, 316)])
def test_the_shared_bound_ends_a_tooth_of_its_sawtooth(n, d, M, S, h):
    # S (h(S) - 1) peaks where h(S) is about to drop: one I/O move more per segment and fewer segments suffice
    b = forward_segment_bound(n, d, M)
    assert (b.weight, b.shared, b.S, b.segments) == ("QK+AV", True, S, h)

    def at(S):
        return shared_bound(2 * n * n * d, M, S, "QK+AV", lambda TL: joint_segment_capacity(n, d, 0, 0, budgets=TL))

    assert at(S) == b and at(S + 1).segments < h <= at(S - 1).segments


def test_a_program_search_stopped_early_still_bounds_the_maximum():
    from spartition.families.common.programs import program_maximum

    def bound(lo, hi):  # the most x y z with x + y + z <= 20: 7 * 7 * 6 = 294
        return np.where(lo.sum(axis=1) <= 20, (hi[:, 0] * hi[:, 1] * hi[:, 2]).astype(float), -np.inf)

    assert program_maximum(bound, [0, 0, 0], [20, 20, 20]) == 294
    early = [program_maximum(bound, [0, 0, 0], [20, 20, 20], max_cells=k) for k in (1, 4, 16, 64)]
    assert all(v >= 294 for v in early) and early[0] == 20 ** 3
    # a true upper bound (the maximum at larger budgets) only ends the search sooner; a known maximum ends it at once
    assert program_maximum(bound, [0, 0, 0], [20, 20, 20], at_most=300) == 294
    assert program_maximum(bound, [0, 0, 0], [20, 20, 20], at_least=294, at_most=294.5) == 294


def test_the_joint_count_is_searched_up_to_m_d_of_512():
    # the count of both products is the larger where it runs (270 > 138); above the cap only Q K^T is counted
    assert JOINT_SEGMENT_MAX_MD == 512
    at, above = forward_segment_bound(2, 64, 8), forward_segment_bound(2, 64, 9)
    assert (at.weight, at.value, above.weight, above.value) == ("QK+AV", 270, "QK", 138)
