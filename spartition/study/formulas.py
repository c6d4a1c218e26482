"""The registry of published I/O bounds for the attention families, evaluable at given parameters and M.

Every bound the three papers in ``shared/seeds`` state for the attention
families is one frozen :class:`Formula`: a function of the family's paper
parameters (``n, d, r, g, Z_input, Z_QK``) and the fast-memory size ``M``,
tagged with its source (paper, theorem or lemma), its kind (``lower`` or
``upper``), whether its constants are ``explicit`` in the paper or only
``asymptotic`` (Theta/O/Omega: the function is then the bare expression and
its constant is unknown), and the regime where it holds.

Regimes stated asymptotically are read with concrete thresholds, and the
tests check the crossovers they create:

* ``M = Omega(d^2)`` / ``M = o(d^2)`` (Saha & Ye, Li et al.): ``M >= d^2`` / ``M < d^2``.
* Upper bounds of exact attention are read for ``M <= n d`` (the range
  ``[d, nd]`` that FlashAttention's analysis assumes): beyond it the trivial
  ``Omega(n d)`` dominates and a bound below it cannot hold.
* Papp-Sobczyk-Zouzias cases (with ``r = C(d + g, g)``), a partition of all
  parameters: Case I ``M >= d r``; Case II ``M < d r`` and
  ``M >= (4e)^(g+1)`` (exactly the condition ``w0 >= g`` that their proof of
  Theorem 1.2 uses for ``g = o(log M)``); Case IV ``M < d r`` and
  ``M <= g^2`` (``g = Omega(sqrt M)``); Case III the rest.
* Dense bounds apply to dense DAGs only (``Z_QK = n^2``).
* The Papp-Sobczyk-Zouzias lower bounds (Key Lemma 3.2, Theorems 1.2-1.4 and
  their per-class counts of Appendices A.2, B.3, C) are proved for the product
  ``U1 H`` and extended to the whole computation only for ``n > r``
  (Appendix A.2, last paragraph); they are registered with that condition.
  Statements are registered with the regime the paper states them in (Key
  Lemma 3.2: Case II); the counts of a proof's construction or partition
  argument with the conditions that proof uses.

Where a proof gives constants, they are recorded: as explicit lower bounds
``M (ceil(W / U) - 1)`` from the proof's per-class count ``U`` (the
class-capacity form of the Hong-Kung lemma, docs/definitions.md section 3), reported
with ``U`` itself, and as tile sizes in :attr:`Formula.detail`.

Summation trees: the papers' upper bounds assume sums accumulated in the
order their tiles consume terms (PSZ Appendix A.3); on a DAG with a fixed
summation tree an algorithm may need a matching ``shape``/``order``.

References
----------
Saha & Ye, "I/O Complexity of Attention, or How Optimal is FlashAttention?"
(ICML 2024). Li, Liang, Shi, Song, Yue, Zhang, "On Fine-Grained I/O
Complexity of Attention Backward Passes" (arXiv 2410.09397), Theorems 1.1
and 4.5, Algorithm 6. Papp, Sobczyk, Zouzias, "Approaching I/O-optimality
for Approximate Attention" (arXiv 2605.23751), Theorems 1.1-1.4, Lemmas
3.1 and 3.3, Key Lemma 3.2, Appendices A-C.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Callable

from spartition.errors import UnknownFamily

__all__ = [
    "Formula",
    "FormulaValue",
    "FORMULAS",
    "formula_families",
    "formulas_for",
    "evaluate_formula",
    "evaluate_formulas",
    "paper_params_for",
    "SOURCES",
    "approx_case",
    "tau",
    "binom",
    "restricted_columns",
    "kl32_width",
]

SY = "Saha & Ye (ICML 2024)"
LI = "Li et al. (arXiv 2410.09397)"
PSZ = "Papp, Sobczyk & Zouzias (arXiv 2605.23751)"
REF = "docs/definitions.md section 2"

#: Short source tag -> the full reference.
SOURCES = {
    SY: "Barna Saha, Christopher Ye. I/O Complexity of Attention, or How Optimal is FlashAttention? ICML 2024",
    LI: "Xiaoyu Li, Yingyu Liang, Zhenmei Shi, Zhao Song, Song Yue, Jiahao Zhang. "
    "On Fine-Grained I/O Complexity of Attention Backward Passes. arXiv 2410.09397",
    PSZ: "Pal Andras Papp, Aleksandros Sobczyk, Anastasios Zouzias. "
    "Approaching I/O-optimality for Approximate Attention. arXiv 2605.23751",
    REF: "spartition docs/definitions.md section 2: the trivial bound (inputs with a successor loaded, outputs stored)",
}

FORWARD = "attention-forward"
BACK_W = "attention-backward-weights"
BACK_F = "attention-backward-flash"
APPROX = "approx-attention"
KINDS = ("lower", "upper")
CONSTANTS = ("explicit", "asymptotic")


# ---------------------------------------------------------------- helpers


def tau(w: int, g: int) -> int:
    """``tau(w) = C(w + g, g)``: monomials of degree ``<= g`` in ``w`` variables (PSZ Definition 2.1).

    Examples
    --------
    >>> tau(3, 2), tau(1, 4)
    (10, 5)
    """
    return math.comb(w + g, g)


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


def _dense(p):
    return p.get("Z_QK") in (None, p["n"] * p["n"])


def _hk(weight: float, capacity: float, M: int) -> float:
    """Class-capacity Hong-Kung bound ``M (ceil(weight / capacity) - 1)``, at least 0."""
    return float(max(0, M * (math.ceil(weight / capacity) - 1)))


# ---------------------------------------------------------------- the records


@dataclass(frozen=True)
class Formula:
    """One published bound, a function of the paper parameters and M.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"sy-flash-upper"``.
    families : tuple of str
        DAG families it is stated for.
    kind : {"lower", "upper"}
        Lower or upper bound on the optimal I/O.
    expression : str
        The bound as written (``M`` the fast memory).
    source : str
        The paper.
    where : str
        Theorem, lemma or proof in the paper.
    constants : {"explicit", "asymptotic"}
        ``asymptotic``: only the order is stated, the value is the bare
        expression and the hidden constant is unknown.
    regime : str
        Where it holds, as stated, and the project's concrete reading.
    func : callable
        ``func(p, M) -> float``.
    holds : callable
        ``holds(p, M) -> bool``: whether ``(p, M)`` is in the regime.
    capacity : callable or None
        For explicit lower bounds from an S-partition proof: ``U(p, M)``, the
        proof's bound on the weighted nodes of one 2M-partition class.
    detail : tuple of (str, str)
        Explicit constants of the proof (tile sizes, counts).
    """

    name: str
    families: tuple
    kind: str
    expression: str
    source: str
    where: str
    constants: str
    regime: str
    func: Callable = field(repr=False, compare=False)
    holds: Callable = field(repr=False, compare=False)
    capacity: Callable | None = field(default=None, repr=False, compare=False)
    detail: tuple = ()

    def __post_init__(self):
        if self.kind not in KINDS or self.constants not in CONSTANTS:
            raise ValueError(f"formula {self.name!r}: bad kind {self.kind!r} or constants {self.constants!r}")

    def to_dict(self) -> dict:
        """The stable JSON form (without the callables)."""
        return {
            "name": self.name, "families": list(self.families), "kind": self.kind,
            "expression": self.expression, "source": self.source, "where": self.where,
            "constants": self.constants, "regime": self.regime, "detail": dict(self.detail),
        }


@dataclass(frozen=True)
class FormulaValue:
    """A formula evaluated at given parameters and M.

    ``value`` is ``nan`` where the expression is undefined there (e.g. no
    admissible tile width); ``applies`` says whether ``(params, M)`` lies in
    the formula's regime; ``capacity`` is the per-class count ``U`` of
    explicit partition bounds (else None).
    """

    name: str
    family: str
    kind: str
    value: float
    applies: bool
    constants: str
    source: str
    where: str
    regime: str
    expression: str
    M: int
    params: dict
    capacity: float | None = None

    def to_dict(self) -> dict:
        """JSON form; a non-finite value becomes None."""
        def num(x):
            return None if x is None or not math.isfinite(x) else x

        return {
            "name": self.name, "family": self.family, "kind": self.kind, "value": num(self.value),
            "applies": self.applies, "constants": self.constants, "source": self.source,
            "where": self.where, "regime": self.regime, "expression": self.expression,
            "M": self.M, "params": dict(self.params), "capacity": num(self.capacity),
        }


# ---------------------------------------------------------------- exact attention


def _always(p, M):
    return True


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


def _sparse(p, M):
    zi, zq = p["Z_input"], p["Z_QK"]
    return min(zi * zi / M, zi * math.sqrt(zq) / math.sqrt(M))


_EXACT = [
    Formula(
        "sy-lower", (FORWARD,), "lower", "min(n^2 d^2 / M, n^2 d / sqrt(M))", SY,
        "main theorem, standard matrix multiplication (Omega)", "asymptotic",
        "every M, dense; the two terms cross at M = d^2",
        _sy_min, lambda p, M: _dense(p),
    ),
    Formula(
        "sy-upper", (FORWARD,), "upper", "min(n^2 d^2 / M, n^2 d / sqrt(M))", SY,
        "main theorem, standard matrix multiplication (O): FlashAttention for M >= d^2, square tiling below",
        "asymptotic", "dense, read for M <= n d", _sy_min, _upper_range,
    ),
    Formula(
        "sy-flash-upper", (FORWARD,), "upper", "n^2 d^2 / M", SY,
        "FlashAttention I/O (O), optimal for M >= d^2", "asymptotic", "dense, d <= M <= n d",
        lambda p, M: p["n"] ** 2 * p["d"] ** 2 / M, _flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        "sy-tiling-upper", (FORWARD,), "upper", "n^2 d / sqrt(M)", SY,
        "square tiling algorithm for small caches (O)", "asymptotic", "dense, M < d^2 (where it beats FlashAttention)",
        lambda p, M: p["n"] ** 2 * p["d"] / math.sqrt(M), _small,
        detail=(("tile_side", "floor(sqrt(M / 4))"),),
    ),
    Formula(
        "sy-fmm-lower", (FORWARD,), "lower", "min(n^2 d^2 / M, n^2)", SY,
        "lower bound for any matrix multiplication algorithm (Omega)", "asymptotic",
        "dense, entries in a field F_q with q > n; any M",
        lambda p, M: min(p["n"] ** 2 * p["d"] ** 2 / M, p["n"] ** 2), lambda p, M: _dense(p),
    ),
    Formula(
        "sy-binary-lower", (FORWARD,), "lower", "min(n^2 d^2 / (M log^2 n), n^2)", SY,
        "lower bound for binary inputs, any matrix multiplication (Omega, tight up to log^2 n)", "asymptotic",
        "dense, binary Q and K, n >= 2 (natural log)",
        lambda p, M: min(p["n"] ** 2 * p["d"] ** 2 / (M * math.log(p["n"]) ** 2), p["n"] ** 2) if p["n"] >= 2 else math.nan,
        lambda p, M: _dense(p) and p["n"] >= 2,
    ),
    Formula(
        "li-lower", (BACK_W,), "lower", "min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))", LI,
        "Theorem 1.1 (Omega)", "asymptotic", "every M, dense; the terms cross at M = d^2",
        _li_min, lambda p, M: _dense(p),
    ),
    Formula(
        "li-upper", (BACK_W,), "upper", "min((n^2 d^2 + n d^3) / M, (n^2 d + n d^2) / sqrt(M))", LI,
        "Theorem 1.1 (O): FlashAttention backward for M >= d^2, Algorithm 6 below", "asymptotic",
        "dense, read for M <= n d", _li_min, _upper_range,
    ),
    Formula(
        "li-flash-upper", (BACK_W,), "upper", "(n^2 d^2 + n d^3) / M", LI,
        "FlashAttention backward (O), optimal for M = Omega(d^2)", "asymptotic", "dense, d <= M <= n d",
        lambda p, M: (p["n"] ** 2 * p["d"] ** 2 + p["n"] * p["d"] ** 3) / M, _flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        "li-alg6-upper", (BACK_W,), "upper", "(n^2 d + n d^2) / sqrt(M)", LI,
        "Algorithm 6, small cache (O)", "asymptotic", "dense, M = o(d^2), read as M < d^2",
        lambda p, M: (p["n"] ** 2 * p["d"] + p["n"] * p["d"] ** 2) / math.sqrt(M), _small,
        detail=(("tile_side", "floor(sqrt(M / 4))"), ("intermediates", "n x n and n x d matrices written to slow memory")),
    ),
    Formula(
        "li-flash-backward-upper", (BACK_F,), "upper", "n^2 d^2 / M", LI,
        "FlashAttention backward: the prior upper bound for large caches M in [d, nd] that the paper starts from (O)", "asymptotic",
        "dense, d <= M <= n d", lambda p, M: p["n"] ** 2 * p["d"] ** 2 / M, _flash_range,
        detail=(("block_cols", "B_c = ceil(M / (4 d))"), ("block_rows", "B_r = min(B_c, d)")),
    ),
    Formula(
        "li-sparse-lower", (FORWARD, BACK_W, BACK_F), "lower", "min(Z_input^2 / M, Z_input sqrt(Z_QK) / sqrt(M))", LI,
        "Theorem 4.5, sparse attention forward and backward (Omega)", "asymptotic",
        "every M, dense or masked; the terms cross at M = Z_input^2 / Z_QK",
        _sparse, _always,
    ),
    Formula(
        "trivial-forward", (FORWARD,), "lower", "4 n d", REF, "inputs Q, K, V loaded, outputs O stored",
        "explicit", "every M", lambda p, M: 4.0 * p["n"] * p["d"], _always,
    ),
    Formula(
        "trivial-backward-weights", (BACK_W,), "lower", "4 n d + 3 d^2", REF,
        "inputs A1, A2, A3, E, X, Y loaded, output G stored", "explicit", "every M",
        lambda p, M: 4.0 * p["n"] * p["d"] + 3.0 * p["d"] ** 2, _always,
    ),
    Formula(
        "trivial-backward-flash", (BACK_F,), "lower", "8 n d + n", REF,
        "inputs Q, K, V, O, dO, l loaded, outputs dQ, dK, dV stored", "explicit", "every M",
        lambda p, M: 8.0 * p["n"] * p["d"] + p["n"], _always,
    ),
]


# ---------------------------------------------------------------- approximate attention


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


def _w0(p, M):
    g = p["g"]
    return g * M ** (1 / (g + 1)) / (4 * math.e)


_APPROX = [
    Formula(
        "psz-thm11-upper", (APPROX,), "upper", "n d", PSZ, "Theorem 1.1, Case I (O)", "asymptotic",
        "Case I: M = Omega(d r), read as M >= d r",
        lambda p, M: float(p["n"] * p["d"]), _case("I"),
        detail=(("tile_height", "M / (4 d) rows of U1, each regenerated from its d entries of Q"),
                ("tile_width", "c0 d with c0 d r <= M / 4"), ("H_tile", "r x c0 d")),
    ),
    Formula(
        "psz-thm11-lower", (APPROX,), "lower", "3 n d", PSZ,
        "Theorem 1.1 / section 3.3: each entry of Q, K, V loaded at least once", "explicit",
        "every M (stated for Case I)", lambda p, M: 3.0 * p["n"] * p["d"], _always,
    ),
    Formula(
        "psz-thm12-upper", (APPROX,), "upper", "n r d (4 e^2)^g / M^(g/(g+1))", PSZ,
        "Theorem 1.2, Case II (O); Key Lemma 3.2 with w = w0", "asymptotic",
        "Case II: M = o(d r), g = o(log M), read as M < d r and M >= (4e)^(g+1)",
        lambda p, M: p["n"] * p["r"] * p["d"] * (4 * math.e**2) ** p["g"] / M ** (p["g"] / (p["g"] + 1)), _case("II"),
        detail=(("w0", "g M^(1/(g+1)) / (4 e)"), ("w0 >= g", "iff M >= (4e)^(g+1)")),
    ),
    Formula(
        "psz-thm12-lower", (APPROX,), "lower", "n r d g / M^(g/(g+1))", PSZ,
        "Theorem 1.2, Case II (Omega); Key Lemma 3.2 lower bound with w = w0", "asymptotic",
        "Case II: M < d r and M >= (4e)^(g+1); n > r (Appendix A.2's extension to the whole computation)",
        lambda p, M: p["n"] * p["r"] * p["d"] * p["g"] / M ** (p["g"] / (p["g"] + 1)), _case("II", whole=True),
        detail=(("w0", "g M^(1/(g+1)) / (4 e)"),),
    ),
    Formula(
        "psz-kl32-upper", (APPROX,), "upper", "n d C(dg/w, g)", PSZ,
        "Key Lemma 3.2 upper bound (O), proof in Appendix A.1", "asymptotic",
        "Case II (as the lemma states), with an integer w, g <= w <= d, w tau(w) <= M / 4 (w = largest such); "
        "C(dg/w, g) is the generalised binomial when g does not divide w",
        _kl32_upper, _has_w(cases=("II",)),
        detail=(("output_tile", "M / (4 w) x w"), ("groups", "dg / w column groups of Q of w / g variables"),
                ("aggregation_tiles", "C(#groups, g) per output tile, each terms assigned to the first tile (lexicographic) generating it"),
                ("io_per_aggregation_tile", "<= M: M/4 loads of Q, M/4 of H, M/2 output load + store"),
                ("total", "(4 n w / M)(d / w) C(dg/w, g) M = 4 n d C(dg/w, g) per product")),
    ),
    Formula(
        "psz-kl32-tiling-upper", (APPROX,), "upper", "n d C(ceil(d / floor(w/g)), g)", PSZ,
        "Key Lemma 3.2 construction (Appendix A.1) realised with integer groups of floor(w/g) variables (O): "
        "the aggregation tiles of the approx-key-lemma schedule", "asymptotic",
        "an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), any case (the construction "
        "needs only that its tiles fit)",
        _kl32_tiling, _has_w(),
        detail=(("groups", "ceil(d / floor(w / g)) column groups of Q, of floor(w / g) variables (the last may be smaller)"),
                ("aggregation_tiles", "C(#groups, g) per output tile; one tile of all d variables when #groups <= g"),
                ("vs_paper", "C(ceil(d / floor(w/g)), g) >= C(dg/w, g); e.g. d = 10, g = 2, w = 3: 45 against 18.9")),
    ),
    Formula(
        "psz-kl32-lower", (APPROX,), "lower", "n r d w / M", PSZ,
        "Key Lemma 3.2 lower bound (Omega), proof in Appendix A.2", "asymptotic",
        "Case II (as the lemma states), an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), "
        "and n > r (the proof's extension from U1 H to the whole computation)",
        _kl32_lower, _has_w(whole=True, cases=("II",)),
    ),
    Formula(
        "psz-kl32-partition-lower", (APPROX,), "lower", "M (ceil(n (r - 1) d / U) - 1), U = 4M + 4M^2/w + M^2/(2w)", PSZ,
        "Key Lemma 3.2 lower-bound proof (Appendix A.2): per-class count of internal nodes", "explicit",
        "an integer w with g <= w <= d and w tau(w) <= M / 4 (w = largest such), and n > r (the proof's "
        "extension from U1 H to the whole computation; below it the count fails: n = 1, d = 22, g = 2, M = 48 "
        "has 6050 products in one 96-class against U = 5376); any case",
        _kl32_explicit, _has_w(whole=True), capacity=_kl32_capacity,
        detail=(("capacity", "4M (dominator + minimum set) + 4M^2/w (rows with >= w dominated entries) + M^2/(2w) (other rows)"),
                ("weight", "n (r - 1) d products U1[i, a] H[a, c], a != 0 (the constant column has none in the project's DAG)")),
    ),
    Formula(
        "psz-thm13-upper", (APPROX,), "upper", "min(n r d^2 / M, n r d / sqrt(M))", PSZ,
        "Theorem 1.3, Case III (O), from Lemma 3.1", "asymptotic",
        "Case III: M < d r, (4e)^(g+1) > M > g^2", _lem31, _case("III"),
    ),
    Formula(
        "psz-thm13-lower", (APPROX,), "lower", "n r d g / M", PSZ,
        "Theorem 1.3, Case III (Omega), proof in Appendix B.3", "asymptotic",
        "Case III, d >= 5 g, and n > r (the extension to the whole computation, as in Appendix A.2)",
        lambda p, M: p["n"] * p["r"] * p["d"] * p["g"] / M, _case("III", d5g=True, whole=True),
    ),
    Formula(
        "psz-thm13-partition-lower", (APPROX,), "lower", "M (ceil(n r' d / U) - 1), U = 4M + 8M^2/g + g M", PSZ,
        "Theorem 1.3 lower-bound proof (Appendix B.3): per-class count on the restricted columns", "explicit",
        "every M with n > r (the count needs no case assumption, the paper states it for Case III with d >= 5 g; "
        "n > r is its extension to the whole computation, below which it fails: n = 1, d = 4, g = 4, M = 6 "
        "has 212 restricted products in one 12-class against U = 120)",
        lambda p, M: _hk(_restricted_weight(p), _c3_capacity(p, M), M), _any_m_whole, capacity=_c3_capacity,
        detail=(("capacity", "4M + (4M/g rows with >= g/2 dominated entries) x 2M + (g/2) x 2M"),
                ("restricted_columns", "r' = sum_{s >= g/2} C(d, s) C(g, s) monomials with >= g/2 distinct variables")),
    ),
    Formula(
        "psz-lem31-upper", (APPROX,), "upper", "min(n r d^2 / M, n r d / sqrt(M))", PSZ,
        "Lemma 3.1, generic tiling (O)", "asymptotic", "M = o(d r), read as M < d r (Cases II-IV); terms cross at M = d^2",
        _lem31, _case("II", "III", "IV"),
    ),
    Formula(
        "psz-lem33-upper", (APPROX,), "upper", "n d (C(d, g) + 4 r g / M)", PSZ,
        "Lemma 3.3, equation (3) (O), proof in Appendix B.2", "asymptotic",
        "Case III with d = O(g^(2 - delta1)) and M = O(g^delta2); read as Case III and d < g^2 "
        "(the polynomial conditions are asymptotic and not checked). Its step C(d, g) <= 4 r g / M, which makes "
        "it <= 8 n r d g / M, holds only asymptotically (g -> infinity): it fails at d = 3, g = 2, M = 29 (3 > 80/29)",
        lambda p, M: p["n"] * p["d"] * (math.comb(p["d"], p["g"]) + 4 * p["r"] * p["g"] / M),
        lambda p, M: approx_case(p, M) == "III" and p["d"] < p["g"] ** 2,
        detail=(("output_tile", "M / (4 g) x g"), ("aggregation_tiles", "C(d, g): every g-subset of columns of Q"),
                ("sub_tiles", "tiles of U1 wider than M / (4 g) are split into sub-tiles of height M / (4 g)"),
                ("step", "C(d, g) <= 4 r g / M (Appendix B.2): asymptotic in g only, false at small sizes "
                         "(d = 3, g = 2, M = 29)")),
    ),
    Formula(
        "psz-thm14-upper", (APPROX,), "upper", "n r d / sqrt(M)", PSZ, "Theorem 1.4, Case IV (O), from Lemma 3.1",
        "asymptotic", "Case IV: M < d r and g = Omega(sqrt M), read as M <= g^2",
        lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M), _case("IV"),
    ),
    Formula(
        "psz-thm14-lower", (APPROX,), "lower", "n r d / sqrt(M)", PSZ, "Theorem 1.4, Case IV (Omega), proof in Appendix C",
        "asymptotic", "Case IV, d >= 5 g, and n > r (the extension to the whole computation, as in Appendix A.2)",
        lambda p, M: p["n"] * p["r"] * p["d"] / math.sqrt(M), _case("IV", d5g=True, whole=True),
    ),
    Formula(
        "psz-thm14-partition-lower", (APPROX,), "lower", "M (ceil(n r' d / U) - 1), U = 4M + 8M^2/g + 6 M sqrt(M)", PSZ,
        "Theorem 1.4 lower-bound proof (Appendix C): per-class count on the restricted columns", "explicit",
        "every M with n > r (the count needs no case assumption, the paper states it for Case IV with d >= 5 g; "
        "n > r is its extension to the whole computation, below which it fails: n = 1, d = 4, g = 4, M = 6 "
        "has 212 restricted products in one 12-class against U = 184)",
        lambda p, M: _hk(_restricted_weight(p), _c4_capacity(p, M), M), _any_m_whole, capacity=_c4_capacity,
        detail=(("capacity", "4M + 8M^2/g + 4M sqrt(M) (rows with >= sqrt(M) dominated entries) + 2M sqrt(M)"),
                ("restricted_columns", "r' = sum_{s >= g/2} C(d, s) C(g, s)")),
    ),
    Formula(
        "trivial-approx", (APPROX,), "lower", "4 n d", REF, "inputs Q, K, V loaded, outputs stored (g >= 1)",
        "explicit", "every M, g >= 1", lambda p, M: 4.0 * p["n"] * p["d"], lambda p, M: p["g"] >= 1,
    ),
]

#: Every registered formula, in registry order.
FORMULAS: tuple = tuple(_EXACT + _APPROX)


# ---------------------------------------------------------------- queries


def formula_families() -> list[str]:
    """Families with at least one registered formula, sorted.

    Examples
    --------
    >>> formula_families()
    ['approx-attention', 'attention-backward-flash', 'attention-backward-weights', 'attention-forward']
    """
    return sorted({fam for f in FORMULAS for fam in f.families})


def formulas_for(family: str) -> list[Formula]:
    """The formulas stated for ``family``, in registry order.

    Raises
    ------
    UnknownFamily
        If no formula is registered for ``family``.

    Examples
    --------
    >>> [f.name for f in formulas_for("attention-backward-flash")]
    ['li-flash-backward-upper', 'li-sparse-lower', 'trivial-backward-flash']
    """
    found = [f for f in FORMULAS if family in f.families]
    if not found:
        raise UnknownFamily(f"no bounds registered for family {family!r}; families with bounds: {', '.join(formula_families())}")
    return found


_REQUIRED = {
    FORWARD: ("n", "d"),
    BACK_W: ("n", "d"),
    BACK_F: ("n", "d"),
    APPROX: ("n", "d", "g"),
}


def paper_params_for(family: str, params: dict | None = None) -> dict:
    """The paper parameters ``n, d, r, g, Z_input, Z_QK`` of ``family`` from its builder parameters.

    Builder defaults fill missing keys when the family is registered; the
    mask parameters give ``Z_QK``; ``r = C(d + g, g)`` for approximate
    attention (``degree`` is accepted for ``g``). Keys ``r``, ``Z_input``,
    ``Z_QK`` given in ``params`` override the computed ones. No DAG is built.

    Raises
    ------
    UnknownFamily
        If the family has no formulas or a required parameter is missing.

    Examples
    --------
    >>> paper_params_for("attention-forward", {"n": 4, "d": 2, "mask": "causal"})
    {'n': 4, 'd': 2, 'r': None, 'g': None, 'Z_input': 24, 'Z_QK': 10}
    >>> paper_params_for("approx-attention", {"n": 8, "d": 3, "g": 2})["r"]
    10
    """
    from spartition.families.masks import mask_size

    if family not in _REQUIRED:
        formulas_for(family)  # raises with the list of families
    merged = {}
    try:
        from spartition.core.registry import family as builder_of

        sig = inspect.signature(builder_of(family))
        merged = {k: v.default for k, v in sig.parameters.items() if v.default is not inspect.Parameter.empty}
    except UnknownFamily:
        pass
    merged.update(params or {})
    if "g" not in merged and "degree" in merged:
        merged["g"] = merged["degree"]
    for key in _REQUIRED[family]:
        if key not in merged:
            raise UnknownFamily(f"{family} needs parameter {key!r} to evaluate its bounds")
    n, d = int(merged["n"]), int(merged["d"])
    out = {"n": n, "d": d, "r": None, "g": None, "Z_input": None, "Z_QK": None}
    if family == APPROX:
        g = int(merged["g"])
        out.update(g=g, r=math.comb(d + g, g), Z_input=3 * n * d)
    else:
        mask_keys = ("mask", "window", "block", "density", "seed")
        mask_kw = {k: merged[k] for k in mask_keys if k in merged}
        for k, kind in (("window", int), ("block", int), ("density", float), ("seed", int)):
            if k in mask_kw:
                mask_kw[k] = kind(mask_kw[k])
        out["Z_QK"] = mask_size(n, **mask_kw)
        out["Z_input"] = {FORWARD: 3 * n * d, BACK_F: 5 * n * d + n, BACK_W: 4 * n * d + 2 * d * d}[family]
    for key in ("r", "Z_input", "Z_QK"):
        if key in (params or {}):
            out[key] = int(params[key])
    return out


def evaluate_formula(formula: Formula, params: dict, M: int, family: str | None = None) -> FormulaValue:
    """Evaluate ``formula`` at paper parameters ``params`` and memory ``M``.

    Raises
    ------
    ValueError
        If ``M < 1``.

    Examples
    --------
    >>> f = formulas_for("attention-forward")[2]
    >>> v = evaluate_formula(f, {"n": 8, "d": 2, "Z_QK": 64}, 4)
    >>> f.name, v.value, v.applies
    ('sy-flash-upper', 64.0, True)
    """
    if M < 1:
        raise ValueError(f"M must be >= 1, got {M}")
    try:
        value = float(formula.func(params, M))
    except (ZeroDivisionError, ValueError, OverflowError):
        value = math.nan
    try:
        applies = bool(formula.holds(params, M))
    except (ZeroDivisionError, ValueError, OverflowError):
        applies = False
    capacity = float(formula.capacity(params, M)) if formula.capacity is not None else None
    return FormulaValue(
        name=formula.name, family=family or formula.families[0], kind=formula.kind, value=value,
        applies=applies and not math.isnan(value), constants=formula.constants, source=formula.source,
        where=formula.where, regime=formula.regime, expression=formula.expression, M=M,
        params=dict(params), capacity=capacity,
    )


def evaluate_formulas(family: str, params: dict, M: int) -> list[FormulaValue]:
    """Every formula of ``family`` evaluated at builder ``params`` (see :func:`paper_params_for`) and ``M``.

    Examples
    --------
    >>> rows = evaluate_formulas("attention-forward", {"n": 16, "d": 4}, 16)
    >>> {v.name: v.value for v in rows if v.name in ("sy-flash-upper", "sy-tiling-upper")}
    {'sy-flash-upper': 256.0, 'sy-tiling-upper': 256.0}
    """
    p = paper_params_for(family, params)
    return [evaluate_formula(f, p, M, family) for f in formulas_for(family)]
