"""The wheel installs the families as ``spartition.families``, never as a top-level ``dags``.

``dags`` is the import name of an unrelated project on the package index;
installing both must overwrite nothing. The repository keeps its folder
``dags/``, linked into the package as ``spartition/families``.
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
    assert "spartition/families/classic.py" in names
    assert "spartition/families/attention.py" in names
    assert not [n for n in names if n.startswith("dags/")]
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(next(tmp_path.glob("*.whl"))).read(entry_points).decode()
    assert "spartition.families.classic:chain" in text and "= dags." not in text


@pytest.mark.slow
def test_installs_beside_the_unrelated_dags_package(tmp_path):
    wheel = build_wheel(tmp_path)
    env = tmp_path / "venv"
    venv.create(env, with_pip=True)
    py = env / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", "dags", str(wheel)], check=True)
    out = subprocess.run([str(py), "-c", "import dags, spartition.families.classic as c; "
                          "print(dags.__file__); print(c.chain(3).number_of_nodes())"],
                         check=True, capture_output=True, text=True, cwd=tmp_path).stdout.split()
    assert "site-packages/dags/" in out[0] and out[1] == "3"
