"""Replay: costs of legal schedules, and each kind of illegal move named with its step and rule."""

import json
import random
import re

import pytest

from spartition.families.classic.dag import chain, fft, matmul, random_dag
from spartition.core.dag import compact
from spartition.errors import IllegalMove, InvalidSchedule
from spartition.core.game import Schedule, load_schedule, replay, save_schedule

FFT2_MOVES = [("load", "F0_0"), ("load", "F0_1"), ("compute", "F1_0"), ("store", "F1_0"),
              ("delete", "F1_0"), ("compute", "F1_1"), ("store", "F1_1")]


def test_fft2_costs_four():
    r = replay(fft(1), Schedule(3, "oneshot", FFT2_MOVES))
    assert (r.io, r.loads, r.stores, r.computes, r.peak_red, r.moves) == (4, 2, 2, 2, 3, 7)


def test_recompute_allowed_only_in_recompute_variant():
    moves = [("load", "c0"), ("compute", "c1"), ("delete", "c1"), ("compute", "c1"),
             ("compute", "c2"), ("store", "c2")]
    assert replay(chain(3), Schedule(3, "recompute", moves)).io == 2
    with pytest.raises(IllegalMove, match="recompute") as err:
        replay(chain(3), Schedule(3, "oneshot", moves))
    assert err.value.step == 3 and err.value.node == "c1" and "recompute" in err.value.rule


@pytest.mark.parametrize(
    "moves, step, rule",
    [
        ([("load", "c1")], 0, "load of a node not in slow memory"),
        ([("load", "c0"), ("load", "c0")], 1, "load of a node already in fast memory"),
        ([("compute", "c1")], 0, "predecessor 'c0' is not in fast memory"),
        ([("load", "c0"), ("compute", "c0")], 1, "compute of an input"),
        ([("load", "c0"), ("compute", "c1"), ("compute", "c1")], 2, "already in fast memory"),
        ([("store", "c0")], 0, "store of a node not in fast memory"),
        ([("load", "c0"), ("store", "c0")], 1, "store of a node already in slow memory"),
        ([("delete", "c2")], 0, "delete of a node not in fast memory"),
        ([("load", "c0"), ("compute", "c1"), ("compute", "c2")], 2, "more than M = 2 red pebbles"),
        ([("load", "nowhere")], 0, "unknown node 'nowhere'"),
        ([("jump", "c0")], 0, "unknown move 'jump'"),
        ([("load", "c0"), ("compute", "c1"), ("delete", "c0"), ("compute", "c2")], 4,
         "outputs not in slow memory at the end: ['c2']"),
    ],
)
def test_illegal_moves_name_step_and_rule(moves, step, rule):
    with pytest.raises(IllegalMove, match=re.escape(rule)) as err:
        replay(chain(3), Schedule(2, "oneshot", moves))
    assert err.value.step == step
    assert rule in str(err.value)
    if step < len(moves):
        assert f"step {step}: {moves[step][0]} {moves[step][1]!r}" in str(err.value)


def test_schedule_file_round_trip_and_errors(tmp_path):
    s = Schedule(3, "oneshot", FFT2_MOVES)
    path = tmp_path / "s.json"
    save_schedule(s, path)
    assert json.loads(path.read_text())["moves"][0] == ["load", "F0_0"]
    assert load_schedule(path) == s
    for text, message in [("[1, 2", "unreadable JSON"), ('{"M": 3, "variant": "oneshot"}', "no 'moves'"),
                          ('{"M": 3, "variant": "sometimes", "moves": []}', "unknown variant"),
                          ('{"M": -1, "variant": "oneshot", "moves": []}', "non-negative"),
                          ('{"M": 3, "variant": "oneshot", "moves": [["load"]]}', "step 0")]:
        path.write_text(text)
        with pytest.raises(InvalidSchedule, match=message):
            load_schedule(path)


def _reference_replay(G, s):
    """Step-by-step replay written straight from the rules table, to cross-check the vectorised one."""
    red, blue, computed = set(), {v for v in G if G.in_degree(v) == 0}, set()
    io = peak = 0
    for t, (move, v) in enumerate(s.moves):
        if move == "load":
            ok = v in blue and v not in red
            red.add(v)
            io += 1
        elif move == "store":
            ok = v in red and v not in blue
            blue.add(v)
            io += 1
        elif move == "compute":
            ok = (G.in_degree(v) > 0 and v not in red and all(u in red for u in G.predecessors(v))
                  and not (s.variant == "oneshot" and v in computed))
            red.add(v)
            computed.add(v)
        else:
            ok = v in red
            red.discard(v)
        if not ok or len(red) > s.M:
            return ("illegal", t)
        peak = max(peak, len(red))
    if not all(v in blue for v in G if G.out_degree(v) == 0):
        return ("illegal", len(s.moves))
    return (io, peak)


def _random_moves(G, rng, length):
    nodes = list(G)
    moves, red, blue = [], set(), {v for v in G if G.in_degree(v) == 0}
    for _ in range(length):
        v = rng.choice(nodes)
        # mostly plausible moves, with some illegal ones mixed in
        options = ["load"] if v in blue and v not in red else []
        if v in red:
            options += ["delete", "store"] if v not in blue else ["delete"]
        elif G.in_degree(v) and all(u in red for u in G.predecessors(v)):
            options.append("compute")
        move = rng.choice(options) if options and rng.random() < 0.97 else rng.choice(
            ["load", "store", "compute", "delete"])
        moves.append((move, v))
        if move in ("load", "compute"):
            red.add(v)
        elif move == "delete":
            red.discard(v)
        elif move == "store":
            blue.add(v)
    return moves


def test_vectorised_replay_agrees_with_step_by_step_replay():
    rng = random.Random(7)
    agreed_valid = 0
    for seed in range(300):
        G = random_dag(rng.randint(2, 9), 0.45, 3, seed=seed)
        s = Schedule(rng.randint(2, 6), rng.choice(["oneshot", "recompute"]),
                     _random_moves(G, rng, rng.randint(0, 40)))
        expected = _reference_replay(G, s)
        try:
            r = replay(G, s)
            got = (r.io, r.peak_red)
            agreed_valid += 1
        except IllegalMove as exc:
            got = ("illegal", exc.step)
        assert got == expected, (seed, s.moves)
    assert agreed_valid >= 10  # the comparison covered valid schedules too


def test_replay_accepts_compact_form():
    G = matmul(1, 1, 1)
    s = Schedule(3, "oneshot", [("load", "A_0_0"), ("load", "B_0_0"), ("compute", "P_0_0_0"),
                                ("store", "P_0_0_0")])
    assert replay(compact(G), s).io == replay(G, s).io == 3
