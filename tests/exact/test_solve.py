"""Exact I/O by CP-SAT (spartition.exact.solve) against the brute-force optimum and the rules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spartition.families.classic.dag import chain, fft, matmul, random_dag
from spartition.core.bounds import min_feasible_memory, trivial_lower_bound
from spartition.exact.brute import brute_force
from spartition.cli.main import main
from spartition.core.dag import compact
from spartition.core.game import replay
from spartition.core.greedy import greedy_schedule
from spartition.exact.solve import STATUSES, solve_io
from spartition.core.symmetry import find_automorphism, symmetry_precedences

DATA = Path(__file__).resolve().parents[1] / "data"


def _random_cases(count, first_seed=0):
    for seed in range(first_seed, first_seed + count):
        n = 3 + seed % 7  # 3..9 nodes
        G = random_dag(n, p=0.5, indeg=2 + seed % 2, seed=seed)
        yield seed, G, max(min_feasible_memory(G), 1)


def _check_against_brute(G, M, variant, **kw):
    truth = brute_force(G, M, variant)
    r = solve_io(G, M, variant, time_limit=20, workers=1, **kw)
    assert r.status in ("OPTIMAL", "OPTIMAL_WITHIN_CAP"), (r.status, r.message)
    assert r.io == truth.io
    assert replay(G, r.schedule).io == r.io
    assert r.schedule.variant == variant and r.schedule.M == M
    if variant == "oneshot":
        assert r.status == "OPTIMAL" and r.lower_bound == r.io
    else:  # recompute: OPTIMAL only when a valid bound of the true problem is met
        assert r.lower_bound <= truth.io
        if r.status == "OPTIMAL":
            assert r.io == r.lower_bound
    return r


def test_random_dags_oneshot_match_brute_force():
    cases = 0
    for seed, G, m0 in _random_cases(200):
        for M in (m0, m0 + 1):
            _check_against_brute(G, M, "oneshot")
            cases += 1
    assert cases == 400


def test_random_dags_recompute_match_brute_force():
    for seed, G, m0 in _random_cases(200):
        _check_against_brute(G, m0 + seed % 2, "recompute")


@pytest.mark.slow
def test_random_dags_bigger_sweep_all_formulations():
    for seed, G, m0 in _random_cases(300, first_seed=1000):
        for M in (m0, m0 + 1, m0 + 2):
            for variant in ("oneshot", "recompute"):
                _check_against_brute(G, M, variant)
            _check_against_brute(G, M, "oneshot", formulation="events")
            if seed % 5 == 0:
                _check_against_brute(G, M, "oneshot", formulation="baseline")
                _check_against_brute(G, M, "recompute", formulation="baseline")


@pytest.mark.parametrize("formulation", ["order", "events", "baseline"])
def test_every_formulation_on_small_dags(formulation):
    for seed, G, m0 in _random_cases(12, first_seed=500):
        _check_against_brute(G, m0, "oneshot", formulation=formulation)


def test_matmul222_optima_match_brute_force_data():
    data = json.loads((DATA / "matmul222_optima.json").read_text())
    G = matmul(2, 2, 2)
    assert len(data["oneshot"]) == 6
    for M_text, opt in data["oneshot"].items():
        r = solve_io(G, int(M_text), "oneshot", time_limit=60, workers=1)
        assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", opt, opt)
        assert replay(G, r.schedule).io == opt
    for M_text, opt in data["recompute"].items():
        r = solve_io(G, int(M_text), "recompute", time_limit=8, workers=1)
        assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", opt, opt)  # the brute force's truth, every M
        assert replay(G, r.schedule).io == opt


def test_known_exact_facts():
    assert solve_io(chain(5), 2).io == 2  # docs/definitions.md section 2
    r = solve_io(fft(1), 3)
    assert (r.status, r.io) == ("OPTIMAL", 4)


def test_too_small_memory_is_infeasible_with_message():
    r = solve_io(fft(1), 2)
    assert r.status == "INFEASIBLE" and r.io is None and r.schedule is None
    assert "M >= 3" in r.message and "F1_0" in r.message
    r = solve_io(matmul(2, 2, 2), 2, "recompute")
    assert r.status == "INFEASIBLE"


def test_short_limits_label_only_what_they_prove():
    from spartition.core.registry import build

    G = build("attention-forward", n=2, d=2)
    r = solve_io(G, 4, "oneshot", workers=1, deterministic_time=0.05)  # the same work on any machine
    assert r.status in ("FEASIBLE", "UNKNOWN")
    assert trivial_lower_bound(G) <= r.lower_bound < r.io
    assert replay(G, r.schedule).io == r.io
    # a wall-clock limit stops wherever the machine got (the optimum 36 is proven in about 5 s here)
    r = solve_io(G, 4, "oneshot", workers=1, time_limit=1.0)
    assert trivial_lower_bound(G) <= r.lower_bound <= 36 <= r.io == replay(G, r.schedule).io
    assert (r.status == "OPTIMAL") == (r.lower_bound == r.io)
    r = solve_io(matmul(2, 2, 2), 4, formulation="baseline", deterministic_time=0.05)
    assert r.status in ("FEASIBLE", "UNKNOWN") and r.lower_bound <= 17


def test_recompute_is_labelled_within_cap():
    # matmul (1,2,1): recomputation cannot beat the trivial bound test; use a DAG where the bound is not met
    G = matmul(2, 2, 2)
    r = solve_io(G, 3, "recompute", time_limit=5, workers=1, recompute_events=14, formulation="events")
    assert r.status in ("OPTIMAL_WITHIN_CAP", "FEASIBLE")
    assert r.cap == {"events": 14, "harmless": False}
    assert r.lower_bound == trivial_lower_bound(G) < r.io
    assert replay(G, r.schedule).io == r.io


def test_deterministic_with_seed_and_deterministic_time():
    G = matmul(2, 2, 2)
    for workers in (1, 2):
        a = solve_io(G, 4, workers=workers, deterministic_time=0.1, seed=3)
        b = solve_io(G, 4, workers=workers, deterministic_time=0.1, seed=3)
        assert (a.status, a.io, a.lower_bound) == (b.status, b.io, b.lower_bound)
        assert a.schedule.moves == b.schedule.moves


def test_result_records_provenance():
    r = solve_io(matmul(2, 2, 2), 5, time_limit=30)
    d = r.to_dict()
    assert list(d)[:6] == ["status", "io", "lower_bound", "variant", "M", "wall_s"]
    assert d["status"] in STATUSES and d["ortools_version"]
    assert d["parameters"]["cp_sat"]["num_workers"] == 1
    assert d["parameters"]["options"]["seed"] == 0
    assert d["assumptions"] and d["cap"] == {"events": 12, "harmless": True}
    assert d["hint_io"] >= r.io == 14


def test_hint_meeting_the_trivial_bound_skips_the_solver():
    r = solve_io(matmul(2, 2, 2), 8)
    assert (r.status, r.io, r.solver_status) == ("OPTIMAL", 12, "SKIPPED")


def test_symmetry_precedences_are_backed_by_automorphisms():
    c = compact(matmul(2, 2, 2))
    order = [c.index[n] for m, n in greedy_schedule(c, 4).moves if m == "compute"]
    sb = symmetry_precedences(c, order)
    assert sb.complete and sb.group_order == 16  # rows, columns, summed index, transpose
    at = {v: k for k, v in enumerate(order)}
    for w, u in sb.pairs:
        assert at[w] < at[u]  # the hint order satisfies every precedence
    # the first node's orbit: all 8 products are equivalent
    first = sb.order[0]
    assert sum(1 for w, u in sb.pairs if w == first) == 7
    assert find_automorphism(c, [], first, sb.pairs[0][1]) is not None


def test_cli_solve_json(tmp_path, capsys):
    out = tmp_path / "s.json"
    code = main(["solve", "matmul:a=2,b=2,c=2", "--M", "5", "--json", "--schedule-out", str(out)])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert {k: data[k] for k in ("status", "io", "lower_bound", "variant", "M")} == {
        "status": "OPTIMAL", "io": 14, "lower_bound": 14, "variant": "oneshot", "M": 5,
    }
    assert "wall_s" in data
    assert main(["replay", "matmul:a=2,b=2,c=2", str(out), "--json"]) == 0
    code = main(["solve", "fft:k=1", "--M", "2"])
    assert code == 2
    assert "M >= 3" in capsys.readouterr().out


def test_unary_chain_pairs_of_attention_are_the_exp_nodes():
    from spartition.exact.formulations.order import unary_chain_pairs
    from spartition.core.registry import build

    c = compact(build("attention-forward", n=2, d=2))
    # S_ij = q_i0 k_j0 + q_i1 k_j1 (two single-use products) feeds exp alone: (sum, exp) pairs;
    # the row sum l_i -> 1/l_i is no pair (the operands exp(S_ij) have three uses each).
    assert unary_chain_pairs(c) == [(14, 15), (18, 19), (32, 33), (36, 37)]


def test_chain_dominance_keeps_the_optimum_with_live_operands():
    import networkx as nx

    from spartition.exact.formulations.order import unary_chain_pairs

    # u = f(a, b) -> w = g(u), while a and b are used again later: no dead operand, no pair
    G = nx.DiGraph([("a", "u"), ("b", "u"), ("u", "w"), ("a", "y"), ("b", "y"), ("w", "z"), ("y", "z")])
    assert unary_chain_pairs(compact(G)) == []
    # with a dead single-use operand p the pair is fixed, and the optimum is still exact
    H = nx.DiGraph([("a", "p"), ("b", "p"), ("p", "u"), ("c", "u"), ("u", "w"), ("c", "y"), ("a", "y"),
                    ("w", "z"), ("y", "z")])
    ch = compact(H)
    assert len(unary_chain_pairs(ch)) == 1
    for M in (3, 4):
        _check_against_brute(G, M, "oneshot")
        _check_against_brute(H, M, "oneshot")


def test_each_side_of_the_gap_names_its_method():
    # the trivial bound (inputs + outputs) meets the greedy schedule on a chain with room to spare
    r = solve_io(chain(5), 3, "oneshot", time_limit=10, workers=1)
    assert (r.status, r.io, r.bound_source) == ("OPTIMAL", 2, "trivial")
    # fft 4 points at M = 3: optimum 14 above the trivial 8, closed by the order model
    r = solve_io(fft(2), 3, "oneshot", time_limit=30, workers=1)
    assert (r.status, r.io, r.lower_bound, r.bound_source) == ("OPTIMAL", 14, 14, "order")
    r = solve_io(fft(2), 3, "recompute", time_limit=30, workers=1)
    assert (r.status, r.io, r.bound_source, r.formulation) == ("OPTIMAL", 14, "step-search", "step-search")
    assert r.to_dict()["bound_source"] == "step-search"
    # stopped by a deterministic budget (one worker): the order model's bound above the trivial 16 ...
    r = solve_io(fft(3), 4, "oneshot", time_limit=60, workers=1, deterministic_time=0.5)
    assert r.status == "FEASIBLE" and r.lower_bound > 16 and r.bound_source == "order"
    # ... and a run whose bound stays the trivial one
    from spartition.core.registry import build

    r = solve_io(build("attention-forward", n=2, d=2), 4, "oneshot", time_limit=60, workers=1, deterministic_time=0.5)
    assert (r.status, r.lower_bound, r.bound_source) == ("FEASIBLE", 16, "trivial")
    # the step search never reads a supplied bound: its proof stands without it
    r = solve_io(fft(2), 3, "recompute", lower_bound=10, time_limit=30, workers=1)
    assert (r.status, r.lower_bound, r.bound_source) == ("OPTIMAL", 14, "step-search")
    # a stopped run: whatever proved the bound is named, and "trivial" only for the trivial value
    for seed in range(8):
        G = random_dag(14, 0.3, 2, seed=seed)
        M = min_feasible_memory(G)
        r = solve_io(G, M, "recompute", time_limit=0.5, workers=1)
        assert (r.bound_source == "trivial") == (r.lower_bound == trivial_lower_bound(G)), seed
        assert r.schedule_source, seed


def test_the_problem_and_the_settings_apart_give_solve_ios_answer():
    import dataclasses
    import inspect

    from spartition.exact.solve import PebblingProblem, SolverSettings, solve

    # every keyword of solve_io is a field of SolverSettings with the same default, and nothing else is
    keywords = {k: p.default for k, p in inspect.signature(solve_io).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert keywords == {f.name: f.default for f in dataclasses.fields(SolverSettings)}
    with pytest.raises(TypeError):
        SolverSettings(10)  # keyword-only: a time limit cannot be taken for a worker count
    settings = SolverSettings(time_limit=20, workers=1, seed=3)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.seed = 4
    # one settings object, reused across problems: matmul 2x2x2 oneshot optima 25, 17 (docs/findings.md)
    G = matmul(2, 2, 2)
    for M, optimum in ((3, 25), (4, 17)):
        apart = solve(PebblingProblem(G, M, "oneshot"), settings)
        together = solve_io(G, M, "oneshot", time_limit=20, workers=1, seed=3)
        assert (apart.status, apart.io, apart.lower_bound) == (together.status, together.io, together.lower_bound) \
            == ("OPTIMAL", optimum, optimum)
        assert apart.parameters["options"] == together.parameters["options"] and apart.parameters["options"]["seed"] == 3
        assert replay(G, apart.schedule).io == optimum
