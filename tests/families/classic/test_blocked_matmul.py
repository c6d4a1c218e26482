"""The blocked matrix product (spartition.families.classic.blocked): replayed I/O against its closed form, in each game."""

import random

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory, ParameterError
from spartition.families.classic.blocked import blocked_matmul, blocked_matmul_io, blocked_matmul_tiles
from spartition.study.game_schedules import game_schedule
from spartition.study.sandwich import sandwich


def test_replayed_io_is_the_closed_form_on_random_shapes_orders_and_tiles():
    rng = random.Random(11)
    checked = 0
    for _ in range(30):
        a, b, c = rng.randint(1, 6), rng.randint(1, 6), rng.randint(1, 6)
        order = list(range(b))
        rng.shuffle(order)
        G = build("matmul", a=a, b=b, c=c, order=",".join(map(str, order)))
        M = rng.randint(5, 30)
        for tile in blocked_matmul_tiles(G.graph["params"], M):
            for variant in ("oneshot", "recompute"):
                r = replay(G, blocked_matmul(G, M, variant, **tile))
                assert r.io == blocked_matmul_io(G.graph["params"], M, **tile), (a, b, c, M, tile)
                assert r.peak_red <= tile["rows"] * tile["cols"] + tile["rows"] + 3
                checked += 1
    assert checked > 100


def test_hand_counted_io():
    # 8 x 8 x 8 in 3 x 3 tiles (the last row and column of tiles 2 wide): per k each tile loads its rows of A and its
    # columns of B, 8 (8 * 3 + 8 * 3) in all, and the 64 sums are stored once
    assert blocked_matmul_io({"a": 8, "b": 8, "c": 8}, 16, rows=3, cols=3) == 8 * (8 * 3 + 8 * 3) + 64 == 448
    # the default at M = 16 is the squarest of the cheapest tiles, 3 x 3 (2 x 5, with 2 * 5 + 2 + 3 = 15, costs
    # 8 (8 * 2 + 8 * 4) + 64 = 448 as well); at M = 5 one entry per tile: 8 (64 + 64) + 64
    assert blocked_matmul_io({"a": 8, "b": 8, "c": 8}, 16) == 448
    assert blocked_matmul_io({"a": 8, "b": 8, "c": 8}, 5) == 1088


def test_bad_input_is_refused_with_the_reason():
    with pytest.raises(InfeasibleMemory, match="M >= 5"):
        blocked_matmul(build("matmul", a=2, b=2, c=2), 4)
    with pytest.raises(InfeasibleMemory, match="M >= 15"):
        blocked_matmul(build("matmul", a=4, b=2, c=4), 10, rows=3, cols=3)
    with pytest.raises(ParameterError, match="shape=chain"):
        blocked_matmul(build("matmul", a=2, b=4, c=2, shape="tree"), 8)
    with pytest.raises(ParameterError, match="shape=chain"):
        blocked_matmul(build("matmul", a=2, b=4, c=2, sums="node"), 8)


@pytest.mark.parametrize("sums", ["binary", "node"])
def test_played_in_the_partial_game_at_the_same_io(sums):
    G = build("matmul", a=8, b=8, c=8, sums=sums)
    for M in (5, 8, 16):
        s = game_schedule(G, algorithm("blocked-matmul"), M, "partial")
        assert s.variant == "partial" and replay(G, s).io == blocked_matmul_io({"a": 8, "b": 8, "c": 8}, M)


def test_the_sandwich_of_each_game_takes_it():
    # 8 x 8 x 8 at M = 16: the blocked product's 448 (greedy: 696), its evictions re-chosen in the standard game (419);
    # in the partial game, on sums as nodes, 448 translated (the partial game has no eviction pass)
    G = build("matmul", a=8, b=8, c=8)
    (row,) = sandwich(G, [16], variant="recompute")
    assert (row.upper.value, row.upper.method) == (419, "algorithm:blocked-matmul+improve")
    assert replay(G, row.schedule).io == 419
    (row,) = sandwich(build("matmul", a=8, b=8, c=8, sums="node"), [16], variant="partial")
    assert (row.upper.value, row.upper.method) == (448, "algorithm:blocked-matmul")
    assert (row.lower.value, row.lower.method) == (208, "formula:segment-matmul-partial-lower")
