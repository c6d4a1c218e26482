"""solve_io's plumbing: typed hints and search outcomes, and the one place where a status is decided."""

import ast
from dataclasses import fields
from pathlib import Path

import pytest

from spartition.core.game import Schedule
from spartition.errors import SpartitionError
from spartition.exact.hints import Hint, candidate_hints
from spartition.exact.result import Outcome, SearchOutcome
from spartition.status import Status

EXACT = Path(__file__).resolve().parents[2] / "spartition" / "exact"


def outcome(proven=3, supplied=None) -> Outcome:
    return Outcome(0.0, 0.0, {"variant": "oneshot", "M": 3, "dag_hash": ""}, {}, proven, supplied)


def test_a_hint_has_the_fields_of_a_found_schedule_in_classify_order():
    assert [f.name for f in fields(Hint)] == ["schedule", "io", "source"]
    assert [f.name for f in fields(SearchOutcome)][:3] == ["schedule", "io", "source"]
    from spartition.core.dag import compact
    from spartition.families.classic.dag import fft

    (greedy,) = candidate_hints(None, compact(fft(1)), 3, "oneshot", "greedy")
    assert (greedy.io, greedy.source, greedy.rank()) == (4, "greedy", (4, "greedy"))


def test_settles_by_closing_or_by_the_bound():
    assert SearchOutcome(io=5, closed=True).settles()
    assert SearchOutcome(io=5, model_bound=5).settles() and not SearchOutcome(io=5, model_bound=4).settles()
    assert SearchOutcome(io=6, model_bound=5).settles(5)  # a cheaper hint met by the bound
    assert not SearchOutcome(model_bound=5).settles()  # nothing found, nothing to settle


S = Schedule(3, "oneshot", [])


@pytest.mark.parametrize("found, exact, supplied, status, bound, source", [
    (SearchOutcome(S, 5, "solver", model_bound=5), True, None, Status.OPTIMAL, 5, "order"),
    (SearchOutcome(S, 5, "solver", model_bound=4), True, None, Status.FEASIBLE, 4, "order"),
    # a proof within a cap proves nothing of the true problem: the tool's own bound stays
    (SearchOutcome(S, 5, "solver", model_bound=5), False, None, Status.OPTIMAL_WITHIN_CAP, 3, "trivial"),
    # a search that read a supplied bound above the tool's proves optimality only if that bound holds
    (SearchOutcome(S, 5, "solver", model_bound=5), True, 4, Status.OPTIMAL_GIVEN_BOUND, 3, "trivial"),
    # ... unless it never read it (RC2, the step search)
    (SearchOutcome(S, 5, "maxsat", model_bound=5, used_supplied=False, bound_by="maxsat"), True, 4, Status.OPTIMAL,
     5, "maxsat"),
    (SearchOutcome(S, 3, "greedy"), True, None, Status.OPTIMAL, 3, "trivial"),
    (SearchOutcome(), True, None, Status.UNKNOWN, 3, "trivial"),
])
def test_classify_decides_every_status(found, exact, supplied, status, bound, source):
    r = outcome(supplied=supplied).classify(found, "order", exact)
    assert (r.status, r.lower_bound, r.bound_source, r.io) == (status, bound, source, found.io)
    assert ("supplied lower bound 4 (not checked)" in " ".join(r.assumptions)) == (status == Status.OPTIMAL_GIVEN_BOUND)


def test_a_bound_above_a_valid_schedule_is_a_bug():
    with pytest.raises(SpartitionError, match=r"proven bound 6 exceeds the I/O 5 of a valid schedule \(bug\)"):
        outcome(proven=6).classify(SearchOutcome(S, 5, "greedy"), "none", True)


def test_the_status_decision_lives_in_result_and_asks_no_registry():
    tree = ast.parse((EXACT / "result.py").read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m.startswith("spartition.exact.formulations") for m in imported), imported
    solve = ast.parse((EXACT / "solve.py").read_text())
    assigned = [n for n in ast.walk(solve) if isinstance(n, ast.Assign) and any(
        getattr(t, "id", "") == "status" for t in n.targets)]
    assert not assigned, "solve.py assigns a status itself"


def test_solve_io_calls_itself_in_one_named_step_only():
    tree = ast.parse((EXACT / "solve.py").read_text())
    callers = [fn.name for fn in ast.walk(tree) if isinstance(fn, ast.FunctionDef)
               for n in ast.walk(fn) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "solve_io"]
    assert callers == ["_oneshot_hint"]
