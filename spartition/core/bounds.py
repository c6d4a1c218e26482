"""Bounds that need no solver: the trivial I/O lower bound and the smallest feasible M."""

from __future__ import annotations

import numpy as np

from spartition.core.dag import as_compact
from spartition.errors import InfeasibleMemory

__all__ = ["min_feasible_memory", "require_memory", "trivial_lower_bound"]



def trivial_lower_bound(dag) -> int:
    """Every input with a successor is loaded once, every non-input output stored once.

    Returns ``#(inputs with a successor) + #(outputs that are not inputs)``
    (docs/definitions.md section 2), a lower bound for both variants and every M.

    Examples
    --------
    >>> from spartition.families.classic.dag import chain, fft
    >>> trivial_lower_bound(chain(5)), trivial_lower_bound(fft(1))
    (2, 4)
    """
    c = as_compact(dag)
    return int(np.sum(c.is_input & (c.out_degree() > 0)) + np.sum(c.is_output & ~c.is_input))


def min_feasible_memory(dag) -> int:
    """The smallest M for which a pebbling exists: ``1 + max in-degree`` over non-inputs.

    A DAG with no non-input node needs no pebble (returns 0).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft, matmul
    >>> min_feasible_memory(fft(1)), min_feasible_memory(matmul(2, 2, 2))
    (3, 3)
    """
    c = as_compact(dag)
    indeg = c.in_degree()
    return int(indeg.max() + 1) if len(indeg) and indeg.max() > 0 else 0


def require_memory(dag, M: int) -> None:
    """Raise :class:`InfeasibleMemory` if no pebbling of ``dag`` fits in ``M`` red pebbles.

    The message names a node whose predecessors and itself do not fit.
    """
    c = as_compact(dag)
    need = min_feasible_memory(c)
    if M < need:
        v = int(np.argmax(c.in_degree()))
        raise InfeasibleMemory(
            f"M = {M} is too small: node {c.names[v]!r} has {need - 1} predecessors, "
            f"so every pebbling needs M >= {need}"
        )
