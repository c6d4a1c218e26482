"""The blocked matrix product: output tiles held in fast memory, the summed index streamed (Hong & Kung).

For each ``rows x cols`` tile of ``C`` the schedule streams ``k`` in the
order of the chain sums: it loads the tile's column of ``A`` (``rows``
entries), then for each column ``j`` of the tile loads ``B_k_j``, computes
the ``rows`` products and folds each into its running sum. At the end of the
tile the sums are stored. Peak memory: the tile's running sums, the column
of ``A``, one entry of ``B``, a product and the new running sum:
``rows cols + rows + 3``. Every node is computed once, so the schedule is
valid in both standard games, and in the partial game once translated edge
by edge (the sandwich does; on a ``sums="node"`` build the schedule is made
on the binary build and carried over).

References
----------
Hong & Kung, "I/O complexity: the red-blue pebble game" (STOC 1981): the
blocked product attaining ``Theta(n^3 / sqrt(M))``. Irony, Toledo & Tiskin
(JPDC 2004) for rectangular products.
"""

from __future__ import annotations

from spartition.authoring.moves import MoveRecorder
from spartition.core.algorithm import Algorithm
from spartition.errors import InfeasibleMemory, ParameterError

__all__ = ["BLOCKED_MATMUL", "blocked_matmul", "blocked_matmul_io", "blocked_matmul_tiles"]

#: The fewest red pebbles a tile of one entry needs: its sum, A_i_k, B_k_j, the product and the new sum.
MIN_MEMORY = 5


def _need(rows: int, cols: int) -> int:
    return rows * cols + rows + 3


def blocked_matmul_tiles(params, M: int) -> list[dict]:
    """Every tile ``rows x cols`` (``rows <= a``, ``cols <= c``) with ``rows cols + rows + 3 <= M``.

    >>> [(o["rows"], o["cols"]) for o in blocked_matmul_tiles({"a": 4, "b": 4, "c": 4}, 8)]
    [(1, 1), (1, 2), (1, 3), (1, 4), (2, 1)]
    """
    a, c = int(params["a"]), int(params["c"])
    return [{"rows": r, "cols": q} for r in range(1, a + 1) for q in range(1, c + 1) if _need(r, q) <= M]


def _io(a: int, b: int, c: int, rows: int, cols: int) -> int:
    return b * (a * -(-c // cols) + c * -(-a // rows)) + a * c


def _tile(params, M: int, rows, cols) -> tuple:
    """The tile asked for (checked against M), or the cheapest that fits, the squarer one on a tie."""
    a, b, c = (int(params[k]) for k in "abc")
    if rows is None and cols is None:
        options = blocked_matmul_tiles(params, M)
        if not options:
            raise InfeasibleMemory(f"blocked-matmul: M = {M} is too small; its tiling needs M >= {MIN_MEMORY} "
                                   "(a tile of one entry)")
        best = min(options, key=lambda o: (_io(a, b, c, o["rows"], o["cols"]), abs(o["rows"] - o["cols"])))
        return best["rows"], best["cols"]
    if rows is None or cols is None or rows < 1 or cols < 1:
        raise ParameterError(f"blocked-matmul: give both rows >= 1 and cols >= 1, got rows={rows}, cols={cols}")
    if _need(rows, cols) > M:
        raise InfeasibleMemory(f"blocked-matmul: M = {M} is too small; its tiling needs M >= {_need(rows, cols)} "
                               f"(tile {rows} x {cols})")
    return min(rows, a), min(cols, c)


def blocked_matmul_io(params, M: int, rows=None, cols=None) -> int:
    """Closed-form I/O of :func:`blocked_matmul`: ``b (a ceil(c / cols) + c ceil(a / rows)) + a c``.

    Each tile loads ``rows + cols`` entries per ``k`` and stores its sums once.

    Examples
    --------
    >>> blocked_matmul_io({"a": 8, "b": 8, "c": 8}, 16, rows=3, cols=3)  # 8 (8 * 3 + 8 * 3) + 64
    448
    """
    rows, cols = _tile(params, M, rows, cols)
    return _io(*(int(params[k]) for k in "abc"), rows, cols)


def blocked_matmul(G, M: int, variant: str = "oneshot", rows=None, cols=None):
    """The blocked product's schedule of a ``matmul`` DAG with chain sums (the module docstring says how).

    Parameters
    ----------
    G : networkx.DiGraph
        ``matmul(a, b, c)`` with ``shape="chain"`` and binary sums, any ``order``.
    M : int
    variant : {"oneshot", "recompute"}
    rows, cols : int, optional
        The tile of ``C``; default the cheapest that fits (:func:`blocked_matmul_io`).

    Raises
    ------
    ParameterError
        On a DAG whose sums are not chains of binary adds.
    InfeasibleMemory
        If no tile fits (``M < 5``) or the tile asked for does not.

    Examples
    --------
    >>> from spartition.core.game import replay
    >>> from spartition.core.registry import build
    >>> G = build("matmul", a=8, b=8, c=8)
    >>> replay(G, blocked_matmul(G, 16)).io == blocked_matmul_io(G.graph["params"], 16)
    True
    """
    params = G.graph["params"]
    if params.get("shape", "chain") != "chain" or params.get("sums", "binary") != "binary":
        raise ParameterError("blocked-matmul folds each product into a running chain sum: it needs shape=chain and "
                             "binary sums (the sandwich plays it on sums=node through the binary build)")
    a, b, c = (int(params[k]) for k in "abc")
    rows, cols = _tile(params, M, rows, cols)
    order = [int(x) for x in params["order"].split(",")] if params.get("order") else list(range(b))
    rec = MoveRecorder(M, [v for v in G if not G.in_degree(v)], variant)
    for i0 in range(0, a, rows):
        for j0 in range(0, c, cols):
            tile_rows, tile_cols, running = range(i0, min(a, i0 + rows)), range(j0, min(c, j0 + cols)), {}
            for k in order:
                rec.load_all(f"A_{i}_{k}" for i in tile_rows)
                for j in tile_cols:
                    rec.load(f"B_{k}_{j}")
                    for i in tile_rows:
                        product = f"P_{i}_{j}_{k}"
                        rec.compute(product)
                        if (i, j) in running:  # fold into the chain: the product's one successor is the next sum
                            (new,) = G.successors(product)
                            rec.fold(new, running[i, j], product)
                            product = new
                        running[i, j] = product
                    rec.delete(f"B_{k}_{j}")
                rec.delete_all(f"A_{i}_{k}" for i in tile_rows)
            for node in running.values():
                rec.evict(node)
    return rec.schedule(method="blocked-matmul", rows=rows, cols=cols, io_formula=_io(a, b, c, rows, cols))


BLOCKED_MATMUL = Algorithm(
    name="blocked-matmul",
    families=("matmul",),
    generate=blocked_matmul,
    io_formula=blocked_matmul_io,
    min_memory=lambda params: MIN_MEMORY,
    search_space=blocked_matmul_tiles,
    source="Hong & Kung 1981 (Irony, Toledo & Tiskin 2004 for rectangles): blocked product, a rows x cols tile of C "
           "held red, the summed index streamed",
)
