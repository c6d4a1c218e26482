"""The sandwich (spartition.study.sandwich, ``spartition sandwich``): proven lower side, replayed upper side."""

import json
import subprocess
import sys

import pytest

from spartition.core.bounds import trivial_lower_bound
from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.families.attention_lower import forward_segment_bound
from spartition.study.sandwich import sandwich, sandwich_row


def test_the_exact_optimum_lies_inside():
    G = build("attention-forward", n=2, d=1)
    for M, opt in ((3, 24), (4, 15)):  # oneshot optima proven by CP-SAT (tests/test_segment_bound.py)
        row = sandwich_row(G, M)
        assert row.lower.value <= opt <= row.upper.value
        assert row.lower.value == trivial_lower_bound(G) == 8 and row.lower.method == "trivial"


def test_each_side_is_the_best_of_its_candidates_and_the_upper_side_is_replayed():
    G = build("attention-forward", n=16, d=2)
    row = sandwich_row(G, 4, search=False, improve=False)
    assert row.lower.method == "formula:segment-forward-lower"
    assert row.lower.value == forward_segment_bound(16, 2, 4).value
    replayed = {}
    for name in ("greedy", "flash-forward", "square-tiling-forward", "standard-forward", "tiled-forward"):
        try:
            replayed[f"algorithm:{name}"] = replay(G, algorithm(name).generate(G, 4)).io
        except InfeasibleMemory:
            continue
    assert {s.method: s.value for s in row.uppers} == replayed
    assert row.upper.value == min(replayed.values()) and row.ratio == row.upper.value / row.lower.value
    assert any(s.startswith("flash-forward: ") for s in row.skipped)  # too little memory for its tiles


def test_search_and_improve_only_lower_the_upper_side_and_it_replays():
    G = build("attention-forward", n=16, d=2)
    plain = sandwich_row(G, 8, search=False, improve=False)
    best = sandwich_row(G, 8)
    assert best.lower == plain.lower and best.upper.value < plain.upper.value
    assert best.upper.method.endswith("+improve") or "=" in best.upper.certificate  # options or improver named


def test_a_bound_proven_for_oneshot_only_says_nothing_of_recompute():
    G = build("attention-forward", n=16, d=2)
    row = sandwich_row(G, 4, variant="recompute")
    assert row.lower.method == "trivial" and "formula:segment-forward-lower" not in {s.method for s in row.lowers}


def test_a_spent_time_limit_is_labelled():
    G = build("attention-forward", n=8, d=2)
    (row,) = sandwich(G, [4], time_limit=1e-9)
    assert row.upper is None and row.time_limited and row.ratio is None
    assert all(s.endswith(": time limit") for s in row.skipped) and len(row.skipped) >= 4


def test_cli_json():
    out = subprocess.run([sys.executable, "-m", "spartition", "sandwich", "attention-forward:n=16,d=2", "--M", "4,8",
                          "--json"], capture_output=True, text=True, check=True).stdout
    doc = json.loads(out)
    assert [r["M"] for r in doc["rows"]] == [4, 8]
    assert doc["rows"][0]["lower"] == {"value": forward_segment_bound(16, 2, 4).value, "method": "formula:segment-forward-lower",
                                       "certificate": doc["rows"][0]["lower"]["certificate"]}
    assert all(r["upper"]["value"] >= r["lower"]["value"] for r in doc["rows"])
