"""The backward segment counts valid with recomputation (spartition.families.attention.backward.recompute_bounds).

The programs against plain enumerations, every step of the proofs on every
segment of greedy, published and really recomputing schedules (values deleted
unstored and rebuilt), the bound against every replayed schedule and the
oneshot optimum it must stay below, and its registration for both games.
"""

import math
import random

import pytest
from spartition.families.attention.backward.bounds import backward_segment_capacity
from spartition.families.attention.backward.recompute_bounds import (
    backward_recompute_bound,
    backward_recompute_capacity,
    backward_recompute_consumer_capacity,
    backward_recompute_joint_capacity,
)
from spartition.families.attention.backward.recompute_charges import backward_recompute_charges
from spartition.families.attention.segment_claims import (
    enumerated_backward_count as enumerated,
)
from spartition.families.common.segments import shared_budgets

from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.core.recomputing import recomputing_schedule
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.partition.designation import designate, designated_segments
from spartition.study.formulas import evaluate_formulas, formula_named


def test_the_counts_are_the_maxima_of_their_programs():
    rng = random.Random(39)
    for _ in range(20):
        n, d = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3])
        T, L = rng.randint(0, 18), rng.randint(0, 11)
        assert backward_recompute_capacity(n, d, T, L) == enumerated(n, d, T, L), (n, d, T, L)
        assert backward_recompute_joint_capacity(n, d, T, L) == enumerated(n, d, T, L, "all"), (n, d, T, L)
        assert backward_recompute_consumer_capacity(n, d, T, L) == enumerated(n, d, T, L, "consumers"), (n, d, T, L)


def test_the_search_finds_the_maximum_whichever_corners_it_reads(monkeypatch):
    # program_maximum reads the corners of its most promising cells only (CORNER_CELLS, for speed); with one cell
    # a round the search prunes later but must end at the same maxima: those of the plain enumeration
    from spartition.families.attention.backward import recompute_programs
    from spartition.families.common import programs

    monkeypatch.setattr(programs, "CORNER_CELLS", 1)
    monkeypatch.setattr(recompute_programs, "_MAXIMA", {})
    for n, d, T, L in [(3, 2, 18, 11), (4, 3, 17, 10)]:
        for counted in ("QK+dOV", "all", "consumers"):
            assert recompute_programs.searched_maximum(n, d, T, L, counted) == enumerated(n, d, T, L, counted)


def test_hand_counted_capacities():
    # n = 2, d = 1, T = 5, L = 3: three entries read (Q_0, K_0, K_1) and c = 2 charged pairs give
    # F(3, 2) = min(1.5 sqrt(2), 2, 2.25) = 2 products; a closed pair would cost t = 1 and a line of reads more
    assert backward_recompute_capacity(2, 1, 5, 3) == 2 == enumerated(2, 1, 5, 3)
    # the joint count: two entries of dO and V read by charged pairs (c = 2: F(2, 2) = 1 dO V^T product) and
    # t = 1 consumer tree in B' for the P o dO, dS K, dS^T Q products of the alpha = 2 pairs: min(sqrt(2 * 2 * 1),
    # 3 * 2) = 2; a closed pair would cost a row charge (l_i) besides its reads
    assert backward_recompute_joint_capacity(2, 1, 5, 3) == 3 == enumerated(2, 1, 5, 3, "all")
    # the consumer products alone: the same two pairs and tree, min(sqrt((2 * 2 + 2 * 0) * 1), 3 * 2) = 2
    assert backward_recompute_consumer_capacity(2, 1, 5, 3) == 2 == enumerated(2, 1, 5, 3, "consumers")
    # one input read (L = 1) and T = 17 far above the 3 n d = 3 consumer trees: the Loomis-Whitney term takes
    # t <= 3 (0.25 + sqrt(1 * 1 * 3) = 1.98), not t = 16 (0.25 + min(sqrt(16), 3) = 3.25)
    assert backward_recompute_joint_capacity(1, 1, 17, 1) == 1 == enumerated(1, 1, 17, 1, "all")


def schedules(G, M):
    out = {"greedy": greedy_schedule(G, M, "recompute")}
    out.update({f"recomputing-{seed}": recomputing_schedule(G, M, seed=seed) for seed in range(2)})
    out["recomputing-half"] = recomputing_schedule(G, M, seed=3, drop=0.5, shuffle=False)
    for name in ("flash-backward", "tiled-backward", "materialised-backward"):
        try:
            out[name] = algorithm(name).generate(G, M, **({"variant": "recompute"} if name != "tiled-backward" else {}))
        except InfeasibleMemory:
            continue
    return out


def assert_every_step(G, schedule, M, S):
    """Steps 1-9 of the two proofs on each segment; returns the segments' charges."""
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    segments = backward_recompute_charges(G, schedule, S)
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M
    for c in segments:
        T, L = shared_budgets(M, S, c["a"], c["b"], not c["first"], not c["last"])
        s1, s2 = c["q"] + c["k"], c["o"] + c["v"]
        assert s1 + s2 + c["rows_qk"] <= c["inputs_available"] <= L  # steps 1, 8: an l_i per QK-closed row
        assert c["rows_qk_l"] == c["rows_qk"] and c["rows_dov_d"] == c["rows_dov"]  # step 8
        assert c["closed_whole"]  # step 4: a closed copy lies whole in the segment
        assert c["dov_in_qk"] and c["rows_dov_in_qk"]  # step 4: a dOV-closed pair is QK-closed
        # step 7: a QK-closed pair that is not dOV-closed reaches a dV tree of its column and reads dO in its row
        assert c["qk_only_in_dv"] and c["qk_only_rows_read_do"]
        assert c["qk_only"] <= c["rows_qk"] * min(c["qk_only_cols"], c["t"])
        assert d * c["rows_dov"] + (c["rows_qk"] - c["rows_dov"]) <= c["o"]
        assert d * c["rows_qk"] <= c["q"] and d * c["cols_qk"] <= c["k"]
        assert d * c["rows_dov"] <= c["o"] and d * c["cols_dov"] <= c["v"]
        assert c["touched_met"] == c["touched"] <= c["t"] and c["t_lines"] <= c["t"]  # step 6
        assert c["closed_covered"]  # step 7: every closed pair's row or column has a consumer tree in B'
        for kind, r, p in (("qk", c["rows_qk"], c["cols_qk"]), ("dov", c["rows_dov"], c["cols_dov"])):
            assert c["closed_" + kind] <= min(r * p, c["t_lines"] * max(r, p))
        assert c["closed_dov"] <= c["closed_qk"] <= c["closed_dov"] + c["rows_qk"] * min(c["cols_qk"], c["t"])
        assert s1 + s2 + c["pairs_met"] + c["t"] + c["rows_qk"] + c["rows_dov"] <= c["B_shared"] <= T  # 3, 6, 8
        # step 5: Loomis-Whitney over the charged and closed pairs of each kind
        assert c["qk"] <= min(math.sqrt(c["q"] * c["k"] * c["qk_pairs"]), d * c["qk_pairs"]) + 1e-9
        assert c["dov"] <= min(math.sqrt(c["o"] * c["v"] * c["dov_pairs"]), d * c["dov_pairs"]) + 1e-9
        assert c["qk"] + c["dov"] <= backward_recompute_capacity(n, d, T, L), c
        assert c["alpha_ok"] and c["alpha"] <= c["pairs_met"] + c["closed_qk"]  # step 8
        assert c["alpha_ds_ok"] and c["alpha_p"] <= c["pairs_met"] + c["closed_qk"]  # step 9
        assert c["alpha_ds"] <= c["pairs_met"] + c["closed_dov"]
        # step 10: P o dO reads dO (o <= s2), dS K and dS^T Q read K and Q (s1)
        reads = c["alpha_p"] * c["o"] + c["alpha_ds"] * (c["q"] + c["k"])
        assert c["consumer"] <= min(math.sqrt(reads * c["touched"]), d * (c["alpha_p"] + 2 * c["alpha_ds"])) + 1e-9
        assert c["qk"] + c["dov"] + c["consumer"] <= backward_recompute_joint_capacity(n, d, T, L), c
        assert c["consumer"] <= backward_recompute_consumer_capacity(n, d, T, L), c
    assert sum(c["qk"] for c in segments) >= n * n * d and sum(c["dov"] for c in segments) >= n * n * d
    assert sum(c["consumer"] for c in segments) >= 3 * n * n * d
    return segments


@pytest.mark.parametrize("n,d,Ms", [(4, 1, (3, 6, 13)), pytest.param(4, 2, (4, 6, 20), marks=pytest.mark.slow),
                                    pytest.param(6, 2, (4, 8, 24), marks=pytest.mark.slow)])
def test_every_segment_of_replayed_schedules_obeys_each_step(n, d, Ms):
    G = build("attention-backward-flash", n=n, d=d)
    closed = recomputed = 0
    for M in Ms:
        bound = backward_recompute_bound(n, d, M)
        for name, s in schedules(G, M).items():
            assert bound.value <= replay(G, s).io, (name, M)
            recomputed += bool(designate(G, s).computed_twice())
            for S in sorted({1, max(1, M // 2), M, 2 * M, bound.S}):
                closed += sum(c["closed_qk"] + c["closed_dov"] for c in assert_every_step(G, s, M, S))
    assert closed and recomputed  # closed pairs occur and the schedules really rebuild values


def test_a_recomputing_schedule_breaks_the_oneshot_count_and_obeys_this_one():
    # products deleted unstored and rebuilt: some segment computes more Q K^T and dO V^T products than the oneshot
    # count allows (it counts every computation), and every segment obeys the recompute-valid counts
    n, d, M = 4, 2, 8
    G = build("attention-backward-flash", n=n, d=d)
    broken = 0
    for seed in range(4):
        s = recomputing_schedule(G, M, seed=seed)
        des = designate(G, s)
        for S in (1, 2, 3, M, 2 * M):
            assert_every_step(G, s, M, S)
            for seg in designated_segments(des, s, S):
                begin, stop = seg.moves
                computed = {v for move, v in s.moves[begin:stop]
                            if move == "compute" and G.nodes[v]["entry"][0] in ("QK", "dOV")}
                end = 0 if seg.last else sum(1 for v in seg.end if G.in_degree(v))
                T, L = shared_budgets(M, S, sum(1 for v in seg.start if G.in_degree(v)), end, not seg.first,
                                      not seg.last)
                broken += len(computed) > backward_segment_capacity(n, d, M, S, budgets=(T, L))
    assert broken


@pytest.mark.parametrize("n,d,M,joint,consumers", [(32, 2, 4, 4510, 4522), (32, 2, 8, 2856, 3000),
                                                   (16, 2, 4, 1122, 1134)])
def test_pinned_bounds_above_the_trivial_one(n, d, M, joint, consumers):
    for counted, value in (("all", joint), ("consumers", consumers)):
        b = backward_recompute_bound(n, d, M, counted=counted)
        assert b.value == value == b.S * (b.segments - 1) > 8 * n * d + n and b.skipped == (), counted
        assert b.weight == counted
    assert backward_recompute_bound(n, d, M).weight == "all"  # where the joint counts are searched


def test_the_bound_stays_below_the_oneshot_optimum_and_every_replayed_schedule():
    # the recompute optimum is at most the oneshot one (65 at n = 2, d = 1, M = 3, docs/exact_frontier.md)
    assert backward_recompute_bound(2, 1, 3).value <= 65
    G = build("attention-backward-flash", n=16, d=2)
    for M in (4, 8):
        bounds = [backward_recompute_bound(16, 2, M, counted=counted) for counted in ("QK+dOV", "all", "consumers")]
        for name, s in schedules(G, M).items():
            assert max(b.value for b in bounds) <= replay(G, s).io, (name, M)


@pytest.mark.parametrize("name,value", [("segment-backward-recompute-lower", 2856),
                                        ("segment-backward-consumer-lower", 3000)])
def test_registered_as_an_explicit_bound_of_both_games(name, value):
    f = formula_named(name)
    assert f.kind == "lower" and f.constants == "explicit" and set(f.variants) == {"oneshot", "recompute"}
    (v,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 32, "d": 2}, 8) if x.name == f.name]
    assert v.applies and v.value == value
    (w,) = [x for x in evaluate_formulas("attention-backward-flash", {"n": 4, "d": 2, "mask": "causal"}, 8)
            if x.name == f.name]
    assert not w.applies


def test_the_consumer_count_is_registered_before_the_joint_count():
    # the sandwich's formula child evaluates the formulas one after the other and sends each value as it finishes;
    # where both searches are long (d = 4, M >= 16) the consumer count is the larger, so it goes first and a row's
    # deadline cuts the smaller count
    names = [v.name for v in evaluate_formulas("attention-backward-flash", {"n": 4, "d": 1}, 3)]
    assert names.index("segment-backward-consumer-lower") < names.index("segment-backward-recompute-lower")


def test_not_evaluated_above_its_compute_cap():
    from spartition.families.attention.backward.recompute_bounds import BACKWARD_RECOMPUTE_MAX_M

    assert BACKWARD_RECOMPUTE_MAX_M == 64
    v = {f.name: f for f in evaluate_formulas("attention-backward-flash", {"n": 64, "d": 16}, 65)}
    assert not v["segment-backward-recompute-lower"].applies and not v["segment-backward-consumer-lower"].applies
