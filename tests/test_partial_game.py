"""The partial-computation game: legal schedules and their costs, each broken rule named with its step, the file
format, and ``spartition replay`` on it."""

import json
import re

import networkx as nx
import pytest

from spartition.cli.main import main
from spartition.core.dag import compact, save_dag
from spartition.core.game import Schedule, load_schedule, replay, save_schedule
from spartition.core.partial import min_partial_memory, require_partial_memory
from spartition.errors import IllegalMove, InfeasibleMemory, InvalidSchedule
from spartition.families.classic.dag import chain, fft

CHAIN3 = [("load", "c0"), ("partial", "c0", "c1"), ("delete", "c0"), ("partial", "c1", "c2"), ("delete", "c1"),
          ("save", "c2")]


def fan_in(k):
    """One node ``y`` summing ``k`` inputs ``x0..x{k-1}``."""
    G = nx.DiGraph()
    for i in range(k):
        G.add_node(f"x{i}", op="input")
    G.add_node("y", op="sum")
    G.add_edges_from((f"x{i}", "y") for i in range(k))
    return G


def fan_in_moves(k):
    moves = []
    for i in range(k):
        moves += [("load", f"x{i}"), ("partial", f"x{i}", "y"), ("delete", f"x{i}")]
    return moves + [("save", "y")]


def test_chain_costs_two():
    r = replay(chain(3), Schedule(2, "partial", CHAIN3))
    assert (r.io, r.loads, r.stores, r.computes, r.peak_red, r.moves, r.variant) == (2, 1, 1, 2, 2, 6, "partial")


@pytest.mark.parametrize("k", [1, 2, 5])
def test_fan_in_costs_k_plus_one_at_two_pebbles(k):
    r = replay(fan_in(k), Schedule(2, "partial", fan_in_moves(k)))
    assert (r.io, r.peak_red) == (k + 1, 2)


def test_butterfly_at_two_and_three_pebbles():
    # M = 2: F1_0 is finished with both inputs passing through; F0_1 stays red for F1_1, F0_0 is loaded again.
    two = [("load", "F0_0"), ("partial", "F0_0", "F1_0"), ("delete", "F0_0"), ("load", "F0_1"),
           ("partial", "F0_1", "F1_0"), ("save", "F1_0"), ("delete", "F1_0"), ("partial", "F0_1", "F1_1"),
           ("delete", "F0_1"), ("load", "F0_0"), ("partial", "F0_0", "F1_1"), ("delete", "F0_0"), ("save", "F1_1")]
    assert replay(fft(1), Schedule(2, "partial", two)).io == 5
    three = [("load", "F0_0"), ("load", "F0_1"), ("partial", "F0_0", "F1_0"), ("partial", "F0_1", "F1_0"),
             ("save", "F1_0"), ("delete", "F1_0"), ("partial", "F0_0", "F1_1"), ("partial", "F0_1", "F1_1"),
             ("store", "F1_1")]  # store is read as save
    r = replay(fft(1), Schedule(3, "partial", three))
    assert (r.io, r.stores, r.peak_red) == (4, 2, 3)


def test_a_saved_partial_value_is_loaded_and_finished():
    # y gets x0, is saved and evicted, comes back light, and the next partial compute turns it dark again.
    moves = [("load", "x0"), ("partial", "x0", "y"), ("save", "y"), ("delete", "y"), ("delete", "x0"),
             ("load", "x1"), ("load", "y"), ("partial", "x1", "y"), ("save", "y")]
    assert replay(fan_in(2), Schedule(2, "partial", moves)).io == 5


@pytest.mark.parametrize(
    "moves, step, rule",
    [
        # the three refusals the issue names
        ([("load", "x0"), ("partial", "x0", "y"), ("partial", "x0", "y")], 2,
         "edge already marked (each edge is computed once)"),
        ([("load", "x0"), ("partial", "x0", "y"), ("save", "y"), ("delete", "y"), ("delete", "x0"),
          ("load", "x1"), ("partial", "x1", "y")], 6,
         "target 'y' is not red and has marked in-edges: its partial value is only in slow memory (load it first)"),
        ([("load", "x0"), ("partial", "x0", "y"), ("delete", "y"), ("load", "x1"), ("partial", "x1", "y")], 4,
         "target 'y' is not red and has marked in-edges: its partial value is lost (it was deleted)"),
        # the other rules
        ([("load", "y")], 0, "load of a node not in slow memory"),
        ([("load", "x0"), ("load", "x0")], 1, "load of a node already in fast memory"),
        ([("partial", "x0", "y")], 0, "source 'x0' is not in fast memory"),
        ([("save", "y")], 0, "save of a node not in fast memory"),
        ([("load", "x0"), ("save", "x0")], 1, "save of a light node (its fast and slow copies are equal)"),
        ([("delete", "x0")], 0, "delete of a node not in fast memory"),
        ([("load", "x0"), ("load", "x1"), ("partial", "x0", "y")], 2, "more than M = 2 red pebbles"),
        ([("load", "x0"), ("partial", "y", "x0")], 1, "('y', 'x0') is not an edge"),
        ([("load", "x0"), ("partial", "x0")], 1, "a partial compute names an edge"),
        ([("compute", "y")], 0, "unknown move 'compute'"),
        ([("load", "nowhere")], 0, "unknown node 'nowhere'"),
        ([("load", "x0"), ("partial", "x0", "y"), ("delete", "x0")], 3,
         "edges not marked at the end: ('x1', 'y')"),
        ([("load", "x0"), ("partial", "x0", "y"), ("delete", "x0"), ("load", "x1"), ("partial", "x1", "y")], 5,
         "outputs not in slow memory at the end: ['y']"),
    ],
)
def test_illegal_moves_name_step_and_rule(moves, step, rule):
    with pytest.raises(IllegalMove, match=re.escape(rule)) as err:
        replay(fan_in(2), Schedule(2, "partial", moves))
    assert err.value.step == step and rule in err.value.rule
    if step < len(moves):
        assert err.value.move == moves[step][0]


def test_a_dark_value_still_needed_is_not_deleted():
    moves = [("load", "c0"), ("partial", "c0", "c1"), ("delete", "c1")]
    with pytest.raises(IllegalMove, match=re.escape("step 2: delete 'c1': delete of a dark node whose value is "
                                                    "still needed: out-edge ('c1', 'c2') is unmarked")):
        replay(chain(3), Schedule(2, "partial", moves))
    # saved first, the same delete is legal
    ok = [("load", "c0"), ("partial", "c0", "c1"), ("save", "c1"), ("delete", "c1"), ("delete", "c0"),
          ("load", "c1"), ("partial", "c1", "c2"), ("delete", "c1"), ("save", "c2")]
    assert replay(chain(3), Schedule(2, "partial", ok)).io == 4


def test_a_source_must_be_complete():
    moves = [("load", "c0"), ("partial", "c1", "c2")]
    with pytest.raises(IllegalMove, match=re.escape("source 'c1' is not complete: in-edge ('c0', 'c1') is unmarked")):
        replay(chain(3), Schedule(3, "partial", moves))


def test_an_update_drops_the_stale_blue_copy():
    # y saved after x0, then updated by x1: its blue copy is stale, so ending without a new save is refused
    moves = [("load", "x0"), ("load", "x1"), ("partial", "x0", "y"), ("save", "y"), ("partial", "x1", "y")]
    with pytest.raises(IllegalMove, match=re.escape("outputs not in slow memory at the end: ['y']")):
        replay(fan_in(2), Schedule(3, "partial", moves))
    # and a delete right after the update is of a dark sink: legal, but the game cannot end
    with pytest.raises(IllegalMove, match="outputs not in slow memory"):
        replay(fan_in(2), Schedule(3, "partial", moves + [("delete", "y")]))


def test_isolated_nodes_cost_nothing_and_memory_is_checked():
    G = nx.DiGraph()
    G.add_nodes_from(["a", "b"])
    assert replay(G, Schedule(0, "partial", [])).io == 0
    assert min_partial_memory(G) == 0 and min_partial_memory(fft(2)) == 2
    with pytest.raises(InfeasibleMemory, match=re.escape("M = 1 is too small for the partial game: edge ('F0_0', "
                                                         "'F1_0') needs both ends red")):
        require_partial_memory(compact(fft(1)), 1)


def test_schedule_file_round_trip(tmp_path):
    s = Schedule(2, "partial", CHAIN3)
    path = tmp_path / "s.json"
    save_schedule(s, path)
    data = json.loads(path.read_text())
    assert data["variant"] == "partial" and data["moves"][1] == ["partial", "c0", "c1"]
    assert load_schedule(path) == s
    with pytest.raises(InvalidSchedule, match="step 0: a move is a"):
        Schedule.from_dict({"M": 2, "variant": "oneshot", "moves": [["partial", "c0", "c1"]]})
    with pytest.raises(InvalidSchedule, match="unknown variant 'partial-ish'"):
        Schedule(2, "partial-ish", [])


def test_cli_replay_checks_a_partial_schedule(tmp_path, capsys):
    dag, good, bad = tmp_path / "g.json", tmp_path / "good.json", tmp_path / "bad.json"
    save_dag(chain(3), dag)
    save_schedule(Schedule(2, "partial", CHAIN3), good)
    save_schedule(Schedule(2, "partial", CHAIN3[:2] + [("partial", "c0", "c1")]), bad)
    assert main(["replay", str(dag), str(good), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["valid"], out["io"], out["variant"], out["computes"]) == (True, 2, "partial", 2)
    assert main(["replay", str(dag), str(bad), "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["step"] == 2 and "edge already marked" in out["error"]


def test_tools_of_the_standard_game_refuse_a_partial_schedule(tmp_path, capsys):
    from spartition.core.draw import timeline
    from spartition.exact.improve import improve_schedule

    s = Schedule(2, "partial", CHAIN3)
    for run in (lambda: improve_schedule(chain(3), s), lambda: timeline(chain(3), s)):
        with pytest.raises(InvalidSchedule, match="not of the partial game"):
            run()
    path = tmp_path / "s.json"
    save_schedule(s, path)
    assert main(["improve", "chain:n=3", str(path)]) == 2
    assert "not of the partial game" in capsys.readouterr().err
