"""The designation lemma (spartition.partition.designation) and the recomputing schedules it is tested on.

Hand-built schedules fix what is designated and which edges cross a boundary;
the generator of schedules that really recompute (spartition.core.recomputing)
gives the lemma schedules where a node is computed many times and read from
different computations; and a tampered segment shows the check can fail.
"""

import dataclasses

import networkx as nx
import pytest

from spartition.core.game import Schedule, replay
from spartition.core.recomputing import recomputing_schedule
from spartition.core.registry import build
from spartition.errors import IllegalMove
from spartition.families.classic.dag import chain
from spartition.partition.designation import designate, designated_segments, lemma_violations


def fork():
    """x -> u -> v and u -> w; v and w are outputs."""
    G = nx.DiGraph()
    for name, op in (("x", "input"), ("u", "f"), ("v", "f"), ("w", "f")):
        G.add_node(name, op=op)
    G.add_edges_from([("x", "u"), ("u", "v"), ("u", "w")])
    return G


# u computed twice: v reads the first computation, w the second; nothing is stored but the outputs
FORK_TWICE = [("load", "x"), ("compute", "u"), ("compute", "v"), ("store", "v"), ("delete", "v"), ("delete", "u"),
              ("compute", "u"), ("compute", "w"), ("store", "w")]


def test_a_recomputed_value_that_feeds_nothing_is_not_designated():
    moves = [("load", "c0"), ("compute", "c1"), ("delete", "c1"), ("compute", "c1"), ("delete", "c0"),
             ("compute", "c2"), ("store", "c2")]
    s = Schedule(2, "recompute", moves)
    d = designate(chain(3), s)
    assert d.steps == (1, 3, 5) and d.designated == (False, True, True)
    assert d.operands == ((("c0", -1),), (("c0", -1),), (("c1", 1),)) and d.final == {"c2": 2}
    assert d.computed_twice() == {"c1"} and d.events_of("c1") == [1] and d.events_of("c1", False) == [0, 1]


def test_a_node_read_from_two_computations_has_two_designated_events():
    G = fork()
    s = Schedule(3, "recompute", FORK_TWICE)
    d = designate(G, s)
    assert d.events_of("u") == [0, 2] and d.designated == (True, True, True, True)
    assert d.operands[1] == (("u", 0),) and d.operands[3] == (("u", 2),)
    # one segment per I/O move: loads and stores close segments 0 (load x), 1 (.. store v), 2 (.. store w)
    segs = designated_segments(d, s, 1)
    assert [seg.moves for seg in segs] == [(0, 1), (1, 4), (4, 9)]
    assert [sorted(seg.nodes) for seg in segs] == [[], ["u", "v"], ["u", "w"]]  # u counted in two segments
    assert all(not seg.crossing_in and not seg.crossing_out for seg in segs)
    assert [sorted(seg.finals) for seg in segs] == [[], ["v"], ["w"]]
    assert lemma_violations(G, d, segs) == []


def test_a_designated_edge_across_a_boundary_is_red_there_or_moved():
    # u computed once, kept red across the boundary after "store v", read by w in the next segment
    moves = [("load", "x"), ("compute", "u"), ("compute", "v"), ("store", "v"), ("delete", "v"), ("compute", "w"),
             ("store", "w")]
    G, s = fork(), Schedule(3, "recompute", moves)
    d = designate(G, s)
    segs = designated_segments(d, s, 2)
    assert [seg.moves for seg in segs] == [(0, 4), (4, 7)]
    assert segs[1].crossing_in == ((0, 2, "u"),) and segs[0].crossing_out == ((0, 2, "u"),)
    assert "u" in segs[1].start and "u" in segs[0].end and segs[0].charged == {"x", "u", "v"}
    # v is red at the start of the last segment (deleted in it); nothing red at its end is charged
    assert segs[1].charged == {"x", "u", "v", "w"} and segs[1].end == {"x", "u", "w"}
    assert lemma_violations(G, d, segs) == []
    # the check fails where the lemma's conclusion is removed: u neither red at the start nor loaded
    tampered = dataclasses.replace(segs[1], start=frozenset({"x"}))
    assert lemma_violations(G, d, [segs[0], tampered]) == [
        "part 2: segment 1: 'u' read by event 2 from event 0 of an earlier segment is neither red at the start "
        "nor loaded"]
    tampered = dataclasses.replace(segs[0], end=frozenset(), stored=frozenset())
    assert len(lemma_violations(G, d, [tampered, segs[1]])) == 2  # u's edge out and v's final event


def test_a_value_stored_then_loaded_crosses_through_slow_memory():
    moves = [("load", "x"), ("compute", "u"), ("store", "u"), ("delete", "u"), ("delete", "x"), ("load", "u"),
             ("compute", "v"), ("store", "v"), ("delete", "v"), ("compute", "w"), ("store", "w")]
    G, s = fork(), Schedule(2, "recompute", moves)
    d = designate(G, s)
    assert d.operands[1] == (("u", 0),) and d.operands[2] == (("u", 0),)  # the load copies the stored value
    segs = designated_segments(d, s, 2)
    assert [seg.moves for seg in segs] == [(0, 3), (3, 8), (8, 11)]
    assert segs[0].crossing_out == ((0, 1, "u"), (0, 2, "u")) and "u" in segs[0].stored
    assert segs[1].crossing_in == ((0, 1, "u"),) and "u" in segs[1].loaded
    assert segs[2].crossing_in == ((0, 2, "u"),) and "u" in segs[2].start
    assert lemma_violations(G, d, segs) == []


def test_only_deletes_after_the_last_io_join_the_last_segment():
    moves = [("load", "c0"), ("compute", "c1"), ("store", "c1"), ("delete", "c1"), ("delete", "c0")]
    s = Schedule(2, "recompute", moves)
    d = designate(chain(2), s)
    assert [seg.moves for seg in designated_segments(d, s, 1)] == [(0, 1), (1, 5)]
    assert [seg.moves for seg in designated_segments(d, s, 2)] == [(0, 5)]


def test_an_invalid_schedule_is_refused():
    with pytest.raises(IllegalMove):
        designate(chain(3), Schedule(2, "oneshot", [("compute", "c2")]))


def test_a_rebuildable_value_is_never_stored_when_dropping_always():
    G = build("matmul", a=2, b=4, c=2)
    s = recomputing_schedule(G, 4, seed=1)
    assert not any(m == "store" and v.startswith("P_") for m, v in s.moves)  # products are rebuilt, never stored
    assert recomputing_schedule(G, 4, seed=1) == s  # the seed fixes it
    # drop = 0 never deletes a needed value unstored: every node computed once, a oneshot schedule
    once = recomputing_schedule(G, 4, seed=1, drop=0.0)
    assert replay(G, Schedule(4, "oneshot", once.moves)).computes == G.number_of_nodes() - 16


CASES = [("matmul", dict(a=2, b=2, c=2), (4, 5, 6)), ("matmul", dict(a=3, b=4, c=2), (3, 4, 6, 9)),
         ("matmul", dict(a=2, b=5, c=3, shape="tree"), (4, 7)), ("attention-forward", dict(n=4, d=2), (4, 6, 8)),
         ("fft", dict(k=3), (4, 6)), ("random-dag", dict(n=14, p=0.4, indeg=3, seed=2), (5, 7))]


@pytest.mark.parametrize("family,params,Ms", CASES)
def test_recomputing_schedules_recompute_and_obey_the_lemma(family, params, Ms):
    G = build(family, **params)
    recomputed = 0
    for M in Ms:
        for seed in range(3):
            s = recomputing_schedule(G, M, seed=seed)
            assert replay(G, s).variant == "recompute"  # valid (replay raises otherwise)
            d = designate(G, s)
            recomputed += len(d.computed_twice())
            for S in sorted({1, 2, M, 2 * M, 3 * M}):
                segs = designated_segments(d, s, S)
                assert lemma_violations(G, d, segs) == []
                assert sum(seg.io for seg in segs) == replay(G, s).io and all(seg.io == S for seg in segs[:-1])
                # every node reaching an output is counted in some segment (coverage, the sum of the counts)
                assert set().union(*(seg.nodes for seg in segs)) == set(d.nodes[e] for e, x in
                                                                        enumerate(d.designated) if x)
    assert recomputed > 0  # some node computed twice


def test_a_sum_tree_ending_in_an_output_has_one_designated_event_per_node():
    # lemma part 1: a product has one successor, each add too, up to the output C_ij: exactly one each
    G = build("matmul", a=3, b=5, c=2)
    for seed in range(4):
        s = recomputing_schedule(G, 4, seed=seed)
        d = designate(G, s)
        assert d.computed_twice()
        count = {}
        for e, v in enumerate(d.nodes):
            count[v] = count.get(v, 0) + d.designated[e]
        assert all(count.get(v, 0) == 1 for v in G if G.in_degree(v))


def test_attention_rebuilds_a_value_read_by_two_consumers_from_two_computations():
    # A_ij feeds the row sum and d products A V: a schedule that rebuilds it designates more than one of its
    # computations, so the per-node count of part 1 is an "at least", and segment counts count distinct nodes
    G = build("attention-forward", n=4, d=2)
    s = recomputing_schedule(G, 4, seed=0)
    d = designate(G, s)
    many = {v for v in d.computed_twice() if len(d.events_of(v)) > 1}
    assert many and lemma_violations(G, d, designated_segments(d, s, 4)) == []
