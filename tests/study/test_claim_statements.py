"""The explicit statements of the claim sets, evaluated at hand-computed points (no solver: fast).

A claim set's verdicts compare two sides; these tests pin the side that
transcribes the paper (a constant, a count, a weight) to values worked out
here by hand or counted from the DAG, so a transcription slip fails here
even where every verdict would still come out "holds".
"""

import math

import pytest

from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.backward.dag import attention_backward_weights
from spartition.families.attention.claims import LI_CLAIMS, SY_CLAIMS
from spartition.families.approx_attention.claims import CLAIMS as PSZ_CLAIMS
from spartition.partition.weights import node_weights
from spartition.study.claims import ClaimContext


def _claim(claimset, name):
    return next(c for c in claimset.claims if c.name == name)


def _side(claim, side, params, M):
    ctx = ClaimContext(claim.family, params, M, claim.variant, None, dict(claim.settings))
    return getattr(claim, side).evaluate(ctx)


@pytest.mark.parametrize("g, M, w0, lhs", [
    # w0 = g M^(1/(g+1)) / (4e): sqrt(512) / 10.873 = 2.0810, tau(w0) = w0 + 1
    (1, 512, 2.081040, 2.081040 * 3.081040),
    # 2 * 32768^(1/3) / (4e) = 64 / 10.873 = 5.8861, tau(w0) = (w0 + 2)(w0 + 1) / 2
    (2, 32768, 5.886071, 5.886071 * 7.886071 * 6.886071 / 2),
])
def test_thm12_w0_is_the_papers(g, M, w0, lhs):
    claim = _claim(PSZ_CLAIMS, "psz-thm12-w0")
    assert _side(claim, "lhs", {"n": 1, "d": 64, "g": g}, M).lo == pytest.approx(lhs, rel=1e-5)
    assert _side(claim, "rhs", {"n": 1, "d": 64, "g": g}, M).lo == M / 4


@pytest.mark.parametrize("name", ["psz-b1-fraction", "psz-b1-count"])
def test_lemma_b1_delta_is_sqrt3_over_2(name):
    # Lemma B.1's delta = sqrt(3)/2 = 0.866025 (Appendix D.3: 1/(4 delta^2) = 1/3)
    claim = _claim(PSZ_CLAIMS, name)
    # d = 10, g = 2: r = C(12, 2) = 66, delta r = 57.1577; one monomial (the constant) has < 1 variable
    assert _side(claim, "rhs", {"n": 1, "d": 10, "g": 2}, 1).lo == pytest.approx(57.157677, rel=1e-6)
    assert _side(claim, "lhs", {"n": 1, "d": 10, "g": 2}, 1).lo == 1
    # d = 20, g = 4: r = C(24, 4) = 10626, delta r = 9202.39
    assert _side(claim, "rhs", {"n": 1, "d": 20, "g": 4}, 1).lo == pytest.approx(9202.3859, rel=1e-6)
    # fewer than 2 variables: the constant and the 20 variables' pure powers x^1..x^4 -> 1 + 20 * 4 = 81;
    # the fraction's C(20, 1) tau(1) = 20 * C(5, 4) = 100 counts with multiplicity
    assert _side(claim, "lhs", {"n": 1, "d": 20, "g": 4}, 1).lo == (100 if name == "psz-b1-fraction" else 81)


def _derived(W, M):
    """max over X in (M, 12M] of (X - M)(ceil(W / U(X)) - 1), U(X) = 2X + X^(3/2)/2 (Loomis-Whitney)."""
    return max((X - M) * (math.ceil(W / (2 * X + X**1.5 / 2) - 1e-12) - 1) for X in range(M + 1, 12 * M + 1))


@pytest.mark.parametrize("claimset, name, build, selector", [
    (SY_CLAIMS, "sy-qk-lower", attention_forward, "op=mul,tensor=QK"),
    (LI_CLAIMS, "li-la2-lower", attention_backward_weights, "op=mul,tensor=LA2"),
])
@pytest.mark.parametrize("n, d, M, value", [(24, 2, 3, 231), (32, 2, 4, 384)])
def test_derived_lower_bounds_weigh_the_products_of_the_dag(claimset, name, build, selector, n, d, M, value):
    # the weight the derived bound divides is the number of products, counted from the DAG (n^2 d:
    # 1152 and 2048), never a typed-in expression; the bound is then 231 at X = 14 and 384 at X = 20
    claim = _claim(claimset, name)
    W = sum(node_weights(build(n, d), selector).values())
    assert W == n * n * d
    assert _derived(W, M) == value
    assert _side(claim, "rhs", {"n": n, "d": d}, M).lo == value
