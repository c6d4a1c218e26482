"""The claim set ``partial`` kills a mutated constant of the partial game's segment counts, as the tests do.

Each mutation (a count lowered by 10%, a bound ``S h`` instead of
``S (h - 1)``) is applied with monkeypatch; the test-level check and the claim
must both fail, and both hold without it.
"""

import math

import pytest

from spartition.core.game import replay
from spartition.core.partial_greedy import partial_greedy_schedule
from spartition.core.registry import build
from spartition.exact.partial_brute import partial_search
from spartition.families.attention import partial_claims
from spartition.families.attention.backward import partial_bounds as backward_partial
from spartition.families.attention.forward import partial_bounds as forward_partial
from spartition.families.classic import partial_bounds as matmul_partial
from spartition.study.claims import check_claim
from tests.families.attention.test_backward_partial_lower import assert_every_backward_step
from tests.families.attention.test_forward_partial_lower import assert_every_forward_step
from tests.families.attention.test_recompute_claims import bound_s_h
from tests.families.classic.test_matmul_partial_lower import assert_every_step

CACHED = (matmul_partial.matmul_partial_capacity, matmul_partial.matmul_partial_bound,
          forward_partial.forward_partial_capacity, forward_partial.forward_partial_bound,
          backward_partial.backward_partial_bound)


def claim(name):
    (c,) = [c for c in partial_claims.PARTIAL_CLAIMS.claims if c.name == name]
    return c


@pytest.fixture
def fresh(monkeypatch):
    # the counts and the bounds are remembered (lru_cache): a mutation must not see, nor leave, remembered values
    for f in CACHED:
        f.cache_clear()
    yield monkeypatch
    monkeypatch.undo()
    for f in CACHED:
        f.cache_clear()


@pytest.mark.slow
def test_the_claims_hold_unmutated(fresh):
    for c in partial_claims.PARTIAL_CLAIMS.claims:
        report = check_claim(c)
        assert report.verdict == "holds" and report.counts()["informative"] > 0, c.name


def exact(G, M):
    return partial_search(G, M).schedule


def every_segment(family, assert_steps, make, **params):
    """The test-level check: every segment, at every S, of a schedule at M = 4 (``make(G, M)``)."""
    G = build(family, sums="node", **params)
    schedule = make(G, 4)
    for S in range(1, replay(G, schedule).io + 1):
        assert_steps(G, schedule, 4, S)


@pytest.mark.parametrize("module,count,check,make,family,params,names", [
    (matmul_partial, "matmul_partial_capacity", assert_every_step, exact, "matmul", {"a": 2, "b": 2, "c": 2},
     ("segment-matmul-partial-program", "segment-matmul-partial-count")),
    (forward_partial, "forward_partial_capacity", assert_every_forward_step, exact, "attention-forward",
     {"n": 2, "d": 1}, ("segment-forward-partial-program", "segment-forward-partial-count")),
    (backward_partial, "backward_partial_capacity", assert_every_backward_step, partial_greedy_schedule,
     "attention-backward-flash", {"n": 3, "d": 1},
     ("segment-backward-partial-program", "segment-backward-partial-count"))])
def test_a_count_lowered_by_ten_percent_fails_the_test_and_the_claims(fresh, module, count, check, make, family,
                                                                       params, names):
    original = getattr(module, count)
    fresh.setattr(module, count, lambda *args: math.floor(0.9 * original(*args)))
    # a segment of the schedule marks more edges than the lowered count allows
    with pytest.raises(AssertionError):
        every_segment(family, check, make, **params)
    for name in names:
        report = check_claim(claim(name))
        assert report.verdict == "fails" and report.counts()["fails"] > 0, name


@pytest.mark.parametrize("bound,name", [
    (lambda: matmul_partial.matmul_partial_bound(8, 8, 8, 4), "segment-matmul-partial-lower-derivation"),
    (lambda: forward_partial.forward_partial_bound(16, 2, 4), "segment-forward-partial-lower-derivation"),
    (lambda: backward_partial.backward_partial_bound(16, 2, 4), "segment-backward-partial-lower-derivation")])
def test_a_bound_of_s_h_instead_of_s_h_minus_one_fails_the_test_and_the_claim(fresh, bound, name):
    bound_s_h(fresh)
    b = bound()
    assert b.value != b.S * (b.segments - 1)  # the test-level check (test_pinned_bounds_and_their_segment_counts)
    report = check_claim(claim(name))
    assert report.verdict == "fails" and report.counts()["fails"] > 0
