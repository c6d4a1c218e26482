"""The papers' own I/O counts of the approximate-attention plans, and the regimes their lemmas are stated for.

:func:`paper_count` is the I/O a lemma of Papp, Sobczyk & Zouzias states for a plan (its leading terms, with the
paper's constants), :func:`paper_regime` whether M lies in the regime the lemma assumes; both are compared with
the replayed schedules of :mod:`spartition.families.approx_attention.schedules`.

References
----------
Papp, Sobczyk & Zouzias, "Approaching I/O-optimality for Approximate Attention" (arXiv 2605.23751), Lemma 3.1,
Key Lemma 3.2, Lemma 3.3 and Case I.
"""

from __future__ import annotations

import math

from spartition.families.approx_attention.formulas import approx_case, binom
from spartition.families.approx_attention.plans import grouped_width, plan_params

__all__ = ["paper_count", "paper_regime"]


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
    n, d, g, r, norm = plan_params(params)
    if name == "approx-case-i":
        c0 = min(1.0, M / (4 * d * r))
        return 6 * n * d / c0
    if name == "approx-lemma-3.1":
        return min(8 * n * r * d / math.sqrt(M), 16 * n * r * d * d / M)
    W = grouped_width(params, name)
    if name == "approx-key-lemma":
        return 8 * n * d * binom(d * g / W, g)
    return 8 * n * d * (math.comb(d, g) + 4 * r * g / M)


def paper_regime(name: str, params: dict, M: int) -> bool:
    """Whether ``(params, M)`` lies where the paper states the bound that :func:`paper_count` transcribes.

    With the project's reading of the cases (:func:`spartition.families.approx_attention.formulas.approx_case`):
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
    n, d, g, r, norm = plan_params(params)
    cases = {"approx-case-i": ("I",), "approx-lemma-3.1": ("II", "III", "IV"),
             "approx-key-lemma": ("II",), "approx-lemma-3.3": ("III",)}[name]
    return approx_case({"d": d, "g": g, "r": r}, M) in cases
