"""The record of a published upper-bound algorithm realised as a schedule generator (a plug-in's ``Algorithm``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Algorithm"]


@dataclass(frozen=True)
class Algorithm:
    """A schedule generator registered under the ``spartition.algorithms`` entry points.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"flash-forward"``.
    families : tuple of str
        DAG families it applies to (``("*",)`` for every family).
    generate : callable
        ``generate(G, M, **options) -> Schedule``; raises
        :class:`~spartition.errors.InfeasibleMemory` naming the smallest M it
        supports when its tiling does not fit.
    io_formula : callable or None
        ``io_formula(params, M) -> int``: the exact closed-form I/O of the
        generated schedule, from the family parameters (``G.graph["params"]``);
        it may return ``None`` where it has no closed form (a masked DAG).
    min_memory : callable or None
        ``min_memory(params) -> int``: the smallest M the generator supports.
    source : str
        Paper and algorithm/lemma it implements.
    search_space : callable or None
        ``search_space(params, M) -> list of dict``: the generator's tile
        options that fit in ``M`` (each dict is passed as keyword options to
        ``generate`` and ``io_formula``); ``None`` when the generator has no
        free parameters.

    Examples
    --------
    >>> Algorithm("mine", ("chain",), generate=None).applies_to("chain")
    True
    """

    name: str
    families: tuple
    generate: Callable
    io_formula: Callable | None = None
    min_memory: Callable | None = None
    source: str = ""
    search_space: Callable | None = None

    def applies_to(self, family: str) -> bool:
        """Whether the algorithm runs on DAGs of ``family``."""
        return "*" in self.families or family in self.families
