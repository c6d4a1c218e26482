"""The partial game where a variant is taken: ``solve_io`` / ``spartition solve`` and ``sandwich``, with values
computed by hand or by the independent search of tests/test_partial_brute.py."""

import json

import networkx as nx
import pytest

from spartition.cli.main import main
from spartition.core.game import replay
from spartition.core.registry import build
from spartition.errors import ParameterError
from spartition.exact.partial_solve import partial_trivial_bound, solve_partial_io
from spartition.exact.solve import solve_io
from spartition.study.sandwich import sandwich, sandwich_row
from tests.exact.test_partial_brute import independent_optimum, random_instances


@pytest.mark.parametrize("M, io", [(2, 5), (3, 4)])
def test_solve_io_partial_on_the_butterfly(M, io):
    # M = 2: one input is loaded twice (test_partial_brute.test_the_butterfly); M = 3: the trivial bound 4
    r = solve_io(build("fft", k=1), M, "partial")
    assert (r.status, r.io, r.lower_bound, r.variant, r.formulation) == ("OPTIMAL", io, io, "partial", "partial-search")
    assert r.schedule.variant == "partial" and replay(build("fft", k=1), r.schedule).io == io


def test_solve_io_partial_below_the_standard_games_feasible_memory():
    # 3 inputs into one node: the standard game needs M = 4, the partial game plays it with 2 at 3 loads + 1 save
    G = nx.DiGraph([("x0", "y"), ("x1", "y"), ("x2", "y")])
    assert solve_io(G, 3, "oneshot").status == "INFEASIBLE"
    r = solve_io(G, 2, "partial")
    assert (r.status, r.io) == ("OPTIMAL", 4)
    assert solve_io(G, 1, "partial").status == "INFEASIBLE"


def test_the_cp_sat_path_when_the_state_search_gives_up():
    # one state allowed: the search gives up at once and the CP-SAT model answers, proven on this DAG
    r = solve_partial_io(build("fft", k=1), 2, time_limit=30, search_states=1)
    assert (r.status, r.io, r.lower_bound, r.formulation) == ("OPTIMAL", 5, 5, "partial-cp-sat")
    assert "gave up" in r.message and r.assumptions
    assert replay(build("fft", k=1), r.schedule).io == 5


def test_the_standard_games_options_are_refused_for_partial():
    with pytest.raises(ParameterError, match="engine"):
        solve_io(build("fft", k=1), 2, "partial", engine="maxsat")
    with pytest.raises(ParameterError, match="lower_bound"):
        solve_io(build("fft", k=1), 2, "partial", lower_bound=3)


def test_the_trivial_bound_holds_in_the_partial_game_on_random_dags():
    # soundness of partial_trivial_bound: never above the independent optimum, and met somewhere
    met = 0
    for seed, G, M in random_instances(80):
        best = independent_optimum(G, M)
        assert partial_trivial_bound(G) <= best, (seed, M)
        met += partial_trivial_bound(G) == best
    assert 0 < met < 80


def test_cli_solve_partial(capsys):
    assert main(["solve", "fft:k=1", "--M", "2", "--variant", "partial", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["status"], data["io"], data["lower_bound"], data["variant"]) == ("OPTIMAL", 5, 5, "partial")
    assert main(["solve", "fft:k=1", "--M", "1", "--variant", "partial"]) == 2
    assert main(["solve", "fft:k=1", "--M", "2", "--variant", "partial", "--engine", "maxsat"]) == 2
    assert "not for --variant partial" in capsys.readouterr().err


def test_sandwich_row_partial_on_a_small_dag_is_closed_by_the_exact_search():
    row = sandwich_row(build("fft", k=1), 2, "partial")
    assert row.variant == "partial"
    assert (row.lower.value, row.upper.value) == (5, 5)
    assert row.lowers[-1].method == "trivial" and row.lowers[-1].value == 4
    assert replay(build("fft", k=1), row.schedule).io == 5 and row.schedule.variant == "partial"


def test_sandwich_partial_translates_the_published_schedules():
    G = build("attention-forward", n=4, d=2)
    (row,) = sandwich(G, [8], "partial", search=False, improve=False)
    methods = {s.method: s.value for s in row.uppers}
    # the partial game's own greedy, and every oneshot algorithm translated (the CLI prints the same)
    assert "algorithm:partial-greedy" in methods and "algorithm:tiled-forward" in methods
    assert row.lower.method == "trivial" and row.lower.value == 32  # 4*2*3 inputs (Q, K, V) + 4*2 outputs
    assert row.schedule.variant == "partial" and replay(G, row.schedule).io == row.upper.value
    # translation keeps the loads and stores: each algorithm costs what it costs in the oneshot game
    (one,) = sandwich(G, [8], "oneshot", search=False, improve=False)
    oneshot = {s.method: s.value for s in one.uppers}
    for name in ("algorithm:tiled-forward", "algorithm:square-tiling-forward", "algorithm:standard-forward"):
        if name in oneshot:
            assert methods[name] == oneshot[name], name


def test_sandwich_partial_refuses_memory_below_two_and_skips_partition_bounds():
    with pytest.raises(Exception, match="M >= 2"):
        sandwich(build("chain", n=3), [1], "partial")
    (row,) = sandwich(build("chain", n=3), [2], "partial", partition_bounds=True)
    assert (row.lower.value, row.upper.value) == (2, 2)
    assert any("partition bounds" in s for s in row.skipped)


def test_sandwich_partial_on_sums_as_nodes_plays_the_published_schedules():
    # the generators run on the binary build; their schedules played on the one-node sums keep their I/O
    # (tests/study/test_partial_algorithms.py); the trivial bound is the same count of inputs and outputs (4*4*3 + 4*4)
    H = build("attention-forward", n=4, d=4, sums="node")
    (row,) = sandwich(H, [8], "partial", search=False, improve=False)
    (binary,) = sandwich(build("attention-forward", n=4, d=4), [8], "partial", search=False, improve=False)
    ups = {s.method: s.value for s in row.uppers}
    assert ups["algorithm:tiled-forward"] == {s.method: s.value for s in binary.uppers}["algorithm:tiled-forward"]
    assert row.lower.value == 64 and replay(H, row.schedule).io == row.upper.value
    assert not any("unknown node" in s for s in row.skipped)


def test_compare_in_the_partial_game_stores_its_own_bounds_and_the_translated_algorithms(tmp_path, capsys):
    # the butterfly, M = 2: the partial optimum 5 (test_solve_io_partial_on_the_butterfly), the trivial bound 4;
    # the vertex S-partition bounds (standard games only) are not run, and no formula proven for the standard
    # games is checked against a partial schedule
    from spartition.study.studies import StudySpec, compare
    from spartition.study.store import ResultStore

    with ResultStore(tmp_path / "s.db") as store:
        study = compare(StudySpec("fft", {"k": 1}, Ms=(2, 3), variant="partial", exact=("brute", "cpsat")), store=store)
        again = compare(StudySpec("fft", {"k": 1}, Ms=(2, 3), variant="partial", exact=("brute", "cpsat")), store=store)
    assert again.computed == 0 and again.cached == study.computed
    by_M = {row.M: row for row in study.rows}
    assert [by_M[M].optimum for M in (2, 3)] == [5, 4]
    assert set(by_M[2].bounds) == {"trivial", "partial-edge-partition"} and by_M[2].bounds["trivial"].value == 4
    assert all(r.key.variant == "partial" for row in study.rows for r in row.bounds.values())
    assert by_M[3].algorithms["greedy"].status == "VALID" and by_M[3].algorithms["greedy"].value >= 4
    assert not by_M[2].missing and not [v for row in study.rows for v in row.verdicts if v.kind == "violated"]
    assert main(["compare", "fft", "k=1", "--M", "2", "--variant", "partial", "--exact", "brute",
                 "--store", str(tmp_path / "s.db")]) == 0
    assert "fft k=1, partial: 1 memories" in capsys.readouterr().out
