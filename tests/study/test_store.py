"""The results store: keys, the better-row rule, certificates, concurrent writers."""

import multiprocessing

import pytest

from spartition.study.store import ResultKey, ResultStore, StoredResult, default_store_path


def row(status="FEASIBLE", value=31.0, bound=27.0, tl=5.0, method="exact:cpsat", M=3, cert=None):
    proven = status in ("OPTIMAL", "VALID")
    key = ResultKey("h" * 64, M, "oneshot", method, {"workers": 1, "seed": 0}, "spartition test")
    return StoredResult(key, status, value, bound, proven, tl, 1.0, {"io": value}, family="chain",
                        family_params={"n": 4}, certificate=cert)


def test_roundtrip_and_certificate(tmp_path):
    cert = {"M": 3, "variant": "oneshot", "moves": [["load", "a"], ["compute", "b"]]}
    with ResultStore(tmp_path / "r.sqlite") as st:
        assert st.put(row("OPTIMAL", 24.0, 24.0, cert=cert))
        got = st.get(row().key)
        assert (got.status, got.value, got.bound, got.proven, got.family, got.family_params) == (
            "OPTIMAL", 24.0, 24.0, True, "chain", {"n": 4})
        assert st.certificate(got) == cert
        assert st.count() == 1


def test_longer_time_limit_improves_a_non_optimal_row(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.put(row("FEASIBLE", 31.0, 27.0, tl=5.0))
        key = row().key
        assert st.get(key, 5.0).value == 31.0  # same limit: cached
        assert st.get(key, 3.0) is not None  # shorter limit: cached
        assert st.get(key, 10.0) is None  # longer limit asked: recompute
        assert not st.put(row("FEASIBLE", 33.0, 20.0, tl=2.0))  # shorter run never replaces
        assert st.put(row("FEASIBLE", 29.0, 28.0, tl=10.0))
        assert (st.get(key, 10.0).value, st.get(key, 10.0).bound) == (29.0, 28.0)
        assert st.put(row("OPTIMAL", 28.0, 28.0, tl=20.0))
        assert st.get(key, 1000.0).status == "OPTIMAL"  # proven rows answer any limit
        assert not st.put(row("FEASIBLE", 30.0, 25.0, tl=100.0))  # nothing replaces a proven row
        assert st.count() == 1


def test_large_certificate_goes_to_a_file(tmp_path, monkeypatch):
    import spartition.study.store as store_mod

    monkeypatch.setattr(store_mod, "INLINE_LIMIT", 10)
    cert = {"moves": [["load", f"v{i}"] for i in range(200)]}
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.put(row("VALID", 200.0, None, tl=None, method="algorithm:greedy", cert=cert))
        got = st.get(row(method="algorithm:greedy").key)
        assert st.certificate(got) == cert
    assert len(list((tmp_path / "r.sqlite.certificates").iterdir())) == 1


def test_default_path(monkeypatch, tmp_path):
    monkeypatch.delenv("SPARTITION_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    if default_store_path().parent.parent == tmp_path:  # Linux layout
        assert default_store_path() == tmp_path / "spartition" / "results.sqlite"
    monkeypatch.setenv("SPARTITION_STORE", str(tmp_path / "x.sqlite"))
    assert default_store_path() == tmp_path / "x.sqlite"


def _writer(path, k, n):
    with ResultStore(path) as st:
        for i in range(n):
            st.put(row("VALID", float(i), None, tl=None, method=f"algorithm:w{k}", M=i))


def test_concurrent_writers_lose_nothing(tmp_path):
    path = str(tmp_path / "r.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, k, 40)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    with ResultStore(path) as st:
        assert st.count() == 160
        assert sorted(r.key.M for r in st.rows(method="algorithm:w2")) == list(range(40))


def test_memory_store_and_unknown_key():
    with ResultStore(":memory:") as st:
        assert st.get(row().key) is None
        assert st.rows() == []


def _raw_insert(path, tl, status="UNKNOWN", proven=0):
    """A row written behind the store's back, as an older version wrote a NaN limit (NULL)."""
    import sqlite3

    k = row().key
    con = sqlite3.connect(path)
    con.execute("INSERT INTO results (dag_hash, M, variant, method, params, version, status, value, bound, proven, "
                "time_limit, wall_s, record, created) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*k.columns(), status, None, None, proven, tl, 0.0, "{}", 0.0))
    con.commit()
    con.close()


def test_an_unproven_row_without_a_known_limit_answers_nothing(tmp_path):
    path = tmp_path / "r.sqlite"
    ResultStore(path).close()
    _raw_insert(path, None)
    with ResultStore(path) as st:
        key = row().key
        assert st.get(key, 5.0) is None and st.get(key, None) is None and st.get(key, 1e-9) is None
        assert st.get(key, any_limit=True).status == "UNKNOWN"
        assert st.put(row("FEASIBLE", 31.0, 27.0, tl=1.0))  # any run with a known limit is better
        assert st.get(key, 1.0).value == 31.0 and st.get(key, 2.0) is None and st.get(key, None) is None


def test_a_request_without_a_limit_is_answered_only_by_a_final_row(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.put(row("FEASIBLE", 31.0, 27.0, tl=1000.0))
        assert st.get(row().key, None) is None
        st.put(row("OPTIMAL", 28.0, 28.0, tl=1000.0))
        assert st.get(row().key, None).status == "OPTIMAL"


@pytest.mark.parametrize("tl", [float("nan"), float("inf"), -1.0, 0.0, "5"])
def test_a_bad_time_limit_is_never_written(tmp_path, tl):
    with ResultStore(tmp_path / "r.sqlite") as st:
        with pytest.raises(ValueError, match="time_limit"):
            st.put(row("UNKNOWN", None, None, tl=tl))
        assert st.count() == 0


def test_proven_only_with_a_proven_status(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        bad = StoredResult(row().key, "FEASIBLE", 31.0, 27.0, True, 0.001, 0.0, {})  # a caller's mistake
        st.put(bad)
        got = st.get(row().key, any_limit=True)
        assert not got.proven and st.get(row().key, 10.0) is None
        assert st.put(row("OPTIMAL", 28.0, 28.0, tl=10.0))  # a proven row replaces it
        assert st.get(row().key, 1000.0).proven


def test_a_proven_flag_on_an_unproven_status_in_the_file_is_ignored(tmp_path):
    path = tmp_path / "r.sqlite"
    ResultStore(path).close()
    _raw_insert(path, 0.001, status="UNKNOWN", proven=1)
    with ResultStore(path) as st:
        assert st.get(row().key, 10.0) is None


def test_a_nan_value_is_stored_as_null_explicitly(tmp_path):
    with ResultStore(tmp_path / "r.sqlite") as st:
        st.put(row("FEASIBLE", float("nan"), float("nan"), tl=5.0))
        got = st.get(row().key, 5.0)
        assert got.value is None and got.bound is None


def test_readonly_store_refuses_writes(tmp_path):
    from spartition.study.store import StoreError

    path = tmp_path / "r.sqlite"
    with ResultStore(path) as st:
        st.put(row("OPTIMAL", 24.0, 24.0))
    with ResultStore(path, readonly=True) as st:
        assert st.get(row().key).value == 24.0
        with pytest.raises(StoreError, match="read-only"):
            st.put(row("OPTIMAL", 24.0, 24.0, M=4))
