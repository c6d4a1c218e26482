"""The four-pebble forward schedule: replayed against a closed form written out here, at M = 4 and above."""

from __future__ import annotations

import random

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithms
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.forward.small_memory import small_memory_forward, small_memory_forward_io
from spartition.families.attention.forward.square_tiling import square_tiling_forward_io


def dense(n, d):
    """Phase 1: 2d loads for a row's first score, 2d - 1 for the others where d <= 2 (a Q entry kept), n^2 stores of
    A; phase 2: d + 1 loads of each A, each V entry loaded once per row, r stored once and loaded d times per row,
    d stores of O per row."""
    kept = 1 if d <= 2 else 0
    phase1 = n * (2 * d + (2 * d - kept) * (n - 1)) + n * n
    phase2 = n * n * (d + 1) + n * n * d + n * (1 + d + d)
    return phase1 + phase2


def test_hand_counts():
    # n = 2, d = 1, per row: Q_i0 and K_00 (2), K_10 (1); 2 stores of A; l from 2 loads of A; r stored;
    # T from 2 loads of A and 2 of V; r loaded; O stored: 3 + 2 + 2 + 1 + 4 + 1 + 1 = 14 per row
    assert small_memory_forward_io({"n": 2, "d": 1}, 4) == 28
    assert dense(32, 2) == 9 * 32 * 32 + 6 * 32 == 9408
    assert dense(64, 4) == 18 * 64 * 64 + 9 * 64 == 74304
    # the square tiling at its least memory, M = 6, keeps l_i red in phase 1 instead of a Q entry: n cheaper
    assert dense(32, 2) - square_tiling_forward_io({"n": 32, "d": 2}, 6) == 32


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (3, 2), (4, 2), (3, 3), (2, 4), (3, 5)])
def test_dense_replay_meets_the_closed_form_in_four_pebbles(n, d):
    G = attention_forward(n, d)
    for M in (4, 5, 9):
        for variant in ("oneshot", "recompute"):
            r = replay(G, small_memory_forward(G, M, variant))
            assert (r.io, r.peak_red) == (dense(n, d), 4 if n * d > 1 else 3)
            assert small_memory_forward_io(G.graph["params"], M) == dense(n, d)


def test_masks_and_orders_replay_at_their_closed_form():
    rng = random.Random(7)
    for _ in range(25):
        n, d = rng.randint(2, 6), rng.randint(1, 4)
        kw = {"mask": rng.choice(["none", "causal", "window", "block", "random"]), "seed": rng.randint(0, 9)}
        if rng.random() < 0.5:
            kw["order"] = ",".join(map(str, rng.sample(range(d), d)))
        if rng.random() < 0.5:
            kw["jorder"] = ",".join(map(str, rng.sample(range(n), n)))
        G = attention_forward(n, d, **kw)
        r = replay(G, small_memory_forward(G, 4))
        assert r.io == small_memory_forward_io(G.graph["params"], 4) and r.peak_red <= 4, (n, d, kw)


def test_each_node_is_computed_once():
    G = attention_forward(4, 2, mask="causal")
    computes = [m[1] for m in small_memory_forward(G, 4).moves if m[0] == "compute"]
    assert len(computes) == len(set(computes)) == G.number_of_nodes() - 3 * 4 * 2


def test_three_pebbles_and_tree_sums_are_refused():
    G = attention_forward(3, 2)
    with pytest.raises(InfeasibleMemory, match="needs M >= 4"):
        small_memory_forward(G, 3)
    with pytest.raises(InvalidDAG, match="chain"):
        small_memory_forward(attention_forward(2, 2, shape="tree"), 4)


def test_registered_below_every_other_forward_tiling():
    a = algorithms()["small-memory-forward"]
    params = {"n": 8, "d": 2}
    assert a.applies_to("attention-forward") and a.min_memory(params) == 4
    others = [b for b in algorithms().values() if b.applies_to("attention-forward") and b.name != a.name
              and b.min_memory is not None]
    assert all(b.min_memory(params) > 4 for b in others)
