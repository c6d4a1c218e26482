"""The bound registry: every formula evaluates on a grid, crossovers, regimes, explicit constants, CLI."""

from __future__ import annotations

import itertools
import json
import math

import pytest

from spartition.families.approx_attention.dag import approx_attention
from spartition.families.attention.forward.dag import attention_forward, paper_params
from spartition.families.attention.backward.dag import attention_backward_flash, attention_backward_weights
from spartition import cli
from spartition.core.registry import FORMULAS as FORMULA_REGISTRY
from spartition.errors import UnknownFamily
from spartition.partition.certificate import min_dominator, minimum_set
from spartition.families.approx_attention.dag import tau
from spartition.families.approx_attention.formulas import approx_case, binom, kl32_width, restricted_columns
from spartition.families.common.papers import SOURCES
from spartition.study.formulas import (
    all_formulas,
    evaluate_formula,
    evaluate_formulas,
    formula_families,
    formula_named,
    formulas_for,
    paper_params_for,
)

FORMULAS = all_formulas()
#: The families with formulas that spartition itself registers, and their formulas.
BUILTIN_FAMILIES = [f for f in formula_families() if FORMULA_REGISTRY.package(f) == "spartition"]
BUILTIN_FORMULAS = [f for f in FORMULAS if set(f.families) & set(BUILTIN_FAMILIES)]

EXACT = ["attention-forward", "attention-backward-weights", "attention-backward-flash"]
MS = [1, 2, 3, 4, 7, 16, 50, 64, 100, 256, 1000, 4096, 10**5]


def _by_name(family, params, M):
    return {v.name: v for v in evaluate_formulas(family, params, M)}


def _named(family, params, M, names):
    """Only the named formulas (the segment counts' searches cost seconds at n d >= 512)."""
    paper = paper_params_for(family, params)
    return {name: evaluate_formula(formula_named(name), paper, M, family) for name in names}


# ---------------------------------------------------------------- registry shape


def test_every_formula_is_tagged():
    """The project's own formulas (another installed package may register others, with its own tags)."""
    names = [f.name for f in FORMULAS]
    assert len(names) == len(set(names))
    for f in BUILTIN_FORMULAS:
        assert f.kind in ("lower", "upper")
        assert f.constants in ("explicit", "asymptotic")
        assert f.source in SOURCES and f.where and f.regime and f.expression
        json.dumps(f.to_dict())
    assert set(BUILTIN_FAMILIES) == set(EXACT) | {"approx-attention", "fft", "matmul"}


def test_papers_are_all_covered():
    by_source = {s: [f.name for f in BUILTIN_FORMULAS if f.source == s] for s in SOURCES}
    assert all(by_source.values())
    approx = {f.where.split(",")[0] for f in formulas_for("approx-attention")}
    for stated in ("Theorem 1.1", "Theorem 1.2", "Key Lemma 3.2 upper bound (O)", "Theorem 1.3", "Lemma 3.1",
                   "Lemma 3.3", "Theorem 1.4"):
        assert any(w.startswith(stated) for w in approx), stated
    kinds = {(f.name.split("-")[1], f.kind) for f in formulas_for("approx-attention") if f.name.startswith("psz-thm1")}
    assert kinds == {(t, k) for t in ("thm11", "thm12", "thm13", "thm14") for k in ("lower", "upper")}


def test_unknown_family():
    with pytest.raises(UnknownFamily, match="chain"):
        formulas_for("chain")
    # g falls back to the approx-attention builder's default (2): r = C(2 + 2, 2) = 6
    assert paper_params_for("approx-attention", {"n": 4, "d": 2})["r"] == 6


# ---------------------------------------------------------------- grid


GRID_SIZES = [(n, d) for n in (1, 2, 8) for d in (1, 2)] + [(2, 16)]


@pytest.mark.parametrize("family", [
    # the forward and backward counts are searches of their own: 10 s and 30 s on this grid
    pytest.param(EXACT[0], marks=pytest.mark.slow),
    EXACT[1],
    pytest.param(EXACT[2], marks=pytest.mark.slow),
])
def test_exact_families_evaluate_on_a_grid(family):
    _evaluate_grid(family, GRID_SIZES)


#: the wide grid's memories: the least, one where the segment counts search (M < n d), and two above n d; the
#: counts' searches cost up to a minute per M at n d >= 128, and every M of MS made this test 6 minutes a family
WIDE_MS = [1, 3, 64, 4096, 10**5]


@pytest.mark.slow
@pytest.mark.parametrize("family", EXACT)
def test_exact_families_evaluate_on_the_wide_grid(family):
    # n d >= 128: the segment counts' searches at M up to n d take seconds to minutes
    _evaluate_grid(family, [(8, 16), (64, 1), (64, 2), (64, 16)], WIDE_MS)


def _evaluate_grid(family, sizes, Ms=MS):
    for (n, d), mask, M in itertools.product(sizes, ["none", "causal", "random"], Ms):
        for v in evaluate_formulas(family, {"n": n, "d": d, "mask": mask}, M):
            assert v.value >= 0 or math.isnan(v.value)
            if v.applies:
                assert math.isfinite(v.value)
            json.dumps(v.to_dict())


def test_approx_family_evaluates_on_a_grid():
    seen = set()
    for n, d, g, M in itertools.product([1, 16, 1000], [1, 2, 5, 12, 30], [1, 2, 3, 6], MS):
        p = paper_params_for("approx-attention", {"n": n, "d": d, "g": g})
        seen.add(approx_case(p, M))
        for v in evaluate_formulas("approx-attention", {"n": n, "d": d, "g": g}, M):
            assert v.value >= 0 or math.isnan(v.value)
            if v.applies:
                assert math.isfinite(v.value)
            json.dumps(v.to_dict())
    assert seen == {"I", "II", "III", "IV"}


# ---------------------------------------------------------------- crossovers


@pytest.mark.parametrize("n,d", [(16, 4), (64, 8), (100, 3)])
def test_forward_bounds_meet_at_M_equals_d2(n, d):
    names = ("sy-flash-upper", "sy-tiling-upper", "sy-lower")
    at = _named("attention-forward", {"n": n, "d": d}, d * d, names)
    assert at["sy-flash-upper"].value == pytest.approx(at["sy-tiling-upper"].value) == pytest.approx(n * n)
    assert at["sy-lower"].value == pytest.approx(n * n)
    below = _named("attention-forward", {"n": n, "d": d}, d * d - 1, names)
    above = _named("attention-forward", {"n": n, "d": d}, d * d + 1, names)
    assert below["sy-lower"].value == pytest.approx(below["sy-tiling-upper"].value)
    assert above["sy-lower"].value == pytest.approx(above["sy-flash-upper"].value)
    assert below["sy-tiling-upper"].applies and not above["sy-tiling-upper"].applies
    assert above["sy-flash-upper"].applies


@pytest.mark.parametrize("n,d", [(16, 4), (64, 8), (9, 3)])
def test_backward_bounds_meet_at_M_equals_d2(n, d):
    at = _by_name("attention-backward-weights", {"n": n, "d": d}, d * d)
    assert at["li-flash-upper"].value == pytest.approx(at["li-alg6-upper"].value) == pytest.approx(n * n + n * d)
    assert at["li-lower"].value == pytest.approx(n * n + n * d)
    below = _by_name("attention-backward-weights", {"n": n, "d": d}, d * d - 1)
    assert below["li-alg6-upper"].applies and below["li-lower"].value == pytest.approx(below["li-alg6-upper"].value)
    assert not at["li-alg6-upper"].applies


@pytest.mark.parametrize("family", EXACT)
@pytest.mark.parametrize("mask", ["none", "causal", "window"])
def test_sparse_bound_terms_meet_at_Zinput2_over_ZQK(family, mask):
    params = {"n": 12, "d": 3, "mask": mask, "window": 2}
    p = paper_params_for(family, params)
    zi, zq = p["Z_input"], p["Z_QK"]
    M = zi * zi / zq
    f = next(f for f in formulas_for(family) if f.name == "li-sparse-lower")
    assert zi * zi / M == pytest.approx(zq)
    assert zi * math.sqrt(zq) / math.sqrt(M) == pytest.approx(zq)
    assert evaluate_formula(f, p, math.floor(M)).value == pytest.approx(zi * math.sqrt(zq) / math.sqrt(math.floor(M)))
    assert evaluate_formula(f, p, math.ceil(M) + 1).value == pytest.approx(zi * zi / (math.ceil(M) + 1))


def test_dense_bounds_do_not_apply_to_masked_dags():
    v = _by_name("attention-forward", {"n": 8, "d": 2, "mask": "causal"}, 4)
    assert not v["sy-lower"].applies and not v["sy-flash-upper"].applies
    assert v["li-sparse-lower"].applies and v["trivial-forward"].applies


def test_flash_upper_regime_is_d_to_nd():
    n, d = 8, 4
    assert [_named("attention-forward", {"n": n, "d": d}, M, ["sy-flash-upper"])["sy-flash-upper"].applies
            for M in (3, 4, 32, 33)] == [
        False, True, True, False]


def test_approx_case_boundaries():
    p = paper_params_for("approx-attention", {"n": 100, "d": 20, "g": 1})
    assert p["r"] == 21
    t = (4 * math.e) ** 2  # 118.2...
    assert approx_case(p, 420) == "I" and approx_case(p, 419) == "II"
    assert approx_case(p, math.ceil(t)) == "II" and approx_case(p, math.floor(t)) == "III"
    assert approx_case(p, 2) == "III" and approx_case(p, 1) == "IV"


def test_case_I_II_crossover_of_lemma31_and_thm11():
    """At M = d r the generic bound n r d^2 / M equals Theorem 1.1's n d."""
    p = paper_params_for("approx-attention", {"n": 50, "d": 10, "g": 2})
    M = p["d"] * p["r"]
    assert p["n"] * p["r"] * p["d"] ** 2 / M == p["n"] * p["d"]
    at = _by_name("approx-attention", {"n": 50, "d": 10, "g": 2}, M)
    assert at["psz-thm11-upper"].applies and at["psz-thm11-upper"].value == 500
    before = _by_name("approx-attention", {"n": 50, "d": 10, "g": 2}, M - 1)
    assert before["psz-lem31-upper"].applies and not before["psz-thm11-upper"].applies
    assert before["psz-lem31-upper"].value == pytest.approx(p["n"] * p["r"] * p["d"] ** 2 / (M - 1))


def test_lemma31_terms_meet_at_d2():
    p = {"n": 7, "d": 30, "g": 3, "r": math.comb(33, 3)}
    f = next(f for f in formulas_for("approx-attention") if f.name == "psz-lem31-upper")
    v = evaluate_formula(f, p, 900).value
    # n r d^2 / M and n r d / sqrt(M) both equal n r at M = d^2
    assert v == pytest.approx(p["n"] * p["r"] * 30**2 / 900) == pytest.approx(p["n"] * p["r"] * 30 / math.sqrt(900))
    assert evaluate_formula(f, p, 899).value == pytest.approx(p["n"] * p["r"] * 30 / math.sqrt(899))
    assert evaluate_formula(f, p, 901).value == pytest.approx(p["n"] * p["r"] * 900 / 901)


def test_thm12_regime_starts_where_w0_reaches_g():
    # Theorem 1.2 needs w0 = g M^(1/(g+1)) / (4e) >= g, i.e. M >= (4e)^(g+1): 118.22, 1285.47, 13977.13
    # for g = 1, 2, 3, so Case II starts at M = 119, 1286, 13978 (d large enough that M < d r).
    for g, d, first in ((1, 200, 119), (2, 60, 1286), (3, 40, 13978)):
        q = {"n": 10**6, "d": d, "g": g}
        p = paper_params_for("approx-attention", q)
        assert first < d * p["r"]
        assert approx_case(p, first) == "II" and approx_case(p, first - 1) == "III"
        at, before = _by_name("approx-attention", q, first), _by_name("approx-attention", q, first - 1)
        assert at["psz-thm12-upper"].applies and at["psz-thm12-lower"].applies
        assert not before["psz-thm12-upper"].applies and not before["psz-thm12-lower"].applies


def test_thm12_values_by_hand():
    # n = 1000, d = 40, g = 2 (r = C(42, 2) = 861), M = 5000 (Case II: (4e)^3 = 1285.5 <= M < d r = 34440).
    # M^(g/(g+1)) = 5000^(2/3) = (2 * 625^(1/3))^2 = 17.09976^2 = 292.4018; (4 e^2)^2 = 16 e^4 = 873.5704.
    q = {"n": 1000, "d": 40, "g": 2}
    assert paper_params_for("approx-attention", q)["r"] == 861
    v = _by_name("approx-attention", q, 5000)
    assert v["psz-thm12-lower"].applies and v["psz-thm12-upper"].applies
    # lower n r d g / M^(2/3) = 68,880,000 / 292.4018
    assert v["psz-thm12-lower"].value == pytest.approx(235566.29, rel=1e-6)
    # upper n r d (4e^2)^g / M^(2/3) = 34,440,000 * 873.5704 / 292.4018 ((4e)^g would give 13,924,900)
    assert v["psz-thm12-upper"].value == pytest.approx(102891867.6, rel=1e-6)
    # their ratio is (4 e^2)^g / g whatever n, r, d
    assert v["psz-thm12-upper"].value / v["psz-thm12-lower"].value == pytest.approx(16 * math.e**4 / 2)


def test_thm14_values_by_hand():
    # Theorem 1.4 (Case IV, M <= g^2): n = 100, d = 10, g = 2 (r = C(12, 2) = 66 < n, d >= 5g), M = 4:
    # both bounds are n r d / sqrt(M) = 100 * 66 * 10 / 2 = 33000 (not n r d / M = 16500, not n r / sqrt(M) = 3300)
    q = {"n": 100, "d": 10, "g": 2}
    p = paper_params_for("approx-attention", q)
    assert p["r"] == 66 and approx_case(p, 4) == "IV"
    v = _by_name("approx-attention", q, 4)
    assert v["psz-thm14-lower"].applies and v["psz-thm14-lower"].value == pytest.approx(33000)
    assert v["psz-thm14-upper"].applies and v["psz-thm14-upper"].value == pytest.approx(33000)


def test_thm13_lower_keeps_the_factor_g():
    # Theorem 1.3's Omega(n r d g / M): n = 100, d = 10, g = 2 (r = 66 < n, d >= 5g), M = 50 (Case III:
    # g^2 = 4 < M < (4e)^3 = 1285.5 and M < d r = 660): 100 * 66 * 10 * 2 / 50 = 2640.
    q = {"n": 100, "d": 10, "g": 2}
    p = paper_params_for("approx-attention", q)
    assert p["r"] == 66 and approx_case(p, 50) == "III"
    v = _by_name("approx-attention", q, 50)["psz-thm13-lower"]
    assert v.applies and v.value == pytest.approx(2640)


# ---------------------------------------------------------------- explicit constants


def test_tau_closed_form_lemma_D1():
    for w, g in itertools.product(range(1, 7), range(0, 6)):
        assert tau(w, g) == sum(math.comb(w + k - 1, k) for k in range(g + 1))


def _monomials(d, g):
    """All multi-indices a over d variables with |a| <= g (brute force)."""
    return [a for a in itertools.product(range(g + 1), repeat=d) if sum(a) <= g]


def test_restricted_columns_by_enumeration():
    for d, g in itertools.product(range(1, 6), range(1, 6)):
        mons = _monomials(d, g)
        assert len(mons) == tau(d, g)
        assert restricted_columns(d, g) == sum(1 for a in mons if sum(x > 0 for x in a) >= g / 2 and any(a))


def test_kl32_width_by_hand():
    assert kl32_width(10, 1, 100) == 4  # 4 * 4 * 5 = 80 <= 100 < 4 * 5 * 6
    assert kl32_width(10, 2, 48) == 2 and kl32_width(10, 2, 47) is None
    assert kl32_width(3, 1, 10**6) == 3  # capped at d


def test_kl32_partition_lower_by_hand():
    # n = 1000, d = 4, g = 1: r = 5, w = 2 at M = 40; U = 160 + 3200 + 400 = 3760; weight 1000 * 4 * 4.
    v = _by_name("approx-attention", {"n": 1000, "d": 4, "g": 1}, 40)["psz-kl32-partition-lower"]
    assert v.capacity == 3760
    assert v.value == 40 * (math.ceil(16000 / 3760) - 1) == 160
    assert v.applies and v.constants == "explicit"
    up = _by_name("approx-attention", {"n": 1000, "d": 4, "g": 1}, 40)["psz-kl32-upper"]
    assert up.value == 1000 * 4 * math.comb(2, 1)  # groups of size 2: ceil(4 / 2) = 2 groups, C(2, 1) tiles


def test_thm13_thm14_partition_lower_by_hand():
    n, d, g, M = 100, 10, 2, 16
    rp = restricted_columns(d, g)  # s >= 1: 10 * 2 + 45 * 1 = 65
    assert rp == 65
    rows = _by_name("approx-attention", {"n": n, "d": d, "g": g}, M)
    U3 = 4 * 16 + 8 * 256 / 2 + 2 * 16
    assert rows["psz-thm13-partition-lower"].capacity == U3
    assert rows["psz-thm13-partition-lower"].value == M * (math.ceil(n * rp * d / U3) - 1)
    U4 = 4 * 16 + 8 * 256 / 2 + 6 * 16 * 4
    assert rows["psz-thm14-partition-lower"].capacity == U4
    assert rows["psz-thm14-partition-lower"].value == M * (math.ceil(n * rp * d / U4) - 1)


def test_kl32_upper_is_the_papers_expression_in_case_ii():
    # d = 10, g = 2, M = 120: w = 3 (4 * 3 * 10 <= 120 < 4 * 4 * 15). The paper writes C(dg/w, g)
    # with dg/w = 20/3 groups; the realised tiling has groups of floor(3/2) = 1 variable, C(10, 2) tiles.
    rows = _by_name("approx-attention", {"n": 10, "d": 10, "g": 2}, 120)
    assert rows["psz-kl32-upper"].value == pytest.approx(10 * 10 * (20 / 3) * (17 / 3) / 2)  # 1888.9
    assert rows["psz-kl32-tiling-upper"].value == 10 * 10 * math.comb(10, 2) == 4500
    # M = 120 < (4e)^3 is Case III: the lemma's statement does not apply there, its construction does
    assert approx_case(paper_params_for("approx-attention", {"n": 10, "d": 10, "g": 2}), 120) == "III"
    assert not rows["psz-kl32-upper"].applies and rows["psz-kl32-tiling-upper"].applies
    # Case II (d = 20, g = 2, M = 2000 in [(4e)^3, d r = 4620)): w = 9 (9 * 55 * 4 <= 2000 < 10 * 66 * 4)
    rows = _by_name("approx-attention", {"n": 10, "d": 20, "g": 2}, 2000)
    assert rows["psz-kl32-upper"].applies and rows["psz-kl32-tiling-upper"].applies
    assert rows["psz-kl32-upper"].value == pytest.approx(10 * 20 * (40 / 9) * (31 / 9) / 2)  # 1530.9
    assert rows["psz-kl32-tiling-upper"].value == 10 * 20 * math.comb(5, 2) == 2000  # groups of 4: 5 groups


def test_binom_is_the_generalised_coefficient():
    assert [binom(x, k) for x, k in ((10, 2), (5, 0), (3, 4))] == [45, 1, 0]
    assert binom(2.4, 1) == pytest.approx(2.4) and binom(20 / 3, 2) == pytest.approx(170 / 9)


def test_partition_counts_fail_below_n_gt_r_and_are_outside_their_regime():
    # n = 1, d = 4, g = 4, M = 6 (r = 70): the whole DAG is one valid 2M-class -- its smallest dominator
    # is the 12 inputs and its minimum set the 4 outputs -- holding every restricted product.
    n, d, g, M = 1, 4, 4, 6
    G = approx_attention(n, d, g)
    assert G.number_of_nodes() == 982
    assert len(min_dominator(G, list(G))) == 12 == 2 * M and len(minimum_set(G, list(G))) == 4
    restricted = [v for v in G if v.startswith("P_") and len(G.nodes["U1_0_" + v.split("_")[-1]]["args"]) >= g / 2]
    assert len(restricted) == n * restricted_columns(d, g) * d == 212
    rows = _by_name("approx-attention", {"n": n, "d": d, "g": g}, M)
    U3, U4 = rows["psz-thm13-partition-lower"].capacity, rows["psz-thm14-partition-lower"].capacity
    assert U3 == 4 * 6 + 8 * 36 / 4 + 4 * 6 == 120
    assert U4 == pytest.approx(4 * 6 + 8 * 36 / 4 + 6 * 6 * math.sqrt(6)) and math.floor(U4) == 184
    assert 212 > U4 > U3  # the per-class counts of B.3 and C are false here...
    assert not rows["psz-thm13-partition-lower"].applies and not rows["psz-thm14-partition-lower"].applies
    # ... and hold their regime only from n = r + 1 on
    assert _by_name("approx-attention", {"n": 71, "d": d, "g": g}, M)["psz-thm13-partition-lower"].applies
    assert not _by_name("approx-attention", {"n": 70, "d": d, "g": g}, M)["psz-thm13-partition-lower"].applies
    # Key Lemma 3.2 (Appendix A.2) at n = 1, d = 22, g = 2, M = 48 (w = 2, r = 276): 6050 products in one 96-class
    n, d, g, M = 1, 22, 2, 48
    G = approx_attention(n, d, g)
    assert len(min_dominator(G, list(G))) == 3 * n * d == 66 and len(minimum_set(G, list(G))) == 22
    assert sum(1 for v in G if v.startswith("P_")) == n * (math.comb(d + g, g) - 1) * d == 6050
    v = _by_name("approx-attention", {"n": n, "d": d, "g": g}, M)["psz-kl32-partition-lower"]
    assert v.capacity == 4 * 48 + 4 * 48**2 / 2 + 48**2 / 4 == 5376 < 6050
    assert not v.applies


def test_lower_bounds_of_the_partition_proofs_need_n_gt_r():
    # every PSZ bound resting on A.2, B.3 or C states n > r in its regime, and drops out at n = r
    proofs = ("psz-kl32-lower", "psz-kl32-partition-lower", "psz-thm12-lower", "psz-thm13-lower",
              "psz-thm13-partition-lower", "psz-thm14-lower", "psz-thm14-partition-lower")
    by = {f.name: f for f in FORMULAS}
    for name in proofs:
        assert "n > r" in by[name].regime, name
    # instances inside each statement's regime with n = r + 1, and the same at n = r
    cases = {"psz-kl32-lower": (12, 1, 120), "psz-kl32-partition-lower": (12, 1, 120), "psz-thm12-lower": (12, 1, 120),
             "psz-thm13-lower": (10, 2, 50), "psz-thm13-partition-lower": (10, 2, 50),
             "psz-thm14-lower": (10, 2, 4), "psz-thm14-partition-lower": (10, 2, 4)}
    for name, (d, g, M) in cases.items():
        r = math.comb(d + g, g)
        assert evaluate_formula(by[name], paper_params_for("approx-attention", {"n": r + 1, "d": d, "g": g}), M).applies, name
        assert not evaluate_formula(by[name], paper_params_for("approx-attention", {"n": r, "d": d, "g": g}), M).applies, name


def test_lemma33_step_is_only_asymptotic():
    # Appendix B.2's step C(d, g) <= 4 r g / M fails at d = 3, g = 2, M = 29 (r = 10): 3 > 80/29,
    # and so does the bound 8 n r d g / M it would give, at a point of the formula's regime.
    n, d, g, M = 100, 3, 2, 29
    v = _by_name("approx-attention", {"n": n, "d": d, "g": g}, M)["psz-lem33-upper"]
    assert v.applies and math.comb(d, g) > 4 * 10 * g / M
    assert v.value == pytest.approx(n * d * (3 + 80 / 29)) and v.value > 8 * n * 10 * d * g / M
    f = next(f for f in FORMULAS if f.name == "psz-lem33-upper")
    assert f.constants == "asymptotic" and "asymptotic" in dict(f.detail)["step"] and "M = 29" in f.regime


def test_kl32_w_missing_gives_nan_and_does_not_apply():
    v = _by_name("approx-attention", {"n": 10, "d": 4, "g": 3}, 8)["psz-kl32-partition-lower"]
    assert math.isnan(v.value) and not v.applies and v.to_dict()["value"] is None


def test_detail_records_proof_constants():
    by = {f.name: dict(f.detail) for f in FORMULAS}
    assert by["sy-tiling-upper"]["tile_side"] == "floor(sqrt(M / 4))"
    assert by["sy-flash-upper"]["block_cols"] == "B_c = ceil(M / (4 d))"
    assert "4M^2/w" in by["psz-kl32-partition-lower"]["capacity"]


# ---------------------------------------------------------------- paper parameters


@pytest.mark.parametrize("mask", ["none", "causal", "window", "block", "random"])
def test_paper_params_for_matches_built_dags(mask):
    params = {"n": 5, "d": 3, "mask": mask, "density": 0.3, "seed": 2}
    for family, builder in [("attention-forward", attention_forward),
                            ("attention-backward-flash", attention_backward_flash),
                            ("attention-backward-weights", attention_backward_weights)]:
        assert paper_params_for(family, params) == paper_params(builder(**params))


def test_overrides():
    p = paper_params_for("attention-forward", {"n": 4, "d": 2, "Z_QK": 7})
    assert p["Z_QK"] == 7


# ---------------------------------------------------------------- CLI


def test_cli_text_and_json(capsys):
    # M = n d: the segment counts still evaluated, in 2 s (at M = 16 their search takes 9 s)
    assert cli.main(["formulas", "attention-forward", "n=16", "d=4", "--M", "64"]) == 0
    out = capsys.readouterr().out
    assert "sy-flash-upper" in out and "constant unknown" in out and "trivial-forward" in out
    assert cli.main(["formulas", "attention-forward", "n=16", "d=4", "mask=causal", "--M", "16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["paper_params"]["Z_QK"] == 136
    rows = {r["name"]: r for r in data["formulas"]}
    assert rows["trivial-forward"]["value"] == 256 and rows["trivial-forward"]["constants"] == "explicit"
    assert rows["sy-lower"]["applies"] is False


@pytest.mark.slow
def test_cli_every_family_on_a_grid(capsys):
    for family, extra in [("attention-forward", []), ("attention-backward-weights", ["mask=window"]),
                          ("attention-backward-flash", ["mask=random", "density=0.2"]), ("approx-attention", ["g=2"])]:
        # M = 120 = n d: the last M of the segment counts' regime (at M = 100 their search takes 23 s)
        for M in (1, 9, 120, 10**4):
            assert cli.main(["formulas", family, "n=20", "d=6", *extra, "--M", str(M), "--json"]) == 0
            data = json.loads(capsys.readouterr().out)
            assert len(data["formulas"]) == len(formulas_for(family))


def test_cli_errors(capsys):
    assert cli.main(["formulas", "nope", "n=2", "--M", "4"]) == 2
    assert cli.main(["formulas", "attention-forward", "n=2", "q=1", "--M", "4"]) == 2
    assert cli.main(["formulas", "attention-forward", "n=2", "--M", "0"]) == 2


@pytest.mark.parametrize("family, build, name", [
    ("approx-attention", lambda n, d: approx_attention(n, d, 2), "trivial-approx"),
    ("attention-forward", attention_forward, "trivial-forward"),
    ("attention-backward-weights", attention_backward_weights, "trivial-backward-weights"),
    ("attention-backward-flash", attention_backward_flash, "trivial-backward-flash"),
])
def test_trivial_bounds_count_the_dags_inputs_and_outputs(family, build, name):
    # every input is loaded and every output stored: the count of sources and sinks of the DAG
    for n, d in ((1, 1), (3, 2), (4, 3)):
        G = build(n, d)
        params = {"n": n, "d": d, "g": 2} if family == "approx-attention" else {"n": n, "d": d}
        v = _by_name(family, params, 16)[name]
        assert v.applies and v.value == sum(1 for u in G if G.in_degree(u) == 0 or G.out_degree(u) == 0), (n, d)


def test_kl32_bounds_by_hand():
    # n = 16, d = 12, g = 1 (r = 13 < n), M = 120: Case II ((4e)^2 = 118.2 <= M < d r = 156);
    # w = 5, the largest with 4 w tau(w) = 4 w (w + 1) <= 120
    v = _by_name("approx-attention", {"n": 16, "d": 12, "g": 1}, 120)
    assert v["psz-kl32-lower"].applies and v["psz-kl32-upper"].applies
    assert v["psz-kl32-lower"].value == pytest.approx(16 * 13 * 12 * 5 / 120) == pytest.approx(104)  # n r d w / M
    assert v["psz-kl32-upper"].value == pytest.approx(16 * 12 * 2.4)  # n d C(dg/w, g) = n d (12/5)


# ---------------------------------------------------------------- the classic kernels (Hong & Kung)


def test_classic_trivial_bounds_count_the_dags_inputs_and_outputs():
    from spartition.core.bounds import trivial_lower_bound
    from spartition.families.classic.dag import fft, matmul

    for k in (1, 2, 4):
        v = _by_name("fft", {"k": k}, 8)["trivial-fft"]
        assert v.applies and v.value == trivial_lower_bound(fft(k)) == 2 * 2**k
    for a, b, c in ((1, 1, 1), (2, 3, 4), (3, 2, 1)):
        v = _by_name("matmul", {"a": a, "b": b, "c": c}, 8)["trivial-matmul"]
        assert v.applies and v.value == trivial_lower_bound(matmul(a, b, c)) == a * b + b * c + a * c


def test_classic_shapes_by_hand_and_their_regimes():
    # N log2 N / log2 M at N = 16, M = 4: 16 * 4 / 2 = 32; a b c / sqrt(M) at 2 x 3 x 8, M = 9: 48 / 3 = 16
    fft16 = _by_name("fft", {"k": 4}, 4)
    assert fft16["hk-fft-lower"].value == fft16["hk-fft-upper"].value == 32.0
    assert fft16["hk-fft-lower"].constants == "asymptotic" and fft16["hk-fft-lower"].applies
    assert not _by_name("fft", {"k": 4}, 17)["hk-fft-upper"].applies  # above N one pass suffices
    assert math.isnan(_by_name("fft", {"k": 4}, 1)["hk-fft-lower"].value)
    mm = _by_name("matmul", {"a": 2, "b": 3, "c": 8}, 9)
    assert mm["hk-matmul-lower"].value == mm["hk-matmul-upper"].value == 16.0 and mm["hk-matmul-upper"].applies
    assert not _by_name("matmul", {"a": 2, "b": 3, "c": 8}, 6 + 24 + 16 + 1)["hk-matmul-upper"].applies


def test_cli_formulas_of_fft_and_matmul(capsys):
    assert cli.main(["formulas", "fft", "k=3", "--M", "4", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["formulas"]}
    assert set(rows) == {"hk-fft-lower", "hk-fft-upper", "trivial-fft"} and rows["trivial-fft"]["value"] == 16


def test_each_value_names_the_games_its_formula_is_proven_for(capsys):
    values = {v.name: v for v in evaluate_formulas("matmul", {"a": 8, "b": 8, "c": 8}, 4)}
    assert values["segment-matmul-lower"].games == ("oneshot", "recompute")
    assert values["segment-matmul-partial-lower"].to_dict()["games"] == ["partial"]
    assert cli.main(["formulas", "matmul", "a=8", "b=8", "c=8", "--M", "4"]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("segment-matmul-partial-lower")]
    assert row.split()[1:6] == ["lower", "378", "yes", "explicit", "partial"]
