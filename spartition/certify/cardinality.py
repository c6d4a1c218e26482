"""Cardinality constraints as clauses: Sinz's sequential counter.

Only the direction the encodings need is written: ``sum(xs) <= k``. The
counter variable ``s[i][j]`` is forced true when at least ``j + 1`` of
``xs[0..i]`` are true; a clause forbids a true ``xs[i]`` once ``k`` of the
earlier ones are. Every assignment of ``xs`` with at most ``k`` true extends
to the counters (set each to its meaning), and none with more does, so the
clauses say exactly ``sum(xs) <= k``.

References
----------
C. Sinz, "Towards an optimal CNF encoding of Boolean cardinality
constraints", CP 2005.
"""

from __future__ import annotations

from spartition.certify.cnf import CNF

__all__ = ["at_least", "at_most", "at_most_one"]


def at_most(f: CNF, xs, k: int) -> None:
    """Add clauses stating that at most ``k`` of the literals ``xs`` are true.

    Examples
    --------
    >>> from itertools import product
    >>> def models(n, k):
    ...     count = 0
    ...     for bits in product([False, True], repeat=n):
    ...         f = CNF(num_vars=n)
    ...         at_most(f, list(range(1, n + 1)), k)
    ...         for i, b in enumerate(bits, 1):
    ...             f.add(i if b else -i)
    ...         from spartition.certify.sat import solve_cnf
    ...         count += solve_cnf(f).satisfiable
    ...     return count
    >>> models(4, 2)  # 1 + 4 + 6 assignments with at most 2 true
    11
    """
    xs = list(xs)
    n = len(xs)
    if k >= n:
        return
    if k <= 0:
        for x in xs:
            f.add(-x)
        return
    # s[i][j]: at least j + 1 of xs[0..i] are true (forced upwards only).
    prev = None
    for i, x in enumerate(xs[:-1]):
        cur = [f.new_var() for _ in range(k)]
        f.add(-x, cur[0])
        if prev is not None:
            for j in range(k):
                f.add(-prev[j], cur[j])
            for j in range(1, k):
                f.add(-x, -prev[j - 1], cur[j])
            f.add(-x, -prev[k - 1])
        prev = cur
    f.add(-xs[-1], -prev[k - 1])


def at_most_one(f: CNF, xs) -> None:
    """At most one of ``xs``: pairwise for up to 5 literals, else the sequential counter."""
    xs = list(xs)
    if len(xs) <= 5:
        for i in range(len(xs)):
            for j in range(i + 1, len(xs)):
                f.add(-xs[i], -xs[j])
    else:
        at_most(f, xs, 1)


def at_least(f: CNF, xs, k: int) -> None:
    """At least ``k`` of ``xs``: at most ``len(xs) - k`` of their negations."""
    xs = list(xs)
    if k > len(xs):
        # No assignment has k true literals: a fresh variable forced both ways.
        z = f.new_var()
        f.add(z)
        f.add(-z)
        return
    at_most(f, [-x for x in xs], len(xs) - k)
