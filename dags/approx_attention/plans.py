"""Tile plans of the approximate-attention algorithms of Papp, Sobczyk & Zouzias, and their counts.

For each algorithm of :mod:`spartition.families.approx_attention.schedules` (Case I,
Lemma 3.1, Key Lemma 3.2, Lemma 3.3): the tile shapes that fit a fast memory
M (:func:`approx_plan`), the smallest M that admits one
(:func:`min_memory`), the exact I/O of the schedule realising a plan
(:func:`approx_io`, the closed form of that module's docstring), and the
paper's own count with the regime the paper states it in
(:func:`paper_count`, :func:`paper_regime`), kept apart from the plan so
that a schedule is checked against the paper, never against itself.

References
----------
P. A. Papp, A. Sobczyk, A. N. Zouzias, "Approaching I/O-optimality for
Approximate Attention": Section 3.2 (Lemma 3.1), 3.3 (Case I), Appendix A.1
(Key Lemma 3.2), Appendix B.2 (Lemma 3.3).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.approx_attention.dag import (
    column_order,
    grouped_tiles,
    monomials,
    parse_column_order,
    tau,
)
from spartition.families.attention.tiling import blocks, ceil_div

__all__ = ["ApproxPlan", "approx_io", "approx_plan", "least_memory", "min_memory", "paper_w", "plan_params", "tile_memory"]


FAMILY = "approx-attention"


class _NoFit(Exception):
    """Internal: the tiling does not fit this M (the reason is the message)."""


@dataclass(frozen=True)
class ApproxPlan:
    """The tiling an algorithm chose for given parameters and M.

    Attributes
    ----------
    algorithm : str
        Registry name.
    n, d, g, r : int
        Family parameters (``r = C(d + g, g)``).
    normalize : bool
        Whether the DAG is normalised.
    h, b : int
        Phase 2: rows and value columns of an output tile.
    b1 : int
        Phase 1: value columns of an ``H`` tile.
    tiles : tuple of (tuple, tuple)
        Phase 2 aggregation tiles ``(vars, cols)`` in the order consumed
        (their columns concatenated are the DAG's column order).
    subtiles : tuple of (tuple, tuple)
        Phase 1 ``H`` sub-tiles ``(vars, cols)``.
    need1, need2 : int
        Fast memory the two phases use at most (a bound the replay confirms).
    tiling : str
        Which of an algorithm's tilings this is (Lemma 3.1: ``"square"`` or
        ``"strip"``; empty for the algorithms with one tiling).
    """

    algorithm: str
    n: int
    d: int
    g: int
    r: int
    normalize: bool
    h: int
    b: int
    b1: int
    tiles: tuple
    subtiles: tuple
    need1: int
    need2: int
    tiling: str = ""

    def to_dict(self) -> dict:
        """Plain-dict form (tiles as lists)."""
        return asdict(self)


def paper_w(d: int, g: int, M: int):
    """The paper's ``w`` for Key Lemma 3.2: the largest ``g <= w <= d`` with ``w tau(w) <= M/4`` (None if none).

    Examples
    --------
    >>> paper_w(6, 2, 400), paper_w(6, 2, 40)
    (4, None)
    >>> paper_w(6, 2, 200)
    3
    """
    best = None
    for w in range(g, d + 1):
        if 4 * w * tau(w, g) <= M:
            best = w
    return best


def plan_params(params):
    n, d, g = int(params["n"]), int(params["d"]), int(params["g"])
    norm = bool(params.get("normalize", False))
    return n, d, g, math.comb(d + g, g), norm


def _need2(h, b, w):
    return h * b + 2 * b + h * w + 3


def _need1(subtiles, b1):
    return max((len(cols) + 2) * b1 + len(vs) + 3 for vs, cols in subtiles)


def tile_memory(h: int, b: int, w: int) -> int:
    """Fast memory an output tile of ``h`` rows and ``b`` value columns uses, its rows of Q ``w`` wide.

    ``h b`` outputs, ``b`` columns of H and ``b`` running sums, ``h w``
    entries of Q and three values in flight: the count a plan's tile is
    shrunk (rows first) to fit in M.

    Examples
    --------
    >>> tile_memory(8, 2, 4)  # 16 + 4 + 32 + 3
    55
    """
    return _need2(h, b, w)


def _fit2(M, h, b, w):
    """Shrink ``(h, b)`` (rows first) until phase 2 fits in ``M``."""
    if _need2(h, b, w) > M:
        h = min(h, (M - 2 * b - 3) // (b + w))
        if h < 1:
            h = 1
            b = min(b, (M - w - 3) // 3)
    if h < 1 or b < 1 or _need2(h, b, w) > M:
        raise _NoFit(f"an output tile with its rows of Q needs M >= {_need2(1, 1, w)}")
    return h, b


def _fit1(M, subtiles, b1):
    """Shrink ``b1`` until phase 1 fits in ``M``."""
    while b1 > 1 and _need1(subtiles, b1) > M:
        b1 -= 1
    if _need1(subtiles, b1) > M:
        raise _NoFit(f"an H tile of one column needs M >= {_need1(subtiles, 1)}")
    return b1


def _make(name, params, M, h, b, w, b1, tiles, subtiles):
    n, d, g, r, norm = plan_params(params)
    h, b = _fit2(M, h, b, w)
    b1 = _fit1(M, subtiles, b1)
    return ApproxPlan(name, n, d, g, r, norm, h, b, b1, tuple(tiles), tuple(subtiles),
                      _need1(subtiles, b1), _need2(h, b, w))


def _plan_case_i(params, M):
    n, d, g, r, norm = plan_params(params)
    D = d + norm
    h0, b0 = M // (4 * d), min(D, M // (4 * r))
    if h0 < 1 or b0 < 1:
        raise _NoFit(f"Case I needs M/4d >= 1 and M/4r >= 1 (a whole row of U1 beside a column of H), i.e. M >= {4 * max(d, r)}")
    cols = tuple(column_order(d, g, params.get("order", "lex")))
    full = (tuple(range(d)), cols)
    return _make("approx-case-i", params, M, h0, b0, d, b0, [full], [full])


def _lemma_3_1_tiling(params, M, kind):
    """One of the two tilings of Lemma 3.1's proof (Section 3.2), shrunk until it fits ``M``.

    ``kind="square"``: output tiles ``t x t`` with ``t = floor(sqrt(M/4))``
    (the standard matrix-product tiling, the ``n r d / sqrt(M)`` term);
    ``kind="strip"``: output tiles ``t x D'`` with ``t = floor(M/4d)`` (the
    ``n r d^2 / M`` term). Both load whole rows of ``Q`` (``K``).
    """
    n, d, g, r, norm = plan_params(params)
    D = d + norm
    cols = tuple(column_order(d, g, params.get("order", "lex")))
    if kind == "square":
        t = math.isqrt(M // 4)
        if t < 1:
            raise _NoFit("square tiles need sqrt(M/4) >= 1, i.e. M >= 4")
        h0, b0 = t, min(D, t)
    else:
        t = M // (4 * d)
        if t < 1:
            raise _NoFit(f"strip tiles need M/4d >= 1, i.e. M >= {4 * d}")
        h0, b0 = t, D
    s = min(len(cols), t)
    while True:
        subtiles = [(tuple(range(d)), tuple(c)) for c in blocks(cols, s)]
        try:
            plan = _make("approx-lemma-3.1", params, M, h0, b0, d, b0, [(tuple(range(d)), cols)], subtiles)
            return replace(plan, tiling=kind)
        except _NoFit:
            if s == 1:
                raise
            s -= 1


def _plan_lemma_3_1(params, M):
    # Lemma 3.1 is the minimum of the two tilings' costs, so realise both and
    # keep the cheaper by its exact count: the paper's crossover M = d^2 is
    # only asymptotic, and either tiling may be the only one that fits.
    plans, reasons = [], []
    for kind in ("square", "strip"):
        try:
            plans.append(_lemma_3_1_tiling(params, M, kind))
        except _NoFit as exc:
            reasons.append(str(exc))
    if not plans:
        raise _NoFit("; ".join(dict.fromkeys(reasons)))
    return min(plans, key=approx_io)


@lru_cache(maxsize=128)
def _grouped(d, g, W):
    return tuple((tuple(vs), tuple(cs)) for _, vs, cs in grouped_tiles(d, g, W))


def grouped_width(params, name):
    n, d, g, r, norm = plan_params(params)
    order = params.get("order", "lex")
    kind, W = parse_column_order(order, g)
    if kind != "grouped":
        raise InvalidDAG(
            f"{name} consumes the columns in grouped tiles: build the DAG with order='grouped-W' "
            f"(e.g. dag_for({name!r}, M, ...)); this DAG has order={order!r}"
        )
    return W


def _plan_key_lemma(params, M):
    n, d, g, r, norm = plan_params(params)
    D = d + norm
    W = grouped_width(params, "approx-key-lemma")
    if 4 * W * tau(W, g) > M:
        raise _NoFit(f"Key Lemma 3.2 needs w tau(w) <= M/4 for w = {W}, i.e. M >= {4 * W * tau(W, g)}")
    tiles = _grouped(d, g, W)
    wmax = max(len(vs) for vs, _ in tiles)
    b0 = min(D, W)
    return _make("approx-key-lemma", params, M, M // (4 * W), b0, wmax, b0, tiles, tiles)


def _plan_lemma_3_3(params, M):
    n, d, g, r, norm = plan_params(params)
    D = d + norm
    W = grouped_width(params, "approx-lemma-3.3")
    if W // g != 1:
        raise InvalidDAG(f"approx-lemma-3.3 needs groups of one variable: order='grouped-{g}', got order={params.get('order')!r}")
    s = M // (4 * g)
    if s < 1:
        raise _NoFit(f"Lemma 3.3 needs M/4g >= 1, i.e. M >= {4 * g}")
    tiles = _grouped(d, g, W)
    subtiles = [(vs, tuple(c)) for vs, cs in tiles for c in blocks(cs, s)]
    wmax = max(len(vs) for vs, _ in tiles)
    b0 = min(D, g)
    return _make("approx-lemma-3.3", params, M, s, b0, wmax, b0, tiles, subtiles)


def _chunks_by_width(columns, monos, wmax):
    """The column order cut greedily into runs whose monomials use at most ``wmax`` variables together."""
    out, cols, vs = [], [], set()
    for a in columns:
        v = set(monos[a])
        if cols and len(vs | v) > wmax:
            out.append((tuple(sorted(vs)), tuple(cols)))
            cols, vs = [], set()
        cols.append(a)
        vs |= v
    if cols:
        out.append((tuple(sorted(vs)), tuple(cols)))
    return out


def _split_to_fit(tiles, b1, M):
    """Each ``(vars, cols)`` of ``tiles`` cut into runs of as many columns as phase 1 fits with ``b1`` value columns."""
    out = []
    for vs, cols in tiles:
        s = (M - 3 - len(vs)) // b1 - 2
        if s < 1:
            raise _NoFit(f"an H tile over {len(vs)} variables needs M >= {3 * b1 + len(vs) + 3}")
        out += [(vs, tuple(c)) for c in blocks(list(cols), s)]
    return out


def _plan_tiled(params, M):
    """The cheapest plan of the tile space the four algorithms share, by the exact count :func:`approx_io`.

    Phase 1 (any grouping of the monomials, since each ``H`` entry is a sum
    of its own): ``b1`` value columns per block, ``H`` sub-tiles taken from
    the variable groups of Key Lemma 3.2 for every group size (one tile of
    all variables when there are ``g`` groups or fewer), from the runs of the
    column order over at most ``w`` variables for every ``w``, and from the
    plans of the published algorithms that fit; each tile cut into runs of
    as many columns as fit. Phase 2 (its aggregation tiles must follow the
    DAG's column order, in which the output sums run): the same runs for
    every ``w`` and the published plans' tiles, with output tiles of ``b``
    value columns for every ``b`` and the most rows ``h`` that fit (fewer
    row blocks load ``H`` fewer times; nothing else depends on ``h``). The
    two phases are chosen apart (:func:`approx_io` is their sum), so the plan
    is never above any published plan that fits ``M`` on the same DAG.

    Examples
    --------
    >>> p = _plan_tiled({"n": 16, "d": 6, "g": 2}, 16)
    >>> (p.h, p.b, p.b1), approx_io(p), approx_io(_plan_lemma_3_1({"n": 16, "d": 6, "g": 2}, 16))
    ((2, 2, 1), 5448, 12648)
    """
    n, d, g, r, norm = plan_params(params)
    D = d + norm
    columns = tuple(column_order(d, g, params.get("order", "lex")))
    monos = monomials(d, g)  # indexed by column
    published = []
    for name in ("approx-case-i", "approx-lemma-3.1", "approx-key-lemma", "approx-lemma-3.3"):
        try:
            published.append(_PLANNERS[name](params, M))
        except (_NoFit, InvalidDAG):
            continue
    widths = range(min(g, d), d + 1)
    runs = {w: _chunks_by_width(columns, monos, w) for w in widths}
    groupings = [list(_grouped(d, g, q * g)) for q in range(1, d + 1)] + list(runs.values())
    phase1 = [(p.b1, list(p.subtiles)) for p in published]
    for b1 in range(1, D + 1):
        for tiles in groupings:
            try:
                phase1.append((b1, _split_to_fit(tiles, b1, M)))
            except _NoFit:
                continue
    phase2 = [(p.h, p.b, list(p.tiles)) for p in published]
    for tiles in runs.values():
        w = max(len(vs) for vs, _ in tiles)
        for b in range(1, D + 1):
            h = min(n, (M - 2 * b - 3) // (b + w))  # the most rows that fit: fewer row blocks cost less
            if h >= 1:
                phase2.append((h, b, tiles))
    if not phase1 or not phase2:
        raise _NoFit(f"an output tile and an H tile need M >= {6 + min(g, d)}")

    def plan(one, two):
        (b1, sub), (h, b, tiles) = one, two
        w = max(len(vs) for vs, _ in tiles)
        return ApproxPlan("approx-tiled", n, d, g, r, norm, h, b, b1, tuple(tiles), tuple(sub), _need1(sub, b1),
                          _need2(h, b, w), "searched")

    first = min(phase1, key=lambda one: approx_io(plan(one, phase2[0])))  # min keeps the first of equals
    return plan(first, min(phase2, key=lambda two: approx_io(plan(first, two))))


_PLANNERS = {
    "approx-case-i": _plan_case_i,
    "approx-lemma-3.1": _plan_lemma_3_1,
    "approx-key-lemma": _plan_key_lemma,
    "approx-lemma-3.3": _plan_lemma_3_3,
    "approx-tiled": _plan_tiled,
}


def min_memory(name: str, params: dict) -> int:
    """The smallest M for which algorithm ``name`` has a tiling on a DAG with ``params``.

    Examples
    --------
    >>> min_memory("approx-case-i", {"n": 4, "d": 2, "g": 2})
    24
    """
    least = least_memory(name, params, 1, lambda plan: True)
    if least is None:  # pragma: no cover
        raise InfeasibleMemory(f"{name}: no M up to {_memory_limit(params)} fits")
    return least


def _memory_limit(params) -> int:
    """The largest M the searches for a smallest fitting M try."""
    n, d, g, r, norm = plan_params(params)
    return 64 * (r + d + 4) * (d + g + 4)


def least_memory(name: str, params: dict, start: int, accept) -> int | None:
    """The smallest ``M >= start`` at which ``name`` has a tiling ``plan`` with ``accept(plan)`` (None if none)."""
    for M in range(start, _memory_limit(params) + 1):
        try:
            if accept(_PLANNERS[name](params, M)):
                return M
        except _NoFit:
            continue
    return None


def approx_plan(name: str, params: dict, M: int) -> ApproxPlan:
    """The tiling of algorithm ``name`` for ``params`` and fast memory ``M``.

    Raises
    ------
    InfeasibleMemory
        If the tiling does not fit, naming the smallest M that works.
    InvalidDAG
        If the DAG's column order is not the one the algorithm consumes.

    Examples
    --------
    >>> p = approx_plan("approx-key-lemma", {"n": 8, "d": 4, "g": 2, "order": "grouped-2"}, 64)
    >>> p.h, p.b, len(p.tiles)
    (8, 2, 6)
    """
    if name not in _PLANNERS:
        raise InvalidDAG(f"unknown approximate-attention algorithm {name!r}; known: {', '.join(_PLANNERS)}")
    try:
        return _PLANNERS[name](params, M)
    except _NoFit as exc:
        raise InfeasibleMemory(
            f"{name}: M = {M} is too small ({exc}); the smallest M it supports here is {min_memory(name, params)}"
        ) from None


def approx_io(plan: ApproxPlan) -> int:
    """The exact I/O of the schedule of ``plan``: the closed form of the module docstring.

    Examples
    --------
    >>> approx_io(approx_plan("approx-case-i", {"n": 4, "d": 2, "g": 2}, 64))
    56
    """
    n, d, r, norm = plan.n, plan.d, plan.r, plan.normalize
    D = d + norm
    B1, B2, nb = ceil_div(D, plan.b1), ceil_div(D, plan.b), ceil_div(n, plan.h)
    S = len(plan.subtiles)
    sum_sub = sum(len(vs) for vs, _ in plan.subtiles)
    sum_k = sum(len(vs) for vs, _ in plan.tiles)
    phase1 = n * B1 * sum_sub + n * d * S + (r - 1) * D + d
    phase2 = nb * D * r + n * B2 * sum_k + n * d + (n * B2 if norm and B2 > 1 else 0)
    return phase1 + phase2
