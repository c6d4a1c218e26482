"""The MaxSAT engine of the order model (spartition.exact.maxsat) against the brute force and known optima."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest

pytest.importorskip("pysat")

from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
from spartition.core.dag import compact
from spartition.core.game import replay
from spartition.core.symmetry import symmetry_precedences
from spartition.exact.brute import brute_force
from spartition.exact.formulations.order import build_order_model
from spartition.exact.formulations.order_cnf import count_reloads_only, decode_order_cnf, order_cnf
from spartition.exact.maxsat import MaxSATRun, linear_solve, rc2_solve
from spartition.exact.solve import solve_io
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.classic.dag import matmul, random_dag

DATA = Path(__file__).resolve().parents[1] / "data"


def _random_cases(count, first_seed=0):
    for seed in range(first_seed, first_seed + count):
        n = 3 + seed % 7  # 3..9 nodes, as in test_solve
        G = random_dag(n, p=0.5, indeg=2 + seed % 2, seed=seed)
        yield seed, G, max(min_feasible_memory(G), 1)


def _check_against_brute(G, M):
    """RC2's optimum equals the brute force's; every bound on the way is at most it; the model replays."""
    c = compact(G)
    truth = brute_force(G, M, "oneshot").io
    pairs = symmetry_precedences(c).pairs
    bounds = []
    oc = order_cnf(c, M, symmetry_pairs=pairs)
    cost, model = rc2_solve(oc, bounds.append)
    assert cost == truth  # no optimum below the truth (unsound) nor above it (an optimum cut off)
    assert all(b <= truth for b in bounds) and bounds == sorted(bounds)
    schedule = decode_order_cnf(oc, model)
    assert replay(G, schedule).io == cost
    assert (schedule.M, schedule.variant) == (M, "oneshot")


def test_every_model_decodes_into_a_schedule_of_no_greater_cost():
    # not only optima: arbitrary models of the hard clauses (blocked one by one) replay within their cost
    from pysat.solvers import Solver

    checked = 0
    for seed, G, m0 in _random_cases(60, first_seed=700):
        c = compact(G)
        oc = order_cnf(c, m0 + seed % 2, symmetry_pairs=symmetry_precedences(c).pairs)
        with Solver(name="cd19", bootstrap_with=oc.hard) as sat:
            for _ in range(5):
                if not sat.solve():
                    break
                model = sat.get_model()
                true = {x for x in model if x > 0}
                cost = oc.offset + sum(1 for x in oc.soft if -x in true)
                assert replay(G, decode_order_cnf(oc, model)).io <= cost
                checked += 1
                # the next model differs in the order, a red set, a load or a store: another schedule
                named = [*oc.order.values(), *oc.red.values(), *oc.load.values(),
                         *(x for x in oc.store.values() if x is not True)]
                sat.add_clause([-x if x in true else x for x in named])
    assert checked >= 200


def _sweep(count, first_seed=0, extra=1):
    cases = 0
    for seed, G, m0 in _random_cases(count, first_seed):
        for M in range(m0, m0 + extra + 1):
            _check_against_brute(G, M)
            cases += 1
    return cases


def test_random_dags_match_brute_force():
    assert _sweep(200) == 400  # about 2 s


@pytest.mark.slow
def test_random_dags_bigger_sweep():
    assert _sweep(300, first_seed=1000, extra=2) == 900


def _check_linear_against_brute(G, M):
    """The linear search's optimum is the brute force's; each model is cheaper than the last and replays within
    its cost; started at the optimum it finds nothing cheaper, started one above it finds the optimum."""
    c = compact(G)
    truth = brute_force(G, M, "oneshot").io
    oc = order_cnf(c, M, symmetry_pairs=symmetry_precedences(c).pairs)
    seen = []

    def on_model(cost, model):
        io = replay(G, decode_order_cnf(oc, model)).io
        assert io <= cost and (not seen or cost < seen[-1])
        seen.append(io)
        return io

    cost, model = linear_solve(oc, on_model=on_model)
    assert cost == truth == seen[-1]  # no optimum below the truth, none above it
    assert replay(G, decode_order_cnf(oc, model)).io == truth
    assert linear_solve(oc, upper=truth) == (truth, None)
    again, model = linear_solve(oc, upper=truth + 1)
    assert again == truth and replay(G, decode_order_cnf(oc, model)).io == truth


def test_linear_search_matches_brute_force():
    cases = 0
    for seed, G, m0 in _random_cases(200, first_seed=2000):
        for M in (m0, m0 + 1):
            _check_linear_against_brute(G, M)
            cases += 1
    assert cases == 400


def test_linear_search_hand_counted():
    # fft(1): two inputs, two outputs, each output reads both inputs; M = 3: 2 loads + 2 stores
    from spartition.families.classic.dag import fft

    oc = order_cnf(compact(fft(1)), 3)
    assert oc.offset == 2 and linear_solve(oc)[0] == 4
    assert linear_solve(oc, upper=4) == (4, None)
    assert linear_solve(oc, upper=3) == (3, None)  # a budget below the forced stores is never asked of the solver


def test_linear_run_sends_schedules_and_proves_the_last():
    G = attention_forward(2, 2)  # M = 5: the optimum is 24 (RC2, and the brute-force-checked model)
    run = MaxSATRun(compact(G), 5, method="linear")
    out = run.wait(60.0)
    assert (out.status, out.lower_bound, out.io) == ("OPTIMAL", 24, 24)
    assert replay(G, out.schedule).io == 24 and out.stats["bound_steps"] >= 1
    assert out.stats["solver"].startswith("linear/")
    with pytest.raises(ValueError, match="unknown MaxSAT method 'lsu'"):
        MaxSATRun(compact(G), 5, method="lsu")


@pytest.mark.slow
def test_counting_only_reloads_keeps_the_optimum_and_every_bound_below_it():
    # random DAGs (inputs with 1-4 uses, first uses fixed by ancestry or not) and matmul 2x2x2 at every M
    cases = [(G, M) for _, G, m0 in _random_cases(100, first_seed=4000) for M in (m0, m0 + 1)]
    cases += [(matmul(2, 2, 2), M) for M in range(3, 9)]
    relaxed = 0
    for G, M in cases:
        c = compact(G)
        truth = brute_force(G, M, "oneshot").io
        oc = order_cnf(c, M, symmetry_pairs=symmetry_precedences(c).pairs)
        re = count_reloads_only(oc)
        assert re.offset == oc.offset + sum(1 for v in range(c.n) if c.is_input[v] and len(c.succs(v)))
        bounds = []
        cost, model = rc2_solve(re, bounds.append)
        assert cost == truth and all(b <= truth for b in bounds)
        assert replay(G, decode_order_cnf(re, model)).io == cost
        relaxed += len(re.soft) < len(oc.soft)
    assert relaxed == 158  # of 206: where ancestry decides a first use, its soft literal goes


def test_without_symmetry_or_dominance_the_optimum_is_the_same():
    for seed, G, m0 in _random_cases(14, first_seed=300):
        c = compact(G)
        truth = brute_force(G, m0, "oneshot").io
        assert rc2_solve(order_cnf(c, m0, dominance=False))[0] == truth


def test_clauses_match_the_cp_sat_model():
    # the same variables as build_order_model: order literals, red literals, loads, stores
    c = compact(attention_forward(2, 2))
    om = build_order_model(c, 5)
    oc = order_cnf(c, 5)
    assert set(oc.order) == set(om.bvars) and set(oc.red) == set(om.red) and set(oc.load) == set(om.L)
    assert set(oc.store) == set(om.b)
    assert oc.offset == int(c.is_output[~c.is_input].sum())
    assert len(oc.soft) + oc.offset == len(om.L) + len(om.b)
    # attention-forward n=2 d=3, M=6 as issue 22 measured it: 18,652 variables and 80,624 clauses
    big = order_cnf(compact(attention_forward(2, 3)), 6)
    assert (big.stats["vars"], big.stats["hard"]) == (18594, 80608)


def test_matmul222_known_optima():
    data = json.loads((DATA / "matmul222_optima.json").read_text())["oneshot"]
    G = matmul(2, 2, 2)
    for M in (3, 4):
        oc = order_cnf(compact(G), M, symmetry_pairs=symmetry_precedences(G).pairs)
        cost, model = rc2_solve(oc)
        assert cost == data[str(M)] == (25, 17)[M - 3]
        assert replay(G, decode_order_cnf(oc, model)).io == cost


@pytest.mark.parametrize("M, opt", [(4, 15), (5, 11)])  # LRAT-certified, docs/certificates.md
def test_attention_n2_d1_known_optima_through_solve_io(M, opt):
    G = attention_forward(2, 1)
    r = solve_io(G, M, time_limit=60, workers=1, engine="maxsat", hint=None)
    assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", opt, opt)
    assert (r.schedule_source, r.bound_source, r.formulation) == ("maxsat", "maxsat", "order")
    assert replay(G, r.schedule).io == opt


def test_linear_engine_through_solve_io():
    G = attention_forward(2, 1)  # M=4: 15, LRAT-certified (docs/certificates.md)
    cold = solve_io(G, 4, time_limit=60, workers=1, engine="linear", hint=None)
    assert (cold.status, cold.io, cold.lower_bound) == ("OPTIMAL", 15, 15)
    assert (cold.schedule_source, cold.bound_source) == ("maxsat-linear", "maxsat-linear")
    assert replay(G, cold.schedule).io == 15
    # from the best hint: every schedule the search finds is cheaper, or the first "none" proves the hint optimal
    warm = solve_io(G, 4, time_limit=60, workers=1, engine="linear")
    assert (warm.status, warm.io, warm.bound_source) == ("OPTIMAL", 15, "maxsat-linear")
    assert warm.parameters["maxsat"]["solver"].startswith("linear")


@pytest.mark.slow
def test_portfolio_takes_the_best_of_both():
    # attention-forward n=2 d=2, M=5: RC2 proves 24 in seconds (issue 22)
    G = attention_forward(2, 2)
    r = solve_io(G, 5, time_limit=60, workers=2, engine="portfolio")
    assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", 24, 24)
    assert r.bound_source in ("maxsat", "maxsat-linear")
    assert replay(G, r.schedule).io == 24
    for engine in ("maxsat", "maxsat_linear"):  # two workers: RC2 and the linear search, no CP-SAT
        assert r.parameters[engine]["status"] in ("OPTIMAL", "STOPPED", "BOUND_MET")
    assert "cp_sat" not in r.parameters and r.parameters["options"]["engine"] == "portfolio"
    # three workers: CP-SAT's one worker interleaves its subsolvers (LNS finds schedules) ...
    three = solve_io(G, 5, time_limit=60, workers=3, engine="portfolio")
    assert three.io == three.lower_bound == 24 and "maxsat_linear" in three.parameters
    assert three.parameters["cp_sat"]["num_workers"] == 1 and three.parameters["cp_sat"]["interleave_search"] is True
    # ... unless the caller says otherwise
    mine = solve_io(G, 5, time_limit=60, workers=3, engine="portfolio", cp_sat_parameters={"interleave_search": False})
    assert mine.parameters["cp_sat"]["interleave_search"] is False and mine.io == 24


def test_the_step_search_takes_over_a_stalled_rc2(monkeypatch):
    # handover at once (share 0): RC2 has no bound above the trivial 12 yet, so it is stopped and the step search
    # proves matmul 2x2x2's optimum at M = 4 (17, the brute force's: tests/data/matmul222_optima.json)
    from spartition.core.greedy import greedy_schedule
    from spartition.exact import portfolio
    from spartition.exact.formulations import ModelSpec
    from spartition.exact.result import SearchOutcome

    monkeypatch.setattr(portfolio, "STEP_HANDOVER_SHARE", 0.0)
    c = compact(matmul(2, 2, 2))
    greedy = greedy_schedule(c, 4, "oneshot")
    assert replay(c, greedy).io > 17
    spec = ModelSpec(cdag=c, M=4, variant="oneshot", computed=12, events=12, upper=replay(c, greedy).io)
    no_cp_sat = lambda workers, poll: SearchOutcome(None, None, "", parameters={"options": None})  # noqa: E731
    out = portfolio.portfolio_search(spec, spec.upper, no_cp_sat, 2, 60.0, time.perf_counter(), linear=False,
                                     upper_schedule=greedy)
    assert (out.io, out.model_bound, out.bound_by, out.closed) == (17, 17, "step-search", True)
    assert replay(c, out.schedule).io == 17
    assert out.parameters["maxsat"]["status"] == "STOPPED" and out.parameters["step_search"]["status"] == "OPTIMAL"
    assert "step-search OPTIMAL" in out.solver_status and any("A*" in a for a in out.assumptions)
    # without a schedule to start from there is no handover: RC2 proves it alone
    alone = portfolio.portfolio_search(spec, spec.upper, no_cp_sat, 2, 60.0, time.perf_counter(), linear=False)
    assert (alone.model_bound, alone.bound_by) == (17, "maxsat") and "step_search" not in alone.parameters


@pytest.mark.slow
def test_the_portfolio_proves_matmul333_at_loose_memory():
    # M = 14: RC2's bound stays at the trivial 27; after a quarter of the time the step search proves 28 (in ~15 s)
    G = matmul(3, 3, 3)
    r = solve_io(G, 14, time_limit=120, workers=2)
    assert (r.status, r.io, r.lower_bound, r.bound_source) == ("OPTIMAL", 28, 28, "step-search")
    assert replay(G, r.schedule).io == 28 and r.parameters["maxsat"]["status"] == "STOPPED"


def test_time_limit_gives_a_proven_bound_only():
    G = attention_forward(2, 3)  # 70 nodes: RC2 does not finish in 4 s
    r = solve_io(G, 6, time_limit=4, workers=1, engine="maxsat")
    assert r.status == "FEASIBLE" and r.solver_status == "TIME_LIMIT"
    assert trivial_lower_bound(G) <= r.lower_bound <= r.io and r.bound_source in ("maxsat", "trivial")
    assert r.wall_s < 15


def test_engine_choice():
    from spartition.exact.solve import ENGINES

    assert ENGINES == ("auto", "cp-sat", "maxsat", "linear", "portfolio", "cubes")
    G = matmul(2, 2, 2)
    one = solve_io(G, 4, time_limit=20, workers=1)
    assert one.parameters["options"]["engine"] == "cp-sat"  # one worker: CP-SAT alone
    det = solve_io(G, 4, time_limit=20, workers=2, deterministic_time=5.0)
    assert det.parameters["options"]["engine"] == "cp-sat"  # reproducible runs stay CP-SAT's
    with pytest.raises(ValueError, match="unknown engine 'lp'"):
        solve_io(G, 4, engine="lp")
    with pytest.raises(ValueError, match="engine .maxsat. runs on the order model only, not on the events model"):
        solve_io(G, 4, formulation="events", engine="maxsat")


def test_run_reports_and_stops():
    run = MaxSATRun(compact(attention_forward(2, 3)), 6)
    out = run.wait(3.0)
    assert out.status == "TIME_LIMIT" and out.schedule is None
    assert out.lower_bound is None or out.lower_bound <= 34
    assert run.done


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_stops_the_portfolio(monkeypatch):
    import threading

    import spartition.exact.portfolio as portfolio_module

    class CtrlCLater(MaxSATRun):
        """A run that sends this process a Ctrl-C 2 s after CP-SAT's search first polls it."""

        timer = None  # one for the class: the portfolio runs two of these

        def poll(self):
            if CtrlCLater.timer is None:
                CtrlCLater.timer = threading.Timer(2.0, os.kill, (os.getpid(), signal.SIGINT))
                CtrlCLater.timer.start()
            super().poll()

    monkeypatch.setattr(portfolio_module, "MaxSATRun", CtrlCLater)
    start = time.perf_counter()
    r = solve_io(attention_forward(2, 3), 6, time_limit=60, workers=2, engine="portfolio")
    assert r.interrupted and r.status == "FEASIBLE" and r.lower_bound <= r.io
    assert r.parameters["maxsat"]["status"] == r.parameters["maxsat_linear"]["status"] == "INTERRUPTED"
    assert time.perf_counter() - start < 20  # stopped, not run to the 60 s limit


@pytest.mark.slow
def test_the_portfolio_stops_cp_sat_when_rc2s_bound_meets_cp_sats_incumbent():
    """No hint: CP-SAT's incumbent as it goes is what RC2's bound is held against."""
    from spartition.exact.formulations import ModelSpec
    from spartition.exact.portfolio import portfolio_search
    from spartition.exact.result import SearchOutcome

    G = attention_forward(2, 3)  # RC2 does not finish within a minute here (trivial bound 24, its bound ~31)
    c = compact(G)
    spec = ModelSpec(cdag=c, M=6, variant="oneshot", computed=int((~c.is_input).sum()), events=0, lower=0)
    seen = {}

    def cp_search(workers, poll):
        start = time.perf_counter()
        while not poll(26.0) and time.perf_counter() - start < 50:  # as if CP-SAT held a schedule of cost 26
            time.sleep(0.05)
        seen.update(met=poll(26.0), unsettled=not poll(None), seconds=time.perf_counter() - start)
        # the stub's incumbent (no schedule: the portfolio never replays CP-SAT's, solve_io did)
        return SearchOutcome(None, 26, "solver", model_bound=0, solver_status="STOPPED")

    out = portfolio_search(spec, None, cp_search, 2, 55.0, time.perf_counter(), linear=False)
    assert seen["met"] and seen["unsettled"]  # stopped by the incumbent, while RC2 itself had not settled anything
    assert out.model_bound >= 26 and out.bound_by == "maxsat" and out.closed
