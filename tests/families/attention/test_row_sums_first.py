"""row-sums-first-forward: some rows' sums made first, their scores rebuilt; a schedule of the standard game only."""

import pytest

from spartition.core.dag import as_compact
from spartition.core.game import Schedule, replay
from spartition.core.registry import algorithm
from spartition.errors import InfeasibleMemory, InvalidSchedule, ParameterError
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.forward.tiled import (
    row_sums_first_forward,
    tiled_forward_io,
    tiled_forward_need,
)
from spartition.families.attention.forward.tiled_io import (
    first_pass_need,
    first_pass_rows,
    row_sums_first_io,
    row_sums_first_need,
    row_sums_first_space,
)


@pytest.mark.parametrize("n, d", [(4, 2), (7, 4), (5, 1), (3, 3)])
@pytest.mark.parametrize("M", [6, 9, 16, 32])
def test_every_tiling_replays_at_its_closed_form(n, d, M):
    G = attention_forward(n, d)
    c = as_compact(G)
    space = row_sums_first_space(G.graph["params"], M)
    assert space or M < d + 4
    for o in space:
        s = row_sums_first_forward(G, M, **o)
        r = replay(c, s)
        assert r.io == row_sums_first_io(G.graph["params"], M, **o), o
        first = bool(first_pass_rows(n, o["a"], o["h"]))
        need = row_sums_first_need(d, **o, has_first_pass=first)
        assert r.peak_red <= need <= M


@pytest.mark.parametrize("mask", ["causal", "window", "random"])
def test_masked_dags_replay(mask):
    G = attention_forward(7, 2, mask=mask)
    c = as_compact(G)
    for o in row_sums_first_space({"n": 7, "d": 2}, 16):
        r = replay(c, row_sums_first_forward(G, 16, **o))
        assert r.peak_red <= row_sums_first_need(2, **o)
    assert row_sums_first_io(G.graph["params"], 16) is None
    replay(c, row_sums_first_forward(G, 16))  # the dense DAG's cheapest tiling
    kept = row_sums_first_forward(G, 16, a=2, b=1, h=1, a0=2, keep_k0=True)  # whole scores of the masked pairs only
    assert replay(c, kept).peak_red <= row_sums_first_need(2, 2, 1, 1, True, 2, 1, True, keep_k0=True)


def test_hand_computed_io_and_the_row_it_gains():
    # n = 32, d = 4, M = 32. tiled-forward's resident blocks of 3 rows need 33 (3 S + 3 l + 12 Q + 12 T + 3 in
    # flight), so its best is 2-row blocks: 16 reads of K and V. Here each 3-row block folds 2 row sums (32) and
    # rows 2, 5, ..., 29 get r from a first pass: 4-row blocks streaming K (Q kept: 16 + 4 l + 4 * 2 S + 3 = 31)
    # read K 3 times; 5-row blocks keeping a row of K (20 Q + 5 l + 4 K + 3 in flight = 32) read it twice.
    G = attention_forward(32, 4)
    assert tiled_forward_need(4, 3, 1, "resident", keep_q=True) == 33 and tiled_forward_need(4, 2, 1, "resident", keep_q=True) == 23
    assert row_sums_first_need(4, 3, 1, 2, True, 4, 2, True) == 32
    assert row_sums_first_need(4, 3, 1, 2, True, 5, 1, True) == 33  # streaming K: 5 S + 5 l + 20 Q + 3, one too many
    assert row_sums_first_need(4, 3, 1, 2, True, 5, 1, True, keep_k0=True) == 32
    rows = first_pass_rows(32, 3, 2)
    assert rows == list(range(2, 30, 3)) and len(rows) == 10
    fused = 128 + 2 * 11 * 128 + 10 + 128    # Q, K and V per block of 3 (11 blocks), r loaded, O stored
    streamed = 10 * 4 + 3 * 128 + 10         # Q of its rows, K per block of 4, r stored
    kept = 10 * 4 + 2 * 128 + 10             # the same, K per block of 5
    s = row_sums_first_forward(G, 32, a=3, b=1, h=2, a0=4, b0=2)
    r = replay(G, s)
    assert r.io == streamed + fused == 3516 == row_sums_first_io(G.graph["params"], 32, a=3, b=1, h=2, a0=4, b0=2)
    assert r.peak_red == 32
    s = row_sums_first_forward(G, 32)
    r = replay(G, s)
    assert r.io == kept + fused == 3388 == row_sums_first_io(G.graph["params"], 32)
    assert r.peak_red == 32
    assert (s.meta["a"], s.meta["h"], s.meta["a0"], s.meta["keep_k0"]) == (3, 2, 5, True)
    assert tiled_forward_io(G.graph["params"], 32) == 4259  # tiled-forward's least at this M
    # at M = 31 the kept row of K fits four rows, as streaming does: the cheaper default streams, as before
    assert row_sums_first_forward(G, 31).meta["keep_k0"] is False


def test_a_kept_row_of_k_makes_each_score_whole_in_order():
    G = attention_forward(5, 3)
    s = row_sums_first_forward(G, 32, a=2, b=1, h=1, a0=2, keep_k0=True)
    r = replay(G, s)
    assert r.io == row_sums_first_io(G.graph["params"], 32, a=2, b=1, h=1, a0=2, keep_k0=True)
    assert r.peak_red <= row_sums_first_need(3, 2, 1, 1, True, 2, 1, True, keep_k0=True) == 18  # the fused pass
    assert first_pass_need(3, 2, 1, True, keep_k0=True) == 2 + 6 + 3 + 3  # l, Q, K_j, in flight
    moves = list(s.moves)
    # the first pass (rows 1 and 3, one block): Q kept, then K_0's row loaded whole and S_1_0, S_3_0 made whole
    # one after the other, each turned into A and dropped, before K_0 goes and K_1 comes
    assert moves[:6] == [("load", f"Q_{i}_{l}") for i in (1, 3) for l in range(3)]
    assert moves[6:9] == [("load", f"K_0_{l}") for l in range(3)]
    made = [v for m, v in moves[9:moves.index(("delete", "K_0_0"))] if m == "compute"]
    assert made == ["QK_1_0_0", "QK_1_0_1", "S_1_0~1", "QK_1_0_2", "S_1_0", "A_1_0",
                    "QK_3_0_0", "QK_3_0_1", "S_3_0~1", "QK_3_0_2", "S_3_0", "A_3_0"]
    assert moves.index(("store", "r_3")) < moves.index(("load", "r_1"))  # r stored before the fused pass reads it


def test_it_recomputes_and_is_refused_in_the_oneshot_game():
    G = attention_forward(6, 4)
    s = row_sums_first_forward(G, 32, a=3, b=1, h=2, a0=2)
    computed = {}
    for move, v in s.moves:
        if move == "compute":
            computed[v] = computed.get(v, 0) + 1
    # the first pass's rows (2 and 5): every score product made twice, every other once
    twice = {v for v, k in computed.items() if k == 2}
    assert {v for v in twice if v.startswith("QK_")} == {f"QK_{i}_{j}_{l}" for i in (2, 5) for j in range(6) for l in range(4)}
    # the scores, exponentials and the sums of their chains, nothing of the row sums, T or O
    assert all(k <= 2 for k in computed.values()) and {v.split("_")[0] for v in twice} == {"QK", "S", "A"}
    assert any(v.startswith("l_2") for v in computed) and "A_2_0" in twice
    with pytest.raises(InvalidSchedule, match="recompute of a node in the oneshot variant"):
        replay(G, Schedule(s.M, "oneshot", s.moves))
    alg = algorithm("row-sums-first-forward")
    assert alg.variants == ("recompute",) and not alg.applies_to("attention-forward", "oneshot")
    with pytest.raises(ParameterError, match="recompute"):
        alg.schedule(G, 32, "oneshot")


def test_bad_tiles_are_refused():
    G = attention_forward(6, 4)
    for bad in (dict(a=3, b=1, h=3), dict(a=3, b=1, h=-1), dict(a=3, b=0, h=1), dict(a=3, b=1, h=1.5),
                dict(a=3, b=1, h=1, a0=0)):
        with pytest.raises(ParameterError, match="0 <= h < a"):
            row_sums_first_forward(G, 32, **bad)
        with pytest.raises(ParameterError, match="0 <= h < a"):
            row_sums_first_io(G.graph["params"], 32, **bad)
    for bad in (dict(b0=2, keep_k0=True), dict(keep_q0=False, keep_k0=True)):
        with pytest.raises(ParameterError, match="keep_k0 .* needs b0 = 1 and keep_q0"):
            row_sums_first_forward(G, 32, a=3, b=1, h=2, **bad)
        with pytest.raises(ParameterError, match="keep_k0 .* needs b0 = 1 and keep_q0"):
            row_sums_first_io(G.graph["params"], 32, a=3, b=1, h=2, **bad)
    with pytest.raises(ParameterError, match="a needs b and h"):
        row_sums_first_forward(G, 32, a=3, h=2)
    with pytest.raises(ParameterError, match="b and h need a"):
        row_sums_first_io(G.graph["params"], 32, h=0)
    with pytest.raises(ParameterError, match="recompute game only, not oneshot"):
        row_sums_first_forward(G, 32, "oneshot")
    with pytest.raises(InfeasibleMemory, match="M >= 35"):
        row_sums_first_forward(G, 32, a=3, b=2, h=2)
    with pytest.raises(InfeasibleMemory, match="M >= 8"):
        row_sums_first_forward(G, 7)


def test_the_partial_game_and_oneshot_studies_leave_it_out():
    from spartition.core.partial_greedy import algorithm_partial_schedule
    from spartition.study.studies import StudySpec

    G = attention_forward(4, 4)
    with pytest.raises(ParameterError, match="recompute only; the partial game plays an algorithm's oneshot"):
        algorithm_partial_schedule(algorithm("row-sums-first-forward"), G, 32)
    runs = {v: StudySpec(family="attention-forward", params={"n": 4, "d": 4}, variant=v).algorithm_names()
            for v in ("oneshot", "recompute", "partial")}
    assert "row-sums-first-forward" in runs["recompute"]
    assert "row-sums-first-forward" not in runs["oneshot"] and "row-sums-first-forward" not in runs["partial"]
    assert set(runs["oneshot"]) == set(runs["recompute"]) - {"row-sums-first-forward"} == set(runs["partial"])
