"""Claims of the ``segments`` set on the pair-sum lemma (:mod:`spartition.partition.pair_sums`), where they can fail.

The lemma: with M <= 4, in the standard game, every schedule makes at
least 3 I/O moves per pair sum on the pair sums' inputs and products. Two
claims check it, on instances where it is nearly attained:

* **the lemma on schedules**: on every replayed schedule (the published
  four-pebble schedules, greedy, and schedules that really recompute), the
  I/O moves on the pair sums' inputs and products are at least ``3 k``.
  ``small-memory-forward`` makes ``3 n^2 + n`` such moves at ``d = 2``, so
  a constant raised by 10% fails here;
* **the bound against the exact optimum** of the standard game: matrix
  products with inner dimension 2, where the bound is within one move of
  the optimum (2 x 2 x 2 at M = 4: 16 against 17).
"""

from __future__ import annotations

import math

from spartition.families.common.papers import SEGMENTS
from spartition.partition.pair_sums import PAIR_SUM_MAX_M, pair_sum_io, pair_sums
from spartition.study.claims import Claim, Interval, Quantity, expr, lower_bound, optimum

__all__ = ["PAIR_SUM_LIST", "pair_sum_slack"]

_SOURCE = "spartition.partition.pair_sums.pair_sum_value (the pair-sum lemma, docs/definitions.md section 3)"


def _schedules(dag, M: int, algs) -> dict:
    """The schedules the lemma is checked on: ``algs`` where they apply, and two that really recompute."""
    from spartition.core.recomputing import recomputing_schedule
    from spartition.core.registry import algorithm
    from spartition.errors import SpartitionError

    found = {}
    for name in algs:
        try:
            found[name] = algorithm(name).generate(dag, M)
        except SpartitionError:
            continue
    for seed in range(2):
        found[f"recomputing-{seed}"] = recomputing_schedule(dag, M, seed=seed)
    return found


def pair_sum_slack(algs) -> Quantity:
    """Fewest I/O moves on the pair sums' inputs and products beyond ``3 k``, over replayed schedules.

    Known without a schedule: at least ``|U| - 3 k`` (every input of a pair sum is loaded once), so the claim
    informs where the pair sums outnumber a third of their inputs.
    """
    def ev(ctx):
        from spartition.core.game import replay
        from spartition.errors import SpartitionError

        best = None
        for name, schedule in _schedules(ctx.dag, ctx.M, algs).items():
            try:
                replay(ctx.dag, schedule)
            except SpartitionError:
                continue
            moves, floor = pair_sum_io(ctx.dag, schedule)
            if best is None or moves - floor < best[0]:
                best = (moves - floor, f"schedule {name}: {moves} moves against 3 k = {floor}")
        if best is None:
            return None
        return Interval.point(best[0], "fewest moves on the pair sums' inputs and products beyond 3 k", best[1])

    def known(ctx):
        found = pair_sums(ctx.dag)
        return Interval(len(found.inputs) - 3 * len(found), math.inf, "|U| - 3 k .. any")

    return Quantity("moves on the pair sums' inputs and products beyond 3 k", ev, known)


def _slack_claim(name, family, grid, algs):
    return Claim(
        name, "every schedule with M <= 4 makes at least 3 I/O moves per pair sum on the pair sums' inputs and "
        "products, on schedules that recompute too", _SOURCE, family, grid, pair_sum_slack(algs), ">=",
        expr(lambda p, M: 0, "0"), Ms=tuple(range(3, PAIR_SUM_MAX_M + 1)), variant="recompute",
        regime="both standard games, M <= 4")


PAIR_SUM_LIST = (
    _slack_claim("pair-sums-forward-count", "attention-forward", {"n": [6, 8], "d": [2]},
                 ("small-memory-forward", "greedy")),
    _slack_claim("pair-sums-backward-count", "attention-backward-flash", {"n": [3, 4], "d": [2]},
                 ("small-memory-backward", "greedy")),
    _slack_claim("pair-sums-matmul-count", "matmul", {"a": [4, 6], "b": [2], "c": [4, 6]}, ("greedy",)),
    Claim("pair-sums-lower", "no schedule of the standard game with M <= 4 costs less than the pair-sum bound",
          _SOURCE, "matmul", [{"a": [3], "b": [2], "c": [1]}, {"a": [2], "b": [2], "c": [2, 3]}],
          optimum(), ">=", lower_bound("pair-sums"), Ms=tuple(range(3, PAIR_SUM_MAX_M + 1)), variant="recompute",
          regime="both standard games, M <= 4"),
    # transcribed by hand: a x 2 x c has a c pair sums on 2a + 2c inputs and a c outputs, so trivial + 3ac - |U|
    # = 4 a c; a constant lowered (or raised) fails here, where the claims above only catch one raised
    Claim("pair-sums-closed-form", "the pair-sum bound of the matrix product a x 2 x c at M <= 4 is 4 a c",
          _SOURCE, "matmul", {"a": [2, 3, 5], "b": [2], "c": [2, 4]}, lower_bound("pair-sums"), "==",
          expr(lambda p, M: 4 * p["a"] * p["c"], "4 a c"), Ms=tuple(range(3, PAIR_SUM_MAX_M + 1)),
          variant="recompute", regime="both standard games, M <= 4"),
)
