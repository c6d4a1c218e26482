"""The one result record: every layer's result read as a Finding, and what it means decided once."""

import pytest

from spartition.exact.solve import solve_io
from spartition.families.classic.dag import chain, fft, matmul
from spartition.finding import EXACT, LOWER, UPPER, Finding
from spartition.partition.lower_bounds import Bound, trivial_bound
from spartition.status import Status
from spartition.study.formulas import evaluate_formulas
from spartition.study.sandwich import row_sandwich
from spartition.study.store import ResultKey, StoredResult
from spartition.study.studies import StudySpec, compare


def test_an_exact_result_holds_both_sides_and_says_when_it_is_cut():
    done = solve_io(chain(3), 2, "oneshot").finding()
    assert (done.kind, done.upper, done.lower, done.final, done.time_limited, done.game) == \
        (EXACT, 2, 2, True, False, "oneshot")
    # matmul 2x2x2 at M = 3 has oneshot optimum 25; a 0.01 s search cannot prove it
    cut = solve_io(matmul(2, 2, 2), 3, "oneshot", time_limit=0.01, workers=1)
    found = cut.finding("exact:cpsat")
    assert cut.status == Status.FEASIBLE and found.method == "exact:cpsat"
    assert (found.upper, found.lower) == (cut.io, cut.lower_bound) and found.lower < 25 <= found.upper
    assert found.time_limited and not found.final
    lower, upper = found.as_lower(), found.as_upper()
    assert (lower.kind, lower.value, upper.kind, upper.value, upper.lower) == (LOWER, cut.lower_bound, UPPER, cut.io, None)
    assert "the solver's proven bound" in lower.evidence and "schedule replayed" in upper.evidence


def test_a_bound_is_a_lower_finding_and_a_cut_search_still_bounds():
    found = trivial_bound(fft(1)).finding("recompute")
    assert (found.kind, found.value, found.lower, found.upper, found.final, found.game) == \
        (LOWER, 4, 4, None, True, "recompute")
    cut = Bound(7, "hong-kung", False, Status.FEASIBLE, {}, None, 0.0).finding()
    assert (cut.lower, cut.time_limited, cut.final, cut.method) == (7, True, False, "bound:hong-kung")


def _row(method, status, value, bound=None, proven=False, time_limit=30.0):
    return StoredResult(ResultKey("h", 4, "recompute", method), status, value, bound, proven, time_limit, 1.0, {})


@pytest.mark.parametrize("row, kind, upper, lower, limited", [
    (_row("exact:cpsat", Status.OPTIMAL, 25.0, proven=True), EXACT, 25, 25, False),  # an optimum is its own bound
    (_row("exact:cpsat", Status.FEASIBLE, 30.0, 17.0), EXACT, 30, 17, True),
    (_row("exact:cpsat", Status.FEASIBLE, 30.0, 17.0, time_limit=None), EXACT, 30, 17, False),
    (_row("exact:cpsat", Status.INFEASIBLE, None, 3.0, proven=True), EXACT, None, None, False),
    (_row("exact:brute", Status.INVALID, 12.0, 12.0), EXACT, None, None, True),  # a rejected certificate counts for nothing
    (_row("exact:cpsat", Status.OPTIMAL_GIVEN_BOUND, 14.0, 14.0), EXACT, 14, 14, True),
    (_row("bound:hong-kung", Status.OPTIMAL, 16.0, 16.0, proven=True), LOWER, None, 16, False),
    (_row("bound:x-partition", Status.FEASIBLE, 16.25, None), LOWER, None, 17, True),  # an I/O bound rounds up
    (_row("bound:capacity", Status.SKIPPED, None, None), LOWER, None, None, False),
    (_row("algorithm:greedy", Status.VALID, 41.0, proven=True), UPPER, 41, None, False),
    (_row("algorithm:flash-forward", Status.NOT_APPLICABLE, None, proven=True), UPPER, None, None, False),
    (_row("algorithm:square-tiling-forward", Status.INVALID, 9.0), UPPER, None, None, False),
])
def test_a_stored_row_reads_as_its_finding(row, kind, upper, lower, limited):
    found = row.finding()
    assert (found.kind, found.upper, found.lower, found.time_limited, found.game) == \
        (kind, upper, lower, limited, "recompute")


def test_a_method_of_no_kind_is_refused():
    with pytest.raises(ValueError, match="names no kind of result"):
        _row("formula:x", Status.CLOSED_FORM, 3.0).finding()
    with pytest.raises(ValueError, match="kind must be one of"):
        Finding(kind="both", value=1, method="x")


def test_a_formula_proves_only_in_its_games():
    values = {v.name: v for v in evaluate_formulas("attention-forward", {"n": 16, "d": 2}, 4)}
    oneshot = values["segment-forward-lower"]
    assert oneshot.games == ("oneshot",) and oneshot.finding("recompute") is None
    found = oneshot.finding("oneshot")
    assert (found.kind, found.value, found.status, found.game) == (LOWER, int(oneshot.value), Status.CLOSED_FORM,
                                                                   "oneshot")
    assert found.evidence.startswith("theorem: ")
    assert values["sy-lower"].finding("recompute") is None  # a formula with an unknown constant proves nothing


@pytest.mark.slow
def test_the_study_row_and_its_sandwich_agree_on_both_sides():
    """Both read the same findings: the exact solver's bound and schedule, the algorithms' replayed schedules."""
    study = compare(StudySpec("attention-forward", {"n": 2, "d": 1}, Ms=(4, 6), exact=("cpsat",),
                              time_limit=5, bounds=False, variant="recompute"))
    for row in study.rows:
        s = row_sandwich(row)
        assert (s.lower.value, s.upper.value) == (row.lower, row.upper)
        assert all(f.kind == LOWER for f in s.lowers) and all(f.kind == UPPER for f in s.uppers)
        assert all(f.game == "recompute" for f in (*s.lowers, *s.uppers))
        solved = row.exact["cpsat"].finding()
        assert s.time_limited == solved.time_limited == (solved.status != Status.OPTIMAL)
    six = row_sandwich(study.rows[1])
    # recompute optimum 10 at M = 6, the trivial bound 8 (6 inputs, 2 outputs) below it
    assert (six.lower.value, six.lower.method, six.upper.value, six.time_limited) == (10, "exact:cpsat", 10, False)
    assert [f.value for f in six.lowers] == [10, 8]
