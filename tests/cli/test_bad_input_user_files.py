"""Issue 42: a user's own DAG and files: nothing lost, limits kept, errors in the user's terms.

Each test names the loss or misleading answer it prevents: an output flag
that writes over the results store or an input file.
"""

import argparse
import json

import pytest

from spartition.cli.main import main, parser
from spartition.core.dag import dag_hash, save_dag
from spartition.core.game import save_schedule
from spartition.core.greedy import greedy_schedule
from spartition.core.registry import build

# --------------------------------------------------------------------------- outputs: never the store, never an input

#: Every command with an output flag: its argv ({out} the output; {dag}, {sched}, {cert}, {grid} its inputs,
#: {store} the results store) and the inputs it reads.
OUTPUT_COMMANDS = {
    "build": (["build", "fft", "k=1", "-o", "{out}"], ()),
    "convert": (["convert", "{dag}", "{out}"], ("dag",)),
    "greedy": (["greedy", "{dag}", "--M", "3", "-o", "{out}"], ("dag",)),
    "improve": (["improve", "{dag}", "{sched}", "--time-limit", "5", "-o", "{out}"], ("dag", "sched")),
    "brute": (["brute", "{dag}", "--M", "3", "--schedule-out", "{out}"], ("dag",)),
    "solve": (["solve", "{dag}", "--M", "3", "--schedule-out", "{out}"], ("dag",)),
    "partition": (["partition", "{dag}", "--S", "3", "-o", "{out}"], ("dag",)),
    "schedule": (["schedule", "greedy", "{dag}", "--M", "3", "-o", "{out}"], ("dag",)),
    "certify": (["certify", "{dag}", "--M", "3", "-o", "{out}"], ("dag",)),
    "draw": (["draw", "{dag}", "{sched}", "--kind", "layered", "--partition", "{cert}", "-o", "{out}"],
             ("dag", "sched", "cert")),
    "report": (["report", "--store", "{store}", "--html", "{out}"], ()),
    "sandwich": (["sandwich", "{dag}", "--M", "3", "--schedule-out", "{out}"], ("dag",)),
    "regress": (["regress", "{grid}", "{out}", "--update", "--store", "{store}"], ("grid",)),
}

#: The destinations of the flags (and positionals) that name a file a command writes.
OUTPUT_DESTS = {"output", "out", "schedule_out", "html", "golden"}

GRID = '[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = [2]\nexact = ["brute"]\nbounds = false\n'


def _commands_with_an_output():
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {name for name, p in sub.choices.items() if any(a.dest in OUTPUT_DESTS for a in p._actions)}


def test_the_table_names_every_command_with_an_output():
    # a new command with an output flag must join the loop below
    assert _commands_with_an_output() == set(OUTPUT_COMMANDS)


@pytest.fixture
def user_files(tmp_path, monkeypatch):
    """A user's DAG (fft k=1), schedule, partition certificate and grid, and a results store with a row."""
    from spartition.partition.certificate import Partition, save_partition
    from spartition.study.store import ResultKey, ResultStore, StoredResult

    G = build("fft", ["k=1"])
    files = {"dag": tmp_path / "g.dot", "sched": tmp_path / "s.json", "cert": tmp_path / "p.json",
             "grid": tmp_path / "grid.toml", "store": tmp_path / "results.sqlite"}
    save_dag(G, files["dag"])
    save_schedule(greedy_schedule(G, 3), files["sched"])
    save_partition(Partition(4, [sorted(G)]), files["cert"])
    files["grid"].write_text(GRID)
    with ResultStore(files["store"]) as st:
        st.put(StoredResult(ResultKey("abc", 3, "oneshot", "greedy"), "VALID", 4.0, None, True, None, 0.0, {"io": 4}))
    # the commands without --store must refuse the store they would use
    monkeypatch.setenv("SPARTITION_STORE", str(files["store"]))
    return files


@pytest.mark.parametrize("command", sorted(OUTPUT_COMMANDS))
def test_no_output_flag_writes_over_the_store_or_an_input(user_files, capsys, command):
    # `convert mlp.json <the store>` exited 0 and every later compare failed: "not an SQLite database"
    template, inputs = OUTPUT_COMMANDS[command]
    files = user_files
    before = {k: p.read_bytes() for k, p in files.items()}
    for target in ("store", *inputs):
        path = files[target]
        for spelling in (path, path.parent / "." / path.name):
            argv = [a.format(out=spelling, **files) for a in template]
            assert main(argv + ["--json"]) == 2, (argv, capsys.readouterr())
            out, err = capsys.readouterr()
            assert json.loads(out)["kind"] == "UsageError"
            what = "the results store" if target == "store" else "the input file"
            assert f"is {what} {path if target != 'store' else files['store']}" in err, err
            assert "refusing to overwrite it" in err
            assert {k: p.read_bytes() for k, p in files.items()} == before, argv


def test_a_bundle_directory_may_not_hold_the_input(tmp_path, capsys):
    # certify writes dag.json, witness.json, ... into --out: a DAG there would be replaced
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    dag = bundle / "dag.json"
    save_dag(build("fft", ["k=1"]), dag)
    before = dag.read_bytes()
    assert main(["certify", str(dag), "--M", "3", "-o", str(bundle)]) == 2
    assert f"--out {bundle} holds the input file {dag}: refusing to overwrite it" in capsys.readouterr().err
    assert dag.read_bytes() == before


# --------------------------------------------------------------------------- the HyperDAG writer is linear


class _CountingId(str):
    """A node id that counts its equality tests: a list membership test makes one per element passed."""

    comparisons = 0

    def __eq__(self, other):
        _CountingId.comparisons += 1
        return str.__eq__(self, other)

    __hash__ = str.__hash__


@pytest.mark.parametrize("layout", ["db", "plain"])
def test_the_hyperdag_writer_compares_node_ids_a_linear_number_of_times(layout):
    # `convert fft:k=16 big.hdag` ran for over 15 minutes: `v in sources` scanned a list for each node
    import networkx as nx

    from spartition.core.formats.hyperdag import hyperdag_text, parse_hyperdag

    G = build("fft", ["k=7"])  # 1,024 nodes
    H = nx.relabel_nodes(G, {v: _CountingId(v) for v in G})
    _CountingId.comparisons = 0
    text = hyperdag_text(H, layout)
    assert _CountingId.comparisons <= 4 * H.number_of_nodes(), _CountingId.comparisons
    assert dag_hash(parse_hyperdag(text, "t.hdag")) == dag_hash(G)  # the same file as before


# --------------------------------------------------------------------------- errors in the user's terms


def _claims_file(tmp_path, lhs, rhs, name="c.py"):
    path = tmp_path / name
    path.write_text(
        "from spartition.study.claims import Claim, expr, optimum\n"
        "from spartition.study.claimsets import ClaimSet\n"
        f"C = Claim('mine', 's', 'here', 'chain', {{'n': [3]}}, {lhs}, '==', {rhs}, Ms=(2,))\n"
        "CLAIMS = ClaimSet('t', 'paper', (C,))\n")
    return path


def test_a_claim_expression_that_raises_is_the_users_error(tmp_path, capsys):
    # a KeyError in the user's lambda was "internal error, please report" (exit 3)
    path = _claims_file(tmp_path, "expr(lambda p, M: p['nope'], 'p[nope]')", "expr(lambda p, M: 2, '2')")
    assert main(["claims", str(path), "--store", str(tmp_path / "s.sqlite"), "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data == {"error": "claim 'mine' at n=3, M=2: expression 'p[nope]' raised KeyError: 'nope'",
                    "kind": "InvalidClaim"}


def test_a_missing_claims_file_is_named_as_missing(tmp_path, capsys):
    assert main(["claims", str(tmp_path / "nonexist.py")]) == 2
    assert capsys.readouterr().err.strip() == f"spartition: error: claims file {tmp_path / 'nonexist.py'} does not exist"


@pytest.mark.parametrize("fmt, line", [
    ([], "    witness: chain n=3 M=2: optimum[brute] = 2 (optimum, brute OPTIMAL) == 3 = 3 (3)"),
    (["--markdown"], "| mine | s | here | every instance | n=3 | 1/0 | 0/1/0 | fails | "
                     "chain n=3 M=2: optimum[brute] = 2 (optimum, brute OPTIMAL) == 3 = 3 (3) |"),
])
def test_the_witness_of_a_failed_claim_shows_both_numbers(tmp_path, capsys, fmt, line):
    # only --json had the optimum 2 and the claimed 3; text and Markdown said "optimum, brute OPTIMAL"
    path = _claims_file(tmp_path, 'optimum("brute")', "expr(lambda p, M: 3, '3')")
    assert main(["claims", str(path), "--store", str(tmp_path / "s.sqlite"), *fmt]) == 1
    assert line in capsys.readouterr().out.splitlines()


def test_a_dag_given_as_the_schedule_is_named(tmp_path, capsys):
    # `improve mlp.json mlp.json` said "schedule has no 'M' key", naming no file
    dag = tmp_path / "a.json"
    save_dag(build("fft", ["k=1"]), dag)
    for argv in (["improve", dag, dag], ["replay", dag, dag], ["draw", dag, dag, "-o", tmp_path / "t.png"]):
        assert main([str(a) for a in argv]) == 2
        assert capsys.readouterr().err.strip() == (f"spartition: error: schedule file {dag} (it holds a DAG, not a "
                                                   "schedule): schedule has no 'M' key")


def test_an_unknown_formula_lists_the_registered_ones():
    from spartition.errors import UnknownFamily
    from spartition.study.formulas import all_formulas, formula_named

    with pytest.raises(UnknownFamily, match=r"unknown formula 'sy-lowr'; registered: hk-fft-lower, .*, sy-lower,") as e:
        formula_named("sy-lowr")
    assert all(f.name in str(e.value) for f in all_formulas())


def test_improve_refuses_a_window_of_no_computes(tmp_path, capsys):
    # --window 0 was accepted; --no-windows says "off"
    G = build("fft", ["k=1"])
    dag, sched = tmp_path / "g.json", tmp_path / "s.json"
    save_dag(G, dag)
    save_schedule(greedy_schedule(G, 3), sched)
    assert main(["improve", str(dag), str(sched), "--window", "0"]) == 2
    assert "argument --window: must be an integer >= 1, got '0'" in capsys.readouterr().err
    assert main(["improve", str(dag), str(sched), "--no-windows", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["replayed_io"] == 4 and "windows" not in data["method"]


def test_cube_depth_without_the_cubes_engine_is_refused(capsys):
    # it was silently ignored
    assert main(["solve", "fft:k=1", "--M", "3", "--engine", "cp-sat", "--cube-depth", "2", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == "--cube-depth applies to --engine cubes, not to --engine cp-sat"


def test_a_oneshot_engine_in_the_recompute_game_is_refused_in_the_games_terms(capsys):
    # was: "the events formulation has no MaxSAT engine"
    assert main(["solve", "fft:k=1", "--M", "3", "--engine", "cubes", "--variant", "recompute", "--json"]) == 2
    assert json.loads(capsys.readouterr().out)["error"] == (
        "engine 'cubes' solves the oneshot game only (on the order model); the recompute game is solved by CP-SAT: "
        "engine 'cp-sat' or 'auto'")


def test_solve_names_what_answered_when_no_model_ran(capsys):
    # greedy meets the trivial bound: "(M = 3, oneshot, none model, ...)"
    assert main(["solve", "fft:k=1", "--M", "3"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("OPTIMAL: io = 4, lower bound = 4 (M = 3, oneshot, no model solved, ")
    assert "none model" not in first


@pytest.mark.parametrize("out", ["t.png", "t.dot"])
def test_draw_of_an_illegal_schedule_is_a_failed_check(tmp_path, capsys, out):
    # draw exited 2 (bad input) where replay and improve exit 1 (an invalid schedule)
    pytest.importorskip("matplotlib")
    G = build("fft", ["k=1"])
    dag, sched = tmp_path / "g.json", tmp_path / "s.json"
    save_dag(G, dag)
    s = greedy_schedule(G, 3)
    save_schedule(type(s)(2, s.variant, s.moves), sched)  # three red pebbles where two are allowed
    assert main(["replay", str(dag), str(sched)]) == 1
    replay_err = capsys.readouterr().err
    assert main(["draw", str(dag), str(sched), "-o", str(tmp_path / out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"spartition: invalid schedule {sched}: step ") and err.split(": ", 2)[2] in replay_err
    assert not (tmp_path / out).exists()


def test_sandwich_below_the_smallest_feasible_memory_exits_2(capsys):
    # it printed a row with no upper side and exited 0, where solve exits 2
    assert main(["sandwich", "fft:k=2", "--M", "2,4", "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["kind"] == "InfeasibleMemory" and "every pebbling needs M >= 3" in data["error"]


def test_tuple_node_ids_in_json_get_the_relabel_hint(tmp_path, capsys):
    import networkx as nx

    G = nx.DiGraph([(("A", 0), ("B", 1))])
    path = tmp_path / "t.json"
    path.write_text(json.dumps(nx.node_link_data(G, edges="edges")))
    assert main(["info", str(path)]) == 2
    assert "node id ['A', 0] is not a string or a number; a tuple id such as ('A', 0, 1) is written as a list: " \
           "relabel the graph before saving it, G = networkx.relabel_nodes(G, str)" in capsys.readouterr().err


def test_a_solve_result_repr_counts_the_moves():
    # the repr printed every move of the schedule
    from spartition.exact.solve import solve_io

    r = solve_io(build("fft", ["k=3"]), 4, time_limit=10)
    assert f"moves=<{len(r.schedule.moves):,} moves>" in repr(r)
    assert "'compute'" not in repr(r) and len(r.schedule.moves) > 40


# --------------------------------------------------------------------------- Ctrl-C


def test_ctrl_c_in_the_recompute_step_search_reports_the_best_so_far(monkeypatch, capsys):
    # `solve --variant recompute` interrupted printed only "spartition: interrupted"
    import spartition.exact.solve as solve_module

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(solve_module, "step_search", interrupted)
    assert main(["solve", "fft:k=2", "--M", "3", "--variant", "recompute", "--json"]) == 130
    data = json.loads(capsys.readouterr().out)
    assert data["interrupted"] is True and data["status"] == "FEASIBLE"
    assert data["schedule_source"] == "oneshot-optimal" and data["io"] == 14 and data["lower_bound"] == 8
    assert data["message"] == ("best I/O 14, proven lower bound 8 (the search was cut short in the exhaustive "
                               "step search); stopped by Ctrl-C")


def _greedy_files(tmp_path, spec="attention-forward:n=4,d=2", M=8):
    from spartition.cli.common import read_dag_arg

    G = read_dag_arg(spec)
    sched = tmp_path / "s.json"
    save_schedule(greedy_schedule(G, M), sched)
    return G, sched


def test_ctrl_c_in_the_cp_sat_windows_stops_improve_with_the_best_so_far(tmp_path, monkeypatch, capsys):
    # CP-SAT's own SIGINT handler ended one window's search and the loop went on: Ctrl-C was lost (exit 0 at 52 s)
    import spartition.exact.windows as windows
    from spartition.cpsat import solve_interruptibly

    calls = []

    def ctrl_c_during_the_first_window(solver, model, interrupt, *args, **kwargs):
        calls.append(1)
        interrupt.seen = True  # what the SIGINT handler of solve_interruptibly records
        return solve_interruptibly(solver, model, interrupt, *args, **kwargs)

    monkeypatch.setattr(windows, "solve_interruptibly", ctrl_c_during_the_first_window)
    G, sched = _greedy_files(tmp_path)
    out = tmp_path / "better.json"
    assert main(["improve", "attention-forward:n=4,d=2", str(sched), "--time-limit", "60", "-o", str(out),
                 "--json"]) == 130
    data = json.loads(capsys.readouterr().out)
    assert calls == [1] and data["interrupted"] is True
    assert "cp-sat windows (k=16, 1 solved" in data["tried"][-1]["pass"]
    from spartition.core.game import load_schedule, replay

    assert replay(G, load_schedule(out)).io == data["replayed_io"] <= data["before"]


def test_ctrl_c_between_eviction_passes_keeps_the_passes_done(monkeypatch):
    import spartition.exact.improve as improve

    real, calls = improve.evict_by_lookahead, []

    def second_pass_interrupted(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(improve, "evict_by_lookahead", second_pass_interrupted)
    G = build("attention-forward", ["n=4", "d=2"])
    try:
        r = improve.improve_schedule(G, greedy_schedule(G, 8), window=16)
    except KeyboardInterrupt:  # escaping, it would stop the test session
        pytest.fail("Ctrl-C lost the passes already done")
    assert r.interrupted and [p for p, _ in r.tried] == ["lookahead-eviction(weight=1.0)"]


def test_improve_keeps_a_time_limit_already_spent(monkeypatch):
    # improve on fft k=12 with --time-limit 5 took 11.5 s: reading the inputs counted for nothing
    from spartition.exact.improve import improve_schedule

    G = build("attention-forward", ["n=4", "d=2"])
    s = greedy_schedule(G, 8)
    r = improve_schedule(G, s, time_limit=0.0, window=16)
    assert (r.method, r.time_limited, r.after) == ("input", True, r.before)
    assert r.tried == (("cp-sat windows (k=16; skipped: 0.0 s left, their set-up takes about 0.0 s)", None),)
    # at another, smaller M the input is no answer: one pass runs however late it is
    r = improve_schedule(G, s, time_limit=0.0, M=7, window=16)
    assert [p for p, _ in r.tried][0] == "lookahead-eviction(weight=1.0)" and r.schedule.M == 7


def test_improve_skips_the_windows_when_their_set_up_does_not_fit(monkeypatch):
    import spartition.exact.improve as improve

    monkeypatch.setattr(improve, "WINDOW_SETUP_PASSES", 10**9)
    G = build("attention-forward", ["n=4", "d=2"])
    r = improve.improve_schedule(G, greedy_schedule(G, 8), time_limit=30, window=16)
    assert r.time_limited and r.tried[-1][1] is None
    assert r.tried[-1][0].startswith("cp-sat windows (k=16; skipped: ") and "their set-up takes about" in r.tried[-1][0]


# --------------------------------------------------------------------------- sandwich: the time limit covers the formulas


def test_a_slow_formula_is_cut_by_the_time_limit_and_named():
    # segment-forward-lower at n=16, d=4, M=16 is a search of about 10 s: with --time-limit 5 the command took
    # 7.6 s and skipped every algorithm; the formula is now evaluated beside the schedules and cut at the limit
    from spartition.study.sandwich import sandwich_row

    row = sandwich_row(build("attention-forward", ["n=16", "d=4"]), 16, time_limit=1.0, search=False,
                       improve=False, algorithm_names=["square-tiling-forward"])
    # the search is cut; on a loaded machine the child may not even reach the quick formulas in 1 s
    assert "formula:segment-forward-lower: time limit" in row.skipped and row.time_limited
    assert set(row.skipped) <= {f"formula:{name}: time limit" for name in (
        "trivial-forward", "segment-forward-lower", "segment-forward-recompute-lower", "segment-forward-av-lower")}
    assert row.upper.method == "algorithm:square-tiling-forward" and row.lower.method == "trivial"


@pytest.mark.slow
def test_a_mislabelled_file_gets_no_formula_with_a_time_limit_either(tmp_path):
    from spartition.study.sandwich import sandwich

    G = build("chain", ["n=3"])
    G.graph.update(family="attention-forward", params={"n": 32, "d": 2})
    (row,) = sandwich(G, [3], time_limit=60)
    assert (row.lower.method, row.lower.value, row.upper.value) == ("trivial", 2, 2)
    assert row.skipped[0] == "formulas: the DAG is not attention-forward n=32 d=2's (its graph differs from the " \
                             "family's build)"
    # 8 s: the formulas take under one, and the exact solver (this DAG has 92 nodes) would take all the time given
    (row,) = sandwich(build("attention-forward", ["n=4", "d=1"]), [4], time_limit=8)
    assert {"formula:segment-forward-lower", "formula:trivial-forward"} <= {s.method for s in row.lowers}
    assert not [s for s in row.skipped if not s.endswith(", not made")]  # nothing but defaults above one made


def test_the_sandwich_text_says_what_was_skipped_and_why(capsys):
    assert main(["sandwich", "attention-forward:n=8,d=2", "--M", "4", "--time-limit", "1e-9"]) == 0
    lines = capsys.readouterr().out.splitlines()
    at = lines.index("skipped at M = 4:")
    assert "  flash-forward: time limit" in lines[at + 1:] and "  greedy: time limit" in lines[at + 1:]


# --------------------------------------------------------------------------- certify: no CNF past the time limit


def test_a_cnf_that_cannot_be_built_in_the_time_is_refused_before_the_witness(tmp_path, monkeypatch):
    # certify fft:k=6 --M 8 --variant recompute --time-limit 10 still built its CNF after 200 s (3.3 GB)
    import spartition.certify.certify as certify
    import spartition.exact.solve as solve
    from spartition.errors import TimeLimitReached

    monkeypatch.setattr(certify, "CNF_CELLS_PER_SECOND", 1)  # a machine that builds one literal a second
    monkeypatch.setattr(solve, "solve_io", lambda *a, **k: pytest.fail("the witness was searched for"))
    with pytest.raises(TimeLimitReached, match=r"the CNF refuting I/O <= 7 at M = 4 \(about [\d,]+ literals\) would "
                                               r"take about [\d,.]+ s to build, [\d.]+ s are left: the smallest CNF "
                                               r".* not certified; no bundle written; give a longer time limit; "
                                               r"--encoding order"):
        certify.certify_optimum(build("fft", ["k=2"]), 4, out=tmp_path / "b", time_limit=10)
    assert not (tmp_path / "b").exists()


def test_a_cnf_refused_after_the_witness_names_the_best_schedule(tmp_path, monkeypatch):
    import spartition.certify.certify as certify
    from spartition.certify.bundle import cnf_cells
    from spartition.certify.encoding import proven_horizon
    from spartition.core.game import Schedule, replay
    from spartition.errors import TimeLimitReached

    G = build("fft", ["k=2"])
    good = greedy_schedule(G, 4)
    x = next(v for v, d in G.in_degree() if d == 0)
    # a valid schedule wasting 100 loads: its refutation's CNF is several times the smallest one
    wasteful = Schedule(4, "oneshot", [("load", x), ("delete", x)] * 100 + list(good.moves))
    io = replay(G, wasteful).io
    least = cnf_cells(G, 4, 7, proven_horizon(G, "oneshot", 7))
    assert cnf_cells(G, 4, io - 1, proven_horizon(G, "oneshot", io - 1)) > 3 * least
    # the smallest CNF would be built in 2 s, within the refutation's half of 10 s; the witness's is not
    monkeypatch.setattr(certify, "CNF_CELLS_PER_SECOND", least / 2.0)
    with pytest.raises(TimeLimitReached, match=rf"the CNF refuting I/O <= {io - 1} at M = 4 \(about [\d,]+ literals\) "
                                               rf"would take about [\d.]+ s to build, [\d.]+ s are left: the best "
                                               rf"replayed schedule has I/O {io}, not certified"):
        certify.certify_optimum(G, 4, out=tmp_path / "b", time_limit=10, schedule=wasteful)
    assert not (tmp_path / "b").exists()


def test_recompute_falls_back_to_the_stated_horizon_when_the_proven_one_is_too_slow(monkeypatch):
    import time

    import spartition.certify.certify as certify
    from spartition.certify.bundle import cnf_cells
    from spartition.certify.encoding import default_horizon, proven_horizon

    G, budget = build("fft", ["k=3"]), 10
    proven, stated = proven_horizon(G, "recompute", budget), default_horizon(G, "recompute", budget)
    assert proven > stated
    monkeypatch.setattr(certify, "CNF_CELLS_PER_SECOND", 1)
    # a deadline between the two build estimates (one literal a second: seconds = literals)
    seconds = (cnf_cells(G, 4, budget, proven) + cnf_cells(G, 4, budget, stated)) / 2
    T, note = certify._horizon(G, 4, "recompute", budget, None, 2, time.perf_counter() + seconds)
    assert T == stated and "to build, past the time limit; horizon 2N + Q" in note
    assert certify._horizon(G, 4, "recompute", budget, None, 2, None) == (proven, None)


# --------------------------------------------------------------------------- what a user's own DAG gets from sandwich


def test_sandwich_of_a_small_user_dag_reports_the_proven_optimum(tmp_path, capsys):
    # `sandwich mlp.json --M 3` reported the trivial bound 15 against greedy's 47 while `solve` proved 38 in 2 s
    import networkx as nx

    from spartition.exact.solve import solve_io

    G = nx.relabel_nodes(build("fft", ["k=2"]), lambda v: f"x{v}")
    G.graph.clear()  # a user's own graph: no family, so no formula and no published algorithm
    path = tmp_path / "mine.json"
    save_dag(G, path)
    opt = solve_io(G, 4, time_limit=30)
    assert opt.status == "OPTIMAL"
    assert main(["sandwich", str(path), "--M", "4", "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert (row["lower"]["value"], row["lower"]["method"]) == (opt.io, "exact:solve")
    assert row["upper"]["value"] == opt.io and row["ratio"] == 1.0
    assert row["lower"]["certificate"].startswith("OPTIMAL, the solver's proven bound")


def test_sandwich_hands_out_the_winning_schedule_named_for_what_it_is(tmp_path, capsys):
    # at M = 8 the upper side read "algorithm:flash-forward 8" where `schedule flash-forward` gives 18: the 8 was a
    # schedule made for M = 16 and re-pebbled, said only in --json; and no schedule was written to check it
    from spartition.core.game import load_schedule, replay

    spec = "attention-forward:n=2,d=1"
    out = tmp_path / "s-{M}.json"
    assert main(["sandwich", spec, "--M", "4,8", "--schedule-out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "algorithm:flash-forward made for M=16, re-pebbled at M=8" in text
    assert f"schedule at M = 8 -> {tmp_path / 's-8.json'}" in text.splitlines()
    s8 = load_schedule(tmp_path / "s-8.json")
    assert s8.meta["method"] == "algorithm:flash-forward made for M=16, re-pebbled at M=8"
    assert s8.meta["algorithm"] == "flash-forward" and s8.meta["options"]["retargeted_from"] == 16
    assert main(["replay", spec, str(tmp_path / "s-8.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["io"] == 8 == replay(build("attention-forward", ["n=2", "d=1"]), s8).io
    s4 = load_schedule(tmp_path / "s-4.json")
    assert s4.M == 4 and s4.meta["method"] == "exact:solve" and s4.meta["status"] == "OPTIMAL"
    assert main(["sandwich", spec, "--M", "4,8", "--schedule-out", str(tmp_path / "s.json")]) == 2
    assert "with 2 memories the name must hold {M}" in capsys.readouterr().err


def test_no_sat_slice_starts_that_the_last_ones_length_would_end_past_the_deadline(monkeypatch):
    # certify fft:k=4 --M 6 --variant recompute --time-limit 10 took 23 s: a slice of 1,000 conflicts ran 13 s
    import spartition.certify.sat as sat

    clock = [100.0]
    monkeypatch.setattr(sat.time, "perf_counter", lambda: clock[0])

    class Slow:
        """A solver whose every slice takes 3 (fake) seconds and settles nothing."""

        slices = 0

        def conf_budget(self, budget):
            pass

        def solve_limited(self):
            Slow.slices += 1
            clock[0] += 3.0
            return None

    assert sat._solve_by_slices(Slow(), deadline=104.0) is None
    assert Slow.slices == 1 and clock[0] == 103.0  # a second slice would have ended at 106
