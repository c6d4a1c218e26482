"""The claim set ``partial`` kills a mutated constant of the partial game's matrix-product count, as the tests do.

Each mutation (the count lowered by 10%, a bound ``S h`` instead of
``S (h - 1)``) is applied with monkeypatch; the test-level check and the claim
must both fail, and both hold without it.
"""

import dataclasses
import math

import pytest

from spartition.core.registry import build
from spartition.exact.partial_brute import partial_search
from spartition.families.classic import partial_bounds, partial_claims
from spartition.families.common import segments
from spartition.study.claims import check_claim
from tests.families.classic.test_matmul_partial_lower import assert_every_step


def claim(name):
    (c,) = [c for c in partial_claims.PARTIAL_CLAIMS.claims if c.name == name]
    return c


@pytest.fixture
def fresh(monkeypatch):
    # the count and the bound are remembered (lru_cache): a mutation must not see, nor leave, remembered values
    for f in (partial_bounds.matmul_partial_capacity, partial_bounds.matmul_partial_bound):
        f.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    for f in (partial_bounds.matmul_partial_capacity, partial_bounds.matmul_partial_bound):
        f.cache_clear()


def test_the_claims_hold_unmutated(fresh):
    for c in partial_claims.PARTIAL_CLAIMS.claims:
        report = check_claim(c)
        assert report.verdict == "holds" and report.counts()["informative"] > 0, c.name


def test_a_count_lowered_by_ten_percent_fails_the_test_and_the_claims(fresh):
    original = partial_bounds.matmul_partial_capacity
    fresh.setattr(partial_bounds, "matmul_partial_capacity",
                  lambda a, b, c, T, L: math.floor(0.9 * original(a, b, c, T, L)))
    # the test-level check: a segment of an exact optimum marks more edges than the lowered count allows
    G = build("matmul", a=2, b=2, c=2, sums="node")
    schedule = partial_search(G, 4).schedule
    with pytest.raises(AssertionError):
        for S in range(1, 15):
            assert_every_step(G, schedule, 4, S)
    for name in ("segment-matmul-partial-program", "segment-matmul-partial-count"):
        report = check_claim(claim(name))
        assert report.verdict == "fails" and report.counts()["fails"] > 0, name


def test_a_bound_of_s_h_instead_of_s_h_minus_one_fails_the_test_and_the_claim(fresh):
    original = segments.shared_bound

    def mutated(*args, **kwargs):
        b = original(*args, **kwargs)
        return dataclasses.replace(b, value=b.S * b.segments)

    fresh.setattr(segments, "shared_bound", mutated)
    b = partial_bounds.matmul_partial_bound(8, 8, 8, 4)
    assert b.value != b.S * (b.segments - 1)  # the test-level check (test_pinned_bounds_and_their_segment_counts)
    report = check_claim(claim("segment-matmul-partial-lower-derivation"))
    assert report.verdict == "fails" and report.counts()["fails"] > 0
