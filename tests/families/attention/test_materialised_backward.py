"""The backward pass over P and dS in slow memory: valid in both games, I/O equal to its closed form and to a hand count."""

import pytest

from spartition.core.dag import as_compact
from spartition.core.game import replay
from spartition.errors import InfeasibleMemory
from spartition.families.attention.backward.dag import attention_backward_flash
from spartition.families.attention.backward.materialised import (
    materialised_backward,
    materialised_backward_io,
    materialised_backward_need,
    materialised_backward_space,
)


@pytest.mark.parametrize("n, d", [(3, 1), (4, 2), (5, 3), (3, 4)])
@pytest.mark.parametrize("M", [5, 6, 7, 8, 9, 16, 30])
def test_every_tiling_replays_at_its_closed_form_in_both_games(n, d, M):
    G = attention_backward_flash(n, d)
    c = as_compact(G)
    space = materialised_backward_space(G.graph["params"], M)
    assert bool(space) == (M >= d + 4)
    for o in space:
        for a in range(1, o["a"] + 1):  # fewer resident rows than the most that fit, too
            opts = dict(o, a=a)
            for variant in ("oneshot", "recompute"):
                r = replay(c, materialised_backward(G, M, variant, **opts))
                assert r.io == materialised_backward_io(G.graph["params"], M, **opts), (opts, variant)
                assert r.peak_red <= materialised_backward_need(d, **opts) <= M


@pytest.mark.parametrize("mask", ["causal", "window", "random"])
def test_masked_dags_replay(mask):
    G = attention_backward_flash(6, 2, mask=mask)
    c = as_compact(G)
    for M in (8, 12, 16):
        for o in materialised_backward_space(G.graph["params"], M):
            replay(c, materialised_backward(G, M, **o))
    assert materialised_backward_io(G.graph["params"], 8) is None  # no closed form when masked


def test_hand_counted_io():
    # n = 32, d = 2, M = 8: one resident row (Q_i, l_i: 3; with the running S_ij and 2 in flight: 6 <= 8).
    # Pass 1: Q and l once (64 + 32), K once per row (32 * 64), P stored (1,024).
    # Pass 2: dO and O once (64 + 64), V once per row (32 * 64), P loaded and dS stored (1,024 each).
    # Passes 3-5: 2 x 1 output tiles (2 running + 1 + 1 operands + 2 in flight = 6): per tile and summed index
    # 2 entries of dS (or P) and 1 of K (Q, dO): 32 tiles * 32 * 3 loads, and the 64 outputs stored, three times.
    G = attention_backward_flash(32, 2)
    r = replay(G, materialised_backward(G, 8, a=1, x=2, c2=1))
    passes = (64 + 32 + 32 * 64 + 1024) + (64 + 64 + 32 * 64 + 1024 + 1024) + 3 * (32 * 32 * 3 + 64)
    assert r.io == passes == 16800
    # the default here: 4 x 1 tiles (4 running, K_j, one dS entry at a time, 2 in flight = 8): 16 tiles, and per
    # tile and summed index 4 entries of dS (or P) and 1 of K (Q, dO)
    default = passes - 3 * (32 * 32 * 3 + 64) + 3 * (16 * 32 * 5 + 64)
    assert materialised_backward_io(G.graph["params"], 8) == default == 15264
    # below tiled-backward's cheapest tiling at this M (19,520, findings) and flash-backward's (M >= 20)
    assert r.io < 19520


def test_refusals_name_the_options():
    G = attention_backward_flash(4, 2)
    with pytest.raises(InfeasibleMemory, match="a=2, x=1, c2=1"):
        materialised_backward(G, 10, a=2, x=1, c2=1)  # 2 * 4 + 3 = 11
    with pytest.raises(InfeasibleMemory, match="needs M >= 6"):
        materialised_backward(G, 5)  # one resident row needs d + 4 = 6
    with pytest.raises(ValueError, match="c2 <= d"):
        materialised_backward(G, 16, a=1, x=1, c2=3)
