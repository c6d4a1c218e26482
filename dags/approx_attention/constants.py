"""The constant studies of the ``psz`` claim set: which constant each asymptotic formula of Papp, Sobczyk & Zouzias allows.

Each :class:`~spartition.study.claimsets.ConstantStudy` sets a formula against the optima and replayed schedules
of the ``approx-attention`` DAG (standard game, with recomputation, the papers' game) on :data:`CONSTANT_GRID`.
:func:`psz_params_for` gives the DAG an algorithm consumes (its column order).

References
----------
Papp, Sobczyk & Zouzias, "Approaching I/O-optimality for Approximate Attention" (arXiv 2605.23751).
"""

from __future__ import annotations

from spartition.study.claimsets import ConstantStudy

__all__ = ["constant_study_ms", "psz_params_for"]


FAM = "approx-attention"


ALGS = ("approx-case-i", "approx-lemma-3.1", "approx-key-lemma", "approx-lemma-3.3", "greedy")


def psz_params_for(name: str, params: dict, M: int) -> dict:
    """The builder parameters of the DAG algorithm ``name`` consumes at ``M`` (its column order)."""
    from spartition.families.approx_attention.schedules import paper_w

    p = {k: v for k, v in params.items() if k != "order"}
    if name == "approx-key-lemma":
        w = paper_w(int(p["d"]), int(p["g"]), M)
        return {**p, "order": f"grouped-{w}"} if w is not None else p
    if name == "approx-lemma-3.3":
        return {**p, "order": f"grouped-{p['g']}"}
    return p


#: The constant studies' grid: Cases I and III at n = 16, 32; Case II (and n > r) at d = 12, g = 1,
#: M = 128, 144 (M >= (4e)^2 = 118 and M < d r = 156); Case IV (M <= g^2) at g = 3 and 4.
CONSTANT_GRID = [{"n": [16, 32], "d": [3, 4, 6], "g": [1, 2]}, {"n": [16], "d": [12], "g": [1]},
                 {"n": [4], "d": [3], "g": [3]}, {"n": [8], "d": [4], "g": [4]}]


def constant_study_ms(p):
    if p["g"] >= 3:
        return [9] if p["g"] == 3 else [12, 16]
    return [16, 24, 48, 64, 128, 256, 512] + ([144] if p["d"] == 12 else [])


#: The schedules that refute a lower formula's constant: the four published tilings and the tile space they
#: share (``approx-tiled``), each at its cheapest tile options.
REFUTING_ALGS = (*ALGS[:4], "approx-tiled")

CONSTANTS = tuple(
    ConstantStudy(f, FAM, CONSTANT_GRID, constant_study_ms, REFUTING_ALGS if f.endswith("-lower") else ALGS[:4],
                  params_for=psz_params_for, variant="recompute", search=f.endswith("-lower"))
    for f in ("psz-thm11-upper", "psz-lem31-upper", "psz-kl32-upper", "psz-thm12-upper", "psz-thm13-upper",
              "psz-lem33-upper", "psz-thm14-upper", "psz-thm12-lower", "psz-kl32-lower", "psz-thm13-lower")
)


#: Theorem 1.4's lower bound needs Case IV with d >= 5g and n > r: the smallest such DAG (n = 67,
#: d = 10, g = 2, M <= 4) has about 10^5 nodes, so its study runs with --big only.
BIG_CONSTANTS = (ConstantStudy("psz-thm14-lower", FAM, {"n": [67], "d": [10], "g": [2]}, lambda p: [4], ("greedy",),
                               params_for=psz_params_for, variant="recompute"),)
