"""A chain sum of row-by-row products in four red pebbles: the step the small-memory schedules share.

``S_ij = sum_l Q_il K_jl``, ``dP_ij = sum_c dO_ic V_jc``: each product needs its two operands and a red pebble of
its own beside the running sum, so four red pebbles are the least that make such a sum without storing a running
value. :func:`row_product_chain` makes one, keeping the last left operand red where the next sum of the row can
start with it.
"""

from __future__ import annotations

from spartition.families.attention.tiling import chain_name

__all__ = ["row_product_chain"]


def row_product_chain(rec, fseq, total: str, prefix: str, left, right, kept=None):
    """Make the chain sum ``total`` of the products ``{prefix}_{col}`` of ``left(col)`` and ``right(col)``.

    The terms are made in the chain's order ``fseq``, except that the first
    two (which the sum's first node adds in either order) start with the
    column ``kept`` when it is the second: its left operand is still red
    from the row's previous sum. Where the sum has at most two terms the
    last left operand stays red, and its column is returned for the next
    sum of the row; otherwise every operand is deleted.

    Parameters
    ----------
    rec : MoveRecorder
    fseq : sequence of int
        The columns in the chain's order.
    total, prefix : str
        The sum's name and its products' prefix (``S_0_1``, ``QK_0_1``).
    left, right : callable
        ``col -> name`` of the two operands of a product.
    kept : int or None
        The column whose left operand is red.

    Returns
    -------
    (str, int or None)
        The sum's final node (red) and the column whose left operand is kept.

    Examples
    --------
    >>> from spartition.authoring.moves import MoveRecorder
    >>> rec = MoveRecorder(4, [])
    >>> root, kept = row_product_chain(rec, [0, 1], "S", "QK", lambda c: f"Q{c}", lambda c: f"K{c}", kept=1)
    >>> root, kept, [m for m in rec.moves if m[0] != "delete"]
    ('S', 0, [('load', 'Q1'), ('load', 'K1'), ('compute', 'QK_1'), ('load', 'Q0'), ('load', 'K0'), \
('compute', 'QK_0'), ('compute', 'S')])
    """
    seq, d = list(fseq), len(fseq)
    if kept is not None and d > 1 and kept == seq[1]:
        seq[0], seq[1] = seq[1], seq[0]
    keep_last = d <= 2
    first, made = f"{prefix}_{fseq[0]}", []
    for p, col in enumerate(seq):
        operands = [left(col), right(col)]
        rec.load_all(operands)
        made.append(f"{prefix}_{col}")
        rec.compute(made[-1])
        rec.delete_all(operands[1:] if p == d - 1 and keep_last else operands)
        if p:
            # the running value before this term: the first product made, or the sum after position p - 1
            rec.fold(chain_name(total, first, p, d), made[0] if p == 1 else chain_name(total, first, p - 1, d),
                     made[-1])
    return chain_name(total, first, d - 1, d), seq[-1] if keep_last else None
