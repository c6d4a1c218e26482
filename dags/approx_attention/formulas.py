"""Published I/O bounds of approximate attention (Papp, Sobczyk & Zouzias), registered for ``approx-attention``.

Each bound is one :class:`~spartition.study.formulas.Formula`. The paper's
cases (with ``r = C(d + g, g)``) are read as a partition of all parameters
(:func:`approx_case`): Case I ``M >= d r``; Case II ``M < d r`` and
``M >= (4e)^(g+1)`` (exactly the condition ``w0 >= g`` that the proof of
Theorem 1.2 uses for ``g = o(log M)``); Case IV ``M < d r`` and
``M <= g^2`` (``g = Omega(sqrt M)``); Case III the rest.

The lower bounds (Key Lemma 3.2, Theorems 1.2-1.4 and their per-class counts
of Appendices A.2, B.3, C) are proved for the product ``U1 H`` and extended
to the whole computation only for ``n > r`` (Appendix A.2, last paragraph);
they are registered with that condition. Statements are registered with the
regime the paper states them in (Key Lemma 3.2: Case II); the counts of a
proof's construction or partition argument with the conditions that proof
uses.

Where a proof gives constants, they are recorded: as explicit lower bounds
``M (ceil(W / U) - 1)`` from the proof's per-class count ``U`` (the
class-capacity form of the Hong-Kung lemma, docs/definitions.md section 3), reported
with ``U`` itself, and as tile sizes in ``Formula.detail``.

Summation trees: the paper's upper bounds assume sums accumulated in the
order their tiles consume terms (Appendix A.3); on a DAG with a fixed
summation tree an algorithm may need a matching ``shape``/``order``.

References
----------
Papp, Sobczyk, Zouzias, "Approaching I/O-optimality for Approximate
Attention" (arXiv 2605.23751), Theorems 1.1-1.4, Lemmas 3.1 and 3.3, Key
Lemma 3.2, Appendices A-C.
"""

from __future__ import annotations

import math

from spartition.families.approx_attention.dag import tau
from spartition.families.common.papers import PAPER_KEYS, PSZ, REF, every_m
from spartition.study.formulas import FamilyBounds, Formula

__all__ = [
    "APPROX_ATTENTION",
    "APPROX_FORMULAS",
    "approx_case",
    "approx_paper_params",
    "binom",
    "kl32_width",
    "restricted_columns",
]

APPROX = "approx-attention"


def binom(x: float, k: int) -> float:
    """``C(x, k) = x (x - 1) ... (x - k + 1) / k!`` for a real ``x`` and an integer ``k >= 0``.

    PSZ Key Lemma 3.2 writes ``C(dg/w, g)`` with ``dg/w`` the number of groups
    of ``w/g`` variables, which need not be an integer; this is the value of
    the expression as written (the generalised binomial coefficient).

    Examples
    --------
    >>> binom(6, 2), binom(20 / 3, 2)
    (15.0, 18.88888888888889)
    """
    out = 1.0
    for i in range(k):
        out *= (x - i) / (i + 1)
    return out


def restricted_columns(d: int, g: int) -> int:
    """Columns of U1 whose monomial has at least ``g / 2`` distinct variables.

    ``sum over s >= g/2 of C(d, s) C(g, s)`` (``s`` distinct variables, then a
    total degree ``<= g`` spread over them with every exponent ``>= 1``). The
    lower-bound proofs of PSZ Theorems 1.3 and 1.4 count only these columns;
    Lemma B.1 shows they are a constant fraction of ``r`` when ``d >= 5g``.

    Examples
    --------
    >>> restricted_columns(3, 2)  # all 9 non-constant monomials of degree <= 2 in 3 variables
    9
    >>> restricted_columns(4, 4)  # support >= 2: 36 + 16 + 1
    53
    """
    lo = math.ceil(g / 2)
    return sum(math.comb(d, s) * math.comb(g, s) for s in range(max(lo, 1), min(d, g) + 1))


def kl32_width(d: int, g: int, M: int):
    """Largest integer ``w`` with ``g <= w <= d`` and ``w tau(w) <= M / 4`` (PSZ Key Lemma 3.2), or None.

    Examples
    --------
    >>> kl32_width(10, 1, 100), kl32_width(10, 2, 48), kl32_width(10, 2, 47)
    (4, 2, None)
    """
    best = None
    for w in range(max(g, 1), d + 1):
        if 4 * w * tau(w, g) <= M:
            best = w
        else:
            break
    return best


def approx_case(p: dict, M: int) -> str:
    """The PSZ case (``"I"``..``"IV"``) of parameters ``p`` (``d, g, r``) at memory ``M``.

    Examples
    --------
    >>> [approx_case({"d": 20, "g": 1, "r": 21}, M) for M in (500, 200, 50, 1)]
    ['I', 'II', 'III', 'IV']
    """
    d, g, r = p["d"], p["g"], p["r"]
    if M >= d * r:
        return "I"
    if M >= (4 * math.e) ** (g + 1):
        return "II"
    if M <= g * g:
        return "IV"
    return "III"


def _whole(p):
    """``n > r``: the condition under which PSZ extend their per-class counts from ``U1 H`` to ``U1 (U2^T V)``.

    Appendix A.2 (last paragraph; B.3 and C reuse it "exactly as in Key Lemma
    3.2"): a dominator set holding ``x <= r`` entries of a column of ``H`` could
    replace them only by the ``n`` entries of a column of ``V``, which "with
    n > r" does not shrink it. Below it the counts are false: at ``n = 1,
    d = 4, g = 4, M = 6`` the whole DAG (12 inputs, 4 outputs) is one valid
    12-class holding ``n r' d = 212`` restricted products, more than B.3's 120
    and C's 184.
    """
    return p["n"] > p["r"]


def _hk(weight: float, capacity: float, M: int) -> float:
    """Class-capacity Hong-Kung bound ``M (ceil(weight / capacity) - 1)``, at least 0."""
    return float(max(0, M * (math.ceil(weight / capacity) - 1)))


def _case(*cases, d5g=False, whole=False):
    def holds(p, M):
        return (approx_case(p, M) in cases and (not d5g or p["d"] >= 5 * p["g"])
                and (not whole or _whole(p)))

    return holds


def _has_w(whole=False, cases=None):
    """Regime of a Key Lemma 3.2 statement: an admissible ``w`` (and ``n > r``, and a case, where asked)."""
    def holds(p, M):
        return (kl32_width(p["d"], p["g"], M) is not None and (not whole or _whole(p))
                and (cases is None or approx_case(p, M) in cases))

    return holds


def _any_m_whole(p, M):
    return _whole(p)


def _lem31(p, M):
    n, d, r = p["n"], p["d"], p["r"]
    return min(n * r * d * d / M, n * r * d / math.sqrt(M))


def _kl32_groups(p, M):
    w = kl32_width(p["d"], p["g"], M)
    if w is None:
        return None, None
    return w, math.ceil(p["d"] / (w // p["g"]))


def _kl32_upper(p, M):
    # the paper's expression: dg/w groups, not the integer count of a tiling
    w = kl32_width(p["d"], p["g"], M)
    return math.nan if w is None else p["n"] * p["d"] * binom(p["d"] * p["g"] / w, p["g"])


def _kl32_tiling(p, M):
    w, groups = _kl32_groups(p, M)
    return math.nan if w is None else float(p["n"] * p["d"] * math.comb(groups, p["g"]))


def _kl32_lower(p, M):
    w = kl32_width(p["d"], p["g"], M)
    return math.nan if w is None else p["n"] * p["r"] * p["d"] * w / M


def _kl32_capacity(p, M):
    w = kl32_width(p["d"], p["g"], M)
    return math.nan if w is None else 4 * M + 4 * M * M / w + M * M / (2 * w)


def _kl32_explicit(p, M):
    U = _kl32_capacity(p, M)
    return math.nan if math.isnan(U) else _hk(p["n"] * (p["r"] - 1) * p["d"], U, M)


def _c3_capacity(p, M):
    return 4 * M + 8 * M * M / p["g"] + p["g"] * M


def _c4_capacity(p, M):
    return 4 * M + 8 * M * M / p["g"] + 6 * M * math.sqrt(M)


def _restricted_weight(p):
    return p["n"] * restricted_columns(p["d"], p["g"]) * p["d"]


APPROX_FORMULAS = (
    Formula(
        name="psz-thm11-upper",
        families=(APPROX,),
        kind="upper",
        expression="n d",
        source=PSZ,
        where="Theorem 1.1, Case I (O)",
        constants="asymptotic",
        regime="Case I: M = Omega(d r), read as M >= d r",
        func=lambda p, M: float(p["n"] * p["d"]),
        holds=_case("I"),
        detail=(("tile_height", "M / (4 d) rows of U1, each regenerated from its d entries of Q"),
                ("tile_width", "c0 d with c0 d r <= M / 4"), ("H_tile", "r x c0 d")),
    ),
    Formula(
        name="psz-thm11-lower",
        families=(APPROX,),
        kind="lower",
        expression="3 n d",
        source=PSZ,
        where="Theorem 1.1 / section 3.3: each entry of Q, K, V loaded at least once",
        constants="explicit",
        regime="every M (stated for Case I)",
        func=lambda p, M: 3.0 * p["n"] * p["d"],
        holds=every_m,
    ),
    Formula(
        name="psz-thm12-upper",
        families=(APPROX,),
        kind="upper",
        expression="n r d (4 e^2)^g / M^(g/(g+1))",
        source=PSZ,
        where="Theorem 1.2, Case II (O); Key Lemma 3.2 with w = w0",
        constants="asymptotic",
        regime="Case II: M = o(d r), g = o(log M), read as M < d r and M >= (4e)^(g+1)",
        func=lambda p, M: p["n"] * p["r"] * p["d"] * (4 * math.e**2) ** p["g"] / M ** (p["g"] / (p["g"] + 1)),
        holds=_case("II"),
        detail=(("w0", "g M^(1/(g+1)) / (4 e)"), ("w0 >= g", "iff M >= (4e)^(g+1)")),
    ),
    Formula(
        name="psz-thm12-lower",
        families=(APPROX,),
        kind="lower",
        expression="n r d g / M^(g/(g+1))",
        source=PSZ,
        where="Theorem 1.2, Case II (Omega); Key Lemma 3.2 lower bound with w = w0",
        constants="asymptotic",
        regime="Case II: M < d r and M >= (4e)^(g+1); n > r (Appendix A.2's extension to the whole computation)",
        func=lambda p, M: p["n"] * p["r"] * p["d"] * p["g"] / M ** (p["g"] / (p["g"] + 1)),
        holds=_case("II", whole=True),
        detail=(("w0", "g M^(1/(g+1)) / (4 e)"),),
    ),
    Formula(
        name="psz-kl32-upper",
        families=(APPROX,),
        kind="upper",
        expression="n d C(dg/w, g)",
        source=PSZ,
        where="Key Lemma 3.2 upper bound (O), proof in Appendix A.1",
        constants="asymptotic",
        regime="Case II (as the lemma states), with an integer w, g <= w <= d, w tau(w) <= M / 4 (w = largest such); "
               "C(dg/w, g) is the generalised binomial when g does not divide w",
        func=_kl32_upper,
        holds=_has_w(cases=("II",)),
        detail=(("output_tile", "M / (4 w) x w"), ("groups", "dg / w column groups of Q of w / g variables"),
                ("aggregation_tiles", "C(#groups, g) per output tile, each terms assigned to the first tile (lexicographic) generating it"),
                ("io_per_aggregation_tile", "<= M: M/4 loads of Q, M/4 of H, M/2 output load + store"),
                ("total", "(4 n w / M)(d / w) C(dg/w, g) M = 4 n d C(dg/w, g) per product")),
    ),
    Formula(
        name="psz-kl32-tiling-upper",
        families=(APPROX,),
        kind="upper",
        expression="n d C(ceil(d / floor(w/g)), g)",
        source=PSZ,
        where="Key Lemma 3.2 construction (Appendix A.1) realised with integer groups of floor(w/g) variables (O): "
              "the aggregation tiles of the approx-key-lemma schedule",
        constants="asymptotic",
        regime="an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), any case (the construction "
               "needs only that its tiles fit)",
        func=_kl32_tiling,
        holds=_has_w(),
        detail=(("groups", "ceil(d / floor(w / g)) column groups of Q, of floor(w / g) variables (the last may be smaller)"),
                ("aggregation_tiles", "C(#groups, g) per output tile; one tile of all d variables when #groups <= g"),
                ("vs_paper", "C(ceil(d / floor(w/g)), g) >= C(dg/w, g); e.g. d = 10, g = 2, w = 3: 45 against 18.9")),
    ),
    Formula(
        name="psz-kl32-lower",
        families=(APPROX,),
        kind="lower",
        expression="n r d w / M",
        source=PSZ,
        where="Key Lemma 3.2 lower bound (Omega), proof in Appendix A.2",
        constants="asymptotic",
        regime="Case II (as the lemma states), an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), "
               "and n > r (the proof's extension from U1 H to the whole computation)",
        func=_kl32_lower,
        holds=_has_w(whole=True, cases=("II",)),
    ),
    Formula(
        name="psz-kl32-partition-lower",
        families=(APPROX,),
        kind="lower",
        expression="M (ceil(n (r - 1) d / U) - 1), U = 4M + 4M^2/w + M^2/(2w)",
        source=PSZ,
        where="Key Lemma 3.2 lower-bound proof (Appendix A.2): per-class count of internal nodes",
        constants="explicit",
        regime="an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), and n > r (the proof's "
               "extension from U1 H to the whole computation; below it the count fails: n = 1, d = 22, g = 2, M = 48 "
               "has 6050 products in one 96-class against U = 5376); any case",
        func=_kl32_explicit,
        holds=_has_w(whole=True),
        capacity=_kl32_capacity,
        detail=(("capacity", "4M (dominator + minimum set) + 4M^2/w (rows with >= w dominated entries) + M^2/(2w) (other rows)"),
                ("weight", "n (r - 1) d products U1[i, a] H[a, c], a != 0 (the constant column has none in the project's DAG)")),
    ),
    Formula(
        name="psz-thm13-upper",
        families=(APPROX,),
        kind="upper",
        expression="min(n r d^2 / M, n r d / sqrt(M))",
        source=PSZ,
        where="Theorem 1.3, Case III (O), from Lemma 3.1",
        constants="asymptotic",
        regime="Case III: M < d r, (4e)^(g+1) > M > g^2",
        func=_lem31,
        holds=_case("III"),
    ),
    Formula(
        name="psz-thm13-lower",
        families=(APPROX,),
        kind="lower",
        expression="n r d g / M",
        source=PSZ,
        where="Theorem 1.3, Case III (Omega), proof in Appendix B.3",
        constants="asymptotic",
        regime="Case III, d >= 5 g, and n > r (the extension to the whole computation, as in Appendix A.2)",
        func=lambda p, M: p["n"] * p["r"] * p["d"] * p["g"] / M,
        holds=_case("III", d5g=True, whole=True),
    ),
    Formula(
        name="psz-thm13-partition-lower",
        families=(APPROX,),
        kind="lower",
        expression="M (ceil(n r' d / U) - 1), U = 4M + 8M^2/g + g M",
        source=PSZ,
        where="Theorem 1.3 lower-bound proof (Appendix B.3): per-class count on the restricted columns",
        constants="explicit",
        regime="every M with n > r (the count needs no case assumption, the paper states it for Case III with "
               "d >= 5 g; "
               "n > r is its extension to the whole computation, below which it fails: n = 1, d = 4, g = 4, M = 6 "
               "has 212 restricted products in one 12-class against U = 120)",
        func=lambda p, M: _hk(_restricted_weight(p), _c3_capacity(p, M), M),
        holds=_any_m_whole,
        capacity=_c3_capacity,
        detail=(("capacity", "4M + (4M/g rows with >= g/2 dominated entries) x 2M + (g/2) x 2M"),
                ("restricted_columns", "r' = sum_{s >= g/2} C(d, s) C(g, s) monomials with >= g/2 distinct variables")),
    ),
    Formula(
        name="psz-lem31-upper",
        families=(APPROX,),
        kind="upper",
        expression="min(n r d^2 / M, n r d / sqrt(M))",
        source=PSZ,
        where="Lemma 3.1, generic tiling (O)",
        constants="asymptotic",
        regime="M = o(d r), read as M < d r (Cases II-IV); terms cross at M = d^2",
        func=_lem31,
        holds=_case("II", "III", "IV"),
    ),
    Formula(
        name="psz-lem33-upper",
        families=(APPROX,),
        kind="upper",
        expression="n d (C(d, g) + 4 r g / M)",
        source=PSZ,
        where="Lemma 3.3, equation (3) (O), proof in Appendix B.2",
        constants="asymptotic",
        regime="Case III with d = O(g^(2 - delta1)) and M = O(g^delta2); read as Case III and d < g^2 "
               "(the polynomial conditions are asymptotic and not checked). Its step C(d, g) <= 4 r g / M, which makes "
               "it <= 8 n r d g / M, holds only asymptotically (g -> infinity): it fails at d = 3, g = 2, M = 29 "
               "(3 > 80/29)",
        func=lambda p, M: p["n"] * p["d"] * (math.comb(p["d"], p["g"]) + 4 * p["r"] * p["g"] / M),
        holds=lambda p, M: approx_case(p, M) == "III" and p["d"] < p["g"] ** 2,
        detail=(("output_tile", "M / (4 g) x g"), ("aggregation_tiles", "C(d, g): every g-subset of columns of Q"),
                ("sub_tiles", "tiles of U1 wider than M / (4 g) are split into sub-tiles of height M / (4 g)"),
                ("step", "C(d, g) <= 4 r g / M (Appendix B.2): asymptotic in g only, false at small sizes "
                         "(d = 3, g = 2, M = 29)")),
    ),
    Formula(
        name="psz-thm14-upper",
        families=(APPROX,),
        kind="upper",
        expression="n r d / sqrt(M)",
        source=PSZ,
        where="Theorem 1.4, Case IV (O), from Lemma 3.1",
        constants="asymptotic",
        regime="Case IV: M < d r and g = Omega(sqrt M), read as M <= g^2",
        func=lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M),
        holds=_case("IV"),
    ),
    Formula(
        name="psz-thm14-lower",
        families=(APPROX,),
        kind="lower",
        expression="n r d / sqrt(M)",
        source=PSZ,
        where="Theorem 1.4, Case IV (Omega), proof in Appendix C",
        constants="asymptotic",
        regime="Case IV, d >= 5 g, and n > r (the extension to the whole computation, as in Appendix A.2)",
        func=lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M),
        holds=_case("IV", d5g=True, whole=True),
    ),
    Formula(
        name="psz-thm14-partition-lower",
        families=(APPROX,),
        kind="lower",
        expression="M (ceil(n r' d / U) - 1), U = 4M + 8M^2/g + 6 M sqrt(M)",
        source=PSZ,
        where="Theorem 1.4 lower-bound proof (Appendix C): per-class count on the restricted columns",
        constants="explicit",
        regime="every M with n > r (the count needs no case assumption, the paper states it for Case IV with "
               "d >= 5 g; "
               "n > r is its extension to the whole computation, below which it fails: n = 1, d = 4, g = 4, M = 6 "
               "has 212 restricted products in one 12-class against U = 184)",
        func=lambda p, M: _hk(_restricted_weight(p), _c4_capacity(p, M), M),
        holds=_any_m_whole,
        capacity=_c4_capacity,
        detail=(("capacity", "4M + 8M^2/g + 4M sqrt(M) (rows with >= sqrt(M) dominated entries) + 2M sqrt(M)"),
                ("restricted_columns", "r' = sum_{s >= g/2} C(d, s) C(g, s)")),
    ),
    Formula(
        name="trivial-approx",
        families=(APPROX,),
        kind="lower",
        expression="4 n d",
        source=REF,
        where="inputs Q, K, V loaded, outputs stored (g >= 1)",
        constants="explicit",
        regime="every M, g >= 1",
        func=lambda p, M: 4.0 * p["n"] * p["d"],
        holds=lambda p, M: p["g"] >= 1,
    ),
)


def approx_paper_params(params: dict) -> dict:
    """``n, d, r, g, Z_input, Z_QK`` of ``approx-attention`` at builder ``params`` (``degree`` is accepted for ``g``).

    Raises
    ------
    KeyError
        If ``n``, ``d`` or ``g`` is missing.

    Examples
    --------
    >>> approx_paper_params({"n": 8, "d": 3, "g": 2})
    {'n': 8, 'd': 3, 'r': 10, 'g': 2, 'Z_input': 72, 'Z_QK': None}
    """
    n, d = int(params["n"]), int(params["d"])
    g = int(params["g"] if "g" in params or "degree" not in params else params["degree"])
    if d >= 0 and g >= 0 and _log10_binomial(d + g, g) > FLOAT_DIGITS:
        # C(d + g, g) of a billion-digit size took minutes to compute, for formulas that evaluate in floats
        raise ValueError(f"r = tau(d, g) = C({d} + {g}, {g}) has about {_log10_binomial(d + g, g):,.0f} digits, "
                         f"beyond the {FLOAT_DIGITS} of a float: give smaller d or g")
    return {"n": n, "d": d, "r": tau(d, g), "g": g, "Z_input": 3 * n * d, "Z_QK": None}


#: Decimal digits of the largest float: a paper parameter beyond it makes every formula inf.
FLOAT_DIGITS = 308


def _log10_binomial(m: int, k: int) -> float:
    return (math.lgamma(m + 1) - math.lgamma(k + 1) - math.lgamma(m - k + 1)) / math.log(10)


#: The registration (entry-point group ``spartition.formulas``); ``r``, ``Z_input``,
#: ``Z_QK`` may be given instead of computed, ``degree`` for ``g``.
APPROX_ATTENTION = FamilyBounds(
    APPROX, APPROX_FORMULAS, approx_paper_params, {"r": int, "degree": int, "Z_input": int, "Z_QK": int},
    PAPER_KEYS,
)
