"""The claim set ``partial``: the partial game's segment counts, checked where they can fail.

``segment-matmul-partial-lower`` (:mod:`spartition.families.classic.partial_bounds`),
``segment-forward-partial-lower``
(:mod:`spartition.families.attention.forward.partial_bounds`) and
``segment-backward-partial-lower``
(:mod:`spartition.families.attention.backward.partial_bounds`;
docs/definitions.md section 3, "Segment counts in the partial game") are
theorems of this project, proven for the partial-computation game. Four
claims check each, each able to fail where a constant is mutated
(tests/families/attention/test_partial_claims.py mutates them):

* **the program**: the count at a segment's budgets equals its program
  enumerated point by point here (a count lowered or raised by 10% differs);
* **the derivation**: the bound is ``S (h - 1)`` with ``h`` recomputed from
  the counts at the bound's ``S`` (a bound ``S h`` differs);
* **the per-segment count** on replayed partial-game schedules (the game's
  greedy, which saves and reloads partial sums and half-made products, and
  the family's published algorithms translated edge by edge), on both
  builds of the sums, at every segment length up to ``3 M`` and within
  ``2 M`` of the whole schedule's I/O (where the first and the last segment
  meet their counts exactly, so a count lowered by 10% fails);
* **the bound** against every such schedule.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from spartition.families.attention.backward import partial_bounds as backward_partial
from spartition.families.attention.forward import partial_bounds as forward_partial
from spartition.families.classic import partial_bounds as matmul_partial
from spartition.families.common.papers import SEGMENTS
from spartition.families.common.partial_segments import partial_budgets
from spartition.families.common.segments import shared_segments_needed
from spartition.study.claims import Claim, Interval, Quantity, expr, formula
from spartition.study.claimsets import ClaimSet

__all__ = ["PARTIAL_CLAIMS", "enumerated_forward_partial_count", "enumerated_matmul_partial_count",
           "partial_schedules", "segment_sizes"]


def enumerated_matmul_partial_count(a: int, b: int, c: int, T: int, L: int) -> int:
    """:func:`~spartition.families.classic.partial_bounds.matmul_partial_capacity`'s program, every integer point
    ``(x, y, z, p)`` tried.

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


def enumerated_forward_partial_count(n: int, d: int, T: int, L: int) -> int:
    """:func:`~spartition.families.attention.forward.partial_bounds.forward_partial_capacity`'s program, every integer
    point ``(r, q, c, v, t, p)`` tried.

    >>> enumerated_forward_partial_count(2, 1, 7, 4)
    4
    """
    best = 0.0
    for r in range(0, n + 1):
        for q in range(0, n + 1):
            for c in range(0, L - d * (r + q) + 1):
                x = min(n * n, c + r * q)
                for v in range(0, min(n * d, L - d * (r + q) - c) + 1):
                    used = d * (r + q) + c + v
                    for t in range(0, min(n * d, T - used) + 1):
                        p = min(L - used, T - used - t)  # the objective grows with p
                        best = max(best, min(n * t, p + min(math.sqrt(x * v * t), x * v, d * x, n * v)))
    return math.floor(best + 1e-9)


@dataclass(frozen=True)
class _Count:
    """One partial-game count: its formula, family, dimensions, count, bound, per-segment charges and total."""

    formula: str
    family: str
    dims: Callable
    capacity: Callable
    bound: Callable
    charges: Callable
    enumerated: Callable
    total: Callable
    where: str


MATMUL = _Count("segment-matmul-partial-lower", "matmul", lambda p: (p["a"], p["b"], p["c"]),
                lambda: matmul_partial.matmul_partial_capacity, lambda: matmul_partial.matmul_partial_bound,
                matmul_partial.matmul_partial_charges, enumerated_matmul_partial_count,
                lambda a, b, c: a * b * c, "matmul_partial_capacity (spartition.families.classic.partial_bounds)")
FORWARD = _Count("segment-forward-partial-lower", "attention-forward", lambda p: (p["n"], p["d"]),
                 lambda: forward_partial.forward_partial_capacity, lambda: forward_partial.forward_partial_bound,
                 forward_partial.forward_partial_charges, enumerated_forward_partial_count,
                 lambda n, d: n * n * d,
                 "forward_partial_capacity (spartition.families.attention.forward.partial_bounds)")
BACKWARD = _Count("segment-backward-partial-lower", "attention-backward-flash", lambda p: (p["n"], p["d"]),
                  lambda: backward_partial.backward_partial_capacity, lambda: backward_partial.backward_partial_bound,
                  backward_partial.backward_partial_charges, enumerated_forward_partial_count,
                  lambda n, d: n * n * d,
                  "backward_partial_capacity (spartition.families.attention.backward.partial_bounds)")


def partial_schedules(dag, M: int) -> dict:
    """The partial-game schedules the claims read: the game's greedy, and each of the family's algorithms
    (oneshot, translated edge by edge) that fits; each replayed by the caller."""
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


def segment_sizes(M: int, io: int) -> list:
    """The segment lengths a partial count is checked at on a schedule of I/O ``io``: up to ``3 M``, and within
    ``2 M`` of ``io`` (a first and a last segment that nearly cover the schedule meet their counts exactly)."""
    return sorted(set(range(1, 3 * M + 1)) | set(range(max(1, io - 2 * M), io + 1)))


def _worst_segment(count: _Count) -> Quantity:
    """Most product edges beyond the count in one segment of a replayed partial schedule (:func:`segment_sizes`);
    known without a schedule: at most ``W - F`` for the largest middle count at S up to 3M."""
    def ev(ctx):
        from spartition.core.game import replay

        dims, worst = count.dims(ctx.params), None
        for name, schedule in partial_schedules(ctx.dag, ctx.M).items():
            for S in segment_sizes(ctx.M, replay(ctx.dag, schedule).io):
                for k, seg in enumerate(count.charges(ctx.dag, schedule, S)):
                    T, L = partial_budgets(ctx.M, S, seg["a"], seg["b"], not seg["first"], not seg["last"])
                    gap = seg["edges"] - count.capacity()(*dims, T, L)
                    if worst is None or gap > worst[0]:
                        worst = (gap, f"schedule {name}, segment {k} of S = {S} I/O moves")
        return Interval.point(worst[0], "most product edges beyond the count in one segment of a replayed schedule",
                              worst[1])

    def known(ctx):
        dims = count.dims(ctx.params)
        fewest = min(count.capacity()(*dims, *partial_budgets(ctx.M, S, 0, ctx.M)) for S in range(1, 3 * ctx.M + 1))
        return Interval(-math.inf, count.total(*dims) - fewest, "0 .. all product edges")

    return Quantity("product edges beyond the count in one segment", ev, known)


def _cheapest() -> Quantity:
    def ev(ctx):
        from spartition.core.game import replay

        best = min((replay(ctx.dag, s).io, name) for name, s in partial_schedules(ctx.dag, ctx.M).items())
        return Interval.point(best[0], "the cheapest replayed partial-game schedule", f"schedule {best[1]}")

    return Quantity("I/O of the cheapest replayed partial-game schedule", ev)


def _derived(count: _Count):
    def again(p, M):
        dims = count.dims(p)
        b = count.bound()(*dims, M)
        h = shared_segments_needed(
            count.total(*dims),
            lambda start, end, x, y: count.capacity()(*dims, *partial_budgets(M, b.S, x, y, start, end)), M, 8)
        return b.S * (h - 1) if h else 0

    return expr(again, "S (h(S) - 1), h recomputed")


def _claims(count: _Count, program_grid, bound_grid, schedule_grid, Ms) -> tuple:
    what = count.formula.removesuffix("-lower")
    return (
        Claim(f"{what}-program", "the count of product edges at T = 3M, L = 2M is its program's maximum (every "
              "integer point tried)", count.where, count.family, program_grid,
              expr(lambda p, M: count.capacity()(*count.dims(p), 3 * M, 2 * M), count.where.split()[0]), "==",
              expr(lambda p, M: count.enumerated(*count.dims(p), 3 * M, 2 * M), "the program, enumerated"),
              Ms=(2, 3, 4), variant="partial", regime="every instance (an identity)"),
        Claim(f"{count.formula}-derivation", f"{count.formula} is S (h - 1) at its S, h the fewest segments whose "
              "counts reach the product edges", SEGMENTS, count.family, bound_grid, formula(count.formula), "==",
              _derived(count), Ms=(2, 4, 8), variant="partial", regime="the formula's regime"),
        Claim(f"{what}-count", "every segment of S loads and saves marks at most the count's product edges, with the "
              "budgets of its boundaries (T = M + S + b, L = M + S), on partial-game schedules", count.where,
              count.family, schedule_grid, _worst_segment(count), "<=", expr(lambda p, M: 0, "0"), Ms=Ms,
              variant="partial", regime="the partial game, either build of the sums; every S <= 3M"),
        Claim(count.formula, f"no replayed partial-game schedule costs less than {count.formula} (max_S S (h(S) - 1))",
              SEGMENTS, count.family, schedule_grid, _cheapest(), ">=", formula(count.formula), Ms=Ms,
              variant="partial", regime="the formula's regime"),
    )


PARTIAL_LIST = (
    _claims(MATMUL, {"a": [4, 8], "b": [4], "c": [4]}, {"a": [8], "b": [8], "c": [8]},
            {"a": [4], "b": [4], "c": [4], "sums": ["node", "binary"]}, (2, 3, 4, 6))
    + _claims(FORWARD, {"n": [3, 4], "d": [1, 2]}, {"n": [16, 32], "d": [2]},
              {"n": [6], "d": [2], "sums": ["node", "binary"]}, (2, 3, 4, 6, 8))
    # above the trivial bound 8 n d + n from n = 12 at d = 1 (120 against 108 at M = 2)
    + _claims(BACKWARD, {"n": [3], "d": [1, 2]}, {"n": [16, 32], "d": [2]},
              [{"n": [12], "d": [1], "sums": ["node"]}, {"n": [4], "d": [2], "sums": ["binary"]}], (2, 3))
)

PARTIAL_CLAIMS = ClaimSet("partial", SEGMENTS, PARTIAL_LIST)
