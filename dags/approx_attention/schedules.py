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

from spartition.core.algorithm import Algorithm
from spartition.families.approx_attention.dag import approx_attention, tau
from spartition.authoring.moves import MoveRecorder
from spartition.families.attention.tiling import blocks, ceil_div, chain_name, require_chain
from spartition.core.dag import inputs
from spartition.errors import InfeasibleMemory, InvalidDAG

from spartition.families.approx_attention.paper import paper_count, paper_regime
from spartition.families.approx_attention.plans import FAMILY, ApproxPlan, approx_io, approx_plan, least_memory, min_memory, paper_w

__all__ = [
    "ApproxPlan",
    "APPROX_CASE_I",
    "APPROX_LEMMA_3_1",
    "APPROX_KEY_LEMMA",
    "APPROX_LEMMA_3_3",
    "ALGORITHMS",
    "APPROX_TILED",
    "approx_io",
    "approx_plan",
    "approx_schedule",
    "dag_for",
    "min_memory",
    "paper_count",
    "paper_regime",
    "paper_w",
]

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
        Built by :func:`spartition.families.approx_attention.dag.approx_attention` with
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
        least = least_memory(name, params, M, lambda p: not _recomputes(p))
        # None: no M up to the DAG's whole size gives a tiling without regeneration (a message read "M >= None")
        where = (f"M >= {least}" if least is not None
                 else "no M up to the whole DAG avoids it (every tiling of this size regenerates)")
        raise InfeasibleMemory(
            f"{name}: at M = {M} the tiling has several column blocks and regenerates U1/U2 entries, "
            f"which the oneshot variant forbids; use variant='recompute' or {where}"
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

APPROX_TILED = _algorithm(
    "approx-tiled",
    "the tile space of Papp, Sobczyk & Zouzias's algorithms (Lemma 3.1, Key Lemma 3.2) searched by exact count",
    """The cheapest tiling of the space the four published algorithms share, chosen by its exact I/O.

    Not an algorithm of the paper: the paper fixes its tiles (``M/4`` of
    the memory each for ``Q``, ``H`` and the outputs) and loads whole rows of
    ``K`` in Lemma 3.1's phase 1; this plan searches the output tile ``h x
    b``, the value columns ``b1`` of an ``H`` tile and the grouping of the
    monomials into tiles that load only the variables they use, over every
    size that fits ``M`` (``spartition.families.approx_attention.plans``), and keeps the
    smallest :func:`approx_io`. The published plans that fit are among the
    candidates, so its I/O is at most theirs on the same DAG. Runs on any
    column order (the aggregation tiles follow it) from ``M = 6 + min(g,
    d)``. Measured: n = 16, d = 6, g = 2 (Case III): 5,448 against Lemma
    3.1's 12,648 at M = 16, 3,336 against 7,272 at M = 24.
    """,
)
