"""Forward attention's segment counts proven in the standard game (with recomputation), through designated events.

Every count of :mod:`spartition.families.attention.forward.bounds` is proven
for the oneshot game: with recomputation a segment can rebuild a value from
inputs it reads and charge nothing. The counts here count, per segment, the
distinct ``Q K^T`` (and ``A V``) products with a *designated* compute event in
it (:mod:`spartition.partition.designation`): every counted node that reaches
an output has one, so the segments' counts sum to at least the number of
counted nodes, and a designated edge that crosses a segment boundary puts one
of its nodes in the segment's set ``B`` of red pebbles at its ends, loads and
stores (the designation lemma, parts 2 and 3). Valid in both games.

* :func:`forward_recompute_capacity`, :func:`forward_recompute_joint_capacity`,
  :func:`forward_recompute_bound`: the ``Q K^T`` products of dense attention
  forward, alone and with the ``A V`` products.

References
----------
Hong & Kung (STOC 1981); Irony, Toledo & Tiskin (JPDC 2004); Saha & Ye, "I/O
Complexity of Attention, or How Optimal is FlashAttention?" (ICML 2024).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from spartition.families.attention.forward.bounds import charged_products
from spartition.families.common.papers import SEGMENTS
from spartition.families.common.programs import known_above, known_below, program_maximum
from spartition.families.common.segments import SegmentBound, capped_shared_bound, timed_best
from spartition.study.formulas import Formula


__all__ = ["FORWARD_AV_FORMULA", "FORWARD_RECOMPUTE_FORMULA", "RECOMPUTE_SECONDS", "forward_recompute_av_capacity",
           "forward_recompute_bound", "forward_recompute_capacity", "forward_recompute_joint_capacity"]


@lru_cache(maxsize=1 << 16)
def forward_recompute_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most distinct ``Q K^T`` products with a designated event in one segment of dense attention forward (both games).

    Parameters
    ----------
    n, d : int
        ``Q, K, V`` are ``n x d``.
    T, L : int
        The budgets of :func:`matmul_segment_capacity` (``|B'|`` and the
        inputs red at the start or loaded).

    Returns
    -------
    int
        The maximum over integers ``r, p`` in ``0 .. min(n, L // d)`` and
        ``s`` in ``d (r + p) .. L``, with ``c = min(n^2, T - s - r) >= 0``, of
        ``min(F(s, c) + d r p, F(s, c + r p))``, where ``F(s, c) = min(s/2
        sqrt(c), d c, (s/2)^2)`` (:func:`~spartition.families.attention.forward.bounds.charged_products`).

    Notes
    -----
    **Proof** (any valid schedule of the standard game; the DAG with any
    summation shape and order). ``Pair(i, j)`` is the sum tree of ``S_ij``
    (its products ``QK_i_j_l`` and adds) with ``A_ij``; ``R_i`` is every other
    non-input of row ``i``: the adds of ``l_i``, ``r_i``, the products
    ``AV_i_j_c``, the adds of ``T_ic`` and the outputs ``O_ic``. These sets are
    disjoint; every successor of ``A_ij`` is in ``R_i`` and every successor of
    a node of ``R_i`` is in ``R_i``. ``B'`` and the budgets are those of
    :func:`matmul_segment_capacity`.

    1. *Inputs.* The entries of ``Q`` and ``K`` read by designated products
       in the segment, ``q`` and ``k`` of them, were red at its start or
       loaded: ``q + k <= L``, and they lie in ``B'``.
    2. *Copies.* Each node of the tree of ``S_ij`` but its root has one
       successor, in the tree. So every designated product event lies in the
       *copy* of the tree rooted at a designated event of ``S_ij``: the events
       reached from it by operand links, one per tree node (follow designated
       consumers up from the product; each event reads one event per
       operand). With recomputation ``A_ij`` may have several designated
       events, and ``S_ij`` and its tree several copies.
    3. *Charged pairs.* A pair with a designated product in the segment is
       *charged* if ``Pair(i, j)`` meets ``B'``: one node of ``B'`` each, so
       ``c`` charged pairs, ``c <= T - q - k - (step 5's charges)``.
    4. *Closed pairs.* An uncharged one is *closed*. Take the copy holding a
       designated product event in the segment. If it had an event outside the
       segment, a designated edge of the copy would cross a boundary and put
       a tree node in ``B'`` (designation lemma, part 2). So the whole copy is
       in the segment: all ``d`` products of the pair (at most ``d`` counted),
       which read the rows ``Q_i`` and ``K_j`` in full (``d r <= q``,
       ``d p <= k`` for the ``r`` rows and ``p`` columns with a closed pair;
       at most ``r p`` closed pairs). Its root's event is read by a designated
       event ``e_A`` of ``A_ij``, in the segment (else ``S_ij`` is in ``B'``,
       part 2). ``A_ij`` is not an output, so a designated event of a
       successor ``X`` in ``R_i`` reads ``e_A``, in the segment (else ``A_ij``
       is in ``B'``). Nothing is assumed of ``A_ij``'s other computations or
       consumers: a segment may rebuild ``A_ij`` for one consumer only.
    5. *Closed rows.* From that event of ``X``, designated consumers lead up
       to the final event of an output ``O_ic``, all in ``R_i`` (every
       designated event of a non-output has a designated consumer). If the
       chain leaves the segment, the node it leaves from is red at the end or
       stored (part 2); if not, ``O_ic`` is stored in the segment or red at its
       end (part 3). So ``R_i`` meets ``B'``: ``r`` charges, disjoint from the
       inputs and the pairs', and ``q + k + c + r <= T``.
    6. *Loomis-Whitney.* The counted products lie in ``{(i, j, l): Q_il
       read, K_jl read, (i, j) charged or closed}``: at most ``min(sqrt(q k
       (c + r p)), d (c + r p), q k)``; the charged pairs' alone at most
       ``min(sqrt(q k c), d c, q k)``, the closed pairs' ``d r p``. With
       ``q k <= (s/2)^2``, ``s = q + k``, the count is at most both
       ``F(s, c) + d r p`` and ``F(s, c + r p)``, each growing with ``c``.

    Compared with the oneshot count (:func:`~spartition.families.attention.forward.bounds.segment_capacity`):
    a closed row pays one node of ``B'`` instead of ``d`` (its ``d`` sums
    ``T_ic`` need not all be touched: ``A_ij`` may be rebuilt for the row sum
    alone), the rows of ``V`` are not needed, and no row sum is charged.

    Examples
    --------
    A middle segment at ``M = 8, S = 8`` (``T = 24, L = 16``), ``n = 32, d = 2``:

    >>> forward_recompute_capacity(32, 2, 24, 16)
    35

    (``r = p = 4`` closed rows and columns, ``s = 16``, ``c = 24 - 16 - 4 = 4``:
    ``min(8 sqrt(4) + 2 * 16, 8 sqrt(20)) = min(48, 35.8)``; the products of
    ``c = 8`` charged pairs alone, ``min(8 sqrt(8), 16) = 16``.)
    """
    # at fixed r and s the count grows with p, which the budgets leave free up to min(n, s // d - r)
    r = np.arange(min(n, L // d) + 1)[:, None]
    s = np.arange(L + 1)[None, :]
    p = np.minimum(n, s // d - r)
    c = np.minimum(n * n, T - s - r)
    ok = (p >= 0) & (c >= 0)
    if not ok.any():
        return 0
    c, sf, closed = np.maximum(c, 0).astype(float), s.astype(float), (r * np.maximum(p, 0)).astype(float)
    value = np.minimum(charged_products(sf, c, d) + d * closed, charged_products(sf, c + closed, d))
    return math.floor(float(value[ok].max()) + 1e-6)


@lru_cache(maxsize=1 << 16)
def forward_recompute_joint_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most distinct ``Q K^T`` and ``A V`` products with a designated event in one segment (both games, dense).

    Parameters
    ----------
    n, d, T, L : int
        As in :func:`forward_recompute_capacity`.

    Returns
    -------
    int
        The maximum over integers ``r, p, s, v, c, t >= 0`` with ``d (r + p)
        <= s``, ``s + v <= L``, ``s + v + c + t <= T``, ``r <= t``, ``c <=
        n^2`` of ``min(F(s, c) + d r p, F(s, c + r p)) + min(sqrt(alpha v t),
        d alpha, n v, n t)``, ``alpha = min(n^2, c + r p)``.

    Notes
    -----
    **Proof**, continuing :func:`forward_recompute_capacity`'s steps (the same
    ``B'``, ``Pair(i, j)``, ``R_i``, closed pairs, ``r`` and ``p``).

    7. *A V products.* ``Tree'(T_ic)``, the sum tree of ``T_ic`` (its products
       ``AV_i_j_c`` and adds) with the output ``O_ic``, is an in-tree ending in
       an output: each node has exactly one designated event (designation
       lemma, part 1), and, as in :func:`matmul_segment_capacity`'s step 3,
       every such tree with a designated event in the segment meets ``B'``,
       in ``R_i``. With ``t`` the nodes of ``R_i``'s (all rows) in ``B'``: at
       least the ``t_0`` trees touched, and at least one per closed row (step
       5), so ``t >= max(t_0, r)``; with ``c`` now the pairs meeting ``B'``
       that have a designated ``Q K^T`` product in the segment or whose
       ``A_ij`` a designated ``A V`` product there reads (one charge each,
       at least step 3's), ``s + v + c + t <= T`` (``v`` the entries of ``V``
       read by designated ``A V`` events, red at the start or loaded, so
       ``s + v <= L``).
    8. *The A's read.* A designated ``AV_i_j_c`` event in the segment reads a
       designated event ``f`` of ``A_ij``. If ``f`` is earlier, ``A_ij`` is red
       at the start or loaded (part 2). Else ``f`` reads a designated event of
       ``S_ij``: earlier, and ``S_ij`` is in ``B'``; in the segment, and its
       copy of the tree meets ``B'`` (a crossing edge) or lies in the segment,
       when the pair has designated products here and no node in ``B'``: it
       is closed. So the ``A_ij`` read belong to ``alpha <= c + r p`` pairs
       (and ``alpha <= n^2``).
    9. *Loomis-Whitney.* The ``A V`` products counted lie in ``{(i, j, c):
       A_ij read, V_jc read, (i, c) touched}``: at most ``sqrt(alpha v t_0)``,
       ``d alpha``, ``n v`` and ``n t_0``, each at most its value with ``t``.

    Everything grows with every variable, so the maximum over ``c`` is at
    ``c = min(n^2, T - s - v - t)`` (the only constraints on ``c`` are
    ``c <= n^2`` and the budget) and over ``p`` at ``p = min(n, floor(s /
    d) - r)`` (its only constraints), and
    :func:`~spartition.families.common.programs.program_maximum` finds the
    maximum over the other four exactly: a cell's value at its upper corner,
    with ``c`` read at ``T`` minus the lower corner and ``p`` from the upper
    ``s`` and the lower ``r``, bounds it (the closed rows read as ``min(r,
    t)``, still feasible), and a cell with a constraint failing at its lower
    corners holds no feasible point. (Eliminating ``c`` gives the same
    maximum as searching it, about 7 times faster: n = 64, d = 4, M = 64 went
    from 79 s to about 12 s; eliminating ``p`` too, about 3 s.)

    Examples
    --------
    >>> forward_recompute_joint_capacity(2, 1, 7, 4), forward_recompute_joint_capacity(32, 2, 24, 16)
    (4, 39)
    """
    return _joint_program(n, d, T, L, with_qk=True)


@lru_cache(maxsize=1 << 16)
def forward_recompute_av_capacity(n: int, d: int, T: int, L: int) -> int:
    """The most distinct ``A V`` products with a designated event in one segment (both games, dense).

    Parameters
    ----------
    n, d, T, L : int
        As in :func:`forward_recompute_capacity`.

    Returns
    -------
    int
        :func:`forward_recompute_joint_capacity`'s program with the ``Q K^T``
        term left out: the maximum of ``min(sqrt(alpha v t), d alpha, n v, n
        t)``, ``alpha = min(n^2, c + r p)``, under the same constraints.

    Notes
    -----
    **Proof.** Steps 1-9 of :func:`forward_recompute_joint_capacity` bound
    the ``A V`` products of a segment by step 9's term over quantities that
    satisfy the constraints of steps 1-8, whether or not the ``Q K^T``
    products are counted too (a closed pair's ``Q K^T`` products still read
    its rows in full, step 4, and still lie in the segment; they are only not
    counted). Leaving them out matters for the bound, not the count: a ``Q
    K^T`` product rebuilt in many segments has a designated event in each
    (one per copy of its tree) and is counted in each, while an ``A V``
    product, in the in-tree of an output, has exactly one designated event
    (designation lemma, part 1). With ``W = n^2 d`` the segments needed can
    be more than with both products: where ``M`` is large enough for a
    segment to rebuild many ``A_ij`` from whole rows of ``Q`` and ``K``
    (``n = 32, d = 2, M = 16``: 713 against the joint count's 576).

    Examples
    --------
    >>> forward_recompute_av_capacity(2, 1, 7, 4), forward_recompute_av_capacity(32, 2, 24, 16)
    (3, 21)
    """
    return _joint_program(n, d, T, L, with_qk=False)


#: (n, d, with_qk) -> {(T, L): maximum}: the maxima found, a start for the searches at larger budgets
_MAXIMA: dict = {}


def _joint_program(n: int, d: int, T: int, L: int, with_qk: bool) -> int:
    """The maximum of the joint count's program, with its ``Q K^T`` term or without it.

    Each search starts from the largest maximum already found at smaller
    budgets (:func:`~spartition.families.common.programs.known_below`: the
    program only loosens as ``T`` and ``L`` grow), which changes its speed,
    never its answer: the ``A V`` count at n = 128, d = 8, M = 256 takes 15 s
    instead of 32 s.
    """
    nn = n * n

    def bound(lo, hi):  # variables r, s, v, t; c = min(n^2, T - s - v - t) and p = min(n, s // d - r), where it peaks
        r0, s0, v0, t0 = lo.T
        r1, s1, v1, t1 = hi.T
        room = T - s0 - v0 - t0
        ok = (s1 >= d * r0) & (s0 + v0 <= L) & (room >= 0) & (t1 >= r0)
        c1 = np.minimum(nn, np.maximum(room, 0)).astype(float)
        p1 = np.clip(s1 // d - r0, 0, n)  # negative only where the cell is infeasible (ok is false)
        closed = (np.minimum(r1, t1) * p1).astype(float)
        s1, v1, t1 = s1.astype(float), v1.astype(float), t1.astype(float)
        alpha = np.minimum(nn, c1 + closed)
        value = np.minimum.reduce([np.sqrt(alpha * v1 * t1), d * alpha, n * v1, n * t1])
        if with_qk:
            value = value + np.minimum(charged_products(s1, c1, d) + d * closed, charged_products(s1, c1 + closed, d))
        return np.where(ok, value, -np.inf)

    known = _MAXIMA.setdefault((n, d, with_qk), {})
    value = program_maximum(bound, [0] * 4, [min(n, L // d), L, min(L, n * d), T], at_least=known_below(known, T, L),
                            at_most=known_above(known, T, L))
    known[(T, L)] = value
    return value


#: Seconds the registered formula ``segment-forward-recompute-lower`` gives each evaluation (both counts'
#: searches together). Measured on one loaded core: n = 64, d = 8, M = 256 takes about 23 s, n = 256, d = 8,
#: M = 256 about 18 s, n = 32, d = 2 under 2 s per M. A count whose search is cut is skipped (:func:`forward_recompute_bound`).
RECOMPUTE_SECONDS = 60.0

#: The joint count is searched up to ``M d <= RECOMPUTE_JOINT_MAX_MD`` (and ``M < n d``): every row of the
#: issue-39 grid (M <= 4 d^2, d <= 8: M d <= 2048) with room to spare. With the QK count alone, n = 64, d = 8,
#: M = 128 gives 2,176, the joint count 4,128; n = 128, d = 8, M = 256 the trivial bound against 8,184 (about
#: 24 s on one loaded core). Where it does not finish within the time given it is skipped and the QK count
#: stands. Strength and cost, never validity.
RECOMPUTE_JOINT_MAX_MD = 4096


def recompute_joint_searched(n: int, d: int, M: int) -> bool:
    """Whether :func:`forward_recompute_bound` searches the joint count at ``(n, d, M)``.

    >>> recompute_joint_searched(64, 8, 256), recompute_joint_searched(64, 16, 512), recompute_joint_searched(16, 8, 128)
    (True, False, False)
    """
    return M * d <= RECOMPUTE_JOINT_MAX_MD and M < n * d

_FINISHED: dict = {}


def forward_recompute_bound(n: int, d: int, M: int, time_limit: float | None = None,
                            counted: str | None = None) -> SegmentBound:
    """The best ``S (h(S) - 1)`` of the forward counts valid with recomputation: a lower bound in both games.

    **Proof.** As :func:`matmul_segment_bound`'s, with the ``W = n^2 d``
    products of ``Q K^T`` and :func:`forward_recompute_capacity`, the ``W =
    2 n^2 d`` products of ``Q K^T`` and ``A V`` and
    :func:`forward_recompute_joint_capacity`, or the ``W = n^2 d`` products
    of ``A V`` and :func:`forward_recompute_av_capacity` (each product
    reaches an output, so has a designated event). Each gives a valid bound;
    the larger of those searched is returned.

    Parameters
    ----------
    n, d, M : int
    time_limit : float or None
        Seconds for the searches together. A search the limit cuts is
        skipped whole and named in ``skipped`` (the other count's bound, or
        0, is still valid); None searches to the end.
    counted : {None, "AV"}
        None: the ``Q K^T`` count, and the joint count where
        :func:`recompute_joint_searched`; ``"AV"``: the ``A V`` count alone.

    Returns
    -------
    SegmentBound
        ``weight`` ``"QK"``, ``"QK+AV"`` or ``"AV"``; the joint count is
        searched where :func:`recompute_joint_searched` (``M d <= 4096`` and
        ``M < n d``; n = 64, d = 8, M = 256 takes about 23 s on one loaded
        core, n = 256, d = 8, M = 256 about 18 s), which affects strength,
        never validity. Results with nothing skipped are remembered.

    Examples
    --------
    >>> b = forward_recompute_bound(32, 2, 8)
    >>> b.value, b.weight, b.value == b.S * (b.segments - 1), b.skipped
    (1192, 'QK+AV', True, ())
    >>> forward_recompute_bound(32, 2, 16).value, forward_recompute_bound(32, 2, 16, counted="AV").value
    (576, 713)
    >>> forward_recompute_bound(32, 2, 6, time_limit=0.0).skipped
    ('QK: time limit', 'QK+AV: time limit')
    """
    if (n, d, M, counted) in _FINISHED:
        return _FINISHED[(n, d, M, counted)]
    W = n * n * d

    def search(weight, W, capacity):
        def run(check):
            def count(TL):
                check()
                return capacity(n, d, *TL)
            return capped_shared_bound(W, M, 4 * (W + 4 * n * d + M), count, weight)
        return weight, run

    if counted == "AV":
        searches = [search("AV", W, forward_recompute_av_capacity)]
    else:
        searches = [search("QK", W, forward_recompute_capacity)]
        if recompute_joint_searched(n, d, M):
            searches.append(search("QK+AV", 2 * W, forward_recompute_joint_capacity))
    best = timed_best(searches, time_limit)
    if not best.skipped:
        _FINISHED[(n, d, M, counted)] = best
    return best


def _forward_regime(p, M):
    return p.get("Z_QK") in (None, p["n"] * p["n"]) and 3 <= M <= p["n"] * p["d"]


def _av_regime(p, M):
    # searched where the joint count is (strength and cost, never validity)
    return _forward_regime(p, M) and recompute_joint_searched(p["n"], p["d"], M)


def _lower(counted):
    def value(p, M):
        # outside the regime (masked, M < 3 or a whole input matrix red) the value is undefined (nan)
        if not (_forward_regime if counted is None else _av_regime)(p, M):
            return math.nan
        # a search cut by RECOMPUTE_SECONDS is skipped: the value is the other count's bound (or 0), still valid
        b = forward_recompute_bound(p["n"], p["d"], M, RECOMPUTE_SECONDS, counted)
        _CUT[(counted, p["n"], p["d"], M)] = b.skipped
        return float(b.value)

    return value


#: (count, n, d, M) -> the searches its last evaluation skipped (the formula's notes; the sandwich lists them).
_CUT: dict = {}


def _notes(counted):
    return lambda p, M: _CUT.get((counted, p["n"], p["d"], M), ())


_DETAIL_G = ("G(T, L)", "max of min(F(s, c) + d r p, F(s, c + r p)) + min(sqrt(alpha v t), d alpha, n v, n t), "
                        "alpha = min(n^2, c + r p), over d (r + p) <= s, s + v <= L, s + v + c + t <= T, r <= t: "
                        "v entries of V read, t nodes of the rows' A V trees, row sums and outputs in B'")
_DETAIL_H = ("h(S)", "as in segment-matmul-lower (T = M + S + b', L = M - a' + S, shared boundaries)")
_REGIME = "dense, every summation shape and order, both games (recomputation allowed), 3 <= M <= n d"


#: The segment bound of dense attention forward valid with recomputation, proven for both games.
FORWARD_RECOMPUTE_FORMULA = Formula(
    name="segment-forward-recompute-lower",
    families=("attention-forward",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment counts of the Q K^T products (W = n^2 d) and of Q K^T with A V (W = 2 n^2 d) over their "
          "designated events, proved in "
          "spartition.families.attention.forward.recompute_bounds.forward_recompute_capacity and "
          "forward_recompute_joint_capacity",
    constants="explicit",
    regime=_REGIME,
    func=_lower(None),
    holds=_forward_regime,
    detail=(("F(T, L)", "max over r, p, s of min(F(s, c) + d r p, F(s, c + r p)), F(s, c) = min(s/2 sqrt(c), d c, "
                        "(s/2)^2), c = T - s - r, d (r + p) <= s <= L: s = q + k entries of Q, K read, c charged "
                        "pairs, r (p) rows (columns) with a closed pair, one charge per closed row"),
            _DETAIL_G, _DETAIL_H,
            ("time", "both searches within RECOMPUTE_SECONDS = 60 s; a search the limit cuts is skipped whole, "
                     "the other count's bound (or 0) stands")),
    variants=("oneshot", "recompute"),
    notes=_notes(None),
)

#: The segment bound of the A V products alone (W = n^2 d), both games: a separate formula, so that a row's
#: deadline that cuts one search keeps the other's bound (the sandwich's formula child sends each value as it
#: finishes; this one is registered first, the larger where both are slow).
FORWARD_AV_FORMULA = Formula(
    name="segment-forward-av-lower",
    families=("attention-forward",),
    kind="lower",
    expression="max_S S (h(S) - 1)",
    source=SEGMENTS,
    where="the segment count of the A V products (W = n^2 d) over their designated events, proved in "
          "spartition.families.attention.forward.recompute_bounds.forward_recompute_av_capacity",
    constants="explicit",
    regime=_REGIME + ", M d <= 4096 and M < n d",
    func=_lower("AV"),
    holds=_av_regime,
    detail=(_DETAIL_G,
            ("A(T, L)", "G's variables and constraints, maximising min(sqrt(alpha v t), d alpha, n v, n t), "
                        "alpha = min(n^2, c + r p): each A V product has one designated event, a Q K^T product one "
                        "per copy of its tree"),
            _DETAIL_H,
            ("time", "searched within RECOMPUTE_SECONDS = 60 s; a cut search is skipped (0)")),
    variants=("oneshot", "recompute"),
    notes=_notes("AV"),
)
