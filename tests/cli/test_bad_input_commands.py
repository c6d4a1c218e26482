"""Issue 24: inputs from outside the project, and bundles, parameters and paths that must not mislead.

Each test names the wrong answer, loss or crash it prevents: a CP-SAT
parameter that would turn a gap into a proof, a DOT port read as a node, a
bundle that points outside itself or names no DAG, an output path that is an
input, a foreign SQLite file adopted.
"""

import json
import re

import pytest
from ortools.sat.python import cp_model

from spartition.cli.main import main
from spartition.core.dag import load_dag, new_dag, save_dag
from spartition.core.registry import build
from spartition.cpsat import UNSOUND_PARAMETERS, new_solver, proven_bound
from spartition.exact.solve import solve_io

# --------------------------------------------------------------------------- CP-SAT parameters


@pytest.mark.parametrize("name", sorted(UNSOUND_PARAMETERS))
def test_parameters_that_stop_a_search_early_are_refused(name):
    # relative_gap_limit 0.9 made solve_io report OPTIMAL 22 with lower bound 22; the optimum is 15
    value = True if name.startswith(("stop_", "fix_")) else 0.9
    G = build("attention-forward", ["n=2", "d=1"])
    with pytest.raises(ValueError, match=f"CP-SAT parameter {name} is refused"):
        solve_io(G, 4, "oneshot", formulation="order", hint=None, cp_sat_parameters={name: value}, time_limit=10)
    with pytest.raises(ValueError, match=f"CP-SAT parameter {name} is refused"):
        new_solver(1.0, 1, 0, extra={name: value})


def test_unknown_or_ill_typed_parameters_are_refused():
    G = build("fft", ["k=1"])
    with pytest.raises(ValueError, match="'no_such' is not a CP-SAT parameter"):
        solve_io(G, 3, cp_sat_parameters={"no_such": 1})
    with pytest.raises(ValueError, match=r"linearization_level cannot take 'x' \(str\)"):
        solve_io(G, 3, cp_sat_parameters={"linearization_level": "x"})


class _Stopped:
    """A solver stopped by a gap: CP-SAT says OPTIMAL with objective 22 and bound 15."""

    objective_value = 22.0
    best_objective_bound = 15.0


def test_the_bound_is_best_objective_bound_even_at_optimal():
    assert proven_bound(_Stopped(), cp_model.OPTIMAL, "min") == 15
    assert proven_bound(_Stopped(), cp_model.FEASIBLE, "min", found=22) == 15


def test_a_passed_parameter_keeps_the_true_optimum():
    G = build("attention-forward", ["n=2", "d=1"])
    r = solve_io(G, 4, "oneshot", formulation="order", hint=None, cp_sat_parameters={"linearization_level": 1},
                 time_limit=30)
    assert (r.status, r.io, r.lower_bound) == ("OPTIMAL", 15, 15)


# --------------------------------------------------------------------------- node-link JSON


def test_node_link_edge_attributes_are_kept(tmp_path):
    G = new_dag("hand", {})
    G.add_node("0", op="input")
    G.add_node("3", op="add")
    G.add_edge("0", "3", comm_weight=1)
    save_dag(G, tmp_path / "g.json")
    assert list(load_dag(tmp_path / "g.json").edges(data=True)) == [("0", "3", {"comm_weight": 1})]


@pytest.mark.parametrize("change, message", [
    ({"directed": False}, "undirected graph; a DAG is directed"),
    ({"multigraph": True}, "\"multigraph\": true; a DAG has at most one edge"),
    ({"edges": [{"source": "a", "target": "b"}, {"source": "a", "target": "b", "key": 1}]},
     r"edge #1 \('a' -> 'b'\) is listed twice"),
])
def test_node_link_data_that_is_no_dag_is_refused(tmp_path, capsys, change, message):
    data = {"directed": True, "multigraph": False, "nodes": [{"id": "a"}, {"id": "b"}],
            "edges": [{"source": "a", "target": "b"}]}
    data.update(change)
    path = tmp_path / "g.json"
    path.write_text(json.dumps(data))
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err
    assert str(path) in err
    assert re.search(message, err), err


# --------------------------------------------------------------------------- certificate bundles


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    from spartition.certify.certify import certify_optimum

    out = tmp_path_factory.mktemp("b") / "fft1"
    certify_optimum(build("fft", ["k=1"]), 3, "oneshot", out)
    return out


def edited(bundle, tmp_path, change):
    """A copy of ``bundle`` with certificate.json passed through ``change`` (returns the new document)."""
    import shutil

    bad = tmp_path / "bad"
    shutil.copytree(bundle, bad, symlinks=True)
    doc = json.loads((bad / "certificate.json").read_text())
    doc = change(doc, bad)
    (bad / "certificate.json").write_text(json.dumps(doc))
    return bad


def check_fails(capsys, path, message):
    status = main(["check-certificate", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    assert status == 1, (status, out, err)
    assert re.search(message, json.loads(out)["error"]), out


def test_a_bundle_names_its_dag_game_and_checked_fields_only(bundle, capsys):
    from spartition.core.dag import dag_hash

    assert main(["check-certificate", str(bundle), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    h = dag_hash(build("fft", ["k=1"]))
    assert out["statement"] == (f"the minimum oneshot I/O of fft k=1 (sha256 {h}) with M = 3 is 4 (red-blue pebble "
                                "game: a load or store costs 1, a compute needs every predecessor red, at most M red "
                                "pebbles, every output ends blue, each node is computed once)")
    assert "horizon_proven" not in out["claim"] and out["claim"]["dag_sha256"] == h


def test_an_unchecked_horizon_proven_is_not_echoed(bundle, tmp_path, capsys):
    def lie(doc, root):
        doc["horizon_proven"] = "yes, trust me"
        return doc

    assert main(["check-certificate", str(edited(bundle, tmp_path, lie)), "--json"]) == 0
    assert "trust me" not in capsys.readouterr().out


@pytest.mark.parametrize("name, message", [
    ("../outside.json", r"files.witness is '../outside.json': a bundle names its files by plain file names"),
    ("/etc/passwd", r"files.witness is '/etc/passwd'"),
    ("sub/witness.json", r"plain file names, no paths"),
    ("link", r"files.witness \(link\) is a link out of the bundle"),
    ("zero", r"files.witness \(zero\) is a link out of the bundle"),
    ("fifo", r"files.witness \(fifo\) is not a regular file"),
])
def test_file_entries_stay_inside_the_bundle(bundle, tmp_path, capsys, name, message):
    import os
    import shutil

    def point(doc, root):
        shutil.copy(root / "witness.json", tmp_path / "outside.json")
        os.symlink(tmp_path / "outside.json", root / "link")
        os.symlink("/dev/zero", root / "zero")
        os.mkfifo(root / "fifo")
        doc["files"]["witness"] = name
        return doc

    check_fails(capsys, edited(bundle, tmp_path, point), message)


@pytest.mark.parametrize("change, message", [
    (lambda d: d.pop("kind"), r"'kind' is None; expected one of pebbling"),
    (lambda d: d.pop("files"), r"'files' must be an object of file names"),
    (lambda d: d["files"].pop("dag"), r"files has no 'dag' entry"),
    (lambda d: d.pop("sha256"), r"'sha256' must be an object"),
    (lambda d: d["sha256"].pop("proof"), r"no sha256 digest for files.proof"),
    (lambda d: d["files"].pop("proof") and d["sha256"].pop("proof"), r"no formula.cnf and proof.lrat"),
    (lambda d: d.pop("M"), r"no 'M' key \(a pebbling claim needs it\)"),
    (lambda d: d.update(M=3.0), r"'M' must be an integer >= 1, got 3.0"),
    (lambda d: d.update(M="3"), r"'M' must be an integer >= 1, got '3'"),
    (lambda d: d.update(io=True), r"'io' must be an integer >= 0, got True"),
    (lambda d: d.update(variant="fast"), r"'variant' must be 'oneshot' or 'recompute'"),
    (lambda d: d.update(count_levels=10**9), r"'count_levels' must be an integer from 0 to 16"),
    (lambda d: d.update(dag_sha256="0" * 64), r"dag.json hashes to [0-9a-f]{64}, certificate.json says 0000"),
    (lambda d: d.update(kind=[]), r"'kind' is \[\]; expected one of pebbling"),  # was TypeError, exit 3
])
def test_missing_or_ill_typed_keys_are_named(bundle, tmp_path, capsys, change, message):
    def apply(doc, root):
        change(doc)
        return doc

    check_fails(capsys, edited(bundle, tmp_path, apply), message)


def test_a_certificate_that_is_no_object_and_archives_that_are_no_archives(bundle, tmp_path, capsys):
    import shutil

    check_fails(capsys, edited(bundle, tmp_path, lambda doc, root: [doc]), "must be a JSON object, got list")
    deep = tmp_path / "deep"
    shutil.copytree(bundle, deep)
    (deep / "certificate.json").write_text("[" * 100_000 + "]" * 100_000)  # was RecursionError, exit 3
    check_fails(capsys, deep, "certificate.json: nested too deeply")
    (tmp_path / "plain.tar.gz").write_text("not gzip at all")
    check_fails(capsys, tmp_path / "plain.tar.gz", "not a readable .tar.gz archive")
    import tarfile

    with tarfile.open(tmp_path / "whole.tar.gz", "w:gz") as tar:
        tar.add(bundle, arcname="b")
    data = (tmp_path / "whole.tar.gz").read_bytes()
    (tmp_path / "cut.tar.gz").write_bytes(data[: len(data) // 2])
    check_fails(capsys, tmp_path / "cut.tar.gz", "not a readable .tar.gz archive")


def test_a_family_label_that_does_not_build_the_dag_is_refused(tmp_path, capsys):
    from spartition.certify.certify import certify_optimum

    # a chain of 20 nodes labelled as matmul 2x2x2 (20 nodes too) checked VALID as "matmul"
    G = build("chain", ["n=20"])
    G.graph.update(family="matmul", params={"a": 2, "b": 2, "c": 2})
    certify_optimum(G, 2, "oneshot", tmp_path / "label")
    check_fails(capsys, tmp_path / "label", r"dag.json says it is matmul a=2 b=2 c=2, but its graph is not that family")


def test_recompute_horizons_that_say_nothing_or_cannot_be_checked(tmp_path, capsys):
    from spartition.certify.certify import certify_optimum

    G = build("matmul", ["a=2", "b=2", "c=2"])
    with pytest.raises(ValueError, match="horizon 12 is below 24, the loads, stores and computes every schedule"):
        certify_optimum(G, 4, "recompute", horizon=12, time_limit=0.05)
    out = tmp_path / "r"
    certify_optimum(build("fft", ["k=1"]), 3, "recompute", out)

    def shrink(doc, root):
        doc["horizon"] = 3
        return doc

    check_fails(capsys, edited(out, tmp_path, shrink), r"horizon 3 is below 6, .*\(its 2 computes and 4 loads and stores\).* the statement would be empty")

    def huge(doc, root):
        doc["horizon"] = 10**12
        return doc

    import shutil

    shutil.rmtree(tmp_path / "bad")
    check_fails(capsys, edited(out, tmp_path, huge), r"horizon 1000000000000 makes a CNF of about")


def test_a_witness_is_replayed_at_the_calls_memory_and_variant():
    from spartition.certify.certify import certify_optimum
    from spartition.errors import IllegalMove

    G = build("fft", ["k=2"])
    S = solve_io(G, 4, time_limit=20).schedule  # optimal at M = 4: it needs a fourth red pebble
    with pytest.raises(IllegalMove, match="M = 3|red pebbles"):
        certify_optimum(G, 3, schedule=S)


def test_certify_leaves_no_temporary_directories(tmp_path, monkeypatch, capsys):
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    out = tmp_path / "c.tar.gz"
    assert main(["certify", "fft:k=1", "--M", "3", "-o", str(out)]) == 0
    assert main(["check-certificate", str(out)]) == 0
    assert "VALID pebbling certificate: OPTIMAL" in capsys.readouterr().out
    assert list(scratch.iterdir()) == []


# --------------------------------------------------------------------------- crashes on bad input


def test_ctrl_c_that_surfaces_as_another_exception_still_exits_130(tmp_path, monkeypatch, capsys):
    import signal

    import spartition.core.dag as dag_module

    def interrupted_import(path, format=None):
        # what an extension module does when Ctrl-C lands in its initialisation
        try:
            signal.raise_signal(signal.SIGINT)
        except KeyboardInterrupt:
            pass
        raise ImportError("initialization failed")

    monkeypatch.setattr(dag_module, "load_dag", interrupted_import)
    (tmp_path / "g.json").write_text("{}")
    # the handler this test relies on: a background job (`nohup pytest &`) starts with SIGINT ignored
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        assert main(["info", str(tmp_path / "g.json")]) == 130
        assert "interrupted" in capsys.readouterr().err
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored after the command
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("argv, message", [
    (["certify", "fft:k=1", "--M", "0", "-o", "X"], "argument --M: must be an integer >= 1, got '0'"),
    (["certify", "fft:k=1", "--M", "-1", "-o", "X"], "argument --M: must be an integer >= 1, got '-1'"),
    (["certify", "fft:k=1", "--M", "1_0", "-o", "X"], "argument --M: must be an integer >= 1, got '1_0'"),
    (["certify", "fft:k=1", "--M", "2", "-o", "X"], "M = 2 is too small: .* every pebbling needs M >= 3"),
    (["certify", "fft:k=1", "--M", "3", "--horizon", "-5", "-o", "X"], "argument --horizon: must be an integer >= 0"),
    (["certify", "fft:k=1", "--capacity", "0", "-o", "X"], "argument --capacity: must be an integer >= 1"),
    (["certify", "fft:k=1", "--capacity", "-5", "-o", "X"], "argument --capacity: must be an integer >= 1"),
    (["certify", "fft:k=1", "--partition", "0", "-o", "X"], "argument --partition: must be an integer >= 1"),
    (["certify", "fft:k=1,k=2", "--M", "3", "-o", "X"], "parameter k of fft is given twice"),
    (["solve", "fft:k=1", "--M", "1_0"], "must be an integer of magnitude at most .*, got '1_0'"),
    (["info", "fft:k=1_0"], "parameter k of fft must be an integer, got '1_0'"),
    (["certify", "matmul:a=2,b=2,c=2", "--M", "4", "--variant", "recompute", "--horizon", "12", "-o", "X"],
     "horizon 12 is below 24, .* no schedule fits, so the statement would be empty"),
    (["certify", "fft:k=1", "--M", "3", "--variant", "recompute", "--horizon", "1000000000", "-o", "X"],
     "horizon 1000000000 makes a CNF of about .* give a smaller horizon"),
])
def test_certify_arguments_out_of_range_are_refused(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])
    assert not (tmp_path / "X").exists()


def test_certify_help_shows_the_variant_choices_and_default(capsys):
    assert main(["certify", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "--variant {oneshot,recompute}" in text and "default oneshot (with --M)" in text
    assert "-o OUT, --out OUT" in text


def test_certify_refuses_to_write_over_its_input(tmp_path, capsys):
    path = tmp_path / "g.json"
    save_dag(build("fft", ["k=1"]), path)
    before = path.read_text()
    assert main(["certify", str(path), "--M", "3", "-o", str(tmp_path / "." / "g.json")]) == 2
    assert "is the input file" in capsys.readouterr().err and path.read_text() == before


# --------------------------------------------------------------------------- outputs that are inputs or the store


def _store_with_a_row(path):
    from spartition.study.store import ResultKey, ResultStore, StoredResult

    with ResultStore(path) as st:
        st.put(StoredResult(ResultKey("abc", 3, "oneshot", "greedy"), "VALID", 4.0, None, True, None, 0.0, {"io": 4}))


GRID = '[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = [2]\nexact = ["brute"]\nbounds = false\n'


@pytest.mark.parametrize("spelling", ["same", "dotted", "symlink"])
def test_no_output_is_the_store_or_an_input(tmp_path, capsys, spelling):
    import os

    store = tmp_path / "r.sqlite"
    _store_with_a_row(store)
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    alias = {"same": lambda p: p, "dotted": lambda p: p.parent / "." / p.name,
             "symlink": lambda p: (os.symlink(p, tmp_path / f"link-{p.name}"), tmp_path / f"link-{p.name}")[1]}
    before = store.read_bytes(), grid.read_text()
    cases = [
        (["report", "--store", str(store), "--html", str(alias[spelling](store))], "--html .* is the results store"),
        (["regress", str(grid), str(alias[spelling](grid)), "--update", "--store", str(store)],
         "golden file .* is the input file"),
    ]
    if spelling != "symlink":  # one link per target is enough
        cases.append((["regress", str(grid), str(alias[spelling](store)), "--update", "--store", str(store)],
                      "golden file .* is the results store"))
    for argv, message in cases:
        assert main(argv) == 2, argv
        assert re.search(message, capsys.readouterr().err)
        assert (store.read_bytes(), grid.read_text()) == before


@pytest.mark.parametrize("golden, message", [
    ('{"a":', r"unreadable JSON in .*gold.json"),
    ("[]", r"golden file .*gold.json must be a JSON object .* got list"),
    ('"x"', r"must be a JSON object .* got str"),
    ('{"values": 5}', r"the entry of 'values' must be an object with 'status' and 'value', got 5"),
    ('{"k": {"status": "OPTIMAL"}}', r"the entry of 'k' must be an object with 'status' and 'value'"),
])
def test_regress_with_a_malformed_golden_file(tmp_path, capsys, golden, message):
    grid = tmp_path / "g.toml"
    grid.write_text(GRID)
    (tmp_path / "gold.json").write_text(golden)
    assert main(["regress", str(grid), str(tmp_path / "gold.json"), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert re.search(message, capsys.readouterr().err)
    assert not (tmp_path / "s.sqlite").exists()  # refused before anything was computed


@pytest.mark.parametrize("source, message", [
    ("def (", r"c.py, line 1: syntax error"),
    ("raise RuntimeError('boom')", r"importing .*c.py raised RuntimeError: boom"),
    ("CLAIMS = 5", r"CLAIMS of .*c.py must be a ClaimSet \(or a function returning one\), got int"),
    ("CLAIMS = [5]", r"must be a ClaimSet .* got list"),
    ("def CLAIMS():\n    return {}", r"must be a ClaimSet .* got dict"),
    ("def CLAIMS():\n    raise KeyError('k')", r"CLAIMS\(\) of .*c.py raised KeyError"),
    ("import sys\nsys.exit(3)", r"importing .*c.py called sys.exit\(3\)"),  # was exit status 3
    ("def CLAIMS():\n    raise SystemExit('no')", r"CLAIMS\(\) of .*c.py called sys.exit\('no'\)"),
])
def test_claims_of_a_broken_python_file(tmp_path, capsys, source, message):
    (tmp_path / "c.py").write_text(source + "\n")
    assert main(["claims", str(tmp_path / "c.py"), "--store", str(tmp_path / "s.sqlite")]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_check_proof_on_a_device_ends_at_once(tmp_path, bundle, capsys):
    assert main(["check-proof", str(bundle / "formula.cnf"), "/dev/zero"]) == 1
    assert "proof file /dev/zero is not a regular file" in capsys.readouterr().err
    assert main(["check-proof", "/dev/zero", str(bundle / "proof.lrat")]) == 2
    assert "CNF file /dev/zero is not a regular file" in capsys.readouterr().err


# --------------------------------------------------------------------------- refused though valid


def test_integer_node_ids_get_a_message_naming_the_fix():
    import networkx as nx

    from spartition.core.bounds import trivial_lower_bound
    from spartition.errors import InvalidDAG

    G = nx.DiGraph([(0, 2), (1, 2), (2, 3)])
    for call in (lambda: solve_io(G, 3), lambda: trivial_lower_bound(G)):
        with pytest.raises(InvalidDAG, match=r"node id 0 is an int, not a string: .* networkx.relabel_nodes\(G, str\)"):
            call()
    r = solve_io(nx.relabel_nodes(G, str), 3)
    assert (r.status, r.io) == ("OPTIMAL", 3)  # load 0 and 1, store 3


# --------------------------------------------------------------------------- silently accepted


@pytest.mark.parametrize("argv, message", [
    (["capacity", "fft:k=2", "--X", "3", "--weight", "op=nope"],
     r"weight selector 'op=nope' matches no node of the DAG \(op takes butterfly, input\)"),
    (["capacity", "fft:k=2", "--X", "3", "--weight", "tensor=QK"], r"'tensor=QK' matches no node .*tensor takes F"),
    (["capacity", "fft:k=2", "--X", "3", "--weight", "colour=red"], r"no node has 'colour'"),
    (["certify", "fft:k=1", "--capacity", "3", "--weight", "op=nope", "-o", "X"], r"matches no node of the DAG"),
    (["build", "matmul-chain", "dims=two3four2x5"], r"'two3four2' is not a size"),
    (["build", "matmul-chain", "dims=-2,3,2"], r"'-2' is not a size"),
    (["build", "matmul-chain", "dims=2,3"], r"at least three positive sizes"),
    (["build", "fft", "k=1", "k=2"], r"parameter k of fft is given twice"),
])
def test_inputs_once_accepted_as_something_else(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main(argv + ["--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])
    assert not (tmp_path / "X").exists()


def test_matmul_chain_sizes_in_any_separator_build_the_same_dag():
    from spartition.core.dag import dag_hash

    hashes = {dag_hash(build("matmul-chain", [f"dims={d}"])) for d in ("2,3,2", "2x3x2", "2 3 2", "2;3;2")}
    assert len(hashes) == 1 and build("matmul-chain", ["dims=2x3x2"]).number_of_nodes() == 32


@pytest.mark.parametrize("flags, message", [
    (["--M", "3", "--horizon", "10"], r"--horizon applies to --M with --variant recompute .* not to oneshot"),
    (["--partition", "2", "--horizon", "10"], r"--horizon applies to .* not to --partition"),
    (["--partition", "2", "--variant", "recompute"], r"--variant applies to --M, not to --partition"),
    (["--M", "3", "--weight", "op=input"], r"--weight applies to --capacity, not to --M"),
    (["--partition", "2", "--convex"], r"--convex applies to --capacity, not to --partition"),
])
def test_certify_flags_of_another_mode_are_refused(tmp_path, capsys, flags, message):
    assert main(["certify", "fft:k=1", *flags, "-o", str(tmp_path / "X"), "--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])
    assert not (tmp_path / "X").exists()


def test_a_tar_gz_bundle_appears_whole_or_not_at_all(tmp_path, monkeypatch):
    import tarfile

    from spartition.certify.certify import certify_optimum

    def killed(self, *args, **kwargs):
        raise KeyboardInterrupt  # as a kill during packing

    monkeypatch.setattr(tarfile.TarFile, "add", killed)
    with pytest.raises(KeyboardInterrupt):
        certify_optimum(build("fft", ["k=1"]), 3, "oneshot", tmp_path / "b.tar.gz")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("argv, message", [
    (["compare", "chain", "n=3", "--M", "1_0", "--no-store"], r"memories must be positive integers, got '1_0'"),
    (["compare", "chain", "n=3", "--M", "1_0..12", "--no-store"], r"bad range '1_0..12'"),
    (["compare", "chain", "n=3", "--M", "3", "--jobs", "1_0", "--no-store"], r"--jobs must be a positive integer"),
])
def test_underscores_in_numbers_are_typos_everywhere(capsys, argv, message):
    assert main(argv + ["--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])


# --------------------------------------------------------------------------- certify's time limit bounds the command


def test_certify_time_limit_covers_the_refutation(tmp_path, monkeypatch, capsys):
    import tempfile

    # fft 8 points at M = 4: the refutation ran for minutes past --time-limit 2 (the limit covered the witness only)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    out = tmp_path / "c.tar.gz"
    assert main(["certify", "fft:k=3", "--M", "4", "--time-limit", "1", "-o", str(out), "--json"]) == 2
    error = json.loads(capsys.readouterr().out)
    assert error["kind"] == "TimeLimitReached"
    # stopped in the search, or refused before building a CNF the time left cannot build (issue 42)
    assert re.search(r"(the time limit ran out .*refuting|the CNF refuting) I/O <= \d+ at M = 4.*: the best replayed "
                     r"schedule has I/O \d+, not certified; no bundle written", error["error"]), error
    assert not out.exists() and list(scratch.iterdir()) == []


@pytest.mark.parametrize("kind, message", [
    ("partition", r"before the CNF refuting [23] classes for S = 3 was built: the best checked partition has [34] classes"),
    ("capacity", r"before the CNF refuting a class of weight >= 1 for X = 3 was built: the heaviest class found weighs 0"),
    ("optimum", r"before the CNF refuting I/O <= 10 at M = 4 was built: the best replayed schedule has I/O 11"),
])
def test_every_certificate_kind_stops_at_its_time_limit(tmp_path, kind, message):
    from spartition.certify.certify import certify_capacity, certify_optimum, certify_partition
    from spartition.errors import TimeLimitReached

    G = build("fft", ["k=2"])  # P(3) = 3 (CP-SAT starts at 3 or 4 in 0.05 s); the M = 4 optimum is 11
    call = {"partition": lambda: certify_partition(G, 3, tmp_path / "b", time_limit=1e-9),
            "capacity": lambda: certify_capacity(G, 3, out=tmp_path / "b", time_limit=1e-9),
            "optimum": lambda: certify_optimum(G, 4, out=tmp_path / "b", time_limit=1e-9,
                                               schedule=solve_io(G, 4, time_limit=20).schedule)}[kind]
    with pytest.raises(TimeLimitReached, match=message):
        call()
    assert not (tmp_path / "b").exists()


def test_a_search_in_slices_answers_as_one_search_with_a_checked_proof(tmp_path, monkeypatch):
    import time

    from pysat.solvers import Cadical195

    from spartition.certify import sat
    from spartition.certify.encoding import default_horizon, pebbling_cnf
    from spartition.certify.proof import check_lrat
    from spartition.errors import TimeLimitReached

    calls = []
    limited = Cadical195.solve_limited
    monkeypatch.setattr(Cadical195, "solve_limited", lambda self, *a, **k: calls.append(1) or limited(self, *a, **k))
    monkeypatch.setattr(sat, "FIRST_SLICE_CONFLICTS", 20)
    monkeypatch.setattr(sat, "SLICE_SECONDS", 0.0)  # never double: many slices
    G = build("fft", ["k=2"])  # optimum 11 at M = 4
    below = pebbling_cnf(G, 4, "oneshot", 10, horizon=default_horizon(G, "oneshot", 10)).cnf
    proof = tmp_path / "p.lrat"
    # without a deadline: in this process, in slices (with one, in a child: tests/certify/test_sat_deadline.py)
    assert sat.solve_cnf(below, proof).satisfiable is False
    assert len(calls) > 10  # the proof spans many slices and still checks
    report = check_lrat(below, proof)
    assert report.additions > 0
    at = pebbling_cnf(G, 4, "oneshot", 11, horizon=default_horizon(G, "oneshot", 11)).cnf
    assert sat.solve_cnf(at).satisfiable is True
    assert sat.solve_cnf(below, deadline=time.perf_counter() - 1).satisfiable is None
    if report.lines >= 4096:
        with pytest.raises(TimeLimitReached, match="the time limit ran out at line 4,096 of the LRAT check"):
            check_lrat(below, proof, deadline=time.perf_counter() - 1)


# --------------------------------------------------------------------------- files that claim a family they are not


def test_sandwich_takes_no_formula_from_a_family_label_the_graph_does_not_match(tmp_path, capsys):
    G = build("chain", ["n=3"])
    G.graph.update(family="attention-forward", params={"n": 32, "d": 2})
    save_dag(G, tmp_path / "lie.json")
    # the formula for attention n = 32 (over 1,000) stood above the chain's replayed 2: an internal error, exit 3
    assert main(["sandwich", str(tmp_path / "lie.json"), "--M", "3", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert (row["lower"]["method"], row["lower"]["value"], row["upper"]["value"]) == ("trivial", 2, 2)
    assert "formulas: the DAG is not attention-forward n=32 d=2's" in row["skipped"][0]
    # n = 2: its exact optimum is proven in a second, where n = 4 takes the exact solver's 10 s
    save_dag(build("attention-forward", ["n=2", "d=1"]), tmp_path / "true.json")
    assert main(["sandwich", str(tmp_path / "true.json"), "--M", "4", "--json"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert [s["method"] for s in row["lowers"] if s["method"].startswith("formula:")] and not row["skipped"]


# --------------------------------------------------------------------------- devices are not files


@pytest.mark.parametrize("argv", [["info", "{zero}.json"], ["info", "{zero}.dot"], ["info", "{zero}.hdag"],
                                  ["replay", "fft:k=1", "{zero}.json"], ["check-partition", "fft:k=1", "{zero}.json"]])
def test_a_device_is_refused_before_it_is_read(tmp_path, capsys, argv):
    import os

    zero = tmp_path / "zero"
    for ext in (".json", ".dot", ".hdag"):
        os.symlink("/dev/zero", f"{zero}{ext}")  # /dev/zero named as a DAG file was read until memory ran out
    argv = [a.format(zero=zero) for a in argv]
    assert main(argv) == 2
    assert re.search(r"file .*zero\.\w+ is a device, not a file", capsys.readouterr().err)


# --------------------------------------------------------------------------- time limits at scale


def test_the_recompute_events_estimate_counts_the_store_prefix_sums():
    from spartition.core.dag import as_compact
    from spartition.cpsat import budget_refusal
    from spartition.exact.formulations.events import estimate_event_model

    # attention n=2 d=2 recompute, 246 events: the build took 5.8 s of CPU (20 s on a loaded machine) where the
    # estimate said 1.3 s, so `solve --time-limit 15` built it with 10 s left and ended at 19 s
    c = as_compact(build("attention-forward", ["n=2", "d=2"]))
    size = estimate_event_model(c, "recompute", 246)
    assert size["constraints"] == 5 * 36 * 246 and size["build_seconds"] == pytest.approx(5.686)
    assert estimate_event_model(c, "oneshot", 36)["build_seconds"] == 0.194  # 5 N E constraints at 30 us: unchanged
    assert re.search(r"the events model would hold about 44,280 constraints, about 6 s to build: more than half the "
                     r"time left \(10.0 s\)", budget_refusal(size, 10.0))
    assert budget_refusal(size, 12.0) == ""


def test_capacity_gives_cp_sat_what_is_left_of_its_time_limit(monkeypatch):
    import spartition.partition.capacity as capacity

    # the solver got the whole limit after the model was built: 18 s for --time-limit 15 on a 5,400-node HyperDAG
    given = []

    def record(time_limit, *args, **kwargs):
        given.append(time_limit)
        raise KeyboardInterrupt  # stop before the search

    monkeypatch.setattr(capacity, "recorded_solver", record)
    with pytest.raises(KeyboardInterrupt):
        capacity.class_capacity(build("fft", ["k=4"]), 6, time_limit=10)
    assert len(given) == 1 and 0.1 <= given[0] < 10


def test_improve_windows_search_no_longer_than_the_time_left(monkeypatch):
    import spartition.exact.windows as windows
    from spartition.core.greedy import greedy_schedule

    # each window had 2 s whatever was left: improve fft 64 points at --time-limit 15 ended after 21 s
    limits = []
    new_solver = windows.new_solver

    def recorded(seconds, *args, **kwargs):
        limits.append(seconds)
        return new_solver(seconds, *args, **kwargs)

    monkeypatch.setattr(windows, "new_solver", recorded)
    G = build("fft", ["k=4"])
    S = greedy_schedule(G, 4)
    r = windows.improve_windows(G, S, k=4, time_limit=0.3)
    assert limits and max(limits) <= 0.3 and r.time_limited
    assert r.after <= r.before == 160  # greedy's I/O on fft 16 points at M = 4; never worse
    limits.clear()
    r = windows.improve_windows(G, S, k=4, time_limit=600)
    assert set(limits) == {2.0} and not r.time_limited and r.covered == 1


@pytest.mark.parametrize("method, message", [
    ("steps", r"step search stopped after [\d,]+ states \(time limit; DAG too large\)"),
    ("moves", r"brute force gave up after 1 s \(time limit\) and [\d,]+ states \(DAG too large\)"),
])
def test_brute_on_a_big_dag_stops_at_its_time_limit(capsys, method, message):
    # fft 32 points: the step search ran past 10 minutes (one isomorphism search of its symmetry detection alone)
    assert main(["brute", "fft:k=5", "--M", "4", "--method", method, "--time-limit", "1", "--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])


def test_an_isomorphism_search_gives_up_at_its_deadline(monkeypatch):
    import sys
    import time

    import spartition.core.symmetry as symmetry
    from spartition.core.dag import compact

    c = compact(build("fft", ["k=1"]))
    w, u = c.index["F1_0"], c.index["F1_1"]
    tracer = sys.gettrace()
    assert symmetry.find_automorphism(c, [], w, u)[w] == u
    monkeypatch.setattr(symmetry, "CLOCK_EVERY_CALLS", 1)
    assert symmetry.find_automorphism(c, [], w, u, deadline=time.perf_counter() - 1) is None
    assert symmetry.find_automorphism(c, [], w, u, deadline=time.perf_counter() + 600)[w] == u
    assert sys.gettrace() is tracer  # a debugger's or coverage's tracer comes back

    def endless(G1, G2, node_label):  # an exponential search, as VF2++ met on fft k=5, made certain
        while True:
            sorted(G1)

    monkeypatch.setattr(symmetry.nx, "vf2pp_isomorphism", endless)
    sb = symmetry.symmetry_precedences(build("fft", ["k=2"]), time_budget=0.5)
    assert not sb.complete and sb.pairs == () and sb.group_order == 1  # stopped inside the first search
    assert sys.gettrace() is tracer


@pytest.mark.parametrize("argv, message", [
    (["formulas", "fft", "k=10000000000000", "--M", "4"], r"fft k=10000000000000: N = 2\^k points is beyond a float"),
    (["formulas", "approx-attention", "n=99999999999", "d=999999999", "g=99999", "--M", "4"],
     r"r = tau\(d, g\) = C\(999999999 \+ 99999, 99999\) has about 443,425 digits"),
    (["formulas", "attention-forward", "n=1000000", "d=64", "mask=random", "--M", "4"],
     r"a random mask on n=1000000 draws n\^2 = 1,000,000,000,000 pairs"),
])
def test_formulas_refuse_parameters_they_cannot_evaluate(capsys, argv, message):
    # each of these ran past 60 s (2^k, C(d + g, g), n^2 pairs computed before any formula)
    assert main(argv + ["--json"]) == 2
    assert re.search(message, json.loads(capsys.readouterr().out)["error"])


def test_formulas_of_huge_attention_count_the_mask_in_closed_form(capsys):
    # n = 10^12: Z_QK was the size of an enumerated set of n^2 pairs
    assert main(["formulas", "attention-forward", "n=1000000000000", "d=100000000", "mask=causal", "--M", "4",
                 "--json"]) == 0
    paper = json.loads(capsys.readouterr().out)["paper_params"]
    assert paper["Z_QK"] == 10**12 * (10**12 + 1) // 2 and paper["Z_input"] == 3 * 10**12 * 10**8
    assert main(["formulas", "attention-forward", "n=4", "d=2", "mask=random", "density=0.5", "seed=3", "--M", "4",
                 "--json"]) == 0
    from spartition.families.attention.masks import mask_size

    assert json.loads(capsys.readouterr().out)["paper_params"]["Z_QK"] == mask_size(4, "random", density=0.5, seed=3)



@pytest.mark.slow
def test_compare_brute_stops_at_the_time_limit(capsys):
    # fft 8 points at M = 4: the brute force had no limit in a study, and compare --time-limit 3 ran for 230 s
    assert main(["compare", "fft", "k=3", "--M", "4", "--exact", "brute", "--time-limit", "1", "--no-bounds",
                 "--algorithms", "greedy", "--no-store", "--json"]) == 0
    out = capsys.readouterr().out
    assert "UNKNOWN" in out and re.search(r"brute force gave up after 1 s \(time limit\)", out)


def test_a_memory_list_is_bounded(capsys):
    # sandwich --M 1..100000 --time-limit 5 ran past 120 s: a row per memory, each with its own solver runs
    assert main(["sandwich", "fft:k=2", "--M", "1..100000", "--json"]) == 2
    assert re.search(r"--M: 100,000 memories in '1..100000', more than 1,000",
                     json.loads(capsys.readouterr().out)["error"])


@pytest.mark.skipif(__import__("os").name != "posix", reason="SIGINT")
def test_ctrl_c_during_certifys_witness_search_ends_the_command(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    # the witness search returned its best at Ctrl-C and certify went on refuting from it (20 s later: running)
    out = tmp_path / "b"
    # attention n = 2, d = 3 at M = 6: CP-SAT proves no optimum within the 30 s witness share (fft 8 points, the
    # instance first used here, is now proven in half a second, and the Ctrl-C landed in the refutation instead)
    proc = subprocess.Popen([sys.executable, "-m", "spartition", "certify", "attention-forward:n=2,d=3", "--M", "6",
                             "--time-limit", "60", "-o", str(out)], stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(4)
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    err = proc.communicate(timeout=60)[1]
    assert proc.returncode == 130 and "interrupted" in err and not out.exists()
    assert time.monotonic() - sent < 15  # the command ends; it does not go on to refute from the witness


def test_ctrl_c_inside_cadical_is_an_interrupt(tmp_path, monkeypatch):
    import pysolvers
    from pysat.solvers import Cadical195

    def caught(self, *args, **kwargs):
        raise pysolvers.error("Caught keyboard interrupt")  # what PySAT's SIGINT handler raises mid-search

    monkeypatch.setattr(Cadical195, "solve_limited", caught)
    monkeypatch.setattr(Cadical195, "solve", caught)
    # was an internal error: "Caught keyboard interrupt". CaDiCaL runs in this process without a time limit
    # (with one, in a child that Ctrl-C kills: tests/certify/test_sat_deadline.py)
    from spartition.certify.certify import certify_optimum

    with pytest.raises(KeyboardInterrupt):
        certify_optimum(build("fft", k=1), 3, out=tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_a_cnf_too_large_to_certify_is_refused_before_the_witness(tmp_path, monkeypatch):
    import spartition.certify.certify as certify
    import spartition.exact.solve as solve

    # fft 4,096 points: certify --time-limit 5 built a CNF of some 4 * 10^10 literals for over a minute
    monkeypatch.setattr(certify, "MAX_CNF_CELLS", 1000)
    monkeypatch.setattr(solve, "solve_io", lambda *a, **k: pytest.fail("the witness was searched for"))
    with pytest.raises(ValueError, match=r"the time-indexed CNF of this DAG \(12 nodes, horizon \d+\) would hold "
                                         r"about [\d,]+ literals, more than 1,000: too large to certify; "
                                         r"--encoding order"):
        certify.certify_optimum(build("fft", ["k=2"]), 4, out=tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_claims_json_is_one_object(tmp_path, capsys):
    # issue 24: claims --json printed a list
    path = tmp_path / "c.py"
    path.write_text(
        "from spartition.study.claims import Claim, expr\n"
        "from spartition.study.claimsets import ClaimSet\n"
        "C = Claim('all-skipped', 's', 'here', 'chain', {'n': [3]}, expr(lambda p, M: 1, '1'), '<=',\n"
        "          expr(lambda p, M: None, 'undefined'), Ms=(2,), sanity=True)\n"
        "CLAIMS = ClaimSet('t', 'paper', (C,))\n")
    assert main(["claims", str(path), "--store", str(tmp_path / "s.sqlite"), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [s["claimset"] for s in out["claimsets"]] == ["t"]
    assert [c["claim"] for c in out["claimsets"][0]["claims"]] == ["all-skipped"]


def test_the_time_limit_counts_the_time_spent_building_the_dag(monkeypatch):
    # bounds fft:k=13 --time-limit 10 took 14 s: the 2 s build and 2 s compaction came on top of the limit
    import time

    import spartition.cli.partition as cli_partition
    import spartition.partition.lower_bounds as lower_bounds

    seen = {}

    def spy(G, M, **kw):
        seen["time_limit"] = kw["time_limit"]
        raise KeyboardInterrupt

    def slow_read(*args, **kw):
        time.sleep(1.0)  # a DAG that takes a second to build
        return read(*args, **kw)

    read = cli_partition.read_dag_arg
    monkeypatch.setattr(cli_partition, "read_dag_arg", slow_read)
    monkeypatch.setattr(lower_bounds, "io_lower_bounds", spy)
    assert main(["bounds", "fft:k=2", "--M", "4", "--time-limit", "3"]) == 130
    assert 0.1 <= seen["time_limit"] <= 2.0
