"""The foundation commands: exit codes and JSON keys."""

import json
import subprocess
import sys

import pytest

from spartition.cli.main import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_build_info_greedy_replay(tmp_path, capsys):
    dag = tmp_path / "fft.json"
    sched = tmp_path / "s.json"
    assert run(capsys, "build", "fft", "k=1", "-o", str(dag))[0] == 0
    code, out, _ = run(capsys, "info", str(dag), "--json")
    info = json.loads(out)
    assert code == 0
    assert (info["nodes"], info["edges"], info["inputs"], info["outputs"]) == (4, 4, 2, 2)
    assert (info["max_in_degree"], info["min_feasible_M"], info["trivial_lower_bound"]) == (2, 3, 4)
    assert run(capsys, "greedy", str(dag), "--M", "3", "-o", str(sched))[0] == 0
    code, out, _ = run(capsys, "replay", str(dag), str(sched), "--json")
    data = json.loads(out)
    assert code == 0 and data["valid"] is True
    assert {k: data[k] for k in ("io", "loads", "stores", "computes", "peak_red", "error")} == {
        "io": 4, "loads": 2, "stores": 2, "computes": 2, "peak_red": 3, "error": None}


def test_replay_invalid_exits_1(tmp_path, capsys):
    sched = tmp_path / "s.json"
    sched.write_text(json.dumps({"M": 3, "variant": "oneshot", "moves": [["load", "F0_0"], ["compute", "F1_0"]]}))
    code, out, err = run(capsys, "replay", "fft:k=1", str(sched), "--json")
    data = json.loads(out)
    assert code == 1 and data["valid"] is False
    assert "step 1: compute 'F1_0': predecessor 'F0_1' is not in fast memory" in data["error"]
    assert "step 1" in err


def test_bad_input_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{ not json")
    assert run(capsys, "info", str(bad))[0] == 2
    assert run(capsys, "greedy", "fft:k=1", "--M", "2")[0] == 2
    code, _, err = run(capsys, "build", "nosuchfamily")
    assert code == 2 and "unknown DAG family" in err
    sched = tmp_path / "s.json"
    sched.write_text('{"M": 3}')
    assert run(capsys, "replay", "fft:k=1", str(sched))[0] == 2


def test_brute_json_and_schedule_out(tmp_path, capsys):
    out_path = tmp_path / "opt.json"
    code, out, _ = run(capsys, "brute", "matmul:a=1,b=1,c=1", "--M", "3", "--variant", "recompute",
                       "--json", "--schedule-out", str(out_path))
    data = json.loads(out)
    assert code == 0 and (data["io"], data["variant"], data["M"]) == (3, "recompute", 3)
    assert run(capsys, "replay", "matmul:a=1,b=1,c=1", str(out_path))[0] == 0


def test_brute_step_method_agrees_with_the_move_search(capsys):
    # matmul 2x2x1 (A 2x2 times B 2x1, 12 nodes) at M = 3: both exact searches, both variants, 13
    for variant in ("oneshot", "recompute"):
        ios = []
        for method in ("moves", "steps"):
            code, out, _ = run(capsys, "brute", "matmul:a=2,b=2,c=1", "--M", "3", "--variant", variant,
                               "--method", method, "--json")
            data = json.loads(out)
            assert code == 0 and data["method"] == {"moves": "brute-force", "steps": "step-search"}[method]
            ios.append(data["io"])
        assert ios == [13, 13], variant


def test_console_script_runs():
    proc = subprocess.run([sys.executable, "-m", "spartition", "info", "chain:n=3", "--json"],
                          capture_output=True, text=True, check=True)
    assert json.loads(proc.stdout)["trivial_lower_bound"] == 2


def test_top_level_api_reaches_the_solvers():
    import spartition

    from spartition.core.registry import build

    G = build("matmul", a=1, b=1, c=1)
    r = spartition.solve_io(G, 3, "oneshot", time_limit=5, workers=1)
    assert (r.status, r.io) == ("OPTIMAL", 3)
    assert spartition.brute_force(G, 3).io == 3
    for name in spartition.__all__:
        assert getattr(spartition, name) is not None


def test_every_variant_flag_says_its_choices_and_default():
    """--variant reads the same on every command: both games (and the partial game where a command plays it), what
    they mean, the default."""
    import argparse

    from spartition.cli.main import parser

    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    seen, partial = [], []
    for name, command in sub.choices.items():
        for action in command._actions:
            if "--variant" in action.option_strings:
                seen.append(name)
                if "partial" in action.choices:
                    partial.append(name)
                    assert "partial computations" in action.help, name
                assert tuple(action.choices) in {("oneshot", "recompute"), ("oneshot", "recompute", "partial")}, name
                assert "default oneshot" in action.help and "computed once" in action.help, name
    assert {"solve", "greedy", "compare", "certify", "sandwich", "schedule"} <= set(seen)
    assert {"brute", "solve", "sandwich", "schedule"} <= set(partial)


def test_long_commands_show_elapsed_time_on_a_terminal_only():
    import io
    import time

    from spartition.cli.common import elapsed_bar

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    screen, pipe = Terminal(), io.StringIO()
    with elapsed_bar("solve", 10, stream=screen):
        time.sleep(1.2)  # two redraws of the bar
    with elapsed_bar("solve", 10, stream=pipe):
        time.sleep(0.6)
    assert "solve: 00:0" in screen.getvalue() and "of 10.0 s" in screen.getvalue()
    assert pipe.getvalue() == ""
    with pytest.raises(KeyboardInterrupt), elapsed_bar("certify", None, stream=Terminal()):
        raise KeyboardInterrupt  # the bar is removed and the interrupt goes through
