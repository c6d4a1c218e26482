"""The plug-in registries: one :class:`Registry` per plug-in point, fed by kernels and engine entry points.

The engine never imports a family module directly. A **kernel** -- a DAG
family or a few related ones with their schedule generators, published
formulas, claim sets, symmetry blocks and studies -- is one :class:`Kernel`
record, registered by one entry point of the group ``spartition.kernels``;
the built-in kernels are registered by spartition's own ``pyproject.toml``
exactly as a user's package would be. The engine's own plug-ins (CP-SAT
formulations, lower-bound methods, commands) keep an entry-point group each
(:data:`GROUPS`). Here: the records, the registries (a name registered twice
is an error naming both packages), and the lookups of families and
algorithms with the checks of a family's parameters.
"""

from __future__ import annotations

import inspect
import numbers
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.metadata import entry_points
from types import MappingProxyType

from spartition.errors import DAGTooLarge, InvalidDAG, ParameterError, SpartitionError, UnknownFamily

__all__ = [
    "DEFAULT_MAX_NODES",
    "GROUPS",
    "KERNEL_GROUP",
    "Family",
    "Kernel",
    "Registry",
    "ALGORITHMS",
    "BOUND_METHODS",
    "CLAIM_SETS",
    "COMMANDS",
    "FAMILIES",
    "FORMULAS",
    "FORMULATIONS",
    "KERNELS",
    "STUDIES",
    "SYMMETRY",
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
]

#: The entry-point group of :class:`Kernel` records: one entry point per kernel package.
KERNEL_GROUP = "spartition.kernels"

#: Largest DAG :func:`build` makes unless told otherwise (``max_nodes``, ``--max-nodes``).
#: Schedules replay at this scale (attention n=128, d=16 has 1.07 million nodes) in
#: seconds; beyond it a networkx build alone takes most of a minute and gigabytes.
DEFAULT_MAX_NODES = 2_000_000


@dataclass(frozen=True)
class Family:
    """A DAG family as a kernel registers it: its builder, and how many nodes it builds.

    A :class:`Kernel`'s ``families`` map a name to a builder function (with
    an optional ``node_count`` attribute) or to a :class:`Family`.

    Attributes
    ----------
    build : callable
        ``build(**params) -> networkx.DiGraph``; every parameter has a
        default, whose type is the parameter's type.
    node_count : callable or None
        ``node_count(**params) -> int``: the exact node count (or a close
        estimate), computed without building, for the size guard.
    """

    build: Callable
    node_count: Callable | None = None

    def builder(self) -> Callable:
        """``build``, with ``node_count`` as its attribute (what the family lookups return)."""
        if self.node_count is not None and getattr(self.build, "node_count", None) is None:
            self.build.node_count = self.node_count
        return self.build


def _frozen(mapping) -> Mapping:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True, kw_only=True)
class Kernel:
    """Everything one package adds to spartition, in one record behind one entry point.

    A package registers its kernel once, under :data:`KERNEL_GROUP`::

        [project.entry-points."spartition.kernels"]
        layernorm = "spartition_layernorm.plugin:KERNEL"

    and every command finds its families, algorithms, formulas and claims
    (``spartition families``, ``algorithms``, ``formulas``, ``claims``).
    Names are global: a family, algorithm, claim set, ... that two kernels
    register is an error naming both (:class:`Registry`).

    Attributes
    ----------
    name : str
        The kernel's name, the name of its entry point.
    families : mapping of str to callable or Family
        DAG families by name: a builder ``build(**params) -> networkx.DiGraph``
        (every parameter with a default) or a :class:`Family`.
    algorithms : tuple of Algorithm
        Schedule generators (:class:`~spartition.core.algorithm.Algorithm`), each named by its ``name``.
    formulas : tuple of FamilyBounds
        Published bounds (:class:`~spartition.study.formulas.FamilyBounds`), one record per family.
    claims : mapping of str to ClaimSet or callable
        Papers' claim sets by name: a :class:`~spartition.study.claimsets.ClaimSet`,
        or a function of no argument returning one, called when the set is used (a
        set whose claims look formulas up by name must be built after the kernels
        are loaded).
    symmetry : mapping of str to callable
        Family name -> ``blocks(names) -> dict`` of interchangeable node blocks.
    studies : mapping of str to StudySpec
        Studies ``spartition compare`` runs without a family (``default``: the one it runs alone).

    Examples
    --------
    >>> k = Kernel(name="tiny", families={"one": lambda n=1: None})
    >>> sorted(k.entries("families")), k.entries("algorithms")
    (['one'], {})
    """

    name: str
    families: Mapping = field(default_factory=dict)
    algorithms: tuple = ()
    formulas: tuple = ()
    claims: Mapping = field(default_factory=dict)
    symmetry: Mapping = field(default_factory=dict)
    studies: Mapping = field(default_factory=dict)

    def __post_init__(self):
        for kind in ("families", "claims", "symmetry", "studies"):
            object.__setattr__(self, kind, _frozen(getattr(self, kind)))
        for kind in ("algorithms", "formulas"):
            object.__setattr__(self, kind, tuple(getattr(self, kind)))
        for kind in KERNEL_KINDS:
            names = [name for name, _ in self._pairs(kind)]
            twice = sorted({n for n in names if names.count(n) > 1})
            if twice:
                raise SpartitionError(f"kernel {self.name!r} registers the {kind} {', '.join(twice)} twice")

    def _pairs(self, kind: str) -> list:
        if kind == "algorithms":
            return [(a.name, a) for a in self.algorithms]
        if kind == "formulas":
            return [(f.family, f) for f in self.formulas]
        return list(getattr(self, kind).items())

    def entries(self, kind: str) -> dict:
        """The kernel's plug-ins of one kind (``families``, ``algorithms``, ...), name -> object."""
        return dict(self._pairs(kind))


#: What a :class:`Kernel` holds, each a registry of its own.
KERNEL_KINDS = ("families", "algorithms", "formulas", "claims", "symmetry", "studies")

#: The engine's own plug-in points, each an entry-point group.
GROUPS = {
    "formulations": "spartition.formulations",
    "bounds": "spartition.bounds",
    "commands": "spartition.commands",
}


def _package(ep) -> str:
    dist = getattr(ep, "dist", None)
    return dist.name if dist is not None else "(unnamed)"


def _twice(kind: str, name: str, first: str, second: str) -> SpartitionError:
    return SpartitionError(f"the {kind} {name!r} is registered twice: by {first} and by {second}; "
                           "uninstall one of the packages or rename its entry")


@cache
def _group(group: str) -> dict:
    """name -> (loader, package, origin) of an entry-point group; a name registered twice is an error."""
    found: dict = {}
    for ep in entry_points(group=group):
        package = _package(ep)
        origin = f"package {package} ({ep.value})"
        if ep.name in found and found[ep.name][2] != origin:
            raise _twice(f"entry point of {group}", ep.name, found[ep.name][2], origin)
        found[ep.name] = (ep.load, package, origin)
    return found


#: The kernel being loaded, if any: a kernel module that consults a registry while it is
#: imported would otherwise recurse into loading itself.
_loading: list = []


@cache
def _kernels() -> dict:
    """name -> (Kernel, package, origin) of every installed kernel."""
    if _loading:
        raise SpartitionError(f"the kernel {_loading[-1]!r} consults the registry while it is loaded; "
                              "look plug-ins up when they are used, not when the module is imported")
    kernels = {}
    for name, (load, package, origin) in _group(KERNEL_GROUP).items():
        _loading.append(name)
        try:
            kernel = load()
        finally:
            _loading.pop()
        if not isinstance(kernel, Kernel):
            raise SpartitionError(f"the entry point {name!r} of {KERNEL_GROUP} ({origin}) is not a Kernel: {kernel!r}")
        if kernel.name != name:
            raise SpartitionError(f"the entry point {name!r} of {KERNEL_GROUP} ({origin}) holds the kernel "
                                  f"{kernel.name!r}")
        kernels[name] = (kernel, package, f"kernel {name} of {origin}")
    return kernels


@cache
def _kernel_entries(kind: str) -> dict:
    """name -> (loader, package, origin) of one kind of plug-in over every kernel; a name registered twice is an error."""
    found: dict = {}
    for kernel, package, origin in _kernels().values():
        for name, obj in kernel.entries(kind).items():
            if name in found:
                raise _twice(_KINDS[kind], name, found[name][2], origin)
            found[name] = ((lambda obj=obj: obj), package, origin)
    return found


class Registry(Mapping):
    """The plug-ins of one kind, name -> object: from the kernels, or from an entry-point group of the engine.

    Kernel plug-ins are listed by loading the kernels (their records); an
    engine group lists its names without importing anything. An object is
    loaded on first access and kept. Names come in ``first`` order (the
    built-ins whose order means something: the formulation ``auto`` tries
    first, the columns of a table), then sorted. A name registered twice
    (by two packages) is an error naming both.

    Parameters
    ----------
    source : str
        A :class:`Kernel` attribute (``families``, ``algorithms``, ...) or an
        engine entry-point group (``spartition.formulations``).
    kind : str
        What a plug-in is, for messages (``DAG family``).
    first : tuple of str
        Names listed before the others, in this order, when registered.
    check : callable, optional
        ``check(name, obj)`` raises if a loaded object is not what the registry holds.

    Examples
    --------
    >>> list(FORMULATIONS)
    ['order', 'events', 'baseline']
    >>> "fft" in FAMILIES, FAMILIES.lookup("fft").__name__
    (True, 'fft')
    """

    def __init__(self, source: str, kind: str, first: tuple = (), check: Callable | None = None):
        self.source, self.kind, self.first, self._check = source, kind, tuple(first), check
        self._loaded = {}

    def _entries(self) -> dict:
        return _kernel_entries(self.source) if self.source in KERNEL_KINDS else _group(self.source)

    def names(self) -> list[str]:
        """The registered names, ``first`` ones first, the rest sorted."""
        entries = self._entries()
        return [n for n in self.first if n in entries] + sorted(n for n in entries if n not in self.first)

    def origin(self, name: str) -> str:
        """Where ``name`` is registered: its kernel or entry point and its package (for messages)."""
        return self._entries()[name][2]

    def package(self, name: str) -> str:
        """The distribution (installed package) that registered ``name``, e.g. ``spartition``.

        Examples
        --------
        >>> FAMILIES.package("fft"), FORMULATIONS.package("order")
        ('spartition', 'spartition')
        """
        return self._entries()[name][1]

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._entries())

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name in self._entries()

    def __getitem__(self, name: str):
        if name not in self:
            raise KeyError(name)
        if name not in self._loaded:
            obj = self._entries()[name][0]()
            if self._check is not None:
                self._check(name, obj)
            self._loaded[name] = obj
        return self._loaded[name]

    def lookup(self, name: str):
        """The plug-in ``name``; :class:`~spartition.errors.UnknownFamily` listing the registered names otherwise."""
        if name not in self:
            raise UnknownFamily(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self.names()))}")
        return self[name]

    def __repr__(self) -> str:
        return f"Registry({self.source!r}: {', '.join(self.names())})"


def _as_builder(name: str, obj):
    if isinstance(obj, Family):
        return obj.builder()
    if not callable(obj):
        raise UnknownFamily(f"the family {name!r} ({FAMILIES.origin(name)}) is not a builder or Family: {obj!r}")
    return obj


def _named(name: str, obj) -> None:
    """A record registered under another name than its own is a packaging slip: refuse it, naming both."""
    own = getattr(obj, "name", name)
    if own != name:
        raise SpartitionError(f"the entry point {name!r} holds a record named {own!r}")


#: What each kind of kernel plug-in is called in messages.
_KINDS = {"families": "DAG family", "algorithms": "algorithm", "formulas": "family with formulas",
          "claims": "claim set", "symmetry": "family with symmetry blocks", "studies": "built-in study"}

#: Every installed kernel, name -> :class:`Kernel`.
KERNELS = Registry(KERNEL_GROUP, "kernel")
#: DAG families: builder functions or :class:`Family` records.
FAMILIES = Registry("families", _KINDS["families"])
#: Schedule generators: :class:`~spartition.core.algorithm.Algorithm` records.
ALGORITHMS = Registry("algorithms", _KINDS["algorithms"])
#: Published bounds of a family: :class:`~spartition.study.formulas.FamilyBounds` records, by family.
FORMULAS = Registry("formulas", _KINDS["formulas"])
#: Symmetry blocks of a family: ``blocks(G) -> list``, by family.
SYMMETRY = Registry("symmetry", _KINDS["symmetry"])
#: Papers' claim sets: :class:`~spartition.study.claimsets.ClaimSet` records (or functions returning one).
CLAIM_SETS = Registry("claims", _KINDS["claims"])
#: CP-SAT models of the game: :class:`~spartition.exact.formulations.Formulation` records, in the order
#: ``formulation="auto"`` consults them.
FORMULATIONS = Registry(GROUPS["formulations"], "formulation", first=("order", "events", "baseline"), check=_named)
#: I/O lower-bound methods: :class:`~spartition.partition.lower_bounds.BoundMethod` records, in the order
#: they are computed and shown.
BOUND_METHODS = Registry(GROUPS["bounds"], "lower-bound method",
                         first=("trivial", "pair-sums", "hong-kung", "x-partition", "capacity"), check=_named)
#: Studies ``spartition compare`` runs without a family: :class:`~spartition.study.studies.StudySpec` records
#: (``default``: the one it runs).
STUDIES = Registry("studies", _KINDS["studies"])
#: Commands of the ``spartition`` program: ``register(subparsers)`` functions, in the order of its help.
COMMANDS = Registry(GROUPS["commands"], "command", first=(
    "dags", "game", "exact", "partition", "formulas", "algorithms", "study", "sandwich", "claims", "draw", "certify"))


def family_names() -> list[str]:
    """Names of every registered DAG family, sorted."""
    return FAMILIES.names()


def family(name: str):
    """The builder function of family ``name`` (a :class:`Family` record's ``build``).

    Raises
    ------
    UnknownFamily
        If no family of that name is registered.
    """
    return _as_builder(name, FAMILIES.lookup(name))


def algorithms() -> dict:
    """Every registered schedule generator, name -> :class:`~spartition.core.algorithm.Algorithm`, sorted by name."""
    return {name: ALGORITHMS[name] for name in ALGORITHMS}


def algorithm(name: str):
    """The registered schedule generator ``name``.

    Raises
    ------
    UnknownFamily
        If no algorithm of that name is registered (the message lists them).
    """
    return ALGORITHMS.lookup(name)


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
    if name not in FAMILIES:
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
