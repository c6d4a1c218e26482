"""The campaign's independent brute force agrees with the project's on random DAGs with marked outputs."""

import importlib.util
import sys
from pathlib import Path

import pytest

from spartition import brute_force

_spec = importlib.util.spec_from_file_location(
    "campaign", Path(__file__).resolve().parents[2] / "benchmarks" / "campaign.py")
campaign = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("campaign", campaign)  # its dataclasses look their module up by name
_spec.loader.exec_module(campaign)


def test_the_independent_brute_force_knows_the_stated_facts():
    campaign.self_test()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("variant", ["oneshot", "recompute"])
def test_the_independent_brute_force_agrees_with_the_project_s(seed, variant):
    G = campaign.random_dag(6, seed=seed, mark=True)
    M = 1 + max(len(G.pred[v]) for v in G if G.pred[v])
    assert campaign.independent_optimum(G, M, variant) == brute_force(G, M, variant).io


def test_the_mlp_marks_its_forward_outputs():
    G = campaign.mlp()
    assert len(G) == 33 and [v for v in G if G.nodes[v].get("output")] == ["y0", "y1"]
    assert all(G.succ[v] for v in ("y0", "y1"))
