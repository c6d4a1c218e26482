"""Ctrl-C in a sandwich over several M: the rows finished before it are printed, exit 130."""

import json

import spartition.study.sandwich as sandwich_module
from spartition.cli.main import main


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
