"""The recompute-valid segment bounds under a time limit: a cut search is skipped whole and named, never guessed."""

from spartition.families.attention.forward.recompute_bounds import (
    forward_recompute_bound,
)
from spartition.families.common.segments import SegmentBound, timed_best


def test_a_search_cut_by_its_deadline_is_skipped_and_named():
    calls = []

    def slow(check):
        for _ in range(3):
            check()
            calls.append(1)
        return SegmentBound(99, 1, 1, "slow")

    best = timed_best([("fast", lambda check: SegmentBound(7, 1, 1, "fast")), ("slow", slow)], 0.0)
    assert (best.value, best.weight, best.skipped) == (7, "fast", ("slow: time limit",))
    assert calls == []  # the check runs before the first count: nothing of the cut search is used
    assert timed_best([("slow", slow)], None).value == 99


def test_the_forward_bound_without_time_is_the_untimed_one_and_a_cut_one_is_smaller():
    full = forward_recompute_bound(8, 2, 4)
    assert full.skipped == () and full.value == full.S * (full.segments - 1) == 140 > 4 * 8 * 2  # trivial: 64
    cut = forward_recompute_bound(8, 2, 5, time_limit=0.0)
    assert cut.value == 0 and cut.skipped == ("QK: time limit", "QK+AV: time limit")
    # a cut result is not remembered: the same point without a limit is searched to the end
    again = forward_recompute_bound(8, 2, 5)
    assert again.skipped == () and again.value > 0


def test_a_sandwich_row_whose_formula_search_was_cut_says_so(monkeypatch):
    from spartition.families.attention.forward import recompute_bounds

    from spartition.core.registry import build
    from spartition.study.sandwich import sandwich_row

    monkeypatch.setattr(recompute_bounds, "_FINISHED", {})
    monkeypatch.setattr(recompute_bounds, "RECOMPUTE_SECONDS", 0.0)
    row = sandwich_row(build("attention-forward", n=8, d=2), 5, "recompute", search=False, improve=False)
    assert "formula:segment-forward-recompute-lower: QK: time limit" in row.skipped and row.time_limited
    assert row.lower.method == "trivial"  # the cut searches count for nothing, and the row says why
    monkeypatch.setattr(recompute_bounds, "RECOMPUTE_SECONDS", 60.0)
    row = sandwich_row(build("attention-forward", n=8, d=2), 5, "recompute", search=False, improve=False)
    assert not row.time_limited and row.lower.method == "formula:segment-forward-recompute-lower"
