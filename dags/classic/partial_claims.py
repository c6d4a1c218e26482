"""The claim set ``partial``: the partial game's matrix-product segment count, checked where it can fail.

``segment-matmul-partial-lower`` (:mod:`spartition.families.classic.partial_bounds`,
docs/definitions.md section 3, "Segment counts in the partial game") is a
theorem of this project, proven for the partial-computation game. Four
claims check it, each able to fail where a constant is mutated
(tests/families/classic/test_partial_claims.py mutates them):

* **the program**: the count at a segment's budgets equals its program
  enumerated point by point here (a count lowered or raised by 10% differs);
* **the derivation**: the bound is ``S (h - 1)`` with ``h`` recomputed from
  the counts at the bound's ``S`` (a bound ``S h`` differs);
* **the per-segment count** on replayed partial-game schedules (the game's
  greedy, which saves and reloads partial sums and half-made products, and
  the blocked product translated edge by edge), on both builds of the sums;
* **the bound** against every such schedule.
"""

from __future__ import annotations

import math

from spartition.families.classic import partial_bounds
from spartition.families.classic.partial_bounds import matmul_partial_budgets
from spartition.families.common.papers import SEGMENTS
from spartition.families.common.segments import shared_segments_needed
from spartition.study.claims import Claim, Interval, Quantity, expr, formula
from spartition.study.claimsets import ClaimSet

__all__ = ["PARTIAL_CLAIMS", "enumerated_matmul_partial_count", "partial_schedules"]

NAME = "segment-matmul-partial-lower"
WHERE = "matmul_partial_capacity (spartition.families.classic.partial_bounds)"


def enumerated_matmul_partial_count(a: int, b: int, c: int, T: int, L: int) -> int:
    """:func:`matmul_partial_capacity`'s program, every integer point ``(x, y, z, p)`` tried.

    >>> enumerated_matmul_partial_count(2, 2, 2, 7, 4)
    4
    """
    best = 0.0
    for x in range(0, min(a * b, L) + 1):
        for y in range(0, min(b * c, L - x) + 1):
            for z in range(0, min(a * c, T - x - y) + 1):
                for p in range(0, min(L - x - y, T - x - y - z) + 1):
                    best = max(best, min(b * z, p + min(math.sqrt(x * y * z), x * y, c * x, a * y)))
    return math.floor(best + 1e-9)


def _dims(p):
    return p["a"], p["b"], p["c"]


def partial_schedules(dag, M: int) -> dict:
    """The partial-game schedules the claims read: the game's greedy, and the blocked product (oneshot, translated
    edge by edge) where the family has it and it fits; each replayed by the caller."""
    from spartition.core.partial_greedy import partial_greedy_schedule
    from spartition.core.registry import algorithms
    from spartition.errors import SpartitionError
    from spartition.study.game_schedules import game_schedule

    out = {"partial-greedy": partial_greedy_schedule(dag, M)}
    for name, alg in algorithms().items():
        if "*" not in alg.families and alg.applies_to(dag.graph.get("family"), "oneshot"):
            try:
                out[name] = game_schedule(dag, alg, M, "partial")
            except SpartitionError:
                continue
    return out


def _worst_segment() -> Quantity:
    """Most product edges beyond the count in one segment of a replayed partial schedule, at S in {M/2, M, 2M, the
    bound's S}; known without a schedule: at most ``a b c - F`` for the largest middle count."""
    def sizes(ctx):
        M = ctx.M
        return sorted({max(1, M // 2), M, 2 * M, partial_bounds.matmul_partial_bound(*_dims(ctx.params), M).S})

    def ev(ctx):
        from spartition.core.game import replay

        a, b, c = _dims(ctx.params)
        worst = None
        for name, schedule in partial_schedules(ctx.dag, ctx.M).items():
            replay(ctx.dag, schedule)
            for S in sizes(ctx):
                for k, seg in enumerate(partial_bounds.matmul_partial_charges(ctx.dag, schedule, S)):
                    T, L = matmul_partial_budgets(ctx.M, S, seg["a"], seg["b"], not seg["first"],
                                                  not seg["last"])
                    gap = seg["edges"] - partial_bounds.matmul_partial_capacity(a, b, c, T, L)
                    if worst is None or gap > worst[0]:
                        worst = (gap, f"schedule {name}, segment {k} of S = {S} I/O moves")
        return Interval.point(worst[0], "most product edges beyond G(T, L) in one segment of a replayed schedule",
                              worst[1])

    def known(ctx):
        a, b, c = _dims(ctx.params)
        fewest = min(partial_bounds.matmul_partial_capacity(a, b, c, *matmul_partial_budgets(ctx.M, S, 0, ctx.M))
                     for S in sizes(ctx))
        return Interval(-math.inf, a * b * c - fewest, "0 .. all product edges")

    return Quantity("product edges beyond the count in one segment", ev, known)


def _cheapest() -> Quantity:
    def ev(ctx):
        from spartition.core.game import replay

        best = min((replay(ctx.dag, s).io, name) for name, s in partial_schedules(ctx.dag, ctx.M).items())
        return Interval.point(best[0], "the cheapest replayed partial-game schedule", f"schedule {best[1]}")

    return Quantity("I/O of the cheapest replayed partial-game schedule", ev)


def _derived(p, M):
    b = partial_bounds.matmul_partial_bound(*_dims(p), M)
    h = shared_segments_needed(
        p["a"] * p["b"] * p["c"],
        lambda start, end, x, y: partial_bounds.matmul_partial_capacity(
            *_dims(p), *matmul_partial_budgets(M, b.S, x, y, start, end)),
        M, 8)
    return b.S * (h - 1) if h else 0


GRID = {"a": [4], "b": [4], "c": [4], "sums": ["node", "binary"]}

PARTIAL_LIST = (
    Claim("segment-matmul-partial-program",
          "the count of product edges at T = 3M, L = 2M is its program's maximum (every integer point tried)", WHERE,
          "matmul", {"a": [4, 8], "b": [4], "c": [4]},
          expr(lambda p, M: partial_bounds.matmul_partial_capacity(*_dims(p), 3 * M, 2 * M),
               "matmul_partial_capacity"), "==",
          expr(lambda p, M: enumerated_matmul_partial_count(*_dims(p), 3 * M, 2 * M), "the program, enumerated"),
          Ms=(2, 3, 4), variant="partial", regime="every instance (an identity)"),
    Claim(NAME + "-derivation",
          f"{NAME} is S (h - 1) at its S, h the fewest segments whose counts reach a b c", SEGMENTS, "matmul",
          {"a": [8], "b": [8], "c": [8]}, formula(NAME), "==", expr(_derived, "S (h(S) - 1), h recomputed"),
          Ms=(2, 4, 8), variant="partial", regime="b >= 2, 2 <= M (the formula's regime)"),
    Claim("segment-matmul-partial-count",
          "every segment of S loads and saves marks at most G(T, L) product edges, with the budgets of its "
          "boundaries (T = M + S + b, L = M + S), on partial-game schedules", WHERE, "matmul", GRID, _worst_segment(),
          "<=", expr(lambda p, M: 0, "0"), Ms=(2, 3, 4, 6), variant="partial",
          regime="the partial game, either build of the sums; every S"),
    Claim(NAME, f"no replayed partial-game schedule costs less than {NAME} (max_S S (h(S) - 1))", SEGMENTS,
          "matmul", GRID, _cheapest(), ">=", formula(NAME), Ms=(2, 3, 4, 6), variant="partial",
          regime="b >= 2, 2 <= M <= ab + bc + ac"),
)

PARTIAL_CLAIMS = ClaimSet("partial", SEGMENTS, PARTIAL_LIST)
