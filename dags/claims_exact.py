"""The claim sets of Saha & Ye (``saha-ye``) and Li et al. (``li``): the per-class lemma their proofs rest on.

We hold summaries of both papers only, so the registered explicit statements
are those of the lemma their lower-bound proofs rest on (the summaries: "red-blue
pebble game partition arguments for standard matrix multiplication"): the
one-class count of the products of a matrix product, in the Loomis-Whitney
form of Irony, Toledo & Tiskin (2004). A class with a dominator of at most X
nodes and a minimum set of at most X nodes holds at most X nodes of either
set, and every other product has both operands in the dominator (at most
X/2 + X/2 of the two operands' entries) and its output entry's sum reaching a
minimum node (at most X entries), so by Loomis-Whitney at most
``sqrt((X/2)(X/2)X)``: ``U(X) <= 2X + X^(3/2) / 2``. Applied, as the
proofs do, to the products of ``Q K^T`` (forward) and of ``(A1 X) A2^T``,
``A1 X``, ``A3 Y`` (backward), where a minimum node may also lie beyond the
sum (``A``, ``l``, ``O``): the tool checks that this application holds.

From the count the tool derives the explicit bound
``max over X of (X - M)(ceil(w(V) / U(X)) - 1)`` and checks it against every
replayed schedule; the capacity computed exactly on the ``restrict``
relaxation (the matrix-product decomposition) confirms it.
"""

from __future__ import annotations

import math

from spartition.families.papers import LI, SY
from spartition.study.claim_quantities import capacity_derived_lower, derived_lower, optimum_range, proven_capacity
from spartition.study.claims import Claim, algorithm, expr, formula, lower_bound, optimum
from spartition.study.claimsets import ClaimSet, ConstantStudy

__all__ = ["LI_CLAIMS", "SY_CLAIMS", "matmul_count"]

LW = "Hong & Kung 1981 / Irony, Toledo & Tiskin 2004 (Loomis-Whitney one-class count of a matrix product)"


def matmul_count(X: float) -> float:
    """``2X + X^(3/2)/2``: products of one matrix product in a class with dominator and minimum set <= X.

    Examples
    --------
    >>> matmul_count(16)
    64.0
    """
    return 2 * X + X**1.5 / 2


def _count_claim(name, family, tensor, sums, weight_of, grid, Ms, source):
    return Claim(
        name, f"one X-class (X = 2M) holds at most 2X + X^(3/2)/2 products of {tensor}", f"{LW}, applied as in {source}",
        family, grid,
        proven_capacity(lambda p, M: 2 * M, f"op=mul,tensor={tensor}", method="product", restrict_tensor=sums,
                        convex=True),
        "<=", expr(lambda p, M: matmul_count(2 * M), "2X + X^(3/2)/2"), Ms=Ms,
        regime="every X (the count needs no regime)")


def _derived_claim(name, family, tensor, sums, weight_of, grid, Ms, algs, source, confirm=True):
    cap = proven_capacity(lambda p, M: _best_x(weight_of(p), M), f"op=mul,tensor={tensor}", method="product",
                          restrict_tensor=sums, convex=True)
    lower = (capacity_derived_lower(cap, weight_of, lambda p, M: _best_x(weight_of(p), M), "product relaxation"),) \
        if confirm else ()
    return Claim(
        name, f"optimum >= max_X (X - M)(ceil(w(V)/U(X)) - 1), U(X) = 2X + X^(3/2)/2 on the products of {tensor}",
        f"{LW} with the X-partition lemma, as in {source}", family, grid,
        optimum_range(algs, lower), ">=",
        derived_lower(lambda p, M, X: matmul_count(X), weight_of, lambda p, M: range(M + 1, 12 * M + 1),
                      f"the count on {tensor}"),
        Ms=Ms, regime="every M (the X-partition lemma, docs/definitions.md section 3)")


def _best_x(W, M):
    from spartition.study.claim_quantities import derived_value

    return derived_value(matmul_count, W, M, range(M + 1, 12 * M + 1))[1]


FWD = "attention-forward"
BW = "attention-backward-weights"
FWD_ALGS = ("flash-forward", "square-tiling-forward", "standard-forward", "greedy")

SY_LIST = (
    _count_claim("sy-qk-count", FWD, "QK", "S", lambda p: p["n"] ** 2 * p["d"],
                 [{"n": [8, 16], "d": [2, 4]}, {"n": [32], "d": [2]}],
                 lambda p: (3, 4, 6, 8) if p["n"] < 32 else (3, 4, 6), SY + " (lower bound, standard matrix multiplication)"),
    _derived_claim("sy-qk-lower", FWD, "QK", "S", lambda p: p["n"] ** 2 * p["d"],
                   {"n": [24, 32], "d": [2]}, (3, 4, 5), FWD_ALGS, SY + " (lower bound)"),
    Claim("sy-trivial", "every input is loaded and every output stored: optimum >= 4 n d", SY + ", section 2",
          FWD, {"n": [2], "d": [1]}, optimum(), ">=", formula("trivial-forward"), Ms=(5, 6, 7, 8),
          regime="every M", sanity=True),
    Claim("hk-lemma", "Hong-Kung: the X-partition bound never exceeds the optimum", "Hong & Kung 1981, Theorem 3.1",
          FWD, {"n": [2], "d": [1]}, lower_bound("x-partition"), "<=", optimum(), Ms=(5, 6, 7, 8),
          regime="every M", sanity=True),
)

SY_CONSTANTS = tuple(
    ConstantStudy(f, FWD, {"n": [16, 32], "d": [2, 4]}, lambda p: [4, 8, 16, 32, 64], FWD_ALGS[:3])
    for f in ("sy-lower", "sy-upper", "sy-flash-upper", "sy-tiling-upper")
)

SY_CLAIMS = ClaimSet("saha-ye", SY, SY_LIST, (), SY_CONSTANTS)

BW_ALGS = ("li-small-cache-backward", "greedy")
LI_LIST = (
    _count_claim("li-a1x-count", BW, "A1X", "L", lambda p: p["n"] * p["d"] ** 2,
                 {"n": [8, 16], "d": [4]}, (3, 4, 6, 8), LI + ", Theorem 1.1 (the n d^3 / M term)"),
    _count_claim("li-a3y-count", BW, "A3Y", "h", lambda p: p["n"] * p["d"] ** 2,
                 {"n": [8, 16], "d": [4]}, (3, 4, 6, 8), LI + ", Theorem 1.1 (the n d^3 / M term)"),
    _derived_claim("li-la2-lower", BW, "LA2", "S", lambda p: p["n"] ** 2 * p["d"],
                   {"n": [24, 32], "d": [2]}, (3, 4), BW_ALGS[:1], LI + ", Theorem 1.1 (the n^2 d terms)",
                   confirm=False),
)

LI_CONSTANTS = tuple(
    ConstantStudy(f, BW, {"n": [8, 16], "d": [2, 4]}, lambda p: [4, 8, 16, 32], BW_ALGS[:1])
    for f in ("li-lower", "li-upper", "li-alg6-upper")
)

LI_CLAIMS = ClaimSet("li", LI, LI_LIST, (), LI_CONSTANTS)
