"""The ``spartition claims`` command: a paper's verification report (one row per claim, then the constants)."""

from __future__ import annotations

import sys

__all__ = ["register"]


def register(sub) -> None:
    """Add the ``claims`` command to the ``spartition`` parser."""
    p = sub.add_parser(
        "claims",
        help="check a paper's claim set and print its verification report",
        description="Runs a claim set (registered under the entry-point group spartition.claims, or a .py "
        "file defining CLAIMS) and prints one row per claim: statement, source, regime, grid, informative/"
        "vacuous instances, holds/fails/undecided, the witness of a failure; then the constant interval of "
        "each asymptotic formula. Exit status 1 when a claim fails inside its regime or checks nothing, or a "
        "constant interval contradicts itself; with --strict also when no instance of a claim is decided "
        "(all undecided or skipped) or a constant study has no instance.",
    )
    p.add_argument("claimset", nargs="?", default=None,
                   help="psz, saha-ye, li, or a .py file (default: every registered set)")
    p.add_argument("--big", action="store_true", help="also the bigger grids (slow)")
    p.add_argument("--store", metavar="PATH", default=None,
                   help="results database (default: the user's data directory, or $SPARTITION_STORE)")
    p.add_argument("--strict", action="store_true",
                   help="exit 1 also for a claim no instance of which is decided (all undecided or skipped) "
                   "and a constant study with no instance (for CI)")
    p.add_argument("-x", "--fail-fast", action="store_true",
                   help="stop at the first claim that fails or checks nothing (the report holds the claims "
                   "checked so far)")
    p.add_argument("--time-limit", type=float, default=30.0, help="seconds per capacity or exact solve (default 30)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true", help="print JSON")
    g.add_argument("--markdown", action="store_true", help="print Markdown tables")
    p.set_defaults(func=_claims)


def _claims(args) -> int:
    import json

    from spartition.errors import UsageError
    from spartition.study.claimsets import (
        claimset_names, load_claimset, render_markdown, render_text, report_json, run_claimset, set_problems,
    )
    from spartition.study.store import default_store_path, open_store

    names = [args.claimset] if args.claimset else claimset_names()
    try:
        sets = [load_claimset(n) for n in names]
    except KeyError as exc:
        raise UsageError(str(exc.args[0])) from None
    store = open_store(args.store or str(default_store_path()))
    problems, out = [], []
    try:
        for cs in sets:
            rep = run_claimset(cs, store, big=args.big, fail_fast=args.fail_fast, bound_time_limit=args.time_limit,
                               time_limit=args.time_limit)
            problems += [f"{cs.name}: {m}" for m in set_problems(rep, strict=args.strict)]
            out.append(rep)
            if args.fail_fast and problems:
                break
    finally:
        store.close()
    if args.json:
        # one object on every exit path, as every command prints (was a bare list)
        print(json.dumps({"claimsets": [json.loads(report_json(r)) for r in out]}, indent=1))
    else:
        render = render_markdown if args.markdown else render_text
        print("\n\n".join(render(r) for r in out))
    sys.stdout.flush()
    for m in problems:
        print(f"spartition claims: {m}", file=sys.stderr)
    return 1 if problems else 0
