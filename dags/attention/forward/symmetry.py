"""Symmetry blocks of the attention-forward DAG: its query rows and its key columns.

The class capacity (:func:`spartition.partition.capacity.class_capacity`)
breaks symmetry with aligned blocks of nodes whose exchange is an
automorphism; only the family knows which blocks those are, from its node
names (the naming table of :mod:`spartition.families.attention.forward.dag`). This
module is registered under the entry-point group ``spartition.symmetry``
(``attention-forward = spartition.families.attention.forward.symmetry:symmetry_blocks``),
so the engine asks for ``symmetry="rows"`` by the DAG's ``family`` and never
parses a name itself.
"""

from __future__ import annotations

import re

__all__ = ["attention_column_blocks", "attention_row_blocks", "symmetry_blocks"]


def symmetry_blocks(names) -> dict:
    """The named block families of an attention-forward DAG (or a restricted part of it).

    Parameters
    ----------
    names : sequence of str
        Node ids of the DAG the capacity is modelled on (after a
        ``restrict``, the ids of the sub-DAG).

    Returns
    -------
    dict
        ``"rows"``: :func:`attention_row_blocks`; ``"cols"``:
        :func:`attention_column_blocks`. Each a list of aligned blocks
        (possibly empty); the two families may be used together, as a column
        permutation maps each row block to itself.

    Examples
    --------
    >>> sorted(symmetry_blocks(["Q_0_0", "Q_1_0"]))
    ['cols', 'rows']
    >>> symmetry_blocks(["Q_0_0", "Q_1_0"])["rows"]
    [['Q_0_0'], ['Q_1_0']]
    """
    names = list(names)
    return {"rows": attention_row_blocks(names), "cols": attention_column_blocks(names)}


_ROW_TENSORS = ("Q", "QK", "S", "A", "l", "r", "AV", "T", "O")
_ROW_NAME = re.compile(r"^(" + "|".join(_ROW_TENSORS) + r")_(\d+)(.*)$")


def attention_row_blocks(names) -> list:
    """The query-row blocks of an attention-forward DAG, aligned node by node.

    Block ``i`` holds every node whose name starts with one of the row
    tensors (``Q, QK, S, A, l, r, AV, T, O``, partial sums included) and
    whose first index is ``i``; position ``t`` of every block is the node
    with the same name once the row index is blanked out. Nodes of ``K`` and
    ``V`` belong to no block. Permuting the rows is an automorphism of the
    attention DAG (no sum runs over ``i``);
    :func:`spartition.partition.cuts.add_set_symmetry` checks this before
    using the blocks, so a wrong guess raises instead of cutting.

    Parameters
    ----------
    names : sequence of str
        Node names (e.g. ``CompactDAG.names``).

    Returns
    -------
    list of list of str
        The blocks in row order; empty if the rows do not align.

    Examples
    --------
    >>> attention_row_blocks(["Q_0_0", "Q_1_0", "K_0_0", "QK_0_0_0", "QK_1_0_0"])
    [['QK_0_0_0', 'Q_0_0'], ['QK_1_0_0', 'Q_1_0']]
    """
    rows: dict = {}
    for v in names:
        m = _ROW_NAME.match(v)
        if m:
            rows.setdefault(int(m.group(2)), {})[f"{m.group(1)}_*{m.group(3)}"] = v
    if len(rows) < 2:
        return []
    keys = sorted(rows[min(rows)])
    if sorted(rows) != list(range(len(rows))) or any(sorted(r) != keys for r in rows.values()):
        return []
    return [[rows[i][k] for k in keys] for i in range(len(rows))]


_COL_NAME = re.compile(r"^(K)_(\d+)(.*)$|^(QK|S)_(\d+)_(\d+)(.*)$")


def attention_column_blocks(names) -> list:
    """The key-column blocks (index ``j`` of ``K``, ``QK`` and ``S``), aligned like :func:`attention_row_blocks`.

    Permuting key columns is an automorphism of the ``S = Q K^T`` part only
    (the softmax and output sums run over ``j`` in a fixed order), i.e. of a
    ``restrict`` sub-DAG ending at the ``S`` nodes;
    :func:`spartition.partition.cuts.add_set_symmetry` checks it and
    raises on the full DAG.

    Parameters
    ----------
    names : sequence of str
        Node names.

    Returns
    -------
    list of list of str
        The blocks in column order; empty if the columns do not align.

    Examples
    --------
    >>> attention_column_blocks(["K_0_0", "K_1_0", "QK_0_0_0", "QK_0_1_0"])
    [['K_0_0', 'QK_0_0_0'], ['K_1_0', 'QK_0_1_0']]
    """
    cols: dict = {}
    for v in names:
        m = _COL_NAME.match(v)
        if not m:
            continue
        if m.group(1):
            j, key = int(m.group(2)), f"K_*{m.group(3)}"
        else:
            j, key = int(m.group(6)), f"{m.group(4)}_{m.group(5)}_*{m.group(7)}"
        cols.setdefault(j, {})[key] = v
    if len(cols) < 2:
        return []
    keys = sorted(cols[min(cols)])
    if sorted(cols) != list(range(len(cols))) or any(sorted(c) != keys for c in cols.values()):
        return []
    return [[cols[j][k] for k in keys] for j in range(len(cols))]
