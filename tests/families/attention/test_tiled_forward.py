"""The COSMA-style tiled attention forward: valid at every tiling that fits, I/O equal to its closed form."""

import pytest

from spartition.core.dag import as_compact
from spartition.core.game import replay
from spartition.core.registry import algorithm
from spartition.errors import InfeasibleMemory
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.forward.tiled import (
    MODES,
    tiled_forward,
    tiled_forward_io,
    tiled_forward_need,
    tiled_forward_space,
)


@pytest.mark.parametrize("n, d", [(4, 2), (5, 3), (7, 4), (3, 1), (3, 6)])
@pytest.mark.parametrize("M", [6, 7, 9, 16, 40])
def test_every_tiling_replays_at_its_closed_form(n, d, M):
    # M < d^2 at d = 3, 4, 6 (M = 6, 7, 9, 16); M = d at d = 6; below MIN_M = 6 see test_search
    G = attention_forward(n, d)
    c = as_compact(G)
    space = tiled_forward_space(G.graph["params"], M)
    modes = {o["mode"] for o in space}
    assert "spill" in modes and (modes == set(MODES) or M < 16)
    for o in space:
        r = replay(c, tiled_forward(G, M, **o))
        assert r.io == tiled_forward_io(G.graph["params"], M, **o), o
        need = tiled_forward_need(d, o["a"], o["b"], o["mode"], o["keep_q"], o["a2"], o["c2"], o.get("run", 0))
        assert r.peak_red <= need <= M


@pytest.mark.parametrize("mask", ["causal", "window", "random"])
def test_masked_tilings_replay(mask):
    G = attention_forward(6, 2, mask=mask)
    c = as_compact(G)
    for M in (6, 9, 16):
        for o in tiled_forward_space(G.graph["params"], M):
            replay(c, tiled_forward(G, M, **o))
    assert tiled_forward_io(G.graph["params"], 9) is None  # no closed form when masked


def test_hand_computed_io():
    # n = 4, d = 2, tiles a = 2 x b = 3, spill: N_I = N_J = 2.
    # Q: each of the 8 entries once per key block (16); K and V: once per row block (16 + 16);
    # running T_I_c stored after the first key block and loaded in the second (2 * 8 = 16); O stored (8).
    G = attention_forward(4, 2)
    s = tiled_forward(G, 13, a=2, b=3, mode="spill")
    r = replay(G, s)
    assert (r.io, r.loads, r.stores) == (72, 56, 16)
    assert r.peak_red <= 13


def test_two_pass_hand_computed_io():
    # n = 2, d = 2, a = b = 1, two-pass with T tiles a2 = 1 x c2 = 2:
    # phase 1: Q once per key block (2 * 4 = 8), K once per row block (8), A stored (4), r stored (2);
    # phase 2: A loaded once (4), V once per row (8), r once (2), O stored (4).
    G = attention_forward(2, 2)
    r = replay(G, tiled_forward(G, 6, a=1, b=1, mode="two-pass", a2=1, c2=2))
    assert r.io == 8 + 8 + 4 + 2 + 4 + 8 + 2 + 4 == tiled_forward_io(G.graph["params"], 6, a=1, b=1, mode="two-pass", a2=1, c2=2)


def test_phase2_runs_of_t_entries_hand_computed():
    # n = 32, d = 4, M = 16, two-pass, a = 2, b = 1, Q_I kept: phase 1 loads Q once (128) and K once per row block
    # (16 * 128), stores A (1,024) and r (32). Phase 2 in 2 x 4 rectangles (8 + 2 A entries + 3 in flight = 13): per key
    # 2 A and 4 V loads for 8 entries of T, 16 tiles. In runs of 10 entries (rows 0-1 and half of row 2, then the
    # rest of row 2 and rows 3-4, ...: 10 + 3 A entries + 3 in flight = 16): 12 tiles of 3 rows, 1 of 2, each 4 columns.
    G = attention_forward(32, 4)
    two = dict(a=2, b=1, mode="two-pass", keep_q=True)
    phase1 = 128 + 16 * 128 + 1024 + 32
    rect = replay(G, tiled_forward(G, 16, **two, a2=2, c2=4))
    assert rect.io == phase1 + 32 * 16 * (2 + 4) + 32 + 128 == 6464
    runs = replay(G, tiled_forward(G, 16, **two, run=10))
    assert runs.io == phase1 + 32 * (12 * 3 + 2) + (12 * 3 + 2) + 32 * 4 * 13 + 128 == 6278
    assert runs.peak_red == 16
    assert tiled_forward_io(G.graph["params"], 16) == 6278  # the default at this M
    with pytest.raises(ValueError, match="run=10 shapes the two-pass"):
        tiled_forward(G, 16, a=2, b=1, run=10)
    with pytest.raises(InfeasibleMemory):
        tiled_forward(G, 15, **two, run=10)


def test_beats_square_tiling_and_flash_where_the_issue_measured():
    # issue 21: square tiling 9,376 at n = 32, d = 2, M = 8; 5,248 at M = 16
    G = attention_forward(32, 2)
    # M = 8: one row at a time, Q_i, T_i and l_i resident (5), K_j and V_j streamed: 4 loads a pair,
    # 4 * 32^2 + 64 (Q) + 64 (O) = 4224 (6,144 before the operand was dropped ahead of its only fold)
    assert replay(G, tiled_forward(G, 8)).io == 4224
    assert replay(G, tiled_forward(G, 16)).io == 2176


def test_one_row_tiles_drop_the_operand_before_the_fold():
    # a = 1: K_j_l and V_j_c have one reader, so the fold after the product runs with two values in flight
    G = attention_forward(6, 2)
    s = tiled_forward(G, 8, a=1, b=1, mode="resident", keep_q=True)
    r = replay(G, s)
    assert r.peak_red == 8 == tiled_forward_need(2, 1, 1, "resident", keep_q=True)  # 2 + 2 + 1 + 1 + 2
    assert r.io == 4 * 36 + 12 + 12
    # with two rows the operand serves both, and the first row's fold has three values in flight
    assert replay(G, tiled_forward(G, 15, a=2, b=1, mode="resident", keep_q=True)).peak_red == 15
    with pytest.raises(InfeasibleMemory):
        tiled_forward(G, 14, a=2, b=1, mode="resident", keep_q=True)


def test_too_small_memory_names_the_need():
    G = attention_forward(3, 2)
    with pytest.raises(InfeasibleMemory, match=r"tiled-forward: M = 4 is too small; its tiling needs M >= 5"):
        tiled_forward(G, 4)
    with pytest.raises(InfeasibleMemory, match=r"needs M >= 17 \(a=2, b=3, mode=resident"):
        tiled_forward(G, 13, a=2, b=3, mode="resident")


def test_registered():
    a = algorithm("tiled-forward")
    G = attention_forward(3, 2)
    M = a.min_memory(G.graph["params"])
    assert replay(G, a.generate(G, M)).io == a.io_formula(G.graph["params"], M)
