"""Minimum S-partitions, class capacities and I/O lower bounds, against brute force."""

import json
import math
from pathlib import Path

import numpy as np
import pytest

from spartition.families.classic.dag import chain, fft, matmul, random_dag, reduction
from spartition.core.bounds import min_feasible_memory
from spartition.cli.main import main
from spartition.core.dag import save_dag, strip_isolated
from spartition.partition.certificate import Partition, check_partition, load_partition, save_partition
from spartition.partition.brute import brute_class_capacity, brute_min_partition
from spartition.partition.capacity import class_capacity
from spartition.partition.minimum import greedy_partition, min_partition
from spartition.partition.weights import node_weights
from spartition.partition.lower_bounds import METHODS, io_lower_bounds

DATA = Path(__file__).resolve().parents[1] / "data"


def random_cases(count=100):
    """Seeded random DAGs of 3..9 nodes with varied density and in-degree."""
    for seed in range(count):
        n = 3 + seed % 7
        p = (0.35, 0.5, 0.7)[seed % 3]
        indeg = 1 + (seed // 3) % 3
        yield seed, random_dag(n, p=p, indeg=indeg, seed=seed)


# --- P(S): CP-SAT equals brute force ------------------------------------------------------


def test_min_partition_matches_brute_force_on_random_dags():
    checked = 0
    for seed, G in random_cases(100):
        for S in (1, 2, 3, 4):
            truth = brute_min_partition(G, S)
            assert check_partition(G, truth.partition, S).valid
            res = min_partition(G, S, time_limit=20, workers=1, seed=seed)
            assert res.status == "OPTIMAL", (seed, S)
            assert res.num_classes == res.lower_bound == truth.P, (seed, S, res.num_classes, truth.P)
            rep = check_partition(G, res.partition, S)
            assert rep.valid, (seed, S, rep.problems)
            assert all(c.given_dominator_ok for c in rep.classes)
            checked += 1
    assert checked == 400


def test_min_partition_hand_values():
    # 2-point FFT: S = 1 forces singletons; S = 2 takes everything in one class
    assert min_partition(fft(1), 1, workers=1).num_classes == 4
    assert min_partition(fft(1), 2, workers=1).num_classes == 1
    # a chain is one class for every S >= 1
    assert min_partition(chain(6), 1, workers=1).num_classes == 1
    # matmul (2,2,2): its 8 inputs dominate everything and its 4 outputs are the minimum set
    assert min_partition(matmul(2, 2, 2), 8, workers=1).num_classes == 1
    # the 4-leaf balanced tree: S = 2 splits the leaves in two halves plus the root
    assert min_partition(reduction(4, "tree"), 2, workers=1).num_classes == brute_min_partition(reduction(4, "tree"), 2).P == 3


def test_min_partition_strips_isolated_nodes():
    G = chain(3)
    G.add_node("iso", op="input")
    res = min_partition(G, 1, workers=1)
    assert res.num_classes == 1 and res.nodes == 3
    assert "iso" not in res.partition.classes[0]
    assert check_partition(G, res.partition).valid
    assert brute_min_partition(G, 1).P == 1


def test_min_partition_bad_S():
    with pytest.raises(ValueError, match="S = 0"):
        min_partition(chain(3), 0)


def test_greedy_is_valid_upper_bound():
    for seed, G in random_cases(30):
        for S in (1, 2, 3):
            g = greedy_partition(G, S)
            assert check_partition(G, g, S).valid
            assert len(g) >= brute_min_partition(G, S).P


# --- class capacity -------------------------------------------------------------------------


def test_capacity_matches_brute_force_on_random_dags():
    for seed, G in random_cases(60):
        for X in (1, 2, 3):
            for convex in (False, True):
                truth = brute_class_capacity(G, X, convex=convex)
                res = class_capacity(G, X, convex=convex, time_limit=20, workers=1, seed=seed)
                assert res.status == "OPTIMAL"
                assert res.capacity == res.upper_bound == truth, (seed, X, convex)
                rep = check_partition(G, Partition(X, [list(res.nodes)]))
                # the set itself satisfies P2 and P3 (P1 fails: it covers only part of V)
                assert not [p for p in rep.problems if p.rule in ("P2", "P3")]


def test_capacity_consistent_with_partitions():
    """ceil(|V| / U(X)) <= P(X) for unit weight, and U = |V| once X >= |V|."""
    for seed, G in random_cases(100):
        H = strip_isolated(G)
        n = H.number_of_nodes()
        if n == 0:
            continue
        for X in (1, 2, 3):
            U = class_capacity(G, X, convex=True, workers=1).upper_bound
            assert math.ceil(n / U) <= brute_min_partition(G, X).P
        assert class_capacity(G, n, workers=1).upper_bound == n


def test_capacity_weight_selector():
    G = matmul(2, 2, 2)
    w = node_weights(G, "op=mul")
    assert sum(w.values()) == 8
    # X products are their own dominator and minimum set, so U(X) >= X; X = 8 holds everything
    for X, U in ((1, 1), (2, 2), (8, 8)):
        assert class_capacity(G, X, weight="op=mul", workers=1).upper_bound == U
    # selector alternatives, and CP-SAT against brute force with a selector weight
    assert sum(node_weights(G, "op=mul|add").values()) == 12
    for seed, R in random_cases(40):
        for X in (1, 2):
            res = class_capacity(R, X, weight="op=op", convex=True, workers=1)
            assert res.upper_bound == res.capacity == brute_class_capacity(R, X, weight="op=op", convex=True)


def test_capacity_weight_on_attention():
    from spartition.core.registry import build

    G = build("attention-forward", n=2, d=1)  # a family of this package: a failure is a defect
    res = class_capacity(G, 4, weight="op=mul,tensor=QK", workers=1)
    assert res.total_weight == 4 and res.status == "OPTIMAL"
    assert res.upper_bound == 4  # Q_0, Q_1, K_0, K_1 dominate all four products


# --- I/O lower bounds ------------------------------------------------------------------------


def test_bound_records():
    bounds = io_lower_bounds(fft(2), 3, time_limit=10, workers=1)
    assert [b.method for b in bounds] == list(METHODS)
    for b in bounds:
        d = b.to_dict()
        assert set(d) >= {"value", "method", "proven", "status", "parameters", "solver_version", "wall_s"}
        # 4 inputs + 4 outputs; the whole 4-point FFT is one class of every partition asked here
        # (its 4 inputs dominate it, its 4 outputs are its minimum set, 4 <= X), so P = 1 and
        # the partition bounds are 0 (the tree reduction below has positive ones); no pair sum in an FFT
        assert b.proven and b.value == {"trivial": 8, "pair-sums": 8, "hong-kung": 0, "x-partition": 0,
                                        "capacity": 0}[b.method]
    hk = bounds[2]
    assert hk.parameters["S"] == 6 and hk.parameters["P"] == 1 and hk.value == 3 * (hk.parameters["P"] - 1)


def test_bounds_below_brute_force_on_random_dags():
    from spartition.exact.brute import brute_force

    positive = 0
    for seed, G in random_cases(100):
        M0 = max(1, min_feasible_memory(G))
        for M in (M0, M0 + 1):
            opt = min(brute_force(G, M, v).io for v in ("oneshot", "recompute"))
            bounds = io_lower_bounds(G, M, time_limit=20, workers=1, seed=seed)
            for b in bounds:
                assert b.proven
                assert b.value <= opt, (seed, M, b.method, b.value, opt)
            positive += any(b.value > 0 for b in bounds if b.method != "trivial")
    assert positive >= 5  # the partition bounds are not all vacuous on these DAGs


def test_bounds_below_brute_force_on_tree_reduction():
    from spartition.exact.brute import brute_force

    G = reduction(8, "tree")
    expected = {3: (15, {"hong-kung": 3, "x-partition": 4, "capacity": 4}), 4: (11, {"x-partition": 3})}
    for M, (opt, values) in expected.items():
        assert brute_force(G, M, "recompute").io == opt
        bounds = {b.method: b for b in io_lower_bounds(G, M, time_limit=20, workers=1)}
        assert all(b.value <= opt for b in bounds.values())
        for method, value in values.items():
            assert bounds[method].value == value


def _matmul_optima():
    # checked in (tests/data/matmul222_optima.json, with the command that computed it):
    # a missing or reshaped file is a failure, never a skip
    data = json.loads((DATA / "matmul222_optima.json").read_text())
    return {(variant, int(M)): int(io) for variant in ("oneshot", "recompute") for M, io in data[variant].items()}


def test_bounds_below_matmul222_optima():
    optima = _matmul_optima()
    assert optima, "no optima parsed from tests/data/matmul222_optima.json"
    G = matmul(2, 2, 2)
    compared = 0
    for M in range(3, 9):
        bounds = io_lower_bounds(G, M, time_limit=30, workers=2)
        for variant in ("oneshot", "recompute"):
            if (variant, M) not in optima:
                continue
            for b in bounds:
                assert b.value <= optima[(variant, M)], (variant, M, b.method, b.value)
                compared += 1
    assert compared >= 6 * len(METHODS)


def test_matmul222_hand_bounds():
    bounds = {b.method: b for b in io_lower_bounds(matmul(2, 2, 2), 3, time_limit=30, workers=2)}
    assert bounds["trivial"].value == 12
    assert bounds["hong-kung"].value == 3 * (min_partition(matmul(2, 2, 2), 6, workers=2).lower_bound - 1)


def test_bad_M_and_X():
    with pytest.raises(ValueError, match="M = 0"):
        io_lower_bounds(chain(3), 0)
    with pytest.raises(ValueError, match="X = 2"):
        io_lower_bounds(chain(3), 2, xs=[2, 3])


# --- command line --------------------------------------------------------------------------


def test_cli(tmp_path, capsys):
    dag = tmp_path / "fft.json"
    save_dag(fft(2), dag)
    cert = tmp_path / "cert.json"
    assert main(["partition", str(dag), "--S", "4", "-o", str(cert), "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["lower_bound"] == len(out["classes"]) == 1
    assert load_partition(cert).S == 4

    assert main(["check-partition", str(dag), str(cert), "--S", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["valid"] is True
    assert main(["check-partition", str(dag), str(cert), "--S", "3", "--json"]) == 1
    bad = json.loads(capsys.readouterr().out)
    assert bad["valid"] is False and {p["rule"] for p in bad["problems"]} == {"P2", "P3"}

    broken = tmp_path / "broken.json"
    broken.write_text("{nope")
    assert main(["check-partition", str(dag), str(broken)]) == 2
    capsys.readouterr()
    wrong = tmp_path / "wrong.json"
    save_partition(Partition(4, [["F0_0", "nonode"]]), wrong)
    assert main(["check-partition", str(dag), str(wrong)]) == 1
    assert "nonode" in capsys.readouterr().err

    assert main(["capacity", "matmul:a=2,b=2,c=2", "--X", "4", "--weight", "op=mul", "--json", "--workers", "1"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "OPTIMAL" and out["capacity"] == out["upper_bound"] == 4

    assert main(["bounds", str(dag), "--M", "3", "--json", "--workers", "1", "--time-limit", "10"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [b["method"] for b in out["bounds"]] == list(METHODS)
    assert all({"value", "method", "proven"} <= set(b) for b in out["bounds"])
    assert out["best"] == max(b["value"] for b in out["bounds"])


def test_isolated_nodes_give_no_partition_bound():
    """docs/definitions.md section 3: three isolated nodes and M = 1 must not give M * (P(2M) - 1) = 1."""
    import networkx as nx

    G = nx.DiGraph()
    for v in ("a", "b", "c"):
        G.add_node(v, op="input")
    bounds = io_lower_bounds(G, 1, workers=1)
    assert [b.value for b in bounds] == [0, 0, 0, 0, 0]
    assert min_partition(G, 2, workers=1).num_classes == 0


def test_capacity_layer_cuts_match_brute_force():
    """The redundant product-layer cuts never change U (unit weight: every two-input node is a product)."""
    from spartition.partition.cuts import product_layers

    layered = 0
    for seed, G in random_cases(60):
        for X in (1, 2, 3):
            truth = brute_class_capacity(G, X, convex=True)
            res = class_capacity(G, X, convex=True, time_limit=20, workers=1, seed=seed, layer_cuts=True)
            assert res.status == "OPTIMAL" and res.capacity == res.upper_bound == truth, (seed, X)
            layered += res.parameters["product_layers"] > 0
    assert layered > 0  # the cuts were exercised
    # matmul(2,2,2): two layers (one per summed index), each K_{2,2} between A and B entries
    from spartition.core.dag import compact

    C = compact(matmul(2, 2, 2))
    w = np.array([int(C.ops[v] == "mul") for v in range(C.n)])
    layers = product_layers(C, w)
    assert sorted((len(p), len(a), len(b)) for p, a, b in layers) == [(4, 2, 2), (4, 2, 2)]
    for X, U in ((2, 2), (4, 4), (8, 8)):
        assert class_capacity(matmul(2, 2, 2), X, weight="op=mul", workers=1, layer_cuts=True).upper_bound == U


def test_capacity_row_symmetry_on_attention():
    from spartition.errors import SpartitionError
    from spartition.families.attention.forward.symmetry import attention_row_blocks
    from spartition.core.registry import build

    G = build("attention-forward", n=3, d=2)
    blocks = attention_row_blocks(list(G))
    assert len(blocks) == 3 and all(len(b) == len(blocks[0]) for b in blocks)
    for X in (3, 5):
        plain = class_capacity(G, X, weight="op=mul,tensor=QK", convex=True, workers=1)
        sym = class_capacity(G, X, weight="op=mul,tensor=QK", convex=True, workers=1, symmetry="rows", layer_cuts=True)
        assert plain.status == sym.status == "OPTIMAL"
        assert plain.capacity == sym.capacity, X
        assert sym.parameters["symmetry_blocks"] == [3]
    # key rows are not interchangeable with query rows: refused, not cut
    with pytest.raises(SpartitionError, match="not an automorphism"):
        class_capacity(G, 3, weight="op=mul,tensor=QK", workers=1, symmetry=[["Q_0_0"], ["K_0_0"]])
    # key columns are symmetric only up to S: the softmax sums over j in a fixed order
    with pytest.raises(SpartitionError, match="not an automorphism"):
        class_capacity(G, 3, weight="op=mul,tensor=QK", workers=1, symmetry="cols")


def test_capacity_restriction_is_an_upper_bound():
    """restrict= solves a relaxation: its proven value is never below the true U (brute force)."""
    import networkx as nx

    checked = 0
    for seed, G in random_cases(60):
        H = strip_isolated(G)
        order = list(nx.topological_sort(H))
        if len(order) < 4:
            continue
        keep = order[len(order) // 2: len(order) // 2 + 2]
        closure = set(keep).union(*(nx.ancestors(H, v) for v in keep))
        weight = {v: int(v in closure) for v in H}
        for X in (1, 2):
            truth = brute_class_capacity(G, X, weight=weight, convex=True)
            res = class_capacity(G, X, weight=weight, convex=True, workers=1, restrict=keep)
            assert res.status == "RELAXED" and res.capacity == 0
            assert res.upper_bound >= truth, (seed, X)
            checked += 1
        # keeping every sink keeps the whole DAG with no exits: the relaxation is exact
        sinks = [v for v in H if H.out_degree(v) == 0]
        res = class_capacity(G, 2, convex=True, workers=1, restrict=sinks)
        assert res.upper_bound == brute_class_capacity(G, 2, convex=True)
    assert checked > 50
    with pytest.raises(ValueError, match="loses weighted node"):
        class_capacity(chain(3), 1, restrict=["c0"])


def test_capacity_restriction_on_attention():
    from spartition.core.registry import build

    G = build("attention-forward", n=2, d=2)
    keep = [v for v in G if v.startswith("S_") and "~" not in v]
    for X in (2, 4):
        full = class_capacity(G, X, weight="op=mul,tensor=QK", convex=True, workers=1)
        rel = class_capacity(G, X, weight="op=mul,tensor=QK", convex=True, workers=1, restrict=keep,
                             symmetry="rows+cols", layer_cuts=True)
        assert full.status == "OPTIMAL" and rel.status == "RELAXED"
        assert rel.upper_bound >= full.capacity
        assert rel.parameters["exits"] == 4 and rel.parameters["symmetry_blocks"] == [2, 2]


def test_greedy_partition_gives_up_at_stop():
    """Past ``stop`` the greedy start returns None, and min_partition reports UNKNOWN with the given bound only."""
    import time

    big = fft(9)  # 5,120 nodes: the clock is read every 1,024 steps
    assert greedy_partition(big, 4, stop=time.perf_counter() - 1) is None
    small = fft(4)  # past its deadline the greedy start takes entry nodes as dominators: still valid
    assert check_partition(small, greedy_partition(small, 4, deadline=time.perf_counter())).valid
    res = min_partition(big, 4, time_limit=1e-6, workers=1, lower=3, capacity_bound=False)
    assert (res.status, res.partition, res.num_classes, res.lower_bound) == ("UNKNOWN", None, None, 3)
    assert "did not finish" in res.parameters["skipped"]


def test_bounds_runs_past_the_deadline_are_not_started():
    """A time limit shorter than the first run: the later runs are left out and say so; nothing claims a proof."""
    G = fft(9)
    bounds = {b.method: b for b in io_lower_bounds(G, 4, time_limit=0.05, workers=1)}
    assert bounds["trivial"].value == 2 * 512
    for m in ("hong-kung", "x-partition", "capacity"):
        assert not bounds[m].proven and bounds[m].value == 0, m
    per_x = bounds["capacity"].parameters["per_X"]
    assert [r["X"] for r in per_x] == list(range(5, 17))
    assert all(r["status"] == "UNKNOWN" and r["U"] == r["w(V)"] == G.number_of_nodes() for r in per_x)
