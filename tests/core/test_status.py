"""The Status enum: a str equal to its name, what is proven, and store rows written as plain names."""

import json
import sqlite3

import pytest

from spartition.status import PROVEN_STATUSES, Status, is_proven
from spartition.study.store import ResultKey, ResultStore, StoredResult


def test_a_status_is_its_name_in_comparisons_json_and_formatting():
    assert Status.OPTIMAL == "OPTIMAL" and "FEASIBLE" == Status.FEASIBLE
    assert json.dumps({"status": Status.OPTIMAL_WITHIN_CAP}) == '{"status": "OPTIMAL_WITHIN_CAP"}'
    assert (f"{Status.INFEASIBLE}", str(Status.VALID), repr(Status.UNKNOWN)) == ("INFEASIBLE", "VALID", "'UNKNOWN'")
    # a dict keyed by names finds the member, and the other way round
    assert {"OPTIMAL": 1}[Status.OPTIMAL] == 1 and {Status.RELAXED: 2}["RELAXED"] == 2
    assert all(s.name == s.value for s in Status)


def test_what_is_proven_is_a_proof_a_closed_form_or_a_checked_replay():
    assert {s for s in Status if s.is_proven()} == {"OPTIMAL", "INFEASIBLE", "VALID", "NOT_APPLICABLE", "CLOSED_FORM"}
    assert PROVEN_STATUSES == {s for s in Status if s.is_proven()}
    # an optimum that rests on a supplied bound, a cap or a horizon is not final
    assert not any(s.is_proven() for s in (Status.OPTIMAL_GIVEN_BOUND, Status.OPTIMAL_WITHIN_CAP,
                                           Status.OPTIMAL_WITHIN_HORIZON, Status.FEASIBLE, Status.RELAXED))
    assert (is_proven("OPTIMAL"), is_proven("FEASIBLE"), is_proven("A_LATER_STATUS")) == (True, False, False)


def test_relaxed_statuses():
    assert [s.relaxed() for s in (Status.OPTIMAL, Status.FEASIBLE, Status.UNKNOWN, Status.INFEASIBLE)] == [
        "RELAXED", "RELAXED_FEASIBLE", "RELAXED_UNKNOWN", "RELAXED_INFEASIBLE"]
    assert Status.RELAXED_UNKNOWN.is_relaxed() and not Status.OPTIMAL.is_relaxed()
    with pytest.raises(ValueError, match="'RELAXED_RELAXED' is not a valid Status"):
        Status.RELAXED.relaxed()


def test_parse_keeps_an_unknown_name():
    assert Status.parse("OPTIMAL") is Status.OPTIMAL
    assert Status.parse("A_LATER_STATUS") == "A_LATER_STATUS" and not isinstance(Status.parse("X"), Status)


def test_rows_written_as_plain_names_load_as_members(tmp_path):
    """A store written before the enum (statuses as TEXT, proven as written) reads back the same."""
    path = tmp_path / "r.sqlite"
    key = ResultKey("h" * 64, 3, "oneshot", "exact:cpsat", {"workers": 1}, "old")
    with ResultStore(path) as st:
        st.put(StoredResult(key, "OPTIMAL", 24.0, 24.0, True, 5.0, 1.0, {"status": "OPTIMAL"}))
    con = sqlite3.connect(path)
    stored = con.execute("SELECT status, typeof(status), proven FROM results").fetchall()
    assert stored == [("OPTIMAL", "text", 1)]
    # rows as an older writer left them: a plain FEASIBLE row wrongly flagged final, a status this version
    # does not know
    cols = "dag_hash, M, variant, method, params, version, status, value, bound, proven, time_limit, wall_s, record, created"
    con.execute(f"INSERT INTO results ({cols}) VALUES ('{'h' * 64}', 4, 'oneshot', 'exact:cpsat', '{{}}', 'old', "
                "'FEASIBLE', 31, 27, 1, 5.0, 1.0, '{}', 0)")
    con.execute(f"INSERT INTO results ({cols}) VALUES ('{'h' * 64}', 5, 'oneshot', 'exact:cpsat', '{{}}', 'old', "
                "'A_LATER_STATUS', 31, 27, 1, 5.0, 1.0, '{}', 0)")
    con.commit()
    con.close()
    with ResultStore(path, readonly=True) as st:
        rows = {r.key.M: r for r in st.rows()}
    assert rows[3].status is Status.OPTIMAL and rows[3].proven and rows[3].record == {"status": "OPTIMAL"}
    assert rows[4].status is Status.FEASIBLE and not rows[4].proven
    assert rows[5].status == "A_LATER_STATUS" and not rows[5].proven
