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

from spartition.errors import SpartitionError, UnknownFamily
from spartition.core.registry import (
    ALGORITHMS, BOUND_METHODS, CLAIM_SETS, COMMANDS, FAMILIES, FORMULAS, FORMULATIONS, GROUPS, KERNEL_KINDS, KERNELS,
    STUDIES, SYMMETRY, Kernel, Registry,
)

EXAMPLE = Path(__file__).resolve().parent / "data" / "plugin_example"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """A directory where ``spartition_example`` is installed: the package and its ``.dist-info``."""
    root = tmp_path_factory.mktemp("site")
    install(root, EXAMPLE / "spartition_example", tomllib.loads((EXAMPLE / "pyproject.toml").read_text())["project"])
    return root


def install(root: Path, package: Path, project: dict) -> None:
    """Install ``package`` into ``root`` as pip would: the package beside a ``.dist-info`` of ``project``."""
    shutil.copytree(package, root / package.name)
    info = root / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    (info / "entry_points.txt").write_text("".join(
        f"[{group}]\n" + "".join(f"{name} = {target}\n" for name, target in eps.items()) + "\n"
        for group, eps in project["entry-points"].items()))


def run(site: Path, *args, store=None) -> tuple[int, dict]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    if store is not None:
        env["SPARTITION_STORE"] = str(store)
    proc = subprocess.run([sys.executable, "-m", "spartition", *args, "--json"], capture_output=True, text=True,
                          env=env, cwd=site)
    return proc.returncode, json.loads(proc.stdout)


def test_every_plug_in_point_is_one_registry_of_kernels_or_of_an_engine_group():
    kernels = (FAMILIES, ALGORITHMS, FORMULAS, SYMMETRY, CLAIM_SETS, STUDIES)
    engine = (FORMULATIONS, BOUND_METHODS, COMMANDS)
    assert all(isinstance(r, Registry) for r in kernels + engine)
    assert sorted(r.source for r in kernels) == sorted(KERNEL_KINDS)
    assert sorted(r.source for r in engine) == sorted(GROUPS.values())
    # the built-in kernels, one entry point each, registered the way a user's package is
    assert [k for k in KERNELS if KERNELS.package(k) == "spartition"] == [
        "approx-attention", "attention", "classic", "generic"]
    assert FAMILIES.origin("fft").startswith("kernel classic of package spartition")
    # the built-ins are registered the same way, in the order that means something
    assert list(FORMULATIONS) == ["order", "events", "baseline"]
    assert list(BOUND_METHODS) == ["trivial", "pair-sums", "hong-kung", "x-partition", "capacity"]
    assert list(COMMANDS)[:3] == ["dags", "game", "exact"] and len(COMMANDS) == 11
    assert {"psz", "saha-ye", "li"} <= set(CLAIM_SETS) and "attention-forward" in SYMMETRY
    from spartition.study.studies import builtin_study

    spec = builtin_study()  # the README's main job, registered by the attention kernel
    assert (spec.family, spec.params, spec.exact) == ("attention-forward", {"n": 2, "d": 1}, ("cpsat", "brute"))


def test_a_kernel_registers_a_name_once():
    with pytest.raises(SpartitionError, match="kernel 'k' registers the algorithms greedy twice"):
        Kernel(name="k", algorithms=(ALGORITHMS["greedy"], ALGORITHMS["greedy"]))
    with pytest.raises(TypeError):
        Kernel("k")  # keyword-only: the fields of a record cannot be swapped by position


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
    assert rc == 0 and families["example-pairs"]["doc"].startswith("``n`` products ``z_i = x_i * y_i``")
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


def test_a_name_two_packages_register_is_an_error_naming_both(site, tmp_path):
    """A second package registering ``matmul`` (or ``example-pairs``) stops every command, naming both."""
    clash = tmp_path / "clash"
    (clash / "spartition_clash").mkdir(parents=True)
    (clash / "spartition_clash" / "__init__.py").write_text(
        "from spartition.plugins import Kernel\n"
        "def matmul(a: int = 1):\n    raise AssertionError('never built')\n"
        "KERNEL = Kernel(name='clash', families={'matmul': matmul})\n")
    other = tmp_path / "other"
    install(other, clash / "spartition_clash",
            {"name": "spartition-clash", "version": "1.0", "entry-points": {
                "spartition.kernels": {"clash": "spartition_clash:KERNEL"}}})
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(other), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-m", "spartition", "families"], capture_output=True, text=True, env=env)
    assert proc.returncode == 2
    assert ("the DAG family 'matmul' is registered twice: by kernel classic of package spartition "
            "(spartition.families.classic.plugin:KERNEL) and by kernel clash of package spartition-clash "
            "(spartition_clash:KERNEL)") in proc.stderr


#: The tests that read every registry whole: the ones a third-party plug-in could turn red.
REGISTRY_TESTS = ("tagged or covered or formula_families or plug_in_point or names_what or public_module "
                  "or registers_a_name_once")


def test_the_projects_registry_tests_pass_with_a_plug_in_installed(site):
    """The project's own tests check its own plug-ins: installing the example changes none of their verdicts."""
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    check = subprocess.run([sys.executable, "-c", "from spartition.core.registry import FAMILIES; "
                            "print(FAMILIES.package('example-pairs'))"], capture_output=True, text=True, env=env)
    assert check.stdout.strip() == "spartition-example", check.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-o", "addopts=", "-m", "not slow",
         "--doctest-modules", str(here / "study" / "test_formulas.py"), str(here.parent / "spartition" / "study" / "formulas.py"),
         str(here / "test_plugins.py"), "-k", REGISTRY_TESTS],
        capture_output=True, text=True, env=env, cwd=here.parent)
    assert proc.returncode == 0 and "7 passed" in proc.stdout, proc.stdout[-3000:]


def test_the_walkthrough_in_the_docs_is_the_package_the_tests_install():
    """docs/plugins.md shows the example package whole; the tests above run exactly those files."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "plugins.md").read_text()
    blocks = re.findall(r"```(?:toml|python)\n(.*?)```", text, flags=re.S)
    assert blocks == [(EXAMPLE / "pyproject.toml").read_text(),
                      (EXAMPLE / "spartition_example" / "__init__.py").read_text()]
    # at most three files and one entry point: here two files, one entry point
    project = tomllib.loads(blocks[0])["project"]
    assert project["entry-points"] == {"spartition.kernels": {"example": "spartition_example:KERNEL"}}
