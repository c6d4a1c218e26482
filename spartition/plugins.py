"""Everything a package needs to add to spartition: the record of each plug-in point, and where it registers.

A **kernel** (a DAG family or a few related ones, with what is known about
them) is one :class:`Kernel` record behind one entry point of the group
``spartition.kernels``, the way spartition registers its own kernels in its
``pyproject.toml``. The record holds

* ``families``: name -> builder ``build(**params) -> networkx.DiGraph`` or :class:`Family`;
* ``algorithms``: :class:`Algorithm` records, schedule generators the checker replays;
* ``formulas``: :class:`FamilyBounds` records, a family's published :class:`Formula` bounds;
* ``claims``: name -> :class:`ClaimSet` of a paper's :class:`Claim` statements (or a function returning one);
* ``symmetry``: family name -> ``blocks(names) -> dict``, interchangeable node blocks;
* ``studies``: name -> ``StudySpec``; the one named ``default`` is what ``spartition compare`` runs alone.

A name is global: two packages registering the same family (or algorithm,
claim set, ...) is an error naming both. The engine's own plug-in points
keep an entry-point group each: ``spartition.formulations`` (a
:class:`Formulation`, a CP-SAT model of the game built from a
:class:`ModelSpec`), ``spartition.bounds`` (a :class:`BoundMethod`
computing a :class:`Bound`) and ``spartition.commands`` (``register(subparsers)``).

A kernel is written with the authoring toolkit, :mod:`spartition.authoring`
(``new_dag``, ``add_node``, ``add_inputs``, ``add_sum``, ``MoveRecorder``), as
the built-in kernels are. docs/plugins.md walks through one, the package in
``tests/data/plugin_example`` (two files: its ``pyproject.toml`` with the one
entry point, and its module)::

    [project.entry-points."spartition.kernels"]
    example = "spartition_example:KERNEL"

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
    "Kernel": "spartition.core.registry",
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
