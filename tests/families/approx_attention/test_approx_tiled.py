"""Tests of approx-tiled, the searched tiling of approximate attention (spartition.families.approx_attention.plans)."""

from __future__ import annotations

import pytest

from spartition.core.game import replay
from spartition.core.registry import algorithms
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.approx_attention.dag import approx_attention
from spartition.families.approx_attention.schedules import ALGORITHMS, approx_io, approx_plan, approx_schedule, min_memory

PUBLISHED = [a.name for a in ALGORITHMS]

# (n, d, g, M, order): Case III (M < d r) at the smallest M, Case I, the grouped orders Key Lemma 3.2 and
# Lemma 3.3 consume, d < g, n = 1
GRID = [
    (4, 3, 2, 12, "lex"),
    (5, 6, 2, 16, "lex"),
    (3, 6, 2, 24, "graded"),
    (6, 4, 1, 16, "lex"),
    (4, 3, 2, 200, "lex"),
    (4, 6, 2, 48, "grouped-2"),
    (5, 6, 2, 64, "grouped-3"),
    (3, 2, 3, 20, "lex"),
    (1, 3, 2, 30, "lex"),
]


def _published_io(G, M):
    """The exact I/O of every published algorithm that has a tiling for this DAG and M."""
    out = {}
    for name in PUBLISHED:
        try:
            out[name] = approx_io(approx_plan(name, G.graph["params"], M))
        except (InfeasibleMemory, InvalidDAG):
            continue
    return out


@pytest.mark.parametrize("normalize", [False, True])
@pytest.mark.parametrize("n,d,g,M,order", GRID)
def test_replays_at_its_count_and_never_above_a_published_plan(n, d, g, M, order, normalize):
    G = approx_attention(n, d, g, normalize=normalize, order=order)
    plan = approx_plan("approx-tiled", G.graph["params"], M)
    res = replay(G, approx_schedule("approx-tiled", G, M))
    assert res.io == approx_io(plan) == algorithms()["approx-tiled"].io_formula(G.graph["params"], M)
    assert res.peak_red <= max(plan.need1, plan.need2) <= M
    assert res.io >= 4 * n * d  # every input loaded, every output stored
    published = _published_io(G, M)
    assert all(res.io <= io for io in published.values()), (res.io, published)


def test_case_iii_loads_only_the_variables_a_tile_uses():
    # n = 16, d = 6, g = 2 (r = 28), M = 16. Phase 1: b1 = 1 value column (B1 = 6 blocks), 5 H tiles of
    # 4 variables each: n B1 sum w + n d S + (r - 1) d + d = 16*6*20 + 16*6*5 + 27*6 + 6 = 2,568. Phase 2:
    # 2 x 2 output tiles (8 row blocks, 3 column blocks), 15 aggregation tiles of 2 variables:
    # ceil(n/h) d r + n B2 sum w + n d = 8*6*28 + 16*3*30 + 96 = 2,880. Lemma 3.1 loads whole rows of K
    # for every H tile: 12,648.
    G = approx_attention(16, 6, 2)
    plan = approx_plan("approx-tiled", G.graph["params"], 16)
    assert (plan.h, plan.b, plan.b1, len(plan.subtiles), len(plan.tiles)) == (2, 2, 1, 5, 15)
    assert [len(vs) for vs, _ in plan.subtiles] == [4] * 5 and {len(vs) for vs, _ in plan.tiles} == {2}
    assert replay(G, approx_schedule("approx-tiled", G, 16)).io == 2568 + 2880
    assert _published_io(G, 16) == {"approx-lemma-3.1": 12648}


def test_smallest_memory_is_an_output_tile_of_one_monomial():
    # phase 2 at h = b = 1: one output, one H entry and its running sum, the min(g, d) variables of a
    # monomial and three values in flight: 6 + min(g, d); phase 1 fits there too
    for d, g in ((3, 1), (3, 2), (3, 3), (1, 3), (6, 2)):
        params = {"n": 4, "d": d, "g": g}
        least = 6 + min(g, d)
        assert min_memory("approx-tiled", params) == least
        assert replay(approx_attention(4, d, g), approx_schedule("approx-tiled", approx_attention(4, d, g), least)).io
        with pytest.raises(InfeasibleMemory, match=rf"approx-tiled: M = {least - 1} is too small.*supports here is {least}"):
            approx_plan("approx-tiled", params, least - 1)
