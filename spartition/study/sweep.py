"""Sweeps: a grid of studies run by an executor into the results store.

A grid file is TOML (read with :mod:`tomllib`)::

    time_limit = 10          # defaults for every study below
    workers = 1

    [[study]]
    family = "attention-forward"
    params = { n = [2], d = "1..2" }   # lists and inclusive ranges "a..b" / "a..b:step"
    M = "3..8"                         # or a list, or "auto" (the whole range)
    variant = ["oneshot"]
    exact = ["cpsat"]                  # exact methods: cpsat, brute
    bounds = true                      # the lower bounds
    algorithms = ["greedy"]            # omitted: every applicable one
    bound_time_limit = 10

Each study block expands to the cartesian product of its parameter lists and
variants: one :class:`~spartition.study.studies.StudySpec` each. Tasks already in
the store (proven, or run with at least the requested time limit) are
skipped, and each finished task is written at once, so an interrupted sweep
resumes where it stopped.

Executors run :func:`~spartition.study.studies.run_task` over tasks and yield
``(task, rows, error)`` in completion order: :class:`SerialExecutor` (in
this process), :class:`LocalExecutor` (a process pool, the default) and
:class:`DaskExecutor` (a ``distributed`` cluster at an address, or a client).
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from spartition.errors import SpartitionError
from spartition.study.store import stored_rows
from spartition.study.studies import StudySpec, plan_tasks
from spartition.study.tasks import Task, expand_grid, run_task

__all__ = [
    "GridError",
    "SweepInterrupted",
    "parse_range",
    "parse_grid",
    "load_grid",
    "SerialExecutor",
    "LocalExecutor",
    "DaskExecutor",
    "make_executor",
    "SweepSummary",
    "plan",
    "run_sweep",
]


class GridError(SpartitionError):
    """A grid file that cannot be read, names unknown keys, or holds a value of the wrong type."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep; ``summary`` counts what was finished (and stored) before it."""

    def __init__(self, summary):
        super().__init__("sweep interrupted")
        self.summary = summary


_STUDY_KEYS = {"family", "params", "M", "variant", "exact", "bounds", "algorithms", "time_limit",
               "bound_time_limit", "workers", "seed", "brute_max_states"}
_DEFAULT_KEYS = _STUDY_KEYS - {"family", "params", "M"}


def _int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def parse_range(value, what: str = "value") -> list:
    """A list from an int, a list, or an inclusive range string ``"a..b"`` / ``"a..b:step"``.

    Raises
    ------
    GridError
        Naming ``what``, on a range that is malformed, has a zero or negative
        step, or is empty (``"5..2"``).

    Examples
    --------
    >>> parse_range("3..6"), parse_range("2..8:3"), parse_range([1, 4]), parse_range(5)
    ([3, 4, 5, 6], [2, 5, 8], [1, 4], [5])
    """
    if isinstance(value, list):
        out = []
        for v in value:
            out += parse_range(v, what) if isinstance(v, str) and ".." in v else [v]
        return out
    if isinstance(value, str) and ".." in value:
        body, _, step = value.partition(":")
        lo, _, hi = body.partition("..")
        if not all(re.fullmatch(r"\s*[+-]?[0-9]+\s*", x) for x in (lo, hi, step or "1")):  # int() reads "1_0"
            raise GridError(f"{what}: bad range {value!r}; expected 'a..b' or 'a..b:step' with integers")
        lo, hi, step = int(lo), int(hi), int(step) if step else 1
        if step < 1:
            raise GridError(f"{what}: bad range {value!r}: the step must be a positive integer, got {step}")
        if hi < lo:
            raise GridError(f"{what}: range {value!r} is empty; write it ascending, 'a..b' with a <= b")
        return list(range(lo, hi + 1, step))
    return [value]


def _names(value, key: str, where: str, valid) -> tuple:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        got = f"the string {value!r}" if isinstance(value, str) else repr(value)
        raise GridError(f"{where}: key {key!r} must be a list of names (e.g. {key} = [{_q(valid[:1])}]), "
                        f"got {got}")
    for v in value:
        if v not in valid:
            raise GridError(f"{where}: key {key!r}: unknown name {v!r}; valid: {', '.join(valid)}")
    return tuple(value)


def _q(xs) -> str:
    return ", ".join(f'"{x}"' for x in xs)


def _check_setting(key: str, value, where: str):
    """A defaults/study setting checked by type and range; GridError naming ``key`` and ``where``."""
    from spartition.settings import check_positive_int, check_seed, check_time_limit

    try:
        if key in ("time_limit", "bound_time_limit"):
            return check_time_limit(value, key, allow_none=False)
        if key in ("workers", "brute_max_states"):
            return check_positive_int(value, key)
        if key == "seed":
            return check_seed(value, key)
        if key == "bounds":
            if not isinstance(value, bool):
                raise ValueError(f"bounds must be true or false, got {value!r}")
            return value
    except ValueError as exc:
        raise GridError(f"{where}: key {key!r}: {exc}") from None
    return value


def _family_params(fam: str, params, where: str) -> tuple[list, list]:
    """Parameter names and value lists of one study, checked against the builder's signature."""
    import inspect

    from spartition.core.registry import family as family_builder

    if not isinstance(params, dict):
        got = f"the string {params!r}" if isinstance(params, str) else repr(params)
        raise GridError(f"{where}: key 'params' must be a table (e.g. params = {{ n = 3 }}), got {got}")
    sig = inspect.signature(family_builder(fam)).parameters
    names = sorted(params)
    lists = []
    for n in names:
        if n not in sig:
            raise GridError(f"{where}: family {fam!r} has no parameter {n!r}; valid keys: {', '.join(sig)}")
        default = sig[n].default
        kind = None if default is inspect.Parameter.empty else type(default)
        raw = params[n]
        numeric = kind in (int, float)
        vals = parse_range(raw, f"{where} parameter {n}") if numeric else (raw if isinstance(raw, list) else [raw])
        if not vals:
            raise GridError(f"{where}: parameter {n!r} is an empty list")
        for v in vals:
            ok = (kind is None and isinstance(v, (int, float, str, bool))
                  or kind is bool and isinstance(v, bool)
                  or kind is int and _int(v)
                  or kind is float and isinstance(v, (int, float)) and not isinstance(v, bool)
                  or kind is str and isinstance(v, str))
            if not ok:
                want = _KIND_NAMES.get(kind, "a value")
                raise GridError(f"{where}: parameter {n!r} of {fam} must be {want} (or a list of them), got {v!r}")
        lists.append(vals)
    return names, lists


_KIND_NAMES = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}


def _memories(value, where: str):
    if value == "auto":
        return None
    if not (_int(value) or isinstance(value, (str, list))):
        raise GridError(f"{where}: key 'M' must be \"auto\", an integer, a list or a range \"a..b\", got {value!r}")
    Ms = parse_range(value, f"{where} M")
    if isinstance(value, str) and ".." not in value:
        raise GridError(f"{where}: key 'M' must be \"auto\", an integer, a list or a range \"a..b\", got {value!r}")
    if not Ms:
        raise GridError(f"{where}: key 'M' is an empty list")
    for m in Ms:
        if not _int(m) or m < 1:
            raise GridError(f"{where}: key 'M': memories must be positive integers, got {m!r}")
    return tuple(Ms)


def parse_grid(data: dict, source=None) -> list[StudySpec]:
    """The study specs of a parsed grid (see the module docstring).

    Parameters
    ----------
    data : dict
        The parsed TOML.
    source : str or Path, optional
        The grid file, named in error messages.

    Raises
    ------
    GridError
        On an unknown key (listing the valid ones), a study without a
        family, an unknown family, parameter, method or algorithm, a value of
        the wrong type (a string where a list or a table is expected is never
        split into characters), or a bad range.

    Examples
    --------
    >>> specs = parse_grid({"study": [{"family": "chain", "params": {"n": "3..4"}, "M": [2, 3]}]})
    >>> [(s.params, s.Ms) for s in specs]
    [({'n': 3}, (2, 3)), ({'n': 4}, (2, 3))]
    """
    from spartition.core.registry import algorithms as registered_algorithms
    from spartition.core.registry import family_names
    from spartition.settings import VARIANTS
    from spartition.study.tasks import EXACT_METHODS

    top = f"grid file {source}" if source is not None else "grid"
    if not isinstance(data, dict):
        raise GridError(f"{top}: expected a TOML document of tables")
    defaults = {k: v for k, v in data.items() if k != "study"}
    bad = set(defaults) - _DEFAULT_KEYS
    if bad:
        raise GridError(f"{top}: unknown top-level grid key {sorted(bad)[0]!r}; expected 'study' or one of "
                        f"{sorted(_DEFAULT_KEYS)}")
    studies = data.get("study", [])
    if not isinstance(studies, list) or not studies or not all(isinstance(st, dict) for st in studies):
        raise GridError(f"{top}: a grid needs at least one [[study]] table")
    for key, value in defaults.items():
        _check_setting(key, value, top)
    specs = []
    for k, st in enumerate(studies):
        where = f"{top}: study {k}"
        bad = set(st) - _STUDY_KEYS
        if bad:
            raise GridError(f"{where}: unknown key {sorted(bad)[0]!r}; expected some of {sorted(_STUDY_KEYS)}")
        if "family" not in st:
            raise GridError(f"{where}: no 'family'")
        merged = {**defaults, **st}
        fam = merged["family"]
        known = family_names()
        if not isinstance(fam, str) or fam not in known:
            raise GridError(f"{where}: unknown family {fam!r}; known: {', '.join(known)}")
        for key in ("time_limit", "bound_time_limit", "workers", "seed", "brute_max_states", "bounds"):
            if key in merged:
                _check_setting(key, merged[key], where)
        names, lists = _family_params(fam, merged.get("params", {}), where)
        Ms = _memories(merged.get("M", "auto"), where)
        variants = merged.get("variant", "oneshot")
        variants = variants if isinstance(variants, list) else [variants]
        if not variants:
            raise GridError(f"{where}: key 'variant' is an empty list")
        for v in variants:
            if v not in VARIANTS:
                raise GridError(f"{where}: key 'variant': unknown variant {v!r}; valid: {', '.join(VARIANTS)}")
        exact = _names(merged.get("exact", ["cpsat"]), "exact", where, list(EXACT_METHODS))
        algs = merged.get("algorithms")
        if algs is not None:
            algs = _names(algs, "algorithms", where, list(registered_algorithms()))
        for params in expand_grid(dict(zip(names, lists)), sort_keys=False):
            for variant in variants:
                try:
                    specs.append(StudySpec(
                        family=fam, params=dict(params), Ms=Ms, variant=variant,
                        exact=exact, bounds=bool(merged.get("bounds", True)), algorithms=algs,
                        time_limit=float(merged.get("time_limit", 10.0)),
                        bound_time_limit=float(merged.get("bound_time_limit", merged.get("time_limit", 10.0))),
                        workers=int(merged.get("workers", 1)), seed=int(merged.get("seed", 0)),
                        brute_max_states=int(merged.get("brute_max_states", 2_000_000)),
                    ))
                except (ValueError, SpartitionError) as exc:
                    raise GridError(f"{where}: {exc}") from None
    return specs


def load_grid(path) -> list[StudySpec]:
    """Read a TOML grid file.

    Raises
    ------
    GridError
        If the file cannot be read or parsed, or its content is invalid
        (see :func:`parse_grid`); the message names the file.
    """
    try:
        data = tomllib.loads(Path(path).read_text())
    except IsADirectoryError:
        raise GridError(f"grid file {path} is a directory") from None
    except OSError as exc:
        raise GridError(f"cannot read grid file {path}: {exc.strerror}") from exc
    except UnicodeDecodeError:
        raise GridError(f"grid file {path} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"bad TOML in grid file {path}: {exc}") from exc
    return parse_grid(data, source=path)


# ---------------------------------------------------------------- executors


def _safe_run(task: Task):
    """Run a task where it lands; errors come back as text (always picklable)."""
    try:
        return run_task(task), None
    except Exception as exc:  # reported by the caller as a failed task
        return None, f"{type(exc).__name__}: {exc}"


#: How often a pool worker checks that the process that started it is still alive (seconds).
ORPHAN_POLL_S = 0.5


def _worker_init(parent_pid: int) -> None:
    """Set up a pool worker: deaf to the terminal's Ctrl-C, and gone when its parent is.

    Ctrl-C is the parent's to handle (it stops the pool and keeps finished
    rows); a worker in its own process group does not receive it from the
    terminal, so an interrupted CP-SAT search can never come back as a
    shortened result. If the parent dies (kill -9) nobody would ever read the
    worker's result, so a watchdog thread ends the worker.
    """
    import os
    import signal
    import threading
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.setpgrp()
    except (AttributeError, OSError):  # pragma: no cover - not POSIX
        pass

    def watch():
        while True:
            time.sleep(ORPHAN_POLL_S)
            if os.getppid() != parent_pid:
                os._exit(1)

    threading.Thread(target=watch, name="orphan-watchdog", daemon=True).start()


class SerialExecutor:
    """Run tasks one after another in this process.

    A Ctrl-C during a task raises KeyboardInterrupt (even when a CP-SAT
    search swallowed it and returned early) and the task's rows are dropped.
    """

    name = "serial"

    def map_unordered(self, tasks):
        from spartition.study.studies import sigint_watch

        for t in tasks:
            with sigint_watch() as interrupted:
                rows, err = _safe_run(t)
            if interrupted():
                raise KeyboardInterrupt
            yield t, rows, err

    def close(self):
        pass


class LocalExecutor:
    """A local process pool of ``jobs`` processes (fresh interpreters: ``spawn``).

    On Ctrl-C or an early exit the workers are terminated (a running task is
    lost, finished ones were already yielded); a worker whose parent died
    exits by itself within :data:`ORPHAN_POLL_S` seconds.
    """

    name = "local"

    def __init__(self, jobs: int = 2):
        self.jobs = max(1, int(jobs))

    def map_unordered(self, tasks):
        import multiprocessing
        import os
        from concurrent.futures import ProcessPoolExecutor, as_completed

        tasks = list(tasks)
        if not tasks:
            return
        pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(tasks)),
                                   mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_worker_init, initargs=(os.getpid(),))
        finished = False
        try:
            futures = {pool.submit(_safe_run, t): t for t in tasks}
            for fut in as_completed(futures):
                rows, err = fut.result()
                yield futures[fut], rows, err
            finished = True
        finally:
            if finished:
                pool.shutdown(wait=True)
            else:
                _stop_pool(pool)

    def close(self):
        pass


def _stop_pool(pool) -> None:
    """Cancel what has not started and terminate the workers: nothing is left running or sleeping."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    for p in procs:
        p.join(5)
        if p.is_alive():  # pragma: no cover - ignored SIGTERM
            p.kill()
            p.join(1)
    try:
        pool.shutdown(wait=True)
    except Exception:  # pragma: no cover - a pool broken by the terminated workers
        pass


class DaskExecutor:
    """Tasks on a Dask ``distributed`` cluster: ``address`` (``tcp://host:8786``) or a ``Client``.

    Rows come back to this process, which writes them to the store: the
    workers need no access to it.
    """

    name = "dask"

    def __init__(self, address):
        from distributed import Client

        self._own = not isinstance(address, Client)
        self.client = Client(address) if self._own else address

    def map_unordered(self, tasks):
        from distributed import as_completed

        tasks = list(tasks)
        if not tasks:
            return
        futures = [self.client.submit(_safe_run, t, pure=False) for t in tasks]
        index = {f.key: t for f, t in zip(futures, tasks)}
        try:
            for fut in as_completed(futures):
                rows, err = fut.result()
                yield index[fut.key], rows, err
        finally:
            for f in futures:
                f.cancel()

    def close(self):
        if self._own:
            self.client.close()


def make_executor(jobs: int = 2, dask: str | None = None):
    """The executor a command asked for: Dask at ``dask``, else a pool of ``jobs`` (serial if 1)."""
    if dask:
        return DaskExecutor(dask)
    return SerialExecutor() if jobs <= 1 else LocalExecutor(jobs)


# ---------------------------------------------------------------- sweeps


@dataclass
class SweepSummary:
    """Counts of a sweep: tasks computed now, found in the store, failed (with messages)."""

    total: int = 0
    computed: int = 0
    cached: int = 0
    failed: int = 0
    errors: list = field(default_factory=list)
    rows_written: int = 0

    def to_dict(self) -> dict:
        return {"total": self.total, "computed": self.computed, "cached": self.cached, "failed": self.failed,
                "errors": list(self.errors), "rows_written": self.rows_written}


def plan(specs, store=None, refresh: bool = False) -> tuple[list, int]:
    """The tasks of ``specs`` still to compute, and how many the store already answers."""
    todo, cached = [], 0
    for spec in specs:
        for t in plan_tasks(spec):
            if not refresh and stored_rows(store, [(k, t.effective_limit(k.method)) for k in t.keys()]) is not None:
                cached += 1
                continue
            todo.append(t)
    return todo, cached


def run_sweep(specs, store, executor=None, refresh: bool = False, progress: bool | None = None) -> SweepSummary:
    """Run every task of ``specs`` not yet in ``store``; each finished task is stored at once.

    Parameters
    ----------
    specs : list of StudySpec
    store : ResultStore
    executor : SerialExecutor, LocalExecutor or DaskExecutor
        Default: a local pool of 2 processes.
    refresh : bool
        Recompute cached tasks too.
    progress : bool or None
        A tqdm progress bar on stderr (None: only on a terminal).

    Returns
    -------
    SweepSummary

    Raises
    ------
    SweepInterrupted
        On Ctrl-C: the rows of finished tasks are in the store (a rerun
        resumes), the executor's workers are stopped.
    """
    from tqdm import tqdm

    executor = executor or LocalExecutor(2)
    todo, cached = plan(specs, store, refresh)
    summary = SweepSummary(total=len(todo) + cached, cached=cached)
    disable = (not sys.stderr.isatty()) if progress is None else not progress
    bar = tqdm(total=summary.total, initial=cached, desc="sweep", unit="task", disable=disable, file=sys.stderr)

    def post():
        bar.set_postfix(done=summary.computed, cached=summary.cached, failed=summary.failed, refresh=False)

    post()
    results = executor.map_unordered(todo)
    try:
        for task, rows, err in results:
            if err is not None:
                summary.failed += 1
                summary.errors.append(f"{task.label()}: {err}")
            else:
                for r in rows:
                    summary.rows_written += bool(store.put(r))
                summary.computed += 1
            bar.update(1)
            post()
    except KeyboardInterrupt:
        raise SweepInterrupted(summary) from None
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # stops the pool now, not when the generator is collected
        bar.close()
    return summary
