"""spartition: exact red-blue pebbling I/O, S-partition lower bounds, and published bounds side by side."""

from spartition.dag import compact, dag_hash, load_dag, save_dag
from spartition.errors import (
    IllegalMove,
    InfeasibleMemory,
    InvalidDAG,
    InvalidPartition,
    InvalidSchedule,
    SpartitionError,
    UnknownFamily,
)
from spartition.game import ReplayResult, Schedule, load_schedule, replay, save_schedule

__version__ = "0.1.0"

__all__ = [
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
