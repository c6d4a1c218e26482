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

from spartition.families.attention.backward.flash import flash_backward_blocks, flash_backward_io
from spartition.families.attention.backward.li_small_cache import li_small_cache_backward_io
from spartition.families.attention.forward.flash import flash_blocks, flash_forward_io
from spartition.families.attention.forward.square_tiling import square_tile, square_tiling_forward_io
from spartition.families.common.papers import LI, SY
from spartition.study.claim_quantities import capacity_derived_lower, derived_lower, optimum_range, proven_capacity
from spartition.study.claim_quantities import formula_ratio
from spartition.study.claims import Claim, Interval, Quantity, expr, formula, io_known, lower_bound, optimum
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
    """The derived lower bound on the products of ``tensor``, and the paper's count ``weight_of(p)`` of them.

    The bound weighs the products counted on the DAG (never the typed-in
    ``weight_of``, which would confirm itself); the second claim checks the
    paper's count against the DAG.
    """
    selector = f"op=mul,tensor={tensor}"
    cap = proven_capacity(lambda p, M: _best_x(weight_of(p), M), selector, method="product",
                          restrict_tensor=sums, convex=True)
    lower = (capacity_derived_lower(cap, selector, lambda p, M: _best_x(weight_of(p), M), "product relaxation"),) \
        if confirm else ()
    bound = Claim(
        name, f"optimum >= max_X (X - M)(ceil(w(V)/U(X)) - 1), U(X) = 2X + X^(3/2)/2 on the products of {tensor}",
        f"{LW} with the X-partition lemma, as in {source}", family, grid,
        optimum_range(algs, lower), ">=",
        derived_lower(lambda p, M, X: matmul_count(X), selector, lambda p, M: range(M + 1, 12 * M + 1),
                      f"the count on {tensor}"),
        Ms=Ms, regime="every M (the X-partition lemma, docs/definitions.md section 3)")
    weight = Claim(
        name.replace("-lower", "-weight"), f"the products of {tensor} number w(V) as the paper counts them",
        source, family, {k: v[:1] for k, v in grid.items()} if isinstance(grid, dict) else grid,
        _counted(selector, tensor), "==",
        expr(lambda p, M: weight_of(p), "the paper's count"), Ms=Ms[:1], regime="every instance")
    return bound, weight


def _counted(selector, tensor):
    """The nodes ``selector`` weighs, counted on the DAG."""
    from spartition.partition.weights import node_weights

    return Quantity(f"products of {tensor} in the DAG",
                    lambda ctx: Interval.point(sum(node_weights(ctx.dag, selector).values()), "counted on the DAG"))


def _fits(io, p, M, **sizes) -> bool:
    """Whether the generator whose closed-form I/O is ``io`` runs at ``M`` with the block or tile ``sizes``."""
    from spartition.errors import InfeasibleMemory

    try:
        io({"n": p["n"], "d": p["d"]}, M, **sizes)
    except InfeasibleMemory:
        return False
    return True


def _tile_claim(name, statement, source, family, grid, Ms, realised, paper, paper_text, io, size):
    """A generator's block or tile size against the paper's expression, shrunk only where it does not fit.

    The expected size is the paper's, or where that does not fit the
    generator's fast memory the largest smaller one that does: a size
    other than the paper's where the paper's fits (a shrunk tile that
    still fits, or a larger one) is a transcription error of the schedule.
    """
    def expected(p, M):
        k = paper(p, M)
        while k > 1 and not _fits(io, p, M, **{size: k}):
            k -= 1
        return k

    return Claim(
        name, statement + " (or the largest smaller size that fits, where it does not)", source, family, grid,
        expr(realised, f"the generator's {size}"), "==", expr(expected, f"{paper_text}, shrunk only to fit"), Ms=Ms,
        regime="every M the generator runs at")


def _lw_claim():
    """``matmul_count`` against its derivation: X (dominator) + X (minimum set) + the Loomis-Whitney sqrt((X/2)(X/2)X)."""
    return Claim(
        "lw-count-derivation", "U(X) = X + X + sqrt((X/2)(X/2) X) (Loomis-Whitney on the products outside D and the "
        "minimum set)", LW, FWD, {"n": [1], "d": [1]},
        Quantity("matmul_count(X) over the derivation", lambda ctx: _lw_ratios()), "==", expr(lambda p, M: 1, "1"),
        Ms=(1,), regime="every X")


def _lw_ratios():
    worst = max(abs(matmul_count(X) / (2 * X + math.sqrt((X / 2) * (X / 2) * X)) - 1) for X in range(1, 400))
    return Interval.point(1 + round(worst, 9), "max over X = 1 .. 399 of matmul_count(X) / (2X + sqrt(X^3 / 4))")


SY_LINE = ("For standard matrix multiplication, attention I/O complexity is Theta(min(N^2 d/sqrt(M), "
           "N^2 d^2/M)), matching FlashAttention for M >= d^2.")
LI_LINE = "Theta(min{(n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M)})"


def _as_written(name, family, fn, text, line, grid, Ms):
    """Registered formula ``name`` against the paper's expression ``text``, transcribed again from ``line``."""
    return Claim(
        f"{name}-as-written", f"{name} is {text}, as the paper writes it: {line!r}", "the paper's statement",
        family, grid, formula_ratio(name, fn, text), "==", expr(lambda p, M: 1, "1"), Ms=Ms,
        regime="every instance (an identity)")


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
    *_derived_claim("sy-qk-lower", FWD, "QK", "S", lambda p: p["n"] ** 2 * p["d"],
                   {"n": [24, 32], "d": [2]}, (3, 4, 5), FWD_ALGS, SY + " (lower bound)"),
    _tile_claim("sy-flash-block", "FlashAttention's K/V block has B_c = ceil(M / 4d) rows",
                SY + " (FlashAttention's block sizes, Dao et al. 2022, Algorithm 1)", FWD, {"n": [16], "d": [2, 3, 4]},
                lambda p: range(4 * p["d"] + 4, 12 * p["d"] * p["d"] + 1, 3),
                lambda p, M: flash_blocks(p["d"], M)[0], lambda p, M: math.ceil(M / (4 * p["d"])), "ceil(M / 4d)",
                flash_forward_io, "bc"),
    _tile_claim("sy-tiling-side", "the square tiling's tiles have side floor(sqrt(M / 4))",
                SY + " (the square tiling for M < d^2)", FWD, {"n": [16], "d": [8]}, lambda p: range(6, 64),
                lambda p, M: square_tile(M), lambda p, M: math.isqrt(M // 4), "floor(sqrt(M / 4))",
                square_tiling_forward_io, "b"),
    _as_written("sy-lower", FWD, lambda p, M: min(p["n"] ** 2 * p["d"] / math.sqrt(M), p["n"] ** 2 * p["d"] ** 2 / M),
                "min(N^2 d / sqrt(M), N^2 d^2 / M)", SY_LINE, {"n": [8, 64], "d": [2, 8]}, (2, 16, 64, 100, 256)),
    _as_written("sy-upper", FWD, lambda p, M: min(p["n"] ** 2 * p["d"] / math.sqrt(M), p["n"] ** 2 * p["d"] ** 2 / M),
                "min(N^2 d / sqrt(M), N^2 d^2 / M)", SY_LINE, {"n": [8, 64], "d": [2, 8]}, (2, 16, 64, 100, 256)),
    _as_written("sy-flash-upper", FWD, lambda p, M: p["n"] ** 2 * p["d"] ** 2 / M, "N^2 d^2 / M",
                "FlashAttention's I/O complexity O(N^2 d^2 / M)", {"n": [8, 64], "d": [2, 8]}, (16, 64, 256)),
    _as_written("sy-tiling-upper", FWD, lambda p, M: p["n"] ** 2 * p["d"] / math.sqrt(M), "N^2 d / sqrt(M)",
                "an algorithm with O(N^2 d / sqrt(M))", {"n": [8, 64], "d": [8]}, (4, 16, 60)),
    Claim("sy-trivial-counted", "the trivial bound 4 n d is the DAG's: Q, K, V loaded, O stored",
          "docs/definitions.md section 2", FWD, {"n": [2, 5], "d": [1, 3]}, formula("trivial-forward"), "==",
          Quantity("trivial bound of the DAG", lambda ctx: Interval.point(io_known(ctx).lo, "counted on the DAG")),
          Ms=(8,), regime="every instance"),
    _lw_claim(),
    Claim("sy-trivial", "every input is loaded and every output stored: optimum >= 4 n d", SY + ", section 2",
          FWD, {"n": [2], "d": [1]}, optimum(), ">=", formula("trivial-forward"), Ms=(5, 6, 7, 8),
          regime="every M", sanity=True),
    Claim("hk-lemma", "Hong-Kung: the X-partition bound never exceeds the optimum", "Hong & Kung 1981, Theorem 3.1",
          FWD, {"n": [2], "d": [1]}, lower_bound("x-partition"), "<=", optimum(), Ms=(5, 6, 7, 8),
          regime="every M", sanity=True),
)

#: The constant studies run in the papers' game (the standard one, with recomputation): the lower side of the
#: interval is the trivial bound or the recompute-valid segment bounds (proven for both games), the upper side
#: the replayed schedules (a oneshot schedule is a standard one). No oneshot-only bound takes part.
PAPERS_GAME = "recompute"

#: The schedules that refute a constant of sy-lower: every forward tiling, each at its cheapest tile options.
SY_REFUTING_ALGS = (*FWD_ALGS[:3], "tiled-forward")

SY_CONSTANTS = tuple(
    ConstantStudy(f, FWD, {"n": [16, 32], "d": [2, 4]}, lambda p: [4, 8, 16, 32, 64],
                  SY_REFUTING_ALGS if f == "sy-lower" else FWD_ALGS[:3],
                  lower=(formula("segment-forward-recompute-lower"), formula("segment-forward-av-lower"),
                         lower_bound("pair-sums")),
                  variant=PAPERS_GAME, search=f == "sy-lower")
    for f in ("sy-lower", "sy-upper", "sy-flash-upper", "sy-tiling-upper")
)

def _quick_first(claims, slow):
    """``claims`` with those named in ``slow`` (capacities, derived bounds) last: a slip usually fails a quick one."""
    return tuple(c for c in claims if c.name not in slow) + tuple(c for c in claims if c.name in slow)


SY_CLAIMS = ClaimSet("saha-ye", SY, _quick_first(SY_LIST, {"sy-qk-count", "sy-qk-lower"}), (), SY_CONSTANTS)

BW_ALGS = ("li-small-cache-backward", "greedy")
LI_LIST = (
    _count_claim("li-a1x-count", BW, "A1X", "L", lambda p: p["n"] * p["d"] ** 2,
                 {"n": [8, 16], "d": [4]}, (3, 4, 6, 8), LI + ", Theorem 1.1 (the n d^3 / M term)"),
    _count_claim("li-a3y-count", BW, "A3Y", "h", lambda p: p["n"] * p["d"] ** 2,
                 {"n": [8, 16], "d": [4]}, (3, 4, 6, 8), LI + ", Theorem 1.1 (the n d^3 / M term)"),
    _tile_claim("li-flash-block", "FlashAttention backward's K/V block has B_c = ceil(M / 4d) rows",
                LI + " (FlashAttention backward, the upper bound for M = Omega(d^2))", "attention-backward-flash",
                {"n": [16], "d": [2, 3, 4]}, lambda p: range(7 * p["d"] + 6, 12 * p["d"] * p["d"] + 1, 3),
                lambda p, M: flash_backward_blocks(p["d"], M)[0], lambda p, M: math.ceil(M / (4 * p["d"])),
                "ceil(M / 4d)", flash_backward_io, "bc"),
    _tile_claim("li-alg6-side", "Algorithm 6's tiles have side floor(sqrt(M / 4))", LI + ", Algorithm 6",
                BW, {"n": [16], "d": [8]}, lambda p: range(6, 64),
                lambda p, M: square_tile(M), lambda p, M: math.isqrt(M // 4), "floor(sqrt(M / 4))",
                li_small_cache_backward_io, "b"),
    _as_written("li-lower", BW, lambda p, M: min((p["n"] ** 2 * p["d"] ** 2 + p["n"] * p["d"] ** 3) / M,
                                                  (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M)),
                "min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))", LI_LINE, {"n": [4, 64], "d": [2, 8]},
                (2, 16, 64, 100, 256)),
    _as_written("li-upper", BW, lambda p, M: min((p["n"] ** 2 * p["d"] ** 2 + p["n"] * p["d"] ** 3) / M,
                                                  (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M)),
                "min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))", LI_LINE, {"n": [4, 64], "d": [2, 8]},
                (2, 16, 64, 100, 256)),
    _as_written("li-flash-upper", BW, lambda p, M: (p["n"] ** 2 * p["d"] ** 2 + p["n"] * p["d"] ** 3) / M,
                "(n^2 d^2 + n d^3) / M", "Large Cache (M = Omega(d^2)): The complexity is Theta((n^2 d^2 + n d^3)/M)",
                {"n": [4, 64], "d": [2, 8]}, (16, 64, 256)),
    _as_written("li-alg6-upper", BW, lambda p, M: (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M),
                "(n^2 d + n d^2) / sqrt(M)", "Algorithm 6 ... achieves the tighter bound O((n^2 d + n d^2)/sqrt(M))",
                {"n": [4, 64], "d": [8]}, (4, 16, 60)),
    _lw_claim(),
    *_derived_claim("li-la2-lower", BW, "LA2", "S", lambda p: p["n"] ** 2 * p["d"],
                   {"n": [24, 32], "d": [2]}, (3, 4), BW_ALGS[:1], LI + ", Theorem 1.1 (the n^2 d terms)",
                   confirm=False),
)

# the weight-gradient DAG has no recompute-valid segment count yet (its products read computed operands, A1 X
# and p A2, which a segment can rebuild): its lower side is the trivial bound and, at M <= 4, the pair-sum bound
# (the first two terms of each Q K^T and dO V^T entry), valid in both standard games
LI_CONSTANTS = tuple(
    ConstantStudy(f, BW, {"n": [8, 16], "d": [2, 4]}, lambda p: [4, 8, 16, 32], BW_ALGS if f == "li-lower" else BW_ALGS[:1],
                  lower=(lower_bound("pair-sums"),), variant=PAPERS_GAME, search=f == "li-lower")
    for f in ("li-lower", "li-upper", "li-alg6-upper")
)

LI_CLAIMS = ClaimSet("li", LI, _quick_first(LI_LIST, {"li-a1x-count", "li-a3y-count", "li-la2-lower"}), (), LI_CONSTANTS)
