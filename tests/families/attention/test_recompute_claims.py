"""The claim set ``segments`` kills a mutated constant of the recompute-valid counts, as the tests do.

Each mutation (a count lowered by 10%, a bound ``S h`` instead of ``S (h - 1)``)
is applied with monkeypatch; the test-level check and the claim must both
fail, and both hold without it.
"""

import dataclasses
import math

import pytest
from spartition.families.attention import segment_claims
from spartition.families.attention.backward import (
    recompute_bounds as backward_recompute,
)
from spartition.families.attention.forward import recompute_bounds as forward_recompute
from spartition.families.common import segments

from spartition.study.claims import check_claim


def bound_s_h(monkeypatch) -> None:
    """The mutation: every shared segment bound ``S h`` instead of ``S (h - 1)``."""
    original = segments.shared_bound

    def mutated(*args, **kwargs):
        b = original(*args, **kwargs)
        return dataclasses.replace(b, value=b.S * b.segments)

    monkeypatch.setattr(segments, "shared_bound", mutated)


def claim(name):
    (c,) = [c for c in segment_claims.SEGMENT_CLAIMS.claims if c.name == name]
    return c


@pytest.fixture
def fresh(monkeypatch):
    # the bounds remember finished searches: a mutation must not see, nor leave, remembered values
    monkeypatch.setattr(forward_recompute, "_FINISHED", {})
    monkeypatch.setattr(backward_recompute, "_FINISHED", {})
    return monkeypatch


def test_the_claims_hold_unmutated(fresh):
    for name in ("segment-backward-recompute-program", "segment-backward-recompute-joint-program",
                 "segment-backward-recompute-consumer-program",
                 "segment-forward-recompute-program", "segment-forward-av-program",
                 "segment-backward-recompute-lower-derivation", "segment-forward-av-lower-derivation"):
        assert check_claim(claim(name)).verdict == "holds", name


@pytest.mark.parametrize("module,count,enumerated,name", [
    (backward_recompute, "backward_recompute_capacity", segment_claims.enumerated_backward_count,
     "segment-backward-recompute-program"),
    (backward_recompute, "backward_recompute_joint_capacity", segment_claims.enumerated_backward_joint_count,
     "segment-backward-recompute-joint-program"),
    (backward_recompute, "backward_recompute_consumer_capacity", segment_claims.enumerated_backward_consumer_count,
     "segment-backward-recompute-consumer-program"),
    (forward_recompute, "forward_recompute_capacity", segment_claims.enumerated_forward_count,
     "segment-forward-recompute-program"),
    (forward_recompute, "forward_recompute_av_capacity", segment_claims.enumerated_forward_av_count,
     "segment-forward-av-program")])
def test_a_count_lowered_by_ten_percent_fails_the_test_and_the_claim(fresh, module, count, enumerated, name):
    original = getattr(module, count)
    fresh.setattr(module, count, lambda n, d, T, L: math.floor(0.9 * original(n, d, T, L)))
    # the test-level check (tests/families/*/test_*_recompute_lower.py: the count against its enumerated program)
    assert getattr(module, count)(4, 1, 12, 8) != enumerated(4, 1, 12, 8)
    report = check_claim(claim(name))
    assert report.verdict == "fails" and report.counts()["fails"] > 0


@pytest.mark.parametrize("bound,name", [
    (lambda: backward_recompute.backward_recompute_bound(16, 2, 4), "segment-backward-recompute-lower-derivation"),
    (lambda: forward_recompute.forward_recompute_bound(16, 2, 4), "segment-forward-recompute-lower-derivation"),
    (lambda: forward_recompute.forward_recompute_bound(16, 2, 8, counted="AV"), "segment-forward-av-lower-derivation")])
def test_a_bound_of_s_h_instead_of_s_h_minus_one_fails_the_test_and_the_claim(fresh, bound, name):
    bound_s_h(fresh)
    b = bound()
    assert b.value != b.S * (b.segments - 1)  # the test-level check (test_pinned_bounds)
    report = check_claim(claim(name))
    assert report.verdict == "fails" and report.counts()["fails"] > 0
