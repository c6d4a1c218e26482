"""The four-pebble schedules, forward and backward: replayed against closed forms written out here, at M = 4 and
above, on dense DAGs and on random masks and orders."""

from __future__ import annotations

import random

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithms
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.attention.backward.dag import attention_backward_flash
from spartition.families.attention.backward.materialised import materialised_backward_io
from spartition.families.attention.backward.small_memory import small_memory_backward, small_memory_backward_io
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.forward.small_memory import small_memory_forward, small_memory_forward_io
from spartition.families.attention.forward.square_tiling import square_tiling_forward_io


def random_shapes(seed, count, n_max):
    """``count`` random ``(n, d, build keywords)``: a mask, and half the time a feature order and a key order."""
    rng = random.Random(seed)
    for _ in range(count):
        n, d = rng.randint(2, n_max), rng.randint(1, 4)
        kw = {"mask": rng.choice(["none", "causal", "window", "block", "random"]), "seed": rng.randint(0, 9)}
        if rng.random() < 0.5:
            kw["order"] = ",".join(map(str, rng.sample(range(d), d)))
        if rng.random() < 0.5:
            kw["jorder"] = ",".join(map(str, rng.sample(range(n), n)))
        yield n, d, kw


def forward_dense(n, d):
    """Phase 1: 2d loads for a row's first score, 2d - 1 for the others where d <= 2 (a Q entry kept), n^2 stores of
    A; phase 2: d + 1 loads of each A, each V entry loaded once per row, r stored once and loaded d times per row,
    d stores of O per row."""
    kept = 1 if d <= 2 else 0
    phase1 = n * (2 * d + (2 * d - kept) * (n - 1)) + n * n
    phase2 = n * n * (d + 1) + n * n * d + n * (1 + d + d)
    return phase1 + phase2


def test_forward_hand_counts():
    # n = 2, d = 1, per row: Q_i0 and K_00 (2), K_10 (1); 2 stores of A; l from 2 loads of A; r stored;
    # T from 2 loads of A and 2 of V; r loaded; O stored: 3 + 2 + 2 + 1 + 4 + 1 + 1 = 14 per row
    assert small_memory_forward_io({"n": 2, "d": 1}, 4) == 28
    assert forward_dense(32, 2) == 9 * 32 * 32 + 6 * 32 == 9408
    assert forward_dense(64, 4) == 18 * 64 * 64 + 9 * 64 == 74304
    # the square tiling at its least memory, M = 6, keeps l_i red in phase 1 instead of a Q entry: n cheaper
    assert forward_dense(32, 2) - square_tiling_forward_io({"n": 32, "d": 2}, 6) == 32


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (3, 2), (4, 2), (3, 3), (2, 4), (3, 5)])
def test_forward_dense_replay_meets_the_closed_form_in_four_pebbles(n, d):
    G = attention_forward(n, d)
    for M in (4, 5, 9):
        for variant in ("oneshot", "recompute"):
            r = replay(G, small_memory_forward(G, M, variant))
            assert (r.io, r.peak_red) == (forward_dense(n, d), 4 if n * d > 1 else 3)
            assert small_memory_forward_io(G.graph["params"], M) == forward_dense(n, d)


def test_forward_refuses_three_pebbles_and_tree_sums():
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


def backward_dense(n, d):
    """Scores: 2d operands for a row's first, 2d - k for the others (k = 1 where d <= 2: an entry kept); D_i: 2d
    operands and a store; per pair: the gradient's 2d - k operands, l, D and P loaded, P and dS stored, 6d operands
    of its terms in dV, dK, dQ; 3 n d outputs stored."""
    k = 1 if d <= 2 else 0
    scores = n * (2 * d + (2 * d - k) * (n - 1))
    per_pair = (2 * d - k) + 3 + 2 + 6 * d
    return scores + n * (2 * d + 1) + n * n * per_pair + 3 * n * d


def test_backward_hand_counts():
    # n = 1, d = 1: Q, K (2), l (1), P stored (1); D: dO, O (2), stored (1); dP: V (1, dO kept), D, P loaded (2),
    # dS stored (1); dV: P, dO (2), dK: dS, Q (2), dQ: dS, K (2); three outputs stored (3)
    assert small_memory_backward_io({"n": 1, "d": 1}, 4) == 4 + 3 + 4 + 6 + 3 == 20
    assert backward_dense(32, 2) == 23936 and backward_dense(32, 4) == 46752
    # the materialised pass needs d + 4 red pebbles; at its least, M = 6, it is cheaper at n = 32, d = 2
    assert materialised_backward_io({"n": 32, "d": 2}, 6) < backward_dense(32, 2)


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (3, 2), (2, 3), (3, 4)])
def test_backward_dense_replay_meets_the_closed_form_in_four_pebbles(n, d):
    G = attention_backward_flash(n, d)
    for M in (4, 6):
        for variant in ("oneshot", "recompute"):
            r = replay(G, small_memory_backward(G, M, variant))
            assert (r.io, r.peak_red) == (backward_dense(n, d), 4)
            assert small_memory_backward_io(G.graph["params"], M) == backward_dense(n, d)


def test_backward_refuses_three_pebbles_and_tree_sums():
    with pytest.raises(InfeasibleMemory, match="needs M >= 4"):
        small_memory_backward(attention_backward_flash(2, 2), 3)
    with pytest.raises(InvalidDAG, match="chain"):
        small_memory_backward(attention_backward_flash(2, 2, shape="tree"), 4)


def test_registered_for_the_flash_form_only():
    a = algorithms()["small-memory-backward"]
    assert a.applies_to("attention-backward-flash") and not a.applies_to("attention-backward-weights")
    assert a.min_memory({"n": 4, "d": 2}) == 4


SCHEDULES = [(attention_forward, small_memory_forward, small_memory_forward_io, 7, 25, 6),
             (attention_backward_flash, small_memory_backward, small_memory_backward_io, 11, 20, 5)]


@pytest.mark.parametrize("build, generate, io, seed, count, n_max", SCHEDULES, ids=["forward", "backward"])
def test_on_masks_and_orders_each_replays_at_its_closed_form(build, generate, io, seed, count, n_max):
    for n, d, kw in random_shapes(seed, count, n_max):
        G = build(n, d, **kw)
        r = replay(G, generate(G, 4))
        assert r.io == io(G.graph["params"], 4) and r.peak_red <= 4, (n, d, kw)


@pytest.mark.parametrize("build, generate, n", [(attention_forward, small_memory_forward, 4),
                                                 (attention_backward_flash, small_memory_backward, 3)],
                         ids=["forward", "backward"])
def test_each_computes_every_node_once(build, generate, n):
    G = build(n, 2, mask="causal")
    computes = [m[1] for m in generate(G, 4).moves if m[0] == "compute"]
    inputs = sum(1 for v in G if G.in_degree(v) == 0)
    assert len(computes) == len(set(computes)) == G.number_of_nodes() - inputs
