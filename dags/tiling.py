"""Blocks, chain-sum names and mask structure shared by the attention schedule generators.

A schedule generator walks the index space of an attention DAG in blocks
(tiles) and accumulates every sum as a chain in the order it consumes the
terms. This module holds the pieces every generator needs: cutting a
sequence into blocks, naming the running value of a chain sum after ``t``
terms (the convention of :func:`dags.summation.add_sum`), reading the
allowed ``(i, j)`` pairs of a (possibly masked) attention DAG off the DAG
itself, and checking that the DAG's sums are chains in the order a
generator needs.
"""

from __future__ import annotations

from spartition.errors import InfeasibleMemory, InvalidDAG

__all__ = [
    "blocks",
    "ceil_div",
    "chain_name",
    "is_dense",
    "require_chain",
    "require_fit",
    "rows_from_dag",
    "block_structure",
]


def ceil_div(a: int, b: int) -> int:
    """``ceil(a / b)`` for positive integers.

    Examples
    --------
    >>> ceil_div(7, 2), ceil_div(8, 2)
    (4, 4)
    """
    return -(-a // b)


def blocks(seq, size: int) -> list[list]:
    """Cut ``seq`` into consecutive blocks of ``size`` (the last may be shorter).

    Examples
    --------
    >>> blocks(range(5), 2)
    [[0, 1], [2, 3], [4]]
    """
    seq = list(seq)
    if size < 1:
        raise ValueError(f"block size must be >= 1, got {size}")
    return [seq[k : k + size] for k in range(0, len(seq), size)]


def chain_name(name: str, first: str, t: int, k: int) -> str:
    """The node holding the first ``t + 1`` terms of the chain sum ``name`` of ``k`` terms.

    ``first`` is the name of the first term (the running value after one
    term). Agrees with :func:`dags.summation.chain_prefixes`.

    Examples
    --------
    >>> [chain_name("s", "a", t, 3) for t in range(3)]
    ['a', 's~1', 's']
    """
    if t == 0:
        return first
    return name if t == k - 1 else f"{name}~{t}"


def is_dense(params) -> bool:
    """Whether family parameters describe an unmasked DAG (the dense closed forms apply).

    Examples
    --------
    >>> is_dense({"n": 2, "d": 2}), is_dense({"n": 2, "d": 2, "mask": "causal"})
    (True, False)
    """
    return params.get("mask", "none") == "none"


def rows_from_dag(G, n: int, jseq) -> list[list[int]]:
    """The allowed ``j`` of every query row ``i``, in the order ``jseq``: those with a node ``A_i_j``.

    Examples
    --------
    >>> from dags.attention import attention_forward
    >>> rows_from_dag(attention_forward(3, 1, mask="causal"), 3, range(3))
    [[0], [0, 1], [0, 1, 2]]
    """
    return [[j for j in jseq if f"A_{i}_{j}" in G] for i in range(n)]


def require_chain(G, algorithm: str) -> None:
    """Raise :class:`InvalidDAG` unless ``G``'s sums are chains (graph parameter ``shape``).

    The generators accumulate each sum left to right in the order they
    consume its terms (REFERENCE section 4), so a balanced-tree summation
    cannot be followed.
    """
    shape = G.graph.get("params", {}).get("shape", "chain")
    if shape != "chain":
        raise InvalidDAG(f"{algorithm} accumulates sums as chains; this DAG has shape={shape!r} sums")


def require_fit(algorithm: str, M: int, need_min: int, what: str) -> None:
    """Raise :class:`InfeasibleMemory` naming the smallest supported M when ``M < need_min``."""
    if M < need_min:
        raise InfeasibleMemory(f"{algorithm}: M = {M} is too small; its tiling needs M >= {need_min} ({what})")


def block_structure(rows, iblocks, jblocks) -> dict:
    """For every block pair ``(I, J)`` with an allowed pair: its active rows, active columns and pairs.

    Parameters
    ----------
    rows : list of list of int
        ``rows[i]``: the allowed ``j`` of row ``i`` in chain order.
    iblocks, jblocks : list of list of int
        Row blocks and column blocks (column blocks are consecutive in the
        chain order of every row).

    Returns
    -------
    dict
        ``(a, b) -> (active_rows, active_cols, per_row)`` for row block ``a``
        and column block ``b``; ``per_row`` lists ``(i, [j...])`` in row
        order, each ``j`` list in chain order; ``active_cols`` follows the
        order of the column block. Empty block pairs are absent.

    Examples
    --------
    >>> s = block_structure([[0], [0, 1]], [[0], [1]], [[0], [1]])
    >>> sorted(s), s[(1, 1)]
    ([(0, 0), (1, 0), (1, 1)], ([1], [1], [(1, [1])]))
    """
    where = {}
    for b, J in enumerate(jblocks):
        for j in J:
            where[j] = b
    out = {}
    for a, I in enumerate(iblocks):
        per = {}
        for i in I:
            for j in rows[i]:
                per.setdefault(where[j], {}).setdefault(i, []).append(j)
        for b, byrow in per.items():
            cols = set()
            for js in byrow.values():
                cols.update(js)
            active_cols = [j for j in jblocks[b] if j in cols]
            out[(a, b)] = (list(byrow), active_cols, list(byrow.items()))
    return out
