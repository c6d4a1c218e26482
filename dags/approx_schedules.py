"""Schedules of the published upper-bound algorithms for approximate attention (Papp, Sobczyk & Zouzias).

Every algorithm of the paper computes ``H = U2^T V`` (phase 1, ``H`` written
to slow memory) and then ``Out = c0 H_0 + U1 H`` (phase 2), each as a tiled
matrix product in which the entries of ``U1`` and ``U2`` are never stored but
regenerated from the rows of ``Q`` and ``K`` loaded for the tile. They differ
in the tile shapes and in which entries of ``Q`` (``K``) a tile loads:

=====================  ===================================================  ==========================
algorithm              tiles                                                column order of the DAG
=====================  ===================================================  ==========================
``approx-case-i``      Case I (Thm 1.1): output tiles ``M/4d x M/4r``,      any (``lex``)
                       whole rows of ``Q`` loaded, all ``r`` columns
``approx-lemma-3.1``   Lemma 3.1: square tiles ``sqrt(M/4)`` or strips      any (``lex``)
                       ``M/4d x d``, whichever is cheaper and fits
``approx-key-lemma``   Key Lemma 3.2: output tiles ``M/4w x w``,           ``grouped-w``
                       aggregation tiles = ``g``-subsets of groups of
                       ``w/g`` variables (``w tau(w) <= M/4``)
``approx-lemma-3.3``   Lemma 3.3: ``w = g``, groups of one variable,       ``grouped-g``
                       ``H`` tiles split into sub-tiles of ``M/4g`` columns
=====================  ===================================================  ==========================

Realisation as a red-blue schedule (variant ``recompute``: ``U1`` entries are
regenerated for every output column block, as the paper's Case I says; with
a single column block in both phases the schedule is also ``oneshot``).
The *value columns* are ``0..d-1`` and, when the DAG is normalised, a column
``den`` placed first whose ``H`` row is ``W`` and whose constant term is
``Dc``; ``D' = d + [normalize]`` counts them.

Phase 1, for every block ``C`` of ``b1`` value columns and every sub-tile
``(vars, cols)`` (the constant column rides with the first): the partial sums
``H[cols, C]`` stay in fast memory while the rows ``j = 0..n-1`` stream by:
load ``K[j, vars]`` and ``V[j, C]``, generate ``U2[j, a]`` for ``a`` in
``cols`` one at a time, multiply and add into the chains; at the end store
the ``H`` (``W``) entries and ``C0_c``.
Phase 2, for every block ``R`` of ``h`` rows and block ``C`` of ``b`` value
columns (row blocks outer): load ``C0_c`` (``Dc``), keep the partial sums
``Out[R, C]`` in fast memory, and for every aggregation tile ``(vars, cols)``
load ``Q[R, vars]``, then for each ``a`` in ``cols`` load ``H[a, C]`` and
generate ``U1[i, a]`` row by row; finally store the outputs. Normalised:
``Den`` is finished in the first column block, stored if more blocks follow
and loaded back in each of them to form ``O = Out / Den``.

The paper keeps a whole tile of ``U1`` (``U2``) or ``H`` resident; streaming
its entries one ``a`` at a time loads every ``Q``/``K``/``H`` entry the same
number of times or fewer and needs less memory, so the counts below are at
most the paper's (the tests record the ratios), except for Lemma 3.1: its
tiles regenerate ``U1`` (``U2``) from whole rows of ``Q`` (``K``), ``d``
loads per row of a tile, where the paper's count charges a square tile
only its ``t^2`` entries.

Exact I/O of every generator (the closed form its ``io_formula`` evaluates),
with ``B1 = ceil(D'/b1)``, ``B2 = ceil(D'/b)``, ``nb = ceil(n/h)``, ``S`` the
number of phase-1 sub-tiles, ``sum_sub w`` the sum of their loaded variable
counts and ``sum_k w_k`` that of the phase-2 aggregation tiles::

    IO = n B1 sum_sub w + n d S + (r - 1) D' + d                       (phase 1)
       + nb D' r + n B2 sum_k w_k + n d + [normalize][B2 > 1] n B2   (phase 2)

References
----------
P. A. Papp, A. Sobczyk, A. N. Zouzias, "Approaching I/O-optimality for
Approximate Attention": Section 3.2 (Lemma 3.1), 3.3 (Case I), Appendix A.1
(Key Lemma 3.2), Appendix B.2 (Lemma 3.3), Appendix A.3 (summation order).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, replace
from functools import lru_cache

from spartition.families.algorithm import Algorithm
from spartition.families.approx_attention import approx_attention, column_order, grouped_tiles, parse_column_order, tau
from spartition.families.moves import MoveRecorder
from spartition.families.tiling import blocks, ceil_div, chain_name, require_chain
from spartition.core.dag import inputs
from spartition.errors import InfeasibleMemory, InvalidDAG
from spartition.families.approx_formulas import approx_case, binom

__all__ = [
    "ApproxPlan",
    "APPROX_CASE_I",
    "APPROX_LEMMA_3_1",
    "APPROX_KEY_LEMMA",
    "APPROX_LEMMA_3_3",
    "ALGORITHMS",
    "approx_io",
    "approx_plan",
    "approx_schedule",
    "dag_for",
    "min_memory",
    "paper_count",
    "paper_regime",
    "paper_w",
]

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


# ----------------------------------------------------------------------------- tile choices


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


def _p(params):
    n, d, g = int(params["n"]), int(params["d"]), int(params["g"])
    norm = bool(params.get("normalize", False))
    return n, d, g, math.comb(d + g, g), norm


def _need2(h, b, w):
    return h * b + 2 * b + h * w + 3


def _need1(subtiles, b1):
    return max((len(cols) + 2) * b1 + len(vs) + 3 for vs, cols in subtiles)


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
    n, d, g, r, norm = _p(params)
    h, b = _fit2(M, h, b, w)
    b1 = _fit1(M, subtiles, b1)
    return ApproxPlan(name, n, d, g, r, norm, h, b, b1, tuple(tiles), tuple(subtiles),
                      _need1(subtiles, b1), _need2(h, b, w))


def _plan_case_i(params, M):
    n, d, g, r, norm = _p(params)
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
    n, d, g, r, norm = _p(params)
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


def _grouped_w(params, name):
    n, d, g, r, norm = _p(params)
    order = params.get("order", "lex")
    kind, W = parse_column_order(order, g)
    if kind != "grouped":
        raise InvalidDAG(
            f"{name} consumes the columns in grouped tiles: build the DAG with order='grouped-W' "
            f"(e.g. dag_for({name!r}, M, ...)); this DAG has order={order!r}"
        )
    return W


def _plan_key_lemma(params, M):
    n, d, g, r, norm = _p(params)
    D = d + norm
    W = _grouped_w(params, "approx-key-lemma")
    if 4 * W * tau(W, g) > M:
        raise _NoFit(f"Key Lemma 3.2 needs w tau(w) <= M/4 for w = {W}, i.e. M >= {4 * W * tau(W, g)}")
    tiles = _grouped(d, g, W)
    wmax = max(len(vs) for vs, _ in tiles)
    b0 = min(D, W)
    return _make("approx-key-lemma", params, M, M // (4 * W), b0, wmax, b0, tiles, tiles)


def _plan_lemma_3_3(params, M):
    n, d, g, r, norm = _p(params)
    D = d + norm
    W = _grouped_w(params, "approx-lemma-3.3")
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


_PLANNERS = {
    "approx-case-i": _plan_case_i,
    "approx-lemma-3.1": _plan_lemma_3_1,
    "approx-key-lemma": _plan_key_lemma,
    "approx-lemma-3.3": _plan_lemma_3_3,
}


def min_memory(name: str, params: dict) -> int:
    """The smallest M for which algorithm ``name`` has a tiling on a DAG with ``params``.

    Examples
    --------
    >>> min_memory("approx-case-i", {"n": 4, "d": 2, "g": 2})
    24
    """
    least = _least_memory(name, params, 1, lambda plan: True)
    if least is None:  # pragma: no cover
        raise InfeasibleMemory(f"{name}: no M up to {_memory_limit(params)} fits")
    return least


def _memory_limit(params) -> int:
    """The largest M the searches for a smallest fitting M try."""
    n, d, g, r, norm = _p(params)
    return 64 * (r + d + 4) * (d + g + 4)


def _least_memory(name: str, params: dict, start: int, accept) -> int | None:
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


# ----------------------------------------------------------------------------- closed form


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


def paper_count(name: str, params: dict, M: int) -> float:
    """The paper's own I/O count for algorithm ``name`` (its explicit constants, both products).

    Each count is the paper's expression with the tile sizes and per-tile
    costs its proof states; none depends on the tiling the generator
    realises, so comparing a replay with it can catch a wrong tiling. Where
    it is the paper's statement is :func:`paper_regime`.

    * Case I (Section 3.3): output tiles of ``M/4d`` rows and ``c0 d`` value
      columns with ``c0 d r <= M/4`` (``c0 = min(1, M / 4dr)``), each computed
      in one iteration at I/O ``3M/4`` (``M/4`` loads of ``Q``, ``M/4`` of
      ``H``, ``M/4`` outputs), ``(n / (M/4d)) (d / c0 d)`` of them, and
      ``H = U2^T V`` "at the same I/O cost": ``2 (4nd/M)(1/c0)(3M/4)
      = 6 n d / c0``. (``3 n d``, every input loaded once, is the lower bound.)
    * Lemma 3.1 (Section 3.2): the minimum of the two tilings, as the lemma
      states ``min(n r d^2/M, n r d/sqrt(M))``: square tiles ``t = sqrt(M/4)``,
      ``2 (n/t)(r/t)(d/t)(2 t^2) = 8 n r d / sqrt(M)``, and strips
      ``t = M/4d``, ``2 (n/t)(r/t)(2 M/4) = 16 n r d^2 / M``.
    * Key Lemma 3.2 (Appendix A.1): ``2 (4nw/M)(d/w) C(dg/w, g) M
      = 8 n d C(dg/w, g)``, with ``dg/w`` the number of groups as the paper
      writes it (a generalised binomial when ``g`` does not divide ``w``;
      the realised tiling's integer count is in :func:`approx_io`).
    * Lemma 3.3 (Appendix B.2, equation (3)): ``2 (n/(M/4g))(d/g)(C(d, g)
      + 4rg/M) M = 8 n d (C(d, g) + 4 r g / M)``.

    Examples
    --------
    >>> paper_count("approx-key-lemma", {"n": 8, "d": 4, "g": 2, "order": "grouped-2"}, 64)
    1536.0
    >>> paper_count("approx-lemma-3.1", {"n": 16, "d": 6, "g": 2}, 64) == 8 * 16 * 28 * 6 / 8
    True
    """
    n, d, g, r, norm = _p(params)
    if name == "approx-case-i":
        c0 = min(1.0, M / (4 * d * r))
        return 6 * n * d / c0
    if name == "approx-lemma-3.1":
        return min(8 * n * r * d / math.sqrt(M), 16 * n * r * d * d / M)
    W = _grouped_w(params, name)
    if name == "approx-key-lemma":
        return 8 * n * d * binom(d * g / W, g)
    return 8 * n * d * (math.comb(d, g) + 4 * r * g / M)


def paper_regime(name: str, params: dict, M: int) -> bool:
    """Whether ``(params, M)`` lies where the paper states the bound that :func:`paper_count` transcribes.

    With the project's reading of the cases (:func:`spartition.families.approx_formulas.approx_case`):
    Case I for ``approx-case-i`` (Theorem 1.1); ``M < d r`` for Lemma 3.1
    (``M = o(d r)``, Cases II-IV); Case II for Key Lemma 3.2 (the lemma says
    "in Case II"; its construction runs wherever ``w tau(w) <= M/4``); Case
    III for Lemma 3.3 (its further conditions ``d = O(g^(2-delta1))``,
    ``M = O(g^delta2)`` are asymptotic and not checked).

    Examples
    --------
    >>> paper_regime("approx-lemma-3.1", {"n": 16, "d": 6, "g": 2}, 24)
    True
    >>> paper_regime("approx-lemma-3.1", {"n": 16, "d": 6, "g": 2}, 168)
    False
    """
    n, d, g, r, norm = _p(params)
    cases = {"approx-case-i": ("I",), "approx-lemma-3.1": ("II", "III", "IV"),
             "approx-key-lemma": ("II",), "approx-lemma-3.3": ("III",)}[name]
    return approx_case({"d": d, "g": g, "r": r}, M) in cases


# ----------------------------------------------------------------------------- the schedule


def _value_columns(d, norm):
    return (["den"] if norm else []) + list(range(d))


def _h_node(a, c, n):
    """The finished ``H_a_c`` (``W_a`` for the column ``den``) of a chain sum over ``n`` rows."""
    if c == "den":
        return chain_name(f"W_{a}", f"U2_0_{a}", n - 1, n)
    return chain_name(f"H_{a}_{c}", f"R_0_{a}_{c}", n - 1, n)


def _phase1(rec, G, plan):
    n = plan.n
    for C in blocks(_value_columns(plan.d, plan.normalize), plan.b1):
        vc = [c for c in C if c != "den"]
        for k, (vs, cols) in enumerate(plan.subtiles):
            const = k == 0
            for j in range(n):
                rec.load_all(f"K_{j}_{l}" for l in vs)
                rec.load_all(f"V_{j}_{c}" for c in vc)
                if const and j > 0:
                    for c in vc:
                        rec.fold(chain_name(f"H_0_{c}", f"V_0_{c}", j, n), chain_name(f"H_0_{c}", f"V_0_{c}", j - 1, n))
                for a in cols:
                    u = f"U2_{j}_{a}"
                    rec.compute(u)
                    for c in C:
                        if c != "den":
                            rec.add_term(f"H_{a}_{c}", f"R_0_{a}_{c}", j, n, f"R_{j}_{a}_{c}")
                        elif j > 0:
                            rec.fold(chain_name(f"W_{a}", f"U2_0_{a}", j, n), chain_name(f"W_{a}", f"U2_0_{a}", j - 1, n))
                    if not (j == 0 and "den" in C):
                        rec.delete(u)
                rec.delete_all(f"K_{j}_{l}" for l in vs)
                for c in vc:
                    if not (const and j == 0):
                        rec.delete(f"V_{j}_{c}")
            for a in cols:
                for c in C:
                    rec.evict(_h_node(a, c, n))
            if const:
                for c in vc:
                    rec.compute(f"C0_{c}")
                    rec.evict(f"C0_{c}")
                    rec.delete(chain_name(f"H_0_{c}", f"V_0_{c}", n - 1, n))


def _phase2(rec, G, plan):
    n, r = plan.n, plan.r
    position = {a: t + 1 for t, a in enumerate(G.graph["columns"])}
    cblocks = blocks(_value_columns(plan.d, plan.normalize), plan.b)

    def const(c):
        return "Dc" if c == "den" else f"C0_{c}"

    def acc(i, c):
        return (f"Den_{i}", "Dc") if c == "den" else (f"Out_{i}_{c}", f"C0_{c}")

    for R in blocks(range(n), plan.h):
        for C in cblocks:
            for c in C:
                rec.load(const(c))
            for vs, cols in plan.tiles:
                rec.load_all(f"Q_{i}_{l}" for i in R for l in vs)
                for a in cols:
                    t = position[a]
                    for c in C:
                        rec.load(_h_node(a, c, n))
                    for i in R:
                        rec.compute(f"U1_{i}_{a}")
                        for c in C:
                            p = f"DP_{i}_{a}" if c == "den" else f"P_{i}_{c}_{a}"
                            rec.compute(p)
                            name, first = acc(i, c)
                            rec.compute(chain_name(name, first, t, r))
                            if t > 1:
                                rec.delete(chain_name(name, first, t - 1, r))
                            rec.delete(p)
                        rec.delete(f"U1_{i}_{a}")
                    for c in C:
                        rec.delete(_h_node(a, c, n))
                    if t == 1:
                        for c in C:
                            rec.delete(const(c))
                rec.delete_all(f"Q_{i}_{l}" for i in R for l in vs)
            for i in R:
                if plan.normalize:
                    if "den" not in C:
                        rec.load(f"Den_{i}")
                    for c in C:
                        if c == "den":
                            continue
                        rec.compute(f"O_{i}_{c}")
                        rec.evict(f"O_{i}_{c}")
                        rec.delete(f"Out_{i}_{c}")
                    if "den" in C and len(cblocks) > 1:
                        rec.store(f"Den_{i}")
                    rec.delete(f"Den_{i}")
                else:
                    for c in C:
                        rec.evict(f"Out_{i}_{c}")


def _recomputes(plan: ApproxPlan) -> bool:
    """Whether the schedule computes some ``U1``/``U2`` entry more than once (more than one column block)."""
    D = plan.d + plan.normalize
    return ceil_div(D, plan.b1) > 1 or ceil_div(D, plan.b) > 1


def approx_schedule(name: str, G, M: int, variant: str = "recompute"):
    """The schedule of algorithm ``name`` on the ``approx-attention`` DAG ``G`` with fast memory ``M``.

    Parameters
    ----------
    name : str
        ``"approx-case-i"``, ``"approx-lemma-3.1"``, ``"approx-key-lemma"``
        or ``"approx-lemma-3.3"``.
    G : networkx.DiGraph
        Built by :func:`spartition.families.approx_attention.approx_attention` with
        ``shape="chain"`` and the column order the algorithm consumes
        (:func:`dag_for` builds it).
    M : int
        Fast memory size.
    variant : {"recompute", "oneshot"}
        Game variant of the schedule. With more than one block of value
        columns the entries of ``U1`` (``U2``) are regenerated for each block,
        which only ``recompute`` allows.

    Returns
    -------
    Schedule
        In ``variant``; its I/O is :func:`approx_io` of the plan,
        recorded in ``meta`` with the tile sizes.

    Raises
    ------
    InfeasibleMemory
        If the tiling does not fit in ``M`` (naming the smallest M that works),
        or ``variant="oneshot"`` at an ``M`` whose tiling recomputes.
    InvalidDAG
        If ``G`` is not an ``approx-attention`` DAG with chain sums in the
        order the algorithm needs.

    Examples
    --------
    >>> from spartition.core.game import replay
    >>> G = dag_for("approx-key-lemma", 64, n=8, d=4, g=2)
    >>> replay(G, approx_schedule("approx-key-lemma", G, 64)).io
    728
    """
    if G.graph.get("family") != FAMILY:
        raise InvalidDAG(f"{name} runs on approx-attention DAGs, got family {G.graph.get('family')!r}")
    require_chain(G, name)
    params = G.graph["params"]
    plan = approx_plan(name, params, M)
    consumed = [a for _, cols in plan.tiles for a in cols]
    if consumed != list(G.graph["columns"]):
        raise InvalidDAG(f"{name}: the DAG sums its columns in order {params.get('order')!r}, not in the order the tiles consume them")
    if variant not in ("recompute", "oneshot"):
        raise ValueError(f"unknown variant {variant!r}; expected 'recompute' or 'oneshot'")
    if variant == "oneshot" and _recomputes(plan):
        least = _least_memory(name, params, M, lambda p: not _recomputes(p))
        raise InfeasibleMemory(
            f"{name}: at M = {M} the tiling has several column blocks and regenerates U1/U2 entries, "
            f"which the oneshot variant forbids; use variant='recompute' or M >= {least}"
        )
    rec = MoveRecorder(M, inputs(G), variant=variant)
    _phase1(rec, G, plan)
    _phase2(rec, G, plan)
    return rec.schedule(algorithm=name, h=plan.h, b=plan.b, b1=plan.b1, tiles=len(plan.tiles),
                        subtiles=len(plan.subtiles), io=rec.io, peak=rec.peak)


def dag_for(name: str, M: int, n: int, d: int, g: int, normalize: bool = False, shape: str = "chain", scaled: bool = True):
    """The ``approx-attention`` DAG in the column order algorithm ``name`` consumes at fast memory ``M``.

    ``lex`` for Case I and Lemma 3.1, ``grouped-w`` with the paper's ``w``
    (:func:`paper_w`) for Key Lemma 3.2, ``grouped-g`` for Lemma 3.3.

    Raises
    ------
    InfeasibleMemory
        For Key Lemma 3.2 when no ``g <= w <= d`` has ``w tau(w) <= M/4``.

    Examples
    --------
    >>> dag_for("approx-key-lemma", 200, 4, 6, 2).graph["params"]["order"]
    'grouped-3'
    """
    if name == "approx-key-lemma":
        w = paper_w(d, g, M)
        if w is None:
            raise InfeasibleMemory(f"approx-key-lemma: no w in [{g}, {d}] has w tau(w) <= M/4 at M = {M}; needs M >= {4 * g * tau(g, g)}")
        order = f"grouped-{w}"
    elif name == "approx-lemma-3.3":
        order = f"grouped-{g}"
    else:
        order = "lex"
    return approx_attention(n, d, g, normalize=normalize, order=order, shape=shape, scaled=scaled)


def _algorithm(name, source, doc):
    def generate(G, M, variant="recompute", **options):
        if options:
            raise TypeError(f"{name} takes no options besides variant, got {sorted(options)}")
        return approx_schedule(name, G, M, variant)

    generate.__name__ = name.replace("-", "_").replace(".", "_")
    generate.__doc__ = doc
    return Algorithm(
        name=name,
        families=(FAMILY,),
        generate=generate,
        io_formula=lambda params, M: approx_io(approx_plan(name, params, M)),
        min_memory=lambda params: min_memory(name, params),
        source=source,
    )


APPROX_CASE_I = _algorithm(
    "approx-case-i",
    "Papp, Sobczyk & Zouzias, Section 3.3 (Case I, Theorem 1.1): output tiles M/4d x M/4r, whole rows of U1 regenerated",
    """Case I: output tiles of ``h = M/4d`` rows and ``b = M/4r`` value columns.

    Each output tile loads the whole rows of ``Q`` once (``S = 1``,
    ``sum w = d``) and regenerates all ``r`` columns of ``U1``; phase 1 uses
    ``H`` tiles of all ``r`` columns by ``b1 = M/4r`` value columns. Exact
    I/O: ``n d (B1 + B2 + 2) + (r - 1) D' + d + ceil(n/h) D' r
    + [normalize][B2 > 1] n B2``, i.e. ``4 n d + r d + ceil(n/h) r d``
    without normalisation once ``M >= 4 r d``. Needs ``M >= 4 max(d, r)``.
    Measured against the paper's upper count ``6 n d / c0``
    (:func:`paper_count`): ratio 0.70-0.85 (n = 64, d = 3, g = 1, M = 400:
    804 vs 1152; n = 16, d = 2, g = 2, M = 64: 164 vs 192), and 1.40-1.71
    times the lower bound ``3 n d`` (804 vs 576, 164 vs 96); the excess over
    ``3 n d`` is the ``ceil(n/h) r d`` loads of ``H``.
    """,
)

APPROX_LEMMA_3_1 = _algorithm(
    "approx-lemma-3.1",
    "Papp, Sobczyk & Zouzias, Section 3.2 (Lemma 3.1): min of square tiles sqrt(M/4) and strips M/4d x d",
    """Lemma 3.1: generic tiling, the cheaper of square tiles ``t = sqrt(M/4)`` and strips ``t = M/4d``.

    The lemma is ``min(n r d^2 / M, n r d / sqrt(M))``: square tiles where
    they are cheaper (asymptotically ``M < d^2``), strips otherwise. Both
    tilings are planned and the one with the smaller exact I/O that fits is
    kept (either may be the only one that fits). Phase 2 output tiles
    ``t x t`` (square) or ``t x D'`` (strip) with whole rows of ``Q``
    (``sum_k w_k = d``); phase 1 ``H`` tiles of ``s = t`` consecutive
    columns (``S = ceil((r - 1)/s)``, each loading whole rows of ``K``).
    Exact I/O: ``n d S (B1 + 1) + (r - 1) D' + d + ceil(n/h) D' r
    + n d (B2 + 1) + [normalize][B2 > 1] n B2``. Measured against the
    paper's ``min(8 n r d / sqrt(M), 16 n r d^2 / M)`` in its regime
    ``M < d r``: ratio 1.06-1.70 (n = 16, d = 6, g = 2: 7272 vs 4390 at
    M = 24, 8616 vs 5069 at M = 18, 4056 vs 3104 at M = 48; n = 32, d = 4,
    g = 4, M = 256: 2376 vs 2240).
    """,
)

APPROX_KEY_LEMMA = _algorithm(
    "approx-key-lemma",
    "Papp, Sobczyk & Zouzias, Key Lemma 3.2 (Appendix A.1): grouped tiles, g-subsets of groups of w/g variables",
    """Key Lemma 3.2: output tiles ``M/4w x w``; aggregation tiles are the ``g``-subsets of ``m = ceil(d/(w//g))`` groups.

    The DAG must be built with ``order="grouped-w"`` and ``w tau(w) <= M/4``
    (:func:`dag_for` takes the largest such ``w``). ``S = C(m, g)`` tiles
    with ``sum w = C(m - 1, g - 1) d`` (one tile of all ``d`` variables when
    ``m <= g``). Exact I/O: ``n (B1 + B2) C(m-1, g-1) d + n d C(m, g)
    + (r - 1) D' + d + ceil(n/h) D' r + n d + [normalize][B2 > 1] n B2``.
    Measured against the paper's ``8 n d C(dg/w, g)`` (its per-tile cost
    ``M``; a streamed tile costs about ``M/2``): ratio 0.44-0.69 (n = 16,
    d = 6, g = 2: 5088 vs 11520 at M = 48, 1488 vs 2304 at M = 256; in Case
    II, n = 16, d = 12, g = 1, M = 120: 2544 vs 3686, where Lemma 3.1 costs
    3852). ``C(m, g) >= C(dg/w, g)``, equal when ``g`` divides ``w`` and
    ``w/g`` divides ``d``.
    """,
)

APPROX_LEMMA_3_3 = _algorithm(
    "approx-lemma-3.3",
    "Papp, Sobczyk & Zouzias, Lemma 3.3 (Appendix B.2): w = g, groups of one variable, H tiles split at M/4g",
    """Lemma 3.3: ``w = g``, one tile per ``g``-subset of variables, ``H`` tiles split into sub-tiles of ``M/4g`` columns.

    The DAG must be built with ``order="grouped-g"``. ``S = sum_k
    ceil(t_k / (M/4g))`` over the tile widths ``t_k`` (the paper's count of
    sub-tiles); for ``d >= g``: exact I/O ``n g S B1 + n d S + (r - 1) D' + d
    + ceil(n/h) D' r + n B2 g C(d, g) + n d + [normalize][B2 > 1] n B2``.
    The lemma's asymptotic conditions (``d = O(g^{2-delta})``,
    ``M = O(g^delta)``) are not checked; the generator runs wherever its
    tiles fit (``M >= 4g``). The proof's step ``C(d, g) <= 4 r g / M``
    (which turns equation (3) into ``O(n r d g / M)``) is asymptotic only and
    fails at small sizes, e.g. ``d = 3, g = 2, M = 29`` (``3 > 80/29``). Measured against the paper's
    ``8 n d (C(d, g) + 4 r g / M)``: ratio 0.34-0.45 (n = 16, d = 6, g = 2,
    M = 48: 5088 vs 15104; n = 8, d = 5, g = 3, M = 40: 3840 vs 8576).
    """,
)

ALGORITHMS = (APPROX_CASE_I, APPROX_LEMMA_3_1, APPROX_KEY_LEMMA, APPROX_LEMMA_3_3)
