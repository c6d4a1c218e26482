"""The claim set of Papp, Sobczyk & Zouzias (arXiv 2605.23751): the proofs' own constants, checked.

Registered under the entry-point group ``spartition.claims`` as ``psz``.
Every statement is transcribed from the full text (Sections 3.2-3.4,
Appendices A-D) and cites it; its regime is what its proof needs:

* the construction constants of Key Lemma 3.2 (Appendix A.1) are checked
  against the tiling the ``approx-key-lemma`` generator realises, and its
  total against the replayed schedule;
* Theorem 1.2's choice ``w0 = g M^(1/(g+1)) / (4e)`` and its step
  ``w0 tau(w0) <= M/4``; Lemma 3.3's sub-tile count and its step
  ``C(d, g) <= 4 r g / M`` (asymptotic); Lemma B.1's fraction with the
  proof's ``delta = sqrt(3)/2`` (Appendix D.3: ``1/(4 delta^2) <= 1/3``);
* the per-class counts of Appendices A.2, B.3 and C as bounds on the class
  capacity, with their regime ``n > r`` (the extension from ``U1 H`` to the
  whole computation, last paragraph of A.2); below it the whole DAG is one
  valid class and is the witness (a finding);
* Theorem 1.1's ``3 n d`` (Section 3.3), and, in the big grid, the explicit
  lower bounds the counts yield, ``M (ceil(w(V)/U) - 1)`` (Lemma A.1).
"""

from __future__ import annotations

import math

from spartition.families.approx_attention.constants import (
    ALGS,
    BIG_CONSTANTS,
    CONSTANTS,
    FAM,
    psz_params_for,
)
from spartition.families.approx_attention.dag import tau
from spartition.families.approx_attention.formulas import (
    approx_case,
    binom,
    kl32_width,
    restricted_columns,
)
from spartition.families.common.papers import PSZ
from spartition.study.claim_quantities import (
    derived_lower,
    optimum_range,
    proven_capacity,
    replayed,
)
from spartition.study.claims import Claim, Interval, Quantity, expr, formula, io_known
from spartition.study.claimsets import ClaimSet

__all__ = ["CLAIMS", "restricted_weight"]


#: Lemma B.1's delta, the value the proof's condition (Appendix D.3) allows at the least: "By selecting a
#: constant delta close to 1, we have 1 / (4 delta^2) <= 1/3" (equality at sqrt(3)/2; the claim
#: psz-b1-delta checks it).
DELTA = math.sqrt(3) / 2


def _plan(name, p, M):
    from spartition.errors import InfeasibleMemory, InvalidDAG
    from spartition.families.approx_attention.schedules import approx_plan

    try:
        return approx_plan(name, psz_params_for(name, {"n": p["n"], "d": p["d"], "g": p["g"]}, M), M)
    except (InfeasibleMemory, InvalidDAG):
        return None


def _plan_q(fn, text, known=None):
    """A quantity read from the Key Lemma 3.2 tiling the generator realises (None where it has none)."""

    def ev(ctx):
        plan = _plan("approx-key-lemma", ctx.paper, ctx.M)
        return None if plan is None else Interval.point(fn(plan, ctx.paper, ctx.M), text)

    kn = None if known is None else (lambda ctx: known(ctx.paper, ctx.M))
    return Quantity(text, ev, kn)


def _w(p, M):
    return kl32_width(p["d"], p["g"], M)


def _tile_widths(plan):
    return [len(cols) for _, cols in plan.tiles]


def _exact_groups(p, M):
    w = _w(p, M)
    return w is not None and w % p["g"] == 0 and p["d"] % (w // p["g"]) == 0


def restricted_weight(G, p) -> dict:
    """Weight 1 on the products ``U1[i, a] H[a, c]`` whose monomial ``a`` has at least ``g/2`` variables (B.3, C)."""
    out = {}
    for v, a in G.nodes(data=True):
        e = a.get("entry") or ("",)
        if e[0] == "P":
            # entry ("P", i, c, a): row i, value column c, monomial a
            u = G.nodes.get(f"U1_{e[1]}_{e[3]}", {})
            out[v] = int(2 * len(u.get("args", ())) >= p["g"])
    return out


def _whole(p, M):
    return p["n"] > p["r"]


def _kl32_count(p, M, X=None):
    w = _w(p, M)
    return None if w is None else 4 * M + 4 * M * M / w + M * M / (2 * w)


def _b3_count(p, M, X=None):
    return 4 * M + 8 * M * M / p["g"] + p["g"] * M


def _c_count(p, M, X=None):
    return 4 * M + 8 * M * M / p["g"] + 6 * M * math.sqrt(M)


def _count_claim(name, statement, where, count, weight, grid, Ms, method, settings=None):
    return Claim(
        name, statement, f"{PSZ}, {where}", FAM, grid,
        proven_capacity(lambda p, M: 2 * M, weight, method=method), "<=",
        expr(lambda p, M: count(p, M), f"the count of {where}"), Ms=Ms, variant="recompute",
        # CP-SAT proves a bound below the count in seconds; the rest of a long limit only tightens it
        settings=settings if settings is not None else {"capacity_time_limit": 5.0},
        regime="n > r (the proof's extension from U1 H to the whole computation, Appendix A.2)",
        in_regime=_whole,
    )


def _lem33_subtiles(p, M):
    plan = _plan_l33(p, M)
    return None if plan is None else len(plan.subtiles)


def _plan_l33(p, M):
    return _plan("approx-lemma-3.3", p, M)


def _l33_q():
    def ev(ctx):
        plan = _plan_l33(ctx.paper, ctx.M)
        return None if plan is None else Interval.point(len(plan.subtiles), "sub-tiles of the realised Lemma 3.3 tiling")

    def kn(ctx):
        p = ctx.paper
        return Interval(math.comb(p["d"], p["g"]), p["r"] - 1, "C(d, g) .. r - 1 (one column each)")

    return Quantity("sub-tiles of approx-lemma-3.3", ev, kn)


def _low_support(d, g):
    """Monomials of degree <= g in d variables with fewer than g/2 distinct variables (the constant included)."""
    return tau(d, g) - restricted_columns(d, g)


def _paper_height(name, p, M, plan):
    """The output-tile height the paper's proof gives algorithm ``name`` at ``M`` (its tiling ``plan``).

    Case I (Section 3.3): "we can then split the output matrix into tiles of
    height M/(4 d) and width c0 d"; Lemma 3.1 (Section 3.2): square tiles of
    side sqrt(M/4), or strips of M/(4 d) rows; Key Lemma 3.2 (Appendix A.1):
    output tiles of M/(4 w) x w; Lemma 3.3 (Appendix B.2): sub-tiles of
    height M/(4 g).
    """
    from spartition.families.approx_attention.plans import paper_w

    if name == "approx-case-i" or plan.tiling == "strip":
        return M // (4 * p["d"])  # Section 3.3 / Lemma 3.1's strips: M / 4d rows
    if plan.tiling == "square":
        return math.isqrt(M // 4)  # Lemma 3.1: square tiles of side sqrt(M / 4)
    if name == "approx-key-lemma":
        return M // (4 * paper_w(p["d"], p["g"], M))  # Appendix A.1: M / 4w rows
    return M // (4 * p["g"])  # Appendix B.2: sub-tiles of height M / 4g


def _tile_height_claim(name, where, grid, Ms):
    """The realised tile height is the paper's, shrunk (rows first) only as far as the tile needs to fit M."""
    from spartition.families.approx_attention.plans import tile_memory

    def realised(ctx):
        plan = _plan(name, ctx.paper, ctx.M)
        return None if plan is None else Interval.point(plan.h, f"rows of an output tile of {name}")

    def expected(ctx):
        plan = _plan(name, ctx.paper, ctx.M)
        if plan is None:
            return None
        w = max(len(vs) for vs, _ in plan.tiles)
        h = max(1, _paper_height(name, ctx.paper, ctx.M, plan))
        while h > 1 and tile_memory(h, plan.b, w) > ctx.M:
            h -= 1
        return Interval.point(h, "the paper's height, shrunk only to fit")

    return Claim(f"{name.replace('approx-', 'psz-')}-tile-height",
                 f"the output tiles of {name} have the paper's height (a shrunk tile that still fits is an error)",
                 f"{PSZ}, {where}", FAM, grid, Quantity(f"tile height of {name}", realised), "==",
                 Quantity("the paper's tile height", expected), Ms=Ms, variant="recompute",
                 regime="every M the tiling runs at")


def _fv(name, p, M):
    """Registered formula ``name`` at ``(p, M)``, outside its regime too (None where undefined)."""
    from spartition.study.formulas import evaluate_formula, formula_named

    v = evaluate_formula(formula_named(name), p, M, FAM).value
    return v if math.isfinite(v) else None


def _step(name, statement, where, grid, Ms, lhs, rel, rhs, regime="every instance (an inequality of the proof)",
          in_regime=None):
    return Claim(name, statement, f"{PSZ}, {where}", FAM, grid, lhs, rel, rhs, Ms=Ms, regime=regime,
                 in_regime=in_regime)


def _w0(p, M):
    """Theorem 1.2's ``w0 = g M^(1/(g+1)) / (4e)``, the one transcription every claim on w0 uses.

    The proof (Section 3.4): "the bounds in Theorem 1.2 are obtained by choosing
    w0 = (1 / (4 e)) g M^(1/(g+1)) for w".
    """
    return (p["g"] * M ** (1 / (p["g"] + 1)) / (4 * math.e))


def _capacity_of(formula_name):
    """The per-class count U a registered explicit bound divides by (Formula.capacity)."""
    from spartition.study.formulas import formula_named

    f = formula_named(formula_name)
    return lambda p, M: (lambda u: None if u is None or not math.isfinite(u) else u)(f.capacity(p, M))


STEP_MS = lambda p: [2 ** k for k in range(1, 22)] + [3, 6, 12, 48, 100, 1000]  # noqa: E731


STEPS = (
    _step("psz-thm12-upper-step", "n d (e d / w0)^g <= n r d (4e^2)^g / M^(g/(g+1)) at w0 = g M^(1/(g+1)) / (4e) "
          "(the last step of the proof: C(dg/w, g) <= (e d / w)^g, then r >= (d/g)^g)",
          "proof of Theorem 1.2, Section 3.4", {"n": [1], "d": [4, 8, 24, 64], "g": [1, 2, 3]}, STEP_MS,
          expr(lambda p, M: p["n"] * p["d"] * (math.e * p["d"] / _w0(p, M)) ** p["g"], "n d (e d / w0)^g"), "<=",
          formula("psz-thm12-upper", in_regime=False)),
    _step("psz-thm12-lower-step", "Key Lemma 3.2's lower bound n r d w / M at w = w0 is n r d g / (4e M^(g/(g+1))): "
          "Theorem 1.2's lower bound over 4e", "proof of Theorem 1.2, Section 3.4",
          {"n": [1], "d": [8, 64], "g": [1, 2, 3]}, STEP_MS,
          expr(lambda p, M: round(_fv("psz-thm12-lower", p, M) / (p["n"] * p["r"] * p["d"] * _w0(p, M) / M), 9),
               "psz-thm12-lower / (n r d w0 / M)"), "==", expr(lambda p, M: round(4 * math.e, 9), "4e")),
    _step("psz-kl32-lower-step", "the explicit bound M (ceil(n (r-1) d / U) - 1) of Appendix A.2 is at most "
          "n r d w / (4.5 M) (U >= 4M^2/w + M^2/(2w)): the lemma's n r d w / M over 4.5",
          "Key Lemma 3.2, Appendix A.2", {"n": [64, 512], "d": [6, 12, 24], "g": [1, 2]}, STEP_MS,
          formula("psz-kl32-partition-lower", in_regime=False), "<=",
          formula("psz-kl32-lower", c=1 / 4.5, in_regime=False)),
    _step("psz-thm13-lower-step", "the explicit bound M (ceil(n r' d / U) - 1) of Appendix B.3 is at most "
          "n r d g / (8M) (U >= 8M^2/g, r' <= r): Theorem 1.3's n r d g / M over 8",
          "Theorem 1.3, Appendix B.3", {"n": [100, 1000], "d": [10, 20], "g": [2, 4]}, STEP_MS,
          formula("psz-thm13-partition-lower", in_regime=False), "<=",
          formula("psz-thm13-lower", c=1 / 8, in_regime=False)),
    _step("psz-thm14-lower-step", "the explicit bound M (ceil(n r' d / U) - 1) of Appendix C is at most "
          "n r d / (6 sqrt(M)) (U >= 6 M sqrt(M), r' <= r): Theorem 1.4's n r d / sqrt(M) over 6",
          "Theorem 1.4, Appendix C", {"n": [100, 1000], "d": [8, 16], "g": [8, 16]}, STEP_MS,
          formula("psz-thm14-partition-lower", in_regime=False), "<=",
          formula("psz-thm14-lower", c=1 / 6, in_regime=False)),
    _step("psz-lem31-step", "the tilings of Lemma 3.1's proof cost min(8 n r d / sqrt(M), 16 n r d^2 / M) "
          "(square tiles t = sqrt(M/4): 2 (n/t)(r/t)(d/t) 2t^2; strips t = M/4d: 2 (n/t)(r/t) M/2), "
          "at most 16 times the lemma's min(n r d^2 / M, n r d / sqrt(M))", "Lemma 3.1, Section 3.2",
          {"n": [1], "d": [4, 8, 16], "g": [1, 2, 3]}, STEP_MS,
          expr(lambda p, M: min(8 * p["n"] * p["r"] * p["d"] / math.sqrt(M), 16 * p["n"] * p["r"] * p["d"] ** 2 / M),
               "min(8 n r d / sqrt(M), 16 n r d^2 / M)"), "<=", formula("psz-lem31-upper", c=16, in_regime=False)),
    _step("psz-lem31-step-low", "the tilings of Lemma 3.1's proof cost at least 8 times the lemma's "
          "min(n r d^2 / M, n r d / sqrt(M))", "Lemma 3.1, Section 3.2",
          {"n": [1], "d": [4, 8, 16], "g": [1, 2, 3]}, STEP_MS,
          expr(lambda p, M: min(8 * p["n"] * p["r"] * p["d"] / math.sqrt(M), 16 * p["n"] * p["r"] * p["d"] ** 2 / M),
               "min(8 n r d / sqrt(M), 16 n r d^2 / M)"), ">=", formula("psz-lem31-upper", c=8, in_regime=False)),
    _step("psz-thm13-upper-step", "Theorem 1.3's upper bound is Lemma 3.1's min(n r d^2 / M, n r d / sqrt(M))",
          "Theorem 1.3, from Lemma 3.1", {"n": [1], "d": [4, 16], "g": [1, 3]}, STEP_MS,
          formula("psz-thm13-upper", in_regime=False), "==", formula("psz-lem31-upper", in_regime=False)),
    _step("psz-thm14-upper-step", "Theorem 1.4's n r d / sqrt(M) is an eighth of the square tiling's "
          "8 n r d / sqrt(M) (Lemma 3.1's tiles of side sqrt(M/4))", "Theorem 1.4, from Lemma 3.1",
          {"n": [1], "d": [4, 16], "g": [2, 8]}, STEP_MS,
          expr(lambda p, M: round(8 * _fv("psz-thm14-upper", p, M) / (8 * p["n"] * p["r"] * p["d"] / math.sqrt(M)), 9),
               "8 psz-thm14-upper / (8 n r d / sqrt(M))"), "==", expr(lambda p, M: 1, "1")),
    _step("psz-lem33-upper-step", "equation (3)'s count 8 n d (C(d, g) + 4 r g / M) (sub-tiles of height M/4g, "
          "per-tile cost M) is 8 times Lemma 3.3's n d (C(d, g) + 4 r g / M)", "Lemma 3.3, Appendix B.2",
          {"n": [1], "d": [3, 6], "g": [2, 3]}, STEP_MS,
          expr(lambda p, M: round(8 * _fv("psz-lem33-upper", p, M) / (8 * p["n"] * p["d"] * (
              math.comb(p["d"], p["g"]) + 4 * p["r"] * p["g"] / M)), 9), "8 psz-lem33-upper / (8 n d (C(d,g) + 4rg/M))"),
          "==", expr(lambda p, M: 1, "1")),
    _step("psz-kl32-upper-step", "Key Lemma 3.2's construction costs 2 (4nw/M)(d/w) C(dg/w, g) M = 8 n d C(dg/w, g): "
          "8 times the lemma's n d C(dg/w, g)", "Key Lemma 3.2, Appendix A.1",
          {"n": [1], "d": [4, 6, 10, 12], "g": [1, 2, 3]}, STEP_MS,
          expr(lambda p, M: None if _w(p, M) is None else round(8 * _fv("psz-kl32-upper", p, M) / (
              2 * (4 * p["n"] * _w(p, M) / M) * (p["d"] / _w(p, M)) * binom(p["d"] * p["g"] / _w(p, M), p["g"]) * M), 9),
               "8 psz-kl32-upper / (2 (4nw/M)(d/w) C(dg/w, g) M)"),
          "==", expr(lambda p, M: 1, "1")),
    _step("psz-kl32-w", "the schedule's w (approx_plans.paper_w) is the formulas' w (kl32_width): the largest "
          "g <= w <= d with w tau(w) <= M/4", "Key Lemma 3.2, Appendix A.1", {"n": [1], "d": [4, 6, 12], "g": [1, 2, 3]},
          lambda p: [4 * k for k in range(1, 200)],
          expr(lambda p, M: _paper_w(p["d"], p["g"], M) or 0, "paper_w (0: none)"), "==",
          expr(lambda p, M: _w(p, M) or 0, "kl32_width (0: none)")),
    _step("psz-a2-count-registered", "the count a registered bound divides by is Appendix A.2's "
          "4M + 4M^2/w + M^2/(2w)", "Key Lemma 3.2 lower bound, Appendix A.2",
          {"n": [1], "d": [4, 12], "g": [1, 2]}, STEP_MS,
          expr(lambda p, M: _capacity_of("psz-kl32-partition-lower")(p, M), "U of psz-kl32-partition-lower"), "==",
          expr(lambda p, M: _kl32_count(p, M), "4M + 4M^2/w + M^2/(2w)")),
    _step("psz-b3-count-registered", "the count a registered bound divides by is Appendix B.3's 4M + 8M^2/g + g M",
          "Theorem 1.3 lower bound, Appendix B.3", {"n": [1], "d": [4, 12], "g": [1, 2, 4]}, STEP_MS,
          expr(lambda p, M: _capacity_of("psz-thm13-partition-lower")(p, M), "U of psz-thm13-partition-lower"), "==",
          expr(lambda p, M: _b3_count(p, M), "4M + 8M^2/g + g M")),
    _step("psz-c-count-registered", "the count a registered bound divides by is Appendix C's 4M + 8M^2/g + 6M sqrt(M)",
          "Theorem 1.4 lower bound, Appendix C", {"n": [1], "d": [4, 12], "g": [1, 2, 4]}, STEP_MS,
          expr(lambda p, M: _capacity_of("psz-thm14-partition-lower")(p, M), "U of psz-thm14-partition-lower"), "==",
          expr(lambda p, M: _c_count(p, M), "4M + 8M^2/g + 6 M sqrt(M)")),
    _step("psz-b1-delta", "the delta of Lemma B.1 satisfies the proof's 1 / (4 delta^2) <= 1/3 and delta < 1",
          "Lemma B.1, proof in Appendix D.3", {"n": [1], "d": [10], "g": [2]}, (1,),
          expr(lambda p, M: max(1 / (4 * DELTA**2), DELTA - 2 / 3), "max(1 / (4 delta^2), delta - 2/3)"), "<=",
          expr(lambda p, M: 1 / 3, "1/3")),
    _step("psz-cases", "the cases partition the parameters as the paper defines them: Case I M = Omega(d r) (M >= d r); "
          "Case II w0 >= g ('this is equivalent to M >= (4e)^(g+1)', proof of Theorem 1.2); Case IV g = Omega(sqrt M) "
          "(g >= sqrt(M)); Case III the rest", "Section 1 (the four cases) and Section 3.4",
          {"n": [1], "d": [2, 4, 8, 30], "g": [1, 2, 3, 4]}, lambda p: sorted({*range(1, 40), *(2 ** k for k in range(6, 15)),
                                                                          p["g"] ** 2, *_dr(p)}),
          expr(lambda p, M: "I II III IV".split().index(approx_case(p, M)) + 1, "approx_case (1 .. 4)"), "==",
          expr(lambda p, M: 1 if M >= p["d"] * p["r"] else 2 if _w0(p, M) >= p["g"] else 4 if p["g"] >= math.sqrt(M) else 3,
               "the paper's case (1 .. 4)")),
    _step("psz-trivial-counted", "the trivial bound 4 n d is the DAG's: its inputs Q, K, V with a successor loaded, "
          "its outputs stored (docs/definitions.md section 2)", "Section 3.3 (each entry of Q, K, V loaded once)",
          {"n": [2, 5], "d": [2, 3], "g": [1, 2]}, (8,), formula("trivial-approx"), "==",
          Quantity("trivial bound of the DAG", lambda ctx: Interval.point(io_known(ctx).lo, "counted on the DAG"))),
    _step("psz-restricted-columns", "r' = sum over s >= g/2 of C(d, s) C(g, s) counts the columns of U1 whose "
          "monomial has at least g/2 distinct variables", "Appendix B.3",
          {"n": [1], "d": [3, 4, 6], "g": [1, 2, 3, 4]}, (1,),
          expr(lambda p, M: restricted_columns(p["d"], p["g"]), "r' (restricted_columns)"), "==",
          Quantity("columns with >= g/2 variables, counted", lambda ctx: Interval.point(
              _count_support(ctx.paper["d"], ctx.paper["g"]), "counted over the monomials"))),
)


def _dr(p):
    """``d r - 1`` and ``d r``: the two memories around Case I's boundary."""
    dr = p["d"] * math.comb(p["d"] + p["g"], p["g"])
    return dr - 1, dr


def _paper_w(d, g, M):
    from spartition.families.approx_attention.plans import paper_w

    return paper_w(d, g, M)


def _count_support(d, g):
    """Monomials of degree 1..g in d variables with at least g/2 distinct variables, enumerated."""
    import itertools

    return sum(1 for k in range(1, g + 1) for m in itertools.combinations_with_replacement(range(d), k)
               if 2 * len(set(m)) >= g)


TILES = (
    _tile_height_claim("approx-case-i", "Section 3.3 (output tiles of M/4d rows)",
                       {"n": [4], "d": [2, 3], "g": [1, 2]}, lambda p: [24 * k for k in range(1, 9)] + [100, 150, 333]),
    _tile_height_claim("approx-lemma-3.1", "Lemma 3.1, Section 3.2 (tiles of side sqrt(M/4), or strips of M/4d rows)",
                       {"n": [8], "d": [3, 6], "g": [1, 2]}, lambda p: [8, 12, 16, 25, 36, 49, 64, 100, 144, 200]),
    _tile_height_claim("approx-key-lemma", "Key Lemma 3.2, Appendix A.1 (output tiles of M/4w rows)",
                       {"n": [8], "d": [4, 6], "g": [1, 2]}, lambda p: [48, 64, 96, 128, 200, 256, 512]),
    _tile_height_claim("approx-lemma-3.3", "Lemma 3.3, Appendix B.2 (sub-tiles of height M/4g)",
                       {"n": [8], "d": [3, 4], "g": [2, 3]}, lambda p: [4 * p["g"] * k for k in (1, 2, 3, 5, 8)] + [50, 77]),
)


KL_GRID = {"n": [4], "d": [4, 6, 8, 12], "g": [1, 2, 3]}


KL_MS = (48, 64, 96, 128, 256, 512, 1024, 4096)


CLAIMS_LIST = (
    Claim("psz-thm12-w0", "w0 = g M^(1/(g+1)) / (4e) satisfies w0 tau(w0) <= M/4 (tau as C(w0 + g, g))",
          f"{PSZ}, proof of Theorem 1.2", FAM, {"n": [1], "d": [64], "g": [1, 2, 3]},
          expr(lambda p, M: (lambda w: w * binom(w + p["g"], p["g"]))(_w0(p, M)), "w0 tau(w0)"), "<=", expr(lambda p, M: M / 4, "M / 4"),
          Ms=lambda p: [2 ** k for k in range(3, 22, 2)],
          regime="Case II: w0 >= g, i.e. M >= (4e)^(g+1) (the proof's use of g = o(log M))",
          in_regime=lambda p, M: M >= (4 * math.e) ** (p["g"] + 1)),
    Claim("psz-kl32-width-max", "every aggregation tile of U1 is at most tau(w) columns wide",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1", FAM, KL_GRID,
          _plan_q(lambda pl, p, M: max(_tile_widths(pl)), "widest tile of the realised tiling",
                  lambda p, M: Interval(1, p["r"] - 1, "1 .. r - 1")),
          "<=", expr(lambda p, M: tau(_w(p, M), p["g"]) if _w(p, M) else None, "tau(w)"), Ms=KL_MS,
          regime="an integer w, g <= w <= d, w tau(w) <= M/4 (the construction)"),
    Claim("psz-kl32-width-min", "every aggregation tile of U1 is at least (w/g)^g columns wide",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1", FAM, KL_GRID,
          _plan_q(lambda pl, p, M: min(_tile_widths(pl)), "narrowest tile of the realised tiling",
                  lambda p, M: Interval(1, p["r"] - 1, "1 .. r - 1")),
          ">=", expr(lambda p, M: (_w(p, M) / p["g"]) ** p["g"] if _w(p, M) else None, "(w/g)^g"), Ms=KL_MS,
          regime="groups of exactly w/g variables: g divides w and w/g divides d (as the proof writes them)",
          in_regime=_exact_groups),
    Claim("psz-kl32-q-loads", "each aggregation tile loads at most M/4 entries of Q (M/4w rows, w columns)",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1", FAM, KL_GRID,
          _plan_q(lambda pl, p, M: pl.h * max(len(vs) for vs, _ in pl.tiles), "Q loads of a tile",
                  lambda p, M: Interval(0, p["n"] * p["d"], "0 .. n d")),
          "<=", expr(lambda p, M: M / 4, "M / 4"), Ms=KL_MS, regime="an integer w as above"),
    Claim("psz-kl32-h-loads", "each aggregation tile loads at most M/4 entries of H (tau(w) x w)",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1", FAM, KL_GRID,
          _plan_q(lambda pl, p, M: pl.b * max(_tile_widths(pl)), "H loads of a tile",
                  lambda p, M: Interval(0, (p["r"] - 1) * p["d"], "0 .. (r - 1) d")),
          "<=", expr(lambda p, M: M / 4, "M / 4"), Ms=KL_MS, regime="an integer w as above"),
    Claim("psz-kl32-out-io", "each output tile (M/4w x w) costs at most M/2 output I/O (load and store)",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1", FAM, KL_GRID,
          _plan_q(lambda pl, p, M: 2 * pl.h * pl.b, "output I/O of a tile",
                  lambda p, M: Interval(0, 2 * p["n"] * p["d"], "0 .. 2 n d")),
          "<=", expr(lambda p, M: M / 2, "M / 2"), Ms=KL_MS, regime="an integer w as above"),
    Claim("psz-kl32-total", "the construction costs at most 2 (4nw/M)(d/w) C(dg/w, g) M = 8 n d C(dg/w, g) (both products)",
          f"{PSZ}, Key Lemma 3.2, Appendix A.1 (per-tile cost M)", FAM, [{"n": [8, 16], "d": [4, 6], "g": [1, 2]}, {"n": [16], "d": [12], "g": [1]}],
          replayed("approx-key-lemma", psz_params_for), "<=",
          expr(lambda p, M: 8 * p["n"] * p["d"] * binom(p["d"] * p["g"] / _w(p, M), p["g"]) if _w(p, M) else None,
               "8 n d C(dg/w, g)"), Ms=(48, 64, 120, 128, 256), variant="recompute",
          regime="Case II (the lemma); the construction wherever w exists",
          in_regime=lambda p, M: approx_case(p, M) == "II"),
    Claim("psz-lem33-subtiles", "the sub-tiles of height M/4g number at most C(d, g) + 4 r g / M",
          f"{PSZ}, Lemma 3.3, Appendix B.2", FAM, {"n": [4], "d": [3, 4, 5, 6], "g": [2, 3]},
          _l33_q(), "<=", expr(lambda p, M: math.comb(p["d"], p["g"]) + 4 * p["r"] * p["g"] / M, "C(d, g) + 4rg/M"),
          Ms=lambda p: [4 * p["g"] * k for k in (1, 2, 3, 5, 8)] + [4 * p["g"] * k + 1 for k in (2, 5)],
          regime="Case III; M/4g an integer (the sub-tile height the proof divides by)",
          in_regime=lambda p, M: approx_case(p, M) == "III" and M % (4 * p["g"]) == 0),
    Claim("psz-lem33-step", "C(d, g) <= 4 r g / M, which makes equation (3) at most 8 n r d g / M",
          f"{PSZ}, Lemma 3.3, Appendix B.2", FAM, {"n": [1], "d": [3, 4, 6, 8], "g": [2, 3, 4]},
          expr(lambda p, M: math.comb(p["d"], p["g"]), "C(d, g)"), "<=",
          expr(lambda p, M: 4 * p["r"] * p["g"] / M, "4 r g / M"), Ms=(16, 29, 64, 128),
          regime="asymptotic: g large, d = O(g^(2-delta1)), M = O(g^delta2); no finite instance is in it",
          in_regime=lambda p, M: False),
    Claim("psz-b1-fraction", "C(d, g/2 - 1) tau(g/2 - 1) <= delta r with delta = sqrt(3)/2",
          f"{PSZ}, Lemma B.1, proof in Appendix D.3", FAM, {"n": [1], "d": [4, 8, 10, 20, 40], "g": [2, 4, 6, 8]},
          expr(lambda p, M: math.comb(p["d"], p["g"] // 2 - 1) * math.comb(p["g"] // 2 - 1 + p["g"], p["g"]),
               "C(d, g/2-1) tau(g/2-1)"), "<=", expr(lambda p, M: DELTA * p["r"], "sqrt(3)/2 r"), Ms=(1,),
          regime="d >= 5 g, g even", in_regime=lambda p, M: p["d"] >= 5 * p["g"] and p["g"] % 2 == 0),
    Claim("psz-b1-count", "the monomials with fewer than g/2 variables number at most delta r (delta = sqrt(3)/2)",
          f"{PSZ}, Lemma B.1 as used in Appendix B.3", FAM, {"n": [1], "d": [4, 8, 10, 20, 40], "g": [2, 3, 4, 6, 8]},
          Quantity("monomials with < g/2 variables",
                   lambda ctx: Interval.point(_low_support(ctx.paper["d"], ctx.paper["g"]), "count of monomials"),
                   lambda ctx: Interval(1, ctx.paper["r"], "1 .. r")),
          "<=", expr(lambda p, M: DELTA * p["r"], "sqrt(3)/2 r"), Ms=(1,),
          regime="d >= 5 g", in_regime=lambda p, M: p["d"] >= 5 * p["g"]),
    _count_claim("psz-a2-count", "one 2M-class holds at most 4M + 4M^2/w + M^2/(2w) products U1 H",
                 "Key Lemma 3.2 lower bound, Appendix A.2", _kl32_count, "tensor=P",
                 [{"n": [1], "d": [22], "g": [2]}, {"n": [21], "d": [4], "g": [1]}],
                 lambda p: (48,) if p["n"] == 1 else (8,), "witness"),
    _count_claim("psz-b3-count", "one 2M-class holds at most 4M + 8M^2/g + g M restricted products",
                 "Theorem 1.3 lower bound, Appendix B.3", _b3_count, restricted_weight,
                 [{"n": [1], "d": [4], "g": [4]}, {"n": [7], "d": [2], "g": [2]}],
                 lambda p: (6,) if p["n"] == 1 else (3,), lambda p, M: "witness" if p["n"] == 1 else "cp-sat"),
    _count_claim("psz-c-count", "one 2M-class holds at most 4M + 8M^2/g + 6 M sqrt(M) restricted products",
                 "Theorem 1.4 lower bound, Appendix C", _c_count, restricted_weight,
                 [{"n": [1], "d": [4], "g": [4]}, {"n": [8], "d": [2], "g": [2]}],
                 lambda p: (6,) if p["n"] == 1 else (3,), "witness"),
    Claim("psz-thm11-lower", "every entry of Q, K, V is loaded at least once: optimum >= 3 n d "
          "(implied by the trivial bound 4 n d, so a sanity check)",
          f"{PSZ}, Theorem 1.1, Section 3.3", FAM, {"n": [16, 64], "d": [2, 3], "g": [1, 2]},
          optimum_range(ALGS, params_for=psz_params_for), ">=", formula("psz-thm11-lower"),
          Ms=lambda p: [4 * p["d"] * math.comb(p["d"] + p["g"], p["g"]) * k for k in (1, 2)], variant="recompute",
          regime="every M (stated for Case I)", sanity=True),
)


def _derived(name, where, count, weight_total, Ms, grid):
    return Claim(
        name, f"optimum >= M (ceil(w(V)/U) - 1) with U the count of {where} (Lemma A.1)", f"{PSZ}, {where} with Lemma A.1",
        FAM, grid, optimum_range(ALGS, params_for=psz_params_for), ">=",
        derived_lower(count, weight_total, lambda p, M: [2 * M], where), Ms=Ms, variant="recompute",
        regime="n > r", in_regime=_whole)


BIG = (
    _derived("psz-b3-lower", "Appendix B.3", _b3_count,
             lambda p: p["n"] * restricted_columns(p["d"], p["g"]) * p["d"], (3, 4), {"n": [79], "d": [11], "g": [2]}),
    _count_claim("psz-a2-count-cpsat", "one 2M-class holds at most 4M + 4M^2/w + M^2/(2w) products U1 H (CP-SAT)",
                 "Key Lemma 3.2 lower bound, Appendix A.2", _kl32_count, "tensor=P",
                 {"n": [21], "d": [4], "g": [1]}, (8,), "cp-sat", settings={}),
    _count_claim("psz-c-count-cpsat", "one 2M-class holds at most 4M + 8M^2/g + 6 M sqrt(M) restricted products (CP-SAT)",
                 "Theorem 1.4 lower bound, Appendix C", _c_count, restricted_weight,
                 {"n": [8], "d": [2], "g": [2]}, (3,), "cp-sat", settings={}),
)


# the checks of a transcription first: they take a second, and a slip usually fails one of them
CLAIMS = ClaimSet("psz", PSZ, STEPS + TILES + CLAIMS_LIST, BIG, CONSTANTS, BIG_CONSTANTS)
