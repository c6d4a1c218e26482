"""Tightness studies: rows, verdicts, caching, rendering, the compare command."""

import json

import pytest

from spartition.cli.main import main
from spartition.study.formulas import FormulaValue
from spartition.study.store import ResultKey, ResultStore, StoredResult
from spartition.study.studies import (
    StudyRow,
    StudySpec,
    assemble_row,
    compare,
    default_memories,
    format_exact,
    verdicts,
)
from spartition.study.tables import render_rows, rows_to_csv

FWD = {"n": 2, "d": 1}


def res(method, status, value, bound=None, proven=True, tl=None, record=None):
    return StoredResult(ResultKey("h", 5, "oneshot", method), status, value, bound, proven, tl, 0.1, record or {})


def fv(name, kind, value, constants="explicit", applies=True):
    return FormulaValue(name, "attention-forward", kind, value, applies, constants, "Paper", "Thm 1", "every M",
                        "expr", 5, {})


def row(results, formulas=()):
    return assemble_row("attention-forward", FWD, 5, "oneshot", results, "h") if not formulas else _with(results, formulas)


def _with(results, formulas):
    r = assemble_row("attention-forward", FWD, 5, "oneshot", results, "h")
    r2 = StudyRow(r.family, r.params, r.M, r.variant, r.dag_hash, r.exact, r.bounds, r.algorithms, tuple(formulas))
    v, ratios = verdicts(r2)
    return StudyRow(**{**r2.__dict__, "verdicts": v, "ratios": ratios})


def kinds(r):
    return [v.kind for v in r.verdicts]


def test_default_memories_of_the_builtin_family():
    from spartition.core.registry import build

    assert default_memories(build("attention-forward", **FWD)) == [3, 4, 5, 6, 7, 8]
    assert default_memories(build("chain", n=4)) == [2]


def test_forward_n2_d1_at_M5_brute_force():
    # optimum 11 by exhaustive state search; trivial bound 4nd = 8; greedy 13
    s = compare(StudySpec("attention-forward", FWD, Ms=(5,), exact=("brute",), algorithms=("greedy", "standard-forward")))
    (r,) = s.rows
    assert r.optimum == 11 and r.exact["brute"].status == "OPTIMAL"
    assert r.bounds["trivial"].value == 8 and all(b.value <= 11 for b in r.bounds.values())
    assert r.algorithms["greedy"].value == 13 and r.algorithms["standard-forward"].value == 34
    assert "violated" not in kinds(r) and "tight" not in kinds(r)
    assert r.ratios["greedy/opt"] == pytest.approx(13 / 11, abs=1e-4)
    assert r.ratios["opt/lower"] == pytest.approx(11 / 8, abs=1e-4)
    # the asymptotic formulas are shown but never judged; the explicit trivial-forward one applies
    by = {f.name: f for f in r.formulas}
    assert by["trivial-forward"].value == 8 and by["sy-lower"].constants == "asymptotic"


def test_tight_and_cache(tmp_path):
    spec = StudySpec("chain", {"n": 4}, Ms=(2, 3), exact=("brute",), bound_time_limit=5)
    with ResultStore(tmp_path / "r.sqlite") as st:
        s1 = compare(spec, store=st)
        assert (s1.computed, s1.cached) == (6, 0)
        assert [r.optimum for r in s1.rows] == [2, 2]
        assert all("tight" in kinds(r) for r in s1.rows)
        s2 = compare(spec, store=st)
        assert (s2.computed, s2.cached) == (0, 6)
        assert [r.to_dict()["optimum"] for r in s2.rows] == [2, 2]


def test_violated_lower_bound_above_an_algorithm():
    r = row([res("exact:cpsat", "OPTIMAL", 10, 10), res("bound:x-partition", "OPTIMAL", 12, 12),
             res("algorithm:greedy", "VALID", 11)])
    msgs = [v.message for v in r.verdicts if v.kind == "violated"]
    assert any("lower bound x-partition = 12 > 10" in m for m in msgs)
    assert any("lower bound x-partition = 12 > 10" in m for m in msgs)


def test_violated_algorithm_below_optimum_and_mismatch():
    r = row([res("exact:cpsat", "OPTIMAL", 10, 10), res("algorithm:flash", "VALID", 9, record={"io_formula": 12})])
    assert kinds(r).count("violated") >= 1 and "mismatch" in kinds(r)
    assert any("flash I/O 9 < proven optimum 10" in v.message for v in r.verdicts)


def test_exact_methods_disagree():
    r = row([res("exact:cpsat", "OPTIMAL", 10, 10), res("exact:brute", "OPTIMAL", 11, 11)])
    assert any("prove different optima" in v.message for v in r.verdicts)


def test_formulas_only_explicit_ones_in_regime_can_be_violated():
    base = [res("exact:cpsat", "OPTIMAL", 10, 10), res("algorithm:greedy", "VALID", 10)]
    assert kinds(_with(base, [fv("asym", "lower", 50.0, "asymptotic")])) == []
    assert kinds(_with(base, [fv("out", "lower", 50.0, applies=False)])) == []
    r = _with(base, [fv("paper-lb", "lower", 12.0)])
    assert kinds(r) == ["violated"] and "paper-lb" in r.verdicts[0].message
    r = _with(base, [fv("paper-ub", "upper", 9.0)])
    assert kinds(r) == ["violated"] and "published upper bound fails" in r.verdicts[0].message


def test_unproven_exact_is_labelled_and_not_an_optimum():
    e = res("exact:cpsat", "FEASIBLE", 31, 27, proven=False, tl=10.0)
    assert format_exact(e) == "31 (FEASIBLE, bound 27, time limit 10 s)"
    r = row([e, res("algorithm:greedy", "VALID", 31)])
    assert r.optimum is None and r.lower == 27 and r.upper == 31
    assert "tight" not in kinds(r)


def test_rendering_formats():
    s = compare(StudySpec("chain", {"n": 3}, Ms=(2,), exact=("brute",), bounds=False))
    text = render_rows(s.rows, "text", "chain")
    assert "optimum [brute]" in text and "2 (OPTIMAL)" in text
    md = render_rows(s.rows, "markdown")
    assert md.splitlines()[0].startswith("| M | optimum [brute]")
    lines = rows_to_csv(s.rows).splitlines()
    head = lines[0].split(",")
    assert head[:4] == ["family", "params", "variant", "M"]
    assert lines[1].split(",")[head.index("exact:brute")] == "2.0"
    data = json.loads(render_rows(s.rows, "json"))
    assert data[0]["optimum"] == 2.0


def test_cli_compare_json_and_markdown(tmp_path, capsys):
    store = str(tmp_path / "r.sqlite")
    code = main(["compare", "chain", "n=3", "--M", "2..3", "--exact", "brute", "--no-bounds", "--jobs", "1",
                 "--store", store, "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and [r["optimum"] for r in data["rows"]] == [2.0, 2.0]
    code = main(["compare", "chain", "n=3", "--M", "2", "--exact", "brute", "--no-bounds", "--jobs", "1",
                 "--store", store, "--markdown"])
    out = capsys.readouterr().out
    assert code == 0 and "| 2 | 2 (OPTIMAL) |" in out and "0 tasks computed, 2 cached" in out


def test_cli_compare_bad_family(capsys):
    assert main(["compare", "nope", "--no-store"]) == 2


def test_longer_time_limit_recomputes_a_feasible_row(tmp_path):
    from spartition.study.studies import exact_available, plan_tasks

    assert exact_available("cpsat")  # ortools is a dependency, not an extra
    spec = StudySpec("chain", {"n": 4}, Ms=(2,), exact=("cpsat",), bounds=False, algorithms=(), time_limit=5)
    (task,) = plan_tasks(spec)
    (key,) = task.keys()
    with ResultStore(tmp_path / "r.sqlite") as st:
        # a row as a time-limited run would have left it
        st.put(StoredResult(key, "FEASIBLE", 3.0, 1.0, False, 5.0, 5.0, {}, family="chain", family_params={"n": 4}))
        s = compare(spec, store=st)
        assert s.cached == 1 and s.rows[0].optimum is None
        assert format_exact(s.rows[0].exact["cpsat"]) == "3 (FEASIBLE, bound 1, time limit 5 s)"
        from dataclasses import replace

        s = compare(replace(spec, time_limit=30), store=st)
        assert s.computed == 1 and s.rows[0].optimum == 2
        assert st.get(key, 30).status == "OPTIMAL" and st.count() == 1


@pytest.mark.parametrize("field,value", [
    ("time_limit", float("nan")), ("time_limit", 0), ("time_limit", -3.0), ("time_limit", float("inf")),
    ("bound_time_limit", float("nan")), ("workers", 0), ("workers", -1), ("seed", 2**40), ("seed", -1),
    ("brute_max_states", 0), ("Ms", (0,)), ("Ms", ()), ("Ms", "3"), ("variant", "sideways"),
    ("exact", ("foo",)), ("exact", "brute"), ("algorithms", ("nosuch",)),
])
def test_study_spec_rejects_bad_settings_naming_them(field, value):
    from spartition.errors import SpartitionError

    with pytest.raises((ValueError, SpartitionError), match=field.rstrip("s") if field != "Ms" else "M"):
        StudySpec("chain", {"n": 3}, **{field: value})


def test_run_task_rejects_a_nan_time_limit():
    from spartition.study.studies import Task, run_task

    with pytest.raises(ValueError, match="time_limit"):
        run_task(Task("chain", (("n", 3),), 2, "oneshot", "exact", "cpsat", float("nan")))


def test_a_refused_method_is_skipped_with_a_note_and_the_others_run(monkeypatch):
    import spartition.partition.lower_bounds as lb
    from spartition.errors import ModelTooLarge

    real = lb.io_lower_bounds

    def refuse(G, M, methods=None, **kw):
        if "capacity" in (methods or ()):
            raise ModelTooLarge("capacity model of 10^9 variables does not fit", estimate=10**9, limit=10**7)
        return real(G, M, methods=methods, **kw)

    monkeypatch.setattr(lb, "io_lower_bounds", refuse)
    s = compare(StudySpec("chain", {"n": 3}, Ms=(2,), exact=("brute",), algorithms=("greedy",), bound_time_limit=5))
    (r,) = s.rows
    assert r.bounds["capacity"].status == "SKIPPED" and not r.bounds["capacity"].proven
    assert r.bounds["trivial"].value == 2 and r.bounds["hong-kung"].status != "SKIPPED"
    assert r.optimum == 2 and r.algorithms["greedy"].value == 2 and not s.failed
    assert any("bound:capacity skipped" in n and "10^9" in n for n in s.notes)
    assert "skipped" in render_rows(s.rows, "text", "t", s.notes)
    assert s.to_dict()["rows"][0]["bounds"]["capacity"]["status"] == "SKIPPED"


def test_an_unproven_bound_is_never_stored_as_proven(monkeypatch, tmp_path):
    import spartition.partition.lower_bounds as lb
    from spartition.partition.lower_bounds import Bound

    def lying(G, M, methods=None, **kw):  # a bound marked proven with a status that proves nothing
        return (Bound(3, "capacity", True, "UNKNOWN", {"M": M}, None, 0.01),)

    monkeypatch.setattr(lb, "io_lower_bounds", lying)
    spec = StudySpec("chain", {"n": 3}, Ms=(2,), exact=(), algorithms=(), bound_time_limit=0.001)
    with ResultStore(tmp_path / "r.sqlite") as st:
        s = compare(spec, store=st)
        assert not s.rows[0].bounds["capacity"].proven
        assert all(not r.proven for r in st.rows(method="bound:capacity"))


def test_sigint_watch_sees_a_swallowed_ctrl_c():
    import os
    import signal

    from spartition.study.studies import sigint_watch

    previous = signal.signal(signal.SIGINT, lambda *a: None)  # like a CP-SAT search stopped by Ctrl-C
    try:
        with sigint_watch() as seen:
            os.kill(os.getpid(), signal.SIGINT)
        assert seen()
        with sigint_watch() as seen:
            pass
        assert not seen()
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_searched_algorithm_task_is_its_own_row_and_replays_at_its_value():
    # attention-forward n = 8, d = 2, M = 6 (standard game): square tiling's defaults (tile 1) replay at 616; its
    # tiles searched, made for M = 12 and re-pebbled at 6, at 472; tiled-forward's defaults at 432, re-pebbled 424
    from spartition.core.game import Schedule, replay
    from spartition.core.registry import build
    from spartition.study.studies import Task, run_task

    G = build("attention-forward", n=8, d=2)
    rows = {}
    for name in ("square-tiling-forward", "tiled-forward"):
        for options in ((), (("search", True),)):
            (r,) = run_task(Task("attention-forward", (("d", 2), ("n", 8)), 6, "recompute", "algorithm", name,
                                 options=options))
            assert r.status == "VALID" and replay(G, Schedule.from_dict(r.certificate)).io == r.value
            rows[name, bool(options)] = r
    assert [rows[k].value for k in sorted(rows)] == [616, 472, 432, 424]
    searched = rows["square-tiling-forward", True]
    assert searched.key.params == {"search": True} and rows["square-tiling-forward", False].key.params == {}
    assert searched.record["options"] == {"retargeted_from": 12, "weight": 1.0}
    assert searched.record["io_formula"] is None  # the defaults' closed form says nothing of this schedule
    assert rows["tiled-forward", True].record["improved_by"] == "lookahead-eviction(weight=1.0)"
