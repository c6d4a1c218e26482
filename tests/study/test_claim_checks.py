"""What makes ``spartition claims`` see a transcription slip: counted weights, proof steps, tile sizes, --strict.

Each test pins a check to values worked out by hand (or counted here), then
shows that the slip the check exists for makes it fail; no solver runs.
"""

import math

import pytest

from spartition.cli.main import main
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.attention.claims import LI_CLAIMS, SY_CLAIMS
from spartition.families.approx_attention.claims import CLAIMS as PSZ_CLAIMS
from spartition.study.claims import Claim, ClaimContext, check_claim, expr, replace_rhs
from spartition.study.claimsets import ClaimSet, ClaimSetReport, set_problems


def _claim(claimset, name):
    return next(c for c in claimset.claims if c.name == name)


def _side(claim, side, params, M):
    ctx = ClaimContext(claim.family, params, M, claim.variant, None, dict(claim.settings))
    return getattr(claim, side).evaluate(ctx)


@pytest.mark.parametrize("claimset, name, n, d, counted", [
    (SY_CLAIMS, "sy-qk-weight", 24, 2, 24 * 24 * 2),
    (LI_CLAIMS, "li-la2-weight", 24, 2, 24 * 24 * 2),
])
def test_the_papers_weight_is_checked_against_the_dag(claimset, name, n, d, counted):
    claim = _claim(claimset, name)
    assert _side(claim, "lhs", {"n": n, "d": d}, 3).lo == counted  # n^2 d products, counted on the DAG
    assert check_claim(claim).verdict == "holds"
    # the slip: the QK^T weight n^2 d typed as n^2 d^2 no longer confirms itself
    wrong = replace_rhs(claim, expr(lambda p, M: p["n"] ** 2 * p["d"] ** 2, "n^2 d^2"))
    assert check_claim(wrong).verdict == "fails"


def test_the_derived_bound_divides_the_counted_weight():
    # sy-qk-lower at n = 24, d = 2, M = 3: W = 1152 products, X = 14, U = 28 + 14^1.5 / 2 = 54.19,
    # (14 - 3)(ceil(1152 / 54.19) - 1) = 11 * 21 = 231, whatever the typed-in count says
    claim = _claim(SY_CLAIMS, "sy-qk-lower")
    assert sum(1 for v, a in attention_forward(24, 2).nodes(data=True)
               if a.get("op") == "mul" and (a.get("entry") or ("",))[0] == "QK") == 1152
    assert _side(claim, "rhs", {"n": 24, "d": 2}, 3).lo == 231


@pytest.mark.parametrize("name, d, M, expected", [
    # B_c = ceil(45 / 8) = 6 fits (2 * 6 * 2 + 2 * 5 + 3 = 37 <= 45); floor would be 5
    ("sy-flash-block", 2, 45, 6),
    # ceil(36 / 12) = 3: 2 * 3 * 3 + 3 * 7 + 3 = 42 > 36, shrunk to 2 (12 + 14 + 3 = 29)
    ("sy-flash-block", 3, 36, 2),
])
def test_flash_block_is_the_papers_shrunk_only_to_fit(name, d, M, expected):
    claim = _claim(SY_CLAIMS, name)
    assert _side(claim, "rhs", {"n": 16, "d": d}, M).lo == expected
    assert _side(claim, "lhs", {"n": 16, "d": d}, M).lo == expected


def test_a_shrunk_block_that_still_fits_fails():
    claim = _claim(SY_CLAIMS, "sy-flash-block")
    floor = replace_rhs(claim, expr(lambda p, M: M // (4 * p["d"]), "floor(M / 4d)"))
    report = check_claim(floor)
    # floor(M/4d) differs from the generator's ceil(M/4d) wherever 4d does not divide M and the block fits
    assert report.verdict == "fails"
    assert any(c.M == 45 and c.params["d"] == 2 for c in report.by("fails"))


def test_psz_tile_height_is_the_papers():
    # Case I at d = 2, M = 48: M / 4d = 6 rows (the tile fits: 6 b + 2 b + 12 + 3 <= 48 with b = 1)
    claim = _claim(PSZ_CLAIMS, "psz-case-i-tile-height")
    params = {"n": 4, "d": 2, "g": 1}
    assert _side(claim, "lhs", params, 48).lo == _side(claim, "rhs", params, 48).lo == 6


def test_thm12_lower_step_is_4e():
    # Theorem 1.2 at n = 1, d = 8, g = 1, M = 512: r = 9, w0 = sqrt(512) / (4e) = 2.0810;
    # n r d g / M^(1/2) = 72 / 22.627 = 3.1820 and n r d w0 / M = 72 * 2.0810 / 512 = 0.29264: ratio 4e = 10.873
    claim = _claim(PSZ_CLAIMS, "psz-thm12-lower-step")
    assert _side(claim, "lhs", {"n": 1, "d": 8, "g": 1}, 512).lo == pytest.approx(4 * math.e, rel=1e-9)


@pytest.mark.parametrize("name, params, M, lhs, rhs", [
    # B.3: U = 4 * 2 + 8 * 4 / 2 + 2 * 2 = 28, r' = 65 (d = 10, g = 2), W = 100 * 65 * 10 = 65000:
    # 2 (ceil(65000 / 28) - 1) = 4642 <= 100 * 66 * 10 * 2 / (8 * 2) = 8250; without g it would be 4125
    ("psz-thm13-lower-step", {"n": 100, "d": 10, "g": 2}, 2, 4642, 8250),
])
def test_lower_steps_bound_the_explicit_by_the_formula(name, params, M, lhs, rhs):
    claim = next(c for c in PSZ_CLAIMS.claims if c.name == name)
    assert _side(claim, "lhs", params, M).lo == lhs
    assert _side(claim, "rhs", params, M).lo == pytest.approx(rhs)


def test_delta_is_checked_against_the_proofs_condition():
    claim = _claim(PSZ_CLAIMS, "psz-b1-delta")
    assert check_claim(claim).verdict == "holds"
    # delta = 3/4: 1 / (4 * 9/16) = 4/9 > 1/3
    slip = Claim(claim.name, claim.statement, claim.source, claim.family, claim.grid,
                 expr(lambda p, M: 1 / (4 * 0.75**2), "1 / (4 delta^2)"), "<=", claim.rhs, Ms=(1,))
    assert check_claim(slip).verdict == "fails"


def _skipped_claim():
    return Claim("all-skipped", "1 <= undefined", "here", "chain", {"n": [3]}, expr(lambda p, M: 1, "1"), "<=",
                 expr(lambda p, M: None, "undefined"), Ms=(2, 3), sanity=True)


def test_strict_reports_a_claim_with_no_decided_instance():
    c = _skipped_claim()
    rep = ClaimSetReport(ClaimSet("s", "paper", (c,)), [check_claim(c)])
    assert set_problems(rep) == []
    assert set_problems(rep, strict=True) == ["claim 'all-skipped': no instance decided (2 undecided or skipped)"]


def test_strict_reports_a_constant_study_with_no_instance_and_a_contradiction_always():
    empty = {"formula": "f", "kind": "upper", "instances": 0}
    contradiction = {"formula": "g", "kind": "lower", "instances": 3, "c_confirmed": 2.0, "c_confirmed_at": "a",
                     "c_refuted": 1.5, "c_refuted_at": "b"}
    rep = ClaimSetReport(ClaimSet("s", "paper", ()), [], [empty, contradiction])
    assert set_problems(rep) == ["constant of g: confirmed 2 (at a) above the 1.5 a schedule refutes (at b)"]
    assert set_problems(rep, strict=True) == ["constant of f: no instance of its grid lies in its regime",
                                              set_problems(rep)[0]]


def test_cli_strict_exit_status(tmp_path, capsys):
    path = tmp_path / "c.py"
    path.write_text(
        "from spartition.study.claims import Claim, expr\n"
        "from spartition.study.claimsets import ClaimSet\n"
        "C = Claim('all-skipped', 's', 'here', 'chain', {'n': [3]}, expr(lambda p, M: 1, '1'), '<=',\n"
        "          expr(lambda p, M: None, 'undefined'), Ms=(2,), sanity=True)\n"
        "CLAIMS = ClaimSet('t', 'paper', (C,))\n")
    store = str(tmp_path / "s.sqlite")
    assert main(["claims", str(path), "--store", store]) == 0
    assert main(["claims", str(path), "--store", store, "--strict"]) == 1
    assert "t: claim 'all-skipped': no instance decided" in capsys.readouterr().err


@pytest.mark.parametrize("name, params, M, value", [
    # Appendix A.2 at d = 4, g = 1, M = 48: w = 3 (3 * 4 <= 12 < 4 * 5), 4M + 4M^2/w + M^2/(2w) = 192 + 3072 + 384
    ("psz-a2-count-registered", {"n": 1, "d": 4, "g": 1}, 48, 3648),
    # Appendix B.3 at g = 2, M = 2: 4M + 8M^2/g + gM = 8 + 16 + 4
    ("psz-b3-count-registered", {"n": 1, "d": 4, "g": 2}, 2, 28),
    # Appendix C at g = 4, M = 16: 4M + 8M^2/g + 6 M sqrt(M) = 64 + 512 + 384
    ("psz-c-count-registered", {"n": 1, "d": 4, "g": 4}, 16, 960),
])
def test_the_claim_sets_counts_are_the_appendices(name, params, M, value):
    claim = next(c for c in PSZ_CLAIMS.claims if c.name == name)
    assert _side(claim, "rhs", params, M).lo == pytest.approx(value)
    assert check_claim(claim).verdict == "holds"


def test_the_schedules_w_is_the_formulas():
    # d = 6, g = 2, M = 200: w tau(w) <= 50 -> w = 3 (3 * 10 = 30; 4 * 15 = 60 > 50)
    claim = next(c for c in PSZ_CLAIMS.claims if c.name == "psz-kl32-w")
    assert _side(claim, "lhs", {"n": 1, "d": 6, "g": 2}, 200).lo == 3
    assert check_claim(claim).verdict == "holds"
