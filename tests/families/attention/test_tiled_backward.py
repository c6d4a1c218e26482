"""The COSMA-style tiled attention backward: valid from M = 4 at every tiling that fits, I/O equal to its closed form."""

import pytest

from spartition.core.bounds import min_feasible_memory
from spartition.core.dag import as_compact
from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.exact.search import best_schedule
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.exact.brute import brute_force
from spartition.families.attention.backward.dag import attention_backward_flash
from spartition.families.attention.backward.bounds import backward_segment_bound
from spartition.families.attention.backward.flash import flash_backward
from spartition.families.attention.backward.tiled import tiled_backward
from spartition.families.attention.backward.tiled_io import MIN_M, tiled_backward_io, tiled_backward_need, tiled_backward_space


def flash_min(d):
    return 7 * d + 6  # flash-backward's blocks of one row


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (3, 2), (4, 2), (5, 3), (3, 4)])
def test_every_tiling_replays_at_its_closed_form(n, d):
    G = attention_backward_flash(n, d)
    c = as_compact(G)
    assert min_feasible_memory(c) == 3 and MIN_M == 4  # one above the smallest M of any schedule
    # M = 4, 5 and just below flash-backward's minimum are all below it; 2 * flash_min(d) above it
    for M in sorted({4, 5, 7, flash_min(d) - 1, 2 * flash_min(d)}):
        space = tiled_backward_space(G.graph["params"], M)
        assert {"a": 1, "b": 1, "spill": True, "keep_dq": False, "keep_ld": False} in space or M > 4
        for o in space:
            r = replay(c, tiled_backward(G, M, **o))
            assert r.io == tiled_backward_io(G.graph["params"], M, **o), (M, o)
            kept = {k: v for k, v in o.items() if k not in ("a", "b", "spill")}
            assert r.peak_red <= tiled_backward_need(d, o["a"], o["b"], o["spill"], **kept) <= M


@pytest.mark.parametrize(
    "kw",
    [
        {"mask": "causal"},
        {"mask": "window"},
        {"mask": "random"},
        {"mask": "block"},
        {"order": "1,2,0", "jorder": "3,1,0,4,2", "iorder": "4,0,3,1,2"},
        {"mask": "causal", "iorder": "4,3,2,1,0", "jorder": "1,0,2,4,3"},
    ],
)
def test_masked_and_reordered_tilings_replay(kw):
    G = attention_backward_flash(5, 3, **kw)
    c = as_compact(G)
    for M in (4, 6, 11, 30):
        for o in tiled_backward_space(G.graph["params"], M) + [{}]:
            s = tiled_backward(G, M, **o)
            r = replay(c, s)
            assert r.peak_red <= M
            if s.meta["io_formula"] is not None:  # the orders alone keep the closed form
                assert r.io == s.meta["io_formula"]
    assert (tiled_backward_io(G.graph["params"], 6) is None) == ("mask" in kw)


def test_recompute_variant_replays_at_the_same_io():
    G = attention_backward_flash(3, 2)
    s = tiled_backward(G, 9, variant="recompute")
    assert s.variant == "recompute"
    assert replay(G, s).io == tiled_backward_io(G.graph["params"], 9)


def test_hand_computed_io():
    # n = 2, d = 1, a = b = 1 with spill at M = 4: four tiles.
    # D_0, D_1: dO and O loaded (4), D stored (2).
    # Per tile: S: Q, K (2); P: l (1); dV: dO (1), running dV stored (1); P stored and loaded (2);
    # dP: dO, V (2); dPD: D (1); dQ: K (1), dQ stored (1); dK: Q (1), dK stored (1) -> 14, 56 in all.
    # Running sums loaded back: dV_j and dK_j in the second row block (2 + 2), dQ_i at its second key (2).
    # Loads 4 + 4 * 10 + 6 = 50, stores 2 + 4 * 4 = 18.
    G = attention_backward_flash(2, 1)
    r = replay(G, tiled_backward(G, 4, a=1, b=1, spill=True))
    assert (r.io, r.loads, r.stores, r.peak_red) == (68, 50, 18, 4)
    # without the spill P stays resident beside dP (M = 5) and one pass over dO_I serves dP and dV:
    # the 2 * n^2 = 8 P moves and the 4 dO loads of the dV stage go
    r = replay(G, tiled_backward(G, 5, a=1, b=1, spill=False))
    assert (r.io, r.peak_red, tiled_backward_need(1, 1, 1, spill=False)) == (68 - 8 - 4, 5, 5)
    # keep_ld (M = 6): l_0, l_1 loaded once (2 instead of 4) and D never stored (-2) nor loaded (-4)
    r = replay(G, tiled_backward(G, 6, a=1, b=1, spill=True, keep_ld=True))
    assert (r.io, r.peak_red) == (68 - 2 - 2 - 4, 6)


def test_never_below_the_brute_force_optimum():
    # n = 1, d = 1 (16 nodes): the optima 12, 11, 10 (M = 4, 5, 6) against the cheapest tiling
    G = attention_backward_flash(1, 1)
    for M, opt in ((4, 12), (5, 11), (6, 10)):
        assert brute_force(G, M, "oneshot").io == opt
        found = best_schedule(G, algorithm("tiled-backward"), M)
        # M = 6: key blocks outer with Q kept from the S to the dK stage loads Q once (14 -> 13)
        assert found.io == {4: 17, 5: 14, 6: 13}[M] >= opt


def test_n2_d1_against_the_exact_frontier():
    # docs/exact_frontier.md: OPTIMAL 65 at M = 3 (below MIN_M, and an upper bound on the optimum at M = 4,
    # which the tiling misses by at least 3); proven CP-SAT lower bounds 30 at M = 5, 27 at M = 6
    G = attention_backward_flash(2, 1)
    with pytest.raises(InfeasibleMemory, match=r"tiled-backward: M = 3 is too small; its tiling needs M >= 4"):
        tiled_backward(G, 3)
    found = [best_schedule(G, algorithm("tiled-backward"), M) for M in (4, 5, 6)]
    assert [f.io for f in found] == [68, 56, 52]
    assert found[0].io > 65 and found[1].io >= 30 and found[2].io >= 27


@pytest.mark.parametrize("n, d", [(8, 2), pytest.param(8, 4, marks=pytest.mark.slow),
                                  pytest.param(12, 2, marks=pytest.mark.slow)])
def test_never_below_the_segment_bound_and_runs_below_flash(n, d):
    G = build("attention-backward-flash", n=n, d=d)
    for M in (4, 8, flash_min(d) - 1, flash_min(d), 4 * d * d):
        io = best_schedule(G, algorithm("tiled-backward"), M).io
        assert io >= backward_segment_bound(n, d, M).value
        if M < flash_min(d):
            with pytest.raises(InfeasibleMemory, match=r"flash-backward: M = \d+ is too small"):
                flash_backward(G, M)


def test_beats_greedy_and_flash_where_measured():
    # benchmarks/tiled_backward.py: n = 16, d = 2 (greedy 8,784 at M = 4, 5,161 at M = 16)
    G = attention_backward_flash(16, 2)
    assert replay(G, tiled_backward(G, 4)).io == 7664
    # M = 16 = 4 d^2: key blocks outer, one key with K, V, dK, dV resident (3,184 with row blocks outer)
    s = tiled_backward(G, 16)
    assert (replay(G, s).io, s.meta["outer"], s.meta["b"]) == (2736, "keys", 1)


def test_key_blocks_outer_by_hand():
    # n = 2, d = 1, a = b = 1, no spill, key blocks outer with K_j, V_j, dK_j, dV_j and Q_i kept:
    # D_0, D_1 before their rows' first tiles: dO and O loaded (4), D stored (2).
    # Per tile (4): Q_i, l_i, dO_i, D_i loaded and the running dQ_i stored (5); per key (2): K_j and V_j
    # loaded, the complete dV_j and dK_j stored (4); dQ_0, dQ_1 loaded back at the second key (2).
    G = attention_backward_flash(2, 1)
    o = {"a": 1, "b": 1, "spill": False, "outer": "keys"}
    r = replay(G, tiled_backward(G, 10, **o, keep_kv=True, keep_dkv=True, keep_q=True))
    assert (r.io, r.loads, r.stores, r.peak_red) == (36, 26, 10, 9)
    assert tiled_backward_need(1, 1, 1, False, outer="keys", keep_kv=True, keep_dkv=True, keep_q=True) == 10
    # the loop order alone moves what row blocks outer move (56 without the spill); each choice of what stays
    # resident saves its own: K 8 -> 2 and V 4 -> 2 loads; dV, dK 8 loads and 8 stores -> 4 stores; Q 8 -> 4
    ios = {k: replay(G, tiled_backward(G, 10, **o, **({k: True} if k else {}))).io
           for k in ("", "keep_kv", "keep_dkv", "keep_q")}
    assert ios == {"": 56, "keep_kv": 48, "keep_dkv": 48, "keep_q": 52}
    assert replay(G, tiled_backward(G, 10, a=1, b=1, spill=False)).io == 56


def test_flash_loop_order_streamed_beats_flash_backward_at_4_d_squared():
    # FlashAttention's own loop order with rows streamed fits three keys per block at M = 64, d = 4 (the paper's
    # blocks fit fewer); n = 16: 768 Q and dO + 384 K, V, dK, dV + 208 l, D + 704 dQ moves
    G = build("attention-backward-flash", n=16, d=4)
    s = tiled_backward(G, 64)
    r = replay(G, s)
    assert (s.meta["outer"], s.meta["a"], s.meta["b"], r.io) == ("keys", 1, 3, 2064)
    assert replay(G, flash_backward(G, 64)).io == 2560
    assert r.peak_red <= 64 and 2064 >= backward_segment_bound(16, 4, 64).value


def test_keep_options_belong_to_their_loop_order():
    G = attention_backward_flash(3, 2)
    with pytest.raises(ValueError, match=r"keep_kv and keep_dkv keep a key block resident and need outer='keys'"):
        tiled_backward(G, 40, a=1, b=1, keep_dkv=True)
    with pytest.raises(ValueError, match=r"keep_dq and keep_ld keep a row block resident and need outer='rows'"):
        tiled_backward(G, 40, a=1, b=1, outer="keys", keep_dq=True)
    with pytest.raises(ValueError, match=r"outer must be 'rows' or 'keys', got 'cols'"):
        tiled_backward(G, 40, a=1, b=1, outer="cols")
    with pytest.raises(InfeasibleMemory, match=r"needs M >= 12 \(a=1, b=1, spill=True, keep_dq=False, keep_ld=False, "
                       r"outer=keys, keep_kv=True, keep_dkv=True, keep_q=False\)"):
        tiled_backward(G, 11, a=1, b=1, outer="keys", keep_kv=True, keep_dkv=True)


def test_too_small_memory_names_the_need():
    G = attention_backward_flash(3, 2)
    with pytest.raises(InfeasibleMemory, match=r"needs M >= 15 \(a=3, b=3, spill=True, keep_dq=False, keep_ld=False\)"):
        tiled_backward(G, 14, a=3, b=3)
    with pytest.raises(ValueError, match=r"tile sizes must be >= 1, got a=0, b=1"):
        tiled_backward(G, 14, a=0, b=1)


def test_wrong_family_and_tree_sums_are_refused():
    with pytest.raises(InvalidDAG, match=r"tiled-backward runs on 'attention-backward-flash' DAGs, not 'attention-forward'"):
        tiled_backward(build("attention-forward", n=2, d=2), 9)
    with pytest.raises(InvalidDAG, match=r"tiled-backward accumulates sums as chains"):
        tiled_backward(attention_backward_flash(2, 2, shape="tree"), 9)


def test_registered():
    a = algorithm("tiled-backward")
    assert a.applies_to("attention-backward-flash") and not a.applies_to("attention-forward")
    G = attention_backward_flash(3, 2)
    M = a.min_memory(G.graph["params"])
    assert M == 4
    assert replay(G, a.generate(G, M)).io == a.io_formula(G.graph["params"], M)
