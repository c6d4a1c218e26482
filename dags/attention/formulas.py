"""Published I/O bounds of exact attention (Saha & Ye; Li et al.), registered for the three exact families.

Each bound is one :class:`~spartition.study.formulas.Formula` (the engine's
record: expression, source, kind, constants, regime). Regimes stated
asymptotically are read with concrete thresholds, and the tests check the
crossovers they create:

* ``M = Omega(d^2)`` / ``M = o(d^2)`` (Saha & Ye, Li et al.): ``M >= d^2`` / ``M < d^2``.
* Upper bounds are read for ``M <= n d`` (the range ``[d, nd]`` that
  FlashAttention's analysis assumes): beyond it the trivial ``Omega(n d)``
  dominates and a bound below it cannot hold.
* Dense bounds apply to dense DAGs only (``Z_QK = n^2``).

The families register here (entry-point group ``spartition.formulas``) their
formulas and their paper parameters ``n, d, r, g, Z_input, Z_QK``, computed
from the builder parameters without building the DAG; they equal the
builders' graph attribute ``paper`` (the tests check both agree).

References
----------
Saha & Ye, "I/O Complexity of Attention, or How Optimal is FlashAttention?"
(ICML 2024). Li, Liang, Shi, Song, Yue, Zhang, "On Fine-Grained I/O
Complexity of Attention Backward Passes" (arXiv 2410.09397), Theorems 1.1
and 4.5, Algorithm 6.
"""

from __future__ import annotations

import math

from spartition.families.attention.forward.bounds import forward_segment_bound
from spartition.families.attention.backward.bounds import backward_segment_bound
from spartition.families.attention.masks import mask_count, mask_size
from spartition.families.common.papers import LI, PAPER_KEYS, REF, SEGMENTS, SY, every_m
from spartition.families.attention.backward.recompute_bounds import BACKWARD_CONSUMER_FORMULA, BACKWARD_RECOMPUTE_FORMULA
from spartition.families.attention.backward.partial_bounds import BACKWARD_PARTIAL_FORMULA
from spartition.families.attention.forward.partial_bounds import FORWARD_PARTIAL_FORMULA
from spartition.families.attention.forward.recompute_bounds import FORWARD_AV_FORMULA, FORWARD_RECOMPUTE_FORMULA
from spartition.study.formulas import FamilyBounds, Formula

__all__ = [
    "ATTENTION_FORWARD",
    "ATTENTION_BACKWARD_WEIGHTS",
    "ATTENTION_BACKWARD_FLASH",
    "EXACT_ATTENTION_FORMULAS",
    "exact_paper_params",
]

FORWARD = "attention-forward"
BACK_W = "attention-backward-weights"
BACK_F = "attention-backward-flash"

#: Entries of the inputs of each family (Q, K, V; plus O, dO, l; or A1, A2, A3, E, X, Y).
_Z_INPUT = {
    FORWARD: lambda n, d: 3 * n * d,
    BACK_F: lambda n, d: 5 * n * d + n,
    BACK_W: lambda n, d: 4 * n * d + 2 * d * d,
}

#: Paper parameters that may be given instead of computed (``spartition formulas ... Z_QK=7``).
GIVEN = {"r": int, "Z_input": int, "Z_QK": int}


def exact_paper_params(family: str, params: dict) -> dict:
    """``n, d, r, g, Z_input, Z_QK`` of exact-attention ``family`` at builder ``params`` (defaults filled).

    ``Z_QK`` is the mask size, ``Z_input`` the input entries; ``r`` and ``g``
    are None (they belong to approximate attention).

    Raises
    ------
    KeyError
        If ``n`` or ``d`` is missing.

    Examples
    --------
    >>> exact_paper_params("attention-forward", {"n": 4, "d": 2, "mask": "causal"})
    {'n': 4, 'd': 2, 'r': None, 'g': None, 'Z_input': 24, 'Z_QK': 10}
    """
    n, d = int(params["n"]), int(params["d"])
    mask_kw = {k: params[k] for k in ("mask", "window", "block", "density", "seed") if k in params}
    for k, kind in (("window", int), ("block", int), ("density", float), ("seed", int)):
        if k in mask_kw:
            mask_kw[k] = kind(mask_kw[k])
    # the closed forms of mask_count (enumerating n^2 pairs hung at n = 10^6); a random mask is drawn, since
    # its count above a few million pairs is an expectation, after mask_count has refused a draw too large
    z_qk = mask_count(n, **mask_kw)
    if mask_kw.get("mask") == "random":
        z_qk = mask_size(n, **mask_kw)
    return {"n": n, "d": d, "r": None, "g": None, "Z_input": _Z_INPUT[family](n, d), "Z_QK": z_qk}


def _dense(p):
    return p.get("Z_QK") in (None, p["n"] * p["n"])


def _small(p, M):
    return _dense(p) and M < p["d"] ** 2


def _flash_range(p, M):
    return _dense(p) and p["d"] <= M <= p["n"] * p["d"]


def _upper_range(p, M):
    return _dense(p) and M <= p["n"] * p["d"]


def _sy_min(p, M):
    n, d = p["n"], p["d"]
    return min(n * n * d * d / M, n * n * d / math.sqrt(M))


def _li_min(p, M):
    n, d = p["n"], p["d"]
    return min((n * n * d * d + n * d**3) / M, (n * n * d + n * d * d) / math.sqrt(M))


def _segment_regime(p, M):
    return _dense(p) and 3 <= M <= p["n"] * p["d"]


def _segment_lower(p, M):
    # the search runs only where the count can say something: outside, the value is undefined (nan)
    if not _segment_regime(p, M):
        return math.nan
    return float(forward_segment_bound(p["n"], p["d"], M).value)


#: The largest M the backward segment count is searched at: its search grows faster than M^2 (15 s at
#: M = 256, about 5 minutes at M = 1,000 on one core); above, the formula is not evaluated (nan).
BACKWARD_SEGMENT_MAX_M = 256


def _backward_segment_regime(p, M):
    return _segment_regime(p, M) and M <= BACKWARD_SEGMENT_MAX_M


def _backward_segment_lower(p, M):
    if not _backward_segment_regime(p, M):
        return math.nan
    return float(backward_segment_bound(p["n"], p["d"], M).value)


def _sparse(p, M):
    zi, zq = p["Z_input"], p["Z_QK"]
    return min(zi * zi / M, zi * math.sqrt(zq) / math.sqrt(M))



EXACT_ATTENTION_FORMULAS = (
    Formula(
        name="sy-lower",
        families=(FORWARD,),
        kind="lower",
        expression="min(n^2 d^2 / M, n^2 d / sqrt(M))",
        source=SY,
        where="main theorem, standard matrix multiplication (Omega)",
        constants="asymptotic",
        regime="every M, dense; the two terms cross at M = d^2",
        func=_sy_min,
        holds=lambda p, M: _dense(p),
    ),
    Formula(
        name="sy-upper",
        families=(FORWARD,),
        kind="upper",
        expression="min(n^2 d^2 / M, n^2 d / sqrt(M))",
        source=SY,
        where="main theorem, standard matrix multiplication (O): FlashAttention for M >= d^2, square tiling below",
        constants="asymptotic",
        regime="dense, read for M <= n d",
        func=_sy_min,
        holds=_upper_range,
    ),
    Formula(
        name="sy-flash-upper",
        families=(FORWARD,),
        kind="upper",
        expression="n^2 d^2 / M",
        source=SY,
        where="FlashAttention I/O (O), optimal for M >= d^2",
        constants="asymptotic",
        regime="dense, d <= M <= n d",
        func=lambda p, M: p["n"] ** 2 * p["d"] ** 2 / M,
        holds=_flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        name="sy-tiling-upper",
        families=(FORWARD,),
        kind="upper",
        expression="n^2 d / sqrt(M)",
        source=SY,
        where="square tiling algorithm for small caches (O)",
        constants="asymptotic",
        regime="dense, M < d^2 (where it beats FlashAttention)",
        func=lambda p, M: p["n"] ** 2 * p["d"] / math.sqrt(M),
        holds=_small,
        detail=(("tile_side", "floor(sqrt(M / 4))"),),
    ),
    Formula(
        name="sy-fmm-lower",
        families=(FORWARD,),
        kind="lower",
        expression="min(n^2 d^2 / M, n^2)",
        source=SY,
        where="lower bound for any matrix multiplication algorithm (Omega)",
        constants="asymptotic",
        regime="dense, entries in a field F_q with q > n; any M",
        func=lambda p, M: min(p["n"] ** 2 * p["d"] ** 2 / M, p["n"] ** 2),
        holds=lambda p, M: _dense(p),
    ),
    Formula(
        name="sy-binary-lower",
        families=(FORWARD,),
        kind="lower",
        expression="min(n^2 d^2 / (M log^2 n), n^2)",
        source=SY,
        where="lower bound for binary inputs, any matrix multiplication (Omega, tight up to log^2 n)",
        constants="asymptotic",
        regime="dense, binary Q and K, n >= 2 (natural log)",
        func=lambda p, M: (min(p["n"] ** 2 * p["d"] ** 2 / (M * math.log(p["n"]) ** 2), p["n"] ** 2)
                           if p["n"] >= 2 else math.nan),
        holds=lambda p, M: _dense(p) and p["n"] >= 2,
    ),
    Formula(
        name="li-lower",
        families=(BACK_W,),
        kind="lower",
        expression="min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))",
        source=LI,
        where="Theorem 1.1 (Omega)",
        constants="asymptotic",
        regime="every M, dense; the terms cross at M = d^2",
        func=_li_min,
        holds=lambda p, M: _dense(p),
    ),
    Formula(
        name="li-upper",
        families=(BACK_W,),
        kind="upper",
        expression="min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))",
        source=LI,
        where="Theorem 1.1 (O): FlashAttention backward for M >= d^2, Algorithm 6 below",
        constants="asymptotic",
        regime="dense, read for M <= n d",
        func=_li_min,
        holds=_upper_range,
    ),
    Formula(
        name="li-flash-upper",
        families=(BACK_W,),
        kind="upper",
        expression="(n^2 d^2 + n d^3) / M",
        source=LI,
        where="FlashAttention backward (O), optimal for M = Omega(d^2)",
        constants="asymptotic",
        regime="dense, d <= M <= n d",
        func=lambda p, M: (p["n"] ** 2 * p["d"] ** 2 + p["n"] * p["d"] ** 3) / M,
        holds=_flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        name="li-alg6-upper",
        families=(BACK_W,),
        kind="upper",
        expression="(n^2 d + n d^2) / sqrt(M)",
        source=LI,
        where="Algorithm 6, small cache (O)",
        constants="asymptotic",
        regime="dense, M = o(d^2), read as M < d^2",
        func=lambda p, M: (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M),
        holds=_small,
        detail=(("tile_side", "floor(sqrt(M / 4))"), ("intermediates", "n x n and n x d matrices written to slow memory")),
    ),
    Formula(
        name="li-flash-backward-upper",
        families=(BACK_F,),
        kind="upper",
        expression="n^2 d^2 / M",
        source=LI,
        where="FlashAttention backward: the prior upper bound for large caches M in [d, nd] that the paper starts "
              "from (O)",
        constants="asymptotic",
        regime="dense, d <= M <= n d",
        func=lambda p, M: p["n"] ** 2 * p["d"] ** 2 / M,
        holds=_flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        name="li-sparse-lower",
        families=(FORWARD, BACK_W, BACK_F),
        kind="lower",
        expression="min(Z_input^2 / M, Z_input sqrt(Z_QK) / sqrt(M))",
        source=LI,
        where="Theorem 4.5, sparse attention forward and backward (Omega)",
        constants="asymptotic",
        regime="every M, dense or masked; the terms cross at M = Z_input^2 / Z_QK",
        func=_sparse,
        holds=every_m,
    ),
    Formula(
        name="trivial-forward",
        families=(FORWARD,),
        kind="lower",
        expression="4 n d",
        source=REF,
        where="inputs Q, K, V loaded, outputs O stored",
        constants="explicit",
        regime="every M",
        func=lambda p, M: 4.0 * p["n"] * p["d"],
        holds=every_m,
    ),
    Formula(
        name="segment-forward-lower",
        families=(FORWARD,),
        kind="lower",
        expression="max_S S (h(S) - 1)",
        source=SEGMENTS,
        where="the segment count of the Q K^T products (W = n^2 d) and of Q K^T with A V (W = 2 n^2 d), proved in "
              "spartition.families.attention.forward.bounds.segment_capacity and joint_segment_capacity",
        constants="explicit",
        regime="dense, the oneshot game (every summation shape and order), 3 <= M <= n d (above, the count "
   "stays below the trivial 4 n d)",
        func=_segment_lower,
        holds=_segment_regime,
        detail=(("F(M, S)", "max over r, p, w of the smaller of max_s [min(s/2 sqrt(c), d c, (s/2)^2) + d r p] "
                            "and max_s min(s/2 sqrt(c + r p), d (c + r p), (s/2)^2) (the charged and the closed "
                            "pairs in one count), s = q+k, over q+k+v <= M+S, q+k+v+c+(r-w)(d+1)+w d <= 2M+S, "
                            "c >= w(n-p), d r <= q, d p <= min(k, v), w <= r (w rows whose n pairs are all active)"),
                ("h(S)", "the fewest segments whose counts reach W: F_first + F_last + (h - 2) F(M, S) >= W, "
                         "the first segment's count with M + S in place of 2M + S and S in place of M + S, "
                         "the last's with M + S in place of 2M + S"),),
        variants=("oneshot",),
    ),
    Formula(
        name="segment-backward-lower",
        families=(BACK_F,),
        kind="lower",
        expression="max_S S (h(S) - 1)",
        source=SEGMENTS,
        where="the segment count of the Q K^T and dO V^T products (W = 2 n^2 d) of the backward pass, and of all five "
              "products (W = 5 n^2 d), proved in "
              "spartition.families.attention.backward.bounds.backward_segment_capacity and "
              "backward_joint_segment_capacity",
        constants="explicit",
        regime="dense, the oneshot game (every summation shape and order), 3 <= M <= n d; evaluated for "
   "M <= 256 only (a compute cap: the search takes minutes above)",
        func=_backward_segment_lower,
        holds=_backward_segment_regime,
        detail=(("F(M, S)", "max of min(s1/2 sqrt(c), d c, (s1/2)^2) + min(s2/2 sqrt(c), d c, (s2/2)^2) + 2 d r p "
                            "over s1 + s2 <= M + S, s1 + s2 + c <= 2M + S, s1, s2 >= d (r + p) (s1 = q + k, "
                            "s2 = o + v: the entries of Q, K and of dO, V read)"),
                ("G(M, S)", "F(M, S)'s terms, each at most min(s/2 sqrt(c + r p), d (c + r p), (s/2)^2) (the "
                            "charged and the closed pairs in one count), plus min(sqrt(alpha (s1 + s2 - d p) t), "
                            "3 d alpha), alpha = c + r p, t = 2M + S - s1 - s2 - c - 2 r: the products of P o dO, "
                            "dS K and dS^T Q"),
                ("h(S)", "as in segment-forward-lower: F_first + F_last + (h - 2) F(M, S) >= W")),
        variants=("oneshot",),
    ),
    Formula(
        name="trivial-backward-weights",
        families=(BACK_W,),
        kind="lower",
        expression="4 n d + 3 d^2",
        source=REF,
        where="inputs A1, A2, A3, E, X, Y loaded, output G stored",
        constants="explicit",
        regime="every M",
        func=lambda p, M: 4.0 * p["n"] * p["d"] + 3.0 * p["d"] ** 2,
        holds=every_m,
    ),
    Formula(
        name="trivial-backward-flash",
        families=(BACK_F,),
        kind="lower",
        expression="8 n d + n",
        source=REF,
        where="inputs Q, K, V, O, dO, l loaded, outputs dQ, dK, dV stored",
        constants="explicit",
        regime="every M",
        func=lambda p, M: 8.0 * p["n"] * p["d"] + p["n"],
        holds=every_m,
    ),
    # the A V count first: where both searches are slow (M >= 2 d^2) it is the larger one, so a row's
    # deadline that cuts the second search cuts the smaller count
    FORWARD_AV_FORMULA,
    FORWARD_RECOMPUTE_FORMULA,
    # the same for the backward counts: at M >= 16 (d = 4) the consumer count is the larger one and the slower
    # (n = 64, d = 4, M = 64: 44 s against the joint count's 35 s); at M = 4, 8 both take about a second
    BACKWARD_CONSUMER_FORMULA,
    BACKWARD_RECOMPUTE_FORMULA,
    FORWARD_PARTIAL_FORMULA,
    BACKWARD_PARTIAL_FORMULA,
)


def _registration(family: str) -> FamilyBounds:
    return FamilyBounds(
        family, tuple(f for f in EXACT_ATTENTION_FORMULAS if family in f.families),
        lambda params: exact_paper_params(family, params), GIVEN, PAPER_KEYS,
    )


#: The registrations (entry-point group ``spartition.formulas``).
ATTENTION_FORWARD = _registration(FORWARD)
ATTENTION_BACKWARD_WEIGHTS = _registration(BACK_W)
ATTENTION_BACKWARD_FLASH = _registration(BACK_F)
