"""`spartition convert`: every pair of formats round-trips a DAG (ids, edges, attributes, hash); refusals."""

import json

import pytest

from spartition.cli.main import main
from spartition.core.dag import DAG_FORMATS, dag_hash, load_dag
from spartition.core.registry import build

EXT = {name: exts[0] for name, exts in DAG_FORMATS.items()}


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("src", list(DAG_FORMATS))
@pytest.mark.parametrize("dst", list(DAG_FORMATS))
def test_round_trip_between_formats(tmp_path, capsys, src, dst):
    G = build("attention-forward", ["n=2", "d=1"])
    first = tmp_path / f"a{EXT[src]}"
    assert run(capsys, "convert", "attention-forward:n=2,d=1", first)[0] == 0
    second = tmp_path / f"b{EXT[dst]}"
    code, out, _ = run(capsys, "convert", first, second, "--json")
    assert code == 0
    data = json.loads(out)
    assert (data["format"], data["nodes"], data["edges"]) == (dst, 26, 34)
    H = load_dag(second)
    assert data["hash"] == dag_hash(H) == dag_hash(G)
    assert sorted(H.edges) == sorted(G.edges)
    for v in G:  # the attributes the engine reads survive every format
        assert H.nodes[v].get("op") == G.nodes[v].get("op"), v


def test_explicit_formats_override_the_extensions(tmp_path, capsys):
    G = build("fft", ["k=2"])
    src = tmp_path / "g.txt"
    assert run(capsys, "convert", "fft:k=2", src, "--to", "dot")[0] == 0
    assert src.read_text().startswith("digraph")
    out = tmp_path / "g.data"
    assert run(capsys, "convert", src, out, "--from", "dot", "--to", "hdag")[0] == 0
    assert dag_hash(load_dag(out, "hdag")) == dag_hash(G)


def test_convert_refuses_to_overwrite_its_input(tmp_path, capsys):
    path = tmp_path / "g.json"
    assert run(capsys, "convert", "fft:k=1", path)[0] == 0
    before = path.read_bytes()
    code, _, err = run(capsys, "convert", path, tmp_path / "." / "g.json")
    assert code == 2 and "is the input file" in err
    assert path.read_bytes() == before


def test_convert_of_a_missing_or_unreadable_file_names_it(tmp_path, capsys):
    code, _, err = run(capsys, "convert", tmp_path / "none.dot", tmp_path / "out.json")
    assert code == 2 and "none.dot" in err and not (tmp_path / "out.json").exists()
    bad = tmp_path / "bad.dot"
    bad.write_text("digraph { a -> }\n")
    code, _, err = run(capsys, "convert", bad, tmp_path / "out.json")
    assert code == 2 and "bad.dot" in err and "line 1" in err and not (tmp_path / "out.json").exists()
