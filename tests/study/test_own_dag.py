"""A user's own DAG: the README's Python block and ``spartition families`` (issue 42)."""

import json
import re
from pathlib import Path

from spartition import brute_force, load_dag
from spartition.cli.main import main
from spartition.study.studies import StudySpec, study_file

README = Path(__file__).resolve().parents[2] / "README.md"


def _own_dag_block() -> str:
    text = README.read_text()
    section = text[text.index("### Your own DAG in Python"):]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_readme_block_runs_and_prints_what_it_says(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    block = _own_dag_block()
    exec(compile(block, "README.md", "exec"), {})
    printed = capsys.readouterr().out.strip()
    promised = re.search(r"# (\[.*\])\s*$", block.strip().splitlines()[-1]).group(1)
    assert printed == promised
    # the optimum it prints is the brute force's on the file, the marked output counted
    G = load_dag(tmp_path / "mlp.json")
    assert printed == str([(M, float(brute_force(G, M).io)) for M in (3, 4)])
    # by hand: x, w, t loaded and y, dw stored make 5; at M = 3, x cannot wait for dw: one reload
    assert brute_force(G, 4).io == 5 and brute_force(G, 3).io == 6


def test_study_file_and_from_file_key_the_study_by_path_and_hash(tmp_path):
    from spartition.families.classic.dag import chain
    from spartition import save_dag

    path = tmp_path / "c.dot"
    save_dag(chain(3), path)
    spec = StudySpec.from_file(path, [2], exact=("brute",), bounds=False)
    assert spec.family == "file" and spec.params["path"] == str(path.resolve()) and spec.Ms == (2,)
    study = study_file(path, [2], exact=("brute",), bounds=False)
    assert [(r.M, r.optimum) for r in study.rows] == [(2, 2.0)]


def test_families_lists_each_family_s_parameters_with_defaults(capsys):
    assert main(["families", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows["approx-attention"]["parameters"] == {"n": 2, "d": 2, "g": 2, "normalize": False, "order": "lex",
                                                      "shape": "chain", "scaled": True, "sums": "binary"}
    assert rows["file"]["parameters"] == {"path": None, "sha256": ""}
    assert main(["families"]) == 0
    text = capsys.readouterr().out
    assert "parameters: n=2, d=2, g=2, normalize=false, order=lex, shape=chain, scaled=true, sums=binary" in text
    assert "parameters: path, sha256=''" in text
