"""spartition: exact red-blue pebbling I/O, S-partition lower bounds, and published bounds side by side."""

from spartition.core.dag import compact, dag_hash, load_dag, save_dag
from spartition.errors import (
    IllegalMove,
    InfeasibleMemory,
    InvalidDAG,
    InvalidPartition,
    InvalidSchedule,
    SpartitionError,
    UnknownFamily,
)
from spartition.core.game import ReplayResult, Schedule, load_schedule, replay, save_schedule

__version__ = "0.1.0"

# The solvers import OR-Tools, which is slow to load: they are reached lazily.
_LAZY = {
    "brute_force": "spartition.exact.brute",
    "check_partition": "spartition.partition.certificate",
    "class_capacity": "spartition.partition.capacity",
    "evaluate": "spartition.core.evaluate",
    "greedy_schedule": "spartition.core.greedy",
    "io_lower_bounds": "spartition.partition.lower_bounds",
    "min_partition": "spartition.partition.minimum",
    "solve_io": "spartition.exact.solve",
}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'spartition' has no attribute {name!r}")

__all__ = [
    "brute_force",
    "check_partition",
    "class_capacity",
    "evaluate",
    "greedy_schedule",
    "io_lower_bounds",
    "min_partition",
    "solve_io",
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
