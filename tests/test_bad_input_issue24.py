"""Issue 24: inputs from outside the project, and bundles, parameters and paths that must not mislead.

Each test names the wrong answer, loss or crash it prevents: a CP-SAT
parameter that would turn a gap into a proof, a DOT port read as a node, a
bundle that points outside itself or names no DAG, an output path that is an
input, a foreign SQLite file adopted.
"""

import json
import re

import pytest
from ortools.sat.python import cp_model

from spartition.cli.main import main
from spartition.core.dag import load_dag, new_dag, save_dag
from spartition.core.registry import build
from spartition.exact.cpsat import UNSOUND_PARAMETERS, new_solver, proven_bound
from spartition.exact.solve import solve_io

# --------------------------------------------------------------------------- CP-SAT parameters


@pytest.mark.parametrize("name", sorted(UNSOUND_PARAMETERS))
def test_parameters_that_stop_a_search_early_are_refused(name):
    # relative_gap_limit 0.9 made solve_io report OPTIMAL 22 with lower bound 22; the optimum is 15
    value = True if name.startswith(("stop_", "fix_")) else 0.9
    G = build("attention-forward", ["n=2", "d=1"])
    with pytest.raises(ValueError, match=f"CP-SAT parameter {name} is refused"):
        solve_io(G, 4, "oneshot", formulation="order", hint=None, cp_sat_parameters={name: value}, time_limit=10)
    with pytest.raises(ValueError, match=f"CP-SAT parameter {name} is refused"):
        new_solver(1.0, 1, 0, extra={name: value})


def test_unknown_or_ill_typed_parameters_are_refused():
    G = build("fft", ["k=1"])
    with pytest.raises(ValueError, match="'no_such' is not a CP-SAT parameter"):
        solve_io(G, 3, cp_sat_parameters={"no_such": 1})
    with pytest.raises(ValueError, match=r"linearization_level cannot take 'x' \(str\)"):
        solve_io(G, 3, cp_sat_parameters={"linearization_level": "x"})


class _Stopped:
    """A solver stopped by a gap: CP-SAT says OPTIMAL with objective 22 and bound 15."""

    objective_value = 22.0
    best_objective_bound = 15.0


def test_the_bound_is_best_objective_bound_even_at_optimal():
    assert proven_bound(_Stopped(), cp_model.OPTIMAL, "min") == 15
    assert proven_bound(_Stopped(), cp_model.FEASIBLE, "min", found=22) == 15


def test_a_passed_parameter_keeps_the_true_optimum():
    G = build("attention-forward", ["n=2", "d=1"])
    r = solve_io(G, 4, "oneshot", formulation="order", hint=None, cp_sat_parameters={"linearization_level": 1},
                 time_limit=30)
    assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", 15, 15)


# --------------------------------------------------------------------------- node-link JSON


def test_node_link_edge_attributes_are_kept(tmp_path):
    G = new_dag("hand", {})
    G.add_node("0", op="input")
    G.add_node("3", op="add")
    G.add_edge("0", "3", comm_weight=1)
    save_dag(G, tmp_path / "g.json")
    assert list(load_dag(tmp_path / "g.json").edges(data=True)) == [("0", "3", {"comm_weight": 1})]


@pytest.mark.parametrize("change, message", [
    ({"directed": False}, "undirected graph; a DAG is directed"),
    ({"multigraph": True}, "\"multigraph\": true; a DAG has at most one edge"),
    ({"edges": [{"source": "a", "target": "b"}, {"source": "a", "target": "b", "key": 1}]},
     r"edge #1 \('a' -> 'b'\) is listed twice"),
])
def test_node_link_data_that_is_no_dag_is_refused(tmp_path, capsys, change, message):
    data = {"directed": True, "multigraph": False, "nodes": [{"id": "a"}, {"id": "b"}],
            "edges": [{"source": "a", "target": "b"}]}
    data.update(change)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert re.search(message, err), err
