"""Ctrl-C in improve's CP-SAT windows outside a window's search: the best so far is printed, exit 130.

Most of a window's time is the Python that builds its model, not CP-SAT's
search: a Ctrl-C landing there escaped the windows and the eviction passes,
and improve printed nothing (the campaign's SIGINT improve, now and then).
"""

import json

from spartition.cli.main import main
from spartition.core.game import replay, save_schedule
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import build
from spartition.exact import improve, windows


def test_ctrl_c_while_a_window_is_built_keeps_the_windows_done(monkeypatch):
    real = windows.new_solver
    calls = []

    def third_window_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(windows, "new_solver", third_window_interrupted)
    G = build("fft", k=5)
    greedy = greedy_schedule(G, 4, "oneshot")
    w = windows.improve_windows(G, greedy, k=4, time_limit=60)
    assert w.interrupted and w.windows == 2 and w.covered < 1
    assert replay(G, w.schedule).io == w.after <= w.before == replay(G, greedy).io


def test_ctrl_c_in_the_windows_set_up_keeps_the_passes_best(tmp_path, monkeypatch, capsys):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(windows, "improve_windows", interrupted)
    G = build("fft", k=5)
    save_schedule(greedy_schedule(G, 4, "oneshot"), tmp_path / "s.json")
    passes = improve.improve_schedule(G, greedy_schedule(G, 4, "oneshot"), window=0)
    assert main(["improve", "fft:k=5", str(tmp_path / "s.json"), "--time-limit", "60", "--json"]) == 130
    out = json.loads(capsys.readouterr().out)
    assert out["interrupted"] and out["after"] == out["replayed_io"] == passes.after <= out["before"]
