"""best_schedule: the cheapest replayed schedule over an algorithm's tile options."""

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.exact.search import best_schedule
from spartition.errors import InfeasibleMemory


@pytest.mark.parametrize(
    "family, n, d, name, M",
    [
        ("attention-forward", 8, 2, "square-tiling-forward", 32),
        ("attention-forward", 8, 2, "flash-forward", 40),
        ("attention-forward", 8, 2, "tiled-forward", 8),
        ("attention-backward-flash", 6, 2, "flash-backward", 40),
        ("attention-backward-weights", 6, 2, "li-small-cache-backward", 40),
    ],
)
def test_never_worse_than_the_defaults_and_replays(family, n, d, name, M):
    G = build(family, n=n, d=d)
    algo = algorithm(name)
    found = best_schedule(G, algo, M)
    default = replay(G, algo.generate(G, M)).io
    assert replay(G, found.schedule).io == found.io <= default
    # every option of the space: none cheaper than the result among those the formula ranks first
    assert found.io == min(algo.io_formula(G.graph["params"], M, **o) for o in algo.search_space(G.graph["params"], M))


def test_search_beats_the_paper_block_sizes():
    # square tiling's side floor(sqrt(M/4)) = 2 at M = 32, where side 3 fits (3*9 + 3 + 2 = 32): 352 -> 304
    G = build("attention-forward", n=8, d=2)
    found = best_schedule(G, algorithm("square-tiling-forward"), 32)
    assert (found.options, found.io, replay(G, algorithm("square-tiling-forward").generate(G, 32)).io) == ({"b": 3}, 304, 352)
    # FlashAttention's B_c = ceil(M/4d), B_r = min(B_c, d) at n = 64, d = 4, M = 64: 19,840; B_c = 6, B_r = 1: 9,984
    G = build("attention-forward", n=64, d=4)
    found = best_schedule(G, algorithm("flash-forward"), 64)
    assert (found.options, found.io) == ({"bc": 6, "br": 1}, 9984)


def test_no_fitting_option_raises():
    G = build("attention-forward", n=4, d=2)
    with pytest.raises(InfeasibleMemory, match="flash-forward: M = 8 is too small"):
        best_schedule(G, algorithm("flash-forward"), 8)


def test_masked_dag_is_ranked_by_replay():
    G = build("attention-forward", n=6, d=2, mask="causal")
    found = best_schedule(G, algorithm("tiled-forward"), 9)
    assert found.ranked_by == "replay" and found.replayed == found.candidates
    assert found.io == min(io for _, io in found.tried) == replay(G, found.schedule).io


def test_retargeted_orders_beat_the_own_tiles_at_small_memory():
    # tiled-forward needs M >= 5; its best compute order at M = 10, re-pebbled at M = 4, costs 12,000
    # where greedy costs 13,248 (issue 21's only schedule at M = 4)
    G = build("attention-forward", n=32, d=2)
    found = best_schedule(G, algorithm("tiled-forward"), 4, retarget_from=[10])
    assert found.io == replay(G, found.schedule).io == 12000 and found.schedule.M == 4
    assert found.options["retargeted_from"] == 10
    assert replay(G, algorithm("greedy").generate(G, 4)).io == 13248


@pytest.mark.parametrize("mask", ["none", "causal"])
def test_li_streamed_summed_blocks_replay_at_their_closed_form(mask):
    # z < b: the summed index streamed in blocks of z (b^2 + 2bz + b + 2 <= M), e.g. b = 3, z = 1 at M = 20
    algo = algorithm("li-small-cache-backward")
    for n, d in ((3, 2), (5, 3)):
        G = build("attention-backward-weights", n=n, d=d, mask=mask)
        for M in (6, 12, 20):
            space = algo.search_space(G.graph["params"], M)
            assert {"b": 3, "z": 1} in space or M < 20
            for o in space:
                assert replay(G, algo.generate(G, M, **o)).io == algo.io_formula(G.graph["params"], M, **o), o


def test_retargeted_schedule_at_m_equal_d():
    # M = d = 4 < d^2, below tiled-forward's own smallest tiling (5): only retargeted orders run there
    G = build("attention-forward", n=8, d=4)
    found = best_schedule(G, algorithm("tiled-forward"), 4, retarget_from=[6, 10])
    assert found.schedule.M == 4 and replay(G, found.schedule).io == found.io
    assert found.io <= replay(G, algorithm("greedy").generate(G, 4)).io


def test_a_passed_deadline_stops_the_search_after_one_candidate_and_says_so():
    # the sandwich of fft k=13 ran a 10 s limit to 17 s: greedy's search (its defaults again, then re-pebbled
    # from 2M twice, 4 s each at 10^5 nodes) had no deadline
    G = build("attention-forward", n=8, d=2)
    algo = algorithm("square-tiling-forward")
    found = best_schedule(G, algo, 32, retarget_from=[64], deadline=0.0)
    assert found.cut and found.replayed == 1 and found.to_dict()["cut"] is True
    assert found.io == replay(G, found.schedule).io
    whole = best_schedule(G, algo, 32, retarget_from=[64])
    assert not whole.cut and whole.replayed > 1 and whole.io <= found.io


def test_with_no_candidate_of_its_own_the_search_stops_at_the_first_retargeted_one():
    # attention-forward n = 256, d = 4, M = 4: no square tile fits, and every re-pebbled candidate from M = 8 ran
    # (30 s each at 10^6 nodes) however long past the deadline, because the deadline was dropped until one was found
    G = build("attention-forward", n=8, d=2)
    algo = algorithm("square-tiling-forward")
    found = best_schedule(G, algo, 4, retarget_from=[8], deadline=0.0)
    assert found.cut and found.replayed == 1 and found.options["retargeted_from"] == 8
    whole = best_schedule(G, algo, 4, retarget_from=[8])
    assert not whole.cut and whole.replayed > 1


def test_a_candidate_is_not_started_when_one_as_long_as_the_last_would_end_past_the_deadline():
    import dataclasses
    import time

    original = algorithm("square-tiling-forward")

    def slow(G, M, **options):
        time.sleep(0.3)
        return original.generate(G, M, **options)

    # 0.3 s a candidate, 0.5 s to go: the second would end at 0.6 s, past the deadline, so it is not started
    algo = dataclasses.replace(original, generate=slow)
    G = build("attention-forward", n=8, d=2)
    found = best_schedule(G, algo, 32, deadline=time.monotonic() + 0.5)
    assert found.cut and found.replayed == 1
