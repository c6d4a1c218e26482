"""Published algorithms as partial-game schedules: each oneshot schedule translated by ``oneshot_to_partial``,
replayed in the partial game at the oneshot schedule's I/O (measured here by replaying both), and refused where
the generator recomputes."""

import json

import pytest

from spartition.cli.main import main
from spartition.core.game import Schedule, replay
from spartition.core.partial_greedy import algorithm_partial_schedule, oneshot_to_partial
from spartition.core.registry import algorithm, build
from spartition.errors import IllegalMove, SpartitionError
from spartition.exact.brute import brute_force
from spartition.families.approx_attention.schedules import dag_for

ATT = {"n": 4, "d": 2}

# (algorithm, family, params, M, the I/O of its oneshot schedule, replayed by hand once and recorded)
CASES = [
    ("flash-forward", "attention-forward", ATT, 12, 128),
    ("flash-forward", "attention-forward", ATT, 24, 64),
    ("square-tiling-forward", "attention-forward", ATT, 6, 164),
    ("standard-forward", "attention-forward", ATT, 5, 192),
    ("tiled-forward", "attention-forward", ATT, 5, 144),
    ("tiled-forward", "attention-forward", ATT, 10, 80),
    ("flash-backward", "attention-backward-flash", ATT, 20, 192),
    ("flash-backward", "attention-backward-flash", ATT, 40, 112),
    ("tiled-backward", "attention-backward-flash", ATT, 4, 476),
    ("tiled-backward", "attention-backward-flash", ATT, 8, 316),
    ("li-small-cache-backward", "attention-backward-weights", ATT, 6, 540),
    ("greedy", "matmul", {"a": 2, "b": 3, "c": 2}, 4, 36),
]


@pytest.mark.parametrize("name, family, params, M, io", CASES)
def test_each_published_schedule_translates_at_its_oneshot_io(name, family, params, M, io):
    G = build(family, **params)
    alg = algorithm(name)
    one = alg.generate(G, M, variant="oneshot")
    assert replay(G, Schedule(one.M, "oneshot", one.moves)).io == io
    part = algorithm_partial_schedule(alg, G, M)
    r = replay(G, part)
    assert (part.variant, r.io, part.meta["algorithm"]) == ("partial", io, name)
    # loads stay loads and stores become saves, one for one
    assert sum(m[0] == "load" for m in part.moves) == sum(m[0] == "load" for m in one.moves)
    assert sum(m[0] == "save" for m in part.moves) == sum(m[0] == "store" for m in one.moves)
    assert sum(m[0] == "partial" for m in part.moves) == G.number_of_edges()


# the approximate-attention tilings at n = 4, d = 4, g = 2, on the DAG in the column order each consumes
APPROX = [("approx-lemma-3.1", 32, 436), ("approx-lemma-3.1", 64, 280), ("approx-tiled", 96, 184),
          ("approx-case-i", 256, 184), ("approx-key-lemma", 256, 184)]


@pytest.mark.parametrize("name, M, io", APPROX)
def test_the_approximate_attention_tilings_translate(name, M, io):
    G = dag_for(name, M, 4, 4, 2)
    one = algorithm(name).generate(G, M, "oneshot")
    assert replay(G, Schedule(one.M, "oneshot", one.moves)).io == io
    assert replay(G, algorithm_partial_schedule(algorithm(name), G, M)).io == io


def test_a_schedule_that_recomputes_has_no_partial_translation():
    # Lemma 3.3 regenerates U1/U2 entries at this M: the partial game marks each edge once, so it is refused
    G = dag_for("approx-lemma-3.3", 64, 4, 4, 2)
    with pytest.raises(SpartitionError, match="regenerates"):
        algorithm_partial_schedule(algorithm("approx-lemma-3.3"), G, 64)
    recompute = algorithm("approx-lemma-3.3").generate(G, 64, "recompute")
    with pytest.raises(IllegalMove, match="recompute"):
        oneshot_to_partial(G, recompute)


def test_the_translation_keeps_the_oneshot_optimum_and_the_partial_game_goes_below_it():
    # matmul 1x2x1, M = 3: p0 = a0 b0, p1 = a1 b1, z = p0 + p1. Oneshot: computing p1 needs a1, b1 and p1 red beside
    # p0, one too many, so p0 is stored and loaded again: 4 loads + 2 + 1 store of z = 7, and its translation 7.
    # Partial: a0, b0 are aggregated into p0 one at a time (2 red each time), p0 into z, p0 deleted (its out-edge is
    # marked), then a1, b1 into p1 beside z, p1 into z: 4 loads + 1 save = 5.
    G = build("matmul", a=1, b=2, c=1)
    best = brute_force(G, 3, "oneshot")
    assert best.io == 7 == replay(G, oneshot_to_partial(G, best.schedule)).io
    assert brute_force(G, 3, "partial").io == 5


def test_cli_schedule_partial(capsys):
    assert main(["schedule", "flash-forward", "attention-forward:n=4,d=2", "--M", "24", "--variant", "partial",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["variant"], data["io"], data["io_formula"]) == ("partial", 64, 64)


# published schedules on the DAG with every sum one node (sums=node): chains of adds become aggregations
AGGREGATED = [("tiled-forward", "attention-forward", ATT, 5), ("tiled-forward", "attention-forward", ATT, 10),
              ("flash-forward", "attention-forward", ATT, 24), ("square-tiling-forward", "attention-forward", ATT, 6),
              ("flash-backward", "attention-backward-flash", ATT, 40), ("tiled-backward", "attention-backward-flash", ATT, 8),
              ("li-small-cache-backward", "attention-backward-weights", {"n": 4, "d": 3}, 6),
              ("greedy", "matmul", {"a": 2, "b": 3, "c": 2}, 4)]


@pytest.mark.parametrize("name, family, params, M", AGGREGATED)
def test_published_schedules_play_on_the_sums_as_nodes_dag_at_their_oneshot_io(name, family, params, M):
    from spartition.core.aggregate import chain_schedule_to_aggregated

    G = build(family, **params)
    H = build(family, **params, sums="node")
    one = algorithm(name).generate(G, M, variant="oneshot")
    io = replay(G, Schedule(one.M, "oneshot", one.moves)).io
    moved = chain_schedule_to_aggregated(G, one)
    assert replay(H, moved).io == io and moved.variant == "partial"
    # one partial compute per edge of the aggregated DAG, fewer edges than the binary one where a sum has 3+ terms
    assert sum(m[0] == "partial" for m in moved.moves) == H.number_of_edges()


def test_a_tree_sum_has_no_such_translation():
    # (x0 + x1) + (x2 + x3) at M = 3: the oneshot optimum (7) stores x0 + x1 and computes x2 + x3 apart; the one
    # sum node cannot hold two partial sums, so the translation is refused by the replay, naming the rule
    from spartition.core.aggregate import aggregate_sums, chain_schedule_to_aggregated

    G = build("reduction", k=4, shape="tree")
    best = brute_force(G, 3, "oneshot")
    assert best.io == 7
    with pytest.raises(IllegalMove):
        replay(aggregate_sums(G), chain_schedule_to_aggregated(G, best.schedule))
