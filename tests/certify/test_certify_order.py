"""Certificates from the order CNF (spartition.certify.order_encoding): refuted below the truth, satisfiable at it."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("pysat")

from spartition.certify.bundle import BundleError, check_bundle
from spartition.certify.certify import certify_optimum
from spartition.certify.order_encoding import ORDER_REDUCTIONS, order_budget_cnf
from spartition.certify.sat import solve_cnf
from spartition.core.bounds import min_feasible_memory
from spartition.core.game import replay
from spartition.exact.brute import brute_force
from spartition.exact.formulations.order_cnf import decode_order_cnf
from spartition.families.attention.forward.dag import attention_forward
from spartition.families.classic.dag import matmul, random_dag


def test_budget_cnf_against_brute_force():
    # both directions: no model below the optimum (the reductions keep one), a model at it that replays
    cases = 0
    for seed in range(60):
        G = random_dag(3 + seed % 7, p=0.5, indeg=2 + seed % 2, seed=seed)
        for M in (max(min_feasible_memory(G), 1), max(min_feasible_memory(G), 1) + 1):
            truth = brute_force(G, M, "oneshot").io
            if truth > 0:
                assert not solve_cnf(order_budget_cnf(G, M, truth - 1)[0]).satisfiable
            f, oc = order_budget_cnf(G, M, truth)
            out = solve_cnf(f)
            assert out.satisfiable
            assert replay(G, decode_order_cnf(oc, out.model)).io <= truth
            cases += 1
    assert cases == 120


@pytest.mark.parametrize("G, M, opt", [(matmul(2, 2, 2), 3, 25), (matmul(2, 2, 2), 4, 17),
                                       (attention_forward(2, 1), 4, 15), (attention_forward(2, 1), 5, 11)])
def test_certified_known_optima(tmp_path, G, M, opt):
    r = certify_optimum(G, M, out=tmp_path / "b", time_limit=30, encoding="order")
    assert (r["kind"], r["io"]) == ("pebbling-order", opt)
    rep = check_bundle(tmp_path / "b")
    assert rep.status == "OPTIMAL" and f"is {opt} (red-blue pebble game" in rep.statement
    assert "given the reductions of the order model" in rep.statement
    assert "chain dominance" in rep.statement and "no symmetry breaking" in rep.statement
    assert rep.details["proof"]["additions"] > 0


def test_a_bundle_with_other_reductions_is_refused(tmp_path):
    certify_optimum(matmul(2, 2, 2), 4, out=tmp_path / "b", time_limit=30, encoding="order")
    doc_path = tmp_path / "b" / "certificate.json"
    doc = json.loads(doc_path.read_text())
    doc["reductions"] = list(ORDER_REDUCTIONS[:-1])
    doc_path.write_text(json.dumps(doc))
    with pytest.raises(BundleError, match="reductions are not those of this checker"):
        check_bundle(tmp_path / "b")


def test_order_encoding_is_oneshot_only():
    with pytest.raises(ValueError, match="oneshot schedules only"):
        certify_optimum(matmul(2, 2, 2), 4, "recompute", encoding="order")
    with pytest.raises(ValueError, match="unknown encoding 'lp'"):
        certify_optimum(matmul(2, 2, 2), 4, encoding="lp")
