"""Nothing unproven is called proven: every solver result against brute force, at any time limit.

Time limits run from 1e-9 s (CP-SAT stops before it has anything) to 1 s. At
each, a result labelled OPTIMAL (an I/O, P(S), U) must equal the brute-force
truth, and every bound the tool calls proven must lie on the right side of
it. The regression tests pin the three wrong answers found by a hostile run:
U = 0 labelled OPTIMAL after a time-limited capacity search, a supplied lower
bound turned into a false optimum, and a NaN time limit.
"""

import json
import math

import pytest

from spartition.families.classic.dag import fft, random_dag
from spartition.core.bounds import min_feasible_memory
from spartition.exact.brute import brute_force
from spartition.cli.main import main
from spartition.errors import ContradictoryBound
from spartition.partition.lower_bounds import io_lower_bounds
from spartition.partition.brute import brute_class_capacity, brute_min_partition
from spartition.partition.capacity import class_capacity
from spartition.partition.minimum import min_partition
from spartition.exact.solve import solve_io

LIMITS = (1e-9, 0.001, 0.01, 0.1, 1.0)


def tiny_dags(count):
    """Seeded random DAGs of 3..8 nodes, each with the time limit it is tried at."""
    for seed in range(count):
        n = 3 + seed % 6
        p = (0.4, 0.6, 0.8)[seed % 3]
        yield seed, random_dag(n, p=p, indeg=1 + (seed // 3) % 3, seed=seed), LIMITS[seed % len(LIMITS)]


@pytest.mark.parametrize("variant", ["oneshot", "recompute"])
def test_exact_io_never_claims_more_than_it_proved(variant):
    labels = set()
    for seed, G, tl in tiny_dags(60):
        m0 = max(1, min_feasible_memory(G))
        for M in (m0, m0 + 1):
            truth = brute_force(G, M, variant).io
            res = solve_io(G, M, variant, time_limit=tl, workers=1, seed=seed)
            labels.add(res.status)
            assert res.io >= truth, (seed, M, res.io, truth)
            assert res.lower_bound <= truth, (seed, M, tl, res.lower_bound, truth)
            if res.status == "OPTIMAL":
                assert res.io == truth, (seed, M, tl, res.io, truth)
    assert "OPTIMAL" in labels


def test_partitions_and_capacities_never_claim_more_than_they_proved():
    unproven = 0
    for seed, G, tl in tiny_dags(60):
        for S in (1, 2, 3):
            truth = brute_min_partition(G, S).P
            res = min_partition(G, S, time_limit=tl, workers=1, seed=seed)
            assert res.lower_bound <= truth <= res.num_classes, (seed, S, tl, res.lower_bound, truth)
            if res.status == "OPTIMAL":
                assert res.num_classes == truth, (seed, S, tl)
            cap_truth = brute_class_capacity(G, S, convex=True)
            cap = class_capacity(G, S, convex=True, time_limit=tl, workers=1, seed=seed)
            assert cap.capacity <= cap_truth <= cap.upper_bound, (seed, S, tl, cap.capacity, cap_truth, cap.upper_bound)
            if cap.status == "OPTIMAL":
                assert cap.capacity == cap_truth, (seed, S, tl)
            else:
                unproven += 1
    assert unproven > 0  # the tiny time limits did stop some searches


def test_io_lower_bounds_never_exceed_the_optimum_at_any_time_limit():
    for seed, G, tl in tiny_dags(40):
        M = max(1, min_feasible_memory(G))
        truth = brute_force(G, M, "recompute").io
        for b in io_lower_bounds(G, M, time_limit=tl, workers=1, seed=seed):
            assert b.value <= truth, (seed, M, tl, b.method, b.value, truth)


# --- the three wrong answers ------------------------------------------------------------


def test_a_capacity_stopped_before_any_solution_is_not_optimal():
    res = class_capacity(fft(2), 3, time_limit=1e-9, workers=1)
    assert res.status == "UNKNOWN"
    assert (res.capacity, res.upper_bound) == (0, 12)  # no set, and only the total weight bounds U
    assert class_capacity(fft(2), 3, time_limit=10, workers=1).upper_bound == 7


def test_time_limited_bounds_label_only_what_they_proved(capsys):
    assert main(["bounds", "fft:k=2", "--M", "3", "--X", "4", "5", "--time-limit", "0.000001", "--json"]) == 0
    bounds = {b["method"]: b for b in json.loads(capsys.readouterr().out)["bounds"]}
    for row in bounds["capacity"]["parameters"]["per_X"]:
        truth = brute_class_capacity(fft(2), row["X"], convex=True)
        assert row["U_found"] <= truth <= row["U"], row
        assert row["status"] != "OPTIMAL" or row["U"] == truth, row
    for row in bounds["x-partition"]["parameters"]["per_X"]:
        truth = brute_min_partition(fft(2), row["X"]).P
        assert row["P"] <= truth and (row["status"] != "OPTIMAL" or row["P"] == truth), row
    part = min_partition(fft(2), 2, time_limit=1e-9, workers=1)  # once divided by U = 0
    assert part.lower_bound <= brute_min_partition(fft(2), 2).P <= part.num_classes


def test_a_supplied_lower_bound_above_a_schedule_is_a_contradiction(capsys):
    with pytest.raises(ContradictoryBound, match="999 exceeds the I/O 20"):
        solve_io(fft(2), 3, lower_bound=999, time_limit=10, workers=1)
    assert main(["solve", "fft:k=2", "--M", "3", "--lower-bound", "999"]) == 2
    assert "999" in capsys.readouterr().err
    # between the optimum and the greedy schedule: the search is forced up, its replay refutes the bound
    with pytest.raises(ContradictoryBound, match="16"):
        solve_io(fft(2), 3, lower_bound=16, time_limit=10, workers=1)


def test_a_supplied_lower_bound_never_proves_optimality():
    res = solve_io(fft(2), 3, lower_bound=14, time_limit=10, workers=1)
    assert (res.status, res.io, res.lower_bound) == ("OPTIMAL_GIVEN_BOUND", 14, 8)
    assert any("supplied lower bound 14" in a for a in res.assumptions)
    assert solve_io(fft(2), 3, time_limit=10, workers=1).status == "OPTIMAL"  # 14 is the optimum


@pytest.mark.parametrize("bad", [math.nan, 0.0, -1.0])
def test_solver_time_limits_must_be_positive_numbers(bad):
    with pytest.raises(ValueError, match="time_limit"):
        solve_io(fft(1), 3, time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        class_capacity(fft(1), 2, time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        min_partition(fft(1), 2, time_limit=bad)


def test_seed_outside_cp_sat_range_is_refused():
    with pytest.raises(ValueError, match="seed"):
        solve_io(fft(1), 3, seed=99999999999)


def test_a_model_too_large_for_the_time_limit_is_not_built():
    from spartition.families.attention.forward.dag import attention_forward

    res = solve_io(attention_forward(6, 2), 4, time_limit=2, workers=1)
    assert res.status == "FEASIBLE" and res.solver_status == "TOO_LARGE"
    assert "constraints" in res.message and res.parameters["model_estimate"]["constraints"] > 10**6


# --- found in review: certificates and hints at the wrong horizon or M ----------------------

FFT1_IO5 = [["load", "F0_0"], ["load", "F0_1"], ["delete", "F0_1"], ["load", "F0_1"], ["compute", "F1_0"],
            ["store", "F1_0"], ["delete", "F1_0"], ["compute", "F1_1"], ["store", "F1_1"]]


def test_a_certificate_with_a_horizon_too_short_for_the_proof_is_not_optimal(tmp_path):
    from spartition.certify.bundle import check_bundle
    from spartition.certify.certify import certify_optimum
    from spartition.core.game import Schedule

    from spartition.certify.bundle import BundleError

    # the optimum is 4; with 2 moves no schedule exists at all, so "nothing cheaper than 5" is vacuous: refused
    with pytest.raises(ValueError, match="horizon 2 is below 6, .* the statement would be empty"):
        certify_optimum(fft(1), 3, "oneshot", tmp_path / "b", schedule=Schedule(3, "oneshot", FFT1_IO5), horizon=2)
    assert not (tmp_path / "b").exists()
    # a bundle that claims it is refused by the checker too
    r = certify_optimum(fft(1), 3, "oneshot", tmp_path / "c", schedule=Schedule(3, "oneshot", FFT1_IO5), horizon=6)
    assert r["io"] == 4 and r["horizon_proven"]  # 6 >= N + (io - 1) = 5: the horizon covers every schedule
    assert check_bundle(tmp_path / "c").status == "OPTIMAL"
    doc = json.loads((tmp_path / "c" / "certificate.json").read_text())
    doc["horizon"] = 2
    (tmp_path / "c" / "certificate.json").write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="horizon 2 is below 6"):
        check_bundle(tmp_path / "c")


def test_a_step_search_ceiling_is_replayed_at_the_searched_memory():
    from spartition.core.greedy import greedy_schedule
    from spartition.exact.steps import step_search

    from spartition.errors import IllegalMove

    # once, a schedule valid only at M = 8 gave the ceiling 8 and "proved" it optimal at M = 3 (the optimum is 14)
    with pytest.raises(IllegalMove, match="more than M = 3 red pebbles"):
        step_search(fft(2), 3, upper=greedy_schedule(fft(2), 8, "recompute"))
    r = step_search(fft(2), 3, upper=greedy_schedule(fft(2), 3, "recompute"))
    assert (r.io, r.lower_bound, r.complete, r.schedule.M) == (14, 14, True, 3)


def test_a_user_hint_comes_back_at_the_call_s_memory_and_variant():
    from spartition.core.game import Schedule

    r = solve_io(fft(1), 3, "recompute", hint=Schedule(9, "oneshot", FFT1_IO5[:2] + FFT1_IO5[4:]), time_limit=10)
    assert (r.status, r.io, r.schedule.M, r.schedule.variant) == ("OPTIMAL", 4, 3, "recompute")
