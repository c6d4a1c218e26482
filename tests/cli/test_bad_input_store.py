"""Bad input to the study commands (compare, sweep, report, regress): exit 2, a message naming it, no traceback.

Store files that are not results stores must never be modified (same bytes,
same mtime, no files created beside them); Ctrl-C and kill -9 during a
sweep leave no process behind.
"""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from spartition.cli.main import main
from spartition.study.store import ResultKey, ResultStore, StoredResult

SMALL_GRID = '[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = [2]\nexact = ["brute"]\nbounds = false\n'
COMPARE = ["compare", "chain", "n=3", "--M", "2", "--exact", "brute", "--no-bounds", "--algorithms", "greedy",
           "--jobs", "1"]


def run(argv, capsys):
    """``spartition argv`` in this process: (exit status, stdout, stderr)."""
    try:
        rc = main(argv)
    except SystemExit as exc:  # argparse errors
        rc = exc.code
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "Traceback" not in out
    return rc, out, err


# ---------------------------------------------------------------- settings and memories


@pytest.mark.parametrize("flag,value", [
    ("--time-limit", "nan"), ("--time-limit", "-1"), ("--time-limit", "0"), ("--time-limit", "inf"),
    ("--time-limit", "soon"), ("--bound-time-limit", "nan"), ("--bound-time-limit", "0"),
    ("--workers", "0"), ("--workers", "-2"), ("--jobs", "0"),
])
def test_compare_rejects_bad_settings_and_stores_nothing(tmp_path, capsys, flag, value):
    store = tmp_path / "r.sqlite"
    rc, _, err = run(["compare", "fft", "k=2", "--M", "3", flag, value, "--store", str(store)], capsys)
    assert rc == 2 and flag in err and value in err
    assert not store.exists()


@pytest.mark.parametrize("value,needle", [
    ("2..3:0", "step"), ("5..2", "empty"), ("3,x", "'x'"), ("2.5", "2.5"), ("0", "positive"), (",", "no memories"),
])
def test_compare_rejects_bad_memories(capsys, value, needle):
    rc, _, err = run(["compare", "fft", "k=1", "--M", value, "--no-store"], capsys)
    assert rc == 2 and "--M" in err and needle in err


def test_compare_rejects_unknown_names_listing_the_valid_ones(capsys):
    from spartition.core.registry import algorithms

    rc, _, err = run(["compare", "fft", "k=1", "--M", "3", "--no-store", "--algorithms", "nosuch"], capsys)
    assert rc == 2 and "--algorithms" in err and "nosuch" in err and all(a in err for a in algorithms())
    rc, _, err = run(["compare", "fft", "k=1", "--M", "3", "--no-store", "--exact", "foo"], capsys)
    assert rc == 2 and "--exact" in err and "foo" in err and "cpsat" in err and "brute" in err


@pytest.mark.parametrize("command", ["compare", "sweep", "report", "regress"])
def test_empty_store_path_is_an_error(tmp_path, capsys, command):
    grid = tmp_path / "g.toml"
    grid.write_text(SMALL_GRID)
    argv = {"compare": COMPARE, "sweep": ["sweep", str(grid), "--jobs", "1"], "report": ["report"],
            "regress": ["regress", str(grid), str(tmp_path / "golden.json")]}[command]
    rc, _, err = run(argv + ["--store", ""], capsys)
    assert rc == 2 and "--store" in err


# ---------------------------------------------------------------- grids


@pytest.mark.parametrize("text,needles", [
    ('[[study]]\nfamily = "chain"\nexact = "brute"\n', ["'exact'", "'brute'"]),
    ('[[study]]\nfamily = "chain"\nalgorithms = "greedy"\n', ["'algorithms'", "'greedy'"]),
    ('[[study]]\nfamily = "chain"\nparams = { n = 3, colour = 2 }\n', ["'colour'", "valid keys: n"]),
    ('[[study]]\nfamily = "chain"\nparams = "n=3"\n', ["'params'", "table"]),
    ('[[study]]\nfamily = "chain"\nparams = { n = "x" }\n', ["'n'", "integer"]),
    ('[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = [2.5]\n', ["'M'", "2.5"]),
    ('[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = "2..3:0"\n', ["M", "step"]),
    ('[[study]]\nfamily = "chain"\nparams = { n = 3 }\nM = "5..2"\n', ["M", "empty"]),
    ('time_limit = "fast"\n[[study]]\nfamily = "chain"\n', ["'time_limit'", "fast"]),
    ('[[study]]\nfamily = "chain"\ntime_limit = nan\n', ["'time_limit'", "nan"]),
    ('[[study]]\nfamily = "chain"\nworkers = 0\n', ["'workers'", "0"]),
    ('[[study]]\nfamily = "chain"\nseed = 99999999999\n', ["'seed'", "99999999999"]),
    ('[[study]]\nfamily = "chain"\nbounds = "yes"\n', ["'bounds'"]),
    ('[[study]]\nfamily = "chain"\nexact = ["foo"]\n', ["'exact'", "'foo'", "cpsat"]),
    ('[[study]]\nfamily = "chain"\nalgorithms = ["nosuch"]\n', ["'algorithms'", "'nosuch'", "greedy"]),
    ('[[study]]\nfamily = "chain"\nvariant = ["sideways"]\n', ["'variant'", "oneshot"]),
    ('[[study]]\nfamily = "nosuch"\n', ["'nosuch'", "chain"]),
    ('[[study]]\nfamily = "chain"\ncolour = 1\n', ["'colour'"]),
    ('colour = 1\n[[study]]\nfamily = "chain"\n', ["'colour'"]),
    ('study = "chain"\n', ["[[study]]"]),
    ("[[study\n", ["TOML"]),
])
@pytest.mark.parametrize("command", ["sweep", "regress"])
def test_bad_grid_names_the_key_and_the_file(tmp_path, capsys, text, needles, command):
    grid = tmp_path / "bad-grid.toml"
    grid.write_text(text)
    store = tmp_path / "r.sqlite"
    argv = ["sweep", str(grid), "--jobs", "1"] if command == "sweep" else ["regress", str(grid), str(tmp_path / "g.json")]
    rc, _, err = run(argv + ["--store", str(store)], capsys)
    assert rc == 2, err
    assert "bad-grid.toml" in err
    for n in needles:
        assert n in err, (n, err)
    assert not store.exists()  # refused before the store is opened


def test_grid_values_are_never_split_into_characters():
    from spartition.study.sweep import GridError, parse_grid

    with pytest.raises(GridError, match="'exact'"):
        parse_grid({"study": [{"family": "chain", "exact": "brute"}]})
    (spec,) = parse_grid({"study": [{"family": "chain", "exact": ["brute"], "variant": "oneshot"}]})
    assert spec.exact == ("brute",) and spec.variant == "oneshot"


# ---------------------------------------------------------------- store files


def _valid_store(path, rows=60):
    with ResultStore(path) as st:
        for i in range(rows):
            st.put(StoredResult(ResultKey("h" * 64, i + 1, "oneshot", "algorithm:greedy"), "VALID", 4.0, None, True,
                                None, 0.1, {"pad": "x" * 400}, family="chain", family_params={"n": 3}))


def _make(kind, path):
    if kind == "not-sqlite":
        path.write_bytes(b"this is not a database\n" * 50)
    elif kind == "short":
        path.write_bytes(b"SQLite format 3\x00abc")
    elif kind == "truncated":
        _valid_store(path)
        with open(path, "r+b") as fh:
            fh.truncate(path.stat().st_size // 2 + 100)
    elif kind == "corrupted":
        _valid_store(path)
        with open(path, "r+b") as fh:
            fh.seek(4096 * 2)
            fh.write(bytes(range(256)) * 20)
    elif kind == "foreign-results":
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE results (name TEXT, score REAL)")
        con.execute("INSERT INTO results VALUES ('a', 1)")
        con.commit()
        con.close()
    elif kind == "foreign-tables":
        con = sqlite3.connect(path)
        con.execute("CREATE TABLE notes (body TEXT)")
        con.commit()
        con.close()
    elif kind in ("foreign-view", "foreign-app-id", "foreign-user-version"):
        # SQLite files of other programs without tables: once adopted (schema added, switched to WAL)
        con = sqlite3.connect(path)
        con.execute({"foreign-view": "CREATE VIEW answer AS SELECT 42 AS x",
                     "foreign-app-id": "PRAGMA application_id = 1234",
                     "foreign-user-version": "PRAGMA user_version = 7"}[kind])
        con.commit()
        con.close()
    elif kind == "directory":
        path.mkdir()
        (path / "keep").write_text("x")
    else:
        raise AssertionError(kind)


def _snapshot(path):
    folder = sorted(os.listdir(path.parent))
    if path.is_dir():
        return folder, sorted(os.listdir(path)), path.stat().st_mtime_ns
    return folder, path.read_bytes(), path.stat().st_mtime_ns


def _argv(command, store, tmp_path):
    grid = tmp_path / "g.toml"
    grid.write_text(SMALL_GRID)
    return {"compare": COMPARE, "sweep": ["sweep", str(grid), "--jobs", "1", "--no-progress"], "report": ["report"],
            "regress": ["regress", str(grid), str(tmp_path / "golden.json"), "--update"]}[command] + ["--store", str(store)]


@pytest.mark.parametrize("kind", ["not-sqlite", "short", "truncated", "corrupted", "foreign-results",
                                  "foreign-tables", "foreign-view", "foreign-app-id", "foreign-user-version",
                                  "directory"])
@pytest.mark.parametrize("command", ["compare", "sweep", "report", "regress"])
def test_a_file_that_is_not_a_store_is_refused_and_untouched(tmp_path, capsys, kind, command):
    d = tmp_path / "stores"
    d.mkdir()
    store = d / "results.sqlite"
    _make(kind, store)
    before = _snapshot(store)
    rc, _, err = run(_argv(command, store, tmp_path), capsys)
    assert rc == 2, err
    assert str(store) in err
    assert _snapshot(store) == before
    assert not (tmp_path / "golden.json").exists()


@pytest.mark.parametrize("kind", ["not-sqlite", "truncated", "corrupted", "foreign-results", "foreign-tables",
                                  "foreign-view", "foreign-app-id", "foreign-user-version", "directory"])
def test_library_open_store_raises_a_spartition_error(tmp_path, kind):
    from spartition.errors import SpartitionError
    from spartition.study.store import open_store

    store = tmp_path / "results.sqlite"
    _make(kind, store)
    before = _snapshot(store)
    for readonly in (False, True):
        with pytest.raises(SpartitionError, match="results.sqlite"):
            open_store(store, readonly=readonly)
    assert _snapshot(store) == before


def test_a_read_only_store_is_read_by_report_and_refused_by_the_writers(tmp_path, capsys):
    d = tmp_path / "stores"
    d.mkdir()
    store = d / "results.sqlite"
    _valid_store(store, rows=2)
    os.chmod(store, 0o444)
    try:
        before = _snapshot(store)
        rc, out, err = run(["report", "--store", str(store)], capsys)
        assert rc == 0 and "chain n=3, oneshot" in out
        rc, out, err = run(["report", "--store", str(store), "--json"], capsys)
        assert rc == 0 and '"family": "chain"' in out
        for command in ("compare", "sweep", "regress"):
            rc, _, err = run(_argv(command, store, tmp_path), capsys)
            assert rc == 2 and str(store) in err and "read-only" in err
        assert _snapshot(store) == before
    finally:
        os.chmod(store, 0o644)


def test_report_on_a_missing_store_creates_nothing(tmp_path, capsys):
    store = tmp_path / "none" / "results.sqlite"
    rc, out, _ = run(["report", "--store", str(store)], capsys)
    assert rc == 0 and "empty" in out
    assert not store.parent.exists()


# ---------------------------------------------------------------- Ctrl-C and kill -9

SLOW_GRID = """
[[study]]
family = "attention-forward"
params = { n = 2, d = 1 }
M = [8, 9, 10, 7, 6, 5, 4]
exact = ["brute"]
bounds = false
algorithms = []
"""


def _children(pid):
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _alive(pids):
    alive = []
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(p)
        except OSError:
            pass
    return alive


def _start_sweep(tmp_path):
    grid = tmp_path / "slow.toml"
    grid.write_text(SLOW_GRID)
    store = tmp_path / "r.sqlite"
    cmd = [sys.executable, "-m", "spartition", "sweep", str(grid), "--store", str(store), "--jobs", "2",
           "--no-progress"]
    # a background job (`nohup pytest &`) ignores SIGINT, and children inherit that: the sweep must get
    # Python's own handler back, or the SIGINT this test sends never arrives
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.time() + 60
    workers = []
    while time.time() < deadline and proc.poll() is None:
        workers = _children(proc.pid)
        if store.exists() and len(workers) >= 2:
            with ResultStore(store, readonly=True) as st:
                if st.count() >= 1:
                    break
        time.sleep(0.05)
    assert proc.poll() is None, "the sweep finished before it could be interrupted"
    return proc, store, _children(proc.pid)


def _wait_gone(pids, seconds=10.0):
    deadline = time.time() + seconds
    while time.time() < deadline and _alive(pids):
        time.sleep(0.1)
    return _alive(pids)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_ctrl_c_stops_a_sweep_cleanly_and_keeps_finished_rows(tmp_path):
    proc, store, workers = _start_sweep(tmp_path)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert "interrupted" in err and str(store) in err
    assert workers and not _wait_gone(workers)
    with ResultStore(store, readonly=True) as st:
        assert 1 <= st.count() < 7


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_kill_9_of_the_sweep_leaves_no_worker_behind(tmp_path):
    proc, store, workers = _start_sweep(tmp_path)
    proc.kill()
    proc.communicate(timeout=30)
    assert workers and not _wait_gone(workers)
