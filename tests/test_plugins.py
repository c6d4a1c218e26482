"""A package of its own adds a family, an algorithm, a formula and a claim set, and every command finds them.

The package is ``tests/data/plugin_example`` (see :mod:`spartition.plugins`).
The fixture installs it the way ``pip install`` would, minus the copying of
spartition: the package beside a ``.dist-info`` holding the entry points of its
``pyproject.toml``, on ``PYTHONPATH`` of the commands run here.
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from spartition.errors import UnknownFamily
from spartition.core.registry import (
    ALGORITHMS, BOUND_METHODS, CLAIM_SETS, COMMANDS, FAMILIES, FORMULAS, FORMULATIONS, GROUPS, STUDIES, SYMMETRY,
    Registry,
)

EXAMPLE = Path(__file__).resolve().parent / "data" / "plugin_example"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A directory where ``spartition_example`` is installed: the package and its ``.dist-info``."""
    root = tmp_path_factory.mktemp("site")
    shutil.copytree(EXAMPLE / "spartition_example", root / "spartition_example")
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"]
    info = root / f"spartition_example-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items()) + "\n"
        for group, eps in project["entry-points"].items()))
    return root


def run(site: Path, *args, store=None) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    if store is not None:
        env["SPARTITION_STORE"] = str(store)
    proc = subprocess.run([sys.executable, "-m", "spartition", *args, "--json"], capture_output=True, text=True,
                          env=env, cwd=site)
    return proc.returncode, json.loads(proc.stdout)


def test_every_plug_in_point_is_one_registry_of_an_entry_point_group():
    registries = (FAMILIES, ALGORITHMS, FORMULAS, SYMMETRY, CLAIM_SETS, FORMULATIONS, BOUND_METHODS, COMMANDS,
                  STUDIES)
    assert all(isinstance(r, Registry) for r in registries)
    assert sorted(r.group for r in registries) == sorted(GROUPS.values())
    # the built-ins are registered the same way, in the order that means something
    assert list(FORMULATIONS) == ["order", "events", "baseline"]
    assert list(BOUND_METHODS) == ["trivial", "hong-kung", "x-partition", "capacity"]
    assert list(COMMANDS)[:3] == ["dags", "game", "exact"] and len(COMMANDS) == 11
    assert {"psz", "saha-ye", "li"} <= set(CLAIM_SETS) and "attention-forward" in SYMMETRY
    from spartition.study.studies import builtin_study

    spec = builtin_study()  # the README's main job, registered by the families
    assert (spec.family, spec.params, spec.exact) == ("attention-forward", {"n": 2, "d": 1}, ("cpsat", "brute"))


def test_a_registry_names_what_it_does_not_know():
    with pytest.raises(UnknownFamily, match=r"unknown algorithm 'nope'; known: approx-case-i, "):
        ALGORITHMS.lookup("nope")
    assert "nope" not in FAMILIES and None not in FAMILIES


def test_the_public_module_holds_every_record_a_plug_in_needs():
    import spartition.plugins as plugins
    from spartition.core.algorithm import Algorithm
    from spartition.exact.formulations import Formulation
    from spartition.partition.lower_bounds import BoundMethod
    from spartition.study.claims import Claim
    from spartition.study.claimsets import ClaimSet
    from spartition.study.formulas import FamilyBounds, Formula

    assert (plugins.Algorithm, plugins.Formulation, plugins.BoundMethod, plugins.Claim, plugins.ClaimSet,
            plugins.FamilyBounds, plugins.Formula) == (Algorithm, Formulation, BoundMethod, Claim, ClaimSet,
                                                      FamilyBounds, Formula)
    assert {"Family", "Registry", "Schedule", "Status"} <= set(plugins.__all__)
    # the built-in algorithms are records of the same type as a plug-in's
    from spartition.core.algorithm import Algorithm as FamiliesAlgorithm

    assert FamiliesAlgorithm is Algorithm and isinstance(ALGORITHMS["flash-forward"], Algorithm)
    with pytest.raises(AttributeError, match="has no attribute 'Nothing'"):
        plugins.Nothing


def test_families_and_build_find_the_plug_in_family(site):
    rc, families = run(site, "families")
    assert rc == 0 and families["example-pairs"].startswith("``n`` products ``z_i = x_i * y_i``")
    rc, built = run(site, "build", "example-pairs", "n=3")
    assert rc == 0 and (built["nodes"], built["edges"]) == (9, 6)
    # the size guard reads the record's node count before building
    rc, refused = run(site, "build", "example-pairs", "n=1000000", "--max-nodes", "100")
    assert rc == 2 and refused["kind"] == "DAGTooLarge" and "3,000,000 nodes" in refused["error"]


def test_algorithms_and_schedule_find_the_plug_in_algorithm(site):
    rc, listed = run(site, "algorithms", "example-pairs")
    assert rc == 0 and [a["name"] for a in listed["algorithms"]] == ["example-pairwise", "greedy"]
    rc, sched = run(site, "schedule", "example-pairwise", "example-pairs:n=3", "--M", "3")
    # replayed by the checker: 6 loads and 3 stores, as its closed form says
    assert rc == 0 and (sched["io"], sched["loads"], sched["stores"], sched["io_formula"]) == (9, 6, 3, 9)


def test_formulas_find_the_plug_in_formula(site):
    rc, out = run(site, "formulas", "example-pairs", "n=3", "--M", "3")
    assert rc == 0 and [(f["name"], f["value"], f["applies"]) for f in out["formulas"]] == [
        ("example-pairs-io", 9.0, True)]


def test_claims_find_the_plug_in_claim_set(site, tmp_path):
    rc, out = run(site, "claims", "example", "--store", str(tmp_path / "r.sqlite"))
    (report,) = out["claimsets"]
    (claim,) = report["claims"]
    # the optimum 3 n (CP-SAT, replayed) meets the formula at every instance: n = 1, 2 and M = 3, 4
    assert rc == 0 and (report["claimset"], claim["claim"], claim["verdict"]) == ("example", "example-io", "holds")
    assert (claim["counts"]["holds"], claim["counts"]["fails"]) == (4, 0)


def test_compare_sets_the_plug_in_beside_the_built_ins(site):
    rc, out = run(site, "compare", "example-pairs", "n=2", "--M", "3", "--no-store")
    (row,) = out["rows"]
    assert rc == 0 and row["M"] == 3
    assert row["exact"]["cpsat"]["value"] == 6 and row["algorithms"]["example-pairwise"]["value"] == 6
