"""What the command modules share: argument types, the DAG argument, output, and CheckFailed.

Each module of :mod:`spartition.cli` registers one command group and takes
its flags' types from here, so every command checks a seed, a time limit or
an output path the same way, naming the flag.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from spartition.errors import UsageError
from spartition.settings import DEFAULT_VARIANT, PARTIAL, SEED_RANGE, VARIANTS

__all__ = [
    "CheckFailed",
    "EXIT_CHECK_FAILED",
    "EXIT_INTERNAL",
    "EXIT_INTERRUPTED",
    "EXIT_USAGE",
    "add_dag_arg",
    "elapsed_bar",
    "is_dag_file",
    "add_variant_arg",
    "add_json_flag",
    "bounded_int",
    "emit",
    "memories",
    "nonnegative_int",
    "positive_int",
    "positive_seconds",
    "read_dag_arg",
    "refuse_overwrite",
    "seed",
]

EXIT_CHECK_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3
EXIT_INTERRUPTED = 130

#: Largest M, S, X or bound the commands take: far beyond any DAG they can build, and
#: small enough that CP-SAT's 64-bit coefficients never overflow on it.
INT_LIMIT = 2**31 - 1


class CheckFailed(Exception):
    """Raised by a command whose certificate or claim is invalid: exit status 1."""

    def __init__(self, message: str, payload: dict | None = None):
        super().__init__(message)
        self.payload = payload


# --------------------------------------------------------------------------- argument types


def seed(text: str) -> int:
    """argparse type of ``--seed``: an integer CP-SAT accepts (``0 .. 2**31 - 1``).

    Examples
    --------
    >>> seed("7")
    7
    >>> seed("99999999999")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer from 0 to 2147483647 (CP-SAT seeds are 32-bit), got '99999999999'
    """
    lo, hi = SEED_RANGE
    value = decimal_int(text)
    if value is None or not lo <= value <= hi:
        raise argparse.ArgumentTypeError(
            f"must be an integer from {lo} to {hi} (CP-SAT seeds are 32-bit), got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """argparse type of a time limit: a finite number of seconds greater than 0.

    Examples
    --------
    >>> positive_seconds("2.5")
    2.5
    >>> positive_seconds("nan")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be a finite number of seconds > 0, got 'nan'
    """
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds > 0, got {text!r}")
    return value


def decimal_int(text: str) -> int | None:
    """``text`` as a decimal integer, or None: Python's ``int`` also reads ``1_0`` as 10, a typo here.

    Examples
    --------
    >>> decimal_int(" 12 "), decimal_int("-3"), decimal_int("1_0"), decimal_int("0x10")
    (12, -3, None, None)
    """
    text = text.strip()
    return int(text) if re.fullmatch(r"[+-]?[0-9]+", text) else None


def _int_at_least(low: int, what: str):
    def check(text: str) -> int:
        value = decimal_int(text)
        if value is None or value < low:
            raise argparse.ArgumentTypeError(f"must be {what}, got {text!r}")
        return value

    return check


def bounded_int(text: str) -> int:
    """argparse type of M, S, X and bounds: an integer below ``2**31`` (the solvers' models are 64-bit).

    Examples
    --------
    >>> bounded_int("-3"), bounded_int("12")
    (-3, 12)
    >>> bounded_int("1_0")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: must be an integer of magnitude at most 2147483647, got '1_0'
    """
    value = decimal_int(text)
    if value is None or abs(value) > INT_LIMIT:
        raise argparse.ArgumentTypeError(f"must be an integer of magnitude at most {INT_LIMIT}, got {text!r}")
    return value


#: argparse type: an integer >= 0.
nonnegative_int = _int_at_least(0, "an integer >= 0")
#: argparse type: an integer >= 1.
positive_int = _int_at_least(1, "an integer >= 1")


# --------------------------------------------------------------------------- shared arguments


def add_json_flag(parser) -> None:
    """Add ``--json`` to a command."""
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")


def add_dag_arg(parser, help: str = "DAG file (node-link .json, HyperDAG .hdag, Graphviz .dot), "
                                   "or FAMILY:key=value,... for a built-in family") -> None:
    """Add the positional ``dag`` and ``--max-nodes`` (the size guard of a built family) to a command."""
    from spartition.core.registry import DEFAULT_MAX_NODES

    parser.add_argument("dag", help=help)
    parser.add_argument("--max-nodes", type=positive_int, default=DEFAULT_MAX_NODES,
                        help=f"refuse to build a family DAG of more nodes (default {DEFAULT_MAX_NODES:,})")


def add_variant_arg(parser, default: str | None = DEFAULT_VARIANT, note: str = "", games=VARIANTS) -> None:
    """Add ``--variant`` (the game) with its choices (``games``: the variants, or ``GAMES`` with the partial game),
    its default and what each means."""
    shown = default or DEFAULT_VARIANT
    partial = ", or partial (partial computations, one in-edge at a time)" if PARTIAL in games else ""
    parser.add_argument("--variant", choices=games, default=default,
                        help="the game: oneshot (each node computed once) or recompute (a node may be computed "
                             f"again){partial}; default {shown}{note}")


@contextmanager
def elapsed_bar(what: str, seconds: float | None, stream=None):
    """Show the time spent against the time limit on a terminal while a long command runs; nothing when piped.

    The solvers report nothing until they finish, so the bar only says how
    much of ``seconds`` (the command's time limit, None: unbounded) has
    passed; it is redrawn twice a second by a daemon thread and removed when
    the block ends, however it ends.
    """
    stream = sys.stderr if stream is None else stream
    if not stream.isatty():
        yield
        return
    from tqdm import tqdm

    total = None if seconds is None else float(seconds)
    bar = tqdm(total=total, desc=what, unit="s", file=stream, leave=False,
               bar_format="{desc}: {elapsed} of {total_fmt} s {bar}" if total else "{desc}: {elapsed}")
    done = threading.Event()

    def tick():
        start = time.monotonic()
        while not done.wait(0.5):
            bar.n = min(time.monotonic() - start, total) if total else time.monotonic() - start
            bar.refresh()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        bar.close()


def emit(args, data: dict, text: str) -> None:
    """Print ``data`` as JSON when ``--json`` was given, else the human ``text``."""
    if getattr(args, "json", False):
        print(json.dumps(data, indent=2, default=str))
    else:
        print(text)


def is_dag_file(arg: str) -> bool:
    """Whether a command's DAG or FAMILY argument names a file: a DAG format's extension, or a path separator.

    A bare word (``fft``) stays a family name even when a file of that name exists.

    Examples
    --------
    >>> is_dag_file("mm.hdag"), is_dag_file("./graphs/g"), is_dag_file("fft")
    (True, True, False)
    """
    from spartition.core.dag import DAG_FORMATS

    return any(arg.lower().endswith(ext) for exts in DAG_FORMATS.values() for ext in exts) or os.sep in arg


def _is_family_spec(path: str) -> bool:
    from spartition.core.dag import DAG_FORMATS

    # a path with a colon (C:/x.hdag, run:3/g.dot) still names a file when its extension is a DAG format's
    return ":" in path and not any(path.lower().endswith(ext) for exts in DAG_FORMATS.values() for ext in exts)


def read_dag_arg(path: str, max_nodes: int | None = None, family_params: bool = False):
    """Load a DAG named on the command line: a file path, or ``FAMILY:key=value,...``.

    A file is read in the format its extension names (node-link JSON,
    HyperDAG ``.hdag``, DOT ``.dot``/``.gv``; see :func:`spartition.core.dag.load_dag`).

    Parameters
    ----------
    path : str
        The argument.
    max_nodes : int or None
        Size guard of a built family (default :data:`spartition.core.registry.DEFAULT_MAX_NODES`).
    family_params : bool
        For a command that reads ``graph.params`` (schedules, hints): check
        that a DAG file naming a family carries that family's parameters,
        and complete them with the defaults.

    Raises
    ------
    InvalidDAG, UnknownFamily, DAGTooLarge
        Naming the file, family, parameter or size.
    """
    from spartition.core.dag import load_dag
    from spartition.core.registry import DEFAULT_MAX_NODES, build
    from spartition.core.registry import family_params as checked_params

    if _is_family_spec(path):
        name, _, rest = path.partition(":")
        limit = DEFAULT_MAX_NODES if max_nodes is None else max_nodes
        return build(name, [p for p in rest.split(",") if p], max_nodes=limit)
    G = load_dag(path)
    if family_params:
        G.graph["params"] = checked_params(G, f"DAG file {path}")
    return G


def time_left(args) -> float | None:
    """``--time-limit`` less the time the command has run (reading or building its DAG included); None: no limit.

    The limit bounds the whole command, as a user times it: building a
    family of 10^5 nodes takes seconds that the solvers must not spend again.
    What is left is at least 0.1 s (or the limit itself, if smaller), so a
    solver still reports what it has (the trivial bound, a greedy schedule)
    instead of refusing a zero limit.
    """
    limit = getattr(args, "time_limit", None)
    if limit is None:
        return None
    started = getattr(args, "started", None)
    spent = 0.0 if started is None else time.monotonic() - started
    return max(min(limit, 0.1), limit - spent)


def refuse_overwrite(output: str | None, flag: str, *inputs: str | None, what: str = "the input file",
                     store: str | os.PathLike | None = None) -> None:
    """Raise :class:`UsageError` if writing ``output`` would replace an input file or the results store.

    Every output flag of every command calls this before anything is read or
    written: one check, so no command loses a user's DAG, schedule,
    certificate or stored results to a mistyped path.

    Parameters
    ----------
    output : str or None
        The path the command writes (None: nothing is written).
    flag : str
        The flag that names it, for the message (``-o/--output``).
    *inputs : str or None
        The files the command reads; ``FAMILY:key=value`` arguments and None are skipped.
    what : str
        How the message names ``inputs``.
    store : path-like or None
        The results store in use (``--store``); None: the default store
        (:func:`spartition.study.store.default_store_path`), which every
        command refuses whether or not it opens it.

    Raises
    ------
    UsageError
        Naming the flag, the output and the file it would replace.

    Notes
    -----
    Paths are compared resolved (symlinks, ``..``) and, when both exist, by
    inode, so no spelling of an input gets overwritten. An input *inside*
    ``output`` counts too: ``certify`` writes a bundle directory, and a DAG
    in it would be replaced by the bundle's ``dag.json``.
    """
    if not output:
        return
    from spartition.study.store import default_store_path

    store = default_store_path() if store is None else store
    for src, name in [(src, what) for src in inputs] + [(store, "the results store")]:
        if not src or (name == what and _is_family_spec(str(src))):
            continue
        how = _would_replace(output, src)
        if how:
            raise UsageError(f"{flag} {output} {how} {name} {src}: refusing to overwrite it")


def _would_replace(output, src) -> str:
    """``"is"`` if ``output`` is the file ``src``, ``"holds"`` if it is a directory above it, else ``""``."""
    out, p = Path(output), Path(src)
    try:
        r_out, r_src = out.resolve(), p.resolve()
    except (OSError, RuntimeError):  # a symlink loop: the write fails anyway, later, naming the file
        return ""
    if r_out == r_src:
        return "is"
    if r_out in r_src.parents:
        return "holds"
    if out.exists() and p.exists():
        try:
            return "is" if os.path.samefile(out, p) else ""
        except OSError:
            return ""
    return ""


def memories(text):
    """``--M``: comma-separated memories and ranges (``3,4,8``, ``3..8``), each a positive integer."""
    from spartition.study.sweep import GridError, parse_range

    out = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        try:
            items = parse_range(part, "--M")
        except GridError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        for x in items:
            m = x if isinstance(x, int) else decimal_int(x)
            if m is None:
                raise argparse.ArgumentTypeError(f"--M: memories must be positive integers, got {x!r}")
            if m < 1:
                raise argparse.ArgumentTypeError(f"--M: memories must be positive integers, got {m}")
            out.append(m)
    if not out:
        raise argparse.ArgumentTypeError(f"--M: no memories in {text!r}; expected e.g. '3,4,8' or '3..8'")
    if len(out) > MAX_MEMORIES:
        # each memory is a row of solver runs: 1..100000 kept sandwich busy long past its time limit
        raise argparse.ArgumentTypeError(f"--M: {len(out):,} memories in {text!r}, more than {MAX_MEMORIES:,}")
    return tuple(out)


#: The most memories one ``--M`` list may name.
MAX_MEMORIES = 1_000
