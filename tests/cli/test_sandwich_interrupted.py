"""Ctrl-C in a sandwich: the rows finished before it and the row it cut, as far as it got, are printed, exit 130."""

import dataclasses
import json

import networkx as nx
import pytest

import spartition.study.sandwich as sandwich_module
from spartition.cli.main import main
from spartition.core.dag import save_dag
from spartition.core.game import replay
from spartition.core.registry import algorithm, build
from spartition.study.sandwich import INTERRUPTED_NOTE, RowInterrupted, sandwich, sandwich_row


def interrupt_at_row(monkeypatch, k):
    """Ctrl-C at the start of the ``k``-th row (from 1) of each command run: its trivial bound is where a row begins."""
    real = sandwich_module.trivial_lower_bound
    rows = []

    def trivial_then_interrupt(c):
        rows.append(c)
        if len(rows) % k == 0:
            raise KeyboardInterrupt
        return real(c)

    monkeypatch.setattr(sandwich_module, "trivial_lower_bound", trivial_then_interrupt)


def test_ctrl_c_prints_the_rows_finished_before_it(monkeypatch, capsys):
    interrupt_at_row(monkeypatch, 2)
    assert main(["sandwich", "chain:n=3", "--M", "2,4", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    # the chain costs 2 at M = 2: one load, one store, the trivial bound meets the greedy schedule
    assert out["interrupted"] is True and [(r["M"], r["lower"]["value"], r["upper"]["value"]) for r in out["rows"]] == [
        (2, 2, 2)]
    assert main(["sandwich", "chain:n=3", "--M", "2,4"]) == 130
    assert "stopped by Ctrl-C: the rows at M = [2] were finished before it; not computed: M = [4]" in capsys.readouterr().out


def test_ctrl_c_before_any_row_is_the_plain_interruption(monkeypatch, capsys):
    interrupt_at_row(monkeypatch, 1)
    assert main(["sandwich", "chain:n=3", "--M", "2"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and captured.out == ""


def test_ctrl_c_in_the_eviction_pass_stops_the_sandwich(monkeypatch, capsys):
    # improve_schedule ends its passes on Ctrl-C and returns its best so far: the sandwich took that for a finished
    # pass, went on to its next steps and exited 0 with a row that did not say it was cut
    import spartition.exact.improve as improve

    real = improve.evict_by_lookahead
    calls = []

    def second_pass_interrupted(*args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(improve, "evict_by_lookahead", second_pass_interrupted)
    G = build("fft", k=5)
    greedy = replay(G, algorithm("greedy").generate(G, 4, "oneshot")).io
    with pytest.raises(RowInterrupted) as stop:
        sandwich_row(G, 4, search=False)
    row = stop.value.row
    assert row.skipped == (INTERRUPTED_NOTE,) and len(calls) == 2
    # the first pass's schedule, when cheaper, is kept: it was replayed before the signal
    first = replay(G, real(*calls[0])).io
    assert row.upper.value == min(greedy, first) == replay(G, row.schedule).io
    assert row.lower.value <= row.upper.value

    calls.clear()
    assert main(["sandwich", "fft:k=5", "--M", "4", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert out["interrupted"] and out["rows"][0]["skipped"] == [INTERRUPTED_NOTE]


def test_ctrl_c_in_the_exact_solver_keeps_its_best_so_far(tmp_path, monkeypatch, capsys):
    # a user's own small DAG: the exact solver is the row's answer, and Ctrl-C in it dropped its proven bound and
    # its schedule (spartition solve prints both), leaving the trivial bound and the greedy schedule
    import spartition.exact.solve as solve

    real = solve.solve_io

    def stopped_by_ctrl_c(*args, **kwargs):  # the solver's answer at the moment Ctrl-C stops it
        return dataclasses.replace(real(*args, **kwargs), interrupted=True)

    monkeypatch.setattr(solve, "solve_io", stopped_by_ctrl_c)
    G = nx.DiGraph([("a", "c"), ("b", "c"), ("c", "d"), ("a", "d"), ("b", "e"), ("d", "e"), ("c", "f"), ("e", "f")])
    found = []
    with pytest.raises(RowInterrupted):
        sandwich(G, [3, 4], "oneshot", time_limit=30, found=found)
    (row,) = found
    exact = real(G, 3, "oneshot", time_limit=30, workers=1)
    assert row.skipped == (INTERRUPTED_NOTE,)
    assert ("exact:solve", exact.lower_bound) in {(s.method, s.value) for s in row.lowers}
    assert ("exact:solve", exact.io) in {(s.method, s.value) for s in row.uppers}
    assert all("stopped by Ctrl-C" in s.certificate for s in row.lowers + row.uppers if s.method == "exact:solve")
    assert row.upper.value == min(s.value for s in row.uppers) == replay(G, row.schedule).io
    assert row.lower.value == max(s.value for s in row.lowers) <= row.upper.value

    path = tmp_path / "g.json"
    save_dag(G, path)
    assert main(["sandwich", str(path), "--M", "3", "--time-limit", "30", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert out["interrupted"] and "exact:solve" in {s["method"] for s in out["rows"][0]["uppers"]}
    assert main(["sandwich", str(path), "--M", "3", "--time-limit", "30"]) == 130
    text = capsys.readouterr().out
    assert "stopped by Ctrl-C: the row at M = 3 holds what it had" in text
    assert "not computed: M = []" not in text  # every M was begun: none to list
