"""Blocks, index structure and mask structure shared by the attention schedule generators.

A schedule generator walks the index space of an attention DAG in blocks
(tiles) and accumulates every sum as a chain in the order it consumes the
terms. This module holds the pieces every generator needs: cutting a
sequence into blocks and choosing FlashAttention's block sizes, the index
structure of a (possibly masked) attention DAG read off the DAG itself or
rebuilt from its family parameters (:class:`AttentionIndex`: chain orders,
allowed ``(i, j)`` pairs by row and by column), grouping the allowed pairs
by block pair, and checking that a DAG is of the right family with chain
sums in the order a generator needs. The names of running chain values come
from :func:`spartition.authoring.sums.chain_name` (re-exported here).
"""

from __future__ import annotations

from spartition.families.attention.forward.dag import parse_order
from spartition.families.attention.masks import mask_pairs_from_params, mask_rows, sort_by_order
from spartition.authoring.sums import chain_name
from spartition.errors import InfeasibleMemory, InvalidDAG

__all__ = [
    "AttentionIndex",
    "block_space",
    "blocks",
    "ceil_div",
    "chosen_blocks",
    "chosen_side",
    "chain_name",
    "column_block_tiles",
    "flash_block_counts",
    "flash_block_sizes",
    "index_from_dag",
    "index_from_params",
    "is_dense",
    "require_chain",
    "require_family",
    "require_fit",
    "rows_from_dag",
    "block_structure",
    "side_space",
    "tiled_product",
    "tiled_product_loads",
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


def is_dense(params) -> bool:
    """Whether family parameters describe an unmasked DAG (the dense closed forms apply).

    Examples
    --------
    >>> is_dense({"n": 2, "d": 2}), is_dense({"n": 2, "d": 2, "mask": "causal"})
    (True, False)
    """
    return params.get("mask", "none") == "none"


def rows_from_dag(G, n: int, jseq, marker: str = "A") -> list[list[int]]:
    """The allowed ``j`` of every query row ``i``, in the order ``jseq``: those with a node ``{marker}_i_j``.

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> rows_from_dag(attention_forward(3, 1, mask="causal"), 3, range(3))
    [[0], [0, 1], [0, 1, 2]]
    """
    return [[j for j in jseq if f"{marker}_{i}_{j}" in G] for i in range(n)]


def require_chain(G, algorithm: str) -> None:
    """Raise :class:`InvalidDAG` unless ``G``'s sums are chains (graph parameter ``shape``).

    The generators accumulate each sum left to right in the order they
    consume its terms (docs/definitions.md section 4), so a balanced-tree summation
    cannot be followed.
    """
    shape = G.graph.get("params", {}).get("shape", "chain")
    if shape != "chain":
        raise InvalidDAG(f"{algorithm} accumulates sums as chains; this DAG has shape={shape!r} sums")


def require_family(G, family: str, algorithm: str) -> None:
    """Raise :class:`InvalidDAG` unless ``G`` is a ``family`` DAG with chain sums (:func:`require_chain`).

    Examples
    --------
    >>> from spartition.families.classic.dag import chain
    >>> require_family(chain(3), "attention-forward", "flash-forward")
    Traceback (most recent call last):
    ...
    spartition.errors.InvalidDAG: flash-forward runs on 'attention-forward' DAGs, not 'chain'
    """
    if G.graph.get("family") != family:
        raise InvalidDAG(f"{algorithm} runs on {family!r} DAGs, not {G.graph.get('family')!r}")
    require_chain(G, algorithm)


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


def flash_block_sizes(algorithm: str, d: int, M: int, need) -> tuple[int, int]:
    """FlashAttention's block sizes ``(B_c, B_r)``, shrunk until ``need(d, B_c, B_r) <= M``.

    FlashAttention takes ``B_c = ceil(M / 4d)`` and ``B_r = min(B_c, d)``;
    ``need(d, B_c, B_r)`` is the fast memory the generator uses with those
    blocks, and ``B_c`` is decreased (with ``B_r = min(B_c, d)``) until it fits.

    Raises
    ------
    InfeasibleMemory
        If ``M < need(d, 1, 1)`` (blocks of one row do not fit).

    Examples
    --------
    >>> flash_block_sizes("x", 2, 40, lambda d, bc, br: 2 * bc * d + br * (2 * d + 1) + 3)
    (5, 2)
    """
    require_fit(algorithm, M, need(d, 1, 1), "blocks of one row")
    bc = ceil_div(M, 4 * d)
    while need(d, bc, min(bc, d)) > M:
        bc -= 1
    return bc, min(bc, d)


def chosen_blocks(algorithm: str, d: int, M: int, bc, br, need, default) -> tuple[int, int]:
    """Block sizes ``(B_c, B_r)`` a caller asked for (``B_r`` defaults to ``min(B_c, d)``), or ``default(d, M)`` if none.

    Raises
    ------
    InfeasibleMemory
        If ``need(d, B_c, B_r) > M``.

    Examples
    --------
    >>> chosen_blocks("x", 2, 40, 3, None, lambda d, bc, br: 2 * bc * d + br, None)
    (3, 2)
    """
    if bc is None and br is None:
        return default(d, M)
    bc = 1 if bc is None else bc
    br = min(bc, d) if br is None else br
    if bc < 1 or br < 1:
        raise ValueError(f"{algorithm}: block sizes must be >= 1, got B_c={bc}, B_r={br}")
    require_fit(algorithm, M, need(d, bc, br), f"B_c = {bc}, B_r = {br}")
    return bc, br


def block_space(n: int, d: int, M: int, need) -> list[dict]:
    """Every ``B_c <= n`` with ``need(d, B_c, 1) <= M``, as options ``{"bc": B_c, "br": 1}``.

    For the FlashAttention generators the I/O depends on ``B_c`` only (the
    query side is loaded once per K/V block and the running sums stored at
    each block boundary whatever ``B_r``), so ``B_r = 1`` leaves the most
    room for ``B_c``.

    Examples
    --------
    >>> block_space(8, 2, 20, lambda d, bc, br: 2 * bc * d + br * (2 * d + 1) + 3)
    [{'bc': 1, 'br': 1}, {'bc': 2, 'br': 1}, {'bc': 3, 'br': 1}]
    """
    return [{"bc": bc, "br": 1} for bc in range(1, n + 1) if need(d, bc, 1) <= M]


def chosen_side(algorithm: str, M: int, b, need, default) -> int:
    """A square tile side a caller asked for, or ``default(M)`` if none; raise if ``need(b) > M``.

    Examples
    --------
    >>> chosen_side("x", 16, 2, lambda b: 3 * b * b + b + 2, None)
    2
    """
    if b is None:
        return default(M)
    if b < 1:
        raise ValueError(f"{algorithm}: tile side must be >= 1, got {b}")
    require_fit(algorithm, M, need(b), f"tile side {b}")
    return b


def side_space(top: int, M: int, need) -> list[dict]:
    """Every tile side ``b <= top`` with ``need(b) <= M``, as options ``{"b": b}``.

    Examples
    --------
    >>> side_space(8, 16, lambda b: 3 * b * b + b + 2)
    [{'b': 1}, {'b': 2}]
    """
    return [{"b": b} for b in range(1, top + 1) if need(b) <= M]


def flash_block_counts(index, bc: int) -> tuple[list[int], int]:
    """Per row, the column blocks (``B_c`` keys in ``jseq``) holding one of its allowed ``j``; and the keys used.

    Returns
    -------
    (ks, n_K)
        ``ks[i]`` is the number of K/V blocks row ``i`` visits (``k_i`` in the
        I/O formulas of the FlashAttention generators); ``n_K`` the number of
        keys some row uses.

    Examples
    --------
    >>> flash_block_counts(index_from_params({"n": 3, "d": 1, "mask": "causal"}), 2)
    ([1, 1, 2], 3)
    """
    where = {j: b for b, J in enumerate(blocks(index.jseq, bc)) for j in J}
    ks = [len({where[j] for j in r}) for r in index.rows]
    return ks, sum(1 for c in index.cols if c)


def column_block_tiles(struct, n_row_blocks: int, jblocks):
    """Walk :func:`block_structure` column block by column block (FlashAttention's outer K/V loop).

    Yields
    ------
    (tiles, keys)
        For every column block with an allowed pair, in order: its block
        pairs' ``(active_rows, active_cols, per_row)`` in row-block order, and
        the columns of the block that some pair uses (in block order).

    Examples
    --------
    >>> s = block_structure([[0], [0, 1]], [[0, 1]], [[0], [1]])
    >>> [keys for _, keys in column_block_tiles(s, 1, [[0], [1]])]
    [[0], [1]]
    """
    for b, J in enumerate(jblocks):
        tiles = [struct[(a, b)] for a in range(n_row_blocks) if (a, b) in struct]
        if tiles:
            used = set()
            for _, cols, _ in tiles:
                used.update(cols)
            yield tiles, [j for j in J if j in used]


class AttentionIndex:
    """Index structure of an attention DAG as a generator walks it: sizes, chain orders, allowed pairs.

    Attributes
    ----------
    n, d : int
        Sequence length and head dimension.
    fseq, jseq, iseq : list of int
        Summation orders over a feature (``order``), over ``j`` (``jorder``)
        and over ``i`` (``iorder``; ascending for families without it).
    rows, cols : list of list of int
        ``rows[i]``: the allowed ``j`` of row ``i`` in ``jseq`` order;
        ``cols[j]``: the allowed ``i`` of column ``j`` in ``iseq`` order.
    rpos, cpos : list of dict
        Position of ``j`` in ``rows[i]`` and of ``i`` in ``cols[j]``.
    """

    __slots__ = ("n", "d", "fseq", "jseq", "iseq", "rows", "cols", "rpos", "cpos")

    def __init__(self, n, d, fseq, jseq, iseq, rows):
        self.n, self.d, self.fseq, self.jseq, self.iseq, self.rows = n, d, fseq, jseq, iseq, rows
        cols = [[] for _ in range(n)]
        for i in range(n):
            for j in rows[i]:
                cols[j].append(i)
        self.cols = sort_by_order(cols, iseq)
        self.rpos = [{j: t for t, j in enumerate(r)} for r in rows]
        self.cpos = [{i: t for t, i in enumerate(c)} for c in self.cols]


def _orders(params):
    n, d = int(params["n"]), int(params["d"])
    return (
        n,
        d,
        parse_order(params.get("order", ""), d, "order"),
        parse_order(params.get("jorder", ""), n, "jorder"),
        parse_order(params.get("iorder", ""), n, "iorder"),
    )


def index_from_dag(G, family: str, algorithm: str, marker: str = "A", cls=AttentionIndex):
    """The :class:`AttentionIndex` (or subclass ``cls``) of ``G``, read off its ``{marker}_i_j`` nodes.

    Raises
    ------
    InvalidDAG
        Unless ``G`` is a ``family`` DAG with chain sums (:func:`require_family`).

    Examples
    --------
    >>> from spartition.families.attention.forward.dag import attention_forward
    >>> F = index_from_dag(attention_forward(3, 1, mask="causal"), "attention-forward", "x")
    >>> F.rows, F.cols
    ([[0], [0, 1], [0, 1, 2]], [[0, 1, 2], [1, 2], [2]])
    """
    require_family(G, family, algorithm)
    n, d, fseq, jseq, iseq = _orders(G.graph["params"])
    return cls(n, d, fseq, jseq, iseq, rows_from_dag(G, n, jseq, marker))


def index_from_params(params, cls=AttentionIndex):
    """The :class:`AttentionIndex` (or subclass ``cls``) of the DAG that family parameters ``params`` describe.

    Examples
    --------
    >>> index_from_params({"n": 3, "d": 1, "mask": "causal", "jorder": "2,1,0"}).rows
    [[0], [1, 0], [2, 1, 0]]
    """
    n, d, fseq, jseq, iseq = _orders(params)
    rows = sort_by_order(mask_rows(n, mask_pairs_from_params(params)), jseq)
    return cls(n, d, fseq, jseq, iseq, rows)


def tiled_product(rec, xblocks, yblocks, zblocks, terms, a, b, prod, acc, finish, row_end=None):
    """A tiled (possibly sparse) matrix product, every output a chain sum kept in fast memory.

    For each output tile ``X x Y`` with an entry, and each block ``Z`` of the
    summed index (in chain order): load the operands ``a(x, z)`` and
    ``b(z, y)`` the tile's entries use, compute the products ``prod(x, y, z)``
    and fold them into ``acc(x, y, t)``, the ``b`` operands loaded for the
    whole tile and the ``a`` operands row by row (each serves one row of the
    tile); after the last ``Z`` call
    ``finish(x, y, node)`` on every entry. ``terms(x, y)`` lists the summed
    indices of entry ``(x, y)`` in chain order (empty: no such entry).
    """
    zwhere = {z: k for k, Z in enumerate(zblocks) for z in Z}
    for X in xblocks:
        for Y in yblocks:
            entries = [(x, y, terms(x, y)) for x in X for y in Y]
            entries = [e for e in entries if e[2]]
            if not entries:
                continue
            split = []
            for x, y, zs in entries:
                parts = {}
                for z in zs:
                    parts.setdefault(zwhere[z], []).append(z)
                split.append(parts)
            done = [0] * len(entries)
            for kz in range(len(zblocks)):
                # the b operands serve every row of the tile, a row's a operands that row only: loaded row by row and
                # dropped after it, the tile needs x c2 + |b| + (one row's a) + 2 red pebbles
                rows, bops = {}, {}
                for e, ((x, y, zs), parts) in enumerate(zip(entries, split)):
                    for z in parts.get(kz, ()):
                        ops, work = rows.setdefault(x, ({}, []))
                        ops[a(x, z)] = None
                        bops[b(z, y)] = None
                        work.append((e, y, zs, z))
                if not rows:
                    continue
                rec.load_all(bops)
                for x, (aops, work) in rows.items():
                    rec.load_all(aops)
                    for e, y, zs, z in work:
                        t = done[e]
                        p = prod(x, y, z)
                        rec.compute(p)
                        if t:
                            rec.fold(acc(x, y, zs, t), acc(x, y, zs, t - 1), p)
                        done[e] = t + 1
                    rec.delete_all(aops)
                rec.delete_all(bops)
            for x, y, zs in entries:
                finish(x, y, acc(x, y, zs, len(zs) - 1))
        if row_end is not None:
            row_end(X)


def tiled_product_loads(xblocks, yblocks, zblocks, terms, a, b) -> int:
    """Loads of :func:`tiled_product`: distinct operands of each (tile, summed block)."""
    zwhere = {z: k for k, Z in enumerate(zblocks) for z in Z}
    total = 0
    for X in xblocks:
        for Y in yblocks:
            ops = {}
            for x in X:
                for y in Y:
                    for z in terms(x, y):
                        aa, bb = ops.setdefault(zwhere[z], (set(), set()))
                        aa.add(a(x, z))
                        bb.add(b(z, y))
            total += sum(len(aa) + len(bb) for aa, bb in ops.values())
    return total
