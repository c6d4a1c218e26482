"""Golden files: the proven values of a grid, recorded once and compared on every run.

:func:`golden_values` computes the proven, informative values of a grid
(through the results store); :func:`regress` compares them with a golden
JSON file (or rewrites it) and reports every change; :func:`read_golden`
refuses a malformed file before anything is computed.
"""

from __future__ import annotations

import json
from pathlib import Path

from spartition.study.store import canonical_json

__all__ = ["golden_source", "golden_values", "read_golden", "regress"]


def golden_source(method: str) -> str:
    """Where a golden value of ``method`` (``"exact:brute"``, ``"algorithm:greedy"``, ...) comes from.

    Examples
    --------
    >>> golden_source("exact:brute")
    "optimum proven by the exact solver 'brute'"
    """
    kind, _, name = method.partition(":")
    return {
        "exact": f"optimum proven by the exact solver {name!r}",
        "algorithm": f"I/O of the schedule of algorithm {name!r}, replayed by spartition.core.game.replay",
        "bound": f"proven lower bound {name!r} (spartition.partition.lower_bounds)",
    }.get(kind, method)


def golden_values(specs, store, jobs: int = 1) -> tuple[dict, list]:
    """The proven, informative values of a grid, and failures.

    Returns ``{"family params M variant method": {"status", "value",
    "source"}}`` (``source`` from :func:`golden_source`) and the messages of
    the tasks that failed. Time-limited, unproven rows are left out (their
    values depend on the machine), and so are values that say nothing: an
    algorithm that does not apply (no value) and a lower bound of 0, which
    every schedule meets whatever the code computes. Everything kept
    (proven optima, replayed algorithm I/O, positive proven bounds) is
    deterministic.
    """
    from spartition.study.sweep import make_executor, run_sweep

    ex = make_executor(jobs)
    try:
        summary = run_sweep(specs, store, ex, progress=False)
    finally:
        ex.close()
    out = {}
    for spec in specs:
        from spartition.study.studies import plan_tasks

        for t in plan_tasks(spec):
            for k in t.keys():
                r = store.get(k, any_limit=True)
                if r is None or not r.proven or r.value is None or (k.method.startswith("bound:") and r.value == 0):
                    continue
                label = f"{spec.family} {canonical_json(spec.params)} M={k.M} {k.variant} {k.method}"
                out[label] = {"status": r.status, "value": r.value, "source": golden_source(k.method)}
    return dict(sorted(out.items())), list(summary.errors)


def read_golden(path) -> dict:
    """A golden file: a JSON object of label -> ``{"status": str, "value": ...}``.

    Raises
    ------
    UsageError
        Naming the file, and the label whose entry is malformed.
    """
    from spartition.core.dag import read_json
    from spartition.errors import UsageError

    data = read_json(path, UsageError, "golden")
    if not isinstance(data, dict):
        raise UsageError(f"golden file {path} must be a JSON object of label -> {{status, value}}, "
                         f"got {type(data).__name__}")
    for label, entry in data.items():
        if not (isinstance(entry, dict) and isinstance(entry.get("status"), str) and "value" in entry):
            raise UsageError(f"golden file {path}: the entry of {label!r} must be an object with 'status' "
                             f"and 'value', got {entry!r:.80}")
    return data


def regress(grid, golden, store, update: bool = False, jobs: int = 1) -> dict:
    """Compare the proven values of ``grid`` (a TOML path or specs) with the ``golden`` JSON file.

    Returns ``{"values", "changed", "missing", "new", "failed"}``: messages
    for values that differ, golden values no longer computed, values not in
    the file, and tasks that failed. With ``update`` the file is (re)written.
    """
    from spartition.study.sweep import load_grid

    specs = load_grid(grid) if isinstance(grid, (str, Path)) else list(grid)
    path = Path(golden)
    old = None if update else read_golden(path)  # a bad golden file is refused before any computing
    values, failed = golden_values(specs, store, jobs)
    if update:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values, indent=1, sort_keys=True) + "\n")
        return {"values": len(values), "changed": [], "missing": [], "new": [], "failed": failed}
    changed = [f"{k}: golden {old[k]['status']} {old[k]['value']}, now {v['status']} {v['value']}"
               for k, v in values.items() if k in old and (old[k]["status"], old[k]["value"]) != (v["status"], v["value"])]
    missing = [f"{k}: golden {old[k]['status']} {old[k]['value']}, not computed now" for k in old if k not in values]
    new = [k for k in values if k not in old]
    return {"values": len(values), "changed": changed, "missing": missing, "new": new, "failed": failed}
