"""Recompute certificates for the unbounded game: the horizon Q + sum pi(v) of the compute caps.

spartition.certify.encoding.proven_horizon proves that every recompute schedule with I/O <= Q has one of
no greater I/O within Q + sum pi loads, stores and computes; these tests hold it against the brute force
(the move count of reduced optimal schedules, and certified optima) and check that the checker decides
the status from the DAG, not from the bundle's word.
"""

import json

import pytest

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import pysat  # noqa: F401

import spartition.certify.certify as certify_module
from spartition.certify.bundle import BundleError, check_bundle
from spartition.certify.certify import certify_optimum
from spartition.certify.encoding import default_horizon, proven_horizon
from spartition.cli.main import main
from spartition.core.bounds import min_feasible_memory
from spartition.core.dag import compact
from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.exact.brute import brute_force
from spartition.exact.formulations.caps import reduce_schedule
from spartition.families.classic.dag import chain, fft, matmul, random_dag


def random_instances(count, first_seed=0):
    """(seed, DAG, M): seeded random DAGs of 3..9 nodes at their smallest M (at least 1) or one above."""
    for seed in range(first_seed, first_seed + count):
        G = random_dag(3 + seed % 7, 0.35 + 0.05 * (seed % 5), 2 + seed % 2, seed=seed)
        yield seed, G, max(1, min_feasible_memory(G)) + seed % 2


def _non_delete_moves(schedule) -> int:
    return sum(move != "delete" for move, _ in schedule.moves)


def test_proven_horizon_by_hand():
    # fft(1): two outputs, pi = 1 each; chain(4): pi = 3, 2, 1; matmul 2x2x2: 4 outputs (pi 1), 8 products (pi 2)
    assert [proven_horizon(G, "recompute", 7) for G in (fft(1), chain(4), matmul(2, 2, 2))] == [9, 13, 27]
    assert proven_horizon(fft(2), "recompute", 0) == 16  # 4 outputs (1), 4 middle nodes (1 + 1 + 1 = 3)
    assert proven_horizon(matmul(2, 2, 2), "oneshot", 7) == default_horizon(matmul(2, 2, 2), "oneshot", 7) == 19
    # deep DAGs: the caps exceed the 2N + Q fallback (fft(3): sum pi = 88 over 24 computed nodes)
    assert proven_horizon(fft(3), "recompute", 0) == 88 > default_horizon(fft(3), "recompute", 0) == 48


def test_the_horizon_covers_every_reduced_brute_force_optimum():
    # the theorem's count: a reduced schedule makes at most I/O + sum pi loads, stores and computes.
    # this is the check that fails if the proof is wrong (the reduction is the module's, the optimum the
    # brute force's); greedy schedules, with more I/O and more computes, are held to it too
    beyond_n = 0
    for seed, G, M in random_instances(200):
        c = compact(G)
        N = int((~c.is_input).sum())
        for schedule in (brute_force(c, M, "recompute").schedule, greedy_schedule(c, M, "recompute")):
            reduced = reduce_schedule(c, schedule)
            io = replay(c, reduced).io
            assert io == replay(c, schedule).io
            assert _non_delete_moves(reduced) <= proven_horizon(c, "recompute", io), (seed, M)
            beyond_n += _non_delete_moves(reduced) > N + io
    assert beyond_n > 0  # some reduced schedules recompute: N + Q (the oneshot horizon) would not do


def test_certified_recompute_optima_equal_the_brute_force_on_random_dags(tmp_path):
    # started from greedy's schedule, so the loop improves through decoded models before its refutation
    improved = 0
    for seed, G, M in random_instances(20):
        truth = brute_force(G, M, "recompute").io
        out = tmp_path / f"b{seed}" if seed % 4 == 0 else None
        r = certify_optimum(G, M, "recompute", out, schedule=greedy_schedule(G, M, "recompute"))
        assert (r["io"], r["horizon_proven"]) == (truth, True), seed
        # I/O 0 (no output to store) has nothing to refute and no horizon
        assert r["horizon"] == (proven_horizon(G, "recompute", truth - 1) if truth else None)
        improved += r["stats"]["improved"]
        if out is not None:
            assert check_bundle(out).status == "OPTIMAL", seed
    assert improved > 0


@pytest.mark.parametrize(("M", "optimum"), [(3, 14), (4, 11)])  # tests/golden/values.json, exact:brute
def test_fft4_recompute_is_certified_optimal(tmp_path, M, optimum):
    r = certify_optimum(fft(2), M, "recompute", tmp_path / "b")
    assert (r["io"], r["horizon"], r["horizon_proven"]) == (optimum, optimum - 1 + 16, True)
    rep = check_bundle(tmp_path / "b")
    assert rep.status == "OPTIMAL"
    assert rep.statement.startswith(f"the minimum recompute I/O of fft k=2 (sha256 ")
    assert f"with M = {M} is {optimum} (" in rep.statement
    assert rep.statement.endswith(f"sum pi = 16, hence with at most {optimum - 1} + 16 = {optimum + 15} loads, "
                                  f"stores and computes; horizon = {optimum + 15} >= Q + sum pi = {optimum - 1} + 16")


@pytest.mark.slow
def test_matmul222_recompute_m4_is_certified_optimal(tmp_path):
    # 17: tests/data/matmul222_optima.json (brute force)
    r = certify_optimum(matmul(2, 2, 2), 4, "recompute", tmp_path / "b")
    assert (r["io"], r["horizon"], r["horizon_proven"]) == (17, 16 + 20, True)
    rep = check_bundle(tmp_path / "b")
    assert rep.status == "OPTIMAL" and "sum pi = 20" in rep.statement


def test_a_horizon_below_the_proven_one_states_within_horizon_only(tmp_path):
    # chain(5), M = 2: optimum 2 (load c0, store c4), proven horizon 1 + (4 + 3 + 2 + 1) = 11; every
    # schedule needs 4 computes + 2 I/O = 6 moves, so 8 is a stated cap that says something, and only that
    r = certify_optimum(chain(5), 2, "recompute", tmp_path / "b", horizon=8)
    assert (r["io"], r["horizon"], r["horizon_proven"]) == (2, 8, False)
    assert r["horizon_argument"].startswith("horizon 8 is below the proven 11")
    assert check_bundle(tmp_path / "b").status == "OPTIMAL_WITHIN_HORIZON"
    # the flag in the file is not read: set true, the checker still derives within-horizon from the DAG
    doc = json.loads((tmp_path / "b" / "certificate.json").read_text())
    doc["horizon_proven"] = True
    (tmp_path / "b" / "certificate.json").write_text(json.dumps(doc))
    rep = check_bundle(tmp_path / "b")
    assert rep.status == "OPTIMAL_WITHIN_HORIZON"
    assert "at most 8 loads, stores and computes has I/O below 2" in rep.statement
    # a given horizon at or above the proven one is proven
    for T in (11, 12):
        r = certify_optimum(chain(5), 2, "recompute", tmp_path / f"c{T}", horizon=T)
        assert (r["io"], r["horizon_proven"], check_bundle(tmp_path / f"c{T}").status) == (2, True, "OPTIMAL")


def test_a_proven_bundle_with_its_horizon_lowered_does_not_check(tmp_path):
    certify_optimum(fft(2), 3, "recompute", tmp_path / "b")
    doc = json.loads((tmp_path / "b" / "certificate.json").read_text())
    assert (doc["horizon"], doc["horizon_proven"]) == (29, True)
    doc["horizon"] = 20
    (tmp_path / "b" / "certificate.json").write_text(json.dumps(doc))
    # the CNF refuted is the 29-step one: the encoder's 20-step CNF differs
    with pytest.raises(BundleError, match="formula.cnf is not the encoder's CNF for this claim: the CNF has"):
        check_bundle(tmp_path / "b")


def test_a_proven_horizon_too_large_to_encode_falls_back_to_2n_plus_q(tmp_path, monkeypatch, capsys):
    # chain(5) at M = 2: optimum 2, proven horizon 1 + (4 + 3 + 2 + 1) = 11 > 2N + Q = 9; a limit between
    # the two CNF sizes leaves only the stated cap
    G = chain(5)
    monkeypatch.setattr(certify_module, "MAX_CNF_CELLS", 600)
    r = certify_optimum(G, 2, "recompute", tmp_path / "b")
    assert (r["io"], r["horizon"], r["horizon_proven"]) == (2, 9, False)
    assert r["horizon_argument"] == ("the proven horizon Q + sum pi = 11 (compute caps) makes a CNF of about 671 "
                                     "literals, more than 600; horizon 2N + Q = 9 used instead: optimal within the "
                                     "horizon only")
    assert check_bundle(tmp_path / "b").status == "OPTIMAL_WITHIN_HORIZON"
    assert main(["certify", "chain:n=5", "--M", "2", "--variant", "recompute", "--out", str(tmp_path / "c")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OPTIMAL_WITHIN_HORIZON: io = 2 (M = 2, recompute, horizon 9)\n  the proven horizon")


def test_cli_certify_recompute_names_the_cap_argument(tmp_path, capsys):
    assert main(["certify", "chain:n=5", "--M", "2", "--variant", "recompute", "--out", str(tmp_path / "b")]) == 0
    out = capsys.readouterr().out
    assert out.startswith("OPTIMAL: io = 2 (M = 2, recompute)\n  horizon proven for the unbounded game by the "
                          "compute caps pi(v)")
    assert main(["check-certificate", str(tmp_path / "b"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["status"] == "OPTIMAL" and rep["statement"].endswith("sum pi = 10, hence with at most 1 + 10 = 11 "
                                                                    "loads, stores and computes; horizon = 11 >= "
                                                                    "Q + sum pi = 1 + 10")


def test_a_dag_with_nothing_to_compute_is_not_certified_at_m_0():
    import networkx as nx

    G = nx.DiGraph()
    G.add_nodes_from(["a", "b"])  # the smallest feasible M is 0: no red pebble is ever needed
    with pytest.raises(ValueError, match=r"M must be an integer >= 1, got 0"):
        certify_optimum(G, 0, "recompute")
