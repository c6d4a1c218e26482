"""The order CNF with an I/O budget: "a oneshot schedule with M red pebbles and I/O <= Q exists", by the order model.

The clauses are those of :func:`spartition.exact.formulations.order_cnf.order_cnf` (the
compute-order model of :mod:`spartition.exact.formulations.order`, written
as clauses) with the chain dominance rule and **without** symmetry
breaking, plus a sequential counter (:mod:`spartition.certify.cardinality`)
saying that at most ``Q - outputs`` of the load and store literals are true
(the stores of the non-input outputs are forced and counted apart). It is a
second encoding beside the time-indexed one of
:mod:`spartition.certify.encoding`: far smaller (no time index), so its
refutation is far cheaper, at the price of resting on reductions that the
plain encoding does not need.

What a refutation proves
------------------------
If the CNF has no model, no oneshot schedule with I/O <= Q exists, because
each reduction keeps a representative of every optimum
(:mod:`spartition.exact.formulations.order` argues each):

* **oneshot** (the variant): every non-input node is computed exactly once;
* **normal form**: a node is red only from a use (or its compute) to a later
  use, loaded just before a use, stored right after its compute; every
  schedule has a normal form of no greater cost;
* **chain dominance**: for a unary chain pair ``(u, w)``
  (:func:`spartition.exact.formulations.order.unary_chain_pairs`) some
  optimal schedule computes ``w`` right after ``u``; applied to an optimal
  schedule of cost <= Q it keeps the cost <= Q.

So a schedule with I/O <= Q would give one of cost <= Q in normal form with
every chain pair adjacent, and that one is a model. No symmetry precedence
is used: the checker re-derives the CNF from the DAG alone, and Puget
precedences depend on a time-bounded automorphism search. The claim of a
certificate names these reductions; the brute-force tests
(``tests/exact/test_maxsat.py``) check the model, dominance included, on random DAGs.
"""

from __future__ import annotations

from spartition.certify.cardinality import at_least, at_most
from spartition.certify.cnf import CNF
from spartition.core.dag import as_compact, dag_hash, to_networkx

__all__ = ["ORDER_ENCODER_VERSION", "ORDER_REDUCTIONS", "order_budget_cnf"]

#: Bumped whenever the clauses written for an instance change; stored in certificates.
ORDER_ENCODER_VERSION = "pebbling-order-1"

#: The reductions a refutation of the order CNF rests on, as certificates state them.
ORDER_REDUCTIONS = (
    "oneshot: every non-input node is computed exactly once",
    "normal form (spartition.exact.formulations.order): red only from a use or its compute to a later use, "
    "loads just before a use, stores right after the compute; every schedule has one of no greater cost",
    "chain dominance (spartition.exact.formulations.order.unary_chain_pairs): a unary chain pair is computed "
    "back to back in some optimal schedule",
    "no symmetry breaking",
)


def order_budget_cnf(dag, M: int, budget: int):
    """The order CNF of ``dag`` at ``M`` with I/O <= ``budget``, and the order clauses it was made from.

    Parameters
    ----------
    dag : networkx.DiGraph or CompactDAG
    M : int
        Red pebbles (feasible: at least ``1 +`` the largest in-degree).
    budget : int
        Q, the I/O allowed.

    Returns
    -------
    (CNF, OrderCNF)
        The formula (clauses in a fixed order, literals deduplicated,
        tautologies dropped, units as anchored pairs), and the
        :class:`~spartition.exact.formulations.order_cnf.OrderCNF` whose tables decode a
        model (:func:`spartition.exact.formulations.order_cnf.decode_order_cnf`).

    Examples
    --------
    >>> from spartition.families.classic.dag import fft
    >>> from spartition.certify.sat import solve_cnf
    >>> [solve_cnf(order_budget_cnf(fft(1), 3, q)[0]).satisfiable for q in (3, 4)]
    [False, True]
    """
    from spartition.exact.formulations.order_cnf import order_cnf

    c = as_compact(dag)
    oc = order_cnf(c, M, dominance=True)
    f = CNF(num_vars=oc.num_vars)
    f.comments += [
        f"spartition {ORDER_ENCODER_VERSION}: a oneshot schedule with M = {M} and I/O <= {budget}, "
        "order model with chain dominance, no symmetry breaking",
        f"dag sha256 {dag_hash(to_networkx(c))}",
    ]
    for clause in oc.hard:
        lits = tuple(dict.fromkeys(clause))
        if any(-x in lits for x in lits):
            continue  # a tautology holds in every assignment
        f.add(*lits)
    paid = [-x for x in oc.soft]  # true when the load or store is made
    if budget - oc.offset < 0:
        at_least(f, [], 1)  # the forced output stores alone exceed the budget
    else:
        at_most(f, paid, budget - oc.offset)
    return f, oc
