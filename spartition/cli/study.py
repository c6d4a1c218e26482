"""Study commands: compare, sweep, report, regress."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from spartition.cli.common import CheckFailed, add_variant_arg, decimal_int, is_dag_file, memories, refuse_overwrite
from spartition.settings import GAMES

__all__ = ["register"]

#: The exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it).
EXIT_INTERRUPTED = 130


def _seconds(flag: str):
    """An argparse type: a positive finite number of seconds, the error naming ``flag``."""

    def convert(text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive number of seconds, got {text!r}") from None
        if not math.isfinite(value) or value <= 0:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive number of seconds, got {text}")
        return value

    return convert


def _positive_int(flag: str):
    """An argparse type: an integer >= 1, the error naming ``flag``."""

    def convert(text):
        value = decimal_int(text)
        if value is None:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {text!r}")
        if value < 1:
            raise argparse.ArgumentTypeError(f"{flag} must be a positive integer, got {value}")
        return value

    return convert


def _store_path(text):
    if not text.strip():
        raise argparse.ArgumentTypeError("--store needs a file name, got an empty string "
                                         "(omit --store for the default store)")
    return text


def _add_store(p) -> None:
    p.add_argument("--store", metavar="PATH", type=_store_path,
                   help="results database (default: the user's data directory, or $SPARTITION_STORE)")


def _add_format(p) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print JSON")
    g.add_argument("--csv", action="store_true", help="print CSV")
    g.add_argument("--markdown", action="store_true", help="print Markdown tables")


def _fmt(args) -> str:
    return "json" if args.json else "csv" if args.csv else "markdown" if args.markdown else "text"


def _name_list(text: str, flag: str, valid) -> tuple:
    """Comma-separated names, each one of ``valid``; ValueError naming ``flag`` and listing them."""
    from spartition.errors import UnknownFamily

    names = tuple(x.strip() for x in text.split(",") if x.strip())
    for x in names:
        if x not in valid:
            raise UnknownFamily(f"{flag}: unknown name {x!r}; valid: {', '.join(valid)}")
    return names


def register(sub) -> None:
    """Add compare, sweep, report and regress to the ``spartition`` parser."""
    p = sub.add_parser("compare", help="optimum, lower bounds, formulas and algorithms side by side, per M")
    p.add_argument("family", nargs="?", help="DAG family, or a DAG file (.json, .hdag, .dot; studied as the family "
                   "'file', keyed by its path and content hash); omitted: the built-in study")
    p.add_argument("params", nargs="*", metavar="key=value")
    p.add_argument("--M", type=memories, help="memories: '3,4,8' or '3..8' (default: the whole range)")
    add_variant_arg(p, default=None, games=GAMES,
                    note="; in the partial game the bounds are the trivial one and the edge partitions' "
                         "(the vertex S-partition bounds are proven for the standard games only)")
    p.add_argument("--exact", default=None, help="exact methods, comma-separated: cpsat, brute (default cpsat)")
    p.add_argument("--algorithms", default=None, help="comma-separated algorithm names (default: all that apply)")
    p.add_argument("--no-bounds", action="store_true", help="skip the partition lower bounds")
    p.add_argument("--time-limit", type=_seconds("--time-limit"), default=None,
                   help="seconds per CP-SAT exact solve (default 60)")
    p.add_argument("--bound-time-limit", type=_seconds("--bound-time-limit"), default=None,
                   help="seconds per partition solve (default 20)")
    p.add_argument("--workers", type=_positive_int("--workers"), default=1, help="CP-SAT workers per task")
    p.add_argument("--jobs", type=_positive_int("--jobs"), default=2, help="tasks in parallel (local processes)")
    p.add_argument("--dask", metavar="ADDRESS", help="run the tasks on a Dask cluster")
    p.add_argument("--no-store", action="store_true", help="do not read or write the results store")
    p.add_argument("--refresh", action="store_true", help="recompute cached rows")
    _add_store(p)
    _add_format(p)
    p.set_defaults(func=_compare)

    p = sub.add_parser("sweep", help="run a TOML grid of studies into the results store")
    p.add_argument("grid", help="grid file (TOML)")
    p.add_argument("--jobs", type=_positive_int("--jobs"), default=2,
                   help="local worker processes (1: in this process)")
    p.add_argument("--dask", metavar="ADDRESS", help="Dask scheduler address (tcp://host:8786)")
    p.add_argument("--refresh", action="store_true", help="recompute cached rows")
    p.add_argument("--progress", action=argparse_bool(), default=None, help="progress bar (default: on a terminal)")
    _add_store(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=_sweep)

    p = sub.add_parser("report", help="render the results store like compare")
    p.add_argument("--family", help="only this family")
    p.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page (tables, figures, provenance)")
    _add_store(p)
    _add_format(p)
    p.set_defaults(func=_report)

    p = sub.add_parser("regress", help="compare computed values with a golden file (exit 1 on a change)")
    p.add_argument("grid", help="grid file (TOML)")
    p.add_argument("golden", help="golden JSON file")
    p.add_argument("--update", action="store_true", help="write the golden file instead of checking it")
    p.add_argument("--jobs", type=_positive_int("--jobs"), default=1)
    _add_store(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_regress)


def argparse_bool():
    """The argparse action of a ``--flag`` / ``--no-flag`` pair."""
    import argparse

    return argparse.BooleanOptionalAction


def _open(args, readonly: bool = False):
    from spartition.study.store import open_store

    return open_store(args.store, readonly=readonly)


def _interrupted(what: str, done: int | None, args) -> int:
    """The one-line message and exit status of a command stopped by Ctrl-C."""
    from spartition.study.store import default_store_path

    where = args.store if getattr(args, "store", None) else default_store_path()
    kept = "" if done is None else f"{done} finished tasks are "
    if getattr(args, "json", False):
        # the same record as any interrupted command, with what a script needs to resume
        stored = not getattr(args, "no_store", False)
        print(json.dumps({"error": "interrupted", "kind": "KeyboardInterrupt", "command": what,
                          "finished_tasks": done, "store": str(where) if stored else None,
                          "resume": "run the same command again" if stored else None}, indent=2))
    if getattr(args, "no_store", False):
        print(f"spartition: {what} interrupted; nothing was stored (--no-store)", file=sys.stderr)
    else:
        print(f"spartition: {what} interrupted; {kept or 'finished tasks are '}kept in {where}; "
              "run the same command again to resume", file=sys.stderr)
    return EXIT_INTERRUPTED


def _compare(args):
    from dataclasses import replace

    from spartition.core.dag import dag_file
    from spartition.core.registry import algorithms, build, family, parse_params
    from spartition.study.studies import EXACT_METHODS, StudySpec, builtin_study, compare
    from spartition.study.sweep import make_executor
    from spartition.study.tables import render_rows

    if args.family is None:
        if args.params:
            raise ValueError("parameters need a family")
        spec = builtin_study()
    elif is_dag_file(args.family):
        if args.params:
            raise ValueError("a DAG file takes no parameters")
        G = dag_file(str(Path(args.family).resolve()))  # fails early on an unreadable file
        spec = StudySpec("file", dict(G.graph["params"]))
    else:
        params = parse_params(family(args.family), args.params, args.family)
        build(args.family, **params)  # fail early on bad parameters
        spec = StudySpec(args.family, params)
    changes = {}
    if args.M is not None:
        changes["Ms"] = args.M
    if args.variant:
        changes["variant"] = args.variant
    if args.exact is not None:
        changes["exact"] = _name_list(args.exact, "--exact", list(EXACT_METHODS))
    if args.algorithms is not None:
        changes["algorithms"] = _name_list(args.algorithms, "--algorithms", list(algorithms()))
    if args.no_bounds:
        changes["bounds"] = False
    for key in ("time_limit", "bound_time_limit"):
        if getattr(args, key) is not None:
            changes[key] = getattr(args, key)
    changes["workers"] = args.workers
    spec = replace(spec, **changes)
    store = None if args.no_store else _open(args)
    t0 = time.perf_counter()
    bar = _Progress("compare")
    ex = None
    try:
        ex = make_executor(args.jobs, args.dask)
        study = compare(spec, store=store, mapper=ex.map_unordered, refresh=args.refresh, progress=bar)
    except KeyboardInterrupt:
        bar.close()
        return _interrupted("compare", bar.counts["computed"], args)
    finally:
        bar.close()
        if ex is not None:
            ex.close()
        if store is not None:
            store.close()
    wall = time.perf_counter() - t0
    fmt = _fmt(args)
    if fmt == "json":
        print(json.dumps({**study.to_dict(), "wall_s": round(wall, 2)}, indent=2, default=str))
    else:
        params = " ".join(f"{k}={v}" for k, v in spec.params.items())
        title = f"{spec.family} {params}, {spec.variant}: {len(study.rows)} memories"
        notes = list(study.notes) + [f"{study.computed} tasks computed, {study.cached} cached, "
                                     f"{len(study.failed)} failed, {wall:.1f} s"]
        notes += [f"failed: {f}" for f in study.failed]
        text = render_rows(study.rows, fmt, title if fmt != "csv" else "", notes if fmt != "csv" else ())
        print(text, end="" if text.endswith("\n") else "\n")
    if study.violated:
        M, v = study.violated[0]
        print(f"spartition: violated at M = {M}: {v.message}", file=sys.stderr)
        return 1
    return 0


class _Progress:
    """A tqdm bar on stderr (only on a terminal) fed by :func:`spartition.study.studies.compare` events."""

    def __init__(self, desc):
        self.desc, self.bar, self.counts = desc, None, {"computed": 0, "cached": 0, "failed": 0}

    def __call__(self, event, n):
        from tqdm import tqdm

        if event == "total":
            self.bar = tqdm(total=n, desc=self.desc, unit="task", file=sys.stderr, disable=not sys.stderr.isatty())
            return
        self.counts[event] += n
        if self.bar is not None:
            self.bar.update(n)
            self.bar.set_postfix(done=self.counts["computed"], cached=self.counts["cached"],
                                 failed=self.counts["failed"], refresh=False)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _sweep(args):
    from spartition.study.sweep import load_grid, make_executor, run_sweep

    specs = load_grid(args.grid)
    store = _open(args)
    ex = None
    try:
        ex = make_executor(args.jobs, args.dask)
        summary = run_sweep(specs, store, ex, refresh=args.refresh, progress=args.progress)
    except KeyboardInterrupt as exc:
        s = getattr(exc, "summary", None)
        return _interrupted("sweep", None if s is None else s.computed, args)
    finally:
        if ex is not None:
            ex.close()
        store.close()
    if args.json:
        print(json.dumps(summary.to_dict(), indent=2))
    else:
        print(f"sweep: {summary.total} tasks: {summary.computed} computed, {summary.cached} cached, "
              f"{summary.failed} failed")
        for e in summary.errors:
            print(f"  failed: {e}")
    return 1 if summary.failed else 0


def _report(args):
    from spartition.study.studies import rows_from_store
    from spartition.study.tables import render_rows

    refuse_overwrite(args.html, "--html", store=_store_location(args))
    store = _open(args, readonly=True)
    try:
        groups = rows_from_store(store, family=args.family)
    finally:
        store.close()
    if args.html:
        _write_html(groups, args)
    fmt = _fmt(args)
    if fmt == "json":
        print(json.dumps({"store": str(_store_location(args)),
                          "studies": [{"family": f, "params": p, "variant": v, "rows": [r.to_dict() for r in rows]}
                                      for f, p, v, rows in groups]}, indent=2, default=str))
        return 0
    if fmt == "csv":
        print(render_rows([r for *_, rows in groups for r in rows], "csv"), end="")
        return 0
    if not groups:
        print("the store is empty")
    parts = []
    for f, p, v, rows in groups:
        params = " ".join(f"{k}={x}" for k, x in p.items())
        parts.append(render_rows(rows, fmt, f"{f} {params}, {v}"))
    print("\n\n".join(parts))
    return 0


def _store_location(args) -> str:
    from spartition.study.store import default_store_path

    return args.store or str(default_store_path())


def _write_html(groups, args) -> None:

    from spartition.study.html import render_html
    from spartition.study.store import default_store_path

    where = args.store or str(default_store_path())
    page = render_html(groups, title="spartition report" + (f": {args.family}" if args.family else ""),
                       provenance={"results store": where})
    Path(args.html).write_text(page, encoding="utf-8")


def _regress(args):
    from spartition.study.golden import read_golden, regress

    from spartition.study.sweep import load_grid

    if args.update:  # the golden file is written: it may be neither the grid nor the store
        refuse_overwrite(args.golden, "golden file", args.grid, store=_store_location(args))
    specs = load_grid(args.grid)  # a bad grid or golden file is refused before the store is opened
    if not args.update:
        read_golden(args.golden)
    store = _open(args)
    try:
        result = regress(specs, args.golden, store=store, update=args.update, jobs=args.jobs)
    except KeyboardInterrupt as exc:
        s = getattr(exc, "summary", None)
        return _interrupted("regress", None if s is None else s.computed, args)
    finally:
        store.close()
    if args.json:
        print(json.dumps(result, indent=2, default=str))
    elif args.update:
        print(f"wrote {result['values']} values to {args.golden}")
    else:
        print(f"regress: {result['values']} values checked, {len(result['changed'])} changed, "
              f"{len(result['missing'])} missing, {len(result['new'])} new")
        for c in result["changed"] + result["missing"]:
            print(f"  {c}")
    if not args.json:
        for f in result["failed"]:
            print(f"  failed: {f}")
    if result["failed"]:
        raise CheckFailed(f"{len(result['failed'])} tasks failed")
    if not args.update and (result["changed"] or result["missing"]):
        raise CheckFailed(f"{len(result['changed']) + len(result['missing'])} golden values differ")
    return 0
