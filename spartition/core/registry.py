"""Registries of DAG families and schedule algorithms, found through entry points.

The engine never imports a family module directly: families register under
the entry-point group ``spartition.families`` (name -> builder function) and
schedule generators under ``spartition.algorithms`` (name -> generator), so a
user's package can add its own without touching spartition.
"""

from __future__ import annotations

import inspect
import numbers
import re
from functools import cache
from importlib.metadata import entry_points

from spartition.errors import DAGTooLarge, InvalidDAG, ParameterError, UnknownFamily

__all__ = [
    "DEFAULT_MAX_NODES",
    "algorithm",
    "algorithms",
    "build",
    "check_params",
    "family",
    "family_names",
    "family_node_count",
    "family_params",
    "parse_params",
    "rebuild",
    "registered",
]

FAMILY_GROUP = "spartition.families"
ALGORITHM_GROUP = "spartition.algorithms"

#: Largest DAG :func:`build` makes unless told otherwise (``max_nodes``, ``--max-nodes``).
#: Schedules replay at this scale (attention n=128, d=16 has 1.07 million nodes) in
#: seconds; beyond it a networkx build alone takes most of a minute and gigabytes.
DEFAULT_MAX_NODES = 2_000_000


@cache
def _group(group: str) -> dict:
    return {ep.name: ep for ep in entry_points(group=group)}


def registered(group: str) -> dict:
    """Every object registered under the entry-point group ``group``, name -> loaded object, sorted by name.

    The generic lookup behind plug-in groups other than families and
    algorithms (e.g. ``spartition.formulas``).

    Examples
    --------
    >>> "fft" in registered("spartition.families")
    True
    """
    eps = _group(group)
    return {name: eps[name].load() for name in sorted(eps)}


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
    if not isinstance(name, str) or name not in eps:
        raise UnknownFamily(f"unknown DAG family {name!r}; known: {', '.join(sorted(eps))}")
    return eps[name].load()


def algorithms() -> dict:
    """Every registered schedule generator, name -> function, sorted by name."""
    eps = _group(ALGORITHM_GROUP)
    return {name: eps[name].load() for name in sorted(eps)}


def algorithm(name: str):
    """The registered schedule generator ``name``.

    Raises
    ------
    UnknownFamily
        If no algorithm of that name is registered (the message lists them).
    """
    eps = _group(ALGORITHM_GROUP)
    if name not in eps:
        raise UnknownFamily(f"unknown algorithm {name!r}; known: {', '.join(sorted(eps))}")
    return eps[name].load()


#: How a parameter's kind is named in messages, by the type of its default.
_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _kind(default):
    for kind in (bool, int, float, str):  # bool first: it is an int
        if isinstance(default, kind):
            return kind
    return None


def _convert(text: str, default, name: str, fname: str):
    kind = _kind(default)
    if kind is bool:
        if text.lower() in ("1", "true", "yes", "on"):
            return True
        if text.lower() in ("0", "false", "no", "off"):
            return False
    elif kind is int:
        if re.fullmatch(r"\s*[+-]?[0-9]+\s*", text):  # int() would also read "1_0" as 10
            return int(text)
    elif kind is float:
        try:
            value = float(text)
        except ValueError:
            value = None
        if value is not None and "_" not in text:
            return value
    else:
        return text
    raise ParameterError(f"parameter {name} of {fname} must be {_KIND_NAMES[kind]}, got {text!r}")


def _check_value(value, default, name: str, fname: str):
    """``value`` if its type fits the parameter's default (ints pass as floats), else ParameterError."""
    kind = _kind(default)
    ok = (
        kind is None
        or (kind is bool and isinstance(value, bool))
        or (kind is int and isinstance(value, numbers.Integral) and not isinstance(value, bool))
        or (kind is float and isinstance(value, numbers.Real) and not isinstance(value, bool))
        or (kind is str and isinstance(value, str))
    )
    if not ok:
        raise ParameterError(f"parameter {name} of {fname} must be {_KIND_NAMES[kind]}, got {value!r}")
    return int(value) if kind is int else value


def _parameters(builder) -> dict:
    return dict(inspect.signature(builder).parameters)


def _unknown(key, sig, fname):
    known = ", ".join(sig) or "none"
    return UnknownFamily(f"{fname} has no parameter {key!r}; parameters: {known}")


def parse_params(builder, pairs, fname: str = "family") -> dict:
    """Turn ``["n=4", "d=2"]`` into keyword arguments typed like the builder's defaults.

    Raises
    ------
    UnknownFamily
        On an unknown parameter.
    ParameterError
        On a pair without ``=``, a parameter given twice, or a value of the wrong type.

    Examples
    --------
    >>> parse_params(family("fft"), ["k=abc"], "fft")
    Traceback (most recent call last):
    ...
    spartition.errors.ParameterError: parameter k of fft must be an integer, got 'abc'
    """
    sig = _parameters(builder)
    params = {}
    for pair in pairs:
        if not isinstance(pair, str) or "=" not in pair:
            raise ParameterError(f"expected key=value, got {pair!r}")
        key, value = pair.split("=", 1)
        if key not in sig:
            raise _unknown(key, sig, fname)
        if key in params:
            raise ParameterError(f"parameter {key} of {fname} is given twice")
        default = sig[key].default
        params[key] = _convert(value, None if default is inspect.Parameter.empty else default, key, fname)
    return params


def check_params(builder, params: dict, fname: str = "family") -> dict:
    """Keyword parameters (e.g. read from JSON) checked against the builder's: known names, fitting types.

    Returns
    -------
    dict
        ``params`` (integers normalised to ``int``).

    Raises
    ------
    UnknownFamily
        On an unknown parameter (the message lists the family's).
    ParameterError
        On a value of the wrong type.
    """
    sig = _parameters(builder)
    out = {}
    for key, value in params.items():
        if key not in sig:
            raise _unknown(key, sig, fname)
        default = sig[key].default
        out[key] = _check_value(value, None if default is inspect.Parameter.empty else default, key, fname)
    return out


def family_node_count(name: str, **params) -> int | None:
    """The node count of family ``name`` at ``params``, computed without building, or None.

    A family makes its size known by giving its builder a ``node_count``
    attribute: a function of every builder parameter by keyword (the
    registry fills in the defaults) returning the exact count or, where that
    is as costly as the build, a close estimate. Families without one return
    None.

    Examples
    --------
    >>> family_node_count("fft", k=40)
    45079976738816
    """
    builder = family(name)
    counter = getattr(builder, "node_count", None)
    if counter is None:
        return None
    kwargs = check_params(builder, params, name)
    full = {k: p.default for k, p in _parameters(builder).items() if p.default is not inspect.Parameter.empty}
    full.update(kwargs)
    return int(counter(**full))


def build(name: str, pairs=(), *, max_nodes: int | None = DEFAULT_MAX_NODES, **params):
    """Build family ``name`` from ``key=value`` strings and/or keyword parameters.

    Parameters
    ----------
    name : str
        Registered family.
    pairs : iterable of str
        ``key=value`` strings, typed like the builder's defaults.
    max_nodes : int or None
        Refuse, before building, a DAG whose computed node count exceeds
        this (None: no limit). Families that cannot count are built as is.
    **params
        Further keyword parameters (checked for name and type).

    Raises
    ------
    UnknownFamily
        On an unknown family or parameter.
    ParameterError
        On a value of the wrong type.
    DAGTooLarge
        If the DAG would have more than ``max_nodes`` nodes.

    Examples
    --------
    >>> build("matmul", ["a=1", "b=1", "c=1"]).number_of_nodes()
    3
    >>> build("fft", ["k=40"])
    Traceback (most recent call last):
    ...
    spartition.errors.DAGTooLarge: fft k=40 would have 45,079,976,738,816 nodes, more than the limit of 2,000,000 (raise it with --max-nodes / max_nodes)
    """
    builder = family(name)
    kwargs = parse_params(builder, pairs, name)
    kwargs.update(check_params(builder, params, name))
    if max_nodes is not None:
        count = family_node_count(name, **kwargs)
        if count is not None and count > max_nodes:
            shown = " ".join(f"{k}={v}" for k, v in kwargs.items())
            raise DAGTooLarge(
                f"{name} {shown} would have {count:,} nodes, more than the limit of {max_nodes:,} "
                "(raise it with --max-nodes / max_nodes)"
            )
    return builder(**kwargs)


def family_params(G, where: str = "the DAG") -> dict:
    """The ``params`` graph attribute of a DAG that names a registered ``family``, checked.

    Schedule generators and closed forms read these parameters, so they must
    be an object of the family's parameters with fitting types, and (when the
    family can count) describe a DAG of as many nodes as ``G`` has. Missing
    parameters are completed with the builder's defaults. A DAG without a
    family, or of an unregistered family, returns its params unchecked.

    Raises
    ------
    InvalidDAG
        Naming ``where``, when the parameters are missing, not an object, or
        do not fit the family or the DAG.
    """
    name = G.graph.get("family")
    params = G.graph.get("params")
    if not isinstance(name, str) or name not in _group(FAMILY_GROUP):
        return params if isinstance(params, dict) else {}
    if not isinstance(params, dict):
        raise InvalidDAG(f"{where}: graph.params of a {name} DAG must be an object, got {params!r}")
    builder = family(name)
    try:
        checked = check_params(builder, params, name)
        count = family_node_count(name, **checked)
    except (UnknownFamily, ValueError) as exc:
        raise InvalidDAG(f"{where}: graph.params do not fit family {name}: {exc}") from None
    if count is not None and count != G.number_of_nodes():
        if not params:
            raise InvalidDAG(
                f"{where}: names family {name} but its graph.params is missing or empty (the defaults "
                f"describe {count} nodes, the DAG has {G.number_of_nodes()})"
            )
        raise InvalidDAG(
            f"{where}: graph.params {params} of family {name} describe {count} nodes, "
            f"the DAG has {G.number_of_nodes()}"
        )
    full = {k: p.default for k, p in _parameters(builder).items() if p.default is not inspect.Parameter.empty}
    full.update(checked)
    return full


def rebuild(G, max_nodes: int | None = DEFAULT_MAX_NODES):
    """Build again the DAG that ``G`` says built it (graph attributes ``family``, ``params``)."""
    return build(G.graph["family"], max_nodes=max_nodes, **G.graph.get("params", {}))
