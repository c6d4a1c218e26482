"""Bad input through the command line: exit status, a message naming the problem, no traceback, one JSON object.

Issue 12: every crash on bad input is a clear error (exit 2), sizes are
checked before building, unknown names list the valid ones, outputs never
overwrite inputs, and ``--json`` prints one JSON object on every exit path.
"""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from spartition import __version__
from spartition.cli import dags as cli_core
from spartition.cli.main import main
from spartition.core.dag import dag_to_json
from spartition.core.registry import build, family, family_names, family_node_count


def run(capsys, *argv, code=None):
    """Run the CLI in-process; check no traceback and, with --json, one JSON object on stdout."""
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    if code is not None:
        assert status == code, (status, out, err)
    if "--json" in argv:
        data = json.loads(out)  # raises unless stdout is exactly one JSON document
        assert isinstance(data, dict)
    return status, out, err


def error_json(capsys, *argv, code=2):
    """Run with --json; return the error object and stderr."""
    _, out, err = run(capsys, *argv, "--json", code=code)
    data = json.loads(out)
    assert set(data) == {"error", "kind"}, data
    return data, err


@pytest.fixture
def fft2(tmp_path):
    """The node-link data of fft k=2, to corrupt."""
    return dag_to_json(build("fft", ["k=2"]))


def write(path, data):
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return path


# --------------------------------------------------------------------------- DAG files


@pytest.mark.parametrize("graph", [[1, 2], "abc", 3])
def test_graph_attribute_not_an_object(tmp_path, capsys, fft2, graph):
    path = write(tmp_path / "g.json", {**fft2, "graph": graph})
    data, err = error_json(capsys, "info", path)
    assert "'graph' must be an object" in err and str(path) in err
    assert data["kind"] == "InvalidDAG"


def test_deeply_nested_json(tmp_path, capsys):
    path = write(tmp_path / "deep.json", "[" * 100_000 + "]" * 100_000)
    for argv in (["info", path], ["replay", "fft:k=1", path], ["check-partition", "fft:k=1", path]):
        _, _, err = run(capsys, *argv, code=2)
        assert "nested too deeply" in err and str(path) in err


def test_malformed_json_names_file_line_and_column(tmp_path, capsys):
    path = write(tmp_path / "bad.json", '{"nodes": [\n  {"id": 1},\n ]}')
    data, err = error_json(capsys, "info", path)
    assert str(path) in err and "line 3 column 2" in err
    assert "line 3 column 2" in data["error"]


def test_not_utf8(tmp_path, capsys):
    path = tmp_path / "bin.json"
    path.write_bytes(b"\xff\xfe\x00garbage")
    _, _, err = run(capsys, "info", path, code=2)
    assert "not UTF-8" in err and str(path) in err


@pytest.mark.parametrize("bad_id, shown", [([1, 2], "[1, 2]"), ({"a": 1}, "{'a': 1}"), (True, "True"), (None, "None")])
def test_node_ids_must_be_strings_or_numbers(tmp_path, capsys, bad_id, shown):
    path = write(tmp_path / "ids.json", {"nodes": [{"id": "a"}, {"id": bad_id}], "edges": []})
    data, err = error_json(capsys, "info", path)
    assert f"node #1: node id {shown} is not a string or a number" in err
    assert data["kind"] == "InvalidDAG"


def test_numeric_node_ids_still_read(tmp_path, capsys):
    path = write(tmp_path / "num.json", {"nodes": [{"id": 0}, {"id": 1.5}], "edges": [{"source": 0, "target": 1.5}]})
    _, out, _ = run(capsys, "info", path, "--json", code=0)
    assert json.loads(out)["nodes"] == 2


def test_edge_to_unknown_node(tmp_path, capsys):
    path = write(tmp_path / "e.json", {"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": "z"}]})
    _, _, err = run(capsys, "info", path, code=2)
    assert "names unknown node 'z'" in err
    path = write(tmp_path / "e2.json", {"nodes": [{"id": "a"}], "edges": [{"source": "a", "target": [1]}]})
    _, _, err = run(capsys, "info", path, code=2)
    assert "edge #0 target: node id [1]" in err


def test_cycle_is_named(tmp_path, capsys):
    nodes = [{"id": v} for v in "abc"]
    edges = [{"source": u, "target": v} for u, v in ("ab", "bc", "ca")]
    path = write(tmp_path / "cyc.json", {"nodes": nodes, "edges": edges})
    data, err = error_json(capsys, "solve", path, "--M", "3")
    assert "a -> b -> c -> a" in err and data["kind"] == "InvalidDAG"


@pytest.mark.parametrize("params", ["missing", None, "k=2", [1]])
@pytest.mark.parametrize("command", [["schedule", "greedy"], ["solve"]])
def test_family_file_without_usable_params(tmp_path, capsys, fft2, params, command):
    data = json.loads(json.dumps(fft2))
    if params == "missing":
        del data["graph"]["params"]
    else:
        data["graph"]["params"] = params
    path = write(tmp_path / "p.json", data)
    obj, err = error_json(capsys, *command, path, "--M", "3")
    assert "graph.params" in err and str(path) in err and obj["kind"] == "InvalidDAG"


def test_family_file_params_of_wrong_type(tmp_path, capsys, fft2):
    data = json.loads(json.dumps(fft2))
    data["graph"]["params"] = {"k": "two"}
    _, err = error_json(capsys, "schedule", "greedy", write(tmp_path / "p.json", data), "--M", "3")
    assert "parameter k of fft must be an integer, got 'two'" in err


def test_attention_schedule_on_file_without_params(tmp_path, capsys):
    data = dag_to_json(build("attention-forward", ["n=2", "d=1"]))
    del data["graph"]["params"]
    _, err = error_json(capsys, "schedule", "standard-forward", write(tmp_path / "a.json", data), "--M", "8")
    assert "names family attention-forward but its graph.params is missing" in err


def test_family_algorithm_on_dag_without_family(tmp_path, capsys):
    path = write(tmp_path / "plain.json", {"nodes": [{"id": "a"}, {"id": "b"}], "edges": [{"source": "a", "target": "b"}]})
    _, err = error_json(capsys, "schedule", "flash-forward", path, "--M", "4")
    assert "names no family" in err


# --------------------------------------------------------------------------- flags


@pytest.mark.parametrize("command", [["solve", "fft:k=1", "--M", "3"], ["partition", "fft:k=1", "--S", "3"],
                                     ["bounds", "fft:k=1", "--M", "3"]])
def test_seed_out_of_range(capsys, command):
    _, err = error_json(capsys, *command, "--seed", "99999999999")
    assert "--seed" in err and "32-bit" in err
    _, _, err = run(capsys, *command, "--seed", "99999999999", code=2)
    assert "--help" in err and "--seed" in err


@pytest.mark.parametrize("flag, value", [("--time-limit", "nan"), ("--time-limit", "-1"), ("--time-limit", "0"),
                                         ("--workers", "-1"), ("--deterministic-time", "inf")])
def test_solver_flags_out_of_range(capsys, flag, value):
    data, err = error_json(capsys, "solve", "fft:k=1", "--M", "3", flag, value)
    assert flag in err and data["kind"] == "UsageError"


@pytest.mark.parametrize("argv", [["bounds", "fft:k=1", "--M"], ["partition", "fft:k=1", "--S"],
                                  ["capacity", "fft:k=1", "--X"], ["solve", "fft:k=1", "--M"]])
def test_huge_integers_refused_before_the_solver(capsys, argv):
    _, err = error_json(capsys, *argv, "99999999999999999999")
    assert f"argument {argv[-1]}" in err and "at most 2147483647" in err


def test_usage_errors_are_json(capsys):
    for argv in (["solve"], ["nosuchcommand"], ["greedy", "fft:k=1", "--M", "x"], []):
        data, _ = error_json(capsys, *argv)
        assert data["kind"] == "UsageError"
    _, _, err = run(capsys, "greedy", "fft:k=1", "--M", "x", code=2)
    assert "argument --M" in err


# --------------------------------------------------------------------------- size guards


@pytest.mark.parametrize("argv, size", [
    (["build", "attention-forward", "n=2", "d=100000"], "2,200,004"),
    (["build", "fft", "k=40"], "45,079,976,738,816"),
    (["info", "fft:k=40"], "45,079,976,738,816"),
    (["build", "attention-backward-flash", "n=1000", "d=64"], None),
    (["build", "approx-attention", "n=100000", "d=8", "g=4"], None),
    (["build", "matmul", "a=1000", "b=1000", "c=1000"], None),
])
def test_size_guard_before_building(capsys, argv, size):
    start = time.perf_counter()
    data, err = error_json(capsys, *argv)
    assert time.perf_counter() - start < 5
    assert data["kind"] == "DAGTooLarge" and "--max-nodes" in err
    if size:
        assert f"would have {size} nodes" in err


def test_max_nodes_override(capsys):
    _, err = error_json(capsys, "build", "fft", "k=3", "--max-nodes", "31")
    assert "would have 32 nodes, more than the limit of 31" in err
    _, out, _ = run(capsys, "build", "fft", "k=3", "--max-nodes", "32", "--json", code=0)
    assert json.loads(out)["nodes"] == 32
    run(capsys, "info", "fft:k=3", "--max-nodes", "32", code=0)


def test_huge_random_mask_refused_quickly(capsys):
    _, err = error_json(capsys, "build", "attention-forward", "n=100000", "mask=random", "density=0")
    assert "random mask on n=100000" in err


def test_every_family_counts_its_nodes():
    for name in family_names():
        if name == "file":  # a file's DAG has no size before it is read
            assert family_node_count(name, path="g.json") is None
            continue
        assert family_node_count(name) == family(name)().number_of_nodes(), name
    params = {"n": 3, "d": 2, "mask": "window", "window": 1, "shape": "tree"}
    for name in ("attention-forward", "attention-backward-flash", "attention-backward-weights"):
        assert family_node_count(name, **params) == build(name, **params).number_of_nodes()


# --------------------------------------------------------------------------- names


def test_unknown_names_list_the_valid_ones(capsys):
    _, err = error_json(capsys, "build", "nosuch")
    assert "unknown DAG family 'nosuch'" in err and "attention-forward" in err and "fft" in err
    _, err = error_json(capsys, "info", "nosuch:k=1")
    assert "unknown DAG family 'nosuch'" in err
    _, err = error_json(capsys, "schedule", "nosuch", "fft:k=1", "--M", "3")
    assert "unknown algorithm 'nosuch'" in err and "flash-forward" in err and "greedy" in err
    _, err = error_json(capsys, "algorithms", "nosuch")
    assert "unknown DAG family 'nosuch'" in err
    _, err = error_json(capsys, "build", "attention-forward", "x=1")
    assert "no parameter 'x'" in err and "n, d, shape, mask" in err
    _, err = error_json(capsys, "info", "fft:q=1")
    assert "fft has no parameter 'q'; parameters: k" in err


def test_wrong_parameter_type_names_the_parameter(capsys):
    data, err = error_json(capsys, "build", "attention-forward", "n=abc")
    assert data["error"] == "parameter n of attention-forward must be an integer, got 'abc'"
    assert "invalid literal" not in err
    _, err = error_json(capsys, "info", "random-dag:p=lots")
    assert "parameter p of random-dag must be a number, got 'lots'" in err
    _, err = error_json(capsys, "build", "approx-attention", "normalize=maybe")
    assert "parameter normalize of approx-attention must be true or false, got 'maybe'" in err
    _, err = error_json(capsys, "formulas", "attention-forward", "n=abc", "--M", "4")
    assert "parameter n of attention-forward must be an integer" in err


# --------------------------------------------------------------------------- outputs


@pytest.mark.parametrize("command", [
    ["greedy", "{dag}", "--M", "3", "-o", "{out}"],
    ["brute", "{dag}", "--M", "3", "--schedule-out", "{out}"],
    ["solve", "{dag}", "--M", "3", "--schedule-out", "{out}"],
    ["schedule", "greedy", "{dag}", "--M", "3", "-o", "{out}"],
    ["partition", "{dag}", "--S", "3", "-o", "{out}"],
])
def test_output_onto_input_is_refused(tmp_path, capsys, command):
    dag = tmp_path / "in.json"
    main(["build", "fft", "k=1", "-o", str(dag)])
    capsys.readouterr()
    before = dag.read_bytes()
    link = tmp_path / "link.json"
    link.symlink_to(dag)
    for out in (dag, tmp_path / "sub" / ".." / "in.json", link):
        (tmp_path / "sub").mkdir(exist_ok=True)
        argv = [a.format(dag=dag, out=out) for a in command]
        data, err = error_json(capsys, *argv)
        assert "refusing to overwrite" in err and "is the input file" in err
        assert dag.read_bytes() == before


def test_unwritable_output_names_the_file(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "dir.json"
    _, err = error_json(capsys, "build", "fft", "k=1", "-o", out)
    assert str(out) in err


# --------------------------------------------------------------------------- exit statuses


def test_bounds_below_smallest_feasible_memory(capsys):
    data, err = error_json(capsys, "bounds", "fft:k=2", "--M", "2")
    assert data["kind"] == "InfeasibleMemory" and "M >= 3" in err
    _, _, err = run(capsys, "bounds", "fft:k=2", "--M", "2", code=2)
    assert "M = 2 is too small" in err


def test_internal_error_is_one_line_exit_3(capsys, monkeypatch):
    def boom(G):
        raise TypeError("simulated bug")

    monkeypatch.setattr(cli_core, "dag_info", boom)
    monkeypatch.delenv("SPARTITION_DEBUG", raising=False)
    _, _, err = run(capsys, "info", "fft:k=1", code=3)
    assert err.count("\n") == 1 and "internal error, please report" in err and "simulated bug" in err
    assert "SPARTITION_DEBUG=1" in err
    data, _ = error_json(capsys, "info", "fft:k=1", code=3)
    assert data["kind"] == "InternalError"
    monkeypatch.setenv("SPARTITION_DEBUG", "1")
    assert main(["info", "fft:k=1"]) == 3
    assert "Traceback" in capsys.readouterr().err


def test_internal_error_with_a_long_message_is_one_line(capsys, monkeypatch):
    def boom(G):
        raise TypeError("first line\n  second line\n  third line")

    monkeypatch.setattr(cli_core, "dag_info", boom)
    monkeypatch.delenv("SPARTITION_DEBUG", raising=False)
    _, _, err = run(capsys, "info", "fft:k=1", code=3)
    assert err.count("\n") == 1 and "first line" in err and "second line" not in err


def test_empty_exception_message_is_not_empty(capsys, monkeypatch):
    from spartition.errors import SpartitionError

    def empty(G):
        raise SpartitionError("")

    monkeypatch.setattr(cli_core, "dag_info", empty)
    _, _, err = run(capsys, "info", "fft:k=1", code=2)
    assert err.strip() != "spartition: error:" and "SpartitionError" in err


def test_keyboard_interrupt_exits_130(capsys, monkeypatch):
    def interrupted(G):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_core, "dag_info", interrupted)
    _, _, err = run(capsys, "info", "fft:k=1", code=130)
    assert err == "spartition: interrupted\n"
    data, _ = error_json(capsys, "info", "fft:k=1", code=130)
    assert data == {"error": "interrupted", "kind": "KeyboardInterrupt"}


def test_version_in_process(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"spartition {__version__}"


# --------------------------------------------------------------------------- subprocesses


def _spartition(*argv, **kw):
    return subprocess.run([sys.executable, "-m", "spartition", *argv], capture_output=True, text=True, timeout=60, **kw)


def test_python_m_spartition_and_version():
    proc = _spartition("--version")
    assert proc.returncode == 0 and proc.stdout.strip() == f"spartition {__version__}"
    proc = _spartition("info", "chain:n=3", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["nodes"] == 3
    proc = _spartition("build", "fft", "k=40", "--json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert json.loads(proc.stdout)["kind"] == "DAGTooLarge"


@pytest.mark.skipif(os.name != "posix", reason="SIGINT")
def test_ctrl_c_subprocess():
    # a build of about 2 million nodes takes tens of seconds: long enough to be interrupted
    proc = subprocess.Popen(
        [sys.executable, "-m", "spartition", "build", "attention-forward", "n=2", "d=90000", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # shells start jobs with SIGINT ignored
    )
    time.sleep(4)  # past the imports, into the build
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "Traceback" not in err
    assert "interrupted" in err
    assert json.loads(out) == {"error": "interrupted", "kind": "KeyboardInterrupt"}
