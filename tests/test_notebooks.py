"""Every research notebook in ``notebooks/`` runs top to bottom in FAST mode, renders its figures and states findings.

Each notebook is executed with nbclient in a fresh kernel, with ``FAST`` on,
a temporary results store (``SPARTITION_STORE``) and a temporary figure
folder (``SPARTITION_NB_FIGURES``), so the user's data directory is never
touched. A cell error fails the test with the cell's traceback.
"""

from pathlib import Path

import pytest

# from the test extra ('pip install -e .[test]'): missing, these tests fail instead of skipping
import ipykernel  # noqa: F401, E402
import matplotlib  # noqa: F401, E402
import nbclient  # noqa: E402
import nbformat  # noqa: E402

NOTEBOOK_DIR = Path(__file__).resolve().parent.parent / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
EXPECTED = {"forward_attention", "backward_attention", "approximate_attention", "classic_kernels", "partial_game"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def test_all_notebooks_present_and_without_outputs():
    assert {p.stem for p in NOTEBOOKS} >= EXPECTED
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert all(not c.outputs and c.execution_count is None for c in code), f"{path.name} is committed with outputs"
        assert "FAST = False" in code[0].source, f"{path.name}: the first code cell must set FAST"


def _markdown_outputs(nb) -> list:
    out = []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if o.get("output_type") in ("display_data", "execute_result") and "text/markdown" in o.get("data", {}):
                out.append(o["data"]["text/markdown"])
    return out


# each notebook runs a kernel for 8-16 s: under -m slow, so the default suite stays near 4 minutes
@pytest.mark.slow
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_fast_mode(path, tmp_path, monkeypatch):
    figures = tmp_path / "figures"
    store = tmp_path / "results.sqlite"
    monkeypatch.setenv("SPARTITION_NB_FAST", "1")
    monkeypatch.setenv("SPARTITION_NB_FIGURES", str(figures))
    monkeypatch.setenv("SPARTITION_STORE", str(store))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=300, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # raises CellExecutionError (with the traceback) on any error

    pngs = sorted(figures.glob("*.png"))
    assert pngs, f"{path.name} saved no figure"
    for png in pngs:
        data = png.read_bytes()
        assert data.startswith(PNG_MAGIC) and len(data) > 2000, f"{png.name} is not a rendered figure"
    findings = [m for m in _markdown_outputs(nb) if "Findings" in m]
    assert findings, f"{path.name} stated no findings"
    assert all("- " in m for m in findings)
    assert store.exists(), f"{path.name} did not write to the temporary store"
    from spartition.study.store import ResultStore

    with ResultStore(store) as st:
        assert st.count() > 0
