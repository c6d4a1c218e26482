"""The sandwich (spartition.study.sandwich, ``spartition sandwich``): proven lower side, replayed upper side."""

import json
import subprocess
import sys

import pytest

from spartition.core.bounds import trivial_lower_bound
from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.errors import InfeasibleMemory
from spartition.families.attention.forward.bounds import forward_segment_bound
from spartition.study.sandwich import sandwich, sandwich_row


def test_the_exact_optimum_lies_inside():
    G = build("attention-forward", n=2, d=1)
    for M, opt in ((3, 24), (4, 15)):  # oneshot optima proven by CP-SAT (tests/families/attention/test_forward_segment_bound.py)
        row = sandwich_row(G, M)
        assert row.lower.value <= opt <= row.upper.value
        # a DAG this small gets the exact solver (issue 42): the sandwich closes on the optimum
        assert (row.lower.value, row.lower.method, row.upper.value) == (opt, "exact:solve", opt)
        plain = sandwich_row(G, M, algorithm_names=[], search=False, improve=False)
        assert trivial_lower_bound(G) == 8 == min(s.value for s in row.lowers) and plain.lower == row.lower


def test_each_side_is_the_best_of_its_candidates_and_the_upper_side_is_replayed():
    G = build("attention-forward", n=16, d=2)
    row = sandwich_row(G, 4, search=False, improve=False)
    # at M = 4 the pair-sum bound (3 I/O per score, 256 scores, plus V loaded and O stored) beats the segment count
    lowers = {s.method: s.value for s in row.lowers}
    assert lowers["formula:segment-forward-lower"] == forward_segment_bound(16, 2, 4).value == 711
    assert (row.lower.method, row.lower.value) == ("bound:pair-sums", 3 * 16 * 16 + 2 * 16 * 2)
    replayed = {}
    for name in ("greedy", "flash-forward", "square-tiling-forward", "standard-forward", "tiled-forward",
                 "small-memory-forward"):
        try:
            replayed[f"algorithm:{name}"] = replay(G, algorithm(name).generate(G, 4)).io
        except InfeasibleMemory:
            continue
    assert {s.method: s.value for s in row.uppers} == replayed
    assert row.upper.value == min(replayed.values()) and row.ratio == row.upper.value / row.lower.value
    assert any(s.startswith("flash-forward: ") for s in row.skipped)  # too little memory for its tiles


def test_search_and_improve_only_lower_the_upper_side_and_it_replays():
    G = build("attention-forward", n=16, d=2)
    # M = 4: below every published tiling, so the defaults leave greedy and the four-pebble schedule (9 n^2 + 6 n);
    # the search re-pebbles the orders made for larger M
    plain = sandwich_row(G, 4, search=False, improve=False)
    best = sandwich_row(G, 4)
    assert (plain.upper.method, plain.upper.value) == ("algorithm:small-memory-forward", 9 * 16 * 16 + 6 * 16)
    assert best.lower == plain.lower and best.upper.value < plain.upper.value
    assert best.upper.method.endswith("+improve") or "=" in best.upper.certificate  # options or improver named


def test_the_standard_game_row_re_chooses_the_evictions_too():
    # attention-forward n = 8, d = 2, M = 6: tiled-forward's best tiling replays at 432 in the standard game and
    # its compute order re-pebbled at 424 (the improver ran in the oneshot game only)
    from spartition.core.game import replay

    G = build("attention-forward", n=8, d=2)
    plain = sandwich_row(G, 6, variant="recompute", improve=False)
    row = sandwich_row(G, 6, variant="recompute")
    assert (plain.upper.value, row.upper.value) == (432, 424)
    assert row.upper.method == "algorithm:tiled-forward+improve" and row.lower == plain.lower
    assert row.schedule.variant == "recompute" and replay(G, row.schedule).io == 424


def test_nothing_is_started_that_as_long_as_the_last_schedule_would_end_past_the_row_deadline(monkeypatch):
    # attention-forward n = 256, d = 4, M = 4 at 60 s: one tile search takes 30 s there, and the row ran to 121 s
    # (a search started just before the deadline, then greedy's default, then an eviction pass)
    import time

    import spartition.study.sandwich as sw

    calls = []
    real = sw.searched_game_schedule

    def slow(G, alg, M, *a, **k):
        calls.append(alg.name)
        time.sleep(1.2)
        return real(G, alg, M, *a, **k)

    monkeypatch.setattr(sw, "searched_game_schedule", slow)
    row = sandwich_row(build("attention-forward", n=8, d=2), 8, variant="recompute", time_limit=2.0)
    # the first search ends at about 1.2 s; a second would end past 2 s, and so would an eviction pass
    assert len(calls) == 1 and row.time_limited
    assert sum(s.endswith("(tile search): time limit") for s in row.skipped) >= 2
    assert "improve: time limit" in row.skipped


def test_the_family_tile_searches_run_before_greedy(monkeypatch):
    # at attention-forward n = 256, d = 4, M = 4 greedy's default, run first, left the tile searches no time:
    # the row fell from 3.6x (square tiling made for M = 8) to 5.6x (greedy)
    import spartition.exact.search as search
    import spartition.study.sandwich as sw

    calls = []
    real_default, real_search = sw.game_schedule, search.best_schedule

    def default(G, alg, M, *a, **k):
        calls.append(("default", alg.name))
        return real_default(G, alg, M, *a, **k)

    def searched(G, alg, M, *a, **k):
        calls.append(("search", alg.name))
        return real_search(G, alg, M, *a, **k)

    monkeypatch.setattr(sw, "game_schedule", default)
    monkeypatch.setattr(search, "best_schedule", searched)
    sw.sandwich_row(build("attention-forward", n=4, d=2), 8, improve=False)
    generic = [k for k, call in enumerate(calls) if call[1] == "greedy"]
    own = [k for k, call in enumerate(calls) if call[1] != "greedy"]
    assert generic and own and max(own) < min(generic)
    assert any(call == ("search", "tiled-forward") for call in calls)


def test_the_settings_apart_from_the_problem_give_the_same_rows():
    import dataclasses

    from spartition.errors import ParameterError
    from spartition.study.sandwich import SandwichSettings

    G = build("attention-forward", n=16, d=2)
    plain = SandwichSettings(search=False, improve=False)
    (row,) = sandwich(G, [4], settings=plain)
    assert row == sandwich_row(G, 4, search=False, improve=False) == sandwich_row(G, 4, settings=plain)
    # the defaults alone: no published tiling fits M = 4, the four-pebble schedule does
    assert row.upper.method == "algorithm:small-memory-forward"
    only = dataclasses.replace(plain, algorithm_names=["tiled-forward"])
    assert [(s.method, s.value) for s in sandwich_row(G, 8, settings=only).uppers] == [("algorithm:tiled-forward", 1088)]
    with pytest.raises(ParameterError, match="not both .*search"):
        sandwich_row(G, 4, search=False, settings=plain)


def test_ctrl_c_in_a_row_keeps_what_the_row_had(monkeypatch, capsys):
    # Ctrl-C lands in the tile search, after every algorithm's defaults were replayed: the row keeps them and the
    # bounds found by then (the campaign's SIGINT sandwich printed nothing at all when its only row was cut)
    import spartition.exact.search as search
    from spartition.cli.main import main
    from spartition.study.sandwich import INTERRUPTED_NOTE, RowInterrupted

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    G = build("attention-forward", n=16, d=2)
    defaults = {}
    # greedy, a generic algorithm, runs after the family's tile searches, so Ctrl-C there comes before it
    for name in ("flash-forward", "tiled-forward", "square-tiling-forward", "standard-forward", "small-memory-forward",
                 "row-sums-first-forward"):
        try:
            defaults[f"algorithm:{name}"] = replay(G, algorithm(name).generate(G, 8, "recompute")).io
        except InfeasibleMemory:
            continue  # flash-forward's blocks need M >= 12
    assert len(defaults) == 5
    monkeypatch.setattr(search, "best_schedule", interrupted)
    found = []
    with pytest.raises(RowInterrupted) as stop:
        sandwich(G, [8, 16], "recompute", time_limit=60, found=found)
    (row,) = found
    assert row is stop.value.row and row.M == 8 and row.skipped == (INTERRUPTED_NOTE,)
    # under the deadline a default whose closed form is above one already made is not made (cheapest first)
    kept = {s.method: s.value for s in row.uppers}
    assert kept.items() <= defaults.items() and row.upper.value == min(defaults.values()) == min(kept.values())
    assert replay(G, row.schedule).io == row.upper.value
    assert row.lower.value <= row.upper.value and row.lower.value >= trivial_lower_bound(G)

    assert main(["sandwich", "attention-forward:n=16,d=2", "--M", "8,16", "--variant", "recompute",
                 "--time-limit", "60", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert out["interrupted"] and [r["M"] for r in out["rows"]] == [8]
    assert out["rows"][0]["skipped"] == [INTERRUPTED_NOTE] and out["rows"][0]["upper"]["value"] == row.upper.value


def test_a_bound_proven_for_oneshot_only_says_nothing_of_recompute():
    G = build("attention-forward", n=16, d=2)
    row = sandwich_row(G, 4, variant="recompute")
    lowers = {s.method: s for s in row.lowers}
    assert "formula:segment-forward-lower" not in lowers
    # the Q K^T and A V count over designated events holds with recomputation: 558 (oneshot's count gives 711);
    # the pair-sum bound is proven for the standard game and is the larger at M = 4
    assert lowers["formula:segment-forward-recompute-lower"].value == 558
    assert (row.lower.method, row.lower.value, row.lower.game) == ("bound:pair-sums", 832, "recompute")


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
    lower = doc["rows"][0]["lower"]
    assert (lower["value"], lower["method"], lower["kind"], lower["status"], lower["game"], lower["bound"]) == \
        (832, "bound:pair-sums", "lower", "CLOSED_FORM", "oneshot", 832)
    assert not lower["time_limited"]
    lower = doc["rows"][1]["lower"]  # M = 8: beyond the pair-sum lemma
    assert (lower["value"], lower["method"]) == (forward_segment_bound(16, 2, 8).value, "formula:segment-forward-lower")
    assert lower["certificate"].startswith("theorem: ") and not lower["time_limited"]
    assert doc["rows"][0]["upper"]["kind"] == "upper" and doc["rows"][0]["upper"]["status"] == "VALID"
    assert all(r["upper"]["value"] >= r["lower"]["value"] for r in doc["rows"])


def _study(variant="oneshot", **kw):
    from spartition.study.studies import StudySpec, compare

    return compare(StudySpec("attention-forward", {"n": 16, "d": 2}, Ms=(4, 8), exact=(), bounds=False,
                             variant=variant, **kw))


def test_a_study_row_has_the_same_sides_as_its_cells():
    from spartition.study.sandwich import row_sandwich

    study = _study()
    for row, M in zip(study.rows, (4, 8)):
        s = row_sandwich(row)
        assert (s.lower.value, s.lower.method) == (forward_segment_bound(16, 2, M).value, "formula:segment-forward-lower")
        G = build("attention-forward", n=16, d=2)
        replayed = {}
        for name in row.algorithms:
            try:
                replayed[name] = replay(G, algorithm(name).generate(G, M)).io
            except InfeasibleMemory:
                continue
        best = min(replayed, key=lambda a: (replayed[a], a))
        assert (s.upper.value, s.upper.method) == (replayed[best], f"algorithm:{best}")
        assert not s.time_limited
    assert [r["lower"]["value"] for r in study.to_dict()["sandwich"]] == [711, 406]  # forward_segment_bound(16, 2, M)
    # small-memory-forward at M = 4: 9 n^2 + 6 n; tiled-forward at M = 8: a = 1, K_j and V_j streamed, 4 n^2 + 2 n d
    assert [r["upper"]["value"] for r in study.to_dict()["sandwich"]] == [2400, 1088]


def test_a_study_sandwich_leaves_out_a_bound_of_the_other_game():
    from spartition.study.sandwich import row_sandwich

    lows = [row_sandwich(r).lower for r in _study("recompute").rows]
    # the count valid with recomputation (above 4 n d = 128), never the oneshot segment bound (711 and 406)
    assert [(s.value, s.method) for s in lows] == [(558, "formula:segment-forward-recompute-lower"),
                                                   (304, "formula:segment-forward-recompute-lower")]


def test_an_exact_row_stopped_by_its_limit_is_a_lower_side_and_labels_the_sandwich():
    from spartition.study.sandwich import row_sandwich
    from spartition.study.store import ResultKey, StoredResult
    from spartition.study.verdicts import assemble_row

    key = ResultKey("h", 3, "oneshot", "exact:cpsat")
    rows = [StoredResult(key, "FEASIBLE", 31.0, 26.4, False, 10.0, 10.1, {}),
            StoredResult(ResultKey("h", 3, "oneshot", "algorithm:greedy"), "VALID", 33.0, None, True, None, 0.1, {})]
    s = row_sandwich(assemble_row("chain", {"n": 3}, 3, "oneshot", rows))
    assert (s.lower.value, s.lower.method) == (27, "exact:cpsat")  # the bound 26.4 rounded up: I/O is an integer
    assert (s.upper.value, s.upper.method) == (31, "exact:cpsat") and s.time_limited


def test_compare_text_and_the_html_report_show_the_sandwich():
    from spartition.study.html import render_html
    from spartition.study.tables import render_rows

    study = _study()
    text = render_rows(study.rows)
    block = text[text.index("Sandwich"):]
    assert "711  formula:segment-forward-lower   2400  algorithm:small-memory-forward" in block
    assert "3.38" in block  # 2400 / 711
    page = render_html([("attention-forward", {"n": 16, "d": 2}, "oneshot", study.rows)], figures=False)
    assert "<h3>Sandwich</h3>" in page and "formula:segment-forward-lower" in page and "3.38" in page


def test_under_a_deadline_a_default_above_one_made_is_not_made(monkeypatch):
    # defaults cheapest closed form first; standard-forward's closed form is above the cheapest schedule made, so
    # under a deadline it is not made (at n = 256 a default takes 10-20 s), and the row says so
    import spartition.study.sandwich as sw
    from spartition.core.registry import algorithms

    G = build("attention-forward", n=8, d=2)
    p = G.graph["params"]
    forms = {name: a.io_formula(p, 8) for name, a in algorithms().items()
             if a.applies_to("attention-forward", "recompute") and a.io_formula is not None and "*" not in a.families
             and (a.min_memory is None or a.min_memory(p) <= 8)}
    cheapest = min(forms, key=forms.get)
    made = []
    real = sw.game_schedule
    monkeypatch.setattr(sw, "game_schedule", lambda G, alg, *a, **k: made.append(alg.name) or real(G, alg, *a, **k))
    row = sandwich_row(G, 8, variant="recompute", time_limit=600, search=False, improve=False)
    assert made[0] == cheapest and "standard-forward" not in made
    note = f"standard-forward (default): its closed form {forms['standard-forward']} is above {forms[cheapest]}, not made"
    assert note in row.skipped and forms["standard-forward"] > forms[cheapest]
    made.clear()
    full = sandwich_row(G, 8, variant="recompute", search=False, improve=False)  # no deadline: every default made
    assert "standard-forward" in made and "algorithm:standard-forward" in {s.method for s in full.uppers}
    assert full.upper.value == row.upper.value == forms[cheapest]


def test_no_closed_form_is_read_for_a_dag_its_label_does_not_describe():
    from spartition.study.game_schedules import default_closed_form

    tiled = algorithm("tiled-forward")
    G = build("attention-forward", n=4, d=2)
    assert default_closed_form(tiled, G, 8) == tiled.io_formula(G.graph["params"], 8) == replay(G, tiled.generate(G, 8)).io
    other = build("attention-forward", n=5, d=2)
    other.graph.update(params=dict(G.graph["params"]))  # a file labelled n = 4 holding the n = 5 DAG
    assert default_closed_form(tiled, other, 8) is None
    assert default_closed_form(algorithm("greedy"), G, 8) is None
    (row,) = sandwich(other, [8], "recompute", time_limit=60, improve=False)
    assert not any(s.endswith(", not made") for s in row.skipped)
