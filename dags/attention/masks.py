"""Attention masks: which score entries (i, j) a sparse attention DAG keeps.

A mask is a set of allowed pairs ``(i, j)`` with ``0 <= i, j < n``; only
these entries of S, A and their products exist in the DAG (docs/definitions.md
section 4, sparse attention). Every mask built here contains the whole
diagonal, so every row keeps at least one entry (softmax is defined) and
every key/value row is used by some query (no input is left dangling).

Kinds
-----
``none``
    Dense: all ``n**2`` pairs.
``causal``
    ``j <= i``: ``n (n + 1) / 2`` pairs.
``window``
    Symmetric sliding window ``|i - j| <= window``.
``block``
    Block-diagonal: ``i // block == j // block``.
``random``
    The diagonal plus each off-diagonal pair independently with probability
    ``density``, drawn from ``random.Random(seed)`` in row-major order.
"""

from __future__ import annotations

import random

__all__ = [
    "MASKS",
    "MASK_PARAMS",
    "mask_columns",
    "mask_count",
    "mask_pairs",
    "mask_pairs_from_params",
    "mask_rows",
    "mask_size",
    "sort_by_order",
]

MASKS = ("none", "causal", "window", "block", "random")
MASK_PARAMS = ("mask", "window", "block", "density", "seed")


def mask_pairs(n: int, mask: str = "none", window: int = 1, block: int = 2, density: float = 0.5, seed: int = 0) -> frozenset:
    """The set of allowed ``(i, j)`` pairs of an ``n x n`` attention mask.

    Parameters
    ----------
    n : int
        Sequence length (``n >= 1``).
    mask : {"none", "causal", "window", "block", "random"}
        Kind of mask (see the module docstring).
    window : int
        Half-width of the ``window`` mask (``>= 0``).
    block : int
        Block side of the ``block`` mask (``>= 1``).
    density : float
        Probability of each off-diagonal pair of the ``random`` mask.
    seed : int
        Seed of the ``random`` mask.

    Returns
    -------
    frozenset of (int, int)
        Allowed pairs; always contains every ``(i, i)``.

    Raises
    ------
    ValueError
        On an unknown kind or an out-of-range parameter.

    Examples
    --------
    >>> sorted(mask_pairs(3, "causal"))
    [(0, 0), (1, 0), (1, 1), (2, 0), (2, 1), (2, 2)]
    >>> len(mask_pairs(5, "window", window=1)), len(mask_pairs(5, "block", block=2))
    (13, 9)
    >>> mask_pairs(6, "random", density=0.3, seed=4) == mask_pairs(6, "random", density=0.3, seed=4)
    True
    """
    if n < 1:
        raise ValueError(f"a mask needs n >= 1, got n={n}")
    if mask == "none":
        return frozenset((i, j) for i in range(n) for j in range(n))
    if mask == "causal":
        return frozenset((i, j) for i in range(n) for j in range(i + 1))
    if mask == "window":
        if window < 0:
            raise ValueError(f"window mask needs window >= 0, got {window}")
        return frozenset((i, j) for i in range(n) for j in range(max(0, i - window), min(n, i + window + 1)))
    if mask == "block":
        if block < 1:
            raise ValueError(f"block mask needs block >= 1, got {block}")
        return frozenset((i, j) for i in range(n) for j in range(n) if i // block == j // block)
    if mask == "random":
        if not 0.0 <= density <= 1.0:
            raise ValueError(f"random mask needs 0 <= density <= 1, got {density}")
        rng = random.Random(seed)
        pairs = set()
        for i in range(n):
            for j in range(n):
                draw = rng.random()
                if i == j or draw < density:
                    pairs.add((i, j))
        return frozenset(pairs)
    raise ValueError(f"unknown mask {mask!r}; expected one of {MASKS}")


def mask_rows(n: int, pairs) -> list[list[int]]:
    """``rows[i]`` = the allowed ``j`` of row ``i``, ascending.

    Examples
    --------
    >>> mask_rows(3, mask_pairs(3, "causal"))
    [[0], [0, 1], [0, 1, 2]]
    """
    rows = [[] for _ in range(n)]
    for i, j in pairs:
        rows[i].append(j)
    return [sorted(r) for r in rows]


def mask_columns(n: int, pairs) -> list[list[int]]:
    """``cols[j]`` = the allowed ``i`` of column ``j``, ascending.

    Examples
    --------
    >>> mask_columns(3, mask_pairs(3, "causal"))
    [[0, 1, 2], [1, 2], [2]]
    """
    return mask_rows(n, [(j, i) for i, j in pairs])


def mask_size(n: int, mask: str = "none", window: int = 1, block: int = 2, density: float = 0.5, seed: int = 0) -> int:
    """``Z_QK``: the number of allowed pairs.

    Examples
    --------
    >>> mask_size(4), mask_size(4, "causal"), mask_size(4, "window", window=0)
    (16, 10, 4)
    """
    return len(mask_pairs(n, mask, window, block, density, seed))


#: Above this many candidate pairs a random mask is counted by its expectation, not drawn.
RANDOM_COUNT_DRAWS = 4_000_000
#: A random mask draws every one of its n^2 candidate pairs, whatever its density: above
#: this many draws (minutes of pure Python) :func:`mask_count` refuses the mask.
RANDOM_MAX_DRAWS = 100_000_000


def mask_count(n: int, mask: str = "none", window: int = 1, block: int = 2, density: float = 0.5, seed: int = 0) -> int:
    """The size of a mask without building its pairs: closed forms, so a size guard costs nothing.

    A ``random`` mask is drawn (exactly :func:`mask_size`) when it has at
    most :data:`RANDOM_COUNT_DRAWS` candidate pairs; above that, drawing it
    would itself take as long as a large build, so the count is its
    expectation ``n + density (n^2 - n)``, rounded.

    Raises
    ------
    ValueError
        When :func:`mask_pairs` would, and on a random mask of more than
        :data:`RANDOM_MAX_DRAWS` candidate pairs.

    Examples
    --------
    >>> all(mask_count(7, k, window=2, block=3) == mask_size(7, k, window=2, block=3) for k in MASKS)
    True
    >>> mask_count(10**6, "causal")
    500000500000
    """
    if n < 1:
        raise ValueError(f"a mask needs n >= 1, got n={n}")
    if mask == "none":
        return n * n
    if mask == "causal":
        return n * (n + 1) // 2
    if mask == "window":
        if window < 0:
            raise ValueError(f"window mask needs window >= 0, got {window}")
        w = min(window, n - 1)
        return n * (2 * w + 1) - w * (w + 1)
    if mask == "block":
        if block < 1:
            raise ValueError(f"block mask needs block >= 1, got {block}")
        full, rest = divmod(n, block)
        return full * block * block + rest * rest
    if mask == "random":
        if not 0.0 <= density <= 1.0:
            raise ValueError(f"random mask needs 0 <= density <= 1, got {density}")
        if n * n > RANDOM_MAX_DRAWS:
            raise ValueError(f"a random mask on n={n} draws n^2 = {n * n:,} pairs, more than {RANDOM_MAX_DRAWS:,}")
        if n * n <= RANDOM_COUNT_DRAWS:
            return mask_size(n, mask, window, block, density, seed)
        return n + round(density * (n * n - n))
    raise ValueError(f"unknown mask {mask!r}; expected one of {MASKS}")


def mask_pairs_from_params(params) -> frozenset:
    """:func:`mask_pairs` of a DAG's family parameters (``n`` and those of :data:`MASK_PARAMS` present).

    Examples
    --------
    >>> len(mask_pairs_from_params({"n": 4, "d": 2, "mask": "causal"})), len(mask_pairs_from_params({"n": 3}))
    (10, 9)
    """
    return mask_pairs(int(params["n"]), **{k: params[k] for k in MASK_PARAMS if k in params})


def sort_by_order(lists, perm) -> list[list[int]]:
    """Each list of ``lists`` sorted by position in the permutation ``perm`` (a summation order).

    Examples
    --------
    >>> sort_by_order(mask_rows(3, mask_pairs(3, "causal")), [2, 0, 1])
    [[0], [0, 1], [2, 0, 1]]
    """
    pos = {v: k for k, v in enumerate(perm)}
    return [sorted(values, key=pos.__getitem__) for values in lists]
