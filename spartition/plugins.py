"""Everything a package needs to add to spartition: the record of each plug-in point, and where it registers.

A package adds to spartition by entry points, the way spartition registers
its own built-ins in its ``pyproject.toml``; every command finds them
(``spartition families``, ``algorithms``, ``formulas``, ``claims``, ...).
One :class:`Registry` per group lists the names without importing anything.

* ``spartition.families``: a builder ``build(**params) -> networkx.DiGraph`` or a :class:`Family`;
* ``spartition.algorithms``: an :class:`Algorithm`, a schedule generator the checker replays;
* ``spartition.formulas``: a :class:`FamilyBounds`, a family's published :class:`Formula` bounds;
* ``spartition.symmetry``: ``blocks(names) -> dict``, interchangeable node blocks of a family;
* ``spartition.claims``: a :class:`ClaimSet` of a paper's :class:`Claim` statements (or a function returning one);
* ``spartition.formulations``: a :class:`Formulation`, a CP-SAT model of the game (built from a :class:`ModelSpec`);
* ``spartition.bounds``: a :class:`BoundMethod`, an I/O lower-bound method (computing a :class:`Bound`);
* ``spartition.commands``: ``register(subparsers)``, a ``spartition`` command;
* ``spartition.studies``: a ``StudySpec``; the one named ``default`` is what ``spartition compare`` runs alone.

Example
-------
The package in ``tests/data/plugin_example`` adds the family of pairwise
products ``z_i = x_i * y_i`` with its algorithm, formula and claim set::

    # spartition_example/__init__.py
    from spartition.plugins import Algorithm, Claim, ClaimSet, Family, FamilyBounds, Formula, Schedule
    from spartition.study.claims import formula, optimum

    def pairs(n: int = 2):             # every parameter has a default: its type is the parameter's
        G = networkx.DiGraph(family="example-pairs", params={"n": n})
        ...                            # string node ids, attributes op and entry
        return G

    PAIRS = Family(build=pairs, node_count=lambda n: 3 * n)
    PAIRWISE = Algorithm("example-pairwise", ("example-pairs",), pairwise,
                         io_formula=lambda p, M: 3 * p["n"])
    PAIRS_BOUNDS = FamilyBounds("example-pairs", (Formula("example-pairs-io", ("example-pairs",), "lower",
                                "3 n", ..., func=lambda p, M: 3 * p["n"], holds=lambda p, M: M >= 3),),
                                paper_params=lambda params: {"n": params["n"]})
    CLAIMS = ClaimSet("example", "the example plug-in", claims=(Claim("example-io", ..., "example-pairs",
                      {"n": [1, 2]}, optimum(), ">=", formula("example-pairs-io"), Ms=(3, 4), sanity=True),))

and registers them in its ``pyproject.toml``::

    [project.entry-points."spartition.families"]
    example-pairs = "spartition_example:PAIRS"
    [project.entry-points."spartition.algorithms"]
    example-pairwise = "spartition_example:PAIRWISE"
    [project.entry-points."spartition.formulas"]
    example-pairs = "spartition_example:PAIRS_BOUNDS"
    [project.entry-points."spartition.claims"]
    example = "spartition_example:CLAIMS"

After ``pip install``, ``spartition build example-pairs n=3``, ``spartition
algorithms example-pairs``, ``spartition formulas example-pairs n=3 --M 3``
and ``spartition claims example`` see it (``tests/test_plugins.py``).

The names here are loaded on first use (the solver records import OR-Tools).
"""

from __future__ import annotations

from importlib import import_module

#: Each public name, and the module that defines it.
_HOMES = {
    "Registry": "spartition.core.registry",
    "Family": "spartition.core.registry",
    "GROUPS": "spartition.core.registry",
    "Algorithm": "spartition.core.algorithm",
    "Schedule": "spartition.core.game",
    "Formula": "spartition.study.formulas",
    "FamilyBounds": "spartition.study.formulas",
    "Claim": "spartition.study.claims",
    "ClaimSet": "spartition.study.claimsets",
    "ConstantStudy": "spartition.study.claimsets",
    "Formulation": "spartition.exact.formulations",
    "ModelSpec": "spartition.exact.formulations",
    "BoundMethod": "spartition.partition.lower_bounds",
    "Bound": "spartition.partition.lower_bounds",
    "Status": "spartition.status",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module 'spartition.plugins' has no attribute {name!r}")
    value = getattr(import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(_HOMES))
