"""Pair sums in four red pebbles: a lower bound of the standard games at M <= 4, with its proof.

A **pair sum** is a node ``s = p + p'`` whose two predecessors are
**products** ``p = x y`` and ``p' = x' y'`` of two inputs each, the four
inputs distinct: an entry of a matrix product with inner dimension 2, a
score ``S_ij = Q_i0 K_j0 + Q_i1 K_j1`` of attention with ``d = 2``. Found
by structure alone (in-degrees and inputs), on any DAG.

**Lemma.** With ``M <= 4`` red pebbles, in the standard game (values may be
computed again, so in the oneshot game too), every schedule makes at least
``3 k`` I/O moves on the pair sums' inputs and products, ``k`` the number
of pair sums. Its proof is in :func:`pair_sum_value` and in
docs/definitions.md section 3, "Pair sums in four red pebbles". Holding a
pair sum's last product, its first product and the two inputs of the last
product fills four red pebbles, so at most one input survives from one
pair sum to the next: a schedule reloads three of the four inputs per pair
sum, or moves a product through slow memory.

Conditions the proof uses, checked by :func:`pair_sums` (a node breaking
one is left out, never guessed): each product has exactly two
predecessors, both inputs, and is not an output; a pair sum has exactly
two predecessors, both such products; its four inputs are distinct; no
product belongs to two counted pair sums; no two counted products read the
same two inputs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from spartition.core.bounds import trivial_lower_bound
from spartition.core.dag import as_compact

__all__ = ["PAIR_SUM_MAX_M", "PAIR_SUM_MOVES", "PairSums", "pair_sum_io", "pair_sum_value", "pair_sums"]

#: The largest M the lemma is proven for (at M = 5 it fails: see :func:`pair_sum_value`).
PAIR_SUM_MAX_M = 4
#: The lemma's I/O moves per pair sum, on its inputs and products.
PAIR_SUM_MOVES = 3


@dataclass(frozen=True)
class PairSums:
    """The pair sums of a DAG (node ids), as :func:`pair_sums` finds them.

    Attributes
    ----------
    sums : tuple of str
        The counted pair sums.
    products : tuple of str
        Their products, two per pair sum.
    inputs : tuple of str
        The inputs the products read (each once), sorted.
    """

    sums: tuple
    products: tuple
    inputs: tuple

    def __len__(self) -> int:
        return len(self.sums)


def _pair_sum_indices(c) -> tuple:
    """``(sums, products (k x 2), inputs)`` as node indices of the compact DAG ``c``."""
    n = c.n
    indeg = c.in_degree()
    two = np.flatnonzero(indeg == 2)
    first = np.full(n, -1, dtype=np.int64)
    second = np.full(n, -1, dtype=np.int64)
    first[two] = c.pred_idx[c.pred_ptr[two]]
    second[two] = c.pred_idx[c.pred_ptr[two] + 1]
    product = np.zeros(n, dtype=bool)
    product[two] = c.is_input[first[two]] & c.is_input[second[two]] & ~c.is_output[two]
    cand = two[product[first[two]] & product[second[two]]]
    a, b = first[cand], second[cand]
    # the four inputs distinct (each product's two are distinct: no parallel edges)
    disjoint = ((first[a] != first[b]) & (first[a] != second[b]) & (second[a] != first[b])
                & (second[a] != second[b]))
    cand, a, b = cand[disjoint], a[disjoint], b[disjoint]
    # a product in two pair sums, or two products reading the same inputs: both left out
    uses = np.bincount(np.concatenate([a, b]), minlength=n)
    keys = np.minimum(first, second) * n + np.maximum(first, second)
    pair_keys, pair_counts = np.unique(np.concatenate([keys[a], keys[b]]), return_counts=True)
    shared = pair_keys[pair_counts > 1]
    keep = (uses[a] == 1) & (uses[b] == 1) & ~np.isin(keys[a], shared) & ~np.isin(keys[b], shared)
    cand, a, b = cand[keep], a[keep], b[keep]
    prods = np.stack([a, b], axis=1) if len(cand) else np.zeros((0, 2), dtype=np.int64)
    inputs = np.unique(np.concatenate([first[a], second[a], first[b], second[b]]))
    return cand, prods, inputs


def pair_sums(dag) -> PairSums:
    """The pair sums of ``dag`` that the lemma of this module counts.

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> found = pair_sums(matmul(2, 2, 3))
    >>> len(found), len(found.products), len(found.inputs)
    (6, 12, 10)
    >>> len(pair_sums(matmul(2, 3, 2)))  # three terms: the first add of each chain
    4
    >>> len(pair_sums(matmul(2, 1, 2)))  # one term: no sum
    0
    """
    c = as_compact(dag)
    sums, prods, inputs = _pair_sum_indices(c)
    names = c.names
    return PairSums(tuple(names[i] for i in sums.tolist()), tuple(names[i] for i in prods.ravel().tolist()),
                    tuple(sorted(names[i] for i in inputs.tolist())))


def pair_sum_value(dag, M: int) -> tuple:
    """``(bound, details)``: the pair-sum bound of ``dag`` at ``M``, for both standard games.

    The bound is the trivial bound plus ``max(0, 3 k - |U|)`` where ``k``
    pair sums read the inputs ``U``, for ``M <= 4``; the trivial bound above
    (the lemma is not proven there).

    Proof. The trivial bound counts one load of each input with a successor
    (``U`` among them) and one store of each output that is not an input. By
    the lemma below, the I/O moves on ``U`` and on the products are at least
    ``max(3 k, |U|)``; the other inputs' loads and the outputs' stores are
    other moves (a product is not an output, a pair sum's stores are not on
    ``U`` or a product), so the total is at least the trivial bound plus
    ``max(0, 3 k - |U|)``.

    Lemma (``M <= 4``, standard game). Every node is computed at least once
    (it lies on a path to an output). For each pair sum ``s`` fix one of its
    compute moves, at time ``tau_s``; its two products are red then. A
    product's red pebble at ``tau_s`` was placed by a compute (the product
    is *kept*; that compute is its designated event) or by a load (*spilled*:
    a load and an earlier store of that product; it was stored, so computed:
    designate any of its computes). Each product belongs to one pair sum, so the ``u`` spilled
    products cost ``2 u`` I/O moves of their own. The ``N = 2 k`` designated
    events, in time order ``e_1 < e_2 < ...``, each need their two inputs red.
    A red period of an input starts with a load; with ``s_j`` the number of
    ``e_j``'s two input periods that a later event uses again, the events use
    ``sum_j (2 - s_j)`` periods, so at least that many loads of ``U``. Write
    ``b_j = 2 - s_j``. A period used again after ``e_j`` is red at the next
    event ``e_{j+1}`` and at every move between; the last event has ``b = 2``.
    Four facts, each from "at most four red pebbles after a move":

    1. A kept event has ``b >= 1``: if both its inputs stay red until the next
       event, that event's product and inputs join them (two distinct products
       share at most one input) and the kept product, red until its sum, makes
       five; or the sum is computed first, with its two products and itself
       beside the two inputs: five.
    2. No product is computed while two kept products are red (each from its
       event to its sum's compute): the compute needs three more pebbles. A
       pair sum with both products kept is *clean*; between its later event
       and its compute no product is computed.
    3. For a clean pair sum whose two events are consecutive among the
       designated events, the earlier has ``b = 2``: at the later one the red
       pebbles are its two inputs, its product and the earlier product, and
       the four inputs of a pair sum are distinct.
    4. If designated events lie between a clean pair sum's two events, the
       earlier of the two, and every event in between, have ``b >= 1``: at the
       next event the fourth red pebble is the clean sum's first product, so
       only that event's two inputs are red, and they share at most one input
       with the previous event.

    Per pair sum, ``C(s)`` = its events' ``b`` plus ``2`` per spilled product
    is at least 3 unless ``s`` is clean with events between its two (then at
    least 2, facts 1 and 4): one spilled product gives ``1 + 0 + 2``, two give
    ``4``. The first event ``e'`` between such a clean pair's events belongs to
    another pair sum ``s'``, which pays the missing move. If ``e'`` is kept,
    its sum ``s'`` must come before the clean pair's later event (else five
    red); no product is computed between ``e'`` and ``s'``'s compute (fact 2,
    with ``e'``'s product and the clean pair's first product), and ``s'``'s
    other product is not red at ``e'`` (its four red pebbles are ``e'``'s
    inputs and product and the clean first product), so it was loaded: it is
    spilled. No input is red at ``s'``'s compute and the next event comes
    later: ``b(e') = 2`` and ``C(s') >= 2 + 0 + 2 = 4``. If ``e'`` is spilled,
    ``b(e') >= 1`` (fact 4) and ``C(s') >= 1 + 1 + 2`` or ``1 + 0 + 4``. Either
    way ``s'`` has a spilled product (it is not clean), and an event lies
    between the events of at most one clean pair sum (the fourth red pebble
    names it); so each ``s'`` pays for at most its two events, and when both
    are ``e'`` of some clean pair, ``C(s') >= 5`` (kept and spilled) or ``6``
    (both spilled). Summing, the loads of ``U`` plus the moves of the spilled
    products are at least ``sum_s C(s) >= 3 k``.

    For ``M >= 5`` the lemma fails: the matrix product 3 x 2 x 1 has 3 pair
    sums and 3 outputs, and its optimum at ``M = 5`` is 11, below
    ``3 k + 3 = 12`` (2 x 2 x 2: 14 against 16).

    Examples
    --------
    >>> from spartition.families.classic.dag import matmul
    >>> value, details = pair_sum_value(matmul(2, 2, 2), 4)  # the exact optimum is 17
    >>> value, details["sums"], details["inputs"], details["trivial"]
    (16, 4, 8, 12)
    >>> pair_sum_value(matmul(2, 2, 2), 5)[0]  # the trivial bound
    12
    """
    c = as_compact(dag)
    trivial = trivial_lower_bound(c)
    sums, _, inputs = _pair_sum_indices(c)
    applies = M <= PAIR_SUM_MAX_M
    gain = max(0, math.ceil(PAIR_SUM_MOVES * len(sums) - len(inputs))) if applies else 0
    details = {"M": M, "sums": len(sums), "inputs": len(inputs), "trivial": trivial, "applies": applies,
               "gain": gain}
    return trivial + gain, details


def pair_sum_io(dag, schedule) -> tuple:
    """``(moves, 3 k)``: a schedule's I/O moves on the pair sums' inputs and products, and the lemma's floor.

    For the tests and the claims: on any valid schedule with ``M <= 4`` of
    either standard game, the first is at least the second.

    Examples
    --------
    >>> from spartition.core.greedy import greedy_schedule
    >>> from spartition.families.classic.dag import matmul
    >>> G = matmul(2, 2, 2)
    >>> moves, floor = pair_sum_io(G, greedy_schedule(G, 4))
    >>> floor, moves >= floor
    (12, True)
    """
    found = pair_sums(dag)
    counted = set(found.inputs) | set(found.products)
    moves = sum(1 for move, v, *_ in schedule.moves if move in ("load", "store") and v in counted)
    return moves, PAIR_SUM_MOVES * len(found)

