"""The matrix product's segment count in the partial-computation game, over the marked product edges.

In the partial game (docs/definitions.md section 2.1) a sum is aggregated one
in-edge at a time, so the standard game's counts, which count compute events
of whole nodes, do not carry over. This count counts *edges*: each product
``P_i_j_k`` of ``matmul`` has one out-edge, into the sum of ``C_i_j`` (one
aggregation node with ``sums="node"``, an ``add`` of the binary tree
otherwise), and the one-shot partial game marks each edge exactly once. A
segment of ``S`` loads and saves marks at most a Loomis-Whitney number of
them through products it completes, plus one per product it holds from
before or loads; the segment argument then gives ``S (h - 1)``. It is the
segment argument of Hong & Kung in the form of
:mod:`spartition.families.classic.recompute_bounds`, with the partial game's
rules in place of the designation lemma.

References
----------
A. Papp, A. Sobczyk, A. N. Yzelman, "The impact of partial computations on
the red-blue pebble game", SPAA 2025, arXiv:2506.10854: the game, and the
statement that matrix multiplication keeps its standard-game bound there.
Irony, Toledo & Tiskin, "Communication lower bounds for distributed-memory
matrix multiplication" (JPDC 2004): the Loomis-Whitney count.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.common.papers import SEGMENTS
from spartition.families.common.partial_segments import partial_budgets, partial_segment_index
from spartition.families.common.segments import SegmentBound, capped_shared_bound
from spartition.study.formulas import Formula

__all__ = ["MATMUL_PARTIAL_FORMULA", "matmul_partial_bound", "matmul_partial_capacity", "matmul_partial_charges",
           "matmul_partial_searched"]


@lru_cache(maxsize=1 << 14)
def matmul_partial_capacity(a: int, b: int, c: int, T: int, L: int) -> int:
    """The most product edges ``(P_i_j_k, sum)`` one segment of the partial game marks.

    Parameters
    ----------
    a, b, c : int
        ``A`` is ``a x b``, ``B`` is ``b x c`` (``b`` the summed index).
    T : int
        A bound on ``|B'|``: the segment's red pebbles at its start, loads,
        saves and non-inputs red at its end (:func:`~spartition.families.common.partial_segments.partial_budgets`).
    L : int
        A bound on the inputs and products red at its start or loaded.

    Returns
    -------
    int
        ``G(T, L) = max min(b z, p + min(sqrt(x y z), x y, c x, a y))`` over
        integers ``0 <= x <= ab``, ``0 <= y <= bc``, ``0 <= z <= ac``,
        ``0 <= p``, ``x + y + p <= L``, ``x + y + p + z <= T``; 0 if no point
        is feasible.

    Notes
    -----
    **Proof.** Fix a valid schedule of the partial game on ``matmul(a, b,
    c)`` with ``b >= 2``, its sums built as one node each or as binary trees
    of any shape, cut into segments; fix a segment ``sigma`` and let ``B' =``
    (red at its start) + (loaded) + (saved) + (non-inputs red at its end,
    none for the segment that ends the schedule). Count the edges
    ``(P_i_j_k, w)`` marked in ``sigma`` (``w`` the node of ``Tree(i, j)``,
    the sum of ``C_i_j``, that the product feeds). Each product has one
    out-edge, and each edge is marked once.

    1. *Where a product's value comes from.* When ``(P, w)`` is marked,
       ``P`` is complete and red. Follow its red pebble back within
       ``sigma``: it was red at the start of ``sigma``, or loaded in it, or
       it began with a partial compute into ``P`` while ``P`` had no pebble.
       Such a fresh start is legal only while none of ``P``'s in-edges is
       marked, so then both ``(A_i_k, P)`` and ``(B_k_j, P)`` are marked in
       ``sigma``, with ``A_i_k`` and ``B_k_j`` red: inputs are never
       targets, so each was red at the start of ``sigma`` or loaded in it.
       With ``p`` the products of the first two kinds and ``x``, ``y`` the
       entries of ``A`` and ``B`` read by the fresh ones, ``x + y + p`` nodes
       are red at the start or loaded: ``x + y + p <= L``.
    2. *A touched sum meets* ``B'`` *in a node that is neither an input nor a
       product.* Let ``Tree(i, j)`` have a product edge marked in ``sigma``.
       If every edge of the tree (product edges and the edges between its
       adds) is marked in ``sigma``, its root ``C_i_j`` gets its last
       partial compute there and is dark red after it; a dark node is blue
       again only by a save, deleting it would leave the output never blue,
       so ``C_i_j`` is saved in ``sigma`` or red at its end (and not at the
       schedule's end). Otherwise some node ``w`` of the tree has one tree
       edge marked in ``sigma`` and one outside (the tree is connected); a
       product has one tree edge, so ``w`` is an add or the sum node. If an
       in-edge of ``w`` is marked before ``sigma``, ``w`` cannot start
       afresh, so its red pebble in ``sigma`` goes back to the start or a
       load. If one is marked in ``sigma`` and an edge of ``w`` after it,
       ``w`` is dark and not complete, or complete with its out-edge
       unmarked: it may not be deleted (a deleted sum never becomes blue), so
       it is saved in ``sigma`` or red at its end. Either way ``w`` is in
       ``B'``; the trees are disjoint, so with ``z`` the touched trees,
       ``x + y + p + z <= |B'| <= T``.
    3. *Counting.* The fresh products lie in ``{(i, j, k): A_i_k read, B_k_j
       read, Tree(i, j) touched}``, whose projections have ``x``, ``y``,
       ``z`` points: at most ``sqrt(x y z)`` (Loomis-Whitney, as in Irony,
       Toledo & Tiskin), ``x y``, ``c x`` and ``a y``. The others are at
       most ``p``. All edges counted go into the ``z`` touched trees, at most
       ``b`` each.

    Nothing here depends on the order of the terms of a sum or the shape of
    its tree: the count holds for ``sums="node"`` and for every binary
    build.

    Examples
    --------
    One middle segment of ``S = 4`` moves at ``M = 4``, square ``8 x 8 x 8``:
    ``T = 2M + S = 12``, ``L = M + S = 8``. Reading ``x = y = 4`` entries and
    touching ``z = 4`` sums gives ``sqrt(64) = 8`` fresh products; holding
    ``p = 8`` products and touching one sum gives ``min(8, 8) = 8`` too:

    >>> matmul_partial_capacity(8, 8, 8, 12, 8)
    8
    """
    reads = min(L, a * b + b * c)
    if reads < 0 or T < 0:
        return 0
    # the objective depends on x and y only through s = x + y (the budgets) and the best Loomis-Whitney term
    # at that s; it grows with p, so p takes the largest value the budgets allow
    lw = _loomis_whitney(a, b, c, _ceil_pow2(reads))[: reads + 1, : min(a * c, T) + 1]
    s = np.arange(reads + 1)[:, None]
    z = np.arange(lw.shape[1])[None, :]
    p = np.minimum(L - s, T - s - z)
    ok = p >= 0
    if not ok.any():
        return 0
    value = np.minimum(b * z, p + lw)
    return max(0, math.floor(float(value[ok].max()) + 1e-9))


def _ceil_pow2(k: int) -> int:
    return 1 << max(0, k).bit_length()


@lru_cache(maxsize=64)
def _loomis_whitney(a: int, b: int, c: int, reads: int) -> np.ndarray:
    """``[s, z] -> max over x + y = s`` (``x <= ab``, ``y <= bc``) of ``min(sqrt(x y z), x y, c x, a y)``."""
    z = np.arange(a * c + 1)[None, :]
    table = np.zeros((reads + 1, a * c + 1))
    for s in range(min(reads, a * b + b * c) + 1):
        x = np.arange(max(0, s - b * c), min(a * b, s) + 1)[:, None]
        y = s - x
        terms = [np.sqrt(x * y * z), x * y + 0.0 * z, c * x + 0.0 * z, a * y + 0.0 * z]
        table[s] = np.minimum.reduce(terms).max(axis=0)
    table[min(reads, a * b + b * c) + 1:] = -np.inf  # more reads than entries: infeasible
    return table


@lru_cache(maxsize=256)
def matmul_partial_bound(a: int, b: int, c: int, M: int) -> SegmentBound:
    """The best ``S (h(S) - 1)`` from :func:`matmul_partial_capacity`: a lower bound of the partial game.

    **Proof.** Cut any valid schedule of the partial game with ``Q`` loads
    and saves after every ``S``-th one: ``h = ceil(Q / S)`` segments (the
    deletes after the last save join the last segment: no edge can be marked
    after the last save, since every marked edge leads to an output saved
    after it), so ``Q >= S (h - 1)``. The ``W = a b c`` product edges are
    each marked once, in some segment, so ``W`` is at most the sum over
    segments of :func:`matmul_partial_capacity` at
    :func:`~spartition.families.common.partial_segments.partial_budgets`
    ``(M, S, a', b')`` (``b'`` the red non-inputs at a segment's end, the
    ``a'`` of the next); ``h`` is at least
    :func:`~spartition.families.common.segments.shared_segments_needed` of
    these counts. Any ``S`` gives a valid bound; the search only decides how
    strong it is.

    Returns
    -------
    SegmentBound
        ``weight`` ``"P-edges"`` (the ``a b c`` product edges), ``shared`` true.

    Examples
    --------
    >>> b = matmul_partial_bound(8, 8, 8, 4)
    >>> b.value, b.value == b.S * (b.segments - 1), b.value > 8 * 8 * 3  # above the trivial 3 n^2
    (378, True, True)
    """
    W = a * b * c
    return capped_shared_bound(W, M, 4 * (W + a * b + b * c + a * c + M),
                               lambda TL: matmul_partial_capacity(a, b, c, *TL), "P-edges",
                               budgets=partial_budgets)


def matmul_partial_charges(G, schedule, S: int) -> list:
    """Per segment of ``S`` loads and saves: the quantities :func:`matmul_partial_capacity`'s proof bounds.

    For the tests, on any valid partial-game schedule of a ``matmul`` DAG
    (either build of its sums): ``edges`` (product edges marked in the
    segment), ``fresh`` (those whose product began there with no pebble) and
    ``fresh_whole`` (of those, the ones whose product's two in-edges were
    both marked in the segment: all of them, by step 1), ``p`` (the others),
    ``x`` and ``y`` (entries of ``A`` and ``B`` the fresh products read),
    ``z`` (trees touched), ``met`` (touched trees with a node in ``B'`` that
    is neither an input nor a product), ``available`` (inputs and products
    red at its start or loaded), ``B_shared`` (``|B'|``), ``a`` and ``b``
    (red non-inputs at its start and end, none at the schedule's end).
    """
    entry = {v: tuple(G.nodes[v].get("entry") or ()) for v in G}
    product = {v for v in G if entry[v][:1] == ("P",)}
    tree = {v: entry[v][1:3] for v in G if entry[v][:1] in (("P",), ("C",))}
    moves = [tuple(m) for m in schedule.moves]
    seg_of = partial_segment_index(moves, S)
    marked_in = {}
    for t, move in enumerate(moves):
        if move[0] == "partial":
            marked_in[move[1], move[2]] = seg_of[t]
    steps_of: dict = {}
    for t, k in enumerate(seg_of):
        steps_of.setdefault(k, []).append(t)
    out, red = [], set()
    for k in range(seg_of[-1] + 1 if moves else 0):
        start, loaded, saved = set(red), set(), set()
        origin = {v: "carried" for v in red}
        edges, fresh, fresh_whole, carried, A, B, touched = 0, 0, 0, set(), set(), set(), set()
        for t in steps_of.get(k, ()):
            move = moves[t]
            if move[0] == "load":
                red.add(move[1])
                origin[move[1]] = "carried"
                loaded.add(move[1])
            elif move[0] in ("save", "store"):
                saved.add(move[1])
            elif move[0] == "delete":
                red.discard(move[1])
                origin.pop(move[1], None)
            else:
                u, v = move[1], move[2]
                if v not in red:
                    red.add(v)
                    origin[v] = "fresh"
                if u in product:
                    edges += 1
                    touched.add(tree[u])
                    if origin[u] == "fresh":
                        fresh += 1
                        ins = list(G.predecessors(u))
                        fresh_whole += all(marked_in[w, u] == k for w in ins)
                        A.update(w for w in ins if entry[w][:1] == ("A",))
                        B.update(w for w in ins if entry[w][:1] == ("B",))
                    else:
                        carried.add(u)
        last = k == seg_of[-1]
        end = set() if last else {v for v in red if G.in_degree(v)}
        shared = start | loaded | saved | end
        witnesses = {tree[v] for v in shared if v in tree and v not in product}
        out.append({"first": k == 0, "last": last, "edges": edges, "fresh": fresh, "fresh_whole": fresh_whole,
                    "p": len(carried), "x": len(A), "y": len(B), "z": len(touched), "met": len(touched & witnesses),
                    "available": sum(1 for v in start | loaded if not G.in_degree(v) or v in product),
                    "B_shared": len(shared), "a": sum(1 for v in start if G.in_degree(v)), "b": len(end)})
    return out


def matmul_partial_searched(a: int, b: int, c: int, M: int) -> bool:
    """Whether the formula evaluates the count: ``min(5 M, ab + bc)^2 a c <= 10^9`` (a compute cap, never validity).

    The Loomis-Whitney table takes about that many steps (the segment search reads budgets up to about ``5 M``):
    half a second at ``16 x 16 x 16``, ``M = 64``.

    >>> matmul_partial_searched(16, 16, 16, 64), matmul_partial_searched(64, 64, 64, 256)
    (True, False)
    """
    return min(5 * M, a * b + b * c) ** 2 * a * c <= 10**9


def _partial_regime(p, M):
    a, b, c = p["a"], p["b"], p["c"]
    return b >= 2 and 2 <= M <= a * b + b * c + a * c and matmul_partial_searched(a, b, c, M)


def _partial_lower(p, M):
    # outside the regime: no product edge to count (b = 1), not pebblable (M < 2), the trivial bound attained, or
    # above the compute cap
    if not _partial_regime(p, M):
        return math.nan
    return float(matmul_partial_bound(p["a"], p["b"], p["c"], M).value)


#: The matrix product's segment bound of the partial game (registered with the ``matmul`` family's bounds).
MATMUL_PARTIAL_FORMULA = Formula(
    name="segment-matmul-partial-lower",
    families=("matmul",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the a b c product edges marked per segment, proved in "
          "spartition.families.classic.partial_bounds.matmul_partial_capacity (Loomis-Whitney as in Irony, Toledo & "
          "Tiskin)",
    constants="explicit",
    regime="the partial game, sums as one node or binary trees of any shape, b >= 2, 2 <= M <= ab + bc + ac, "
"min(5 M, ab + bc)^2 a c <= 10^9",
    func=_partial_lower,
    holds=_partial_regime,
    detail=(("G(T, L)", "max min(b z, p + min(sqrt(x y z), x y, c x, a y)) over x <= ab, y <= bc, z <= ac, "
                        "x + y + p <= L, x + y + p + z <= T: x, y the entries of A, B read by products completed "
                        "in the segment, p the products held from before or loaded, z the sums touched"),
            ("h(S)", "the fewest segments whose counts reach a b c, with T = M + S + b', L = M + S (b' red "
                     "non-inputs at a segment's end, shared with the next)")),
    variants=("partial",),
)
