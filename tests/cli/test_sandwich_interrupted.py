"""Ctrl-C in a sandwich over several M: the rows finished before it are printed, exit 130."""

import json


import spartition.study.sandwich as sandwich_module
from spartition.cli.main import main


def test_ctrl_c_prints_the_rows_finished_before_it(monkeypatch, capsys):
    real_row = sandwich_module._row

    def row_then_interrupt(dag, c, M, *args):
        if M == 4:
            raise KeyboardInterrupt
        return real_row(dag, c, M, *args)

    monkeypatch.setattr(sandwich_module, "_row", row_then_interrupt)
    assert main(["sandwich", "chain:n=3", "--M", "2,4", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    # the chain costs 2 at M = 2: one load, one store, the trivial bound meets the greedy schedule
    assert out["interrupted"] is True and [(r["M"], r["lower"]["value"], r["upper"]["value"]) for r in out["rows"]] == [
        (2, 2, 2)]
    assert main(["sandwich", "chain:n=3", "--M", "2,4"]) == 130
    assert "stopped by Ctrl-C: the rows at M = [2] were finished before it; not computed: M = [4]" in capsys.readouterr().out


def test_ctrl_c_before_any_row_is_the_plain_interruption(monkeypatch, capsys):
    def interrupt(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(sandwich_module, "_row", interrupt)
    assert main(["sandwich", "chain:n=3", "--M", "2"]) == 130
    captured = capsys.readouterr()
    assert "interrupted" in captured.err and captured.out == ""
