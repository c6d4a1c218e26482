"""The Q K^T segment count of dense attention forward valid with recomputation (spartition.families.attention.forward.recompute_bounds).

The count's program against a plain enumeration, hand-counted values, every
step of its proof on every segment of published, greedy and recomputing
schedules and of a schedule built to defeat the oneshot count (it computes
each row's A_ij for the row sum, deletes them unstored and rebuilds them for
A V, the pattern of issue 39), and the bound against exact optima and every
replayed schedule.
"""

import math
import random

import pytest

from spartition.core.game import Schedule, replay
from spartition.core.greedy import greedy_schedule
from spartition.core.recomputing import recomputing_schedule
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.families.attention.forward.bounds import segment_capacity
from spartition.families.attention.forward.recompute_bounds import (
    forward_recompute_av_capacity, forward_recompute_bound, forward_recompute_capacity, forward_recompute_joint_capacity,
)
from spartition.families.attention.forward.recompute_charges import forward_recompute_charges
from spartition.families.attention.forward.tiled import row_sums_first_forward, tiled_forward
from spartition.families.attention.segment_claims import enumerated_forward_av_count
from spartition.families.common.segments import shared_budgets
from spartition.partition.designation import designate
from spartition.study.formulas import evaluate_formulas, formula_named


def charged(s, c, d):
    return min(s / 2 * math.sqrt(c), d * c, (s / 2) ** 2)


def enumerated_capacity(n, d, T, L):
    """The program of forward_recompute_capacity's proof, every integer point (r, p, s, c) tried."""
    best = 0.0
    for r in range(0, min(n, L // d) + 1):
        for p in range(0, min(n, L // d) + 1):
            for s in range(d * (r + p), L + 1):
                for c in range(0, min(n * n, T - s - r) + 1):
                    best = max(best, min(charged(s, c, d) + d * r * p, charged(s, c + r * p, d)))
    return math.floor(best + 1e-6)


def test_the_count_is_the_maximum_of_its_program():
    rng = random.Random(5)
    for _ in range(60):
        n, d = rng.choice([1, 2, 3, 4, 8, 32]), rng.choice([1, 2, 3, 4])
        T, L = rng.randint(0, 40), rng.randint(0, 30)
        assert forward_recompute_capacity(n, d, T, L) == enumerated_capacity(n, d, T, L), (n, d, T, L)


def test_hand_counted_capacities():
    # n = 32, d = 2, a middle segment at M = 8, S = 8 (T = 24, L = 16): 4 closed rows and 4 closed columns read
    # s = 16 entries, pay 4 row charges, leave c = 4 charged pairs: min(8 * 2 + 2 * 16, 8 sqrt(20)) = 35.8
    assert forward_recompute_capacity(32, 2, 24, 16) == 35
    # n = 2, d = 1 at T = 7, L = 4: the oneshot count's 3 (segment_capacity(2, 1, 3, 1)); here the full
    # rows cost no row sum and no V: r = p = 2, s = 4, c = 1: min(1 + 4, min(2 sqrt(5), 5)) = 4.47
    assert forward_recompute_capacity(2, 1, 7, 4) == 4 and segment_capacity(2, 1, 3, 1) == 3


@pytest.mark.parametrize("n,d,M,value,S,h,weight", [
    (32, 2, 4, 2238, 6, 374, "QK+AV"), (32, 2, 8, 1192, 8, 150, "QK+AV"), (16, 2, 8, 304, 8, 39, "QK+AV"),
    pytest.param(32, 2, 16, 576, 16, 37, "QK+AV", marks=pytest.mark.slow),
    pytest.param(64, 4, 16, 8326, 23, 363, "QK+AV", marks=pytest.mark.slow)])
def test_pinned_bounds(n, d, M, value, S, h, weight):
    b = forward_recompute_bound(n, d, M)
    assert (b.value, b.S, b.segments, b.weight) == (value, S, h, weight) and value == S * (h - 1)
    assert value > 4 * n * d  # above the trivial bound


def row_rebuild_schedule(G, M, block):
    """Rows in blocks: each A_ij computed for the row sum l_i and deleted unstored, rebuilt from Q_i, K_j for A V.

    Q of the block stays red; the l and T sums are chains in j; only the outputs are stored (the pattern of
    issue 39's schedule that breaks the oneshot count).
    """
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    moves, red = [], set()

    def do(move, v):
        moves.append((move, v))
        (red.add if move in ("load", "compute") else red.discard if move == "delete" else (lambda _: None))(v)

    def build_value(v):  # post-order over the non-input predecessors (a tree: each has one successor)
        for u in G.predecessors(v):
            if u not in red and G.in_degree(u):
                build_value(u)
        do("compute", v)
        for u in G.predecessors(v):
            if G.in_degree(u):
                do("delete", u)

    def accumulate(acc, key, term, family):
        if key not in acc:
            acc[key] = term
            return
        (add,) = [s for s in G.successors(term) if G.nodes[s]["entry"][0] == family]
        do("compute", add)
        do("delete", acc[key])
        do("delete", term)
        acc[key] = add

    for top in range(0, n, block):
        rows = range(top, min(n, top + block))
        for i in rows:
            for t in range(d):
                do("load", f"Q_{i}_{t}")
        lsum, tsum = {}, {}
        for j in range(n):
            for t in range(d):
                do("load", f"K_{j}_{t}")
            for i in rows:
                build_value(f"A_{i}_{j}")
                if j:  # A_i0 is the first term of l_i's chain: kept until A_i1 is added to it
                    accumulate(lsum, i, f"A_{i}_{j}", "l")
                else:
                    lsum[i] = f"A_{i}_{j}"
            for t in range(d):
                do("delete", f"K_{j}_{t}")
        for i in rows:
            do("compute", f"r_{i}")
            do("delete", lsum[i])
        for j in range(n):
            for t in range(d):
                do("load", f"K_{j}_{t}")
                do("load", f"V_{j}_{t}")
            for i in rows:
                build_value(f"A_{i}_{j}")  # the second computation of A_ij
                for c in range(d):
                    do("compute", f"AV_{i}_{j}_{c}")
                    if j:
                        accumulate(tsum, (i, c), f"AV_{i}_{j}_{c}", "T")
                    else:
                        tsum[i, c] = f"AV_{i}_{j}_{c}"
                do("delete", f"A_{i}_{j}")
            for t in range(d):
                do("delete", f"K_{j}_{t}")
                do("delete", f"V_{j}_{t}")
        for i in rows:
            for c in range(d):
                do("compute", f"O_{i}_{c}")
                do("store", f"O_{i}_{c}")
                do("delete", f"O_{i}_{c}")
                do("delete", tsum[i, c])
            do("delete", f"r_{i}")
            for t in range(d):
                do("delete", f"Q_{i}_{t}")
    return Schedule(M, "recompute", moves)


def assert_every_step(G, schedule, M, S):
    """Steps 1-6 of forward_recompute_capacity's proof on each segment; returns the segments' charges."""
    n, d = G.graph["params"]["n"], G.graph["params"]["d"]
    segments = forward_recompute_charges(G, schedule, S)
    assert segments[0]["a"] == 0 and segments[-1]["b"] == 0
    for before, after in zip(segments, segments[1:]):
        assert before["b"] == after["a"] <= M
    for seg in segments:
        T, L = shared_budgets(M, S, seg["a"], seg["b"], not seg["first"], not seg["last"])
        assert seg["q"] + seg["k"] <= seg["inputs_available"] <= L  # step 1
        assert seg["closed_whole"]  # step 4: a closed pair has all d products designated in the segment
        assert d * seg["closed_rows"] <= seg["q"] and d * seg["closed_cols"] <= seg["k"]
        assert seg["closed"] <= seg["closed_rows"] * seg["closed_cols"]
        assert seg["rows_met"] == seg["closed_rows"]  # step 5: R_i meets B' for every closed row
        assert seg["q"] + seg["k"] + seg["charged"] + seg["closed_rows"] <= seg["B_shared"] <= T
        pairs = seg["charged"] + seg["closed"]  # step 6
        assert seg["products"] <= min(math.sqrt(seg["q"] * seg["k"] * pairs), d * pairs, seg["q"] * seg["k"]) + 1e-9
        assert seg["products"] <= forward_recompute_capacity(n, d, T, L), seg
        # steps 7-9 of the joint count
        assert seg["q"] + seg["k"] + seg["v"] <= seg["inputs_available"]
        assert seg["touched_met"] == seg["touched"] <= seg["row_nodes"] and seg["closed_rows"] <= seg["row_nodes"]
        assert seg["charged"] <= seg["pairs_met"]
        assert seg["q"] + seg["k"] + seg["v"] + seg["pairs_met"] + seg["row_nodes"] <= seg["B_shared"]
        assert seg["a_read_closed"] and seg["alpha"] <= seg["pairs_met"] + seg["closed"]
        assert seg["av"] <= math.sqrt(seg["alpha"] * seg["v"] * seg["touched"]) + 1e-9
        assert seg["products"] + seg["av"] <= forward_recompute_joint_capacity(n, d, T, L), seg
        assert seg["av"] <= forward_recompute_av_capacity(n, d, T, L), seg
    assert sum(seg["products"] for seg in segments) >= n * n * d
    assert sum(seg["av"] for seg in segments) >= n * n * d
    return segments


@pytest.mark.parametrize("n,d,M,block", [(10, 1, 15, 3), (12, 1, 15, 3)])
def test_a_schedule_that_defeats_the_oneshot_count_obeys_the_recompute_count(n, d, M, block):
    G = build("attention-forward", n=n, d=d)
    s = row_rebuild_schedule(G, M, block)
    io = replay(G, s).io
    assert {f"A_{i}_{j}" for i in range(n) for j in range(n)} <= designate(G, s).computed_twice()
    broken = 0
    for S in (M // 2, M, M + 1, 2 * M):
        for seg in assert_every_step(G, s, M, S):
            broken += seg["products"] > segment_capacity(n, d, M, S, not seg["first"], not seg["last"])
    assert broken  # some segment computes more products than the oneshot count allows: that count is oneshot only
    assert forward_recompute_bound(n, d, M).value <= io


def schedules(G, M):
    out = {"greedy": greedy_schedule(G, M, "recompute")}
    out.update({f"recomputing-{seed}": recomputing_schedule(G, M, seed=seed) for seed in range(2)})
    out["recomputing-half"] = recomputing_schedule(G, M, seed=3, drop=0.5, shuffle=False)
    # row-sums-first-forward really recomputes: its first pass's scores are made again in the fused pass
    for name in ("flash-forward", "tiled-forward", "square-tiling-forward", "row-sums-first-forward"):
        try:
            out[name] = algorithm(name).generate(G, M)
        except InfeasibleMemory:
            continue
    try:  # its first pass with a kept row of K: whole scores, one key at a time
        out["row-sums-first-kept-k"] = row_sums_first_forward(G, M, a=2, b=1, h=1, a0=2, keep_k0=True)
    except InfeasibleMemory:
        pass
    return out


@pytest.mark.parametrize("n,d,Ms", [(6, 2, (3, 4, 8)), (8, 1, (3, 6, 10)), (8, 2, (3, 8)), pytest.param(8, 2, (4, 12), marks=pytest.mark.slow),
                                    pytest.param(16, 2, (4, 8, 16), marks=pytest.mark.slow)])
def test_every_segment_of_replayed_schedules_obeys_each_step(n, d, Ms):
    G = build("attention-forward", n=n, d=d)
    closed = informative = 0
    for M in Ms:
        bound = forward_recompute_bound(n, d, M)
        av = forward_recompute_bound(n, d, M, counted="AV")
        informative += max(bound.value, av.value) > 4 * n * d
        for name, s in schedules(G, M).items():
            assert max(bound.value, av.value) <= replay(G, s).io, (name, M)
            for S in sorted({1, max(1, M // 2), M, 2 * M, bound.S, av.S}):
                closed += sum(seg["closed"] for seg in assert_every_step(G, s, M, S))
    assert closed and informative  # closed pairs occur (steps 4-5 say something) and the bound can fail


# recompute optima of n = 2, d = 1 by the step search (5 to 45 s each; M = 3 and d = 2 do not finish in 60 s)
RECOMPUTE_OPTIMA = {4: 15, 5: 11, 6: 10, 7: 9, 8: 8}


def test_the_bound_never_exceeds_a_recompute_optimum():
    for M, opt in RECOMPUTE_OPTIMA.items():
        assert forward_recompute_bound(2, 1, M).value == 5 <= opt
        assert forward_recompute_bound(2, 1, M, counted="AV").value <= opt


@pytest.mark.slow
@pytest.mark.parametrize("M", [5, 8])
def test_exact_recompute_optima_obey_each_step(M):
    from spartition.exact.steps import step_search

    G = build("attention-forward", n=2, d=1)
    r = step_search(G, M, variant="recompute")
    assert r.complete and r.io == RECOMPUTE_OPTIMA[M] == replay(G, r.schedule).io
    for S in range(1, r.io + 1):
        assert_every_step(G, r.schedule, M, S)


# proven oneshot optima (docs/findings.md): a bound valid in both games holds there too
ONESHOT_OPTIMA = {(2, 1, 3): 24, (2, 1, 4): 15, (2, 1, 5): 11, (2, 1, 6): 10, (2, 2, 3): 52, (2, 2, 4): 36,
                  (2, 2, 5): 24, (2, 2, 6): 22, (2, 2, 7): 20, (2, 2, 8): 17, (3, 1, 3): 57, (3, 1, 4): 33,
                  (3, 1, 6): 21, (2, 3, 3): 79, (2, 3, 4): 56, (2, 3, 5): 40}


def test_the_bound_never_exceeds_a_proven_oneshot_optimum():
    for (n, d, M), opt in ONESHOT_OPTIMA.items():
        assert forward_recompute_bound(n, d, M).value <= opt, (n, d, M)
        assert forward_recompute_bound(n, d, M, counted="AV").value <= opt, (n, d, M)


def test_registered_as_an_explicit_bound_of_both_games():
    f = formula_named("segment-forward-recompute-lower")
    assert f.kind == "lower" and f.constants == "explicit" and set(f.variants) == {"oneshot", "recompute"}
    (v,) = [x for x in evaluate_formulas("attention-forward", {"n": 32, "d": 2}, 8) if x.name == f.name]
    assert v.applies and v.value == 1192
    (m,) = [x for x in evaluate_formulas("attention-forward", {"n": 8, "d": 2, "mask": "causal"}, 4)
            if x.name == f.name]
    assert not m.applies


def enumerated_joint_capacity(n, d, T, L):
    """The program of forward_recompute_joint_capacity's proof, every integer point (r, p, s, v, c, t) tried."""
    best = 0.0
    for r in range(0, min(n, L // d) + 1):
        for p in range(0, min(n, L // d) + 1):
            for s in range(d * (r + p), L + 1):
                for v in range(0, min(L - s, n * d) + 1):
                    for t in range(r, T - s - v + 1):
                        c = min(n * n, T - s - v - t)  # the objective grows with c
                        qk = min(charged(s, c, d) + d * r * p, charged(s, c + r * p, d))
                        alpha = min(n * n, c + r * p)
                        best = max(best, qk + min(math.sqrt(alpha * v * t), d * alpha, n * v, n * t))
    return math.floor(best + 1e-6)


def test_the_joint_count_is_the_maximum_of_its_program():
    rng = random.Random(8)
    for _ in range(40):
        n, d = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3])
        T, L = rng.randint(0, 24), rng.randint(0, 14)
        assert forward_recompute_joint_capacity(n, d, T, L) == enumerated_joint_capacity(n, d, T, L), (n, d, T, L)


def test_a_hand_counted_joint_capacity():
    # n = 2, d = 1, T = 7, L = 4: one closed pair (r = p = 1), s = 3 entries of Q and K, v = 1 of V, t = 2 row
    # charges, c = 1 charged pair: Q K^T min(F(3, 1) + 1, F(3, 2)) = min(1 + 1, 2) = 2, A V over alpha = 2 pairs
    # min(sqrt(2 * 1 * 2), 2, 2, 4) = 2: 4 (the Q K^T count alone at these budgets: 4 as well)
    assert forward_recompute_joint_capacity(2, 1, 7, 4) == 4 == enumerated_joint_capacity(2, 1, 7, 4)


@pytest.mark.slow
def test_the_joint_count_is_searched_up_to_md_4096_and_stays_below_the_replayed_schedule():
    # n = 64, d = 8, M = 128 (M d = 1024): the QK count alone gave 2,176 against tiled-forward's 12,288 (5.6x);
    # M = 256 (M d = 2048, not searched before the program lost its column variable): 2,216, above the trivial 2,048
    b = forward_recompute_bound(64, 8, 128)
    assert (b.value, b.weight, b.skipped) == (4128, "QK+AV", ())
    G = build("attention-forward", n=64, d=8)
    assert b.value <= replay(G, tiled_forward(G, 128, "recompute")).io == 12288
    wide = forward_recompute_bound(64, 8, 256)
    assert (wide.value, wide.weight, wide.skipped) == (2216, "QK+AV", ()) and wide.value > 4 * 64 * 8
    assert wide.value <= replay(G, tiled_forward(G, 256, "recompute")).io


def test_the_av_count_is_the_maximum_of_its_program():
    rng = random.Random(11)
    for _ in range(40):
        n, d = rng.choice([1, 2, 3, 4, 8]), rng.choice([1, 2, 3])
        T, L = rng.randint(0, 24), rng.randint(0, 14)
        assert forward_recompute_av_capacity(n, d, T, L) == enumerated_forward_av_count(n, d, T, L), (n, d, T, L)


def test_a_hand_counted_av_capacity():
    # n = 2, d = 1, T = 7, L = 4: no entry of Q or K read (s = 0), v = 2 entries of V, t = 2 trees, c = 3 pairs
    # whose A is red at the start or loaded: min(sqrt(3 * 2 * 2), 1 * 3, 2 * 2, 2 * 2) = 3 (the joint count: 4,
    # its Q K^T products included)
    assert forward_recompute_av_capacity(2, 1, 7, 4) == 3 == enumerated_forward_av_count(2, 1, 7, 4)
    # n = 32, d = 2, a middle segment at M = 8, S = 8 (T = 24, L = 16)
    assert forward_recompute_av_capacity(32, 2, 24, 16) == 21


@pytest.mark.parametrize("n,d,M,value,S,h", [(32, 2, 16, 713, 23, 32), (16, 2, 16, 192, 24, 9), (16, 2, 8, 299, 23, 14)])
def test_the_av_count_where_it_beats_the_joint_one_and_where_it_does_not(n, d, M, value, S, h):
    # each A V product has one designated event, a Q K^T product one per copy of its tree: at M = 4 d^2 the
    # segments rebuild many A_ij from whole rows and the A V count alone needs more of them
    b = forward_recompute_bound(n, d, M, counted="AV")
    assert (b.value, b.S, b.segments, b.weight, b.skipped) == (value, S, h, "AV", ()) and value == S * (h - 1)
    joint = forward_recompute_bound(n, d, M)
    assert (value > joint.value) == (M == 4 * d * d)
    G = build("attention-forward", n=n, d=d)
    assert value <= replay(G, tiled_forward(G, M, "recompute")).io


def test_the_av_count_is_registered_as_an_explicit_bound_of_both_games():
    f = formula_named("segment-forward-av-lower")
    assert f.kind == "lower" and f.constants == "explicit" and set(f.variants) == {"oneshot", "recompute"}
    values = {x.name: x for x in evaluate_formulas("attention-forward", {"n": 32, "d": 2}, 16)}
    assert values[f.name].applies and values[f.name].value == 713
    assert values["segment-forward-recompute-lower"].value == 576
    (m,) = [x for x in evaluate_formulas("attention-forward", {"n": 8, "d": 2, "mask": "causal"}, 4)
            if x.name == f.name]
    assert not m.applies


def test_the_av_count_is_registered_before_the_joint_count():
    # the sandwich's formula child evaluates them in this order: where both searches are slow (M >= 2 d^2) the A V
    # count is the larger, so a row deadline that cuts the second cuts the smaller (n = 128, d = 8, M = 256: 11,104
    # against 8,184, each search about 20 s)
    names = [v.name for v in evaluate_formulas("attention-forward", {"n": 4, "d": 1}, 3)]
    assert names.index("segment-forward-av-lower") < names.index("segment-forward-recompute-lower")
