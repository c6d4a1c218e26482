"""The four-pebble backward pass: replayed against a closed form written out here, masks and orders included."""

from __future__ import annotations

import random

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithms
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.attention.backward.dag import attention_backward_flash
from spartition.families.attention.backward.materialised import materialised_backward_io
from spartition.families.attention.backward.small_memory import small_memory_backward, small_memory_backward_io


def dense(n, d):
    """Scores: 2d operands for a row's first, 2d - k for the others (k = 1 where d <= 2: an entry kept); D_i: 2d
    operands and a store; per pair: the gradient's 2d - k operands, l, D and P loaded, P and dS stored, 6d operands
    of its terms in dV, dK, dQ; 3 n d outputs stored."""
    k = 1 if d <= 2 else 0
    scores = n * (2 * d + (2 * d - k) * (n - 1))
    per_pair = (2 * d - k) + 3 + 2 + 6 * d
    return scores + n * (2 * d + 1) + n * n * per_pair + 3 * n * d


def test_hand_counts():
    # n = 1, d = 1: Q, K (2), l (1), P stored (1); D: dO, O (2), stored (1); dP: V (1, dO kept), D, P loaded (2),
    # dS stored (1); dV: P, dO (2), dK: dS, Q (2), dQ: dS, K (2); three outputs stored (3)
    assert small_memory_backward_io({"n": 1, "d": 1}, 4) == 4 + 3 + 4 + 6 + 3 == 20
    assert dense(32, 2) == 23936 and dense(32, 4) == 46752
    # the materialised pass needs d + 4 red pebbles; at its least, M = 6, it is cheaper at n = 32, d = 2
    assert materialised_backward_io({"n": 32, "d": 2}, 6) < dense(32, 2)


@pytest.mark.parametrize("n, d", [(1, 1), (2, 1), (3, 2), (2, 3), (3, 4)])
def test_dense_replay_meets_the_closed_form_in_four_pebbles(n, d):
    G = attention_backward_flash(n, d)
    for M in (4, 6):
        for variant in ("oneshot", "recompute"):
            r = replay(G, small_memory_backward(G, M, variant))
            assert (r.io, r.peak_red) == (dense(n, d), 4)
            assert small_memory_backward_io(G.graph["params"], M) == dense(n, d)


def test_masks_and_orders_replay_at_their_closed_form():
    rng = random.Random(11)
    for _ in range(20):
        n, d = rng.randint(2, 5), rng.randint(1, 4)
        kw = {"mask": rng.choice(["none", "causal", "window", "block", "random"]), "seed": rng.randint(0, 9)}
        if rng.random() < 0.5:
            kw["order"] = ",".join(map(str, rng.sample(range(d), d)))
        if rng.random() < 0.5:
            kw["jorder"] = ",".join(map(str, rng.sample(range(n), n)))
        G = attention_backward_flash(n, d, **kw)
        r = replay(G, small_memory_backward(G, 4))
        assert r.io == small_memory_backward_io(G.graph["params"], 4) and r.peak_red <= 4, (n, d, kw)


def test_each_node_is_computed_once():
    G = attention_backward_flash(3, 2, mask="causal")
    computes = [m[1] for m in small_memory_backward(G, 4).moves if m[0] == "compute"]
    inputs = sum(1 for v in G if G.in_degree(v) == 0)
    assert len(computes) == len(set(computes)) == G.number_of_nodes() - inputs


def test_three_pebbles_and_tree_sums_are_refused():
    with pytest.raises(InfeasibleMemory, match="needs M >= 4"):
        small_memory_backward(attention_backward_flash(2, 2), 3)
    with pytest.raises(InvalidDAG, match="chain"):
        small_memory_backward(attention_backward_flash(2, 2, shape="tree"), 4)


def test_registered_for_the_flash_form_only():
    a = algorithms()["small-memory-backward"]
    assert a.applies_to("attention-backward-flash") and not a.applies_to("attention-backward-weights")
    assert a.min_memory({"n": 4, "d": 2}) == 4
