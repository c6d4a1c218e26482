"""Claims of the three papers on small grids, checked against computed values; the pytest plugin; golden files."""

import json
from pathlib import Path

import pytest

from spartition.study.claims import (
    Claim,
    ClaimFailed,
    algorithm,
    assert_claim,
    capacity,
    check_claim,
    expr,
    formula,
    lower_bound,
    optimum,
    regress,
)
from spartition.families.approx_formulas import kl32_width
from spartition.study.store import ResultStore

pytest_plugins = ["pytester"]

SY = "Saha & Ye (ICML 2024)"
LI = "Li et al. (arXiv 2410.09397)"
PSZ = "Papp, Sobczyk & Zouzias (arXiv 2605.23751)"
FWD = {"n": [2], "d": [1]}


def _kl32_U(p, M):
    w = kl32_width(p["d"], p["g"], M)
    return None if w is None else 4 * M + 4 * M * M / w + M * M / (2 * w)


PAPER_CLAIMS = [
    Claim("sy-lower", "the optimum of the forward DAG is at least min(n^2 d^2 / M, n^2 d / sqrt(M)) (constant 1)",
          SY + ", main theorem", "attention-forward", FWD, optimum(), ">=", formula("sy-lower", c=1.0), Ms=(5, 6, 7, 8)),
    Claim("sy-trivial", "every input is loaded and every output stored: optimum >= 4 n d",
          SY + ", section 2", "attention-forward", FWD, optimum(), ">=", formula("trivial-forward"), Ms=(5, 6, 7, 8)),
    Claim("sy-flash-within-3", "FlashAttention is optimal up to a constant for M >= d^2: its I/O is at most 3 x optimum",
          SY + ", FlashAttention optimality", "attention-forward", FWD, algorithm("flash-forward"), "<=",
          optimum().times(3), Ms=(8,)),
    Claim("hk-lemma", "Hong-Kung: the X-partition bound never exceeds the optimum",
          "Hong & Kung 1981, Theorem 3.1", "attention-forward", FWD, lower_bound("x-partition"), "<=", optimum(),
          Ms=(5, 6, 7, 8)),
    Claim("li-lower", "the optimum of the weight-gradient DAG is at least min((n^2 d^2 + n d^3)/M, (n^2 d + n d^2)/sqrt(M))",
          LI + ", Theorem 1.1", "attention-backward-weights", {"n": [1], "d": [1]}, optimum(), ">=",
          formula("li-lower")),
    Claim("li-trivial", "backward: optimum >= 4 n d + 3 d^2 (inputs loaded, output stored)",
          LI + ", section 3", "attention-backward-weights", {"n": [1], "d": [1]}, optimum(), ">=",
          formula("trivial-backward-weights")),
    Claim("psz-kl32-capacity", "Key Lemma 3.2: one 2M-class holds at most 4M + 4M^2/w + M^2/(2w) products U1 H",
          PSZ + ", Key Lemma 3.2 (Appendix A.2)", "approx-attention", {"n": [2], "d": [1, 2], "g": [1]},
          capacity(lambda p, M: 2 * M, weight="tensor=P"), "<=",
          expr(_kl32_U, "4M + 4M^2/w + M^2/(2w)"), Ms=(8, 12)),
    Claim("psz-thm11-lower", "every entry of Q, K, V is loaded at least once: optimum >= 3 n d",
          PSZ + ", Theorem 1.1", "approx-attention", {"n": [2], "d": [1], "g": [1]}, optimum(), ">=",
          formula("psz-thm11-lower"), Ms=(4, 6)),
]


@pytest.mark.parametrize("claim", PAPER_CLAIMS, ids=[c.name for c in PAPER_CLAIMS])
def test_paper_claims(claims, claim):
    report = claims.assert_holds(claim, time_limit=30, bound_time_limit=10)
    assert report.holds and report.by("holds")


def test_a_false_claim_names_the_instance(claims):
    false = Claim("too-strong", "optimum >= 4 n d + 1", "nobody", "attention-forward", FWD, optimum(), ">=",
                  expr(lambda p, M: 4 * p["n"] * p["d"] + 1, "4nd + 1"), Ms=(7, 8))
    with pytest.raises(ClaimFailed) as info:
        claims.assert_holds(false, time_limit=30)
    msg = str(info.value)
    assert "fails at attention-forward d=1 n=2 M=8" in msg
    assert "optimum[exact] = 8 (optimum" in msg and "4nd + 1 = 9" in msg
    assert "M=7" not in msg  # 9 >= 9 holds there


def test_capacity_values_and_undecided():
    store = ResultStore(":memory:")
    c = Claim("kl32", "", "", "approx-attention", {"n": [2], "d": [2], "g": [1]},
              capacity(16, weight="tensor=P"), "==", expr(lambda p, M: 8, "8"), Ms=(8,))
    (ck,) = check_claim(c, store).checks
    assert ck.outcome == "holds" and ck.lhs.lo == ck.lhs.hi == 8  # every product fits in one 16-class
    from spartition.study.claims import Interval, _decide

    assert _decide(Interval(27, 31, ""), ">=", Interval.point(28, ""), ) == "undecided"
    assert _decide(Interval(27, 31, ""), ">=", Interval.point(27, "")) == "holds"
    assert _decide(Interval(27, 31, ""), "<=", Interval.point(26, "")) == "fails"


def test_skipped_outside_regime_is_not_a_pass():
    c = Claim("flash-small-M", "", "", "attention-forward", FWD, algorithm("flash-forward"), "<=",
              optimum(), Ms=(5,))
    with pytest.raises(ClaimFailed, match="could be checked"):
        assert_claim(c, ResultStore(":memory:"))


def test_plugin_in_a_user_suite(pytester):
    pytester.makepyfile(
        """
        from spartition.study.claims import Claim, expr, optimum

        def test_false(claims):
            claims.assert_holds(Claim("chain-3", "a chain costs 3", "me", "chain", {"n": [4]},
                                      optimum("brute"), "==", expr(lambda p, M: 3, "3"), Ms=(2,)))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--spartition-store", str(pytester.path / "s.sqlite"))
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*fails at chain n=4 M=2: optimum?brute? = 2 (optimum, brute OPTIMAL) == 3 = 3*"])


GOLDEN = Path(__file__).parent / "golden"


@pytest.fixture(scope="module")
def golden_store(tmp_path_factory):
    with ResultStore(tmp_path_factory.mktemp("golden") / "r.sqlite") as st:
        yield st


def test_golden_values(golden_store):
    result = regress(GOLDEN / "grid.toml", GOLDEN / "values.json", golden_store)
    assert result["changed"] == [] and result["missing"] == [] and result["failed"] == [], result
    assert result["values"] >= 40


def test_golden_detects_a_change(tmp_path, golden_store):
    golden = json.loads((GOLDEN / "values.json").read_text())
    key = next(k for k in golden if k.endswith("exact:brute"))
    golden[key]["value"] += 1
    path = tmp_path / "values.json"
    path.write_text(json.dumps(golden))
    result = regress(GOLDEN / "grid.toml", path, golden_store)
    assert len(result["changed"]) == 1 and key in result["changed"][0]
