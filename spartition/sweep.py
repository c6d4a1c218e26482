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
variants: one :class:`~spartition.study.StudySpec` each. Tasks already in
the store (proven, or run with at least the requested time limit) are
skipped, and each finished task is written at once, so an interrupted sweep
resumes where it stopped.

Executors run :func:`~spartition.study.run_task` over tasks and yield
``(task, rows, error)`` in completion order: :class:`SerialExecutor` (in
this process), :class:`LocalExecutor` (a process pool, the default) and
:class:`DaskExecutor` (a ``distributed`` cluster at an address, or a client).
"""

from __future__ import annotations

import itertools
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from spartition.errors import SpartitionError
from spartition.study import StudySpec, Task, plan_tasks, run_task

__all__ = [
    "GridError",
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
    """A grid file that cannot be read or names unknown keys."""


_STUDY_KEYS = {"family", "params", "M", "variant", "exact", "bounds", "algorithms", "time_limit",
               "bound_time_limit", "workers", "seed", "brute_max_states"}
_DEFAULT_KEYS = _STUDY_KEYS - {"family", "params", "M"}


def parse_range(value, what: str = "value") -> list:
    """A list from an int, a list, or an inclusive range string ``"a..b"`` / ``"a..b:step"``.

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
        try:
            return list(range(int(lo), int(hi) + 1, int(step) if step else 1))
        except ValueError:
            raise GridError(f"{what}: bad range {value!r}; expected 'a..b' or 'a..b:step'") from None
    return [value]


def parse_grid(data: dict) -> list[StudySpec]:
    """The study specs of a parsed grid (see the module docstring).

    Raises
    ------
    GridError
        On an unknown key, a study without a family, or a bad range.

    Examples
    --------
    >>> specs = parse_grid({"study": [{"family": "chain", "params": {"n": "3..4"}, "M": [2, 3]}]})
    >>> [(s.params, s.Ms) for s in specs]
    [({'n': 3}, (2, 3)), ({'n': 4}, (2, 3))]
    """
    defaults = {k: v for k, v in data.items() if k != "study"}
    bad = set(defaults) - _DEFAULT_KEYS
    if bad:
        raise GridError(f"unknown top-level grid key {sorted(bad)[0]!r}; expected 'study' or one of {sorted(_DEFAULT_KEYS)}")
    studies = data.get("study", [])
    if not isinstance(studies, list) or not studies:
        raise GridError("a grid needs at least one [[study]] table")
    specs = []
    for k, st in enumerate(studies):
        bad = set(st) - _STUDY_KEYS
        if bad:
            raise GridError(f"study {k}: unknown key {sorted(bad)[0]!r}; expected some of {sorted(_STUDY_KEYS)}")
        if "family" not in st:
            raise GridError(f"study {k}: no 'family'")
        merged = {**defaults, **st}
        names = sorted(merged.get("params", {}))
        lists = [parse_range(merged["params"][n], f"study {k} parameter {n}") for n in names]
        Ms = merged.get("M", "auto")
        Ms = None if Ms == "auto" else tuple(int(m) for m in parse_range(Ms, f"study {k} M"))
        variants = merged.get("variant", "oneshot")
        variants = variants if isinstance(variants, list) else [variants]
        algs = merged.get("algorithms")
        for combo in itertools.product(*lists):
            for variant in variants:
                specs.append(StudySpec(
                    family=merged["family"], params=dict(zip(names, combo)), Ms=Ms, variant=variant,
                    exact=tuple(merged.get("exact", ("cpsat",))), bounds=bool(merged.get("bounds", True)),
                    algorithms=None if algs is None else tuple(algs),
                    time_limit=float(merged.get("time_limit", 10.0)),
                    bound_time_limit=float(merged.get("bound_time_limit", merged.get("time_limit", 10.0))),
                    workers=int(merged.get("workers", 1)), seed=int(merged.get("seed", 0)),
                    brute_max_states=int(merged.get("brute_max_states", 2_000_000)),
                ))
    return specs


def load_grid(path) -> list[StudySpec]:
    """Read a TOML grid file.

    Raises
    ------
    GridError
        If the file cannot be read or parsed.
    """
    try:
        data = tomllib.loads(Path(path).read_text())
    except OSError as exc:
        raise GridError(f"cannot read grid file {path}: {exc.strerror}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise GridError(f"bad TOML in grid file {path}: {exc}") from exc
    return parse_grid(data)


# ---------------------------------------------------------------- executors


def _safe_run(task: Task):
    """Run a task where it lands; errors come back as text (always picklable)."""
    try:
        return run_task(task), None
    except Exception as exc:  # reported by the caller as a failed task
        return None, f"{type(exc).__name__}: {exc}"


class SerialExecutor:
    """Run tasks one after another in this process."""

    name = "serial"

    def map_unordered(self, tasks):
        for t in tasks:
            rows, err = _safe_run(t)
            yield t, rows, err

    def close(self):
        pass


class LocalExecutor:
    """A local process pool of ``jobs`` processes (fresh interpreters: ``spawn``)."""

    name = "local"

    def __init__(self, jobs: int = 2):
        self.jobs = max(1, int(jobs))

    def map_unordered(self, tasks):
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        tasks = list(tasks)
        if not tasks:
            return
        pool = ProcessPoolExecutor(max_workers=min(self.jobs, len(tasks)),
                                   mp_context=multiprocessing.get_context("spawn"))
        try:
            futures = {pool.submit(_safe_run, t): t for t in tasks}
            for fut in as_completed(futures):
                rows, err = fut.result()
                yield futures[fut], rows, err
        finally:
            pool.shutdown(wait=False, cancel_futures=True)

    def close(self):
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
            if store is not None and not refresh:
                got = [store.get(k, t.effective_limit(k.method)) for k in t.keys()]
                if all(g is not None for g in got):
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
    try:
        for task, rows, err in executor.map_unordered(todo):
            if err is not None:
                summary.failed += 1
                summary.errors.append(f"{task.label()}: {err}")
            else:
                for r in rows:
                    summary.rows_written += bool(store.put(r))
                summary.computed += 1
            bar.update(1)
            post()
    finally:
        bar.close()
    return summary
