"""Outputs beyond the sinks: a node marked ``output: true`` must end blue (issue 42)."""

import json

import networkx as nx
import pytest

from spartition import brute_force, greedy_schedule, replay, solve_io
from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import compact, dag_hash, load_dag, outputs, save_dag
from spartition.errors import IllegalMove, InvalidDAG, InvalidSchedule
from spartition.core.game import Schedule
from spartition.certify.certify import certify_optimum
from spartition.exact.steps import step_search


def _chain(mark: bool) -> nx.DiGraph:
    G = nx.DiGraph([("x", "y"), ("y", "z")])
    G.nodes["x"]["op"] = "input"
    if mark:
        G.nodes["y"]["output"] = True
    return G


def _mlp(mark: bool) -> nx.DiGraph:
    """A one-unit layer forward and backward: y = f(w x), then the gradient reads y."""
    G = nx.DiGraph()
    G.add_edges_from([("x", "h"), ("w", "h"), ("h", "y"), ("y", "e"), ("t", "e"),
                      ("e", "dh"), ("y", "dh"), ("dh", "dw"), ("x", "dw")])
    for v in ("x", "w", "t"):
        G.nodes[v]["op"] = "input"
    if mark:
        G.nodes["y"]["output"] = True
    return G


def test_a_marked_inner_node_is_an_output_and_costs_its_store():
    # by hand: load x, compute y, compute z, store z = 2; storing y too makes 3
    G, H = _chain(False), _chain(True)
    assert outputs(G) == ["z"] and outputs(H) == ["y", "z"]
    assert trivial_lower_bound(G) == 2 and trivial_lower_bound(H) == 3
    assert brute_force(G, 2).io == 2 and brute_force(H, 2).io == 3
    assert dag_hash(G) != dag_hash(H)
    G.nodes["y"]["output"] = False  # an explicit false is no mark: the hash of the unmarked DAG
    assert dag_hash(G) == dag_hash(_chain(False))


def test_replay_refuses_a_schedule_that_leaves_the_marked_output_red():
    H = _chain(True)
    moves = (("load", "x"), ("compute", "y"), ("delete", "x"), ("compute", "z"), ("store", "z"))
    with pytest.raises((InvalidSchedule, IllegalMove), match="y"):
        replay(H, Schedule(2, "oneshot", moves))
    assert replay(_chain(False), Schedule(2, "oneshot", moves)).io == 2


@pytest.mark.parametrize("variant", ["oneshot", "recompute"])
@pytest.mark.parametrize("M", [3, 4])
def test_brute_force_solve_and_greedy_agree_on_a_marked_mlp(variant, M):
    G, H = _mlp(False), _mlp(True)
    plain, marked = brute_force(G, M, variant).io, brute_force(H, M, variant).io
    assert marked == plain + 1  # y is computed once, kept red for its uses, and stored once
    result = solve_io(H, M, variant=variant, time_limit=30, workers=1)
    assert result.status == "OPTIMAL" and result.io == marked
    assert replay(H, result.schedule).io == marked
    greedy = replay(H, greedy_schedule(H, M, variant))
    assert greedy.io >= marked
    if variant == "recompute":
        assert step_search(H, M, variant=variant).io == marked


def test_greedy_keeps_a_marked_output_red_for_its_use():
    # store y and keep it: no reload of y, so greedy reaches the optimum 3 at M = 2
    H = _chain(True)
    assert replay(H, greedy_schedule(H, 2)).io == 3


@pytest.mark.parametrize("ext", ["json", "dot", "hdag"])
def test_every_format_keeps_the_mark(tmp_path, ext):
    H = _mlp(True)
    path = tmp_path / f"g.{ext}"
    save_dag(H, path)
    back = load_dag(path)
    assert outputs(back) == outputs(H) and dag_hash(back) == dag_hash(H)
    assert bool(compact(back).is_output[compact(back).index["y"]])


def test_a_mark_that_is_not_a_boolean_is_refused_naming_the_node():
    G = _chain(False)
    G.nodes["y"]["output"] = "yes"
    with pytest.raises(InvalidDAG, match="'y'.*output"):
        compact(G)


def test_a_marked_input_stays_an_input_and_counts_its_load():
    G = _chain(False)
    G.nodes["x"]["output"] = True
    assert outputs(G) == ["z"] and trivial_lower_bound(G) == 2 and brute_force(G, 2).io == 2


@pytest.mark.parametrize("encoding", ["time-indexed", "order"])
def test_a_certificate_counts_the_marked_output(tmp_path, encoding):
    pytest.importorskip("pysat")
    from spartition.certify.bundle import check_bundle

    H = _chain(True)
    doc = certify_optimum(H, 2, "oneshot", tmp_path / "b", encoding=encoding, time_limit=60)
    report = check_bundle(tmp_path / "b")
    assert report.status == "OPTIMAL" and "3" in report.statement, (doc, report)


def test_the_maxsat_engine_counts_the_marked_output():
    pytest.importorskip("pysat")
    H = _mlp(True)
    result = solve_io(H, 3, variant="oneshot", engine="maxsat", time_limit=30)
    assert result.status == "OPTIMAL" and result.io == brute_force(H, 3).io


@pytest.mark.parametrize("mark", [False, True])
def test_a_bundle_of_a_dag_without_op_labels_checks(tmp_path, mark):
    # a user's own graph carries no ``op``: the file gets ``input`` on its sources when read
    # back, and the bundle used to record the hash of the graph before, failing its own check
    pytest.importorskip("pysat")
    from spartition.certify.bundle import check_bundle

    G = nx.DiGraph([("x", "y"), ("y", "z")])
    if mark:
        G.nodes["y"]["output"] = True
    certify_optimum(G, 2, "oneshot", tmp_path / "b", time_limit=60)
    report = check_bundle(tmp_path / "b")
    assert report.status == "OPTIMAL" and str(2 + mark) in report.statement
