"""DAG file formats besides node-link JSON: HyperDAG (:mod:`.hyperdag`) and Graphviz DOT (:mod:`.dot`).

:func:`spartition.core.dag.load_dag` and :func:`~spartition.core.dag.save_dag`
pick the format by extension or by an explicit ``format``; the modules here do
the reading and writing and never import :mod:`spartition.core.dag` (which
imports them), so the default ``op`` labels and the final validation are
applied there, once for every format.
"""

from __future__ import annotations

import os
from importlib import import_module
from pathlib import Path

from spartition.errors import UsageError

__all__ = ["MissingExtra", "read_text", "require_extra"]


class MissingExtra(UsageError, ImportError):
    """An optional dependency is not installed; the message names the extra that installs it."""


def require_extra(module: str, extra: str, what: str):
    """Import ``module``, or raise :class:`MissingExtra` naming ``pip install 'spartition[extra]'``.

    Examples
    --------
    >>> require_extra("json", "none", "JSON").__name__
    'json'
    >>> require_extra("no_such_module_xyz", "plot", "drawing")
    Traceback (most recent call last):
    ...
    spartition.core.formats.MissingExtra: drawing needs no_such_module_xyz, which is not installed: pip install 'spartition[plot]'
    """
    try:
        return import_module(module)
    except ImportError:
        raise MissingExtra(f"{what} needs {module}, which is not installed: "
                           f"pip install 'spartition[{extra}]'") from None


def read_text(path, error: type[Exception], what: str) -> str:
    """The UTF-8 text of the file ``path``; a missing or unreadable file, a device or bad UTF-8 raises ``error``.

    A character or block device is refused before it is read: ``/dev/zero``
    never ends. Pipes are read (``<(command)``, ``/dev/stdin``).

    Examples
    --------
    >>> from spartition.errors import InvalidDAG
    >>> read_text("/dev/zero", InvalidDAG, "DAG")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: DAG file /dev/zero is a device, not a file
    """
    import stat

    try:
        mode = os.stat(path).st_mode
    except OSError:
        mode = 0  # the read below names the reason
    except ValueError as exc:  # e.g. a NUL byte in the name
        raise error(f"cannot read {what} file {path!r}: {exc}") from None
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        raise error(f"{what} file {path} is a device, not a file")
    try:
        return Path(path).read_text()
    except OSError as exc:
        raise error(f"cannot read {what} file {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise error(f"cannot read {what} file {path}: not UTF-8 text (byte {exc.start})") from None
