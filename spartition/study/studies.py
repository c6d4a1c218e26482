"""Tightness studies: the exact optimum, lower bounds, published formulas and algorithms side by side.

A study takes one DAG family at fixed parameters and a list of fast-memory
sizes M (:class:`StudySpec`). For every M, :func:`compare` computes what the
results store lacks -- the exact optimal I/O with its status, every computed
lower bound with provenance, the replayed I/O of every registered algorithm
that applies (the :class:`~spartition.study.tasks.Task` objects of
:func:`plan_tasks`) -- and assembles one :class:`~spartition.study.verdicts.StudyRow`
per M with the registered formulas and the verdicts
(:mod:`spartition.study.verdicts`).

Nothing unproven is called optimal: an exact row whose search stopped
early is shown with its status, incumbent, proven bound and time limit.

The names of :mod:`spartition.study.tasks` and :mod:`spartition.study.verdicts`
are exported here too: this module is the study's front door.
"""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from spartition.errors import UnknownFamily
from spartition.settings import (
    DEFAULT_SEED,
    DEFAULT_VARIANT,
    DEFAULT_WORKERS,
    PARTIAL,
    check_positive_int,
    check_seed,
    check_time_limit,
    check_variant,
)
from spartition.study.store import StoredResult, canonical_json, stored_rows
from spartition.study.tasks import (
    EXACT_METHODS,
    SCHEDULE_STATUSES,
    SKIPPED,
    Task,
    build_dag,
    default_memories,
    exact_available,
    family_dag_hash,
    method_version,
    run_task,
)
from spartition.study.verdicts import StudyRow, Verdict, assemble_row, format_exact, verdicts

__all__ = [
    "builtin_study",
    "EXACT_METHODS",
    "SCHEDULE_STATUSES",
    "SKIPPED",
    "Task",
    "StudySpec",
    "StudyRow",
    "Study",
    "Verdict",
    "plan_tasks",
    "run_task",
    "build_dag",
    "default_memories",
    "assemble_row",
    "verdicts",
    "compare",
    "study_file",
    "rows_from_store",
    "exact_available",
    "family_dag_hash",
    "format_exact",
    "method_version",
    "sigint_watch",
]


def _check_names(value, name: str, valid) -> None:
    if isinstance(value, str) or not isinstance(value, (tuple, list)):
        raise ValueError(f"{name} must be a list of names, got {value!r}")
    for v in value:
        if v not in valid:
            raise UnknownFamily(f"unknown {name} {v!r}; valid: {', '.join(valid)}")



@dataclass(frozen=True)
class StudySpec:
    """What to compute for one DAG (family at fixed parameters) over memories ``Ms``.

    Attributes
    ----------
    family : str
    params : dict
        Builder parameters.
    Ms : tuple of int or None
        None: :func:`default_memories`.
    variant : {"oneshot", "recompute", "partial"}
    exact : tuple of str
        Exact methods (:data:`EXACT_METHODS`).
    bounds : bool
        Compute the lower bounds.
    algorithms : tuple of str or None
        Algorithm names; None: every registered one that applies.
    time_limit : float
        Seconds per exact run.
    bound_time_limit : float
        Seconds per partition / capacity run.
    workers, seed : int
        CP-SAT settings.
    """

    family: str
    params: dict = field(default_factory=dict)
    Ms: tuple | None = None
    variant: str = DEFAULT_VARIANT
    exact: tuple = ("cpsat",)
    bounds: bool = True
    algorithms: tuple | None = None
    time_limit: float = 60.0
    bound_time_limit: float = 20.0
    workers: int = DEFAULT_WORKERS
    seed: int = DEFAULT_SEED
    brute_max_states: int = 2_000_000

    def __post_init__(self):
        # checked here so that every entry point (compare, sweeps, claims) refuses the same bad settings
        if not isinstance(self.family, str) or not self.family:
            raise ValueError(f"family must be a family name, got {self.family!r}")
        if not isinstance(self.params, dict):
            raise ValueError(f"params must be a dict of builder parameters, got {self.params!r}")
        if self.Ms is not None:
            if isinstance(self.Ms, (str, bytes)) or not isinstance(self.Ms, (tuple, list)) or not self.Ms:
                raise ValueError(f"Ms must be a non-empty list of memories (or None), got {self.Ms!r}")
            for M in self.Ms:
                check_positive_int(M, "M")
        if self.variant != PARTIAL:
            check_variant(self.variant)
        _check_names(self.exact, "exact method", EXACT_METHODS)
        if not isinstance(self.bounds, bool):
            raise ValueError(f"bounds must be true or false, got {self.bounds!r}")
        if self.algorithms is not None:
            from spartition.core.registry import algorithms

            _check_names(self.algorithms, "algorithm", list(algorithms()))
        check_time_limit(self.time_limit, "time_limit", allow_none=False)
        check_time_limit(self.bound_time_limit, "bound_time_limit", allow_none=False)
        check_positive_int(self.workers, "workers")
        check_seed(self.seed, "seed")
        check_positive_int(self.brute_max_states, "brute_max_states")

    @classmethod
    def from_file(cls, path, Ms=None, **settings) -> "StudySpec":
        """The study of a DAG file of one's own (any format of :func:`spartition.core.dag.load_dag`).

        What ``spartition compare FILE`` studies: the family ``file`` keyed by the
        file's absolute path and the hash of the DAG it holds now, so a changed
        file is refused rather than answered from old results.

        Parameters
        ----------
        path : str or path-like
        Ms : sequence of int, optional
            The memories; default the whole interesting range.
        **settings
            Any other field (``variant``, ``exact``, ``time_limit``, ...).

        Raises
        ------
        InvalidDAG
            If the file is unreadable or holds no DAG.

        Examples
        --------
        >>> import os, tempfile
        >>> from spartition.core.dag import save_dag
        >>> from spartition.families.classic.dag import chain
        >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
        >>> save_dag(chain(3), path)
        >>> spec = StudySpec.from_file(path, Ms=[2], exact=("brute",))
        >>> spec.family, spec.params["path"] == os.path.abspath(path)
        ('file', True)
        """
        from spartition.core.dag import dag_file

        G = dag_file(str(Path(path).resolve()))  # fails here on an unreadable file, naming it
        return cls("file", dict(G.graph["params"]), Ms=None if Ms is None else tuple(Ms), **settings)

    def dag(self):
        """The study's DAG (built once per process: do not mutate it)."""
        return build_dag(self.family, self.params)

    def memories(self) -> list[int]:
        """The memories studied: ``Ms``, or the whole interesting range (:func:`default_memories`)."""
        return list(self.Ms) if self.Ms is not None else default_memories(self.dag(), self.variant)

    def algorithm_names(self) -> list[str]:
        """The algorithms run: ``algorithms``, or every registered one that applies to the family and makes
        schedules of the study's game (in the partial game: oneshot schedules, translated)."""
        from spartition.core.registry import algorithms

        if self.algorithms is not None:
            return list(self.algorithms)
        made_in = "oneshot" if self.variant == PARTIAL else self.variant
        return [name for name, a in algorithms().items() if _applies(a, self.family, made_in)]

    def to_dict(self) -> dict:
        return {"family": self.family, "params": dict(self.params), "Ms": None if self.Ms is None else list(self.Ms),
                "variant": self.variant, "exact": list(self.exact), "bounds": self.bounds,
                "algorithms": None if self.algorithms is None else list(self.algorithms),
                "time_limit": self.time_limit, "bound_time_limit": self.bound_time_limit,
                "workers": self.workers, "seed": self.seed}


def _applies(alg, family: str, variant: str) -> bool:
    f = getattr(alg, "applies_to", None)
    return True if f is None else bool(f(family, variant))


def builtin_study() -> StudySpec:
    """The study ``spartition compare`` runs without a family: the one a family registers as ``default``.

    Registered under the entry-point group ``spartition.studies``
    (:data:`spartition.core.registry.STUDIES`); the built-in one is the
    README's main job (``spartition.families.attention.plugin.BUILTIN``).
    """
    from spartition.core.registry import STUDIES

    spec = STUDIES.lookup("default")
    if not isinstance(spec, StudySpec):
        raise UnknownFamily(f"the built-in study 'default' is not a StudySpec: {spec!r}")
    return spec


def plan_tasks(spec: StudySpec) -> list[Task]:
    """The tasks of ``spec``, slowest kinds first (exact, bounds, algorithms) per M.

    An exact method that cannot run here (:func:`exact_available`) is left out.
    """
    params = tuple(sorted(spec.params.items()))
    tasks = []
    exact = [name for name in spec.exact if exact_available(name)]
    for M in spec.memories():
        for name in exact:
            opts = (("max_states", spec.brute_max_states),) if name == "brute" else ()
            tasks.append(Task(spec.family, params, M, spec.variant, "exact", name, spec.time_limit, spec.workers,
                              spec.seed, opts))
        if spec.bounds:
            tasks.append(Task(spec.family, params, M, spec.variant, "bounds", "all", spec.bound_time_limit,
                              spec.workers, spec.seed))
        for name in spec.algorithm_names():
            tasks.append(Task(spec.family, params, M, spec.variant, "algorithm", name))
    return tasks


@dataclass(frozen=True)
class Study:
    """The rows of one study, with the counts of computed, cached and failed tasks."""

    spec: StudySpec
    rows: tuple
    computed: int = 0
    cached: int = 0
    failed: tuple = ()
    wall_s: float = 0.0
    notes: tuple = ()

    @property
    def violated(self) -> list:
        """``(M, verdict)`` of every ``violated`` verdict."""
        return [(row.M, v) for row in self.rows for v in row.verdicts if v.kind == "violated"]

    def records(self) -> list[dict]:
        """One flat record per value: (M, kind, method) with its value, bound, status and time limit.

        The tidy form a data-frame library wants: ``kind`` is ``exact``,
        ``bound``, ``algorithm`` or ``formula``.
        """
        out = []
        for row in self.rows:
            base = {"family": row.family, "params": dict(row.params), "variant": row.variant, "M": row.M}
            for kind, results in (("exact", row.exact), ("bound", row.bounds), ("algorithm", row.algorithms)):
                for method, r in results.items():
                    out.append({**base, "kind": kind, "method": method, "value": r.value, "bound": r.bound,
                                "status": r.status, "proven": r.proven, "time_limit": r.time_limit})
            for f in row.formulas:
                out.append({**base, "kind": "formula", "method": f.name, "value": f.value, "bound": None,
                            "status": "APPLIES" if f.applies else "OUTSIDE_REGIME",
                            "proven": f.constants != "asymptotic", "time_limit": None})
        return out

    def to_dataframe(self):
        """:meth:`records` as a pandas DataFrame (pandas is optional: ``pip install pandas``)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("to_dataframe needs pandas: pip install 'spartition[dataframe]'") from exc
        return pd.DataFrame.from_records(self.records())

    def sandwich(self) -> list:
        """Per M, the best proven lower bound and the cheapest replayed schedule of the rows
        (:func:`spartition.study.sandwich.row_sandwich`)."""
        from spartition.study.sandwich import row_sandwich

        return [row_sandwich(r) for r in self.rows]

    def to_dict(self) -> dict:
        return {"spec": self.spec.to_dict(), "rows": [r.to_dict() for r in self.rows], "computed": self.computed,
                "cached": self.cached, "failed": list(self.failed), "wall_s": round(self.wall_s, 2),
                "notes": list(self.notes), "sandwich": [s.to_dict() for s in self.sandwich()]}


@contextmanager
def sigint_watch():
    """Notice a Ctrl-C that a handler swallowed: yields ``seen()``, true if SIGINT arrived inside the block.

    CP-SAT searches stop cleanly on Ctrl-C and return a shortened, honest
    result without raising; such a result must not be stored as if it had
    run its whole time limit. The signal module's wakeup file descriptor
    records every signal whatever Python handler runs, so the caller can
    drop the result and stop. Outside the main thread nothing is watched.
    """
    import signal
    import socket
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    r, w = socket.socketpair()
    r.setblocking(False)
    w.setblocking(False)
    seen = []
    try:
        old = signal.set_wakeup_fd(w.fileno(), warn_on_full_buffer=False)
    except (ValueError, OSError):  # pragma: no cover - no signal support here
        r.close()
        w.close()
        yield lambda: False
        return

    def check():
        try:
            while True:
                data = r.recv(4096)
                if not data:
                    break
                seen.extend(data)
        except (BlockingIOError, OSError):
            pass
        return int(signal.SIGINT) in seen

    try:
        yield check
    finally:
        check()
        signal.set_wakeup_fd(old)
        r.close()
        w.close()


def _serial_map(tasks):
    for t in tasks:
        with sigint_watch() as interrupted:
            try:
                rows, exc = run_task(t), None
            except Exception as e:  # a failed task is reported, never silently dropped
                rows, exc = None, e
        if interrupted():
            raise KeyboardInterrupt
        yield t, rows, exc


def compare(spec: StudySpec, store=None, mapper=None, refresh: bool = False, progress=None) -> Study:
    """Run a study: compute what the store lacks, then assemble one row per M.

    Parameters
    ----------
    spec : StudySpec
    store : ResultStore or None
        Cached rows are reused (a row answers a request if it is proven or
        ran with at least the requested time limit) and new ones written as
        soon as each task finishes.
    mapper : callable or None
        ``mapper(tasks) -> iterable of (task, rows or None, exception or None)``
        in completion order (:mod:`spartition.study.sweep` executors); default
        in-process.
    refresh : bool
        Recompute even cached rows.
    progress : callable or None
        ``progress(event, count)``: ``("total", number of tasks)`` first, then
        ``("computed" | "cached" | "failed", 1)`` per task.

    Examples
    --------
    >>> s = compare(StudySpec("chain", {"n": 3}, Ms=(2,), exact=("brute",), bounds=False))
    >>> [(r.M, r.optimum, r.algorithms["greedy"].value) for r in s.rows]
    [(2, 2.0, 2.0)]
    """
    t0 = time.perf_counter()
    h = family_dag_hash(spec.family, spec.params)
    tasks = plan_tasks(spec)
    if progress:
        progress("total", len(tasks))
    found: dict = {}
    todo = []
    cached = 0
    for t in tasks:
        got = None if refresh else stored_rows(store, [(k, t.effective_limit(k.method)) for k in t.keys(h)])
        if got is not None:
            for g in got:
                found[(g.key.M, g.key.method)] = g
            cached += 1
            if progress:
                progress("cached", 1)
        else:
            todo.append(t)
    failed = []
    computed = 0
    results = (mapper or _serial_map)(todo)
    try:
        for t, rows, exc in results:
            if exc is not None:
                failed.append(f"{t.label()}: " + (exc if isinstance(exc, str) else f"{type(exc).__name__}: {exc}"))
                if progress:
                    progress("failed", 1)
                continue
            for r in rows:
                if store is not None:
                    store.put(r)
                found[(r.key.M, r.key.method)] = r
            computed += 1
            if progress:
                progress("computed", 1)
    finally:
        close = getattr(results, "close", None)
        if close is not None:
            close()  # a pool stops now on Ctrl-C, not when the generator is collected
    notes = [f"M = {r.key.M}: {r.key.method} skipped: {r.record.get('error', 'refused')}"
              for r in sorted(found.values(), key=lambda r: (r.key.M, r.key.method)) if r.status == SKIPPED]
    rows = []
    for M in spec.memories():
        results = [r for (m, _), r in found.items() if m == M]
        missing = [f"{t.kind}:{t.name}" for t in tasks if t.M == M and any((M, k) not in found for k in t.methods())]
        rows.append(assemble_row(spec.family, spec.params, M, spec.variant, results, h, missing))
    return Study(spec, tuple(rows), computed, cached, tuple(failed), time.perf_counter() - t0, tuple(notes))


def study_file(path, Ms=None, store=None, **settings) -> Study:
    """Study a DAG file of one's own over memories ``Ms``: ``compare(StudySpec.from_file(...))``.

    Parameters
    ----------
    path : str or path-like
        A DAG file: node-link JSON, HyperDAG or DOT (``"output": true`` marks an
        output beyond the sinks).
    Ms : sequence of int, optional
        The memories; default the whole interesting range.
    store : ResultStore, optional
        Where results are cached; default none (everything computed afresh).
    **settings
        :class:`StudySpec` fields, e.g. ``variant="recompute"``, ``time_limit=10``.

    Returns
    -------
    Study
        One row per M (the exact optimum with its status, the lower bounds, the
        greedy schedule's I/O) and ``Study.sandwich()``.

    Examples
    --------
    >>> import os, tempfile
    >>> from spartition.core.dag import save_dag
    >>> from spartition.families.classic.dag import chain
    >>> path = os.path.join(tempfile.mkdtemp(), "c.json")
    >>> save_dag(chain(3), path)
    >>> s = study_file(path, [2], exact=("brute",), bounds=False)
    >>> [(r.M, r.optimum, r.algorithms["greedy"].value) for r in s.rows]
    [(2, 2.0, 2.0)]
    """
    return compare(StudySpec.from_file(path, Ms, **settings), store=store)


def _preference(r: StoredResult):
    # an unproven row without a known limit ranks below any limited run (NULL is not "no limit")
    tl = r.time_limit if isinstance(r.time_limit, (int, float)) and math.isfinite(r.time_limit) else -math.inf
    return (r.proven, tl, r.created)


def rows_from_store(store, family: str | None = None) -> list:
    """Every stored result as study rows: a list of ``(family, params, variant, [StudyRow per M])``.

    Where several rows answer one method (other solver parameters or
    versions), the proven one, else the one with the longest time limit,
    else the newest is shown.
    """
    import json

    best: dict = {}
    for r in store.rows(family=family):
        if r.family is None:
            continue
        group = (r.family, canonical_json(r.family_params or {}), r.key.variant)
        slot = (r.key.M, r.key.method)
        cur = best.setdefault(group, {}).get(slot)
        if cur is None or _preference(r) > _preference(cur):
            best[group][slot] = r
    out = []
    for (fam, pj, variant), slots in sorted(best.items()):
        params = json.loads(pj)
        rows = []
        for M in sorted({m for m, _ in slots}):
            results = [r for (m, _), r in slots.items() if m == M]
            rows.append(assemble_row(fam, params, M, variant, results, results[0].key.dag_hash))
        out.append((fam, params, variant, rows))
    return out
