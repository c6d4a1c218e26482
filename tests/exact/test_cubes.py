"""Cube-and-conquer (spartition.exact.cubes): the cubes partition the order model, so their least optimum is the truth."""

from __future__ import annotations

import time

import pytest

pytest.importorskip("pysat")

from spartition.core.bounds import min_feasible_memory
from spartition.core.dag import compact
from spartition.core.game import replay
from spartition.core.registry import build
from spartition.core.symmetry import symmetry_precedences
from spartition.errors import ParameterError
from spartition.exact.brute import brute_force
from spartition.exact.cubes import cube_search, cubes_of, split_pairs
from spartition.exact.formulations.order import order_ancestors
from spartition.exact.formulations.order_cnf import decode_order_cnf, order_cnf
from spartition.exact.maxsat import add_cube, rc2_solve
from spartition.exact.solve import solve_io
from spartition.families.classic.dag import random_dag


def _cases(count, first_seed):
    for seed in range(first_seed, first_seed + count):
        G = random_dag(4 + seed % 6, p=0.5, indeg=2 + seed % 2, seed=seed)
        yield seed, G, max(min_feasible_memory(G), 1) + seed % 2


def test_the_least_cube_optimum_is_the_brute_force_optimum_on_random_dags():
    split = 0
    for seed, G, M in _cases(150, first_seed=2000):
        c = compact(G)
        truth = brute_force(G, M, "oneshot").io
        pairs = split_pairs(c, 2)
        anc = order_ancestors(c)
        assert all(not (anc[a] >> b & 1) and not (anc[b] >> a & 1) for a, b in pairs)  # the DAG leaves them open
        optima = []
        for cube in cubes_of(pairs):
            oc = order_cnf(c, M, symmetry_pairs=symmetry_precedences(c).pairs)
            if not add_cube(oc, cube):
                continue
            bounds = []
            cost, model = rc2_solve(oc, bounds.append)
            if model is None:  # symmetry or dominance leaves this cube empty
                continue
            schedule = decode_order_cnf(oc, model)
            assert replay(G, schedule).io == cost >= truth  # a cube holds schedules, none below the truth
            assert all(b <= cost for b in bounds)
            order = [v for mv, v in schedule.moves if mv == "compute"]
            assert all(order.index(c.names[a]) < order.index(c.names[b]) for a, b in cube)  # it obeys the cube
            optima.append(cost)
        assert min(optima) == truth, seed  # the cubes cover every model: no optimum is cut off
        split += len(pairs) > 0
    assert split >= 120  # most of these DAGs have unordered pairs to split on


@pytest.mark.slow
def test_cube_search_in_processes_proves_known_optima():
    for G, M, opt in ((build("fft", k=2), 3, 14), (build("attention-forward", n=2, d=1), 4, 15)):
        out = cube_search(compact(G), M, 120.0, time.perf_counter(), workers=2, depth=2)
        assert (out["io"], out["bound"], out["closed"]) == (opt, opt, True)
        assert replay(G, out["schedule"]).io == opt and len(out["cubes"]) == 4
        assert min(o.io for o in out["cubes"] if o.io is not None) == opt


def test_cut_short_the_bound_is_none_or_below_the_truth():
    G = build("attention-forward", n=2, d=1)
    out = cube_search(compact(G), 4, 0.5, time.perf_counter(), workers=1, depth=3)
    assert not out["closed"] and (out["bound"] is None or out["bound"] <= 15)
    assert any(o.status in ("NOT_RUN", "TIME_LIMIT") for o in out["cubes"])


def test_solve_io_engine_cubes():
    G = build("attention-forward", n=2, d=1)
    r = solve_io(G, 4, "oneshot", engine="cubes", cube_depth=2, workers=2, time_limit=120, hint=None)
    assert (r.status, r.io, r.lower_bound, r.bound_source) == ("OPTIMAL", 15, 15, "maxsat-cubes")
    assert r.to_dict()["parameters"]["cubes"]["depth"] == 2 and r.to_dict()["parameters"]["options"]["cube_depth"] == 2
    with pytest.raises(ParameterError, match="cube_depth must be an integer from 1 to 10"):
        solve_io(G, 4, "oneshot", engine="cubes", cube_depth=0)


def test_split_pairs_is_deterministic_and_uses_each_node_once():
    c = compact(build("attention-forward", n=2, d=2))
    pairs = split_pairs(c, 4)
    assert pairs == split_pairs(c, 4) and len(pairs) == 4
    assert len({v for p in pairs for v in p}) == 8
    assert split_pairs(compact(build("chain", n=5)), 3) == ()  # a chain orders everything
    assert cubes_of(()) == [()] and len(cubes_of(pairs)) == 16
