"""DAG file formats besides node-link JSON: HyperDAG (:mod:`.hyperdag`) and Graphviz DOT (:mod:`.dot`).

:func:`spartition.core.dag.load_dag` and :func:`~spartition.core.dag.save_dag`
pick the format by extension or by an explicit ``format``; the modules here do
the reading and writing and never import :mod:`spartition.core.dag` (which
imports them), so the default ``op`` labels and the final validation are
applied there, once for every format.
"""

from __future__ import annotations

from importlib import import_module

from spartition.errors import UsageError

__all__ = ["MissingExtra", "require_extra"]


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
