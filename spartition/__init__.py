"""spartition: exact red-blue pebbling I/O, S-partition lower bounds, and published bounds side by side."""

import importlib.abc
import importlib.util
import sys
from pathlib import Path


class _FamiliesFromCheckout(importlib.abc.MetaPathFinder):
    """Finds ``spartition.families`` in the repository folder ``dags/`` when run from a checkout.

    An installed spartition has the families inside the package (setuptools'
    ``package-dir`` mapping in ``pyproject.toml``). A checkout has them only in
    ``dags/``, a sibling of ``spartition/``; this finder gives that folder the
    one name ``spartition.families``, so each family module exists once
    whichever way the package was reached (``dags/__init__.py`` refuses to be
    imported as ``dags``).
    """

    def __init__(self, folder: Path):
        self.folder = folder

    def find_spec(self, fullname, path=None, target=None):
        if fullname != "spartition.families":
            return None
        return importlib.util.spec_from_file_location(
            fullname, self.folder / "__init__.py", submodule_search_locations=[str(self.folder)])


_here = Path(__file__).resolve().parent
if not (_here / "families").is_dir() and (_here.parent / "dags" / "__init__.py").is_file():
    # first in line: the families of this checkout, not those of another copy installed in editable mode
    sys.meta_path.insert(0, _FamiliesFromCheckout(_here.parent / "dags"))

from spartition.errors import (
    IllegalMove,
    InfeasibleMemory,
    InvalidDAG,
    InvalidPartition,
    InvalidSchedule,
    SpartitionError,
    UnknownFamily,
)
__version__ = "0.1.0"

# The solvers import OR-Tools, which is slow to load, and the DAG and game modules networkx and numpy (most of a
# second): they are reached lazily, so that the command line has its Ctrl-C handler before any of them loads.
_LAZY = {
    "compact": "spartition.core.dag",
    "dag_hash": "spartition.core.dag",
    "load_dag": "spartition.core.dag",
    "save_dag": "spartition.core.dag",
    "ReplayResult": "spartition.core.game",
    "Schedule": "spartition.core.game",
    "load_schedule": "spartition.core.game",
    "replay": "spartition.core.game",
    "save_schedule": "spartition.core.game",
    "brute_force": "spartition.exact.brute",
    "check_partition": "spartition.partition.certificate",
    "class_capacity": "spartition.partition.capacity",
    "evaluate": "spartition.core.evaluate",
    "greedy_schedule": "spartition.core.greedy",
    "io_lower_bounds": "spartition.partition.lower_bounds",
    "min_partition": "spartition.partition.minimum",
    "solve_io": "spartition.exact.solve",
    # the same solver with the problem apart from the solver's settings
    "PebblingProblem": "spartition.exact.problem",
    "SolverSettings": "spartition.exact.problem",
    "solve": "spartition.exact.solve",
    # what every layer's result reads as: a value, the proven bound, the status, the evidence, the game
    "Finding": "spartition.finding",
    # the partial-computation game (solve_io, brute_force and replay take variant "partial" too)
    "aggregate_sums": "spartition.core.aggregate",
    "algorithm_partial_schedule": "spartition.core.partial_greedy",
    "oneshot_to_partial": "spartition.core.partial_greedy",
    "partial_edge_partition_bound": "spartition.partition.partial_edges",
    "partial_greedy_schedule": "spartition.core.partial_greedy",
}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spartition' has no attribute {name!r}")

__all__ = [
    "aggregate_sums",
    "algorithm_partial_schedule",
    "brute_force",
    "check_partition",
    "class_capacity",
    "evaluate",
    "greedy_schedule",
    "io_lower_bounds",
    "min_partition",
    "oneshot_to_partial",
    "partial_edge_partition_bound",
    "partial_greedy_schedule",
    "solve_io",
    "PebblingProblem",
    "SolverSettings",
    "solve",
    "Finding",
    "IllegalMove",
    "InfeasibleMemory",
    "InvalidDAG",
    "InvalidPartition",
    "InvalidSchedule",
    "ReplayResult",
    "Schedule",
    "SpartitionError",
    "UnknownFamily",
    "compact",
    "dag_hash",
    "load_dag",
    "load_schedule",
    "replay",
    "save_dag",
    "save_schedule",
]
