"""The ``spartition`` command line: a thin layer over the library.

Exit status, uniform across commands:

* 0 success;
* 1 a checked object is invalid: a schedule, a certificate, a claim that
  fails, a ``violated`` verdict (:class:`CheckFailed`);
* 2 bad input or usage: an unreadable or malformed file, an unknown name, a
  flag out of range, an infeasible M, a DAG above the size limit, a
  certificate whose time limit ran out (nothing written);
* 3 an internal error (a bug: please report it; ``SPARTITION_DEBUG=1``
  prints the traceback);
* 130 interrupted (Ctrl-C).

Every command takes ``--json`` for machine-readable output; with it, every
exit path prints exactly one JSON object on stdout, errors as
``{"error": message, "kind": exception name}``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
import time

from spartition.cli.common import EXIT_CHECK_FAILED, EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_USAGE, CheckFailed
from spartition.errors import SpartitionError, UsageError

# Nothing heavier than the above at module level: this module is the console script's entry point, imported
# before main() sets the Ctrl-C handler; the registry (importlib.metadata's entry points, then every command
# module) loads in parser(), under the handler.

__all__ = ["main", "parser"]

#: Set to 1 to get the traceback of an internal error.
DEBUG_ENV = "SPARTITION_DEBUG"

# Each module defines register(subparsers); commands live next to the concept they expose.

class _UsageExit(UsageError):
    """An argparse usage error, carrying the (sub)command's name and usage (kept for callers; not printed)."""

    def __init__(self, prog: str, message: str, usage: str):
        super().__init__(f"{prog}: {message}")
        self.prog, self.message, self.usage = prog, message, usage


class _Parser(argparse.ArgumentParser):
    # argparse prints and exits on a usage error; raising instead lets main()
    # honour --json and the exit-status convention (subparsers inherit the class).
    def error(self, message):
        raise _UsageExit(self.prog, message, self.format_usage())


def parser() -> argparse.ArgumentParser:
    """The ``spartition`` argument parser with every command registered."""
    from spartition import __version__
    from spartition.core.registry import COMMANDS

    p = _Parser(
        prog="spartition",
        description="Exact red-blue pebbling I/O, S-partition lower bounds and published bounds, side by side.",
        epilog="Exit status: 0 success, 1 a checked object is invalid, 2 bad input or usage, "
        f"3 internal error ({DEBUG_ENV}=1 shows the traceback), 130 interrupted.",
    )
    p.add_argument("--version", action="version", version=f"spartition {__version__}")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:  # each a spartition.commands entry point: register(subparsers)
        COMMANDS[name](sub)
    return p


# --------------------------------------------------------------------------- main


def _report(wants_json: bool, message: str, kind: str, prefix: str = "error: ") -> None:
    """The error of every failing exit path: a JSON object on stdout with --json, one line on stderr."""
    if wants_json:
        print(json.dumps({"error": message, "kind": kind}))
    print(f"spartition: {prefix}{message}", file=sys.stderr)


def _message(exc: BaseException) -> str:
    # an exception without text is no message: say at least what it was
    if isinstance(exc, OSError) and exc.filename is not None and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    text = str(exc).strip()
    return text if text else f"{type(exc).__name__} (no message)"


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


class _Sigint:
    """Python's Ctrl-C handler that also remembers the signal.

    A Ctrl-C that lands in a library (an extension module being imported,
    say) can surface as some other exception ("initialization failed"); the
    command was still interrupted, and exits 130, not 3.
    """

    def __init__(self):
        self.seen = False
        self.previous = None

    def __call__(self, signum, frame):
        self.seen = True
        raise KeyboardInterrupt

    def __enter__(self):
        # only in the main thread, and never where Ctrl-C is ignored (a background job)
        if threading.current_thread() is threading.main_thread() and \
                signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            self.previous = signal.signal(signal.SIGINT, self)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
        return False


def main(argv=None) -> int:
    """Run the command line; return the exit status (see the module docstring)."""
    with _Sigint() as sigint:
        return _main(argv, sigint)


def _main(argv, sigint: _Sigint) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    wants_json = "--json" in argv
    try:
        try:
            args = parser().parse_args(argv)
            args.started = time.monotonic()  # --time-limit counts from here (common.time_left)
        except SystemExit as exc:  # --help, --version
            return exc.code if isinstance(exc.code, int) else 0
        except _UsageExit as exc:
            if wants_json:
                print(json.dumps({"error": str(exc), "kind": "UsageError"}))
            # one line and where to look, not argparse's whole usage block (dozens of lines for solve)
            print(f"{exc.prog}: error: {exc.message} (see '{exc.prog} --help')", file=sys.stderr)
            return EXIT_USAGE
        wants_json = bool(getattr(args, "json", False))
        return args.func(args) or 0
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except KeyboardInterrupt:
        _report(wants_json, "interrupted", "KeyboardInterrupt", prefix="")
        return EXIT_INTERRUPTED
    except CheckFailed as exc:
        if wants_json:
            payload = exc.payload if exc.payload is not None else {"error": str(exc), "kind": "CheckFailed"}
            print(json.dumps(payload, indent=2, default=str))
        print(f"spartition: {exc}", file=sys.stderr)
        return EXIT_CHECK_FAILED
    except (SpartitionError, ValueError, OSError) as exc:
        _report(wants_json, _message(exc), type(exc).__name__)
        return EXIT_USAGE
    except MemoryError:
        _report(wants_json, "out of memory (try a smaller DAG or instance)", "MemoryError")
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - the last resort: one line, not a traceback
        if sigint.seen:  # e.g. Ctrl-C during an extension's import: "initialization failed"
            _report(wants_json, "interrupted", "KeyboardInterrupt", prefix="")
            return EXIT_INTERRUPTED
        if _debug():
            import traceback

            traceback.print_exc()
        hint = "" if _debug() else f" (set {DEBUG_ENV}=1 for the traceback)"
        first = _message(exc).splitlines()[0]  # one line, whatever the library's message
        _report(wants_json, f"{type(exc).__name__}: {first}{hint}", "InternalError",
                prefix="internal error, please report: ")
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
