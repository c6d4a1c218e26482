"""The record of a published upper-bound algorithm realised as a schedule generator (a plug-in's ``Algorithm``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from spartition.errors import ParameterError

__all__ = ["Algorithm"]


@dataclass(frozen=True, kw_only=True)
class Algorithm:
    """A schedule generator, registered by a kernel's :class:`~spartition.core.registry.Kernel` record.

    Built by keyword only, so two hooks cannot be swapped by position.

    Attributes
    ----------
    name : str
        Registry name, e.g. ``"flash-forward"``.
    families : tuple of str
        DAG families it applies to (``("*",)`` for every family).
    generate : callable
        ``generate(G, M, variant, **options) -> Schedule``, always called with
        ``variant=`` (one of :attr:`variants`; see :meth:`schedule`); raises
        :class:`~spartition.errors.InfeasibleMemory` naming the smallest M it
        supports when its tiling does not fit.
    io_formula : callable or None
        ``io_formula(params, M) -> int``: the exact closed-form I/O of the
        generated schedule, from the family parameters (``G.graph["params"]``);
        it may return ``None`` where it has no closed form (a masked DAG). It
        takes no game: a schedule's I/O (its loads and stores) is the same in
        every game it is valid in.
    min_memory : callable or None
        ``min_memory(params) -> int``: the smallest M the generator supports.
    source : str
        Paper and algorithm/lemma it implements.
    search_space : callable or None
        ``search_space(params, M) -> list of dict``: the generator's tile
        options that fit in ``M`` (each dict is passed as keyword options to
        ``generate`` and ``io_formula``); ``None`` when the generator has no
        free parameters. Like ``io_formula`` it takes no game.
    variants : tuple of str
        The games whose rules its schedules keep: ``oneshot`` and
        ``recompute`` for a generator that computes every node once (the
        default), ``("recompute",)`` for one that computes a value again.

    Examples
    --------
    >>> a = Algorithm(name="mine", families=("chain",), generate=None)
    >>> a.applies_to("chain"), a.applies_to("chain", "partial")
    (True, False)
    """

    name: str
    families: tuple
    generate: Callable
    io_formula: Callable | None = None
    min_memory: Callable | None = None
    source: str = ""
    search_space: Callable | None = None
    variants: tuple = ("oneshot", "recompute")

    def applies_to(self, family: str, variant: str | None = None) -> bool:
        """Whether the algorithm runs on DAGs of ``family`` (and makes schedules of the game ``variant``)."""
        return ("*" in self.families or family in self.families) and (variant is None or variant in self.variants)

    def schedule(self, G, M: int, variant: str, **options):
        """``generate(G, M, variant=variant, **options)``, refused for a game the algorithm does not declare.

        Raises
        ------
        ParameterError
            If ``variant`` is not one of :attr:`variants`.
        """
        if variant not in self.variants:
            raise ParameterError(f"algorithm {self.name} makes schedules of the games {', '.join(self.variants)}, "
                                 f"not {variant}")
        return self.generate(G, M, variant=variant, **options)
