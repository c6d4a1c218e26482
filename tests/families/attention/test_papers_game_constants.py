"""The constant studies of saha-ye and li run in the papers' game (the standard one) and say so."""

import pytest
from spartition.families.attention.claims import LI_CONSTANTS, SY_CONSTANTS

from spartition.study.claimsets import _constant_text, run_constants
from spartition.study.formulas import formula_named


def test_every_study_runs_in_the_standard_game_with_bounds_proven_there():
    for study in SY_CONSTANTS + LI_CONSTANTS:
        assert study.variant == "recompute", study.formula
    (sy,) = [s for s in SY_CONSTANTS if s.formula == "sy-lower"]
    assert [q.text for q in sy.lower] == ["segment-forward-recompute-lower"]
    assert "recompute" in formula_named("segment-forward-recompute-lower").variants


def test_an_interval_names_its_game():
    row = {"kind": "lower", "c_confirmed": 2.0, "c_confirmed_at": "a", "c_refuted": 9.0, "c_refuted_at": "b"}
    assert _constant_text({**row, "variant": "recompute"}).endswith("[standard game, with recomputation]")
    assert _constant_text({**row, "variant": "oneshot"}).endswith("[oneshot game]")


@pytest.mark.slow
def test_the_sy_lower_constant_in_the_standard_game():
    # 70 s: the segment bound on n = 16, 32, d = 2, 4, M = 4 .. 64 and the replayed schedules
    (sy,) = [s for s in SY_CONSTANTS if s.formula == "sy-lower"]
    r = run_constants(sy)
    assert r["variant"] == "recompute" and r["instances"] == 20
    # before: [0.25, 9.22] from the trivial bound alone (37x wide); now 4.5x wide
    assert (r["c_confirmed"], r["c_refuted"]) == (2.0390625, 9.21875)
