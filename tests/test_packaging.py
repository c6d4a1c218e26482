"""The wheel installs the families as ``spartition.families``, never as a top-level ``dags``.

``dags`` is the import name of an unrelated project on the package index;
installing both must overwrite nothing. The repository keeps its folder
``dags/``, which setuptools' ``package-dir`` mapping installs as
``spartition/families`` (no link); a checkout reaches it by the same name.
"""

import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def build_wheel(out: Path) -> Path:
    # an isolated build fetches the build backend pinned in pyproject.toml from the package index
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(out)],
                   check=True, capture_output=True)
    return next(out.glob("spartition-*.whl"))


def test_the_wheel_holds_the_families_inside_the_package(tmp_path):
    names = zipfile.ZipFile(build_wheel(tmp_path)).namelist()
    assert "spartition/families/classic/dag.py" in names
    assert "spartition/families/attention/forward/dag.py" in names
    assert not [n for n in names if n.startswith("dags/")]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).read(entry_points).decode()
    assert "spartition.families.classic.plugin:KERNEL" in text and "= dags." not in text


@pytest.mark.slow
def test_installs_beside_the_unrelated_dags_package(tmp_path):
    wheel = build_wheel(tmp_path)
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    py = env / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "dags", str(wheel)], check=True)
    out = subprocess.run([str(py), "-c", "import dags, spartition.families.classic.dag as c; "
                          "print(dags.__file__); print(c.chain(3).number_of_nodes())"],
                         check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split()
    assert "site-packages/dags/" in out[0] and out[1] == "3"


def test_a_family_module_has_one_identity_in_a_checkout():
    # run from the repository root, as `python -m pytest` does: the folder is on sys.path
    code = ("import importlib, sys\n"
            "import spartition.families.classic.dag as c\n"
            "from spartition.core.registry import family\n"
            "assert family('chain').__module__ == 'spartition.families.classic.dag'\n"
            "assert sys.modules[family('chain').__module__] is c\n"
            "assert not [m for m in sys.modules if m == 'dags' or m.startswith('dags.')]\n"
            "try:\n"
            "    importlib.import_module('dags.classic')\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    assert "the folder dags/ is the package spartition.families; import that, not 'dags'" in out


def test_the_wheel_lists_every_package_of_the_checkout():
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "spartition").rglob("__init__.py")}
    kernels = {".".join(("spartition", "families", *p.parent.relative_to(ROOT / "dags").parts))
               for p in (ROOT / "dags").rglob("__init__.py")}
    assert "spartition.families.attention.forward" in kernels
    assert listed == found | kernels
