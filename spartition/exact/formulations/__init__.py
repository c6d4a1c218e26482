"""The CP-SAT formulations of the red-blue pebble game: one module per model, one record per module.

Each formulation module defines its :class:`Formulation` record as the
module attribute ``FORMULATION``: how to build the model from a
:class:`ModelSpec`, set a hint, decode a solution, the cap it imposes, what
its exactness rests on, how large it will be, and the CP-SAT parameters it
wants. :func:`spartition.exact.solve.solve_io` reads everything about a model
from its record, so a new formulation is a new module (here, or in a package
of its own) registered under the entry-point group ``spartition.formulations``
(:data:`spartition.core.registry.FORMULATIONS`). Beside them, :mod:`~spartition.exact.formulations.order_cnf`
writes the order model as MaxSAT clauses (no record of its own: the order
record's ``maxsat`` engine solves them).

The registry :data:`FORMULATIONS` knows the names without importing the
modules (they import OR-Tools, which is slow to load): listing the names, as
the command line does for its choices, builds and loads nothing; a record is
imported on first use.

Examples
--------
>>> list(FORMULATIONS)
['order', 'events', 'baseline']
>>> formulation("order").exact_for
('oneshot',)
>>> default_formulation("recompute").name
'events'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from spartition.core.registry import FORMULATIONS

__all__ = [
    "FORMULATIONS",
    "TUNED_PARAMETERS",
    "Formulation",
    "ModelSpec",
    "default_formulation",
    "estimate_model",
    "formulation",
    "model_size",
]

#: CP-SAT settings of the tuned formulations (order, events): the LP relaxation of these models
#: is weak and slow (clause learning proves the bounds), and the models carry their own symmetry
#: breaking.
TUNED_PARAMETERS = MappingProxyType({"linearization_level": 0, "symmetry_level": 0})


@dataclass(frozen=True)
class ModelSpec:
    """What one build of a formulation is asked for.

    Attributes
    ----------
    cdag : CompactDAG
    M : int
        Fast memory (checked feasible by the caller).
    variant : {"oneshot", "recompute"}
    computed : int
        ``N``, the number of non-input nodes.
    events : int
        Compute events: ``N`` for oneshot, the cap for recompute.
    pairs : tuple of (int, int)
        Puget symmetry precedences (empty when symmetry is off or unused).
    lower, upper : int or None
        Proven bounds on the objective; ``upper`` is also the I/O of a known
        schedule, which sets the baseline's horizon.
    """

    cdag: object
    M: int
    variant: str
    computed: int
    events: int
    pairs: tuple = ()
    lower: int | None = None
    upper: int | None = None


@dataclass(frozen=True)
class Formulation:
    """One CP-SAT model of the pebble game, as :func:`~spartition.exact.solve.solve_io` uses it.

    Attributes
    ----------
    name : str
    summary : str
        One line: what the model indexes.
    variants : tuple of str
        The variants it can model.
    exact_for : tuple of str
        The variants for which its optimum is the optimum of the true problem
        (no cap, or a cap proven harmless); for the others it is optimal only
        within its cap.
    default_for : tuple of str
        The variants for which ``formulation="auto"`` picks it.
    build : callable
        ``build(spec: ModelSpec)`` -> a built model with a ``model``
        attribute (the ``CpModel``).
    decode : callable
        ``decode(built, value, meta=None)`` -> :class:`~spartition.core.game.Schedule`,
        ``value`` reading the solver's solution; checked by replay afterwards.
    cap : callable
        ``cap(spec)`` -> the cap recorded in the result (``{"events": E}`` or
        ``{"horizon": T}``, with ``"harmless"``: exact for the variant).
    assumptions : mapping
        Variant -> what the model's exactness rests on, in words.
    estimate : callable
        ``estimate(cdag, variant, events, upper)`` -> the model's estimated
        size (:func:`model_size`), before anything is built.
    hint : callable or None
        ``hint(built, schedule)`` sets a complete hint (None: the model takes
        no hint). A hinted model holds every hint schedule it accepts, and a
        oneshot model accepts only oneshot schedules.
    parameters : mapping
        CP-SAT parameters the model wants (applied before the caller's own).
    parallel_parameters : mapping
        Added with two or more workers (e.g. a pinned portfolio).
    symmetry : bool
        The build takes Puget precedences (``spec.pairs``).
    bounded : bool
        The build honours ``spec.lower``/``spec.upper`` on its objective, so
        it can be rebuilt at one objective level for the bound ascent.
    needs_upper : bool
        The build needs ``spec.upper`` (the I/O of a known schedule).
    always_solve : bool
        Solve even when a hint meets the lower bound already (the baseline
        is kept to be measured, so it is never skipped).
    engines : tuple of str
        The engines that can solve the model: ``cp-sat`` (the ``build``
        above), and ``maxsat`` for the order model, whose clauses
        :mod:`spartition.exact.formulations.order_cnf` writes for PySAT's
        RC2 (:mod:`spartition.exact.maxsat`).
    """

    name: str
    summary: str
    variants: tuple
    exact_for: tuple
    default_for: tuple
    build: Callable
    decode: Callable
    cap: Callable
    assumptions: Mapping
    estimate: Callable
    hint: Callable | None = None
    parameters: Mapping = field(default_factory=dict)
    parallel_parameters: Mapping = field(default_factory=dict)
    symmetry: bool = False
    bounded: bool = False
    needs_upper: bool = False
    always_solve: bool = False
    engines: tuple = ("cp-sat",)

    def is_exact(self, variant: str) -> bool:
        """Whether this model's optimum is the true optimum of ``variant`` (not only within a cap).

        Parameters
        ----------
        variant : str

        Returns
        -------
        bool
        """
        return variant in self.exact_for

    def proves(self, variant: str, cap: dict | None) -> bool:
        """Whether this model's optimum, built with ``cap``, is the true optimum of ``variant``.

        Parameters
        ----------
        variant : str
        cap : dict or None
            The cap of the build, as :attr:`cap` records it; ``"harmless": True``
            means a cap proven to cut off no optimum (e.g. the events model
            with :func:`spartition.exact.formulations.caps.harmless_events`).

        Returns
        -------
        bool
        """
        return self.is_exact(variant) or bool((cap or {}).get("harmless"))

    def solver_parameters(self, workers: int) -> dict:
        """The CP-SAT parameters this model wants with ``workers`` workers.

        Parameters
        ----------
        workers : int

        Returns
        -------
        dict
            A fresh dict: ``parameters``, plus ``parallel_parameters`` for
            two or more workers.
        """
        params = dict(self.parameters)
        if workers > 1:
            params.update(self.parallel_parameters)
        return params


def formulation(name: str) -> Formulation:
    """The registered formulation ``name``.

    Parameters
    ----------
    name : str

    Returns
    -------
    Formulation

    Raises
    ------
    ValueError
        For an unknown name, listing the registered ones.

    Examples
    --------
    >>> formulation("baseline").variants
    ('oneshot', 'recompute')
    >>> formulation("lp")
    Traceback (most recent call last):
    ...
    ValueError: unknown formulation 'lp'; expected one of order, events, baseline
    """
    if name not in FORMULATIONS:
        raise ValueError(f"unknown formulation {name!r}; expected one of {', '.join(FORMULATIONS)}")
    return FORMULATIONS[name]


def default_formulation(variant: str) -> Formulation:
    """The formulation ``auto`` means for ``variant``: the first whose ``default_for`` names it.

    Parameters
    ----------
    variant : str

    Returns
    -------
    Formulation

    Raises
    ------
    ValueError
        No formulation is the default for ``variant``.
    """
    for name in FORMULATIONS:
        if variant in FORMULATIONS[name].default_for:
            return FORMULATIONS[name]
    raise ValueError(f"no formulation is the default for the variant {variant!r}")


def estimate_model(c, name: str, variant: str, events: int, upper: int | None = None) -> dict:
    """The estimated size of a formulation's model, before it is built.

    Parameters
    ----------
    c : spartition.core.dag.CompactDAG
    name : {"order", "events", "baseline"}
        A registered formulation; the estimator is its record's ``estimate``.
    variant : str
    events : int
        Compute events (the events model) or computed nodes.
    upper : int, optional
        I/O of a known schedule (the baseline's horizon is ``N + upper``).

    Returns
    -------
    dict
        ``model``, ``variant``, ``constraints`` (estimated count),
        ``build_seconds`` and ``memory_bytes`` (estimated from the
        per-constraint cost).

    Raises
    ------
    ValueError
        For a name that is not registered.

    Notes
    -----
    Measured on exact attention, d = 2 (``benchmarks/exact_io.py
    --estimate`` prints estimate against actual): the order model holds about
    ``N^3 / 2`` constraints (a red set per compute over the nodes in flight,
    N computed nodes), the events model about ``10 N E / 2`` and the baseline
    about ``6 T (n + |E|)`` for T steps; building costs about 6 us and 300
    bytes per order constraint and 30 us and 400 bytes per event-model
    constraint. The estimate is for refusing hopeless models, not for
    accounting: within a factor of two on the DAGs measured.

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.core.dag import compact
    >>> estimate_model(compact(fft(2)), "order", "oneshot", events=8)["constraints"]
    256
    """
    return formulation(name).estimate(c, variant, events, upper)


def model_size(name: str, variant: str, constraints: float, seconds_each: float, bytes_each: float) -> dict:
    """The size record :func:`spartition.cpsat.budget_refusal` reads.

    Parameters
    ----------
    name, variant : str
        The model and the variant it is built for.
    constraints : float
        Estimated number of constraints.
    seconds_each, bytes_each : float
        Measured build time and memory per constraint.

    Returns
    -------
    dict
        ``model``, ``variant``, ``constraints`` (an estimated count),
        ``build_seconds`` and ``memory_bytes``.
    """
    cons = int(constraints)
    return {"model": name, "variant": variant, "constraints": cons,
            "build_seconds": round(cons * seconds_each, 3), "memory_bytes": int(cons * bytes_each)}
