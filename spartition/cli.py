"""The ``spartition`` command line: a thin layer over the library.

Exit codes: 0 success; 1 a certificate was checked and is invalid (or a
check failed); 2 bad input (unreadable file, unknown family, M too small...).
Every command takes ``--json`` for machine-readable output.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from importlib import import_module

from spartition.errors import SpartitionError

__all__ = ["main", "emit", "add_json_flag", "read_dag_arg"]

# Each module defines register(subparsers); commands live next to the concept they expose.
COMMAND_MODULES = (
    "spartition.cli_core",
    "spartition.cli_solve",
    "spartition.cli_lower",
    "spartition.cli_families",
    "spartition.cli_schedules",
    "spartition.cli_study",
)


class CheckFailed(Exception):
    """Raised by a command whose certificate or claim is invalid: exit status 1."""

    def __init__(self, message: str, payload: dict | None = None):
        super().__init__(message)
        self.payload = payload


def add_json_flag(parser) -> None:
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def emit(args, data: dict, text: str) -> None:
    """Print ``data`` as JSON when ``--json`` was given, else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text)


def read_dag_arg(path: str):
    """Load a DAG named on the command line: a file path, or ``FAMILY:key=value,...``."""
    from spartition.dag import load_dag
    from spartition.registry import build

    if ":" in path and not path.endswith(".json"):
        name, _, rest = path.partition(":")
        return build(name, [p for p in rest.split(",") if p])
    return load_dag(path)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="spartition",
        description="Exact red-blue pebbling I/O, S-partition lower bounds and published attention bounds.",
    )
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMAND_MODULES:
        import_module(name).register(sub)
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args) or 0
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except CheckFailed as exc:
        if getattr(args, "json", False) and exc.payload is not None:
            print(json.dumps(exc.payload, indent=2, default=str))
        print(f"spartition: {exc}", file=sys.stderr)
        return 1
    except (SpartitionError, ValueError, OSError) as exc:
        if getattr(args, "json", False):
            print(json.dumps({"error": str(exc), "kind": type(exc).__name__}))
        print(f"spartition: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
