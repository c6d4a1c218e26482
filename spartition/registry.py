"""Registries of DAG families and schedule algorithms, found through entry points.

The engine never imports a family module directly: families register under
the entry-point group ``spartition.families`` (name -> builder function) and
schedule generators under ``spartition.algorithms`` (name -> generator), so a
user's package can add its own without touching spartition.
"""

from __future__ import annotations

import inspect
from functools import cache
from importlib.metadata import entry_points

from spartition.errors import UnknownFamily

__all__ = ["algorithms", "build", "family", "family_names", "parse_params", "rebuild"]

FAMILY_GROUP = "spartition.families"
ALGORITHM_GROUP = "spartition.algorithms"


@cache
def _group(group: str) -> dict:
    return {ep.name: ep for ep in entry_points(group=group)}


def family_names() -> list[str]:
    """Names of every registered DAG family, sorted."""
    return sorted(_group(FAMILY_GROUP))


def family(name: str):
    """The builder function of family ``name``.

    Raises
    ------
    UnknownFamily
        If no family of that name is registered.
    """
    eps = _group(FAMILY_GROUP)
    if name not in eps:
        raise UnknownFamily(f"unknown DAG family {name!r}; known: {', '.join(sorted(eps))}")
    return eps[name].load()


def algorithms() -> dict:
    """Every registered schedule generator, name -> function, sorted by name."""
    eps = _group(ALGORITHM_GROUP)
    return {name: eps[name].load() for name in sorted(eps)}


def _convert(text: str, default, name: str, fname: str):
    if isinstance(default, bool):
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
        raise UnknownFamily(f"parameter {name!r} of {fname} must be true or false, got {text!r}")
    for kind in (int, float):
        if isinstance(default, kind):
            try:
                return kind(text)
            except ValueError:
                raise UnknownFamily(f"parameter {name!r} of {fname} must be {kind.__name__}, got {text!r}") from None
    return text


def parse_params(builder, pairs, fname: str = "family") -> dict:
    """Turn ``["n=4", "d=2"]`` into keyword arguments typed like the builder's defaults.

    Raises
    ------
    UnknownFamily
        On a pair without ``=``, an unknown parameter, or a value of the wrong type.
    """
    sig = inspect.signature(builder)
    params = {}
    for pair in pairs:
        if "=" not in pair:
            raise UnknownFamily(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if key not in sig.parameters:
            known = ", ".join(sig.parameters)
            raise UnknownFamily(f"{fname} has no parameter {key!r}; parameters: {known}")
        default = sig.parameters[key].default
        params[key] = _convert(value, None if default is inspect.Parameter.empty else default, key, fname)
    return params


def build(name: str, pairs=(), **params):
    """Build family ``name`` from ``key=value`` strings and/or keyword parameters.

    Examples
    --------
    >>> build("matmul", ["a=1", "b=1", "c=1"]).number_of_nodes()
    3
    """
    builder = family(name)
    kwargs = parse_params(builder, pairs, name)
    kwargs.update(params)
    return builder(**kwargs)


def rebuild(G):
    """Build again the DAG that ``G`` says built it (graph attributes ``family``, ``params``)."""
    return build(G.graph["family"], **G.graph.get("params", {}))
