"""compare and formulas on DAG files: a file is studied as the family 'file', keyed by its path and content."""

import json

import networkx as nx
import pytest

from spartition.cli.main import main
from spartition.core.dag import dag_file, dag_hash, save_dag
from spartition.core.registry import build
from spartition.errors import InvalidDAG
from spartition.study.store import ResultStore


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_compare_of_a_hyperdag_file_gives_the_family_s_optima(tmp_path, capsys):
    path = tmp_path / "attn.hdag"
    save_dag(build("attention-forward", ["n=2", "d=1"]), path)
    store = tmp_path / "r.sqlite"
    code, out, _ = run(capsys, "compare", path, "--M", "4,5", "--store", store, "--json", "--no-bounds")
    assert code == 0
    study = json.loads(out)
    optima = {r["M"]: r["exact"]["cpsat"]["value"] for r in study["rows"]}
    assert optima == {4: 15, 5: 11}  # the optima of attention-forward n=2 d=1 (tests/golden)
    truth = dag_hash(build("attention-forward", ["n=2", "d=1"]))
    with ResultStore(store) as st:
        rows = st.rows()
    assert rows and all(r.family == "file" and r.family_params == {"path": str(path), "sha256": truth}
                        and r.key.dag_hash == truth for r in rows)


def test_a_changed_file_is_refused_by_its_old_key(tmp_path):
    path = tmp_path / "g.json"
    save_dag(build("fft", ["k=1"]), path)
    old = dag_file(str(path)).graph["params"]["sha256"]
    save_dag(build("fft", ["k=2"]), path)
    with pytest.raises(InvalidDAG, match=r"g\.json changed: its DAG has hash .* the study is of"):
        dag_file(str(path), old)


def test_compare_of_a_file_takes_no_parameters(tmp_path, capsys):
    path = tmp_path / "g.json"
    save_dag(build("fft", ["k=1"]), path)
    code, _, err = run(capsys, "compare", path, "k=2", "--no-store")
    assert code == 2 and "a DAG file takes no parameters" in err


def test_formulas_of_a_file_use_the_family_it_records(tmp_path, capsys):
    path = tmp_path / "fft.dot"
    assert run(capsys, "convert", "fft:k=3", path)[0] == 0
    code, out, _ = run(capsys, "formulas", path, "--M", "4", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["family"] == "fft" and data["paper_params"] == {"N": 8, "k": 3}
    assert {r["name"]: r["value"] for r in data["formulas"]}["trivial-fft"] == 16


def test_formulas_of_a_file_without_a_family_say_what_to_give(tmp_path, capsys):
    path = tmp_path / "plain.json"
    save_dag(nx.DiGraph([("a", "b")]), path)
    code, _, err = run(capsys, "formulas", path, "--M", "2")
    assert code == 2 and "names no family" in err and "FAMILY key=value" in err
